"""The fourth round of issue 14's attacks: every command run as its own process on hostile
input, under a 60 s and 2 GB guard, its result classified.

A result breaks a promise when it is exit 3 (internal error), a traceback on stderr, a hang
past the guard, more than 2 GB resident, an error line without its `[code]`, or what the
attack's own check finds (a wrong or silent answer, a file damaged, leaked or left behind).
`python tests/hostile/round4.py [--only CLASS] [--jobs N]` runs the round and prints the
figures by class; tests/hostile/test_round4.py runs it (slow) and holds a case per break.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pisa_mm.records import record

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"
SB = ROOT / "litmus" / "pisa" / "sb" / "SB+rel.gpu+acq.gpu.litmus"
MODELS = ROOT / "pisa_mm" / "cat" / "models"
GUARD_SECONDS = 60
GUARD_BYTES = 2 << 30
ENTRY = "import sys; from pisa_mm.entry import main; sys.exit(main())"


@record
class Done:
    """What one guarded process did."""

    code: int | None  # None: killed by the guard (a hang)
    stdout: str
    stderr: str
    seconds: float
    max_rss: int  # bytes


Check = Callable[[Done], str | None]  # a broken promise's description, or None


@record
class Attack:
    """One hostile input: the command line, where it runs, and what else it must do."""

    klass: str
    name: str
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    stdin: bytes = b""
    check: Check | None = None
    # run instead of a plain process (signals, servers): returns the Done and a failure
    custom: Callable[[], tuple[Done, str | None]] | None = None
    codes: bool = True  # every error line must end with its [code]


def _limits() -> None:
    # a backstop only: the resident size is measured (Done.max_rss); Z3 and the pools
    # reserve address space they never touch
    resource.setrlimit(resource.RLIMIT_AS, (4 * GUARD_BYTES, 4 * GUARD_BYTES))
    os.setsid()


def environment(extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PISA_MM_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def spawn(
    argv: tuple[str, ...] | list[str],
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    stdin: bytes = b"",
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", ENTRY, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env or environment(),
        cwd=cwd,
        preexec_fn=_limits,
    )


def finish(proc: subprocess.Popen[bytes], start: float, stdin: bytes = b"") -> Done:
    """Wait for `proc` (killing its whole group past the guard), with its resident peak
    (`wait4`: the process's own and its waited-for children's)."""
    import threading

    chunks: dict[str, bytes] = {}

    def drain(name: str, stream: object) -> None:
        chunks[name] = stream.read() if stream is not None else b""  # type: ignore[attr-defined]

    readers = [
        threading.Thread(target=drain, args=(n, getattr(proc, n))) for n in ("stdout", "stderr")
    ]
    for t in readers:
        t.start()
    if proc.stdin is not None:
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except OSError:
            pass
    status = rss = 0
    hung = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            rss = usage.ru_maxrss * 1024
            break
        if time.monotonic() - start > GUARD_SECONDS:
            hung = True
            os.killpg(proc.pid, signal.SIGKILL)
            os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    if hung:  # a grandchild may hold the pipes open: stop it too
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    for t in readers:
        t.join(10)
    proc.returncode = None if hung else os.waitstatus_to_exitcode(status)
    code = proc.returncode
    if code is not None and code < 0:
        code = 128 - code
    return Done(
        code,
        chunks.get("stdout", b"").decode(errors="replace"),
        chunks.get("stderr", b"").decode(errors="replace"),
        time.monotonic() - start,
        rss,
    )


def run(attack: Attack) -> tuple[Done, str | None]:
    if attack.custom is not None:
        return attack.custom()
    start = time.monotonic()
    proc = spawn(attack.argv, environment(attack.env), attack.cwd, attack.stdin)
    done = finish(proc, start, attack.stdin)
    return done, None


def classify(attack: Attack, done: Done, custom: str | None) -> str | None:
    """The broken promise, or None."""
    if done.code is None:
        return "hang"
    if done.code == 3:
        return "exit 3"
    if "Traceback (most recent call last)" in done.stderr:
        return "traceback"
    if done.max_rss > GUARD_BYTES:
        return f"memory {done.max_rss >> 20} MB"
    if attack.codes:
        for line in done.stderr.splitlines() + done.stdout.splitlines():
            if "\u2502" in line:  # a table's cell (crossval's, diff's): its text wraps
                continue
            if (": error: " in line or ": warning: " in line) and not line.rstrip().endswith("]"):
                return f"no [code]: {line[:200]}"
    if custom is not None:
        return custom
    if attack.check is not None:
        return attack.check(done)
    return None


# ---------------------------------------------------------------- checks


def exits(*codes: int, out: str | None = None, err: str | None = None) -> Check:
    def check(done: Done) -> str | None:
        if done.code not in codes:
            return f"exit {done.code}, wanted {codes}: {done.stderr[-300:]}"
        if out is not None and out not in done.stdout:
            return f"stdout lacks {out!r}: {done.stdout[-300:]}"
        if err is not None and err not in done.stderr:
            return f"stderr lacks {err!r}: {done.stderr[-300:]}"
        return None

    return check


def same_as(reference: Callable[[], Done]) -> Check:
    """Exit 0, no stderr, and the stdout of a run without the hostile environment."""

    def check(done: Done) -> str | None:
        want = reference()
        if (done.code, done.stdout) != (want.code, want.stdout) or done.stderr:
            return f"differs from the reference: exit {done.code}, {done.stderr[-300:]!r}"
        return None

    return check


def both(*checks: Check) -> Check:
    def check(done: Done) -> str | None:
        for c in checks:
            failure = c(done)
            if failure is not None:
                return failure
        return None

    return check


_REFERENCES: dict[tuple[str, ...], Done] = {}


def reference(*argv: str) -> Callable[[], Done]:
    def get() -> Done:
        if argv not in _REFERENCES:
            env = environment((("PISA_MM_NO_CACHE", "1"),))
            _REFERENCES[argv] = finish(spawn(argv, env), time.monotonic())
        return _REFERENCES[argv]

    return get


# ---------------------------------------------------------------- hostile inputs


def litmus(body: str, cond: str = "exists (true)", decls: str = "", meta: str = "") -> str:
    return f"PISA T\n{meta}{{\n  .global .32b @x = 0;\n  .global .64b @p = 0;\n{decls}}}\n{body}\n{cond}\n"  # noqa: E501


def _iadds(n: int) -> str:
    chain = "\n".join(f"  iadd.32b %r{i + 1}, %r{i}, 1;" for i in range(1, n + 1))
    return (
        "P0 @ wg 0 {\n  st.global.32b [@x], 1;\n}\n"
        f"P1 @ wg 1 {{\n  ld.global.32b %r1, [@x];\n{chain}\n}}"
    )


BIG = "9" * 5000
WILD = {
    "null-register": "P0 @ wg 0 {\n  mov.64b %r0, 0;\n  st.global.32b [%r0], 1;\n}",
    "published-null": "P0 @ wg 0 {\n  ld.global.64b %r0, [@p];\n  ld.global.32b %r1, [%r0];\n}",
    "past-end": "P0 @ wg 0 {\n  addrof.64b %r0, @x;\n  iadd.64b %r0, %r0, 4096;\n"
    "  ld.global.32b %r1, [%r0];\n}",
    "wrapped": "P0 @ wg 0 {\n  addrof.64b %r0, @x;\n  iadd.64b %r0, %r0, 0xFFFFFFFFFFFFFFFC;\n"
    "  st.global.32b [%r0], 1;\n}",
    "atomic-null": "P0 @ wg 0 {\n  mov.64b %r0, 0;\n  iatom.global.relaxed.add.32b %r1, [%r0], 1;\n}",  # noqa: E501
    "generic-null": "P0 @ wg 0 {\n  ld.global.64b %r0, [@p];\n  ld.generic.32b %r1, [%r0];\n}",
}
TEXTS: dict[str, tuple[str, bool]] = {
    # name -> (text, whether it is a valid test)
    "wild-" + k: (litmus(v), True)
    for k, v in WILD.items()
}
TEXTS.update(
    {
        "big-value": (litmus("P0 @ wg 0 {\n  st.global.32b [@x], " + BIG + ";\n}"), False),
        "big-init": (
            litmus(
                "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}", decls=f"  .global .32b @y = {BIG};\n"
            ),
            False,
        ),
        "big-size": (
            litmus(
                "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}", decls=f"  .global .32b @y[{BIG}];\n"
            ),
            False,
        ),
        "big-offset": (litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x + " + BIG + "];\n}"), False),
        "big-thread": (litmus(f"P{BIG} @ wg 0 {{\n  ld.global.32b %r0, [@x];\n}}"), False),
        "big-wg": (litmus(f"P0 @ wg {BIG} {{\n  ld.global.32b %r0, [@x];\n}}"), False),
        "big-wgN": (
            litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}", cond=f"exists (wg{BIG}:@x == 0)"),
            False,
        ),
        "big-range": (litmus("P0 @ wg 0 {\n  .reg .32b %r<0~" + BIG + ">;\n  ret;\n}"), False),
        "big-cond": (
            litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}", cond=f"exists (P0:%r0 == {BIG})"),
            False,
        ),
        "unicode-unroll": (litmus("P0 @ wg 0 {\n  ret;\n}", meta="unroll = \u0663\n"), False),
        "fullwidth-unroll": (litmus("P0 @ wg 0 {\n  ret;\n}", meta="unroll = \uff13\n"), False),
        "negative-unroll": (litmus("P0 @ wg 0 {\n  ret;\n}", meta="unroll = -1\n"), False),
        "repeated-unroll": (
            litmus("P0 @ wg 0 {\n  ret;\n}", meta="unroll = 1\nunroll = 2\n"),
            False,
        ),
        "huge-unroll": (
            litmus(
                "P0 @ wg 0 {\nL:\n  ld.global.32b %r0, [@x];\n  ucmp.eq.32b %p0, %r0, 0;\n"
                "  goto.cond %p0, L;\n}",
                meta="unroll = 100000000\n",
            ),
            True,
        ),
        "1000-atoms": (
            litmus(
                "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}",
                cond="exists (" + " /\\ ".join(["P0:%r0 == 0"] * 1000) + ")",
            ),
            True,
        ),
        "5000-not": (
            litmus(
                "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}",
                cond="exists (" + "~" * 5000 + "P0:%r0 == 0)",
            ),
            True,
        ),
        "1000-parens": (
            litmus(
                "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}",
                cond="exists " + "(" * 1000 + "P0:%r0 == 0" + ")" * 1000,
            ),
            True,  # parentheses around one atom nest nothing
        ),
        "2000-iadds": (litmus(_iadds(2000), cond="exists (P1:%r2001 == 2001)"), True),
        "bom": ("\ufeff" + litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}"), True),
        "nul": (litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\x00\n}"), False),
        "crlf": (
            litmus("P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}").replace("\n", "\r\n"),
            True,
        ),
    }
)


def _files(work: Path) -> dict[str, Path]:
    out = {}
    for name, (text, _) in TEXTS.items():
        path = work / "texts" / f"{name}.litmus"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        out[name] = path
    latin = work / "texts" / "latin1.litmus"
    latin.write_bytes(MP.read_bytes().replace(b"PISA MP", b"PISA MP\xe9"))
    out["latin1"] = latin
    fifo = work / "texts" / "fifo.litmus"
    os.mkfifo(fifo)
    out["fifo"] = fifo
    out["dev-zero"] = Path("/dev/zero")
    out["directory-as-file"] = work / "texts"
    return out


COMMANDS: dict[str, tuple[str, ...]] = {
    "parse": ("parse",),
    "parse-json": ("parse", "--json"),
    "run": ("run", "--no-time"),
    "run-smt": ("run", "--no-time", "--engine", "smt"),
    "run-explicit": ("run", "--no-time", "--engine", "explicit", "-j", "1"),
    "run-operational": ("run", "--no-time", "--engine", "operational"),
    "query": ("query", "--outcome", "true"),
    "trace": ("trace", "--outcome", "true"),
    "crossval": ("crossval",),
    "diff": ("diff", "pisa", "pisa-rc11"),
}


def grid(work: Path) -> Iterator[Attack]:
    """Every hostile test text through every command (classes 1, 2, 4)."""
    files = _files(work)
    for tname, path in files.items():
        valid = TEXTS.get(tname, ("", False))[1]
        for cname, argv in COMMANDS.items():
            klass = "wild" if tname.startswith("wild-") else "limits"
            check: Check | None = None
            if tname.startswith("wild-") and cname in (
                "run",
                "run-smt",
                "run-explicit",
                "run-operational",
            ):
                check = exits(0, out="Flag invalid-address")
            elif not valid and cname != "diff":
                check = exits(1, 2, 4)
            timeout = ("--timeout", "20") if cname not in ("parse", "parse-json") else ()
            yield Attack(klass, f"{tname} {cname}", (*argv, *timeout, str(path)), check=check)


OUTCOMES = {
    "big": f"P1:%r0 == {BIG}",
    "unicode": "P1:%r0 == \u0663",
    "fullwidth": "P\uff11:%r0 == 1",
    "parens": "(" * 1000 + "P1:%r0 == 1" + ")" * 1000,
    "nots": "~" * 5000 + "P1:%r0 == 1",
    "atoms": " /\\ ".join(["P1:%r0 == 1"] * 1000),
    "alternating": "(P1:%r0 == 1 /\\ " * 200 + "true" + " \\/ false)" * 200,
    "big-thread": f"P{BIG}:%r0 == 1",
    "big-wg": f"wg{BIG}:@x == 1",
    "nul": "P1:%r0 == 1\x01",
    "empty": "",
    "bom": "\ufeffP1:%r0 == 1",
}


def outcomes(work: Path) -> Iterator[Attack]:
    """Hostile `--outcome`s, `--traceback` on either side, non-regular inputs elsewhere."""
    for oname, outcome in OUTCOMES.items():
        for cmd in ("query", "trace"):
            yield Attack(
                "limits",
                f"{cmd} --outcome {oname}",
                (cmd, str(MP), "--outcome", outcome, "--timeout", "20"),
                check=exits(0, 1, 2, 4),
            )
    for argv in (
        ("--traceback", "run", "/dev/zero"),
        ("run", "--traceback", "/dev/zero"),
        ("run", "/dev/zero", "--traceback"),
        ("parse", "/dev/zero", "--traceback"),
    ):
        yield Attack("limits", " ".join(argv[:3]), argv, check=exits(1, 2))
    fifo = _fifo(work / "input-fifo.litmus")
    for argv in (
        ("promote", fifo),
        ("promote", "/dev/zero"),
        ("serve", "--suite", "/dev/zero"),
        ("run", "--model", fifo, str(MP)),
        ("run", "--model", "/dev/zero", str(MP)),
        ("run", str(MP), "--baseline", fifo),
        ("run", str(MP), "--baseline", "/dev/zero"),
        ("diff", fifo, "pisa", str(MP)),
        ("crossval", "--model", "/dev/zero", str(MP)),
        ("query", fifo, "--outcome", "true"),
        ("trace", "/dev/zero", "--outcome", "true"),
    ):
        yield Attack(
            "limits", f"non-regular {' '.join(a[-20:] for a in argv)}", argv, check=exits(1, 2)
        )
    expected = work / "exp"
    expected.mkdir(exist_ok=True)
    for ename, text in {
        "big-states": "Test T Allowed\nStates " + BIG + "\n",
        "unicode-states": "Test T Allowed\nStates \u0663\n",
        "bom": "\ufeffTest MP+rel.gpu+acq.gpu Allowed\nStates 0\nNo\n",
        "nul": "Test T\x00 Allowed\n",
        "deep": "Test T Allowed\nCondition " + "(" * 1000 + "\n",
    }.items():
        d = expected / ename
        d.mkdir(exist_ok=True)
        shutil.copy(MP, d / "T.litmus")
        (d / "T.litmus.expected").write_text(text, "utf-8")
        yield Attack(
            "limits", f".expected {ename}", ("run", str(d / "T.litmus")), check=exits(0, 1, 2)
        )
        yield Attack(
            "files",
            f"promote over .expected {ename}",
            ("promote", str(d / "T.litmus")),
            check=_promoted(d / "T.litmus.expected"),
        )


def _promoted(path: Path) -> Check:
    def check(done: Done) -> str | None:
        text = path.read_text("utf-8", errors="replace")
        if done.code == 0 and not text.startswith("Test MP+rel.gpu+acq.gpu "):
            return f"exit 0 and {path.name} holds {text[:40]!r}"
        return None

    return check


def budgets(work: Path) -> Iterator[Attack]:
    """nan, inf and absurd budgets are usage errors; a tiny memory budget is Unknown."""
    bad = [
        "nan",
        "inf",
        "-inf",
        "-1",
        "0",
        "1e400",
        "1e-400",
        "abc",
        "",
        "0x10",
        "NaN",
        "+nan",
        "9" * 5000,
        "\u0661",
        "1_0",
    ]
    commands = {
        "run": ("run", str(MP)),
        "query": ("query", str(MP), "--outcome", "true"),
        "trace": ("trace", str(MP), "--outcome", "true"),
        "crossval": ("crossval", str(MP)),
        "diff": ("diff", "pisa", "pisa-rc11", str(MP)),
        "promote": ("promote", str(work / "ro-promote" / "MP.litmus")),
    }
    (work / "ro-promote").mkdir(exist_ok=True)
    shutil.copy(MP, work / "ro-promote" / "MP.litmus")
    for cname, argv in commands.items():
        for value in bad:
            # "0", "1e-400" may be read as "no time at all": any coded answer but a success
            want = exits(2) if value not in ("0", "1e-400") else exits(2, 4)
            if value in ("\u0661", "1_0"):  # Python's float(): 1 and 10 (options, not formats)
                want = exits(0, 2)
            yield Attack(
                "budgets", f"{cname} --timeout {value!r}", (*argv, "--timeout", value), check=want
            )
        for value in ["nan", "-1", "1Q", "9" * 5000, "", "1e400", "0x", "1.5.5G"]:
            yield Attack(
                "budgets",
                f"{cname} --max-memory {value!r}",
                (*argv, "--max-memory", value),
                check=exits(2),
            )
    big = files_big(work)
    for engine in ("explicit", "smt", "operational"):
        yield Attack(
            "budgets",
            f"timeout bounds {engine}",
            ("run", "--engine", engine, "--timeout", "2", str(big)),
            check=both(exits(0, 4), _quick(15)),
        )
        yield Attack(
            "budgets",
            f"max-memory {engine}",
            ("run", "--engine", engine, "--max-memory", "64M", "--timeout", "30", str(big)),
            check=exits(0, 4),
        )
    for cname, argv in (
        ("query", ("query", "--outcome", "true")),
        ("trace", ("trace", "--outcome", "true")),
        ("crossval", ("crossval",)),
        ("diff", ("diff", "pisa", "pisa-rc11")),
    ):
        yield Attack(
            "budgets",
            f"timeout bounds {cname}",
            (*argv, "--timeout", "2", str(big)),
            check=_quick(15),
        )


def _quick(seconds: float) -> Check:
    def check(done: Done) -> str | None:
        return None if done.seconds < seconds else f"took {done.seconds:.1f} s"

    return check


def files_big(work: Path) -> Path:
    """A test too big to finish in 2 s on any engine."""
    path = work / "big.litmus"
    if not path.exists():
        threads = []
        for t in range(6):
            ops = "".join(
                f"  st.global.32b [@x], {t * 10 + i + 1};\n  ld.global.32b %r{i}, [@x];\n"
                for i in range(4)
            )
            threads.append(f"P{t} @ wg {t} {{\n{ops}}}")
        path.write_text(litmus("\n".join(threads)))
    return path


def unknown(work: Path) -> Iterator[Attack]:
    """Unknown is never success (class 4)."""
    big = files_big(work)
    for argv in (
        ("run", "--timeout", "0.5", str(big)),
        ("run", "--max-memory", "40M", "--engine", "smt", str(big)),
        ("query", "--timeout", "0.5", str(big), "--outcome", "true"),
        ("crossval", "--timeout", "0.5", str(big)),
        ("trace", "--timeout", "0.5", str(big), "--outcome", "true"),
    ):
        yield Attack("unknown", " ".join(argv[:3]), argv, check=_not_success)
    yield Attack(
        "unknown",
        "diff reports unknown",
        ("diff", "--timeout", "0.5", "pisa", "pisa-rc11", str(big)),
        check=_not_success,
    )


def _not_success(done: Done) -> str | None:
    if done.code == 0 and "Unknown" not in done.stdout and "unknown" not in done.stdout:
        return None  # it finished in time after all
    return "Unknown with exit 0" if done.code == 0 else None


# ---------------------------------------------------------------- the cache


def _warm(work: Path) -> Path:
    warm = work / "warm"
    if not warm.exists():
        env = environment((("XDG_CACHE_HOME", str(warm)),))
        finish(spawn(("run", "--no-time", str(MP)), env), time.monotonic())
        finish(spawn(("run", "--no-time", "--engine", "smt", str(MP)), env), time.monotonic())
    return warm


def _damage(entry: Path, how: str, other: Path | None) -> None:
    data = entry.read_bytes()
    entry.unlink()
    if how == "empty":
        entry.write_bytes(b"")
    elif how == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "seal-only":
        entry.write_bytes(data[:16])
    elif how == "one-byte":
        entry.write_bytes(data[:1])
    elif how.startswith("flip-"):
        at = int(how[5:]) * len(data) // 100
        flipped = bytearray(data)
        flipped[min(at, len(data) - 1)] ^= 0x04
        entry.write_bytes(bytes(flipped))
    elif how == "zeros":
        entry.write_bytes(bytes(len(data)))
    elif how == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    elif how == "appended":
        entry.write_bytes(data + b"\0" * 1000)
    elif how == "swapped" and other is not None:
        entry.write_bytes(other.read_bytes())
    elif how == "huge":  # sparse: 65 MiB of zeros
        with entry.open("wb") as fh:
            fh.truncate(65 << 20)
    elif how == "to-etc-passwd":
        entry.symlink_to("/etc/passwd")
    elif how == "to-dev-zero":
        entry.symlink_to("/dev/zero")
    elif how == "to-dev-null":
        entry.symlink_to("/dev/null")
    elif how == "dangling":
        entry.symlink_to(entry.parent / "missing")
    elif how == "self-link":
        entry.symlink_to(entry.name)
    elif how == "fifo":
        os.mkfifo(entry)
    elif how == "directory":
        entry.mkdir()
    elif how == "unreadable":
        entry.write_bytes(data)
        entry.chmod(0)


DAMAGES = [
    "empty",
    "truncated",
    "seal-only",
    "one-byte",
    "flip-0",
    "flip-1",
    "flip-10",
    "flip-50",
    "flip-90",
    "flip-99",
    "zeros",
    "garbage",
    "appended",
    "swapped",
    "huge",
    "to-etc-passwd",
    "to-dev-zero",
    "to-dev-null",
    "dangling",
    "self-link",
    "fifo",
    "directory",
    "unreadable",
]


def cache(work: Path) -> Iterator[Attack]:
    warm = _warm(work)
    entries = sorted(p.name for p in (warm / "pisa-mm").iterdir())
    mp_ref = reference("run", "--no-time", str(MP))
    smt_ref = reference("run", "--no-time", "--engine", "smt", str(MP))
    for i, name in enumerate(entries):
        for how in DAMAGES:
            case = work / "cache" / f"{i}-{how}"
            if case.exists():
                shutil.rmtree(case)
            shutil.copytree(warm, case, symlinks=True)
            entry = case / "pisa-mm" / name
            other = case / "pisa-mm" / entries[(i + 1) % len(entries)]
            if name.startswith("cat-"):  # lark's tables are read only when a model is parsed
                for model in (case / "pisa-mm").glob("model-*"):
                    model.unlink()
            _damage(entry, how, other)
            env = (("XDG_CACHE_HOME", str(case)),)
            argv = ("run", "--no-time", str(MP))
            yield Attack(
                "cache", f"{name.split('-')[0]} {how}", argv, env=env, check=same_as(mp_ref)
            )
            if how in ("flip-50", "swapped", "truncated"):
                yield Attack(
                    "cache",
                    f"{name.split('-')[0]} {how} smt",
                    ("run", "--no-time", "--engine", "smt", str(MP)),
                    env=env,
                    check=same_as(smt_ref),
                )
    # the cache directory itself in odd places
    places: dict[str, Callable[[Path], str]] = {
        "a-file": lambda d: _touch(d / "file"),
        "dev-null": lambda d: "/dev/null",
        "a-fifo": lambda d: _fifo(d / "fifo"),
        "read-only": lambda d: _mode(d / "ro", 0o500),
        "pisa-mm-a-file": lambda d: _touch_in(d / "pf", "pisa-mm"),
        "pisa-mm-a-fifo": lambda d: _fifo_in(d / "pq", "pisa-mm"),
        "pisa-mm-to-dev-null": lambda d: _link_in(d / "pn", "pisa-mm", "/dev/null"),
        "pisa-mm-dangling": lambda d: _link_in(d / "pd", "pisa-mm", str(d / "nowhere")),
        "relative": lambda d: "relative-cache",
        "proc": lambda d: "/proc",
        "nul-free-long": lambda d: str(d / ("x" * 250) / ("y" * 250)),
        "too-long": lambda d: str(d / "/".join(["z" * 255] * 20)),
    }
    for pname, make in places.items():
        target = work / "places" / pname
        target.mkdir(parents=True, exist_ok=True)
        where = make(target)
        yield Attack(
            "cache",
            f"XDG_CACHE_HOME {pname}",
            ("run", "--no-time", str(MP)),
            env=(("XDG_CACHE_HOME", where),),
            cwd=str(target),
            check=same_as(mp_ref),
        )
    yield Attack(
        "cache",
        "HOME unset and no XDG",
        ("run", "--no-time", str(MP)),
        env=(("HOME", "/nonexistent/home"), ("XDG_CACHE_HOME", "")),
        check=same_as(mp_ref),
    )
    yield Attack(
        "cache",
        "a shared cache dir others can write",
        ("run", "--no-time", str(MP)),
        custom=lambda: _shared_cache(work),
    )
    for n in (4, 8):
        yield Attack(
            "cache",
            f"{n} concurrent writers",
            ("run",),
            custom=lambda n=n: _concurrent(work, n, mp_ref),
        )


def _touch(p: Path) -> str:
    p.write_text("x")
    return str(p)


def _touch_in(d: Path, name: str) -> str:
    d.mkdir(exist_ok=True)
    (d / name).write_text("x")
    return str(d)


def _fifo(p: Path) -> str:
    if not p.exists():
        os.mkfifo(p)
    return str(p)


def _fifo_in(d: Path, name: str) -> str:
    d.mkdir(exist_ok=True)
    _fifo(d / name)
    return str(d)


def _link_in(d: Path, name: str, to: str) -> str:
    d.mkdir(exist_ok=True)
    if not (d / name).is_symlink():
        (d / name).symlink_to(to)
    return str(d)


def _mode(p: Path, mode: int) -> str:
    p.mkdir(exist_ok=True)
    p.chmod(mode)
    return str(p)


PLANTED = "import os; os.close(os.open({path!r}, os.O_CREAT | os.O_WRONLY))"


def _shared_cache(work: Path) -> tuple[Done, str | None]:
    """A cache directory that another user can write (made 0777 by someone else, e.g. under
    /tmp): a pickle planted there is code that pisa-mm would run, so the cache is not used."""
    base = work / "shared"
    (base / "pisa-mm").mkdir(parents=True, exist_ok=True)
    os.chmod(base / "pisa-mm", 0o777)
    env = environment((("XDG_CACHE_HOME", str(base)),))
    start = time.monotonic()
    done = finish(spawn(("run", "--no-time", str(MP)), env), start)
    written = sorted(p.name for p in (base / "pisa-mm").iterdir())
    return done, (f"used a world-writable cache dir: {written}" if written else None)


def _concurrent(work: Path, n: int, ref: Callable[[], Done]) -> tuple[Done, str | None]:
    base = work / f"concurrent-{n}"
    shutil.rmtree(base, ignore_errors=True)
    env = environment((("XDG_CACHE_HOME", str(base)),))
    start = time.monotonic()
    procs = [spawn(("run", "--no-time", str(MP)), env) for _ in range(n)]
    dones = [finish(p, start) for p in procs]
    after = finish(spawn(("run", "--no-time", str(MP)), env), time.monotonic())
    want = ref()
    for d in [*dones, after]:
        if d.code is None or d.code == 3 or "Traceback" in d.stderr:
            return d, None
        if (d.code, d.stdout, d.stderr) != (0, want.stdout, ""):
            return d, f"a concurrent run differs: {d.code} {d.stderr[-300:]!r}"
    leftovers = [p.name for p in (base / "pisa-mm").iterdir() if p.name.startswith(".")]
    return dones[0], (f"temporary files left: {leftovers}" if leftovers else None)


# ---------------------------------------------------------------- the finder


def finder(work: Path) -> Iterator[Attack]:
    """pisa_mm's own module finder on a copy of the package whose bytecode is damaged."""
    mp_ref = reference("run", "--no-time", str(MP))
    victims = [
        "pisa_mm/cli.py",
        "pisa_mm/records.py",
        "pisa_mm/litmus/parser.py",
        "pisa_mm/commands/__init__.py",
    ]
    hows = [
        "truncated-8",
        "header-only",
        "bad-magic",
        "hash-flags",
        "stale-mtime",
        "stale-size",
        "garbage-body",
        "empty",
        "directory",
        "dangling",
        "not-code",
        "source-gone-dir",
    ]
    for victim in victims:
        for how in hows:
            yield Attack(
                "finder",
                f"{victim} {how}",
                ("run",),
                custom=lambda v=victim, h=how: _finder_case(work, v, h, mp_ref),
            )
    for flag in (("-O",), ("-X", "pycache_prefix=" + str(work / "prefix"))):
        yield Attack(
            "finder",
            f"python {' '.join(flag)}",
            ("run",),
            custom=lambda f=flag: _python_flag(f, mp_ref),
        )


def _package_copy(work: Path, tag: str) -> Path:
    base = work / "pkgs" / tag
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    shutil.copytree(
        ROOT / "pisa_mm",
        base / "pisa_mm",
        symlinks=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(base / "pisa_mm")], check=True)
    return base


def _finder_case(
    work: Path, victim: str, how: str, ref: Callable[[], Done]
) -> tuple[Done, str | None]:
    import marshal
    from importlib.util import cache_from_source

    base = _package_copy(work, f"{victim.replace('/', '_')}-{how}")
    source = base / victim
    pyc = Path(cache_from_source(str(source)))
    data = pyc.read_bytes()
    pyc.unlink()
    if how == "truncated-8":
        pyc.write_bytes(data[:8])
    elif how == "header-only":
        pyc.write_bytes(data[:16])
    elif how == "bad-magic":
        pyc.write_bytes(b"\0\0\r\n" + data[4:])
    elif how == "hash-flags":
        pyc.write_bytes(data[:4] + b"\1\0\0\0" + data[8:])
    elif how == "stale-mtime":
        pyc.write_bytes(data[:8] + bytes(4) + data[12:])
    elif how == "stale-size":
        pyc.write_bytes(data[:12] + b"\xff\xff\xff\x7f" + data[16:])
    elif how == "garbage-body":
        pyc.write_bytes(data[:16] + os.urandom(len(data) - 16))
    elif how == "empty":
        pyc.write_bytes(b"")
    elif how == "directory":
        pyc.mkdir()
    elif how == "dangling":
        pyc.symlink_to(pyc.parent / "missing.pyc")
    elif how == "not-code":
        pyc.write_bytes(data[:16] + marshal.dumps(["not", "code"]))
    elif how == "other-module":  # the bytecode of another module under this one's header
        other = Path(cache_from_source(str(base / "pisa_mm" / "errors.py"))).read_bytes()
        pyc.write_bytes(data[:16] + other[16:])
    elif how == "source-gone-dir":  # a package directory of the same name beside the module
        (source.parent / source.stem).mkdir()
        pyc.write_bytes(data)
    env = environment(
        (("PYTHONPATH", str(base)), ("PISA_MM_NO_CACHE", "1"), ("PYTHONDONTWRITEBYTECODE", "1"))
    )
    start = time.monotonic()
    done = finish(spawn(("run", "--no-time", str(MP)), env, cwd=str(base)), start)
    shutil.rmtree(base, ignore_errors=True)
    if how == "other-module":
        # CPython's own loader runs such bytecode too: what a process that trusts its
        # installed files does; only a crash would be pisa-mm's
        return done, None
    want = ref()
    if (done.code, done.stdout) != (0, want.stdout):
        return done, f"differs: exit {done.code} {done.stderr[-300:]!r}"
    return done, None


def _python_flag(flag: tuple[str, ...], ref: Callable[[], Done]) -> tuple[Done, str | None]:
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, *flag, "-c", ENTRY, "run", "--no-time", str(MP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(),
        preexec_fn=_limits,
    )
    done = finish(proc, start)
    want = ref()
    return done, None if done.stdout == want.stdout else "differs"


# ---------------------------------------------------------------- signals and files


def files_slow(work: Path) -> Path:
    """A test that no engine finishes within a few seconds, however fast the machine: IRIW
    with 18 work-items, 2^18 final states (`big` now takes 0.6 s, so a signal after it
    interrupted nothing)."""
    path = work / "slow.litmus"
    if not path.exists():
        spec = importlib.util.spec_from_file_location("families", ROOT / "bench" / "families.py")
        assert spec is not None and spec.loader is not None
        families = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(families)
        path.write_text(families.iriw(18))
    return path


def signals(work: Path) -> Iterator[Attack]:
    big, slow = files_big(work), files_slow(work)
    commands = {
        "run": ("run", "-j", "1", str(slow)),
        "run-j2": ("run", "-j", "2", str(big), str(slow), str(big), str(slow)),
        "run-smt": ("run", "--engine", "smt", str(slow)),
        "query": ("query", str(big), "--outcome", "true"),
        "trace": ("trace", str(big), "--outcome", "true"),
        "crossval": ("crossval", str(slow)),
        "diff": ("diff", "pisa", "pisa-rc11", str(slow)),
        "promote": ("promote", "PROMOTE"),
    }
    for cname, argv in commands.items():
        for sig in (signal.SIGINT, signal.SIGTERM):
            for delay in (0.6, 1.5):
                yield Attack(
                    "signals",
                    f"{cname} {sig.name} after {delay}s",
                    argv,
                    custom=lambda a=argv, s=sig, d=delay, c=cname: _interrupt(work, c, a, s, d),
                )
    # The window where the last test is done and the pool is being stopped: a signal there
    # once printed an ignored Interrupted and the run exited 0. Times are fractions of an
    # unsignalled run, measured when the first of these attacks runs.
    ending = ("run", "-j", "2", str(big), str(big))
    took: list[float] = []
    for k in range(16):
        yield Attack(
            "signals",
            f"run-j2 at the pool's end #{k}",
            ending,
            custom=lambda k=k: _interrupt(
                work,
                f"ending{k}",
                ending,
                (signal.SIGINT, signal.SIGTERM)[k % 2],
                _run_time(ending, took) * (0.8 + 0.02 * k),
            ),
        )
    for i in range(30):  # the done-when's 30 interrupted promote runs (over a copy each)
        sig = (signal.SIGINT, signal.SIGTERM)[i % 2]
        yield Attack(
            "signals",
            f"promote #{i} {sig.name}",
            ("promote", "PROMOTE"),
            custom=lambda i=i, s=sig: _interrupt(
                work, f"promote{i}", ("promote", "PROMOTE"), s, 0.3 + 0.04 * i
            ),
        )


def _run_time(argv: tuple[str, ...], took: list[float]) -> float:
    """How long `argv` takes without a signal (measured once, kept in `took`)."""
    if not took:
        start = time.monotonic()
        finish(spawn(argv), start)
        took.append(time.monotonic() - start)
    return took[0]


def _interrupt(
    work: Path, cname: str, argv: tuple[str, ...], sig: int, delay: float
) -> tuple[Done, str | None]:
    suite = work / f"promote-{cname}-{sig}-{delay}"
    promoting = "PROMOTE" in argv
    if promoting:
        shutil.rmtree(suite, ignore_errors=True)
        for part in ("mp", "sb", "lb", "coherence"):  # 35 tests, 0.7 s
            shutil.copytree(ROOT / "litmus" / "pisa" / part, suite / part)
        # then one that takes minutes (sorted last): every run is stopped, some of them
        # between two tests, the others inside the slow one's solver or enumeration
        shutil.copy(files_slow(work), suite / "zz-slow.litmus")
        for old in suite.glob("*.expected"):
            old.write_text("Test OLD Allowed\nStates 0\nNo\n")
        argv = ("promote", "-j", "1", str(suite))
    start = time.monotonic()
    proc = spawn(argv)
    time.sleep(delay)
    sent = time.monotonic()
    os.kill(proc.pid, sig)  # (not Popen.send_signal: its poll() would reap the process)
    done = finish(proc, start)
    if done.code is None:
        return done, None
    stopped = time.monotonic() - sent
    failure = None
    if proc.returncode not in (0, 128 + sig) and done.code != 128 + sig:
        failure = f"exit {done.code} after {signal.Signals(sig).name}"
    elif done.code == 128 + sig and "interrupted" not in done.stderr:
        failure = "no `interrupted`"
    elif stopped > 1.5:  # 1 s, and the guard's own scheduling on a loaded machine
        failure = f"stopped {stopped:.2f} s after the signal"
    if promoting and failure is None and done.code == 0:
        failure = "promote ended before the signal: nothing was interrupted"
    if promoting:
        for p in suite.rglob("*"):
            if p.name.startswith(".") or p.name.endswith(".tmp"):
                failure = f"left {p.name}"
            elif p.suffix == ".expected":
                text = p.read_text()
                if not text.startswith("Test ") or not text.endswith("\n"):
                    failure = f"damaged {p.name}: {text[:60]!r}"
    return done, failure


def outputs(work: Path) -> Iterator[Attack]:
    """Written files: never over an input, never through a device or FIFO; stdout errors."""
    test = work / "outs" / "T.litmus"
    test.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(MP, test)
    model = work / "outs" / "m.cat"
    model.write_text('"m"\ninclude "pisa.cat"\n')
    over = {"the test": str(test), "the model": str(model)}
    writers = {
        "run --json": ("run", "--model", str(model), str(test), "--json"),
        "run --junit": ("run", "--model", str(model), str(test), "--junit"),
        "query --dot": ("query", "--model", str(model), str(test), "--outcome", "true", "--dot"),
        "diff --json": ("diff", str(model), "pisa", str(test), "--json"),
    }
    for wname, argv in writers.items():
        for oname, target in over.items():
            yield Attack(
                "files", f"{wname} over {oname}", (*argv, target), check=_unchanged([test, model])
            )
        for dev in ("/dev/full", "/dev/null", str(_fifo(work / "outs" / "fifo"))):
            yield Attack("files", f"{wname} to {dev}", (*argv, dev), check=_devices_intact)
    for cmd in (
        ("run", str(MP)),
        ("parse", str(MP)),
        ("gen", "MP"),
        ("--help",),
        ("crossval", str(MP)),
        ("query", str(MP), "--outcome", "true"),
    ):
        yield Attack(
            "files", f"{cmd[0]} stdout /dev/full", cmd, custom=lambda c=cmd: _stdout_full(c)
        )


def _unchanged(paths: list[Path]) -> Check:
    before = {p: p.read_bytes() for p in paths}

    def check(done: Done) -> str | None:
        for p, data in before.items():
            if not p.is_file() or p.read_bytes() != data:
                p.write_bytes(data)
                return f"overwrote {p.name}"
        if done.code == 0:
            return "exit 0 writing over an input"
        return None

    return check


def _devices_intact(done: Done) -> str | None:
    for dev in ("/dev/full", "/dev/null"):
        if not Path(dev).is_char_device():
            return f"{dev} replaced"
    return None


def _stdout_full(cmd: tuple[str, ...]) -> tuple[Done, str | None]:
    start = time.monotonic()
    with open("/dev/full", "wb") as full:
        proc = subprocess.Popen(
            [sys.executable, "-c", ENTRY, *cmd],
            stdout=full,
            stderr=subprocess.PIPE,
            env=environment(),
            preexec_fn=_limits,
        )
        try:
            _, err = proc.communicate(timeout=GUARD_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            return Done(None, "", "", 0, 0), None
    done = Done(proc.returncode, "", err.decode(errors="replace"), time.monotonic() - start, 0)
    return done, None if done.code not in (0,) else "exit 0 with stdout lost"


# ---------------------------------------------------------------- include confinement


def includes(work: Path) -> Iterator[Attack]:
    secret = work / "secret" / "s.cat"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text('"SECRET-MODEL-TEXT"\nlet SECRETNAME = po\nacyclic SECRETNAME\n')
    tree = work / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "link.cat").unlink(missing_ok=True)
    (tree / "link.cat").symlink_to(secret)
    (tree / "linkdir").unlink(missing_ok=True)
    (tree / "linkdir").symlink_to(secret.parent)
    paths = [
        str(secret),
        "../secret/s.cat",
        "link.cat",
        "linkdir/s.cat",
        "/etc/passwd",
        "/proc/self/environ",
        "compat/../../secret/s.cat",
        "/dev/zero",
        "nonexistent.cat",
        "./../tree/../secret/s.cat",
        "%2e%2e/secret/s.cat",
        "\\..\\secret\\s.cat",
        "pisa.cat/../../secret/s.cat",
        "~/" + secret.name,
        "x" * 5000,
    ]
    for i, inc in enumerate(paths):
        model = tree / f"m{i}.cat"
        model.write_text(f'"m"\ninclude "{inc}"\nacyclic po\n')
        for cname, argv in (
            ("run", ("run", "--model", str(model), str(MP))),
            ("crossval", ("crossval", "--model", str(model), str(MP))),
            ("diff", ("diff", str(model), "pisa", str(MP))),
        ):
            yield Attack("include", f"{cname} include {inc[:40]}", argv, check=_no_leak)
    # the same name existing and missing must read the same (no existence oracle)
    for name in ("secret/s.cat", "secret/none.cat"):
        model = tree / f"o-{name.replace('/', '_')}"
        model.write_text(f'"m"\ninclude "../{name}"\n')
        yield Attack(
            "include",
            f"oracle ../{name}",
            ("run", "--model", str(model), str(MP)),
            check=_oracle(name),
        )


def _no_leak(done: Done) -> str | None:
    text = done.stdout + done.stderr
    for leak in ("SECRET", "root:", "PATH="):
        if leak in text:
            return f"leaked {leak!r}"
    return None if done.code != 0 else "a forbidden include was read (exit 0)"


_ORACLE: dict[str, str] = {}


def _oracle(name: str) -> Check:
    def check(done: Done) -> str | None:
        shown = done.stderr.replace(name, "NAME").replace(name.replace("/", "_"), "NAME")
        shown = "\n".join(x for x in shown.splitlines() if x.strip("^~ "))  # (the underline)
        _ORACLE[name] = shown
        others = {v for k, v in _ORACLE.items()}
        return None if len(others) == 1 else "existing and missing includes answer differently"

    return check


# ---------------------------------------------------------------- gen, import, diff --search


def gen_import(work: Path) -> Iterator[Attack]:
    values = [
        "9" * 5000,
        "-1",
        "nan",
        "\u0663",
        "",
        "all,all",
        "x" * 10000,
        "../../etc",
        "\x1b[31m",
        "a,,b",
    ]
    for opt in (
        "--orders",
        "--scopes",
        "--spaces",
        "--placements",
        "--fences",
        "--rmw",
        "--max",
        "--name",
        "--cycle",
    ):
        for v in values:
            yield Attack(
                "gen",
                f"gen {opt} {v[:12]!r}",
                ("gen", "MP", opt, v, "--list"),
                check=exits(0, 1, 2),
            )
    for cyc in (
        "Rfe " * 5000,
        "PodWW " * 3000 + "Rfe",
        "(" * 1000,
        "Rfe PodRR Fre PodWW " * 50,
        "Ｒｆｅ PodRR Fre PodWW",
        "Rfe PodRR Fre PodWW\n" * 3,
    ):
        yield Attack(
            "gen",
            f"gen --cycle {cyc[:16]!r}",
            ("gen", "--cycle", cyc, "--max", "3"),
            check=exits(0, 1, 2),
        )
    yield Attack(
        "gen",
        "gen all --max 5",
        ("gen", "all", "--orders", "all", "--scopes", "all", "--max", "5"),
        check=exits(0),
    )
    out = work / "gen-out"
    yield Attack("gen", "gen -o /dev/full", ("gen", "MP", "-o", "/dev/full"), check=exits(2))
    yield Attack(
        "gen", "gen -o a file", ("gen", "MP", "-o", str(MP)), check=both(exits(2), _unchanged([MP]))
    )
    yield Attack("gen", "gen -o a new dir", ("gen", "MP", "-o", str(out)), check=exits(0))
    yield Attack(
        "gen",
        "gen --max 1e9 --list",
        ("gen", "all", "--max", "1000000000", "--list"),
        check=exits(0),
    )
    # import
    herd = work / "herd"
    herd.mkdir(exist_ok=True)
    c11 = (
        "C11 T\n{ x = 0; y = 0; }\nP0 (atomic_int* x, atomic_int* y) {\n"
        "  atomic_store_explicit(x, VALUE, memory_order_release);\n}\n"
        "P1 (atomic_int* x) {\n  int r0 = atomic_load_explicit(x, memory_order_acquire);\n}\n"
        "exists (COND)\n"
    )
    cases = {
        "big-value": c11.replace("VALUE", BIG).replace("COND", "1:r0 = 1"),
        "big-cond": c11.replace("VALUE", "1").replace("COND", f"1:r0 = {BIG}"),
        "parens": c11.replace("VALUE", "1").replace("COND", "(" * 1000 + "1:r0 = 1" + ")" * 1000),
        "atoms": c11.replace("VALUE", "1").replace("COND", " /\\ ".join(["1:r0 = 1"] * 2000)),
        "nots": c11.replace("VALUE", "1").replace("COND", "~" * 5000 + "1:r0 = 1"),
        "nul": c11.replace("VALUE", "1\x00").replace("COND", "1:r0 = 1"),
        "fullwidth": c11.replace("VALUE", "\uff11").replace("COND", "1:r0 = 1"),
        "bom": "\ufeff" + c11.replace("VALUE", "1").replace("COND", "1:r0 = 1"),
        "thread-big": c11.replace("P1 (", f"P{BIG} (")
        .replace("VALUE", "1")
        .replace("COND", "1:r0 = 1"),
        "opencl-big": c11.replace("C11", "OpenCL")
        .replace("VALUE", BIG)
        .replace("COND", "1:r0 = 1"),
        "empty": "",
        "junk": "\xff\xfe\x00garbage",
        "deep-expr": c11.replace("VALUE", "(" * 1000 + "1" + ")" * 1000).replace(
            "COND", "1:r0 = 1"
        ),
        "long-chain": c11.replace("VALUE", "+".join(["1"] * 5000)).replace("COND", "1:r0 = 1"),
    }
    for cname, text in cases.items():
        src = herd / f"{cname}.litmus"
        src.write_bytes(text.encode("utf-8", "surrogateescape"))
        yield Attack(
            "import",
            f"import {cname}",
            ("import", "-o", str(work / "imported"), str(src)),
            check=exits(0, 1, 2),
        )
    for special in ("/dev/zero", str(_fifo(work / "herd-fifo")), "/proc/self/mem"):
        yield Attack(
            "import",
            f"import {special}",
            ("import", "-o", str(work / "imp2"), special),
            check=exits(1, 2),
        )
    # diff --search
    for args in (
        ("--search", "9" * 5000),
        ("--search", "-1"),
        ("--search", "nan"),
        ("--search", "3", "--search-cycle", "(" * 500),
        ("--search", "3", "--search-shapes", "nope"),
        ("--search", "3", "--search-out", "/dev/full"),
        ("--search", "3", "--search-out", str(work / "s-out.txt")),
        ("--search", "0"),
        ("--search", "2", "--search-shapes", "MP,SB", "--orders", "all"),
        ("--search", "2", "--timeout", "1"),
        ("--search", "1000000000", "--timeout", "5", "--search-shapes", "MP"),
    ):
        check = exits(0, 1, 2, 4)
        if str(MP) in args:
            check = both(check, _unchanged([MP]))
        yield Attack(
            "gen",
            f"diff {' '.join(a[:12] for a in args)}",
            ("diff", "pisa", "pisa-rc11", *args),
            check=check,
        )
    own = work / "search-model.cat"
    own.write_text('"own"\ninclude "pisa.cat"\n')
    for target in (own, MODELS / "pisa.cat"):
        yield Attack(
            "gen",
            f"diff --search-out over the model {target.name}",
            ("diff", str(own), "pisa-rc11", "--search", "3", "--search-out", str(target)),
            check=_unchanged([own, MODELS / "pisa.cat"]),
        )


# ---------------------------------------------------------------- serve


def serve(work: Path) -> Iterator[Attack]:
    for name in SERVE_PROBES:
        yield Attack("serve", name, ("serve",), custom=lambda n=name: _serve_probe(work, n))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


_SERVER: dict[str, object] = {}


def _server(work: Path) -> tuple[int, subprocess.Popen[bytes], Path]:
    if "proc" in _SERVER:
        return _SERVER["port"], _SERVER["proc"], _SERVER["log"]  # type: ignore[return-value]
    suite = work / "suite"
    (suite / "sub").mkdir(parents=True, exist_ok=True)
    shutil.copy(MP, suite / "MP.litmus")
    (suite / "latin1.litmus").write_bytes(b"PISA L\xe9\n{\n}\n")
    (suite / "passwd.litmus").unlink(missing_ok=True)
    (suite / "passwd.litmus").symlink_to("/etc/passwd")
    (suite / "sub" / "loop").unlink(missing_ok=True)
    (suite / "sub" / "loop").symlink_to(suite)
    _fifo(suite / "fifo.litmus")
    port = _free_port()
    log = work / "serve.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ENTRY,
            "serve",
            "--port",
            str(port),
            "--suite",
            str(suite),
            "--timeout",
            "5",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
        env=environment(),
        preexec_fn=_limits,
    )
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    _SERVER.update(port=port, proc=proc, log=log)
    return port, proc, log


def _http(port: int, raw: bytes, timeout: float = 30) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        chunks = []
        try:
            while chunk := s.recv(65536):
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
        return b"".join(chunks)


def _post(body: bytes, path: str = "/api/run", headers: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{headers}\r\n"
    ).encode() + body


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()


def _run_body(test: str, **more: object) -> bytes:
    return json.dumps({"test": test, **more}).encode()


SERVE_PROBES: dict[str, tuple[bytes, tuple[int, ...]]] = {
    "get index": (_get("/"), (200,)),
    "traversal static": (_get("/static/../../../../etc/passwd"), (404, 400)),
    "traversal encoded": (_get("/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd"), (404, 400)),
    "traversal test name": (_get("/api/test?name=../../../../etc/passwd"), (404,)),
    "test name NUL": (_get("/api/test?name=%00"), (404,)),
    "suite symlink to passwd": (_get("/api/test?name=passwd.litmus"), (404, 403, 400)),
    "suite non-utf8 test": (_get("/api/test?name=latin1.litmus"), (200, 400, 404, 422)),
    "suite fifo test": (_get("/api/test?name=fifo.litmus"), (404,)),
    "list tests": (_get("/api/tests"), (200,)),
    "models": (_get("/api/models"), (200,)),
    "bad json": (_post(b"{not json"), (400,)),
    "deep json": (_post(b"[" * 200_000), (400, 413)),
    "long number": (_post(b'{"test": 1' + b"0" * 5000 + b"}"), (400,)),
    "huge body": (_post(b'{"test": "' + b"x" * 3_000_000 + b'"}'), (413,)),
    "surrogate": (_post(b'{"test": "\\ud800"}'), (400,)),
    "not object": (_post(b"[1, 2]"), (400,)),
    "test not str": (_post(b'{"test": 5}'), (400,)),
    "model not str": (_post(b'{"test": "x", "model": [1]}'), (400,)),
    "model unknown": (_post(_run_body(MP.read_text(), model="../../etc/passwd")), (200, 400)),
    "model include passwd": (
        _post(_run_body(MP.read_text(), model_text='include "/etc/passwd"\n')),
        (200, 400),
    ),
    "model include secret": (
        _post(_run_body(MP.read_text(), model_text='include "../../../../../etc/shadow"\n')),
        (200, 400),
    ),
    "model big": (
        _post(_run_body(MP.read_text(), model_text="(* " + "x" * 70_000 + " *)")),
        (413,),
    ),
    "test big": (_post(_run_body("x" * 70_000)), (413,)),
    "good run": (_post(_run_body(MP.read_text())), (200,)),
    "wild run": (_post(_run_body(TEXTS["wild-null-register"][0])), (200,)),
    "big literal run": (_post(_run_body(TEXTS["big-value"][0])), (200,)),
    "2000 iadds run": (_post(_run_body(TEXTS["2000-iadds"][0])), (200,)),
    "slow test run": (b"SLOW", (200,)),
    "nul in test": (_post(_run_body("PISA T\x00\n")), (200, 400)),
    "bom in test": (_post(_run_body("\ufeff" + MP.read_text())), (200,)),
    "wrong method": (
        b"PUT /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        (405,),
    ),
    "content-length lies": (
        b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\nConnection: close\r\n\r\n{}",  # noqa: E501
        (400, 413),
    ),
    "negative content-length": (
        b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\nConnection: close\r\n\r\n",
        (400,),
    ),
    "chunked endless": (b"CHUNKED", (413,)),
    "slowloris": (b"SLOWLORIS", (200,)),
    "header 100k": (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 100_000 + b"\r\nConnection: close\r\n\r\n",
        (200, 400, 431),
    ),
    "garbage request": (b"\x00\xff\xfe garbage\r\n\r\n", (400,)),
    "many concurrent": (b"CONCURRENT", (200,)),
    "alive at the end": (_get("/api/models"), (200,)),
}


def _status(response: bytes) -> int | None:
    try:
        return int(response.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def _serve_probe(work: Path, name: str) -> tuple[Done, str | None]:
    port, proc, log = _server(work)
    raw, want = SERVE_PROBES[name]
    seen = log.stat().st_size  # only what this probe adds to the server's log is its own
    start = time.monotonic()
    if raw == b"SLOW":
        slow = files_big(work).read_text()
        response = _http(port, _post(_run_body(slow)), timeout=GUARD_SECONDS)
    elif raw == b"CHUNKED":
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"POST /api/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            response = b""
            try:
                for _ in range(2000):
                    s.sendall(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")
            except OSError:
                pass
            with contextlib.suppress(OSError):
                response = s.recv(65536)
    elif raw == b"SLOWLORIS":
        held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(50)]
        for s in held:
            s.sendall(b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        response = _http(port, _get("/api/models"), timeout=20)
        for s in held:
            s.close()
    elif raw == b"CONCURRENT":
        with ThreadPoolExecutor(12) as pool:
            answers = list(
                pool.map(lambda _: _http(port, _post(_run_body(MP.read_text()))), range(12))
            )
        bad = [a[:80] for a in answers if _status(a) != 200]
        response = answers[0] if not bad else bad[0]
    else:
        response = _http(port, raw)
    seconds = time.monotonic() - start
    time.sleep(0.2)  # (the server logs a failure just after it answers)
    text = log.read_bytes()[seen:].decode(errors="replace")
    done = Done(0 if proc.poll() is None else proc.returncode, "", text, seconds, 0)
    if proc.poll() is not None:
        return done, f"the server died: {text[-300:]}"
    if "Traceback" in text:
        return Done(0, "", text, seconds, 0), f"traceback in the server's log after {name}"
    status = _status(response)
    if status not in want:
        return done, f"status {status}, wanted {want}: {response[:300]!r}"
    if b"root:" in response or b"SECRET" in response:
        return done, "leaked a file"
    if name in (
        "good run",
        "wild run",
        "2000 iadds run",
        "bom in test",
    ) and b'"ok": true' not in response.replace(b'"ok":true', b'"ok": true'):
        return done, f"no answer: {response[-300:]!r}"
    return done, None


def stop_server() -> None:
    proc = _SERVER.get("proc")
    if isinstance(proc, subprocess.Popen):
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


# ---------------------------------------------------------------- the round

CLASSES: dict[str, Callable[[Path], Iterator[Attack]]] = {
    "grid": grid,
    "outcomes": outcomes,
    "budgets": budgets,
    "unknown": unknown,
    "cache": cache,
    "finder": finder,
    "signals": signals,
    "files": outputs,
    "include": includes,
    "gen-import": gen_import,
    "serve": serve,
}


def attacks(work: Path, only: list[str] | None = None) -> list[Attack]:
    out: list[Attack] = []
    for name, make in CLASSES.items():
        if only and name not in only:
            continue
        out.extend(make(work))
    return out


def run_round(
    work: Path, only: list[str] | None = None, jobs: int = 2, report: Callable[[str], None] = print
) -> list[tuple[Attack, str, Done]]:
    """Run the attacks, and return the broken ones (attack, what broke, its result)."""
    todo = attacks(work, only)
    serial = [a for a in todo if a.klass in ("serve", "signals")]
    parallel = [a for a in todo if a.klass not in ("serve", "signals")]
    broken: list[tuple[Attack, str, Done]] = []
    counts: Counter[str] = Counter()
    slowest = (0.0, "")

    def one(a: Attack) -> tuple[Attack, Done, str | None]:
        done, custom = run(a)
        failure = classify(a, done, custom)
        if failure is not None:
            report(f"BROKEN [{a.klass}] {a.name}: {failure}")
            if os.environ.get("ROUND4_VERBOSE"):
                report(f"  argv {a.argv!r}\n  exit {done.code}\n  stderr {done.stderr[-3000:]}")
        return a, done, failure

    try:
        with ThreadPoolExecutor(jobs) as pool:
            results = list(pool.map(one, parallel))
        results += [one(a) for a in serial]
    finally:
        stop_server()
    for a, done, failure in results:
        counts[a.klass] += 1
        slowest = max(slowest, (done.seconds, a.name))
        if failure is not None:
            broken.append((a, failure, done))
    for k, n in counts.items():
        report(f"{k}: {n} attacks, {sum(1 for a, _, _ in broken if a.klass == k)} broken")
    report(
        f"total {sum(counts.values())}, broken {len(broken)}, slowest {slowest[0]:.1f} s "
        f"({slowest[1]})"
    )
    return broken


def main() -> int:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--only", action="append")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="round4-") as tmp:
        broken = run_round(Path(tmp), args.only, args.jobs, lambda s: print(s, flush=True))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
