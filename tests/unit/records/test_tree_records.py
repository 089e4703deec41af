"""Every @record class of pisa_mm, built by records.py's own builder and by dataclasses: the
same fields, class attributes, methods (the code of those made from templates, the signature
of `__init__`, and what every method does) and pickled state."""

from __future__ import annotations

from pathlib import Path

from fresh_process import run_script

# In a fresh process: record() builds each class of the tree twice (from two copies of the
# undecorated class), by `_make` and by `dataclasses`, and the two are compared.
SCRIPT = r'''
import copy, dataclasses, inspect, json, pickle, pkgutil, sys, types
import pisa_mm
from pisa_mm import records

pairs = []


def both(cls, options):
    def twin():
        namespace = {k: copy.copy(v) if isinstance(v, dataclasses.Field) else v
                     for k, v in cls.__dict__.items() if k not in ("__dict__", "__weakref__")}
        made = type(cls)(cls.__name__, cls.__bases__, namespace)
        made.__qualname__ = cls.__qualname__
        return made

    theirs = records._by_dataclasses(twin(), options)
    ours = records._make(cls, options)
    pairs.append((ours, theirs, cls.__qualname__, cls.__module__))
    made = theirs if ours is None else ours
    twins[made] = theirs
    return made


twins = {}
by_fields = records.pickled_by_fields


def both_by_fields(cls):
    # what a class is given after @record, given to its twin as well
    if twins.get(cls) is not None and twins[cls] is not cls:
        by_fields(twins[cls])
    return by_fields(cls)


records._build = both
records.pickled_by_fields = both_by_fields
for info in pkgutil.walk_packages(pisa_mm.__path__, "pisa_mm."):
    if not info.name.startswith("pisa_mm.web"):
        __import__(info.name)

FIELD = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare",
         "metadata", "kw_only", "_field_type")


# records' own closures (the frozen errors, the pickled state): what they do is compared
OWN = ("__setattr__", "__delattr__", "__getstate__", "__setstate__")


def value(v, name=None):
    if isinstance(v, types.FunctionType):
        if name in OWN:
            return ["closure", name]
        if name == "__repr__":  # the wrapper is records' own recursion guard
            return [v.__qualname__, code(v.__wrapped__)]
        if name == "__init__":  # a slotted record's stores through its slots
            return [str(inspect.signature(v)), v.__qualname__, v.__name__, v.__module__,
                    repr(v.__annotations__), repr(v.__defaults__)]
        return code(v)
    if isinstance(v, type):
        return ("class", v.__module__, v.__qualname__)
    if isinstance(v, dataclasses._DataclassParams):
        return repr(v)
    if isinstance(v, dict) and all(isinstance(f, dataclasses.Field) for f in v.values()):
        return {k: [repr(getattr(f, a)) for a in FIELD] for k, f in v.items()}
    return repr(v)


def code(fn):
    wrapped = getattr(fn, "__wrapped__", None)
    c = fn.__code__
    cells = [value(cell.cell_contents) for cell in fn.__closure__ or ()]
    return [c.co_code.hex(), repr(c.co_consts), c.co_names, c.co_varnames, c.co_freevars,
            c.co_flags, c.co_qualname, c.co_filename, c.co_firstlineno, fn.__qualname__,
            fn.__name__, fn.__module__, repr(fn.__defaults__), repr(fn.__kwdefaults__),
            repr(fn.__annotations__), cells, code(wrapped) if wrapped else None]


def shape(cls):
    # the place of the __dict__ and __weakref__ descriptors (a class without slots) is that of
    # the copy the test made
    dataclasses.fields(cls)  # made on first use by records' builder
    for name in list(vars(cls)):  # and the methods it made when first looked up
        getattr(cls, name)
    return {"dict": [(k, value(v, k)) for k, v in vars(cls).items()
                     if k not in ("__dict__", "__weakref__")],
            "descriptors": sorted(set(vars(cls)) & {"__dict__", "__weakref__"}),
            "mro": value(cls.__mro__),
            "doc": cls.__doc__, "name": cls.__name__, "qualname": cls.__qualname__}


def behaviour(cls):
    """Instances of fields 0, 1, ...: their repr, equality, hash, order, pickled state."""
    fields = [f for f in dataclasses.fields(cls) if f.init]
    if "__post_init__" in vars(cls) or any(f.default is not dataclasses.MISSING
                                           for f in fields):
        fields = [f for f in fields if f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING]
    try:
        a, b = cls(*range(len(fields))), cls(*range(1, len(fields) + 1))
    except Exception as exc:  # a __post_init__ that wants real values
        return ["init", type(exc).__name__]
    seen = [repr(a), a == b, a == a, a != b]
    seen.append(hash(a) if cls.__hash__ is not None else None)
    if cls.__dataclass_params__.order:
        seen += [a < b, a <= b, a > b, a >= b]
    if fields:
        try:
            cls()
            seen.append("no error")
        except TypeError as exc:
            seen.append(str(exc))
    if cls.__dataclass_params__.frozen:
        for attempt in (lambda: setattr(a, fields[0].name if fields else "x", 5),
                        lambda: delattr(a, fields[0].name if fields else "x"),
                        lambda: setattr(a, "not_a_field", 5)):
            try:
                attempt()
                seen.append("no error")
            except Exception as exc:
                seen.append([type(exc).__name__, str(exc)])
    reduced = a.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    seen.append(repr(reduced[2:]))
    seen.append(repr(dataclasses.astuple(a)) if not fields else len(dataclasses.astuple(a)))
    seen.append(repr(dataclasses.replace(a)))
    return seen


out = []
for ours, theirs, qualname, module in pairs:
    if ours is None:
        out.append({"class": f"{module}.{qualname}", "declined": True})
        continue
    out.append({"class": f"{module}.{qualname}", "ours": shape(ours), "theirs": shape(theirs),
                "ours_do": behaviour(ours), "theirs_do": behaviour(theirs),
                "pickles": repr(pickle.loads(pickle.dumps(ours(*[0] * len([
                    f for f in dataclasses.fields(ours) if f.init and f.default is
                    dataclasses.MISSING and f.default_factory is dataclasses.MISSING]))))
                    if "__post_init__" not in vars(ours) else None)})
print(json.dumps(out))
'''


def test_every_record_of_the_tree_is_built_as_dataclasses_builds_it(tmp_path: Path) -> None:
    classes = run_script(SCRIPT, tmp_path, PYTHONHASHSEED="0")
    assert len(classes) > 150  # the whole tree, not one module
    declined = [c["class"] for c in classes if c.get("declined")]
    assert not declined  # the builder makes every class of the tree itself
    for c in classes:
        assert c["ours"] == c["theirs"], (
            c["class"],
            [
                (a, b)
                for a, b in zip(c["ours"]["dict"], c["theirs"]["dict"], strict=False)
                if a != b
            ],
        )
        assert c["ours_do"] == c["theirs_do"], c["class"]
