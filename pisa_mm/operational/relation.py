"""The claimed relation between the machine and an axiomatic model, checked on one test.

docs/operational.md states the claim; `classify` checks it on the results of one test:
the machine's states and flags must be those of the axiomatic model, except for the one
documented class of behaviour the machine cannot reach (load buffering: a cycle in
po | rf | aso). `machine_model` is the cat model the machine equals (`machine.cat`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from pisa_mm.cat.loader import load_model
from pisa_mm.cat.syntax import Model
from pisa_mm.enums import Enum
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.model import State, TestResult
from pisa_mm.records import record

__all__ = ["LB", "MACHINE_MODEL", "Comparison", "Relation", "classify", "machine_model"]

LB = "load-buffering"

# `pisa` with no-thin-air strengthened to acyclic (po | rf | aso): the machine's behaviours
MACHINE_MODEL = Path(__file__).with_name("machine.cat")


@functools.cache
def machine_model() -> Model:
    """The cat model whose states and flags the machine reaches, exactly."""
    return load_model(str(MACHINE_MODEL))


class Relation(Enum):
    EQUAL = "equal"
    SUBSET = "operational ⊂ axiomatic"
    UNSOUND = "operational ⊄ axiomatic"


@record
class Comparison:
    """The relation found on one test, the classes explaining the difference, and whether
    the difference is acceptable (explained by the documented class)."""

    relation: Relation
    classes: tuple[str, ...]
    missing: tuple[State, ...]  # axiomatic states the machine does not reach
    extra: tuple[State, ...]  # machine states the axiomatic model forbids (soundness bug)
    missing_flags: tuple[str, ...]
    extra_flags: tuple[str, ...]
    ok: bool

    @property
    def label(self) -> str:
        if self.relation is Relation.UNSOUND:
            return f"{self.relation.value} (soundness bug)"
        if not self.classes:
            return str(self.relation.value)
        return f"{self.relation.value} [{', '.join(self.classes)}]"


def _flags(r: TestResult) -> frozenset[str]:
    return frozenset(f.name for f in r.flags)


def classify(
    test: LitmusTest,
    machine: TestResult,
    axiomatic: TestResult,
    po_rf_acyclic: Callable[[], TestResult],
) -> Comparison:
    """Compare the machine's result with the axiomatic one.

    `po_rf_acyclic` gives the axiomatic result under the same model strengthened with
    `acyclic (po | rf | aso)` (`machine_model()` for `pisa`: `pisa-rc11` when the test has
    no cp.async); it is computed only when the machine misses something. A difference is
    explained (class `load-buffering`) exactly when the machine agrees with that result,
    states and flags, and that result differs from the model's: every missing state or flag
    needs a po | rf | aso cycle, which a machine without promises cannot produce. Anything
    else the machine misses is `unexplained`.
    """
    del test  # the class no longer depends on the program (seq_cst is exact, psc.py)
    o, a = set(machine.states), set(axiomatic.states)
    fo, fa = _flags(machine), _flags(axiomatic)
    missing = tuple(sorted(a - o))
    extra = tuple(sorted(o - a))
    missing_flags = tuple(sorted(fa - fo))
    extra_flags = tuple(sorted(fo - fa))
    if extra or extra_flags:
        return Comparison(
            Relation.UNSOUND, (), missing, extra, missing_flags, extra_flags, ok=False
        )
    if not missing and not missing_flags:
        return Comparison(Relation.EQUAL, (), (), (), (), (), ok=True)
    ref = po_rf_acyclic()
    r, fr = set(ref.states), _flags(ref)
    ok = (o, fo) == (r, fr) and (r != a or fr != fa)
    classes = (LB,) if ok else ("unexplained",)
    return Comparison(Relation.SUBSET, classes, missing, (), missing_flags, (), ok=ok)
