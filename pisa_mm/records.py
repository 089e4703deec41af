"""`record`, the decorator of every data type: a frozen slotted dataclass, built without
`dataclasses`.

`@record` makes what `@dataclasses.dataclass(frozen=True, slots=True)` makes (the other
options pass through, `@record(frozen=False)` for a mutable one), and the class stays a
dataclass in every way: `dataclasses.fields`, `replace`, `asdict`, pickling, `match` and mypy
see no difference. What differs is how the class is made (docs/architecture.md, "Records:
why `@record`", has the measurements):

- `dataclasses` writes the source text of each method of each class and compiles it with
  `exec`, around a good deal of Python of its own (about 0.9 ms a class in CPython 3.11, a
  third of pisa-mm's start-up), and its import pulls `inspect`, `ast`, `dis` and `tokenize`.
  Here a method is a *template* of its kind and arity (`__eq__` of 3 fields, ...), compiled
  once (its code kept in the user's cache by pisa_mm/codecache.py), whose placeholder names
  are replaced by the class's field names (`CodeType.replace`): the same bytecode that
  dataclasses' text compiles to, made without compiling anything. `__setattr__`,
  `__delattr__` and the pickled state are closures. Only an `__init__` that a template
  does not cover (a `default_factory`, `init=False`, `__post_init__`, keyword-only fields,
  a mutable record) is written as dataclasses writes it, its code from the cache.
- A frozen slotted record's `__init__` stores its fields through the slots' descriptors
  instead of `object.__setattr__` (the same stores, parameters and defaults, twice as fast).
- `__dataclass_fields__` and `__dataclass_params__` are made, as `dataclasses`' own objects,
  when first read (`_Lazy`): only a caller of `dataclasses.fields`, `replace`, `asdict`, ...
  imports `dataclasses`, and it must import it to call them. This module's `field` and
  `replace` stand for `dataclasses.field` and `dataclasses.replace` in the tree.

The builder covers the classes the tree has (string annotations, no dataclass base, none of
`InitVar` or `KW_ONLY`; `ClassVar`s are handled) under CPython 3.11, whose `dataclasses` it
follows; any other class, and every class under another Python, is built by `dataclasses`
itself, whose `exec` is then handed the cached code. tests/unit/records/test_tree_records.py
builds every @record class of pisa_mm both ways and compares them. A record sent between
processes by the hundred may pickle as a call of its class on its fields
(`pickled_by_fields`).
"""

from __future__ import annotations

import abc
import re
import sys
import threading
from _thread import get_ident
from collections.abc import Callable, Mapping
from types import CellType, CodeType, FunctionType, MemberDescriptorType

from pisa_mm.codecache import compiled
from pisa_mm.hints import Any, TypeVar, cast, dataclass_transform, overload

__all__ = ["field", "pickled_by_fields", "record", "replace"]

T = TypeVar("T")


class _Sentinel:
    """`dataclasses.MISSING` and `_HAS_DEFAULT_FACTORY`, without importing dataclasses (the
    fields made on demand carry dataclasses' own)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


MISSING: Any = _Sentinel("MISSING")
# the default of an `__init__` parameter whose field has a default_factory (its repr is
# dataclasses' own, as `inspect.signature` shows it)
_HAS_DEFAULT_FACTORY: Any = _Sentinel("<factory>")


class Field:
    """What `field(...)` returns, in a class body: `dataclasses.field`'s arguments."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kw_only",
        "metadata",
        "repr",
    )

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        hash: bool | None,
        compare: bool,
        metadata: Mapping[Any, Any] | None,
        kw_only: Any,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.metadata = metadata
        self.kw_only = kw_only

    def dataclass_field(self) -> Any:
        """The `dataclasses.field(...)` of the same arguments."""
        import dataclasses

        return dataclasses.field(
            default=_theirs(self.default),
            default_factory=_theirs(self.default_factory),
            init=self.init,
            repr=self.repr,
            hash=self.hash,
            compare=self.compare,
            metadata=self.metadata,
            kw_only=_theirs(self.kw_only),
        )


def _theirs(value: Any) -> Any:
    """`value`, with this module's MISSING as dataclasses' own."""
    if value is MISSING:
        import dataclasses

        return dataclasses.MISSING
    return value


@overload
def field(
    *,
    default: T,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
    kw_only: bool = ...,
) -> T: ...


@overload
def field(
    *,
    default_factory: Callable[[], T],
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
    kw_only: bool = ...,
) -> T: ...


@overload
def field(
    *,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
    kw_only: bool = ...,
) -> Any: ...


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    metadata: Mapping[Any, Any] | None = None,
    kw_only: Any = MISSING,
) -> Any:
    """`dataclasses.field`, for a `@record` class."""
    return Field(default, default_factory, init, repr, hash, compare, metadata, kw_only)


class _Field:
    """One annotated name of a class as the builder reads it (a field or a ClassVar)."""

    __slots__ = ("classvar", "name", "spec", "type")

    def __init__(self, name: str, type: str, spec: Field, classvar: bool) -> None:
        self.name = name
        self.type = type
        self.spec = spec
        self.classvar = classvar


class _Info:
    """What the builder knows of a class it made: its annotated names in order (`fields`),
    its options, what `replace` and pickling need, and what its deferred methods are made
    from."""

    __slots__ = (
        "fields",
        "init",
        "init_names",
        "names",
        "not_init",
        "options",
        "original",
        "qualname",
        "real",
        "scope",
    )

    def __init__(
        self,
        fields: list[_Field],
        options: dict[str, Any],
        real: tuple[str, ...],
        positional: list[_Field],
        original: type,
        qualname: str,
        scope: dict[str, Any],
        names: tuple[list[str], list[str], list[str]],
    ) -> None:
        self.fields = fields
        self.options = options
        self.real = real
        self.init_names = tuple(f.name for f in positional)
        self.not_init = frozenset(f.name for f in fields if not f.classvar and not f.spec.init)
        self.original = original  # the class before its slotted copy (the frozen errors')
        self.qualname = qualname
        self.scope = scope  # the module's namespace: the methods' globals
        self.names = names  # the fields in __repr__, in __eq__ and the order, in __hash__
        # a frozen slotted class's __init__ (stores through the slots): its fields, the
        # defaults of its last parameters, whether it has a __post_init__
        self.init: tuple[list[_Field], tuple[Any, ...], bool] | None = None


# the classes this builder made (a class lives as long as its module: never removed)
_INFO: dict[type, _Info] = {}


class _Lazy:
    """`__dataclass_fields__` or `__dataclass_params__` of a record, made (as dataclasses'
    own objects) when first read, and then set on the class in its place."""

    __slots__ = ("attribute",)

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        assert owner is not None
        holder = next(k for k in owner.__mro__ if vars(k).get(self.attribute) is self)
        _materialize(holder)
        return getattr(owner, self.attribute)


def _materialize(cls: type) -> None:
    """Set `cls.__dataclass_fields__` and `__dataclass_params__` as dataclasses sets them."""
    import dataclasses

    info = _INFO[cls]
    fields: dict[str, Any] = {}
    for f in info.fields:
        made = f.spec.dataclass_field()
        made.name = f.name
        made.type = f.type
        if f.classvar:
            made._field_type = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
        else:
            made._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            if made.kw_only is dataclasses.MISSING:
                made.kw_only = False
        fields[f.name] = made
    o = info.options
    params = dataclasses._DataclassParams(  # type: ignore[attr-defined]
        True, True, o["eq"], o["order"], False, o["frozen"]
    )
    type.__setattr__(cls, "__dataclass_params__", params)
    type.__setattr__(cls, "__dataclass_fields__", fields)


class _Deferred:
    """A method of a record made when first looked up (`instance.__eq__`, `a == b`, `repr`,
    `cls.__init__`, pickling), then set on the class in its place: a run calls a few of the
    methods of the ~130 classes its modules define. The same object stands for the method of
    that name in every class (what to make is in the class's `_Info`)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if owner is None:
            owner = type(instance)
        name = self.name
        holder = next(k for k in owner.__mro__ if vars(k).get(name) is self)
        method = _method(holder, name)
        type.__setattr__(holder, name, method)
        return method.__get__(instance, owner)


def _method(cls: type, name: str) -> FunctionType:
    """The method `name` of the record `cls`, as the builder made it before it deferred it."""
    info = _INFO[cls]
    qualname, scope = info.qualname, info.scope
    shown, compared, hashed = info.names
    method: Any
    if name == "__init__":
        assert info.init is not None
        real, defaults, post_init = info.init
        method = _slots_init(cls, list(info.real), defaults)
        if method is None:  # a field that is no slot of its own
            o = info.options
            method = _init_text(info.original, real, o["frozen"], o["slots"], post_init, scope)
        else:
            method.__annotations__ = {**{f.name: f.type for f in real}, "return": None}
    elif name == "__repr__":
        method = _guarded(_function("__repr__", shown, scope, qualname))
        method.__qualname__ = f"{qualname}.__repr__"
    elif name == "__hash__":
        method = _function("__hash__", hashed, scope, qualname)
    elif name in ("__setattr__", "__delattr__"):
        method = _frozen(info.original, info.real, qualname)[name == "__delattr__"]
    elif name in ("__getstate__", "__setstate__"):
        method = _state(info.real)[name == "__setstate__"]
    else:  # __eq__ and the order
        method = _function(name, compared, scope, qualname)
    return cast(FunctionType, method)


_DEFERRED = {
    name: _Deferred(name)
    for name in (
        "__init__",
        "__repr__",
        "__eq__",
        "__hash__",
        "__setattr__",
        "__delattr__",
        "__getstate__",
        "__setstate__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
    )
}


# ---------------------------------------------------------------- method templates

# A template is the text dataclasses writes for a method, for fields named `_pisa_0_`,
# `_pisa_1_`, ...: a class's method is the template's code with those names (in `co_names`,
# `co_varnames` and the f-string pieces of `co_consts`) replaced by its fields' names.
_PLACEHOLDER = re.compile(r"_pisa_(\d+)_")
# each placeholder name -> its field's place (what `_PLACEHOLDER.fullmatch` reads, without
# a match per name; extended by `_template_text` for a wider class)
_PLACES: dict[str, int] = {f"_pisa_{i}_": i for i in range(32)}
# The templates of one arity are a group of the table of compiled code (`records templates
# 3`): a process unmarshals the arities it uses, and a group that missed is made whole
# (every kind of method), so that the group a command writes back serves every command.
_GROUP = "records templates"
_ORDER = (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">="))


def _tuple(name: str, n: int) -> str:
    return f"({','.join(f'{name}._pisa_{i}_' for i in range(n))},)" if n else "()"


def _template_text(kind: str, n: int) -> str:
    """The text of a template: a function `__create_fn__` that makes the method (as
    dataclasses' `_create_fn` does), the method's code being its one code constant."""
    places = [f"_pisa_{i}_" for i in range(n)]
    for i in range(len(_PLACES), n):
        _PLACES[places[i]] = i
    if kind == "__init__":  # stores through slots: the setters are the outer parameters
        body = "".join(f"  _pisa_s{i}(self,{p})\n" for i, p in enumerate(places)) or "  pass\n"
        setters = ", ".join(f"_pisa_s{i}" for i in range(n))
        return (
            f"def __create_fn__({setters}):\n def __init__({', '.join(['self', *places])}):\n"
            f"{body} return __init__"
        )
    if kind == "__repr__":
        shown = ", ".join(f"{p}={{self.{p}!r}}" for p in places)
        body = f'  return self.__class__.__qualname__ + f"({shown})"\n'
        args = "self"
    elif kind == "__hash__":
        body, args = f"  return hash({_tuple('self', n)})\n", "self"
    else:  # a comparison
        op = "==" if kind == "__eq__" else dict(_ORDER)[kind]
        body = (
            f"  if other.__class__ is self.__class__:\n"
            f"   return {_tuple('self', n)}{op}{_tuple('other', n)}\n"
            f"  return NotImplemented\n"
        )
        args = "self,other"
    return f"def __create_fn__():\n def {kind}({args}):\n{body} return {kind}"


_KINDS = ("__init__", "__repr__", "__hash__", "__eq__", *(name for name, _ in _ORDER))
# (kind, arity) -> the template's code and where its placeholders are
_TEMPLATES: dict[tuple[str, int], _Template] = {}


class _Template:
    """A template's code and where the field names go in it. A name of `co_names` or
    `co_varnames` that is a placeholder is replaced whole: each is rebuilt as
    `tuple(map((*old, *names).__getitem__, index))`, `index` giving each entry's place in
    that pool (C all along: the builder does this ~500 times at start-up). A constant with
    placeholders inside (an f-string's piece, `', _pisa_1_='`) becomes a format string."""

    __slots__ = ("code", "consts", "names", "varnames")

    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.names = self._index(code.co_names)
        self.varnames = self._index(code.co_varnames)
        consts: list[str | None] = []
        for value in code.co_consts:
            if type(value) is str and "_pisa_" in value:
                text = value.replace("{", "{{").replace("}", "}}")
                consts.append(_PLACEHOLDER.sub(lambda m: "{" + m.group(1) + "}", text))
            else:
                consts.append(None)
        self.consts = tuple(consts) if any(c is not None for c in consts) else None

    @staticmethod
    def _index(values: tuple[str, ...]) -> tuple[int, ...] | None:
        """Each entry's place in `(*values, *names)`; None when nothing is replaced."""
        n, places = len(values), _PLACES
        index = [n + places[value] if value in places else i for i, value in enumerate(values)]
        return tuple(index) if index != list(range(n)) else None

    def renamed(self, names: list[str]) -> CodeType:
        """The code for fields `names`."""
        code = self.code
        co_names, co_varnames, co_consts = code.co_names, code.co_varnames, code.co_consts
        if self.names is not None:
            co_names = tuple(map((*co_names, *names).__getitem__, self.names))
        if self.varnames is not None:
            co_varnames = tuple(map((*co_varnames, *names).__getitem__, self.varnames))
        if self.consts is not None:
            co_consts = tuple(
                value if text is None else text.format(*names)
                for value, text in zip(co_consts, self.consts, strict=True)
            )
        return code.replace(co_names=co_names, co_varnames=co_varnames, co_consts=co_consts)


def _template(kind: str, n: int) -> _Template:
    template = _TEMPLATES.get((kind, n))
    if template is None:
        from pisa_mm import codecache

        template = _TEMPLATES[kind, n] = _compiled_template(kind, n)
        if f"{_GROUP} {n}" in codecache.CODES.missed:
            for k in _KINDS:  # the group was not (all) in the table: make it whole
                if (k, n) not in _TEMPLATES:
                    _TEMPLATES[k, n] = _compiled_template(k, n)
    return template


def _compiled_template(kind: str, n: int) -> _Template:
    code = compiled(_template_text(kind, n), f"{_GROUP} {n}", "<string>")
    for _ in range(2):  # the module's code -> `__create_fn__`'s -> the method's
        code = next(c for c in code.co_consts if isinstance(c, CodeType))
    return _Template(code)


def _function(
    kind: str,
    names: list[str],
    scope: dict[str, Any],
    qualname: str,
    defaults: tuple[Any, ...] | None = None,
    closure: list[CellType] | None = None,
) -> FunctionType:
    """The method `kind` of fields `names`; `closure`: an `__init__`'s setters, in order."""
    code = _template(kind, len(names)).renamed(names)
    cells = None
    if closure is not None:  # the compiler orders free variables by name: _pisa_s10 first
        cells = tuple(closure[int(name[len("_pisa_s") :])] for name in code.co_freevars)
    fn = FunctionType(code, scope, kind, defaults, cells)
    if kind != "__repr__":  # dataclasses names the wrapper, not what it wraps
        fn.__qualname__ = f"{qualname}.{kind}"
    return fn


def _guarded(fn: FunctionType) -> Callable[[Any], str]:
    """`fn`, a `__repr__`, showing `...` for an object inside its own repr (what
    dataclasses' `_recursive_repr` does)."""
    running: set[tuple[int, int]] = set()

    def wrapper(self: Any) -> str:
        key = id(self), get_ident()
        if key in running:
            return "..."
        running.add(key)
        try:
            result: str = fn(self)
        finally:
            running.discard(key)
        return result

    wrapper.__module__ = fn.__module__
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


def _frozen_error(message: str) -> Exception:
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


def _frozen(cls: type, names: tuple[str, ...], qualname: str) -> tuple[Any, Any]:
    """A frozen class's `__setattr__` and `__delattr__`, dataclasses' own: `cls` is the
    class before its slotted copy is made, as in dataclasses 3.11."""
    owner: Any = cls

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise _frozen_error(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise _frozen_error(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    __setattr__.__qualname__ = f"{qualname}.__setattr__"
    __delattr__.__qualname__ = f"{qualname}.__delattr__"
    return __setattr__, __delattr__


def _state(names: tuple[str, ...]) -> tuple[Any, Any]:
    """A frozen slotted class's `__getstate__` and `__setstate__`: the fields' values in
    order, as dataclasses pickles them."""

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__


# ---------------------------------------------------------------- the builder

# The builder follows CPython 3.11's `dataclasses._process_class`, step for step, for the
# classes the tree has; for anything else, and under another Python, it declines and
# dataclasses builds the class. tests/unit/records compares, for every @record class of
# pisa_mm, what both make.
_OWN_BUILDER = sys.version_info[:2] == (3, 11)
# dataclasses' own test of a string annotation that may name ClassVar, InitVar or KW_ONLY
_ANNOTATION_HEAD = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")
# annotation -> the (module, name) it starts with, as _ANNOTATION_HEAD reads it: the same
# few dozen texts ("int", "Span", "tuple[str, ...]") over the tree's ~1,000 fields
_HEADS: dict[str, tuple[str | None, str]] = {}


# the `field()` of a field that has no default (a Field is never changed once made)
_PLAIN = Field(MISSING, MISSING, True, True, None, True, None, MISSING)


def _is_classvar(value: Any, typing: Any) -> bool:
    """Whether `value`, what an annotation names, is `typing.ClassVar` (bare or subscripted)."""
    return value is typing.ClassVar or (
        type(value) is typing._GenericAlias and value.__origin__ is typing.ClassVar
    )


def _special(annotation: str, module: dict[str, Any]) -> str:
    """What dataclasses would read `annotation` as: "ClassVar", "InitVar", "KW_ONLY" or ""
    (a field)."""
    head = _HEADS.get(annotation)
    if head is None:
        match = _ANNOTATION_HEAD.match(annotation)
        head = _HEADS[annotation] = (match[1], match[2]) if match is not None else ("", "")
    prefix, name = head
    if not name:
        return ""
    # not imported (a run does not, pisa_mm/hints.py): no ClassVar can be named
    typing = sys.modules.get("typing")
    dataclasses = sys.modules.get("dataclasses")  # not imported: no InitVar can be named
    if prefix:
        namespace = module.get(prefix)
        if namespace is None or (namespace is not typing and namespace is not dataclasses):
            return ""
        value = getattr(namespace, name, None)
    else:
        value = module.get(name)
    if typing is not None and _is_classvar(value, typing):
        return "ClassVar"
    if dataclasses is not None:
        if value is dataclasses.InitVar or type(value) is dataclasses.InitVar:
            return "InitVar"
        if value is dataclasses.KW_ONLY:
            return "KW_ONLY"
    return ""


def _build(cls: type[T], options: dict[str, Any]) -> type[T]:
    made = _make(cls, options) if _OWN_BUILDER else None
    if made is None:
        made = _by_dataclasses(cls, options)
    return made


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


def _by_dataclasses(cls: type[T], options: dict[str, Any]) -> type[T]:
    """`dataclasses.dataclass(cls, **options)`, its methods' code from the cache (the name
    `exec` in the dataclasses module shadowed for the time of one class), this module's
    `field`s given as dataclasses' own; a frozen slotted class then stores through its
    slots (`_slots_init`)."""
    import dataclasses

    for name, value in list(vars(cls).items()):
        if isinstance(value, Field):
            setattr(cls, name, value.dataclass_field())
    with _LOCK:
        outer = _EXEC.module
        _EXEC.module = cls.__module__
        namespace = vars(dataclasses)
        shadowed = namespace.get("exec")  # None: `exec` is the builtin there
        namespace["exec"] = _EXEC
        try:
            made = dataclasses.dataclass(cls, **options)
        finally:
            _EXEC.module = outer
            if shadowed is None:
                del namespace["exec"]
            else:
                namespace["exec"] = shadowed
    if options["frozen"] and options["slots"]:
        fields = dataclasses.fields(made)  # type: ignore[arg-type]
        if not hasattr(made, "__post_init__") and all(
            f.init and not f.kw_only and f.default_factory is dataclasses.MISSING for f in fields
        ):
            defaults = tuple(f.default for f in fields if f.default is not dataclasses.MISSING)
            init = _slots_init(made, [f.name for f in fields], defaults)
            if init is not None:
                init.__annotations__ = made.__init__.__annotations__
                made.__init__ = init  # type: ignore[method-assign]
    return made


def _slots_init(cls: type, names: list[str], defaults: tuple[Any, ...]) -> FunctionType | None:
    """An `__init__` for `cls` storing each of `names` (its parameters, the last ones with
    `defaults`) through its slot's descriptor, fetched once: the one `dataclasses` writes
    calls `object.__setattr__(self, name, value)` per field, which finds the slot by name
    every time and makes building a record about twice as slow (a test's frontend alone
    builds hundreds: bench/bench_frontend.py --stages). None when a name is not a slot of
    its own."""
    setters = []
    for name in names:
        slot = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
        if not isinstance(slot, MemberDescriptorType) or name == "self":
            return None
        setters.append(CellType(slot.__set__))
    scope = vars(sys.modules[cls.__module__]) if cls.__module__ in sys.modules else {}
    return _function("__init__", names, scope, cls.__qualname__, defaults or None, setters)


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
        if "__dataclass_fields__" in vars(base):
            return None
    annotations: dict[str, Any] = own.get("__annotations__", {})
    dataclasses = sys.modules.get("dataclasses")
    typing = sys.modules.get("typing")  # not imported: no ClassVar can be named
    for name, value in own.items():
        if isinstance(value, Field) and name not in annotations:
            return None  # dataclasses' error
        if dataclasses is not None and isinstance(value, dataclasses.Field):
            return None  # a field of dataclasses' own
    fields: list[_Field] = []
    for name, annotation in annotations.items():
        if not isinstance(annotation, str):
            return None
        head = _HEADS.get(annotation)
        if head is not None and not head[0] and dataclasses is None:
            # `_special` inline for a bare name (nearly every field: `int`, `Span`, ...)
            named = scope.get(head[1])
            if typing is None or isinstance(named, type):  # `int`, `Span`: never ClassVar
                kind = ""
            else:
                kind = "ClassVar" if _is_classvar(named, typing) else ""
        else:
            kind = _special(annotation, scope)
            if kind not in ("", "ClassVar"):
                return None
        default = getattr(cls, name, MISSING)
        if isinstance(default, Field):
            spec = default
        else:
            if default is MISSING or isinstance(default, MemberDescriptorType):
                spec = _PLAIN  # never changed: one for every field without a default
            else:
                spec = Field(default, MISSING, True, True, None, True, None, MISSING)
        if kind:  # a class variable: listed in the fields, not one of them
            if spec.default_factory is not MISSING or spec.kw_only is not MISSING:
                return None  # dataclasses' errors
            fields.append(_Field(name, annotation, spec, True))
            continue
        if spec.kw_only not in (MISSING, False):
            return None
        if spec.default.__class__.__hash__ is None:
            return None  # a mutable default: dataclasses' error
        fields.append(_Field(name, annotation, spec, False))
    # one pass over the fields for what the methods take (comprehensions are calls too)
    real: list[_Field] = []
    positional: list[_Field] = []
    shown: list[str] = []  # in __repr__
    compared: list[str] = []  # in __eq__ and the order
    hashed: list[str] = []  # in __hash__
    defaults: list[Any] = []  # of __init__'s parameters, when made by template
    simple = "__init__" not in own  # every field an __init__ parameter, with no factory
    seen_default = False
    for f in fields:
        if f.classvar:
            continue
        spec = f.spec
        real.append(f)
        if spec.init:
            positional.append(f)
            if spec.default is not MISSING or spec.default_factory is not MISSING:
                seen_default = True
            elif seen_default:
                return None  # dataclasses' error
        if not spec.init or spec.default_factory is not MISSING:
            simple = False
        elif spec.default is not MISSING:
            defaults.append(spec.default)
        if f.name == "self" or f.name.startswith("_pisa_"):
            simple = False
        if spec.repr:
            shown.append(f.name)
        if spec.compare:
            compared.append(f.name)
        if spec.compare if spec.hash is None else spec.hash:
            hashed.append(f.name)
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
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))

    # From here on, what dataclasses does to the class, in its order, done to a copy of its
    # namespace (a dict keeps the order of the class's own, as setattr and delattr would);
    # the slotted class is made from it, another class is given it at the end. Setting a
    # dunder on a class updates its type slots each time: a good part of the cost.
    namespace = dict(own)
    qualname = cls.__qualname__
    namespace["__dataclass_params__"] = _Lazy("__dataclass_params__")
    for f in fields:
        if isinstance(own.get(f.name), Field):
            if f.spec.default is MISSING:
                del namespace[f.name]
            else:
                namespace[f.name] = f.spec.default
    namespace["__dataclass_fields__"] = _Lazy("__dataclass_fields__")
    post_init = hasattr(cls, "__post_init__")
    by_slots = frozen and slots and not post_init and simple
    # The methods made from templates, and records' own closures, are made when first looked
    # up (`_Deferred`, in the place where dataclasses puts the method): a run uses a few of
    # the methods of the classes it imports. A written `__init__` is made now, so that the
    # code of a module's classes stays one group of the table of compiled code.
    if by_slots:
        init: Any = _DEFERRED["__init__"]
    elif "__init__" in namespace:
        init = None  # the class's own: dataclasses writes one, which is not set
    else:
        init = _init_text(cls, real, frozen, slots, post_init, scope)
    _set_new(namespace, qualname, "__init__", init)
    _set_new(namespace, qualname, "__repr__", _DEFERRED["__repr__"])
    if eq:
        _set_new(namespace, qualname, "__eq__", _DEFERRED["__eq__"])
    if order:
        for name, _ in _ORDER:
            _set_new(namespace, qualname, name, _DEFERRED[name])
    names = tuple(f.name for f in real)
    if frozen:
        _set_new(namespace, qualname, "__setattr__", _DEFERRED["__setattr__"])
        _set_new(namespace, qualname, "__delattr__", _DEFERRED["__delattr__"])
    if eq and not explicit_hash:
        namespace["__hash__"] = _DEFERRED["__hash__"] if frozen else None
    if not cls.__doc__:
        namespace["__doc__"] = cls.__name__ + _signature(positional)
    _set_new(namespace, qualname, "__match_args__", tuple(f.name for f in positional))
    if slots:
        made = _slotted(cls, namespace, list(names), frozen, weakref_slot)
    else:
        for name, value in namespace.items():
            if own.get(name, MISSING) is not value:
                setattr(cls, name, value)
        for name in [name for name in own if name not in namespace]:
            delattr(cls, name)
        made = cls
    info = _INFO[made] = _Info(
        fields, options, names, positional, cls, qualname, scope, (shown, compared, hashed)
    )
    if by_slots:
        info.init = (real, tuple(defaults), post_init)
    abc.update_abstractmethods(made)
    return cast(type[T], made)


def _set_new(namespace: dict[str, Any], qualname: str, name: str, value: Any) -> None:
    """`dataclasses._set_new_attribute`, on the class's namespace."""
    if name not in namespace:
        if isinstance(value, FunctionType):
            value.__qualname__ = f"{qualname}.{value.__name__}"
        namespace[name] = value


def _init_text(
    cls: type,
    real: list[_Field],
    frozen: bool,
    slots: bool,
    post_init: bool,
    scope: dict[str, Any],
) -> Any:
    """The `__init__` dataclasses writes, as it writes it (`_init_fn`), its code from the
    cache: for the classes a template does not cover (a default factory, `init=False`,
    `__post_init__`, a mutable record)."""
    self_name = "__dataclass_self__" if any(f.name == "self" for f in real) else "self"
    local: dict[str, Any] = {f"_type_{f.name}": f.type for f in real}
    local["MISSING"] = MISSING
    local["_HAS_DEFAULT_FACTORY"] = _HAS_DEFAULT_FACTORY
    local["__dataclass_builtins_object__"] = object
    body = []
    for f in real:
        spec, default_name = f.spec, f"_dflt_{f.name}"
        if spec.default_factory is not MISSING:
            local[default_name] = spec.default_factory
            if spec.init:
                value = f"{default_name}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            else:
                value = f"{default_name}()"
        elif spec.init:
            if spec.default is not MISSING:
                local[default_name] = spec.default
            value = f.name
        elif slots and spec.default is not MISSING:
            local[default_name] = spec.default
            value = default_name
        else:
            continue
        if frozen:
            body.append(
                f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})"
            )
        else:
            body.append(f"{self_name}.{f.name}={value}")
    if post_init:
        body.append(f"{self_name}.__post_init__()")
    params = [_param(f) for f in real if f.spec.init]
    local["_return_type"] = None
    lines = "\n".join(f"  {b}" for b in body or ["pass"])
    text = (
        f"def __create_fn__({', '.join(local)}):\n"
        f" def __init__({','.join([self_name, *params])})->_return_type:\n{lines}\n"
        f" return __init__"
    )
    namespace: dict[str, Any] = {}
    exec(compiled(text, f"records {cls.__module__}", "<string>"), scope, namespace)
    return namespace["__create_fn__"](**local)


def _param(f: _Field) -> str:
    """`dataclasses._init_param`."""
    if f.spec.default is not MISSING:
        return f"{f.name}:_type_{f.name}=_dflt_{f.name}"
    if f.spec.default_factory is not MISSING:
        return f"{f.name}:_type_{f.name}=_HAS_DEFAULT_FACTORY"
    return f"{f.name}:_type_{f.name}"


def _signature(positional: list[_Field]) -> str:
    """`str(inspect.signature(cls)).replace(' -> None', '')`, as dataclasses makes a missing
    docstring, for a plain class whose `__init__` is the one made here (without `inspect`, whose
    import costs more than the whole builder)."""

    def text(f: _Field) -> str:
        if f.spec.default is not MISSING:
            return f"{f.name}: {f.type!r} = {f.spec.default!r}"
        if f.spec.default_factory is not MISSING:
            return f"{f.name}: {f.type!r} = <factory>"
        return f"{f.name}: {f.type!r}"

    return f"({', '.join(text(f) for f in positional)}) -> None".replace(" -> None", "")


def _slotted(
    cls: type, namespace: dict[str, Any], fields: list[str], frozen: bool, weakref_slot: bool
) -> type:
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
    made: Any = type(cls)(cls.__name__, cls.__bases__, namespace)
    if qualname is not None:
        made.__qualname__ = qualname
    if frozen:
        if "__getstate__" not in namespace:
            made.__getstate__ = _DEFERRED["__getstate__"]
        if "__setstate__" not in namespace:
            made.__setstate__ = _DEFERRED["__setstate__"]
    return cast(type, made)


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


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
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
    """`dataclasses.dataclass(frozen=True, slots=True)`, built without dataclasses."""
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


def _field_names(cls: type) -> tuple[tuple[str, ...], frozenset[str]]:
    """A record class's fields in order, and those outside `__init__`."""
    info = _INFO.get(cls)
    if info is not None:
        return info.real, info.not_init
    import dataclasses

    fields = dataclasses.fields(cls)
    return tuple(f.name for f in fields), frozenset(f.name for f in fields if not f.init)


def replace(obj: T, /, **changes: Any) -> T:
    """`dataclasses.replace`: a copy of the record `obj` with the fields `changes`."""
    info = _INFO.get(type(obj))
    if info is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    for name in info.not_init:
        if name in changes:
            raise ValueError(
                f"field {name} is declared with init=False, it cannot be specified with replace()"
            )
    for name in info.init_names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)


def pickled_by_fields(cls: type[T]) -> type[T]:
    """Make a record pickle as a call of its class on its fields' values, in order.

    A slotted dataclass pickles by `__getstate__`/`__setstate__`, which set each field in
    Python: a result sent back from a worker (runner/pool.py) spent most of its pickling
    time there. Every field must be an `__init__` argument (no `init=False`), which is
    checked here."""
    names, not_init = _field_names(cls)
    if not_init:
        raise TypeError(f"{cls.__name__}: a field outside __init__ cannot be pickled by fields")
    if len(names) == 1:
        (name,) = names

        def reduce(self: Any) -> tuple[type[T], tuple[Any, ...]]:
            return cls, (getattr(self, name),)
    else:
        import operator

        values = operator.attrgetter(*names)

        def reduce(self: Any) -> tuple[type[T], tuple[Any, ...]]:
            return cls, values(self)

    cls.__reduce__ = reduce  # type: ignore[method-assign]
    return cls
