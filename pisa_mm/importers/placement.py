"""Where each imported thread runs: a work-group per thread (C11) or the OpenCL scope tree."""

from __future__ import annotations

from pisa_mm.importers import syntax as S
from pisa_mm.importers.skips import Reason, Unsupported
from pisa_mm.records import record

__all__ = ["Place", "covers", "placements"]

# herd's and the literature's names for each level, to PISA's placement components.
_LEVELS = {
    "work_item": "thread",
    "wi": "thread",
    "thread": "thread",
    "sub_group": "sg",
    "subgroup": "sg",
    "sg": "sg",
    "warp": "sg",
    "work_group": "wg",
    "workgroup": "wg",
    "wg": "wg",
    "cta": "wg",
    "block": "wg",
    "device": "gpu",
    "dev": "gpu",
    "gpu": "gpu",
    "kernel": "gpu",
    "ndrange": "gpu",
    "system": "top",
    "sys": "top",
    "all_svm_devices": "top",
    "": "top",
}


@record
class Place:
    """A thread's NDRange, work-group and sub-group; None: one of its own (PISA's default)."""

    gpu: int
    wg: int | None
    sg: int | None

    def text(self) -> str:
        parts = [] if self.wg is None else [f"wg {self.wg}"]
        if self.sg is not None:
            parts.append(f"sg {self.sg}")
        parts.append(f"gpu {self.gpu}")
        return ", ".join(parts)


def placements(test: S.HerdTest) -> dict[int, Place]:
    """Each thread's place. C11: a work-group of its own, numbered like the thread."""
    procs = [t.proc for t in test.threads]
    if test.dialect is S.Dialect.C11:
        return {p: Place(0, p, None) for p in procs}
    explicit = {t.proc: t for t in test.threads if t.placement}
    if explicit and test.scopes is not None:
        raise Unsupported(
            Reason.PLACEMENT,
            "both thread placements (`P0@wg 0`) and a `scopes:` tree: give one of them",
            test.scopes.span,
        )
    if test.scopes is not None:
        return _from_tree(test, procs)
    out: dict[int, Place] = {}
    for t in test.threads:
        got: dict[str, int] = {}
        for kind, num in t.placement:
            level = _LEVELS.get(kind)
            if level not in ("sg", "wg", "gpu") or level in got:
                raise Unsupported(
                    Reason.PLACEMENT,
                    f"placement component `{kind} {num}` of P{t.proc} (expected one each of "
                    "sg, wg, dev)",
                    t.span,
                )
            got[level] = num
        if "sg" in got and "wg" not in got:
            raise Unsupported(
                Reason.PLACEMENT, f"P{t.proc} has a sub-group but no work-group", t.span
            )
        # Without a placement a thread gets a work-group of its own, as in the C11 import.
        wg = got.get("wg", None if t.placement else 1000 + t.proc)
        out[t.proc] = Place(got.get("gpu", 0), wg, got.get("sg"))
    return _renumber(out)


def _renumber(places: dict[int, Place]) -> dict[int, Place]:
    """Fresh work-groups (numbered 1000+) get the first ids that no explicit one uses."""
    used = {p.wg for p in places.values() if p.wg is not None and p.wg < 1000}
    nxt = 0
    out: dict[int, Place] = {}
    for proc, p in sorted(places.items()):
        if p.wg is not None and p.wg >= 1000:
            while nxt in used:
                nxt += 1
            used.add(nxt)
            p = Place(p.gpu, nxt, p.sg)
        out[proc] = p
    return out


def _from_tree(test: S.HerdTest, procs: list[int]) -> dict[int, Place]:
    assert test.scopes is not None
    counters = {"gpu": 0, "wg": 0, "sg": 0}
    out: dict[int, Place] = {}

    def walk(node: S.ScopeTree, ctx: dict[str, int]) -> None:
        level = _LEVELS.get(node.level)
        if level is None:
            raise Unsupported(
                Reason.PLACEMENT,
                f"unknown scope level `{node.level}` in the scope tree (expected device, "
                "work_group, sub_group or work_item)",
                node.span,
            )
        ctx = dict(ctx)
        if level in counters:
            ctx[level] = counters[level]
            counters[level] += 1
        for child in node.children:
            walk(child, ctx)
        if level == "thread" and len(node.procs) != 1:
            raise Unsupported(
                Reason.PLACEMENT, "a work_item scope holds exactly one thread", node.span
            )
        for proc in node.procs:
            if proc in out:
                raise Unsupported(
                    Reason.PLACEMENT, f"P{proc} appears twice in the scope tree", node.span
                )
            if "sg" in ctx and "wg" not in ctx:
                raise Unsupported(
                    Reason.PLACEMENT, f"P{proc}'s sub-group is in no work-group", node.span
                )
            out[proc] = Place(ctx.get("gpu", 0), ctx.get("wg", 1000 + proc), ctx.get("sg"))

    walk(test.scopes, {})
    for proc in procs:
        if proc not in out:
            raise Unsupported(
                Reason.PLACEMENT, f"P{proc} is not in the scope tree", test.scopes.span
            )
    return _renumber(out)


def covers(level: str, places: list[Place]) -> bool:
    """Whether one instance of scope `level` (subgroup/workgroup/gpu/system) holds all places."""
    if level == "system" or len(places) <= 1:
        return True
    first = places[0]
    if level == "gpu":
        return all(p.gpu == first.gpu for p in places)
    same_wg = first.wg is not None and all((p.gpu, p.wg) == (first.gpu, first.wg) for p in places)
    if level == "workgroup":
        return same_wg
    return same_wg and first.sg is not None and all(p.sg == first.sg for p in places)
