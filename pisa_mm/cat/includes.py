"""A cat model read from its text: its `include`s expanded under the loader's policy
(docs/model.md, "Includes"), with the prelude of herd's standard names.

Only a model that is not in the cache is read so (pisa_mm/cat/loader.py is the way in): this
module, pathlib and the parser stay out of a run whose models come from the cache."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pisa_mm.cat.syntax import CheckStmt, Model, Statement
from pisa_mm.errors import PisaMMError, Span, read_source

if TYPE_CHECKING:
    from pisa_mm.cat.elaborate import File, Prelude

__all__ = [
    "CAT_DIR",
    "COMPAT_DIR",
    "MAX_INCLUDE_BYTES",
    "MAX_INCLUDE_DEPTH",
    "MAX_MODEL_BYTES",
    "MODELS_DIR",
    "Loader",
]

CAT_DIR = Path(__file__).parent
MODELS_DIR = CAT_DIR / "models"
COMPAT_DIR = CAT_DIR / "compat"
# A model file (given to --model or included) larger than this is refused, and so is a model
# whose files hold more than MAX_MODEL_BYTES together: the shipped core is 6 kB, and the
# parser takes ~15 us a byte on dense text (1 MiB of nested parentheses took a minute).
MAX_INCLUDE_BYTES = 256 << 10
MAX_MODEL_BYTES = 1 << 20
# Includes nested deeper than this are refused (the shipped models nest 2 deep); each level
# costs the parser and the elaborator a few dozen Python frames.
MAX_INCLUDE_DEPTH = 32
# herd's library files that herd models include: always ours, never a file of that name
# next to the model (herd's own need constructs we replace by built-ins).
_HERD_LIBRARY = {"stdlib.cat": CAT_DIR / "stdlib.cat", "cos.cat": COMPAT_DIR / "cos.cat"}
# The files whose definitions are herd's standard names, available without an include.
_PRELUDE_FILES = (CAT_DIR / "stdlib.cat", COMPAT_DIR / "prelude.cat")


@functools.cache
def _prelude() -> Prelude:
    from pisa_mm.cat.elaborate import Prelude
    from pisa_mm.cat.parser import parse_file

    prelude = Prelude()
    for path, text in _prelude_sources().items():
        prelude.add(parse_file(text, path))
    return prelude


@functools.cache
def _prelude_sources() -> dict[str, str]:
    """The prelude's files by name: an error in a standard definition (a standard function
    called with a relation for a set, say) quotes them."""
    return {str(path): read_source(str(path)) for path in _PRELUDE_FILES}


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


class Loader:
    """Expand `include`s depth-first, in order. A file is included once per model (a second
    `include` of it is skipped, like `#pragma once`), so a model and the core it includes may
    both include stdlib.cat; an include cycle is an error."""

    def __init__(self, search_path: Iterable[str | Path]) -> None:
        self.sources: dict[str, str] = dict(_prelude_sources())
        self.total = 0  # bytes of the model's own files read so far
        self.done: set[Path] = set()
        self.active: list[Path] = []
        self.search = [_real(Path(d)) for d in search_path]
        self.shipped = [_real(MODELS_DIR), _real(CAT_DIR)]
        from pisa_mm.cat.elaborate import Scope

        self.scope = Scope(prelude=_prelude())

    def load(self, source: str, path: Path | None, name: str, filename: str | None = None) -> Model:
        from pisa_mm.cat.check import check_model
        from pisa_mm.cat.elaborate import elaborate, title_of

        shown = filename if filename is not None else str(path)
        try:
            top = self.parse(source, shown)
            title, herd = title_of(top)
            self.scope.herd = herd
            if path is not None:
                real = _real(path)
                self.done.add(real)
                self.active.append(real)
                here: Path | None = real.parent
            else:
                here = None  # text that is not a file: includes come from the search path
            elaborate(top, self.scope, lambda p, s: self.include(p, s, here, here))
            statements = _unique_check_names(self.scope.out) if herd else self.scope.out
            return check_model(name, title or name, shown, statements, self.sources)
        except PisaMMError as exc:
            raise _with_sources(exc, self.sources) from None

    def parse(self, source: str, filename: str, span: Span | None = None) -> File:
        """Parse, remembering the text so that any later error can show its source line
        (`span`: the include that asked for it)."""
        from pisa_mm.cat.parser import parse_file

        self.total += len(source)
        if self.total > MAX_MODEL_BYTES:
            message = f"the model's files hold more than {MAX_MODEL_BYTES} bytes together"
            raise PisaMMError.at(span, message, "cat-include")
        self.sources[filename] = source
        return parse_file(source, filename)

    def include(self, target: str, span: Span, here: Path | None, root: Path | None) -> None:
        """`here`: the including file's directory; `root`: the directory tree it was found
        in (the top model's directory, a --model-path directory or a shipped one)."""
        path, found_in = self.resolve(target, span, here, root)
        if path in self.active:
            chain = " -> ".join(p.name for p in [*self.active, path])
            raise PisaMMError.at(span, f"include cycle: {chain}", "cat-include")
        if path in self.done:
            return
        if len(self.active) >= MAX_INCLUDE_DEPTH:
            raise PisaMMError.at(
                span, f"includes nested more than {MAX_INCLUDE_DEPTH} deep", "cat-include"
            )
        self.done.add(path)
        self.active.append(path)
        from pisa_mm.cat.elaborate import elaborate

        included = self.parse(_read_limited(path, span), str(path), span)
        hook = lambda p, s: self.include(p, s, path.parent, found_in)  # noqa: E731
        elaborate(included, self.scope, hook)
        self.active.pop()

    def resolve(
        self, target: str, span: Span, here: Path | None, root: Path | None
    ) -> tuple[Path, Path]:
        """The file `include "target"` means: herd's library names are ours; otherwise
        relative to the including file, then each `--model-path` directory, then the
        shipped models. A candidate is taken only if its real path (symlinks followed)
        lies inside the root it was looked up under."""
        if target in _HERD_LIBRARY:
            return _real(_HERD_LIBRARY[target]), _real(CAT_DIR)
        if "\0" in target:  # no file system has such a name (os calls refuse it)
            raise PisaMMError.at(span, "an include path cannot hold a NUL character", "cat-include")
        if Path(target).is_absolute() or target.startswith("~"):
            raise PisaMMError.at(
                span,
                f"include '{target}': an include path must be relative (to the including "
                "file, a --model-path directory or the shipped models)",
                "cat-include",
            )
        roots: list[tuple[Path, Path]] = []  # (directory to join with, root it must stay in)
        if here is not None and root is not None:
            roots.append((here, root))
        roots += [(d, d) for d in self.search]
        roots += [(d, d) for d in self.shipped]
        unreadable: Path | None = None  # the first candidate there that is no regular file
        for base, root in roots:
            candidate = _real(base / target)
            if not candidate.is_relative_to(root):
                # Said the same way whether or not the target exists.
                raise PisaMMError.at(
                    span,
                    f"include '{target}' leads outside the directories models may include "
                    "from (the model's own directory tree, --model-path, the shipped models)",
                    "cat-include",
                )
            try:
                if candidate.is_file():
                    return candidate, root
                if unreadable is None and candidate.exists():
                    unreadable = candidate
            except OSError:  # e.g. a name too long: no such file to include
                continue
        if unreadable is not None:  # inside an allowed root: saying it exists leaks nothing
            message = f"included '{target}' is not a regular file (a directory, FIFO or device)"
            raise PisaMMError.at(span, message, "cat-include")
        raise PisaMMError.at(span, f"cannot find included file '{target}'", "cat-include")


def _read_limited(path: Path, span: Span) -> str:
    """An included file's text: a regular file of at most MAX_INCLUDE_BYTES, UTF-8."""
    too_big = PisaMMError.at(
        span, f"included file '{path.name}' is larger than {MAX_INCLUDE_BYTES} bytes", "cat-include"
    )
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise PisaMMError.at(span, f"'{path.name}' is not a regular file", "cat-include")
            data = fh.read(MAX_INCLUDE_BYTES + 1)
    except OSError as exc:
        raise PisaMMError.at(
            span, f"cannot read included file '{path.name}'", "cat-include"
        ) from exc
    if len(data) > MAX_INCLUDE_BYTES:
        raise too_big
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        message = f"included file '{path.name}' is not UTF-8 text"
        raise PisaMMError.at(span, message, "cat-include") from exc


def _unique_check_names(statements: list[Statement]) -> list[Statement]:
    """herd lets two checks share a name; ours are unique, so a repeat becomes `name#2`."""
    seen: set[str] = set()
    out: list[Statement] = []
    for stmt in statements:
        if isinstance(stmt, CheckStmt):
            first = stmt.name if stmt.name is not None else stmt.text
            name, k = first, 1
            while name in seen:
                k += 1
                name = f"{first}#{k}"
            seen.add(name)
            if name != first:
                stmt = CheckStmt(stmt.kind, stmt.expr, name, stmt.text, stmt.span, stmt.name_span)
        out.append(stmt)
    return out


def _with_sources(exc: PisaMMError, sources: dict[str, str]) -> PisaMMError:
    """Attach the texts of the files read so far: the CLI renders source lines from them.
    They are only files the loader accepted as model files."""
    known: dict[str, str] = dict(getattr(exc, "sources", None) or {})
    known.update(sources)
    exc.sources = known  # type: ignore[attr-defined]
    return exc
