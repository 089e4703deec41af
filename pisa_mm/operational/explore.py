"""Exhaustive exploration of the machine: DFS over interleavings, with a visited set and
sleep sets (a step independent of the ones explored before it from the same state is not
taken again after them)."""

from __future__ import annotations

from collections.abc import Callable

from pisa_mm.events.model import Location
from pisa_mm.litmus.program import Observable
from pisa_mm.operational.atoms import Actor, Flag
from pisa_mm.operational.state import Config, Status
from pisa_mm.operational.step import Machine, Step
from pisa_mm.records import record


@record
class Final:
    """A state where no actor can step, projected on the observables.

    It is a final state only when neither `cut` (some work-item was stopped by the unroll
    bound) nor `ended` (some work-item stopped at an access with an invalid address)."""

    values: tuple[tuple[Observable, int], ...]
    cut: bool
    ended: bool = False

    @property
    def complete(self) -> bool:
        return not (self.cut or self.ended)


@record
class Exploration:
    """What the machine reaches: every end state, and the flags raised on the way to one.

    A flag raised only on the way to cut end states is in `cut_flags` (and not in `flags`).
    """

    finals: frozenset[Final]
    flags: tuple[Flag, ...]
    states: int  # distinct machine states visited
    steps: int = 0  # interleaved steps taken (edges of the explored state graph)
    cut_flags: tuple[Flag, ...] = ()


def _final(machine: Machine, cfg: Config, observables: tuple[Observable, ...]) -> Final:
    values = machine.final_values(cfg, observables)
    cut = any(ts.status is Status.CUT for ts in cfg.threads)
    ended = any(ts.status is Status.INVALID for ts in cfg.threads)
    return Final(tuple(values.items()), cut, ended)


def _forced(machine: Machine, cfg: Config) -> list[tuple[tuple[Step, ...], Config]] | None:
    """No actor can step: break a rendezvous deadlock, or None when `cfg` is final."""
    forced = cfg.clone()
    log: list[Step] = []
    if not machine.force(forced, log):
        return None
    if not machine.settle(forced, log):
        return []
    return [(tuple(log), forced)]


def _expand(machine: Machine, cfg: Config) -> list[tuple[tuple[Step, ...], Config]] | None:
    """The successors of a settled state; None when it is final. Each successor's
    `raised` holds the flags raised on the way to it."""
    if machine.terminal(cfg):
        return None
    if machine.enabled(cfg):
        return machine.successors(cfg)
    return _forced(machine, cfg)


def _initial(machine: Machine, log: list[Step] | None) -> Config:
    init = machine.initial()
    # the first events of each work-item close no psc cycle, and reach no barrier its
    # work-group passed without it
    alive = machine.settle(init, log)
    assert alive
    return init


Footprint = tuple[Location, bool] | None


def _independent(a: Actor, fa: Footprint, b: Actor, fb: Footprint) -> bool:
    """Steps of two actors that commute: different work-items (a work-item and its own
    copies are kept dependent) whose accesses are to different locations, or both reads.
    The machine state after both is the same in either order: memory, views and race
    records of one location are touched by one of them only, and the psc log is a set."""
    if fa is None or fb is None or a[0] == b[0]:
        return False
    return fa[0] != fb[0] or not (fa[1] or fb[1])


def explore(
    machine: Machine,
    observables: tuple[Observable, ...],
    *,
    reduce: bool = True,
    accept: Callable[[dict[Observable, int]], bool] | None = None,
) -> Exploration:
    """Every final state of every run, and the flags raised on the way by runs that
    complete.

    Sleep sets (Godefroid, "Partial-order methods for the verification of concurrent
    systems", 1996, with state caching): from a state, after the steps of actors a1..ai-1,
    the step of ai leads to a state where every earlier aj independent of ai is asleep: the
    runs that take aj there are equivalent (the same execution) to runs already explored
    through aj first. A state seen again with fewer sleeping actors explores those it
    skipped. Final states and flags depend only on the execution, so none is lost.

    A state may be a dead end (a work-item reaches a barrier its work-group passed
    without it), so a flag raised on the way into a state counts only if that state
    reaches a final state ("live"), computed over the reverse edges once all is explored.

    When an enabled actor's next step commutes with every step any other actor may still
    take (`Machine.persistent`), only that actor is expanded (a persistent set: every run
    is equivalent to one that takes that step first). `reduce=False` turns both
    reductions off (every interleaving is explored; for tests of the reductions).

    A flag counts (in `flags`) when its state reaches a complete final state that `accept`
    (the test's filter) accepts, or an end state with an invalid address; otherwise, when
    it reaches a cut end state, it is in `cut_flags`.
    """
    init = _initial(machine, None)
    ids: dict[object, int] = {init.key(): 0}
    parents: list[list[int]] = [[]]
    asleep: list[frozenset[Actor]] = [frozenset()]
    raised: list[tuple[int, Flag]] = [(0, f) for f in init.raised]
    live: set[int] = set()  # reaches a cut end state
    kept: set[int] = set()  # reaches a kept final state, or an invalid-address end

    def reached(n: int, cfg: Config) -> None:
        fin = _final(machine, cfg, observables)
        finals.add(fin)
        if fin.cut:
            live.add(n)
        elif fin.ended or accept is None or accept(dict(fin.values)):
            kept.add(n)

    finals: set[Final] = set()
    steps = 0
    # (state, its number, sleeping actors, actors to expand: None = all awake ones)
    stack: list[tuple[Config, int, frozenset[Actor], list[Actor] | None]] = [
        (init, 0, frozenset(), None)
    ]
    while stack:
        cfg, here, sleep, todo = stack.pop()
        if machine.terminal(cfg):
            reached(here, cfg)
            continue
        enabled = machine.enabled(cfg)
        children: list[tuple[frozenset[Actor], Config]] = []
        if not enabled:
            forced = _forced(machine, cfg)
            if forced is None:
                reached(here, cfg)
                continue
            children = [(frozenset(), new) for _, new in forced]
        else:
            prints = {a: machine.footprint(cfg, a) for a in enabled} if reduce else {}
            alone = machine.persistent(cfg, enabled, prints) if reduce else None
            chosen = enabled if alone is None else [alone]
            if todo is not None:
                chosen = [a for a in todo if a in chosen]
            else:
                chosen = [a for a in chosen if a not in sleep]
            done: list[Actor] = []
            for a in chosen:
                keep = frozenset(
                    u
                    for u in (*sleep, *done)
                    if reduce and _independent(u, prints[u], a, prints[a])
                )
                children.extend((keep, new) for _, new in machine.successors(cfg, [a]))
                done.append(a)
        for child_sleep, new in children:
            steps += 1
            k = new.key()
            n = ids.get(k)
            if n is None:
                n = len(parents)
                ids[k] = n
                parents.append([here])
                asleep.append(child_sleep)
                raised.extend((n, f) for f in new.raised)
                stack.append((new, n, child_sleep, None))
                continue
            parents[n].append(here)
            raised.extend((n, f) for f in new.raised)
            # seen before with the actors in asleep[n] skipped: explore those now awake
            woken = asleep[n] - child_sleep
            if woken:
                asleep[n] = asleep[n] & child_sleep
                stack.append((new, n, child_sleep, sorted(woken)))
    for seen in (live, kept):
        work = list(seen)
        while work:
            for p in parents[work.pop()]:
                if p not in seen:
                    seen.add(p)
                    work.append(p)
    flags: dict[str, Flag] = {}
    cut_flags: dict[str, Flag] = {}
    for n, f in raised:
        if n in kept:
            flags.setdefault(f.name, f)
        elif n in live:
            cut_flags.setdefault(f.name, f)
    return Exploration(
        frozenset(finals),
        tuple(flags[name] for name in sorted(flags)),
        len(parents),
        steps,
        tuple(cut_flags[name] for name in sorted(cut_flags) if name not in flags),
    )


def find_run(
    machine: Machine,
    observables: tuple[Observable, ...],
    accept: Callable[[Final], bool],
) -> tuple[list[Step], Final] | None:
    """One schedule whose end state satisfies `accept`, as the list of its steps."""
    first: list[Step] = []
    init = _initial(machine, first)
    parent: dict[object, tuple[object, tuple[Step, ...]] | None] = {init.key(): None}
    stack = [init]
    while stack:
        cfg = stack.pop()
        here = cfg.key()
        succ = _expand(machine, cfg)
        if succ is None:
            fin = _final(machine, cfg, observables)
            if not accept(fin):
                continue
            steps: list[Step] = []
            key: object = here
            while (link := parent[key]) is not None:
                key, part = link
                steps[:0] = part
            return first + steps, fin
        for part, new in succ:
            k = new.key()
            if k not in parent:
                parent[k] = (here, part)
                stack.append(new)
    return None
