"""`record`, the decorator of every data type: a dataclass whose methods are compiled once.

`@record` is `@dataclasses.dataclass(frozen=True, slots=True)` (the other options pass through,
`@record(frozen=False)` for a mutable one), and what it makes is a dataclass in every way:
`dataclasses.fields`, `replace`, `asdict`, pickling, `match` and mypy see no difference, because
`dataclasses` itself builds the class. What changes is where the methods' code comes from.
`dataclasses` writes the source text of `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__` and `__delattr__` for each class and compiles it with `exec`: about 0.9 ms a class
in CPython 3.11, most of pisa-mm's start-up. Here that `exec` receives a code object compiled
from the same text instead, taken from the table of compiled code kept in the user's cache
(pisa_mm/codecache.py) and keyed by the text itself, so an edited class or another Python finds
no entry and compiles anew (docs/architecture.md, "Start-up", has the measurements).

The substitution cannot change a class: `exec(text, g, l)` is `exec(code, g, l)` with `code`
compiled from `text` as `exec` compiles it (`dont_inherit`: not under this module's
`__future__` imports, which would turn the annotations of `__init__` into strings). Should a
later Python stop calling `exec`, nothing is substituted and classes are built as before, only
slower.

A record sent between processes by the hundred may pickle as a call of its class on its
fields (`pickled_by_fields`).
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, dataclass_transform, overload

from pisa_mm.codecache import compiled

__all__ = ["pickled_by_fields", "record"]

T = TypeVar("T")


class _Exec:
    """What `dataclasses` calls for `exec` while a class is built: `exec(source, ...)` with
    `source` compiled once (pisa_mm/codecache.py), in the group of the class's module."""

    def __init__(self) -> None:
        self.module = ""  # the module of the class being built

    def __call__(
        self,
        source: str,
        scope: dict[str, Any] | None = None,
        namespace: Mapping[str, object] | None = None,
    ) -> None:
        exec(compiled(source, f"records {self.module}", "<string>"), scope, namespace)


_EXEC = _Exec()
# `dataclasses.exec` is process-wide while a class is built; reentrant, since compiling can
# import pisa_mm.cache, which could one day define a record of its own
_LOCK = threading.RLock()


def _build(cls: type[T], options: dict[str, Any]) -> type[T]:
    with _LOCK:
        outer = _EXEC.module
        _EXEC.module = cls.__module__
        # dataclasses calls `exec` by its global name: shadowing it there, for the time of
        # one class, hands it the compiled code
        namespace = vars(dataclasses)
        shadowed = namespace.get("exec")  # None: `exec` is the builtin there
        namespace["exec"] = _EXEC
        try:
            return dataclasses.dataclass(cls, **options)
        finally:
            _EXEC.module = outer
            if shadowed is None:
                del namespace["exec"]
            else:
                namespace["exec"] = shadowed


@overload
def record(cls: type[T], /) -> type[T]: ...


@overload
def record(
    *,
    frozen: bool = True,
    slots: bool = True,
    eq: bool = True,
    order: bool = False,
    weakref_slot: bool = False,
) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(
    cls: type[T] | None = None,
    /,
    *,
    frozen: bool = True,
    slots: bool = True,
    eq: bool = True,
    order: bool = False,
    weakref_slot: bool = False,
) -> type[T] | Callable[[type[T]], type[T]]:
    """`dataclasses.dataclass(frozen=True, slots=True)`, with the generated code cached."""
    options: dict[str, Any] = {
        "frozen": frozen,
        "slots": slots,
        "eq": eq,
        "order": order,
        "weakref_slot": weakref_slot,
    }
    if cls is not None:
        return _build(cls, options)
    return lambda c: _build(c, options)


def pickled_by_fields(cls: type[T]) -> type[T]:
    """Make a record pickle as a call of its class on its fields' values, in order.

    A slotted dataclass pickles by `dataclasses`' `__getstate__`/`__setstate__`, which call
    `dataclasses.fields` and set each field in Python: a result sent back from a worker
    (runner/pool.py) spent most of its pickling time there. Every field must be an
    `__init__` argument (no `init=False`), which is checked here."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not all(f.init for f in fields):
        raise TypeError(f"{cls.__name__}: a field outside __init__ cannot be pickled by fields")
    names = tuple(f.name for f in fields)
    if len(names) == 1:
        (name,) = names

        def reduce(self: Any) -> tuple[type[T], tuple[Any, ...]]:
            return cls, (getattr(self, name),)
    else:
        values = operator.attrgetter(*names)

        def reduce(self: Any) -> tuple[type[T], tuple[Any, ...]]:
            return cls, values(self)

    cls.__reduce__ = reduce  # type: ignore[method-assign]
    return cls
