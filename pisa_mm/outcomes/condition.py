"""The final-state question shared by every engine: observables, PROP evaluation, verdicts."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence

from pisa_mm.hints import assert_never
from pisa_mm.litmus.program import (
    And,
    Atom,
    BoolConst,
    Condition,
    Implies,
    LitmusTest,
    MemObs,
    Not,
    Observable,
    Or,
    Prop,
    Quantifier,
    RegObs,
)
from pisa_mm.outcomes.model import State, Verdict
from pisa_mm.values.fp import bits_to_float_text

__all__ = [
    "Observation",
    "condition_observables",
    "condition_text",
    "eval_prop",
    "make_state",
    "obs_key",
    "observables",
    "observation",
    "passes_filter",
    "prop_text",
    "reg_key",
    "state_maker",
    "value_text",
    "verdict",
    "witnessed",
]


def obs_key(obs: Observable) -> tuple[int, str, int, int, int]:
    """A total order on observables: registers by thread, then memory; stable across engines."""
    match obs:
        case RegObs():
            return (0, f"{obs.thread:08d}:{obs.reg}", -1 if obs.elem is None else obs.elem, 0, 0)
        case MemObs():
            gpu, wg = obs.instance or (-1, -1)
            return (1, obs.var, obs.index, wg, gpu)
        case _:
            assert_never(obs)


def reg_key(obs: RegObs) -> str:
    """The key of `obs` in a path's `final_regs` (`r0`, `v.x`), as the builder spells it."""
    if obs.elem is None:
        return obs.reg
    return f"{obs.reg}.{'xyzw'[obs.elem] if obs.elem < 4 else obs.elem}"


def _prop_observables(prop: Prop, out: list[Observable]) -> None:
    match prop:
        case Atom():
            out.append(prop.obs)
        case BoolConst():
            pass
        case Not():
            _prop_observables(prop.arg, out)
        case And() | Or():
            for arg in prop.args:
                _prop_observables(arg, out)
        case Implies():
            _prop_observables(prop.lhs, out)
            _prop_observables(prop.rhs, out)
        case _:
            assert_never(prop)


def condition_observables(cond: Condition) -> tuple[Observable, ...]:
    """The observables the condition's PROP mentions, deduplicated and sorted."""
    out: list[Observable] = []
    _prop_observables(cond.prop, out)
    return tuple(sorted(set(out), key=obs_key))


def observables(test: LitmusTest) -> tuple[Observable, ...]:
    """What a final state shows: the observables of the condition, of the `filter` (which
    every engine must evaluate on the state) and of `locations`."""
    out: list[Observable] = list(condition_observables(test.condition))
    if test.filter is not None:
        _prop_observables(test.filter, out)
    out.extend(test.locations)
    return tuple(sorted(set(out), key=obs_key))


def passes_filter(test: LitmusTest, values: Mapping[Observable, int]) -> bool:
    """Whether a final state survives the test's `filter` (herd: a state that does not is
    discarded before the condition is evaluated: not listed, counted or used)."""
    return test.filter is None or eval_prop(test.filter, values)


def eval_prop(prop: Prop, values: Mapping[Observable, int]) -> bool:
    """Whether `prop` holds in a final state given as observable -> unsigned value.

    Atom values are unsigned bit patterns of the observable's width (validation converts
    signed literals), so equality is plain integer equality.
    """
    match prop:
        case Atom():
            eq = values[prop.obs] == prop.value
            return not eq if prop.negated else eq
        case BoolConst():
            return prop.value
        case Not():
            return not eval_prop(prop.arg, values)
        case And():
            return all(eval_prop(a, values) for a in prop.args)
        case Or():
            return any(eval_prop(a, values) for a in prop.args)
        case Implies():
            return not eval_prop(prop.lhs, values) or eval_prop(prop.rhs, values)
        case _:
            assert_never(prop)


@functools.lru_cache(maxsize=4096)
def _shown(obs: Observable) -> tuple[tuple[int, str, int, int, int], str]:
    """`obs_key` and the text of an observable, asked for at every final state of a test
    (neither depends on `fmt`, which is not part of an observable's identity)."""
    return obs_key(obs), str(obs)


def make_state(values: Mapping[Observable, int]) -> State:
    """The printed state: (observable text, value) pairs in observable order."""
    return state_maker(tuple(values))(tuple(values.values()))


def state_maker(obs: Sequence[Observable]) -> Callable[[Sequence[int]], State]:
    """`make_state` for rows of values given in the order of `obs`, with the order, the
    texts and the float formats worked out once (an engine may list tens of thousands of
    states over the same observables)."""
    shown = [_shown(o) for o in obs]
    order = sorted(range(len(obs)), key=lambda i: shown[i][0])
    ordered = [obs[i] for i in order]
    names = tuple(shown[i][1] for i in order)
    floats = any(o.fmt is not None for o in ordered)

    def make(row: Sequence[int]) -> State:
        values = [row[i] for i in order]
        texts = (
            tuple(value_text(o, v) for o, v in zip(ordered, values, strict=True))
            if floats
            else tuple(map(str, values))
        )
        return State(tuple(zip(names, values, strict=True)), texts)

    return make


def value_text(obs: Observable, value: int) -> str:
    """A final value as printed: a float for a float-typed observable, else the integer."""
    if obs.fmt is not None:
        return bits_to_float_text(value, obs.fmt)
    return str(value)


def verdict(quantifier: Quantifier, positive: int, negative: int) -> Verdict:
    """herd's validation: exists needs a positive, ~exists none, forall no negative."""
    match quantifier:
        case Quantifier.EXISTS:
            return Verdict.OK if positive > 0 else Verdict.NO
        case Quantifier.NOT_EXISTS:
            return Verdict.OK if positive == 0 else Verdict.NO
        case Quantifier.FORALL:
            return Verdict.OK if negative == 0 else Verdict.NO
        case _:
            assert_never(quantifier)


def witnessed(quantifier: str, verdict_ok: bool) -> bool:
    """Whether a verdict is decided by one execution (an Ok `exists`, a No `~exists` or
    `forall`): such a verdict holds at every larger unroll bound."""
    return verdict_ok if quantifier == Quantifier.EXISTS.value else not verdict_ok


class Observation:
    """herd's Observation keyword from the positive/negative counts."""

    NEVER = "Never"
    SOMETIMES = "Sometimes"
    ALWAYS = "Always"


def observation(positive: int, negative: int) -> str:
    if positive == 0:
        return Observation.NEVER
    if negative == 0:
        return Observation.ALWAYS
    return Observation.SOMETIMES


def _atom_text(atom: Atom) -> str:
    return f"{atom.obs}{'!=' if atom.negated else '='}{value_text(atom.obs, atom.value)}"


def _join(args: Iterable[Prop], sep: str) -> str:
    return f" {sep} ".join(_prop_text(a, nested=True) for a in args)


def _prop_text(prop: Prop, *, nested: bool) -> str:
    match prop:
        case Atom():
            return _atom_text(prop)
        case BoolConst():
            return "true" if prop.value else "false"
        case Not():
            inner = _prop_text(prop.arg, nested=True)
            return f"~({inner})" if isinstance(prop.arg, Atom) else f"~{inner}"
        case And() | Or():
            if not prop.args:
                return "true" if isinstance(prop, And) else "false"
            if len(prop.args) == 1:
                return _prop_text(prop.args[0], nested=nested)
            text = _join(prop.args, "/\\" if isinstance(prop, And) else "\\/")
            return f"({text})" if nested else text
        case Implies():
            text = f"{_prop_text(prop.lhs, nested=True)} -> {_prop_text(prop.rhs, nested=True)}"
            return f"({text})" if nested else text
        case _:
            assert_never(prop)


def prop_text(prop: Prop) -> str:
    """herd-style text of a proposition: `P1:%r0=1 /\\ P1:%r1=0`."""
    return _prop_text(prop, nested=False)


def condition_text(cond: Condition) -> str:
    """herd's `Condition` line body: `exists (P1:%r0=1 /\\ P1:%r1=0)`."""
    return f"{cond.quantifier.value} ({prop_text(cond.prop)})"
