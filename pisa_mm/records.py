"""`record`, the decorator of every data type: a dataclass whose methods are compiled once.

`@record` is `@dataclasses.dataclass(frozen=True, slots=True)` (the other options pass through,
`@record(frozen=False)` for a mutable one), and what it makes is a dataclass in every way:
`dataclasses.fields`, `replace`, `asdict`, pickling, `match` and mypy see no difference.
`dataclasses` writes the source text of `__init__`, `__repr__`, `__eq__`, `__hash__`,
`__setattr__` and `__delattr__` for each class and compiles it with `exec`, around a good deal
of Python of its own: about 0.9 ms a class in CPython 3.11, most of pisa-mm's start-up. Here
the code of those texts comes from the table of compiled code kept in the user's cache
(pisa_mm/codecache.py), keyed by the text itself, so an edited class or another Python finds
no entry and compiles anew (docs/architecture.md, "Start-up", has the measurements).

Under CPython 3.11, `_make` builds the class itself: the steps of `dataclasses._process_class`
in its order, with the same method texts, the same `Field` objects, `__dataclass_params__`,
`__match_args__`, docstring and slotted class, for the kinds of class the tree has (string
annotations, no dataclass base, no InitVar or KW_ONLY); tests/unit/records/test_tree_records.py
builds every @record class of pisa_mm both ways and compares them. Any other class, and every
class under another Python, is built by `dataclasses` itself, whose `exec` is then handed the
cached code: `exec(text, g, l)` is `exec(code, g, l)` with `code` compiled from `text` as
`exec` compiles it (`dont_inherit`: not under this module's `__future__` imports, which would
turn the annotations of `__init__` into strings).

One method differs from the one `dataclasses` writes: a frozen slotted record's `__init__`
stores its fields through the slots' descriptors instead of `object.__setattr__`
(`_set_by_slots`, applied to the class either way builds: the same stores, parameters and
defaults, twice as fast). And a record sent between processes by the hundred may pickle as a
call of its class on its fields (`pickled_by_fields`).
"""

from __future__ import annotations

import abc
import dataclasses
import operator
import re
import sys
import threading
import typing
from collections.abc import Callable, Mapping
from types import FunctionType, MemberDescriptorType
from typing import Any, TypeVar, cast, dataclass_transform, overload

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
_recursive_repr = dataclasses._recursive_repr  # type: ignore[attr-defined]
# `dataclasses.exec` is process-wide while a class is built; reentrant, since compiling can
# import pisa_mm.cache, which could one day define a record of its own
_LOCK = threading.RLock()


def _build(cls: type[T], options: dict[str, Any]) -> type[T]:
    made = _make(cls, options) if _OWN_BUILDER else None
    if made is None:
        made = _by_dataclasses(cls, options)
    if options["frozen"] and options["slots"]:
        _set_by_slots(made)
    return made


def _by_dataclasses(cls: type[T], options: dict[str, Any]) -> type[T]:
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


# ---------------------------------------------------------------- the builder of our own

# The builder below does what CPython 3.11's `dataclasses._process_class` does, step for step
# and with the same method texts, for the classes the tree has (string annotations, no
# dataclass base, none of ClassVar, InitVar or KW_ONLY); for anything else, and under another
# Python, it declines and dataclasses builds the class. tests/unit/records compares, for every
# @record class of pisa_mm, what both make.
_OWN_BUILDER = sys.version_info[:2] == (3, 11)
# dataclasses' own test of a string annotation that may name ClassVar, InitVar or KW_ONLY
_ANNOTATION_HEAD = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")
_MISSING: Any = dataclasses.MISSING
_FIELD = dataclasses._FIELD  # type: ignore[attr-defined]
_CLASSVAR = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
_HAS_DEFAULT_FACTORY = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
_ORDER = (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">="))


def _special(annotation: str, module: dict[str, Any]) -> str:
    """What dataclasses would read `annotation` as: "ClassVar", "InitVar", "KW_ONLY" or ""
    (a field)."""
    match = _ANNOTATION_HEAD.match(annotation)
    if match is None:
        return ""
    prefix, name = match.groups()
    if prefix:
        namespace = module.get(prefix)
        if namespace is not typing and namespace is not dataclasses:
            return ""
        value = getattr(namespace, name, None)
    else:
        value = module.get(name)
    value = cast(Any, value)
    if value is typing.ClassVar or (
        type(value) is typing._GenericAlias  # type: ignore[attr-defined]
        and value.__origin__ is typing.ClassVar
    ):
        return "ClassVar"
    if value is dataclasses.InitVar or type(value) is dataclasses.InitVar:
        return "InitVar"
    return "KW_ONLY" if value is dataclasses.KW_ONLY else ""


def _method(
    name: str,
    args: str,
    body: list[str],
    group: str,
    scope: dict[str, Any],
    local: dict[str, Any] | None = None,
    returns: bool = False,
) -> Any:
    """`dataclasses._create_fn`: the same text, its code from the cache."""
    local = {} if local is None else local
    annotation = ""
    if returns:
        local["_return_type"] = None
        annotation = "->_return_type"
    lines = "\n".join(f"  {b}" for b in body)
    text = (
        f"def __create_fn__({', '.join(local)}):\n def {name}({args}){annotation}:\n{lines}\n"
        f" return {name}"
    )
    namespace: dict[str, Any] = {}
    exec(compiled(text, group, "<string>"), scope, namespace)
    return namespace["__create_fn__"](**local)


def _set_new(namespace: dict[str, Any], qualname: str, name: str, value: Any) -> None:
    """`dataclasses._set_new_attribute`, on the class's namespace."""
    if name not in namespace:
        if isinstance(value, FunctionType):
            value.__qualname__ = f"{qualname}.{value.__name__}"
        namespace[name] = value


def _tuple(name: str, fields: list[dataclasses.Field[Any]]) -> str:
    if not fields:
        return "()"
    return f"({','.join([f'{name}.{f.name}' for f in fields])},)"


def _make(cls: type[T], options: dict[str, Any]) -> type[T] | None:
    """The class `dataclasses.dataclass(cls, **options)` makes (init, repr and match_args
    on; unsafe_hash and kw_only off), or None if it is not one this builder knows."""
    frozen, eq, order = options["frozen"], options["eq"], options["order"]
    slots, weakref_slot = options["slots"], options["weakref_slot"]
    module = sys.modules.get(cls.__module__)
    scope: dict[str, Any] = module.__dict__ if module is not None else {}
    if (order and not eq) or (weakref_slot and not slots):
        return None  # dataclasses' errors
    own = cls.__dict__
    if "__slots__" in own and slots:
        return None
    for base in cls.__mro__[1:]:
        if hasattr(base, "__dataclass_fields__"):
            return None
    annotations: dict[str, Any] = own.get("__annotations__", {})
    for name, value in own.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            return None
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name, annotation in annotations.items():
        if not isinstance(annotation, str):
            return None
        kind = _special(annotation, scope)
        if kind not in ("", "ClassVar"):
            return None
        default = getattr(cls, name, _MISSING)
        if isinstance(default, dataclasses.Field):
            f = default
        else:
            if isinstance(default, MemberDescriptorType):
                default = _MISSING
            # what `dataclasses.field(default=default)` makes
            f = dataclasses.Field(default, _MISSING, True, True, None, True, None, _MISSING)  # type: ignore[arg-type]
        f.name = name
        f.type = annotation
        if kind:  # a class variable: listed in the fields, not one of them
            if f.default_factory is not _MISSING or f.kw_only is not _MISSING:
                return None  # dataclasses' errors
            f._field_type = _CLASSVAR  # type: ignore[attr-defined]
            fields[name] = f
            continue
        f._field_type = _FIELD  # type: ignore[attr-defined]
        if f.kw_only is _MISSING:
            f.kw_only = False
        if f.default.__class__.__hash__ is None:
            return None  # a mutable default: dataclasses' error
        fields[name] = f
    real = [f for f in fields.values() if f._field_type is _FIELD]  # type: ignore[attr-defined]
    positional = [f for f in real if f.init and not f.kw_only]
    keywords = [f for f in real if f.init and f.kw_only]
    seen_default = False
    for f in positional:
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            return None  # dataclasses' error
    if order and any(name in own for name, _ in _ORDER):
        return None
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        return None
    if not cls.__doc__ and (
        type(cls) is not type
        or any(name in own for name in ("__init__", "__new__", "__signature__"))
        or any(vars(base).get("__new__") is not None for base in cls.__mro__[1:-1])
    ):
        return None  # its docstring would be what `inspect.signature` makes of the class
    class_hash = own.get("__hash__", _MISSING)
    explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))

    # From here on, what dataclasses does to the class, in its order, done to a copy of its
    # namespace (a dict keeps the order of the class's own, as setattr and delattr would);
    # the slotted class is made from it, another class is given it at the end. Setting a
    # dunder on a class updates its type slots each time: a good part of the cost.
    namespace = dict(own)
    qualname = cls.__qualname__
    namespace["__dataclass_params__"] = dataclasses._DataclassParams(  # type: ignore[attr-defined]
        True, True, eq, order, False, frozen
    )
    for f in fields.values():
        if isinstance(getattr(cls, f.name, None), dataclasses.Field):
            if f.default is _MISSING:
                del namespace[f.name]
            else:
                namespace[f.name] = f.default
    namespace["__dataclass_fields__"] = fields
    group = f"records {cls.__module__}"

    # __init__
    self_name = "__dataclass_self__" if "self" in fields else "self"
    local: dict[str, Any] = {f"_type_{f.name}": f.type for f in real}
    local["MISSING"] = _MISSING
    local["_HAS_DEFAULT_FACTORY"] = _HAS_DEFAULT_FACTORY
    local["__dataclass_builtins_object__"] = object
    body = []
    for f in real:
        default_name = f"_dflt_{f.name}"
        if f.default_factory is not _MISSING:
            local[default_name] = f.default_factory
            if f.init:
                value = f"{default_name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            else:
                value = f"{default_name}()"
        elif f.init:
            if f.default is not _MISSING:
                local[default_name] = f.default
            value = f.name
        elif slots and f.default is not _MISSING:
            local[default_name] = f.default
            value = default_name
        else:
            continue
        if frozen:
            body.append(
                f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})"
            )
        else:
            body.append(f"{self_name}.{f.name}={value}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__()")
    params = [_param(f) for f in positional]
    if keywords:
        params += ["*", *(_param(f) for f in keywords)]
    init = _method(
        "__init__",
        ",".join([self_name, *params]),
        body or ["pass"],
        group,
        scope,
        local,
        returns=True,
    )
    _set_new(namespace, qualname, "__init__", init)

    shown = ", ".join([f"{f.name}={{self.{f.name}!r}}" for f in real if f.repr])
    text = f'return self.__class__.__qualname__ + f"({shown})"'
    shown_fn = _recursive_repr(_method("__repr__", "self", [text], group, scope))
    _set_new(namespace, qualname, "__repr__", shown_fn)
    compared = [f for f in real if f.compare]
    mine, theirs = _tuple("self", compared), _tuple("other", compared)
    operators = ((("__eq__", "=="),) if eq else ()) + (_ORDER if order else ())
    for name, op in operators:
        body = ["if other.__class__ is self.__class__:", f" return {mine}{op}{theirs}"]
        body.append("return NotImplemented")
        _set_new(namespace, qualname, name, _method(name, "self,other", body, group, scope))
    if frozen:
        local = {"cls": cls, "FrozenInstanceError": dataclasses.FrozenInstanceError}
        names = "(" + ",".join(repr(f.name) for f in real) + ",)" if real else "()"
        for name, args, verb, call in (
            ("__setattr__", "self,name,value", "assign to", "__setattr__(name, value)"),
            ("__delattr__", "self,name", "delete", "__delattr__(name)"),
        ):
            body = [
                f"if type(self) is cls or name in {names}:",
                f' raise FrozenInstanceError(f"cannot {verb} field {{name!r}}")',
                f"super(cls, self).{call}",
            ]
            _set_new(namespace, qualname, name, _method(name, args, body, group, scope, local))
    if eq and not explicit_hash:
        if frozen:
            hashed = [f for f in real if (f.compare if f.hash is None else f.hash)]
            body = [f"return hash({_tuple('self', hashed)})"]
            fn = _method("__hash__", "self", body, group, scope)
            fn.__qualname__ = f"{qualname}.{fn.__name__}"
            namespace["__hash__"] = fn
        else:
            namespace["__hash__"] = None
    if not cls.__doc__:
        namespace["__doc__"] = cls.__name__ + _signature(positional, keywords)
    _set_new(namespace, qualname, "__match_args__", tuple(f.name for f in positional))
    if slots:
        cls = _slotted(cls, namespace, [f.name for f in real], frozen, weakref_slot)
    else:
        for name, value in namespace.items():
            if own.get(name, _MISSING) is not value:
                setattr(cls, name, value)
        for name in [name for name in own if name not in namespace]:
            delattr(cls, name)
    abc.update_abstractmethods(cls)
    return cls


def _param(f: dataclasses.Field[Any]) -> str:
    """`dataclasses._init_param`."""
    if f.default is not _MISSING:
        return f"{f.name}:_type_{f.name}=_dflt_{f.name}"
    if f.default_factory is not _MISSING:
        return f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY"
    return f"{f.name}:_type_{f.name}"


def _signature(
    positional: list[dataclasses.Field[Any]], keywords: list[dataclasses.Field[Any]]
) -> str:
    """`str(inspect.signature(cls)).replace(' -> None', '')`, as dataclasses makes a missing
    docstring, for a plain class whose `__init__` is the one made here (without `inspect`, whose
    import costs more than the whole builder)."""

    def text(f: dataclasses.Field[Any]) -> str:
        if f.default is not _MISSING:
            return f"{f.name}: {f.type!r} = {f.default!r}"
        if f.default_factory is not _MISSING:
            return f"{f.name}: {f.type!r} = <factory>"
        return f"{f.name}: {f.type!r}"

    params = [text(f) for f in positional]
    if keywords:
        params += ["*", *(text(f) for f in keywords)]
    return f"({', '.join(params)}) -> None".replace(" -> None", "")


def _slotted(
    cls: type[T], namespace: dict[str, Any], fields: list[str], frozen: bool, weakref_slot: bool
) -> type[T]:
    """`dataclasses._add_slots`: the class again, from `namespace`, with a slot per field."""
    inherited: set[str] = set()
    for base in cls.__mro__[1:-1]:
        declared = base.__dict__.get("__slots__")
        if isinstance(declared, str):
            inherited.add(declared)
        elif declared is not None:
            inherited.update(declared)
    names = (*fields, "__weakref__") if weakref_slot else tuple(fields)
    namespace["__slots__"] = tuple(n for n in names if n not in inherited)
    for name in fields:
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    qualname = getattr(cls, "__qualname__", None)
    made: Any = type(cls)(cls.__name__, cls.__bases__, namespace)  # type: ignore[misc]
    if qualname is not None:
        made.__qualname__ = qualname
    if frozen:
        if "__getstate__" not in namespace:
            made.__getstate__ = dataclasses._dataclass_getstate  # type: ignore[attr-defined]
        if "__setstate__" not in namespace:
            made.__setstate__ = dataclasses._dataclass_setstate  # type: ignore[attr-defined]
    return cast(type[T], made)


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
        if not isinstance(slot, MemberDescriptorType) or f.name.startswith("_pisa_"):
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
