"""Interrupts and budgets inside one process: Ctrl-C/SIGTERM stop the run, a deadline or a
memory limit stops the current test, even while Z3 is running native code.

Python runs a signal handler only between bytecodes, so a handler alone cannot stop a long
Z3 check. A signal's C-level handler also writes to `signal.set_wakeup_fd`; a watcher thread
reads that pipe and calls Z3's interrupt, the check returns at once, and the Python handler
then raises. A deadline works the same way from a watchdog thread: it interrupts Z3 and raises
`OutOfTime` in the test's thread (PyThreadState_SetAsyncExc), which also stops pure-Python
work such as an enumeration.
"""

from __future__ import annotations

import _thread
import functools
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = [
    "Interrupted",
    "OutOfTime",
    "check_interrupted",
    "interrupt_solvers",
    "interruptible",
    "limited",
    "signals_deferred",
]

_SOLVER = "pisa_mm.smt.solver"


class Interrupted(BaseException):
    """The user or the system asked the whole run to stop (SIGINT, SIGTERM)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class OutOfTime(Exception):
    """The current test used up its time budget."""


def interrupt_solvers() -> None:
    """Make a running Z3 call return now; nothing when Z3 was never imported."""
    # getattr: the module may be half-imported (its import runs under a test's budget)
    interrupt = getattr(sys.modules.get(_SOLVER), "interrupt", None)
    if interrupt is not None:
        interrupt()


_watcher_pid: int | None = None


def _ensure_watcher() -> None:
    """One thread per process that turns any caught signal into a solver interrupt."""
    global _watcher_pid
    if _watcher_pid == os.getpid() or threading.current_thread() is not threading.main_thread():
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    def watch() -> None:
        while True:
            try:
                data = os.read(read_fd, 64)
            except OSError:
                return
            if not data:
                return
            interrupt_solvers()

    threading.Thread(target=watch, name="pisa-mm-signal-watcher", daemon=True).start()
    _watcher_pid = os.getpid()


# The signal that interrupted the run, if any. Code between the handler and the command
# may wrap the exception (ctypes turns an exception raised while it converts arguments into
# an ArgumentError); whoever catches a broad Exception asks `check_interrupted` first.
received: int | None = None


# While above 0, a signal's Interrupted waits for the end of `signals_deferred`'s body.
_deferring = 0
_pending: int | None = None


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    global received, _pending
    received = signum
    if _deferring:
        _pending = signum
        return
    if _in_finaliser(frame):
        # Python prints and drops an exception raised in a finaliser (z3's AstRef.__del__
        # runs often), and the run would go on: deliver the signal again a moment later
        _redeliver(_thread.interrupt_main, signum)
        return
    raise Interrupted(signum)


_REDELIVERY = 0.05  # seconds


def _redeliver(deliver: Callable[..., object], *args: object) -> None:
    """Call `deliver(*args)` a moment from now, from a timer: what a finaliser dropped (an
    interrupt, a deadline's OutOfTime) is delivered again outside it."""
    timer = threading.Timer(_REDELIVERY, deliver, args)
    timer.daemon = True
    timer.start()


# Where Python prints and drops what a signal handler raises: a finaliser, and the parent's
# at-fork hook that unblocks the signals held across a fork (a Ctrl-C while `run -j 2` forked
# a worker printed "Exception ignored in: _after_fork" and the run went on to exit 0).
_DROPPING = frozenset({"__del__", "_after_fork"})


def _in_finaliser(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_name in _DROPPING:
            return True
        frame = frame.f_back
    return False


def check_interrupted() -> None:
    """Raise Interrupted again if a signal arrived: the exception being handled may be the
    interrupt in disguise."""
    if received is not None:
        raise Interrupted(received)


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold back the Interrupted of a SIGINT or SIGTERM that arrives during the body, and
    raise it when the body is done: a file write must end whole (its temporary file renamed
    into place or removed), and the body lasts milliseconds. The Interrupted wins over an
    exception the body raised."""
    global _deferring, _pending
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _pending is not None:
            signum, _pending = _pending, None
            raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise `Interrupted` in the main thread, promptly even inside Z3."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global received, _guarding
    received = None
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    _ensure_watcher()
    _hook_forks()
    for s in previous:
        signal.signal(s, _raise_interrupted)
    _guarding = True
    _hook_unraisable()
    try:
        yield
        # a signal whose exception some place dropped (a finaliser) still ends the run
        check_interrupted()
    finally:
        _guarding = False
        _unhook_unraisable()
        for s, handler in previous.items():
            signal.signal(s, handler)


_STOPPING = frozenset({signal.SIGINT, signal.SIGTERM})
_guarding = False  # inside `interruptible`: a forked child must not run its handlers
_fork_mask: set[int | signal.Signals] | None = None  # the forking thread's mask, while it forks
_forks_hooked = False


def _hook_forks() -> None:
    """A worker forked while a Ctrl-C arrives (the pool forks workers at any time) would run
    the command's handler, inherited through fork, before its initializer ignores
    interrupts, and print an `Interrupted` traceback: the two signals are blocked across
    each fork, and the child sets its own handlers before it unblocks them."""
    global _forks_hooked
    if not _forks_hooked:
        os.register_at_fork(
            before=_before_fork, after_in_parent=_after_fork, after_in_child=_after_fork_child
        )
        _forks_hooked = True


def _before_fork() -> None:
    global _fork_mask
    if _guarding:
        _fork_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)


def _after_fork() -> None:
    global _fork_mask
    if _fork_mask is not None:
        mask, _fork_mask = _fork_mask, None
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _after_fork_child() -> None:
    if _fork_mask is not None:
        ignore_interrupts()  # a signal that arrived meanwhile is then ignored or fatal
    _after_fork()


def ignore_interrupts() -> None:
    """For worker processes: the main process stops them; a Ctrl-C (sent to the whole
    process group) must not turn their current test into a failure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the pool stops a worker with SIGTERM: it must die quietly, not raise the parent's
    # Interrupted (inherited through fork) and print its traceback on the shared stderr
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # the wakeup pipe inherited through fork belongs to the parent's watcher
    global _watcher_pid
    _watcher_pid = None
    signal.set_wakeup_fd(-1)


def _address_space() -> int:
    """This process's current virtual memory size in bytes (0 when unknown)."""
    try:
        return int(os.pread(_statm(os.getpid()), 128, 0).split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


@functools.cache
def _statm(pid: int) -> int:
    """/proc/self/statm, kept open: it is read before every test with a memory limit, and
    opening it cost a small test 20 us. By pid: a forked worker must open its own (the
    parent's descriptor names the parent)."""
    return os.open(f"/proc/{pid}/statm", os.O_RDONLY)


@functools.cache
def _async_exc() -> Callable[[int, type[BaseException] | None], None]:
    """`set(thread, exc)`: raise `exc` in `thread` at its next bytecode (None: withdraw a
    pending one). ctypes is imported only when a deadline fires."""
    import ctypes

    set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)

    def set_exc(thread: int, exc: type[BaseException] | None) -> None:
        set_async_exc(thread, ctypes.py_object() if exc is None else exc)

    return set_exc


class _Deadline:
    """Interrupts Z3 and raises OutOfTime in the guarded thread when its time is up: once,
    and again each time Python drops that OutOfTime (see `_on_unraisable`) while still
    active. The watchdog thread calls `fire`."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.start = time.monotonic()
        self.thread = threading.get_ident()
        self.lock = threading.Lock()
        self.active = True
        self.fired = False
        self.outer = _deadlines.get(self.thread)

    def begin(self) -> None:
        _deadlines[self.thread] = self
        _hook_unraisable()
        _watchdog().add(self, self.start + self.seconds)

    def fire(self) -> None:
        with self.lock:
            if not self.active:
                return
            self.fired = True
            _async_exc()(self.thread, OutOfTime)
        interrupt_solvers()

    def redeliver(self) -> None:
        """The OutOfTime landed in a finaliser and was dropped: raise it again soon (not
        from the hook itself, which would drop it too). No-op once stopped."""
        _redeliver(self.fire)

    def stop(self) -> None:
        with self.lock:
            self.active = False
        _watchdog().remove(self)
        if _deadlines.get(self.thread) is self:
            if self.outer is None:
                del _deadlines[self.thread]
            else:
                _deadlines[self.thread] = self.outer
        _unhook_unraisable()
        if self.fired:
            # not yet delivered if the work ended just then: withdraw it, then report it
            _async_exc()(self.thread, None)
        if self.fired or time.monotonic() - self.start >= self.seconds:
            # also when the watchdog had no chance to run: over the budget is over the budget
            raise OutOfTime


class _Watchdog:
    """One thread per process that fires every deadline when it is due.

    A timer thread per test cost a small test a third of its time (a suite of 1,530 small
    tests fell from 921 to 630 tests/s once every test had the default deadline). This
    thread sleeps until the earliest deadline it knows of and is woken only when a new one
    is earlier than that: tests that end before their deadline (nearly all) cost a lock and
    a dict entry, and the thread wakes about once per budget, not once per test (and every
    _MEMORY_POLL seconds while a test with a memory budget runs: once per 50 ms, not once
    per test either).
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.cond = threading.Condition(threading.Lock())
        self.due: dict[_Deadline | _MemoryWatch, float] = {}
        self.wake: float | None = None  # when the thread next wakes; None: when notified
        threading.Thread(target=self.watch, name="pisa-mm-watchdog", daemon=True).start()

    def add(self, deadline: _Deadline | _MemoryWatch, when: float) -> None:
        with self.cond:
            self.due[deadline] = when
            if self.wake is None or when < self.wake:
                self.wake = when
                self.cond.notify()

    def remove(self, deadline: _Deadline | _MemoryWatch) -> None:
        with self.cond:
            self.due.pop(deadline, None)  # the thread may wake for nothing: that is cheap

    def watch(self) -> None:
        while True:
            with self.cond:
                now = time.monotonic()
                ready = [d for d, when in self.due.items() if when <= now]
                for deadline in ready:
                    del self.due[deadline]
                if not ready:
                    self.wake = min(self.due.values(), default=None)
                    self.cond.wait(None if self.wake is None else self.wake - now)
                    continue
            for deadline in ready:  # outside the lock: `fire` waits for the deadline's own
                deadline.fire()  # lock and calls into Z3, and must not hold up other tests


# A memory budget is watched from below as well: past _SOFT of it, the guarded thread gets a
# MemoryError. At the hard limit (RLIMIT_AS) an allocation fails wherever it happens, and one
# failing inside z3's native code can kill the process (SIGSEGV, 1 run in 3 of `query` on a
# thread of 4,000 stores, in the encoding) instead of raising; in a worker the pool reads
# that death as the memory limit, but in the command's own process (query, trace, a run
# without --timeout) it ends the command.
_SOFT = 0.9
_MEMORY_POLL = 0.05  # seconds between two looks at the address space
# The memory watch's looks with nothing armed before it leaves the watchdog's list: a second
# of them between tests (a long-lived process, `serve`, then costs nothing when idle).
_LINGER = 20


class _MemoryWatch:
    """Raises MemoryError in the guarded thread, and interrupts Z3, when the process's
    address space passes the soft limit of the innermost `limited` body that set one. One
    per process, on the watchdog's list while armed (and a second after: `_LINGER`), looked
    at every _MEMORY_POLL seconds; it fires again while the space stays over (a finaliser
    may have dropped the first MemoryError). A body arms and disarms it with a lock and two
    assignments: an entry added to and taken off the watchdog's list for every test woke the
    watchdog for most tests (8% of the CPU of a suite of small tests)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.guarded: tuple[int, int] | None = None  # (thread, soft limit in bytes)
        self.fired = False
        self.listed = False  # on the watchdog's list
        self.idle = 0  # looks in a row with nothing armed

    def arm(self, soft: int) -> tuple[tuple[int, int] | None, bool]:
        """Watch the calling thread against `soft`; what to give `disarm`."""
        with self.lock:
            outer = (self.guarded, self.fired)
            self.guarded, self.fired, self.idle = (threading.get_ident(), soft), False, 0
            listed, self.listed = self.listed, True
        if not listed:
            _watchdog().add(self, time.monotonic() + _MEMORY_POLL)
        return outer

    def disarm(self, outer: tuple[tuple[int, int] | None, bool]) -> None:
        """Stop watching for this body (the enclosing one's watch, `outer`, again); a
        MemoryError fired and not yet delivered is withdrawn and raised here."""
        with self.lock:
            guarded, fired = self.guarded, self.fired
            self.guarded, self.fired = outer
        if fired and guarded is not None:
            _async_exc()(guarded[0], None)
            raise MemoryError

    def fire(self) -> None:
        with self.lock:
            guarded = self.guarded
            over = guarded is not None and _address_space() > guarded[1]
            if guarded is not None and over:
                self.fired = True
                _async_exc()(guarded[0], MemoryError)
            self.idle = 0 if guarded is not None else self.idle + 1
            self.listed = self.idle <= _LINGER
        if over:
            interrupt_solvers()
        if self.listed:
            _watchdog().add(self, time.monotonic() + _MEMORY_POLL)


_the_watch: _MemoryWatch | None = None


def _memory_watch() -> _MemoryWatch:
    """This process's memory watch (a forked worker makes its own, as its watchdog)."""
    global _the_watch
    if _the_watch is None or _the_watch.pid != os.getpid():
        _the_watch = _MemoryWatch()
    return _the_watch


_the_watchdog: _Watchdog | None = None


def _watchdog() -> _Watchdog:
    """This process's watchdog: a forked worker has none (threads do not survive a fork,
    and the parent's lock may have been held at that moment), so it starts its own."""
    global _the_watchdog
    if _the_watchdog is None or _the_watchdog.pid != os.getpid():
        _the_watchdog = _Watchdog()
    return _the_watchdog


# The innermost running deadline of each thread, for `_on_unraisable`.
_deadlines: dict[int, _Deadline] = {}
_previous_hook: Callable[[sys.UnraisableHookArgs], object] | None = None


def _on_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """Python prints and drops an exception raised in a finaliser (z3's AstRef.__del__ runs
    often), so an OutOfTime delivered there would let the test run on past its budget:
    deliver it again. So for an Interrupted that the handler could not see would be dropped
    (`_DROPPING` names the places it knows; a weakref callback such as multiprocessing's
    Finalize, run when the pool's last worker is collected, has no name to look for).
    Anything else goes to the hook this one replaced."""
    deadline = _deadlines.get(threading.get_ident())
    if unraisable.exc_type is OutOfTime and deadline is not None and deadline.active:
        deadline.redeliver()
    elif unraisable.exc_type is Interrupted and received is not None:
        _redeliver(_thread.interrupt_main, received)
    elif _previous_hook is not None:
        _previous_hook(unraisable)


def _hook_unraisable() -> None:
    global _previous_hook
    if sys.unraisablehook is not _on_unraisable:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _on_unraisable


def _unhook_unraisable() -> None:
    """Put the replaced hook back once no deadline runs and no command is being guarded
    against signals: an in-process run leaves no trace."""
    global _previous_hook
    idle = not _deadlines and not _guarding
    if idle and sys.unraisablehook is _on_unraisable and _previous_hook is not None:
        sys.unraisablehook = _previous_hook
        _previous_hook = None


@contextmanager
def limited(timeout: float | None, max_memory: int | None) -> Iterator[None]:
    """Run the body under a time and memory budget: OutOfTime when the time is up,
    MemoryError (Python) or the solver's out-of-memory error when the memory is.

    The memory limit caps the address space at what the process holds now plus
    `max_memory` (RLIMIT_AS, main thread only, since it is process-wide) and sets Z3's own
    limit; both are restored afterwards, so an in-process run leaves no trace.
    """
    main = threading.current_thread() is threading.main_thread()
    old_limit: tuple[int, int] | None = None
    watch: _MemoryWatch | None = None
    outer: tuple[tuple[int, int] | None, bool] = (None, False)
    solver = sys.modules.get(_SOLVER)
    if max_memory is not None:
        if solver is not None:
            solver.set_memory_limit(max_memory)
        if main:
            old_limit = resource.getrlimit(resource.RLIMIT_AS)
            held = _address_space()
            soft = held + max_memory
            hard = old_limit[1]
            if hard == resource.RLIM_INFINITY or soft <= hard:
                resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
            if held:  # (0: the space could not be read)
                watch, soft_watch = _memory_watch(), held + int(max_memory * _SOFT)
    deadline = _Deadline(timeout) if timeout is not None else None
    if main:
        _ensure_watcher()
    try:
        if deadline is not None:
            deadline.begin()
        if watch is not None:
            outer = watch.arm(soft_watch)
        try:
            yield
        finally:
            if deadline is not None:
                deadline.stop()
            if watch is not None:
                watch.disarm(outer)
                watch = None
    finally:
        if deadline is not None and deadline.active:
            deadline.stop()  # skipped above: an OutOfTime landed just before the call
        if watch is not None:
            watch.disarm(outer)  # skipped above (disarming twice restores `outer` twice)
        if old_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, old_limit)
        if max_memory is not None and solver is not None:
            solver.set_memory_limit(None)
