"""The header metadata, memory variable declarations and thread placements."""

from __future__ import annotations

from pisa_mm.errors import Span, int_literal
from pisa_mm.events.kinds import Space
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import Ctx, fail
from pisa_mm.litmus.decode.immediates import int_bits
from pisa_mm.litmus.program import ThreadPlacement, VarDecl


def var_decl(ctx: Ctx, d: S.RawVarDecl, thread: int | None) -> VarDecl:
    space_text = d.space.text[1:]
    if thread is None and space_text == "private":
        fail(d.space.span, "declare .private variables inside a thread body", "declaration")
    if thread is not None and space_text != "private":
        fail(d.space.span, f"declare .{space_text} variables in the init block", "declaration")
    space = Space.PRIVATE if space_text == "private" else isa.DECL_SPACES[space_text]
    type_text = d.type.text[1:]
    if type_text not in isa.WIDTHS:
        fail(
            d.type.span,
            f"a memory variable has a scalar type (.8b ... .128b), not {d.type.text}",
            "type",
        )
    width = isa.WIDTHS[type_text]
    if d.name.text[1:] in ctx.variables:
        fail(d.name.span, f"variable {d.name.text} is declared twice", "duplicate")
    count = 1
    if d.count is not None:
        count = d.count.value
        if count < 1 or count > 4096:
            fail(d.count.span, "an array has 1 to 4096 elements", "declaration")
    values = d.init or ()
    if d.init_is_list and d.count is None and len(values) > 1:
        fail(
            d.span,
            f"scalar {d.name.text} has a list of {len(values)} initial values",
            "declaration",
        )
    if len(values) > count:
        fail(
            values[count].span,
            f"{d.name.text} has {count} elements but {len(values)} initial values",
            "declaration",
        )
    init = []
    for i, v in enumerate(values):
        if isinstance(v, S.RawFloat):
            ctx.float_inits.append((d.name.text[1:], i, v))  # converted by floats.py
            init.append(0)
        else:
            init.append(int_bits(v, width, "variable"))
    init += [0] * (count - len(init))
    return VarDecl(d.name.text[1:], space, width, count, tuple(init), d.span, thread)


def thread_placements(raw: S.RawTest) -> list[ThreadPlacement]:
    explicit: dict[str, set[int]] = {"wg": set(), "sg": set()}
    parsed: list[tuple[dict[str, int], bool, Span]] = []
    for t in raw.threads:
        items: dict[str, int] = {}
        host = False
        seen: dict[str, Span] = {}
        for p in t.placement:
            if p.kind in seen:
                fail(p.span, f"{p.kind} is given twice for {t.name.text}", "placement")
            seen[p.kind] = p.span
            if p.kind == "host":
                host = True
            else:
                assert p.value is not None
                v = p.value.value
                if v < 0 or v > 1_000_000:
                    fail(p.value.span, f"bad {p.kind} number {p.value.text}", "placement")
                items[p.kind] = v
        if host and items:
            other = next(p for p in t.placement if p.kind != "host")
            fail(other.span, "a host thread has no gpu, work-group or sub-group", "placement")
        for k in ("wg", "sg"):
            if k in items:
                explicit[k].add(items[k])
        span = t.placement[0].span if t.placement else t.span
        parsed.append((items, host, span))
    fresh = {k: max(v, default=-1) + 1 for k, v in explicit.items()}
    out: list[ThreadPlacement] = []
    for items, host, span in parsed:
        if host:
            out.append(ThreadPlacement(True, None, None, None, span))
            continue
        got: dict[str, int] = {}
        for k in ("wg", "sg"):
            if k in items:
                got[k] = items[k]
            else:
                got[k] = fresh[k]
                fresh[k] += 1
        out.append(ThreadPlacement(False, items.get("gpu", 0), got["wg"], got["sg"], span))
    return out


def thread_index(name: S.Name, what: str) -> int:
    text = name.text
    digits = text[1:] if text.startswith("P") else text
    if len(digits) < 19 and digits.isascii() and digits.isdigit():
        return int(digits)  # the common case, as int_literal reads it
    return int_literal(digits, name.span, f"{what} thread number")


# The largest loop bound accepted. The builder unrolls eagerly: a loop taken N times makes
# O(N) events and N paths of up to N events each, all allocated before any engine's budget
# can act, so a bound past this is refused instead (docs/litmus-format.md).
MAX_UNROLL = 256


def unroll_limit_message(bound: int) -> str:
    return (
        f"unroll bound {bound} is beyond the supported maximum {MAX_UNROLL} (the paths of a "
        f"loop taken N times hold O(N^2) events)"
    )


def unroll_metadata(raw: S.RawTest) -> int | None:
    """The test's `unroll = N` metadata: one ASCII decimal N >= 0, or None when absent."""
    found: tuple[int, Span] | None = None
    for i, (key, value) in enumerate(raw.metadata):
        if key != "unroll":
            continue
        span = raw.metadata_spans[i] if i < len(raw.metadata_spans) else None
        if found is not None:
            fail(
                span,
                f"unroll is given twice (first at line {found[1].line}); give one bound",
                "metadata",
            )
        if not (value.isascii() and value.isdigit()):
            fail(
                span,
                f"unroll must be a non-negative decimal integer, not {value!r}",
                "metadata",
            )
        bound = int_literal(value, span, "unroll bound")
        if bound > MAX_UNROLL:
            fail(span, unroll_limit_message(bound), "limit")
        found = (bound, span or Span(raw.path, 1, 1))
    return found[0] if found is not None else None
