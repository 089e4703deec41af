"""A form of a generated test that is equal for tests equal up to renaming threads/locations."""

from __future__ import annotations

import itertools
import re

from pisa_mm.gen.program import LOC_NAMES, GenTest

_LOC = re.compile(r"@([a-z]+)\b")
MAX_PERMUTED_THREADS = 5  # beyond this only rotations of the thread order are tried


def _orders(n: int) -> list[tuple[int, ...]]:
    if n <= MAX_PERMUTED_THREADS:
        return list(itertools.permutations(range(n)))
    return [tuple((k + i) % n for i in range(n)) for k in range(n)]


def _relabel(ids: list[object]) -> list[int]:
    seen: dict[object, int] = {}
    return [seen.setdefault(i, len(seen)) for i in ids]


def canonical_key(test: GenTest) -> str:
    """The least, over thread orders, of the test written with threads and locations renamed
    in order of first appearance (registers are per thread and already numbered in order)."""
    best: str | None = None
    for perm in _orders(len(test.threads)):
        where = {old: new for new, old in enumerate(perm)}
        locs: dict[str, str] = {}

        def loc(m: re.Match[str], locs: dict[str, str] = locs) -> str:
            return "@" + locs.setdefault(m[1], LOC_NAMES[len(locs)])

        bodies = []
        for t in perm:  # a thread's pointer inits, then its code, name its locations
            inits = [f"{reg}={_LOC.sub(loc, v)}" for u, reg, v in test.reg_inits if u == t]
            code = [_LOC.sub(loc, line) for line in test.threads[t].decls + test.threads[t].body]
            bodies.append(" ".join(inits + code))
        places = [test.threads[t].place for t in perm]
        gpus = _relabel([p[0] if p else None for p in places])
        wgs = _relabel([p[:2] if p else None for p in places])
        sgs = _relabel(
            [
                p if p and p[2] is not None else (t, "fresh")
                for t, p in zip(perm, places, strict=True)
            ]
        )
        place = [
            "host" if p is None else f"{g}/{w}/{s}"
            for p, g, w, s in zip(places, gpus, wgs, sgs, strict=True)
        ]
        spaces = {}
        for i, space in enumerate(test.locs):
            spaces["@" + locs.get(LOC_NAMES[i], "?" + LOC_NAMES[i])] = space.value
        atoms = sorted(
            [f"{where[t]}:{reg}={v}" for t, reg, v in test.reg_atoms]
            + [f"@{locs.get(LOC_NAMES[k], '?')}={v}" for k, v in test.mem_atoms]
        )
        key = repr((sorted(spaces.items()), place, bodies, atoms))
        if best is None or key < best:
            best = key
    assert best is not None
    return best
