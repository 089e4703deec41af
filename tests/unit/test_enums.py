"""pisa_mm/enums.py: every enum of the tree, made by `enum._simple_enum`, is the class that
`EnumType` makes of the same body (the standard library's own comparison, and what the
members do)."""

from __future__ import annotations

from pathlib import Path

from fresh_process import run_script

# In a fresh process: each enum of the tree built both ways (pisa_mm.enums._made is wrapped
# to keep each class body), then compared.
SCRIPT = r"""
import enum, json, pickle, pkgutil
import pisa_mm
from pisa_mm import enums

made = []
fast = enums._made


def both(etype, name, namespace):
    ours = fast(etype, name, dict(namespace))
    theirs = enums._usual(etype, name, dict(namespace))
    made.append((ours, theirs))
    return ours


enums._made = both
for info in pkgutil.walk_packages(pisa_mm.__path__, "pisa_mm."):
    if not info.name.startswith("pisa_mm.web"):
        __import__(info.name)


def shape(cls):
    members = list(cls)
    return {
        "type": repr(type(cls)), "mro": [c.__name__ for c in cls.__mro__],
        "name": cls.__name__, "qualname": cls.__qualname__, "module": cls.__module__,
        "doc": cls.__doc__, "keys": sorted(vars(cls)),
        "members": [[m.name, repr(m.value), repr(m), str(m), format(m), f"{m!s:>12}",
                     hash(m) == hash(m.value) if isinstance(m, int) else None,
                     repr(m.__reduce_ex__(4)[1]), m.__class__.__name__] for m in members],
        "names": list(cls.__members__), "by_value": [cls(m.value).name for m in members],
        "order": [[a < b for b in members] for a in members] if issubclass(cls, int) else None,
        "properties": sorted(k for k, v in vars(cls).items() if isinstance(v, property)),
        # members held by the class itself, not behind a redirect run at each `Kind.READ`
        "stored": sorted(k for k, v in vars(cls).items() if isinstance(v, cls)),
        "redirects": sorted(k for k, v in vars(cls).items() if isinstance(v, enum.property)),
    }


out = []
for ours, theirs in made:
    try:
        enum._test_simple_enum(theirs, ours)
        differs = ""
    except TypeError as exc:
        differs = str(exc)
    member = next(iter(ours))
    out.append({"class": f"{ours.__module__}.{ours.__qualname__}", "differs": differs,
                "ours": shape(ours), "theirs": shape(theirs),
                "pickled": pickle.loads(pickle.dumps(member)) is member})
print(json.dumps(out))
"""


def test_every_enum_of_the_tree_is_the_class_enumtype_makes(tmp_path: Path) -> None:
    classes = run_script(SCRIPT, tmp_path)
    assert len(classes) >= 40  # the whole tree
    for c in classes:
        assert not c["differs"], (c["class"], c["differs"])
        assert c["ours"] == c["theirs"], c["class"]
        assert c["pickled"], c["class"]
