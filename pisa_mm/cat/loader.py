"""Find, read, include-expand and check cat models: `load_model("pisa")` or a path."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from pisa_mm.cat.check import check_model
from pisa_mm.cat.parser import parse
from pisa_mm.cat.syntax import CatFile, IncludeStmt, Model, Statement
from pisa_mm.errors import PisaMMError, read_source

__all__ = ["CAT_DIR", "MODELS_DIR", "SHIPPED_MODELS", "load_model", "load_model_source"]

CAT_DIR = Path(__file__).parent
MODELS_DIR = CAT_DIR / "models"
# The models `pisa-mm` ships, by the name the CLI accepts (`--model NAME`).
SHIPPED_MODELS: tuple[str, ...] = (
    "pisa",
    "pisa-rc11",
    "pisa-samescope",
    "pisa-ownspace",
    "pisa-rs11",
)


def load_model(name_or_path: str) -> Model:
    """A shipped model by name (`pisa`, `pisa-rc11`, ...) or a `.cat` file by path.

    Shipped models are loaded once per process (a `Model` is immutable)."""
    if name_or_path in SHIPPED_MODELS:
        return _load_shipped(name_or_path)
    path = Path(name_or_path)
    if not path.is_file():
        shipped = ", ".join(SHIPPED_MODELS)
        raise PisaMMError.at(
            None,
            f"unknown model '{name_or_path}': not a file, nor a shipped model ({shipped})",
            "cat-model",
        )
    return _load_file(path, path.stem)


def load_model_source(source: str, filename: str = "<string>", name: str | None = None) -> Model:
    """A model from text (tests, `--model-text`); includes resolve against the model dirs."""
    return _Loader().load(source, filename, name or Path(filename).stem)


@functools.cache
def _load_shipped(name: str) -> Model:
    return _load_file(MODELS_DIR / f"{name}.cat", name)


def _load_file(path: Path, name: str) -> Model:
    return _Loader().load(read_source(str(path)), str(path), name)


class _Loader:
    """Expand `include`s depth-first, in order. A file is included once per model (a second
    `include` of it is skipped, like `#pragma once`), so a model and the core it includes may
    both include stdlib.cat; an include cycle is an error."""

    def __init__(self) -> None:
        self.sources: dict[str, str] = {}
        self.done: set[Path] = set()
        self.active: list[Path] = []

    def load(self, source: str, filename: str, name: str) -> Model:
        top = parse_with_source(source, filename, self.sources)
        # Text that is not a file (tests, the CLI's inline model) includes from the model dirs.
        here = MODELS_DIR
        if Path(filename).is_file():
            path = Path(filename).resolve()
            here = path.parent
            self.done.add(path)
            self.active.append(path)
        statements = self.expand(top.statements, here)
        title = top.title if top.title is not None else name
        try:
            return check_model(name, title, filename, statements, self.sources)
        except PisaMMError as exc:
            raise _with_sources(exc, self.sources) from None

    def expand(self, statements: Sequence[Statement], here: Path) -> list[Statement]:
        out: list[Statement] = []
        for stmt in statements:
            if not isinstance(stmt, IncludeStmt):
                out.append(stmt)
                continue
            path = self.resolve(stmt, here)
            if path in self.active:
                chain = " -> ".join(p.name for p in [*self.active, path])
                raise _with_sources(
                    PisaMMError.at(stmt.span, f"include cycle: {chain}", "cat-include"),
                    self.sources,
                )
            if path in self.done:
                continue
            self.done.add(path)
            self.active.append(path)
            included = parse_with_source(read_source(str(path)), str(path), self.sources)
            out.extend(self.expand(included.statements, path.parent))
            self.active.pop()
        return out

    def resolve(self, stmt: IncludeStmt, here: Path) -> Path:
        """Relative to the including file, then the shipped models, then the cat package (for
        stdlib.cat)."""
        for directory in (here, MODELS_DIR, CAT_DIR):
            candidate = (directory / stmt.path).resolve()
            if candidate.is_file():
                return candidate
        raise _with_sources(
            PisaMMError.at(stmt.span, f"cannot find included file '{stmt.path}'", "cat-include"),
            self.sources,
        )


def parse_with_source(source: str, filename: str, sources: dict[str, str]) -> CatFile:
    """Parse, remembering the text so that any later error can show its source line."""
    sources[filename] = source
    try:
        return parse(source, filename)
    except PisaMMError as exc:
        raise _with_sources(exc, sources) from None


def _with_sources(exc: PisaMMError, sources: dict[str, str]) -> PisaMMError:
    """Attach the texts of the files read so far: the CLI renders source lines from them."""
    known: dict[str, str] = dict(getattr(exc, "sources", None) or {})
    known.update(sources)
    exc.sources = known  # type: ignore[attr-defined]
    return exc
