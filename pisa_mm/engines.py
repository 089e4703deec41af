"""The engine registry: engine name -> `run_test(test, structure, model, options)`, lazily."""

from __future__ import annotations

import sys
from collections.abc import Callable

from pisa_mm.errors import PisaMMError
from pisa_mm.hints import TYPE_CHECKING, cast
from pisa_mm.records import record

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import TestResult

__all__ = [
    "BOUNDED_BY",
    "DEFAULT_UNROLL",
    "DISPATCHERS",
    "ENGINES",
    "EXACT_ENGINES",
    "EngineOptions",
    "RunTest",
    "available_engines",
    "default_engine",
    "get_engine",
    "verdict_only_result",
]

DEFAULT_UNROLL = 2


@record
class EngineOptions:
    """What every engine is told besides the test and the model.

    `timeout` (seconds) and `rlimit` (Z3 resource units) budget solver-based engines; an
    engine that runs out reports the verdict Unknown. Other engines ignore them.

    `verdict_only` asks for the condition's verdict alone (`run --verdict-only`, as herd's
    `-speedcheck`): every engine returns a result with `verdict_only` set and no states,
    counts or flags (outcomes/model.py), found as cheaply as it can (smt: one solver check;
    explicit: stop at the first execution that decides; `verdict_only_result` for others).
    """

    unroll: int = DEFAULT_UNROLL
    timeout: float | None = None
    rlimit: int | None = None
    verdict_only: bool = False


def verdict_only_result(result: TestResult) -> TestResult:
    """A full result cut down to what `--verdict-only` reports (for an engine that has no
    cheaper way: it lists everything first, then forgets it)."""
    from pisa_mm.outcomes.condition import witnessed
    from pisa_mm.outcomes.model import Verdict
    from pisa_mm.records import replace

    bounded = result.cut > 0 and not witnessed(result.quantifier, result.verdict is Verdict.OK)
    return replace(
        result,
        states=(),
        positive=0,
        negative=0,
        flags=(),
        cut=1 if bounded else 0,
        verdict_only=True,
    )


RunTest = Callable[["LitmusTest", "EventStructure", "Model", EngineOptions], "TestResult"]

# name -> "module:function"; modules are imported only when the engine is used, so that an
# engine whose dependencies are missing never breaks the others.
ENGINES: dict[str, str] = {
    "auto": "pisa_mm.explicit.auto:run_test",
    "smt": "pisa_mm.smt.engine:run_test",
    "explicit": "pisa_mm.explicit.engine:run_test",
    "operational": "pisa_mm.operational.engine:run_test",
}

# Engines that answer by running another one (whose name the result carries): `auto` runs
# explicit on small candidate spaces and smt on large ones (pisa_mm/explicit/auto.py). They
# are not among `available_engines`, so that `all` and `exact` do not run an engine twice.
DISPATCHERS = frozenset({"auto"})

# Engines that compute exactly the answer of the model they are given. The others (the
# operational machine) compute a subset of the allowed states and flags of the models they
# implement (docs/operational.md): comparisons hold them to that, not to equality. `auto`
# is exact because both engines it picks from are.
EXACT_ENGINES = frozenset({"auto", "smt", "explicit"})

# For each engine outside EXACT_ENGINES, the shipped models whose allowed states and flags
# contain everything it finds (docs/operational.md). The machine implements pisa's C++20
# release sequences, so pisa-rs11 (which synchronises more) is not among them.
BOUNDED_BY: dict[str, frozenset[str]] = {
    "operational": frozenset({"pisa", "pisa-rc11", "pisa-samescope", "pisa-ownspace"}),
}

# The first available engine in this list is the default.
_PREFERENCE = ("auto", "smt", "explicit")


def _import(name: str) -> RunTest | None:
    module_name, _, attr = ENGINES[name].partition(":")
    try:
        __import__(module_name)  # not importlib.import_module: importlib costs start-up time
        module = sys.modules[module_name]
    except ImportError:
        return None
    fn = getattr(module, attr, None)
    return cast("RunTest", fn) if callable(fn) else None


def available_engines() -> tuple[str, ...]:
    """Registered engines (dispatchers aside) that import cleanly, in registry order."""
    return tuple(n for n in ENGINES if n not in DISPATCHERS and _import(n) is not None)


def get_engine(name: str) -> RunTest:
    """The engine called `name`; a PisaMMError when it is unknown or cannot be imported."""
    if name not in ENGINES:
        known = ", ".join(ENGINES)
        raise PisaMMError.at(None, f"unknown engine '{name}' (known: {known})", "engine")
    fn = _import(name)
    if fn is None:
        raise PisaMMError.at(None, f"engine '{name}' is not available in this build", "engine")
    return fn


def default_engine() -> str:
    for name in _PREFERENCE:
        if _import(name) is not None:
            return name
    raise PisaMMError.at(None, "no engine is available", "engine")
