"""`record` (pisa_mm/records.py): the classes dataclasses makes, built from templates whose
code comes from the cache (the cache of compiled code itself: test_codecache.py)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import subprocess
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Any

import pytest

from pisa_mm import codecache, records
from pisa_mm.records import pickled_by_fields, record

# Class bodies covering what the tree uses: defaults, factories, fields left out of
# comparison, class variables, generics, inheritance, __post_init__ and methods.
BODIES = {
    "plain": """
class C:
    a: int
    b: str
""",
    "defaults": """
class C:
    '''Documented.'''
    a: int
    b: tuple[int, ...] = ()
    c: list[int] = field(default_factory=list, compare=False, repr=False)
    d: ClassVar[int] = 3
""",
    "generic": """
class C(Generic[T]):
    value: T | None = None
    name: str = field(default="x", hash=False)

    @property
    def label(self) -> str:
        return self.name
""",
    "post_init": """
class C:
    a: int
    b: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "b", self.a * 2)
""",
}
OPTIONS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # record's options, and dataclass's that they stand for
    "default": ({}, {"frozen": True, "slots": True}),
    "order": ({"order": True}, {"frozen": True, "slots": True, "order": True}),
    "identity": (
        {"eq": False, "weakref_slot": True},
        {"frozen": True, "slots": True, "eq": False, "weakref_slot": True},
    ),
    "mutable": ({"frozen": False}, {"slots": True}),
    "mutable, no slots": ({"frozen": False, "slots": False}, {}),
}


def _make(body: str, decorate: Callable[[type], type]) -> type:
    base = "@decorate\nclass Base:\n    z: int = 0\n" if "Base" in body else ""
    namespace: dict[str, Any] = {
        "__name__": __name__,
        "decorate": decorate,
        "field": dataclasses.field,
    }
    exec("from typing import ClassVar, Generic, TypeVar\nT = TypeVar('T')\n", namespace)
    exec(base + "@decorate" + body, namespace)
    cls: type = namespace["C"]
    return cls


def _code(fn: Any) -> tuple[Any, ...]:
    code = fn.__code__
    return (
        code.co_code,
        code.co_consts,
        code.co_names,
        code.co_varnames,
        code.co_flags,
        code.co_qualname,
        fn.__qualname__,
        repr(fn.__defaults__),  # records' MISSING and <factory> are not dataclasses' objects
        fn.__kwdefaults__,
        fn.__annotations__,
    )


# records' own closures: what they do is compared (test_what_dataclasses_offer_keeps_working,
# tests/unit/records/test_tree_records.py)
_OWN = ("__setattr__", "__delattr__", "__getstate__", "__setstate__")


def _method(name: str, value: Any) -> Any:
    if name == "__init__":
        return str(inspect.signature(value)), value.__qualname__, value.__annotations__
    if name == "__repr__":  # the wrapper is records' own recursion guard
        return value.__qualname__, _code(value.__wrapped__)
    if name in _OWN:
        return name
    return _code(value)


def _shape(cls: type) -> dict[str, Any]:
    """Everything dataclasses decides about a class, with its methods' code; for `__init__`,
    its signature (a frozen slotted record's stores through its slots: test below)."""
    for name in list(vars(cls)):  # the methods records makes when first looked up
        getattr(cls, name)
    methods = {
        name: _method(name, value)
        for name, value in sorted(vars(cls).items())
        if isinstance(value, FunctionType) and name not in ("__post_init__",)
    }
    fields = [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare)
        for f in dataclasses.fields(cls)
    ]
    return {
        "methods": methods,
        "fields": fields,
        "params": repr(vars(cls)["__dataclass_params__"]),
        "doc": cls.__doc__,
        "slots": vars(cls).get("__slots__"),
        "match_args": vars(cls).get("__match_args__"),
        "hash": vars(cls).get("__hash__") is None,
        "bases": cls.__bases__,
    }


@pytest.mark.parametrize("body", BODIES)
@pytest.mark.parametrize("option", OPTIONS)
def test_a_record_is_the_dataclass_it_stands_for(
    entry: Path, restart: Callable[[], None], body: str, option: str
) -> None:
    ours, theirs = OPTIONS[option]
    expected = _shape(_make(BODIES[body], dataclasses.dataclass(**theirs)))
    compiled = _make(BODIES[body], record(**ours))
    assert _shape(compiled) == expected
    restart()
    cached = _make(BODIES[body], record(**ours))
    assert not codecache.CODES.missed  # every method came from the cache file
    assert _shape(cached) == expected


def test_inheritance(entry: Path) -> None:
    @record
    class Base:
        a: int

    @record
    class Child(Base):
        b: str = "x"

    assert [f.name for f in dataclasses.fields(Child)] == ["a", "b"]
    assert Child(1) == Child(1, "x") != Base(1)


@record(order=True)
class Point:
    """A module-level record, for pickling."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default=(), compare=False)


@record(eq=False, weakref_slot=True)
class Handle:
    name: str


@record(frozen=False)
class Counter:
    n: int = 0


def test_what_dataclasses_offer_keeps_working() -> None:
    p = Point(1, 2, ("a",))
    assert dataclasses.is_dataclass(p)
    assert dataclasses.replace(p, y=5) == Point(1, 5)
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tags": ("a",)}
    assert dataclasses.astuple(p) == (1, 2, ("a",))
    assert pickle.loads(pickle.dumps(p)) == p
    assert repr(p) == "Point(x=1, y=2, tags=('a',))"
    assert hash(p) == hash(Point(1, 2))
    assert sorted([Point(2), Point(1, 9), Point(1, 3)]) == [Point(1, 3), Point(1, 9), Point(2)]
    match p:
        case Point(x, y):
            assert (x, y) == (1, 2)
        case _:
            pytest.fail("no match")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    assert not hasattr(p, "__dict__")
    h = Handle("a")
    assert weakref.ref(h)() is h and h != Handle("a")
    c = Counter()
    c.n += 1
    assert c == Counter(1)


def test_an_edited_module_keeps_only_the_code_in_use(
    entry: Path, restart: Callable[[], None]
) -> None:
    _make(BODIES["defaults"], record)  # a default_factory: its __init__ is written as text
    restart()
    _make(BODIES["post_init"], record)  # the same module, edited
    restart()
    table = codecache.CODES.group(f"records {__name__}")
    inits = [source for source in table if "def __init__" in source]
    assert inits and all("__post_init__" in source for source in inits)


def test_a_second_process_takes_the_templates_from_the_cache(tmp_path: Path) -> None:
    """The first process compiles every template (the whole group, whatever it used); the
    next one, importing the same records, compiles nothing."""
    script = (
        "import pisa_mm.cli, pisa_mm.commands.run\n"
        "from pisa_mm import codecache, records\n"
        "print(sorted(codecache.CODES.missed), len(records._TEMPLATES))"
    )
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        ).stdout
        for _ in range(2)
    ]
    assert "'records templates 2'" in runs[0]
    assert runs[1].startswith("[] ")


@pytest.mark.parametrize("body", BODIES)
def test_a_frozen_record_is_built_as_dataclasses_builds_it(entry: Path, body: str) -> None:
    """The `__init__` that stores through the slots (records._set_by_slots) takes the same
    arguments and defaults and makes the same objects; a class it cannot serve (a factory,
    __post_init__) keeps dataclasses' own."""
    theirs = _make(BODIES[body], dataclasses.dataclass(frozen=True, slots=True))
    ours = _make(BODIES[body], record)
    ours.__init__  # noqa: B018 (made when first looked up)
    init, their_init = vars(ours)["__init__"], vars(theirs)["__init__"]
    assert str(inspect.signature(init)) == str(inspect.signature(their_init))
    assert init.__qualname__ == their_init.__qualname__
    assert init.__annotations__ == their_init.__annotations__
    keeps = body in ("defaults", "post_init")  # a default_factory, __post_init__
    assert (_code(init) == _code(their_init)) is keeps
    args: tuple[Any, ...] = {"plain": (1, "x"), "generic": ()}.get(body, (7,))
    made, expected = ours(*args), theirs(*args)
    names = [f.name for f in dataclasses.fields(ours)]
    assert [getattr(made, n) for n in names] == [getattr(expected, n) for n in names]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, names[0], 1)


@record
class Cell:
    """A record pickled as a call of its class (records.pickled_by_fields)."""

    value: int
    name: str = "c"


pickled_by_fields(Cell)


def test_a_record_pickled_by_fields_round_trips() -> None:
    cell = Cell(3, "x")
    assert pickle.loads(pickle.dumps(cell, pickle.HIGHEST_PROTOCOL)) == cell
    assert cell.__reduce__() == (Cell, (3, "x"))

    @record
    class Later:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    with pytest.raises(TypeError, match="outside __init__"):
        pickled_by_fields(Later)


def test_records_replace_is_dataclasses_replace() -> None:
    """`records.replace` (what the tree calls) against `dataclasses.replace`."""
    p = Point(1, 2, ("a",))
    assert records.replace(p, y=5) == dataclasses.replace(p, y=5) == Point(1, 5, ("a",))
    assert records.replace(p) == p and records.replace(p) is not p

    @record
    class Later:
        a: int
        b: int = records.field(init=False, default=0)

    for replace in (records.replace, dataclasses.replace):
        with pytest.raises(ValueError, match="init=False"):
            replace(Later(1), b=2)
    with pytest.raises(TypeError):
        records.replace(p, z=1)


def test_fields_are_made_when_first_read() -> None:
    """`__dataclass_fields__` is made, as dataclasses' own, on first use (a run of one test
    never imports dataclasses: tests/unit/test_startup_imports.py)."""

    @record
    class Fresh:
        a: int
        b: str = records.field(default="x", compare=False)

    assert isinstance(vars(Fresh)["__dataclass_fields__"], records._Lazy)
    (a, b) = dataclasses.fields(Fresh)
    assert (a.name, a.type, b.default, b.compare) == ("a", "int", "x", False)
    assert isinstance(vars(Fresh)["__dataclass_fields__"], dict)
    assert vars(Fresh)["__dataclass_params__"].frozen


def test_methods_are_made_when_first_looked_up() -> None:
    """The templated methods and records' closures are `_Deferred` until first used, then
    the method itself, on the class that defined them (a subclass's use included)."""

    @record
    class Lazy:
        """A record."""

        a: int
        b: str = "x"

    class Sub(Lazy):
        pass

    deferred = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__getstate__")
    assert all(isinstance(vars(Lazy)[name], records._Deferred) for name in deferred)
    s = Sub(1)  # the base's __init__, made through the subclass
    assert isinstance(vars(Lazy)["__init__"], FunctionType) and "__init__" not in vars(Sub)
    assert Lazy.__init__.__qualname__ == f"{Lazy.__qualname__}.__init__"
    assert isinstance(vars(Lazy)["__eq__"], records._Deferred)
    assert s == Sub(1) and s != Lazy(1) and hash(s) == hash(Lazy(1))
    assert repr(Lazy(2, "y")) == f"{Lazy.__qualname__}(a=2, b='y')"
    assert isinstance(vars(Lazy)["__eq__"], FunctionType)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Lazy(1).a = 2
    made, copy = Lazy(3), object.__new__(Lazy)
    copy.__setstate__(made.__getstate__())  # what pickling calls
    assert copy == made
