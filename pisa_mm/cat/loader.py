"""Find, read, include-expand and check cat models: `load_model("pisa")` or a path.

Includes follow a policy that makes a stranger's model safe to load (docs/model.md,
"Includes"): a file is read only from inside the allowed directories, whatever the path
says, and an error never tells whether something outside them exists.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from pisa_mm.cat.syntax import Model
from pisa_mm.errors import PisaMMError, read_source
from pisa_mm.hints import TYPE_CHECKING, Any

# Reading a model from its text (pisa_mm/cat/includes.py: pathlib, the parser, lark, the
# elaborator and the checker) is imported only when a model is not in the cache (start-up).
if TYPE_CHECKING:
    from pathlib import Path

    from pisa_mm.cat.includes import (
        CAT_DIR,
        COMPAT_DIR,
        MAX_INCLUDE_BYTES,
        MAX_INCLUDE_DEPTH,
        MODELS_DIR,
    )

__all__ = [
    "CAT_DIR",
    "COMPAT_DIR",
    "MAX_INCLUDE_BYTES",
    "MAX_INCLUDE_DEPTH",
    "MODELS_DIR",
    "SHIPPED_MODELS",
    "load_model",
    "load_model_source",
]

# The cat package's directory and the shipped models', as strings (CAT_DIR, MODELS_DIR and
# COMPAT_DIR, pathlib's Paths, come from pisa_mm/cat/includes.py when asked for).
CAT_PATH = os.path.dirname(__file__)
MODELS_PATH = os.path.join(CAT_PATH, "models")
# The models `pisa-mm` ships, by the name the CLI accepts (`--model NAME`).
SHIPPED_MODELS: tuple[str, ...] = (
    "pisa",
    "pisa-rc11",
    "pisa-samescope",
    "pisa-ownspace",
    "pisa-rs11",
)


def __getattr__(name: str) -> Any:
    """CAT_DIR, COMPAT_DIR, MODELS_DIR and the include limits: pisa_mm/cat/includes.py's."""
    if name in ("CAT_DIR", "COMPAT_DIR", "MODELS_DIR", "MAX_INCLUDE_BYTES", "MAX_INCLUDE_DEPTH"):
        from pisa_mm.cat import includes

        return getattr(includes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_model(name_or_path: str, search_path: Sequence[str | Path] = ()) -> Model:
    """A shipped model by name (`pisa`, `pisa-rc11`, ...) or a `.cat` file by path.

    `search_path`: more directories where `include`s may be found (`--model-path`).
    Shipped models are loaded once per process (a `Model` is immutable)."""
    if name_or_path in SHIPPED_MODELS and not search_path:
        return _load_shipped(name_or_path)
    from pathlib import Path

    from pisa_mm.cat.includes import Loader

    if name_or_path in SHIPPED_MODELS:
        path = Path(MODELS_PATH) / f"{name_or_path}.cat"
        return Loader(search_path).load(read_source(str(path)), path, name_or_path)
    path = Path(name_or_path)
    try:
        is_file = path.is_file()
    except OSError:  # e.g. a name too long for the system: no such file
        is_file = False
    if not is_file:
        shipped = ", ".join(SHIPPED_MODELS)
        shown = name_or_path if len(name_or_path) <= 80 else name_or_path[:77] + "..."
        raise PisaMMError.at(
            None,
            f"unknown model '{shown}': not a file, nor a shipped model ({shipped})",
            "cat-model",
        )
    from pisa_mm.cat.includes import MAX_INCLUDE_BYTES  # --model's file: an include's limit

    return Loader(search_path).load(read_source(str(path), MAX_INCLUDE_BYTES), path, path.stem)


def load_model_source(
    source: str,
    filename: str = "<string>",
    name: str | None = None,
    search_path: Sequence[str | Path] = (),
) -> Model:
    """A model from text (tests, `--model-text`). If `filename` is an existing file, its
    directory is where includes are found; otherwise only `search_path` and the shipped
    models are."""
    from pathlib import Path

    from pisa_mm.cat.includes import Loader

    path = Path(filename)
    return Loader(search_path).load(
        source, path if path.is_file() else None, name or path.stem, filename
    )


@functools.cache
def _load_shipped(name: str) -> Model:
    """A shipped model, from the user's cache when its files and the cat package's code
    are those it was compiled from (pisa_mm/cache.py)."""
    from pisa_mm.cache import pickled

    key = _shipped_key(name)

    def compile_model() -> Model:
        from pathlib import Path

        from pisa_mm.cat.includes import Loader

        path = Path(MODELS_PATH) / f"{name}.cat"
        return Loader(()).load(read_source(str(path)), path, name)

    if key is None:
        return compile_model()
    model = pickled(f"model-{name}", key, compile_model)
    return model if isinstance(model, Model) and model.name == name else compile_model()


def _shipped_key(name: str) -> str | None:
    """What a shipped model's compiled form depends on: the text of every file of the cat
    package (the models, their includes, the prelude, and the code that parses, elaborates
    and checks them) and where it is installed (the paths a model's diagnostics name).
    None when a file cannot be read: no caching then. (os.scandir: pathlib's rglob alone
    would cost more than the cache saves.)"""
    from pisa_mm.cache import digest

    parts: list[str | bytes] = [f"shipped model {name} at {CAT_PATH}"]

    def add(directory: str, prefix: str) -> None:
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            if entry.is_dir():
                if entry.name != "__pycache__":
                    add(entry.path, f"{prefix}{entry.name}/")
            elif entry.name.endswith((".py", ".cat", ".lark")):
                with open(entry.path, "rb") as fh:
                    parts.extend((prefix + entry.name, fh.read()))

    try:
        add(CAT_PATH, "")
        for name in ("errors.py", "records.py"):  # Span, and how records pickle
            with open(os.path.join(os.path.dirname(CAT_PATH), name), "rb") as fh:
                parts.extend((name, fh.read()))
    except OSError:
        return None
    return digest(parts)
