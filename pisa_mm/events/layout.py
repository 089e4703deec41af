"""Memory layout: numeric addresses of the test's variables, and address -> location."""

from __future__ import annotations

from dataclasses import dataclass

from pisa_mm.events.kinds import Space


@dataclass(frozen=True, slots=True)
class Variable:
    """A declared memory variable: `count` elements of `width` bits from byte address `base`."""

    name: str
    space: Space
    base: int
    width: int
    count: int

    @property
    def size(self) -> int:
        return self.count * self.width // 8


@dataclass(frozen=True, slots=True)
class Layout:
    """Every variable gets a disjoint byte range, so an address names one variable.

    Addresses of different spaces never overlap, which is what lets a `.generic` address
    resolve to the space of the variable it points to (PISA 3.3.1).
    """

    variables: tuple[Variable, ...]

    def find(self, address: int) -> tuple[Variable, int] | None:
        """The variable containing byte `address` and the byte offset in it, if any."""
        for v in self.variables:
            if v.base <= address < v.base + v.size:
                return v, address - v.base
        return None

    def variable(self, name: str) -> Variable | None:
        for v in self.variables:
            if v.name == name:
                return v
        return None
