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

One method differs from the one `dataclasses` writes: a frozen slotted record's `__init__`
stores its fields through the slots' descriptors instead of `object.__setattr__`
(`_set_by_slots`: the same stores, parameters and defaults, twice as fast). And a record
sent between processes by the hundred may pickle as a call of its class on its fields
(`pickled_by_fields`).
"""

from __future__ import annotations

import dataclasses
import operator
import threading
import types
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
            made = dataclasses.dataclass(cls, **options)
            if options["frozen"] and options["slots"]:
                _set_by_slots(made)
            return made
        finally:
            _EXEC.module = outer
            if shadowed is None:
                del namespace["exec"]
            else:
                namespace["exec"] = shadowed


def _set_by_slots(cls: type[Any]) -> None:
    """Give a frozen slotted record an `__init__` that stores each field through its slot's
    descriptor, fetched once: the one `dataclasses` writes calls `object.__setattr__(self,
    name, value)` per field, which finds the slot by name every time and makes building a
    record about twice as slow (a test's frontend alone builds hundreds: bench/
    bench_frontend.py --stages). The same stores in the same order, the same parameters and
    defaults. A class with `__post_init__`, a `default_factory`, keyword-only or
    non-`__init__` fields keeps the `__init__` of `dataclasses`."""
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or any(
        not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING for f in fields
    ):
        return
    setters: list[Any] = []
    for f in fields:
        slot = next((k.__dict__[f.name] for k in cls.__mro__ if f.name in k.__dict__), None)
        if not isinstance(slot, types.MemberDescriptorType) or f.name.startswith("_pisa_"):
            return
        setters.append(slot.__set__)
    defaults = [f.default for f in fields if f.default is not dataclasses.MISSING]
    params, k = [], 0
    for f in fields:
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            params.append(f"{f.name}=_pisa_d{k}")
            k += 1
    outer = [f"_pisa_s{i}" for i in range(len(fields))] + [f"_pisa_d{i}" for i in range(k)]
    body = "".join(f"        _pisa_s{i}(self, {f.name})\n" for i, f in enumerate(fields))
    source = (
        f"def _pisa_make({', '.join(outer)}):\n"
        f"    def __init__(self, {', '.join(params)}):\n"
        + (body or "        pass\n")
        + "    return __init__\n"
    )
    namespace: dict[str, Any] = {}
    exec(compiled(source, f"records {cls.__module__}", "<string>"), {}, namespace)
    init = namespace["_pisa_make"](*setters, *defaults)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = cls.__init__.__annotations__
    cls.__init__ = init


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
