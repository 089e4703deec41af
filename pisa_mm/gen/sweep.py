"""Sweep cycles over the parameters, check each test with the frontend, drop duplicates."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Scope
from pisa_mm.gen.build import Skip, apply_fences, build_test
from pisa_mm.gen.canon import canonical_key
from pisa_mm.gen.cycle import CYCLE_PATH
from pisa_mm.gen.edges import Cycle, Dir, RmwKind
from pisa_mm.gen.params import (
    NO_FENCE,
    FenceChoice,
    OrderScheme,
    Params,
    Placement,
    RmwChoice,
    SpaceChoice,
)
from pisa_mm.gen.program import GenTest
from pisa_mm.gen.render import render
from pisa_mm.litmus import parse_test
from pisa_mm.records import field, record


@record
class Source:
    """What to generate from: a shape name or the cycle text, and its parsed cycle."""

    label: str
    cycle: Cycle


@record
class Sweep:
    orders: tuple[OrderScheme, ...] = (OrderScheme.RLX,)
    scopes: tuple[Scope, ...] = (Scope.GPU,)
    spaces: tuple[SpaceChoice, ...] = (SpaceChoice.GLOBAL,)
    placements: tuple[Placement, ...] = (Placement.DIFF_WG,)
    fences: tuple[FenceChoice, ...] = (NO_FENCE,)
    rmws: tuple[RmwKind | None, ...] = (None,)


@record
class Generated:
    test: GenTest
    text: str


@record(frozen=False)
class Summary:
    tests: int = 0
    duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    by_shape: Counter[str] = field(default_factory=Counter)
    truncated: bool = False

    def lines(self) -> list[str]:
        out = [
            f"{self.tests} tests"
            + (" (stopped at --max)" if self.truncated else "")
            + f", {self.duplicates} duplicates removed (equal up to renaming threads and "
            f"locations), {sum(self.skipped.values())} combinations skipped as invalid PISA"
        ]
        for reason, count in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  skipped {count}: {reason}")
        if self.by_shape:
            out.append(
                "by shape: " + ", ".join(f"{k} {v}" for k, v in sorted(self.by_shape.items()))
            )
        return out


def _points(sweep: Sweep, cycle: Cycle) -> Iterator[Params]:
    n_threads = max(1, sum(1 for e in cycle.edges if e.external))
    for placement in sweep.placements:
        hosts = range(n_threads) if placement is Placement.HOST else range(1)
        for host in hosts:
            for space in sweep.spaces:
                for scope in sweep.scopes:
                    for orders in sweep.orders:
                        for fence in sweep.fences:
                            base = Params(orders, scope, space, placement, fence, None, host)
                            for kind in sweep.rmws:
                                if kind is None:
                                    yield base
                                    continue
                                fenced = apply_fences(cycle, base)
                                for pos, e in enumerate(fenced.edges):
                                    if fenced.annots[pos].rmw is not None:
                                        continue  # the cycle already makes it an iatom
                                    if e.src is Dir.W or kind is RmwKind.CAS:
                                        yield Params(
                                            orders,
                                            scope,
                                            space,
                                            placement,
                                            fence,
                                            RmwChoice(kind, pos),
                                            host,
                                        )


def generate(
    sources: list[Source], sweep: Sweep, max_tests: int | None = None
) -> tuple[list[Generated], Summary]:
    """Every valid, distinct test of the sweep, in a fixed order; and what was dropped."""
    summary = Summary()
    return list(iter_generated(sources, sweep, summary, set(), max_tests)), summary


def iter_generated(
    sources: list[Source],
    sweep: Sweep,
    summary: Summary,
    seen: set[str],
    max_tests: int | None = None,
) -> Iterator[Generated]:
    """`generate`'s tests one at a time (a caller may stop early: `diff --search`), counting
    them and what was dropped in `summary`; `seen` holds the canonical keys already produced
    (a caller's several sweeps share it). At `max_tests` tests in `summary`, stop."""
    names: dict[str, str] = {}
    for source in sources:
        for params in _points(sweep, source.cycle):
            if max_tests is not None and summary.tests >= max_tests:
                summary.truncated = True
                return
            try:
                test = build_test(source.cycle, params)
            except Skip as skip:
                summary.skipped[skip.reason] += 1
                continue
            except PisaMMError as exc:  # a property of the cycle itself: located in its text
                exc.sources = {CYCLE_PATH: source.cycle.text}  # type: ignore[attr-defined]
                raise
            key = canonical_key(test)
            if key in seen:
                summary.duplicates += 1
                continue
            if names.setdefault(test.name, key) != key:
                raise AssertionError(f"two different generated tests named {test.name}")
            text = render(test, source.label)
            try:
                parse_test(text, f"{test.name}.litmus", strict=True)
            except PisaMMError as exc:
                code = exc.diagnostics[0].code if exc.diagnostics else None
                summary.skipped[f"rejected by the PISA frontend [{code}]"] += 1
                continue
            seen.add(key)
            summary.tests += 1
            summary.by_shape[test.shape] += 1
            yield Generated(test, text)
