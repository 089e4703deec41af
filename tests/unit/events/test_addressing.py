"""The one rule of which variables an access may reach (events/addressing.py), which the
builder and the operational machine both apply to computed addresses (`invalid-address`)."""

from __future__ import annotations

import pytest

from pisa_mm.errors import Span
from pisa_mm.events.addressing import allowed_spaces, is_target, owns
from pisa_mm.events.kinds import Space
from pisa_mm.events.layout import Variable
from pisa_mm.litmus.program import AddrSpace, VarDecl

ALL = frozenset(Space)


def test_a_qualified_access_reaches_its_space_a_generic_one_depends_on_atomicity() -> None:
    assert allowed_spaces(AddrSpace.SHARED, atomic=True, host=False) == {Space.SHARED}
    # PISA 8: a generic atomic reaches global or shared memory; a weak access any space
    assert allowed_spaces(AddrSpace.GENERIC, atomic=True, host=False) == {
        Space.GLOBAL,
        Space.SHARED,
    }
    assert allowed_spaces(AddrSpace.GENERIC, atomic=False, host=False) == {
        Space.GLOBAL,
        Space.SHARED,
        Space.PRIVATE,
        Space.CONST,
    }


def test_a_host_thread_reaches_only_global_and_const_memory() -> None:
    assert allowed_spaces(AddrSpace.GENERIC, atomic=False, host=True) == {Space.GLOBAL, Space.CONST}
    assert allowed_spaces(AddrSpace.SHARED, atomic=False, host=True) == frozenset()


@pytest.mark.parametrize(
    ("space", "width", "write", "owned", "target"),
    [
        (Space.GLOBAL, 32, True, True, True),
        (Space.GLOBAL, 64, False, True, False),  # another element width: mixed-size
        (Space.CONST, 32, False, True, True),
        (Space.CONST, 32, True, True, False),  # const memory is read-only
        (Space.PRIVATE, 32, False, True, True),
        (Space.PRIVATE, 32, False, False, False),  # another thread's private variable
    ],
)
def test_a_target_has_the_width_the_space_and_the_right_to_be_touched(
    space: Space, width: int, write: bool, owned: bool, target: bool
) -> None:
    var = Variable("v", space, 0x1000, 32, 1)
    assert is_target(var, ALL, width, write=write, owned=owned) is target
    assert not is_target(var, ALL - {space}, 32, write=False, owned=True)


def test_a_private_variable_belongs_to_the_thread_it_is_declared_for() -> None:
    span = Span("t.litmus", 1, 1)
    decls = [
        VarDecl("p", Space.PRIVATE, 32, 1, (0,), span, thread=1),
        VarDecl("q", Space.PRIVATE, 32, 1, (0,), span),
        VarDecl("g", Space.GLOBAL, 32, 1, (0,), span),
    ]
    assert owns(decls, "p", 1) and not owns(decls, "p", 0)
    assert owns(decls, "q", 0) and owns(decls, "q", 5)
    assert not owns(decls, "g", 0)  # only private variables are owned
