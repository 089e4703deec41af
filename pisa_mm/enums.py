"""`Enum` and `IntEnum`, the bases of the tree's closed vocabularies: the standard library's
classes, each subclass built by its faster path.

`class Kind(enum.Enum)` runs the `EnumType` metaclass, whose checks cost ~680,000
instructions for a class of six members (an `IntEnum` more): a run of one test makes 27
such classes, 16 M instructions. The standard library builds its own enums at start-up
(`re.RegexFlag`, `signal.Signals`, ...) with `enum._simple_enum`, which makes the same class
without those checks. A subclass of this module's `Enum` or `IntEnum` is handed, as a plain
class, to `_simple_enum(enum.Enum)` (or `enum.IntEnum`): the class bound to its name is an
`enum.Enum` of `EnumType` in every way (members, values, order, `repr`, `str`, `format`,
hashing, comparisons, pickling by value, `Kind("R")`, iteration, `__members__`).
tests/unit/test_enums.py builds every enum of the tree both ways and compares them, with the
standard library's own `enum._test_simple_enum` and more. mypy sees `enum.Enum` itself.

Only what the tree's enums use goes this way (members given by value; properties and
methods; a docstring): a class with `_missing_`, `_generate_next_value_`, `auto()`, its own
`__new__` or `__init__`, or under another Python than 3.11 (whose `enum` this follows), is
made by `EnumType` as usual.
"""

from __future__ import annotations

import enum
import sys
import types

from pisa_mm.hints import TYPE_CHECKING, Any

__all__ = ["Enum", "IntEnum"]

# the names whose presence sends a class to the usual path
_USUAL = frozenset({"_missing_", "_generate_next_value_", "__new__", "__init__", "_ignore_"})
_FAST = sys.version_info[:2] == (3, 11)


def _made(etype: Any, name: str, namespace: dict[str, Any]) -> Any:
    """The enum `name` of base `etype` with the class body `namespace`."""
    if not _FAST or any(
        key in _USUAL or isinstance(value, enum.auto) for key, value in namespace.items()
    ):
        return _usual(etype, name, namespace)
    plain = type(name, (), namespace)
    made = enum._simple_enum(etype)(plain)  # type: ignore[attr-defined]
    qualname = namespace.get("__qualname__")
    if qualname is not None:
        made.__qualname__ = qualname
    if namespace.get("__doc__") is None:  # `_simple_enum` writes one; EnumType leaves None
        type.__setattr__(made, "__doc__", None)
    # `_simple_enum` puts every member behind an `enum.property` redirect, whose `__get__`
    # runs in Python at each `Kind.READ` (twice the cost of a plain class attribute, 1.4 M
    # instructions per small test of the explicit engine); `EnumType` stores the member
    # itself unless a base defines a descriptor of that name, and so does this.
    for member_name, member in made._member_map_.items():
        if isinstance(made.__dict__.get(member_name), enum.property) and not any(
            _descriptor(base.__dict__.get(member_name)) for base in made.__mro__[1:]
        ):
            type.__setattr__(made, member_name, member)
    return made


def _descriptor(value: Any) -> bool:
    """Whether a base's attribute makes `EnumType` redirect a member of its name."""
    return isinstance(value, (property, enum.property, types.DynamicClassAttribute)) or (
        value is not None and all(hasattr(value, a) for a in ("fget", "fset", "fdel"))
    )


def _usual(etype: Any, name: str, namespace: dict[str, Any]) -> Any:
    """What `class name(etype): ...` makes with that body, through `EnumType`."""
    meta = type(etype)
    body = meta.__prepare__(name, (etype,))
    for key, value in namespace.items():
        body[key] = value
    return meta(name, (etype,), body)


if TYPE_CHECKING:
    from enum import Enum, IntEnum
else:

    class _Spec(type):
        """The metaclass of this module's bases: a subclass is made an enum of the base's
        kind (`etype`) instead of a class of its own."""

        def __new__(mcls, name, bases, namespace, etype=None):
            if etype is not None:  # the bases themselves
                made = super().__new__(mcls, name, bases, namespace)
                made.etype = etype
                return made
            (base,) = bases
            return _made(base.etype, name, dict(namespace))

    class Enum(metaclass=_Spec, etype=enum.Enum):
        """Subclassed as `enum.Enum` is: the class made is an `enum.Enum`."""

    class IntEnum(metaclass=_Spec, etype=enum.IntEnum):
        """Subclassed as `enum.IntEnum` is: the class made is an `enum.IntEnum`."""
