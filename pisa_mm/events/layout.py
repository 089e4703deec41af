"""Memory layout: numeric addresses of the test's variables, and address -> location."""

from __future__ import annotations

from bisect import bisect_right

from pisa_mm.events.kinds import Space
from pisa_mm.records import field, record


@record
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


@record
class Layout:
    """Every variable gets a disjoint byte range, so an address names one variable.

    Addresses of different spaces never overlap, which is what lets a `.generic` address
    resolve to the space of the variable it points to (PISA 3.3.1).
    """

    variables: tuple[Variable, ...]
    # indexes for the lookups below, which run once per access: a scan of the variables
    # made building a test with thousands of variables quadratic
    _by_name: dict[str, Variable] = field(init=False, repr=False, compare=False)
    _by_base: tuple[Variable, ...] = field(init=False, repr=False, compare=False)
    _bases: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Variable] = {}
        for v in self.variables:
            by_name.setdefault(v.name, v)  # the first of a name, as a scan would find
        by_base = tuple(sorted(self.variables, key=lambda v: v.base))
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_by_base", by_base)
        object.__setattr__(self, "_bases", tuple(v.base for v in by_base))

    def find(self, address: int) -> tuple[Variable, int] | None:
        """The variable containing byte `address` and the byte offset in it, if any."""
        # ranges are disjoint, so only the last variable starting at or before `address`
        # can hold it (an empty one, of size 0, holds nothing: look further down)
        i = bisect_right(self._bases, address) - 1
        while i >= 0:
            v = self._by_base[i]
            if address < v.base + v.size:
                return v, address - v.base
            if v.size > 0:
                return None
            i -= 1
        return None

    def variable(self, name: str) -> Variable | None:
        return self._by_name.get(name)
