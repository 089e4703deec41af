"""One thread body: instruction dispatch, register declarations and register widths."""

from __future__ import annotations

import functools

from pisa_mm.errors import Diagnostic, PisaMMError, Severity, Span, int_literal
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode import atomics, memory, registers, sync
from pisa_mm.litmus.decode.context import RegInfo, fail
from pisa_mm.litmus.decode.operands import OperandDecoder
from pisa_mm.litmus.decode.qualifiers import split_opcode
from pisa_mm.litmus.program import Goto, Instruction, Op

_MNEMONICS = sorted(
    {"ld", "st", "iatom", "fatom", "fence", "barrier", "scmp", "ucmp", "sel", "addrof"}
    | {"addrcast", "goto", "return", "shfl", "ired", "redfirstidx", "cp"}
    | set(isa.ALU)
)


class ThreadDecoder(OperandDecoder):
    """Decodes a whole thread body into instructions and its register table."""

    def decode(self, instr: S.RawInstr) -> list[Op]:
        """One instruction's ops."""
        self.instr_span = instr.span
        text = instr.opcode.text
        if text.startswith("cp.async"):
            return memory.cp_async(self, instr)
        mnemonic = _shape(text)[0]
        if mnemonic in ("ld", "st"):
            return [memory.ld_st(self, instr, mnemonic)]
        if mnemonic == "iatom":
            return [atomics.iatom(self, instr)]
        if mnemonic == "fence":
            return [sync.fence(self, instr)]
        quals = split_opcode(instr.opcode)[1]
        if mnemonic == "fatom":
            return [atomics.fatom(self, instr, quals)]
        if mnemonic == "barrier":
            return [sync.barrier(self, instr, quals)]
        if mnemonic in isa.ALU:
            return [registers.alu(self, instr, mnemonic, quals)]
        if mnemonic in ("scmp", "ucmp"):
            return [registers.compare(self, instr, mnemonic, quals)]
        if mnemonic == "sel":
            return [registers.select(self, instr, quals)]
        if mnemonic == "addrof":
            return [registers.addrof(self, instr, quals)]
        if mnemonic == "addrcast":
            return [registers.addrcast(self, instr, quals)]
        if mnemonic in ("goto", "return"):
            return [registers.branch(self, instr, mnemonic, quals)]
        if mnemonic in ("shfl", "ired", "redfirstidx"):
            self.no_host(f"sub-group collectives ({mnemonic})")
            return [sync.collective(self, instr, mnemonic, quals)]
        if mnemonic in ("ld.param", "param"):
            fail(instr.opcode.span, "ld.param is not supported in litmus tests", "unsupported")
        if mnemonic in isa.UNSUPPORTED:
            fail(
                instr.opcode.span,
                f"instruction '{mnemonic}' is not supported in litmus tests",
                "unsupported",
            )
        import difflib  # only for a suggestion in an error

        close = difflib.get_close_matches(mnemonic, _MNEMONICS, n=1, cutoff=0.75)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        fail(instr.opcode.span, f"unknown instruction '{mnemonic}'{hint}", "unknown-instruction")

    # ------------------------------------------------------------ the whole body

    def run(self) -> tuple[list[Instruction], list[str], dict[str, RegInfo]]:
        """Decode the body: instructions (labels attached), end labels, register table."""
        for st in self.raw.body:
            if isinstance(st, S.RawRegDecl):
                self.declare(st)
            elif isinstance(st, S.RawInstr):
                mnemonic, vector = _shape(st.opcode.text)
                if mnemonic in ("ld", "st") and vector and st.operands:
                    target = st.operands[0] if mnemonic == "ld" else st.operands[-1]
                    if isinstance(target, S.RawReg):
                        self.vector_names.add(target.name)
        body: list[Instruction] = []
        pending: list[str] = []
        seen_labels: dict[str, Span] = {}
        for st in self.raw.body:
            if isinstance(st, S.RawLabel):
                if st.name in seen_labels:
                    fail(st.span, f"duplicate label '{st.name}' in P{self.index}", "label")
                seen_labels[st.name] = st.span
                pending.append(st.name)
            elif isinstance(st, S.RawInstr):
                self.cur = []
                ops = self.decode(st)
                for k, op in enumerate(ops):
                    labels = tuple(pending) if k == 0 else ()
                    body.append(Instruction(op, len(body), st.span, st.text, labels))
                    self.uses.append(self.cur if k == 0 else [])
                pending = []
        for ins in body:
            if isinstance(ins.op, Goto) and ins.op.label not in seen_labels:
                fail(ins.op.label_span, f"unknown label '{ins.op.label}' in P{self.index}", "label")
        self.resolve_widths()
        return body, pending, self.regs

    def declare(self, d: S.RawRegDecl) -> None:
        vec, width, pred = 1, 1, d.type is None
        if d.type is not None:
            parts = d.type.text.split(".")[1:]
            width_text = parts[-1]
            if width_text not in isa.WIDTHS:
                fail(d.type.span, f"unknown register type {d.type.text}", "type")
            width = isa.WIDTHS[width_text]
            if len(parts) == 2:
                if parts[0] not in isa.VECS:
                    fail(d.type.span, f"unknown vector type {d.type.text}", "type")
                vec = isa.VECS[parts[0]]
        for n in d.names:
            names = expand_range(n)
            self.ctx.declared_registers += len(names)
            if self.ctx.declared_registers > MAX_REGISTERS:
                fail(
                    n.span,
                    f"the test declares more than {MAX_REGISTERS} registers (each range "
                    "names up to 1024)",
                    "limit",
                )
            for name in names:
                if name in self.regs:
                    fail(n.span, f"register %{name} is declared twice", "duplicate")
                self.regs[name] = RegInfo(pred, width, vec, True, n.span)
                if vec > 1:
                    self.vector_names.add(name)

    def resolve_widths(self) -> None:
        """Undeclared registers take the width of their first writer, else of their first use."""
        flat = [u for us in self.uses for u in us]
        written: set[str] = set()  # undeclared registers whose width comes from a write
        for pass_writes in (True, False):
            for u in flat:
                if u.name in self.regs or (pass_writes and not u.write) or u.width is None:
                    continue
                if u.elem is not None:
                    continue  # an element of an undeclared vector: left to the whole-vector use
                self.regs[u.name] = RegInfo(u.pred, u.width, u.vec, False, u.span)
                if pass_writes:
                    written.add(u.name)
        for u in flat:
            info = self.regs.get(u.name)
            if info is None:
                if u.elem is not None:
                    fail(u.span, f"vector register %{u.name} is never declared", "undeclared")
                # only ever used as an address: a 64-bit pointer register
                self.regs[u.name] = RegInfo(False, 64, 1, False, u.span)
                continue
            shown = f"%{u.name}" + (f".{'xyzw'[u.elem]}" if u.elem is not None else "")
            if u.pred != info.pred:
                kind, want = (
                    ("a predicate", "a register") if info.pred else ("a register", "a predicate")
                )
                fail(u.span, f"{shown} is {kind}, but this operand needs {want}", "width")
            if u.elem is not None:
                if info.vec == 1:
                    fail(u.span, f"%{u.name} is not a vector register", "width")
                if u.elem >= info.vec:
                    fail(u.span, f"{shown} is beyond the {info.vec} elements of %{u.name}", "width")
            elif u.vec != info.vec and not info.pred:
                if info.vec == 1:
                    fail(
                        u.span,
                        f"%{u.name} is a scalar register, but a .v{u.vec} access needs a "
                        f"{u.vec}-element vector",
                        "width",
                    )
                fail(
                    u.span,
                    f"%{u.name} has {info.vec} elements, but this access needs {u.vec}",
                    "width",
                )
            if u.width is None:
                if info.width not in (32, 64) or (info.vec > 1 and u.elem is None):
                    fail(
                        u.span,
                        f"an address register must be .32b or .64b; {shown} is .{info.width}b",
                        "width",
                    )
            elif u.width != info.width and not info.pred:
                if info.declared:
                    origin = f"%{u.name} is declared .{info.width}b here"
                else:
                    first = "write" if u.name in written else "use"
                    origin = f"%{u.name} is .{info.width}b from its first {first}, here"
                raise PisaMMError(
                    (
                        Diagnostic(
                            Severity.ERROR,
                            f"{shown} is .{info.width}b, but this operand is .{u.width}b",
                            u.span,
                            "width",
                        ),
                        Diagnostic(Severity.NOTE, origin, info.span, "width"),
                    )
                )


@functools.lru_cache(maxsize=4096)
def _shape(opcode: str) -> tuple[str, bool]:
    """An opcode's mnemonic, and whether a qualifier is a vector one (`.v2`, `.v4`)."""
    mnemonic, *quals = opcode.split(".")
    return mnemonic, any(q in isa.VECS for q in quals)


# The register names a test may declare: a range of 1,024 names takes a line of 24 bytes, and
# each name costs the decoder and the builder some hundreds of bytes (a file of such lines
# declared 38 million registers and ran out of memory). Registers that are only used are
# bounded by the text itself.
MAX_REGISTERS = 1 << 18


def expand_range(n: S.Name) -> list[str]:
    text = n.text[1:]
    if "<" not in text:
        return [text]
    base, _, rng = text.partition("<")
    lo_text, _, hi_text = rng.rstrip(">").partition("~")
    lo = int_literal(lo_text, n.span, "register range bound")
    hi = int_literal(hi_text, n.span, "register range bound")
    if hi <= lo or hi - lo > 1024:
        fail(n.span, f"register range {n.text} must name 1 to 1024 registers", "declaration")
    return [f"{base}{i}" for i in range(lo, hi)]
