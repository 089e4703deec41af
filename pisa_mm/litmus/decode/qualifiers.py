"""The dotted qualifiers of a mnemonic, sorted into their categories (PISA 5, 8, 9)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pisa_mm.errors import Span
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.records import field, record


@record
class Q:
    """One dotted qualifier of a mnemonic, with its own span (for carets under it), made
    from the opcode's when a diagnostic asks for it: most qualifiers are never shown."""

    text: str
    opcode: Span
    col: int  # where its dot is

    @property
    def span(self) -> Span:
        line = self.opcode.line
        return Span(self.opcode.file, line, self.col, line, self.col + 1 + len(self.text))


def split_opcode(op: S.Name) -> tuple[str, list[Q]]:
    parts = op.text.split(".")
    col = op.span.col + len(parts[0])
    quals = []
    for p in parts[1:]:
        quals.append(Q(p, op.span, col))
        col += 1 + len(p)
    return parts[0], quals


@record(frozen=False, slots=False)
class MemQ:
    space: Q | None = None
    order: Q | None = None
    scope: Q | None = None
    vec: Q | None = None
    type: Q | None = None
    op: Q | None = None
    cc: list[Q] = field(default_factory=list)

    @property
    def cc_text(self) -> str:
        return ".".join(q.text for q in self.cc)

    @property
    def cc_span(self) -> Span:
        first, last = self.cc[0].span, self.cc[-1].span
        return Span(first.file, first.line, first.col, last.end_line, last.end_col)


_SLOT_NAMES = {
    "space": "address space",
    "order": "memory order",
    "scope": "memory scope",
    "vec": "vector",
    "type": "type",
    "op": "operation",
}


# Spellings of PISA qualifiers that herd, PTX and OpenCL users type.
ALIASES = {
    "wg": "workgroup",
    "cta": "workgroup",
    "work_group": "workgroup",
    "sg": "subgroup",
    "sub_group": "subgroup",
    "dev": "gpu",
    "device": "gpu",
    "sys": "system",
    "acq": "acquire",
    "rel": "release",
    "rlx": "relaxed",
    "relax": "relaxed",
    "sc": "seq_cst",
    "seqcst": "seq_cst",
    "acqrel": "acq_rel",
    "acq_rel": "acq_rel",
    "b8": "8b",
    "b16": "16b",
    "b32": "32b",
    "b64": "64b",
    "u32": "32b",
    "s32": "32b",
    "u64": "64b",
    "s64": "64b",
    "f32": "f",
    "f16": "hf",
    "f64": "df",
}


def suggest(word: str, candidates: Iterable[str]) -> str:
    """`; did you mean '.X'?` for a misspelt or foreign qualifier, or "" if nothing is close."""
    known = sorted(set(candidates))
    alias = ALIASES.get(word.lower())
    if alias is not None and alias in known:
        return f"; did you mean '.{alias}'?"
    import difflib  # only for a suggestion in an error

    close = difflib.get_close_matches(word, known, n=1, cutoff=0.7)
    return f"; did you mean '.{close[0]}'?" if close else ""


def _known(mnemonic: str, ops: Iterable[str], fp: bool) -> set[str]:
    words = {*isa.SPACES, "weak", *isa.ORDERS, *isa.SCOPES, *isa.CC_PARTS, *ops}
    if mnemonic in ("ld", "st"):
        words |= set(isa.VECS)
    return words | set(isa.FTYPES if fp else isa.WIDTHS)


def classify(mnemonic: str, quals: Sequence[Q], ops: Iterable[str] = (), fp: bool = False) -> MemQ:
    """Sort the qualifiers of a memory instruction into their categories (any order)."""
    m = MemQ()
    opset = set(ops)
    for q in quals:
        t = q.text
        if t in isa.SPACES:
            slot = "space"
        elif t == "weak" or t in isa.ORDERS:
            slot = "order"
        elif t in isa.SCOPES:
            slot = "scope"
        elif t in isa.CC_PARTS:
            m.cc.append(q)
            continue
        elif t in isa.VECS and mnemonic in ("ld", "st"):
            slot = "vec"
        elif t in opset:
            slot = "op"
        elif (fp and t in isa.FTYPES) or (not fp and t in isa.WIDTHS):
            slot = "type"
        elif not fp and t in isa.FTYPES and mnemonic != "fence":
            fail(q.span, f"{mnemonic} takes an integer type such as .32b, not .{t}", "type")
        elif fp and t in isa.WIDTHS:
            fail(q.span, f"fatom takes a float type (.hf, .bf, .f, .df), not .{t}", "type")
        else:
            hint = suggest(t, _known(mnemonic, opset, fp))
            fail(q.span, f"unknown qualifier '.{t}' for {mnemonic}{hint}", "qualifier")
        prev: Q | None = getattr(m, slot)
        if prev is not None:
            fail(
                q.span,
                f"second {_SLOT_NAMES[slot]} qualifier '.{t}' (already '.{prev.text}')",
                "qualifier",
            )
        setattr(m, slot, q)
    return m


def only(mnemonic: str, m: MemQ, allowed: set[str]) -> None:
    """Reject categories `mnemonic` has no slot for (e.g. a vector qualifier on iatom)."""
    for slot in ("space", "order", "scope", "vec", "type", "op"):
        q = getattr(m, slot)
        if q is not None and slot not in allowed:
            fail(q.span, f"{mnemonic} takes no {_SLOT_NAMES[slot]} qualifier", "qualifier")
    if m.cc and "cc" not in allowed:
        fail(m.cc_span, f"{mnemonic} takes no cache-control qualifier", "qualifier")
