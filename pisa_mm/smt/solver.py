"""The one place that creates z3 solvers and interprets their answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import z3

from pisa_mm.enums import Enum
from pisa_mm.records import record

# Fixed so that runs are reproducible; z3's default seed is fixed too, but state it.
RANDOM_SEED = 0


class _Unmade:
    """The `ctx` of a z3 object whose `__init__` stopped before setting it: no context, so
    its `__del__` frees nothing (it had taken nothing)."""

    def ref(self) -> None:
        return None


def _half_made_objects_finalise_quietly() -> None:
    """A deadline's OutOfTime lands between any two calls, also inside a z3 object's
    `__init__` (the first import of this module runs under a test's budget): its `__del__`
    then read an attribute never set and printed an AttributeError traceback ("Exception
    ignored in: Context.__del__"). Each attribute those finalisers read gets a class-level
    default, seen only by an object that never set its own."""
    module = vars(z3.z3)
    for cls in list(module.values()):
        if not (isinstance(cls, type) and "__del__" in vars(cls)):
            continue
        for name in vars(cls)["__del__"].__code__.co_names:
            if name in module or name == "ref" or hasattr(cls, name):
                continue  # a global, the context's method, or an attribute it always has
            setattr(cls, name, _Unmade() if name == "ctx" and cls is not z3.Context else None)


_half_made_objects_finalise_quietly()

# The thread that does this process's z3 work (`claim`), and the finalisers that other
# threads ran meanwhile, left for it to run.
_owner = threading.get_ident()
_deferred: list[tuple[Callable[[Any], None], Any]] = []


def _owned(finalise: Callable[[Any], None]) -> Callable[[Any], None]:
    # the list and get_ident as defaults: at exit, Python sets the module's globals to None
    # before the last objects are finalised (those deferred then are simply never run)
    def __del__(
        self: Any,
        _ident: Callable[[], int] = threading.get_ident,
        _defer: Callable[[tuple[Callable[[Any], None], Any]], None] = _deferred.append,
    ) -> None:
        if _ident() == _owner:
            finalise(self)
        else:  # kept alive (Python finalises an object once) until the owner runs it
            _defer((finalise, self))

    return __del__


def _objects_finalise_in_the_owner_thread() -> None:
    """A z3 object's `__del__` releases its term or solver on the shared context, and Python
    runs it in whichever thread frees the object. Those in reference cycles (the smt
    encoding makes some) are freed by the cyclic collector, which runs in any thread that
    allocates: a Dask worker's event-loop thread ran about a tenth of them while the next
    test was solving. z3's context is not thread-safe, and ctypes releases the GIL in every
    call, so such a release could run inside the test's check. In any other thread than the
    owner, the finaliser is deferred to the owner's next `claim`."""
    module = vars(z3.z3)
    for cls in list(module.values()):
        if isinstance(cls, type) and "__del__" in vars(cls):
            cls.__del__ = _owned(vars(cls)["__del__"])  # type: ignore[attr-defined]


_objects_finalise_in_the_owner_thread()


def claim() -> None:
    """Make the calling thread the one that does z3 work, and run the finalisers that other
    threads left for it (a Dask worker may run tasks in a thread of its own choosing)."""
    global _owner
    _owner = threading.get_ident()
    while _deferred:
        finalise, obj = _deferred.pop()
        finalise(obj)


# Made now, at import (outside any test's budget): made lazily, it could be half-built when
# a deadline's OutOfTime lands in its __init__, and its __del__ then prints a traceback;
# the deadline's own timer thread, calling `interrupt`, would also race to make a second.
_CONTEXT = z3.main_ctx()


def interrupt() -> None:
    """Make the running (or next) check of the default context return `unknown` now: the
    runner's signal watcher and deadline call this from another thread (Z3_interrupt is
    thread-safe), and the interrupt or timeout is then raised in the checking thread."""
    _CONTEXT.interrupt()


def set_memory_limit(max_bytes: int | None) -> None:
    """Z3's own allocation limit for this process (None: none); past it every z3 call fails
    with an out-of-memory error, which `is_out_of_memory` recognises."""
    z3.set_param("memory_max_size", 0 if max_bytes is None else max(1, max_bytes >> 20))


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is z3 reporting that its memory limit was reached."""
    return isinstance(exc, z3.Z3Exception) and "out of memory" in str(exc)


class Answer(Enum):
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


_ANSWERS = {z3.Z3_L_TRUE: Answer.SAT, z3.Z3_L_FALSE: Answer.UNSAT}


@record
class Budget:
    """Limits for one engine run: wall-clock seconds for the whole run and z3's
    deterministic resource limit per check (what tests use, since it does not depend on
    machine speed)."""

    timeout: float | None = None
    rlimit: int | None = None


class Session:
    """A z3 solver with the run's budget applied; every `check` goes through here.

    `bit_vectors_only` (no IEEE operations anywhere) selects z3's QF_BV solver, which
    bit-blasts to its incremental SAT solver: on these problems (Boolean structure over
    narrow bit-vectors) it is several times faster than the general SMT core. It treats
    floating-point operations as uninterpreted, so problems with any use the general one.
    """

    def __init__(self, budget: Budget, *, bit_vectors_only: bool = False) -> None:
        claim()
        self.budget = budget
        self.deadline = None if budget.timeout is None else time.monotonic() + budget.timeout
        self.solver: Any = z3.SolverFor("QF_BV") if bit_vectors_only else z3.Solver()
        self.solver.set("random_seed", RANDOM_SEED)
        # z3 would catch SIGINT itself and just return `unknown`: a Ctrl-C must stop the run
        # (the runner's signal watcher interrupts the check instead, pisa_mm/runner/guard.py)
        self.solver.set("ctrl_c", False)
        if budget.rlimit is not None:
            self.solver.set("rlimit", budget.rlimit)
        self.checks = 0
        self._ctx = self.solver.ctx.ref()

    def add(self, *constraints: Any) -> None:
        for c in constraints:
            if c is True:
                continue
            self.solver.add(c)

    def check(self, assumptions: Sequence[Any] = ()) -> Answer:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                return Answer.UNKNOWN
            self.solver.set("timeout", max(1, int(left * 1000)))
        self.checks += 1
        # z3py's Solver.check coerces every assumption through BoolSort().cast (sort checks
        # in Python, a third of a check's time when a search assumes a dozen literals per
        # check): every caller passes z3 Booleans, so their asts go to the C API as they are
        asts = (z3.Ast * len(assumptions))(*(a.as_ast() for a in assumptions))
        result = z3.Z3_solver_check_assumptions(
            self._ctx, self.solver.solver, len(assumptions), asts
        )
        return _ANSWERS.get(result, Answer.UNKNOWN)

    def model(self) -> Any:
        return self.solver.model()

    def unsat_core(self) -> Any:
        return self.solver.unsat_core()

    def unsat_core_ids(self) -> list[int]:
        """The ast ids of the last failed check's unsat core (an assumption-driven search
        reads thousands: through the C API, since z3py wraps each element in Python)."""
        ctx = self._ctx
        core = z3.Z3_solver_get_unsat_core(ctx, self.solver.solver)
        z3.Z3_ast_vector_inc_ref(ctx, core)
        try:
            n = z3.Z3_ast_vector_size(ctx, core)
            return [z3.Z3_get_ast_id(ctx, z3.Z3_ast_vector_get(ctx, core, i)) for i in range(n)]
        finally:
            z3.Z3_ast_vector_dec_ref(ctx, core)

    def push(self) -> None:
        self.solver.push()

    def pop(self) -> None:
        self.solver.pop()
