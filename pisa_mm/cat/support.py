"""Which dynamic built-ins each definition and check of a model depends on (its support).

A value whose support is a proper part of the dynamic built-ins (`hb` when it uses `rf` but
not `co`) is the same in two executions of one session that agree on that part: the
evaluator (`cat.eval.Evaluator`) then reuses it instead of computing it again. The support
follows the model's own names, transitively; nothing here knows a definition.
"""

from __future__ import annotations

from collections.abc import Mapping

from pisa_mm.cat.syntax import Expr, Model, RecGroup, names_in

__all__ = ["expr_support", "supports"]


def supports(model: Model, dynamic: frozenset[str]) -> dict[str, frozenset[str]]:
    """Defined name -> the dynamic built-ins its value depends on (empty: static). The
    members of a `let rec` group share one support, that of all their bodies."""
    out: dict[str, frozenset[str]] = {}
    for item in model.definitions:
        group = item.definitions if isinstance(item, RecGroup) else (item,)
        own = {d.name for d in group}
        used: set[str] = set()
        for d in group:
            used |= names_in(d.expr)
        support = _of(used - own, out, dynamic)
        for d in group:
            out[d.name] = support
    return out


def expr_support(
    expr: Expr, defined: Mapping[str, frozenset[str]], dynamic: frozenset[str]
) -> frozenset[str]:
    """The dynamic built-ins `expr` depends on, given the supports of the defined names."""
    return _of(names_in(expr), defined, dynamic)


def _of(
    names: set[str] | frozenset[str], defined: Mapping[str, frozenset[str]], dynamic: frozenset[str]
) -> frozenset[str]:
    # A defined name shadows a built-in of the same name (the evaluator reads it first).
    out: set[str] = set()
    for n in names:
        hit = defined.get(n)
        if hit is not None:
            out |= hit
        elif n in dynamic:
            out.add(n)
    return frozenset(out)
