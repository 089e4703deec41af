"""Recognise the dialect of a herd test (C11 or OpenCL) and parse it with that dialect's grammar."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from pisa_mm.errors import PisaMMError, Span, int_literal
from pisa_mm.importers import syntax as S
from pisa_mm.records import record

__all__ = ["Header", "detect_dialect", "parse_herd"]

_HERE = Path(__file__).parent
_HEADER = re.compile(r"^[ \t]*([A-Za-z][A-Za-z0-9_]*)[ \t]+(\S+)[ \t]*$")
_OPENCL_HEADERS = frozenset({"OpenCL", "OPENCL", "opencl"})
# A `C` test that uses any of these is an OpenCL test written with herd's C header (as in the
# "overhauling SC atomics" tests): scoped atomics, placements, address spaces, scope trees.
_OPENCL_MARKS = re.compile(
    r"memory_scope_|CLK_(GLOBAL|LOCAL)_MEM_FENCE|\bP[0-9]+\s*@|\b(__)?(global|local)\s+\w"
    r"|^\s*(scopes|regions)\s*:|\batomic_work_item_fence\b|\b(work_group_)?barrier\s*\(",
    re.MULTILINE,
)
EXPECTED_DIALECTS = (
    "a herd C11 test (first line `C NAME`) or an OpenCL test (`OpenCL NAME`, or `C NAME` "
    "with scoped atomics)"
)


@functools.cache
def _parser(dialect: S.Dialect) -> lark.Lark:
    text = (_HERE / f"{dialect.value}.lark").read_text() + (_HERE / "common.lark").read_text()
    return lark.Lark(text, parser="lalr", propagate_positions=True, maybe_placeholders=True)


def _strip_comments(text: str) -> str:
    """The text with comments blanked (newlines kept), to find the header line."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return re.sub(r"\(\*.*?\*\)|/\*.*?\*/|//[^\n]*", blank, text, flags=re.DOTALL)


@record
class Header:
    """What precedes the init block: dialect, name, herd's description and `key=value` info
    lines (diy7 writes `Cycle=...`, `Generator=...`), and the body with those lines blanked."""

    dialect: S.Dialect
    name: str
    line: int
    description: str | None
    info: tuple[tuple[str, str], ...]
    body: str


_INFO = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_\-.]*)[ \t]*=(.*)$")


def detect_dialect(text: str, path: str) -> Header:
    """The header of a herd test. A file whose first line is neither `C NAME` nor
    `OpenCL NAME` is an error naming the expected dialects."""
    clean = _strip_comments(text)
    lines = clean.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        m = _HEADER.match(line)
        word = m.group(1) if m else line.split()[0]
        if m is None or (word != "C" and word not in _OPENCL_HEADERS):
            raise PisaMMError.at(
                Span(path, i + 1, 1),
                f"not a test in an importable dialect (header {word!r}): expected "
                f"{EXPECTED_DIALECTS}",
                "dialect",
            )
        body_lines = text.split("\n")
        body_lines[i] = ""
        description: str | None = None
        info: list[tuple[str, str]] = []
        # herd allows a quoted description and `key=value` lines before the init block
        for j in range(i + 1, len(lines)):
            stripped = lines[j].strip()
            if not stripped:
                continue
            info_m = _INFO.match(lines[j])
            if stripped.startswith('"') and description is None and not info:
                description = stripped.strip('"').replace('"', "'")
            elif info_m is not None:
                info.append((info_m.group(1), info_m.group(2).strip()))
            else:
                break
            body_lines[j] = ""
        body = "\n".join(body_lines)
        opencl = word in _OPENCL_HEADERS or _OPENCL_MARKS.search(_strip_comments(body))
        dialect = S.Dialect.OPENCL if opencl else S.Dialect.C11
        return Header(dialect, m.group(2), i + 1, description, tuple(info), body)
    raise PisaMMError.at(Span(path, 1, 1), f"empty file: expected {EXPECTED_DIALECTS}", "dialect")


def parse_herd(text: str, path: str) -> S.HerdTest:
    """Parse a herd C11 or OpenCL test; bad input raises PisaMMError (with `sources`)."""
    # Windows line ends: the header line `C NAME\r` was no header (lines and columns stay)
    text = text.replace("\r\n", "\n")
    try:
        header = detect_dialect(text, path)
        parser = _parser(header.dialect)
        try:
            tree = parser.parse(header.body)
        except UnexpectedInput as exc:
            raise _syntax_error(exc, header.body, path, header.dialect) from None
        except LarkError as exc:
            raise PisaMMError.at(Span(path, 1, 1), f"cannot parse: {exc}", "syntax") from None
        return _Builder(path, header).test(tree)
    except PisaMMError as exc:
        exc.sources = {path: text}  # type: ignore[attr-defined]
        raise


def _syntax_error(exc: UnexpectedInput, text: str, path: str, dialect: S.Dialect) -> PisaMMError:
    line = exc.line if isinstance(exc.line, int) and exc.line > 0 else 1
    col = exc.column if isinstance(exc.column, int) and exc.column > 0 else 1
    what = "the herd C11 dialect" if dialect is S.Dialect.C11 else "the OpenCL dialect"
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) else -1
        ch = text[pos] if 0 <= pos < len(text) else "?"
        msg = f"unexpected character {ch!r} in {what}"
    elif isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        msg = f"unexpected end of file in {what}"
    elif isinstance(exc, UnexpectedToken):
        msg = f"unexpected {str(exc.token)!r} in {what}"
    else:
        msg = f"syntax error in {what}"
    return PisaMMError.at(Span(path, line, col), msg, "syntax")


def _int(text: str, span: Span | None) -> int:
    # int_literal: past 4,300 digits Python's int() raised ValueError (an internal error)
    return int_literal(text, span)


def _proc(text: str) -> int:
    return int(text.lstrip("P"))


class _Builder:
    """lark's tree -> syntax.py nodes (a hand-written walk, so that mypy sees the types)."""

    def __init__(self, path: str, header: Header) -> None:
        self.path = path
        self.dialect = header.dialect
        self.header = header

    def span(self, node: Any) -> Span:
        if isinstance(node, lark.Token):
            return Span(self.path, node.line or 1, node.column or 1)
        meta = node.meta
        if getattr(meta, "empty", True):
            return Span(self.path, 1, 1)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def test(self, tree: lark.Tree[Any]) -> S.HerdTest:
        inits: list[S.InitItem] = []
        threads: list[S.Thread] = []
        scopes: S.ScopeTree | None = None
        regions: list[tuple[str, str, Span]] = []
        locations: list[S.CLoc] = []
        filt: S.HProp | None = None
        # herd's default condition (none written) is `forall true`
        quant: str = "forall"
        prop: S.HProp = S.PBool(True)
        for child in tree.children:
            if not isinstance(child, lark.Tree):
                continue
            match child.data:
                case "init_block":
                    inits.extend(self.init_item(c) for c in child.children if c is not None)
                case "thread":
                    threads.append(self.thread(child))
                case "scopes":
                    trees = [self.stree(c) for c in child.children]
                    if len(trees) == 1:
                        scopes = trees[0]
                    else:
                        scopes = S.ScopeTree("", (), tuple(trees), self.span(child))
                case "regions":
                    for r in child.children:
                        if r is not None:
                            regions.append((str(r.children[0]), str(r.children[1]), self.span(r)))
                case "locations":
                    locations.extend(self.cloc(c) for c in child.children if c is not None)
                case "filter":
                    filt = self.prop(child.children[0])
                case "condition":
                    quant = re.sub(r"\s+", "", str(child.children[0]))
                    prop = self.prop(child.children[1])
        return S.HerdTest(
            self.dialect,
            self.header.name,
            self.header.description,
            self.header.info,
            self.path,
            tuple(inits),
            tuple(threads),
            scopes,
            tuple(regions),
            tuple(locations),
            filt,
            quant,
            prop,
            Span(self.path, self.header.line, 1),
        )

    # ---------------------------------------------------------------- init, threads

    def type_words(self, node: Any) -> tuple[str, ...]:
        if node is None:
            return ()
        return tuple(str(t) for t in node.children)

    def init_item(self, node: lark.Tree[Any]) -> S.InitItem:
        typ, star, loc, value = node.children
        pointer = star is not None
        thread: int | None = None
        if loc.data == "loc_reg":
            thread, name = _proc(str(loc.children[0])), str(loc.children[1])
        else:
            name = str(loc.children[0])
        val = 0
        if value is not None:
            if value.data == "value_addr":
                pointer = True
            else:
                val = self.signed(value.children[0])
        return S.InitItem(thread, name, self.type_words(typ), val, pointer, self.span(node))

    def signed(self, node: lark.Tree[Any]) -> int:
        minus, num = node.children
        value = _int(str(num), self.span(node))
        return -value if minus is not None else value

    def thread(self, node: lark.Tree[Any]) -> S.Thread:
        kids = [c for c in node.children]
        proc = _proc(str(kids[0]))
        placement: tuple[tuple[str, int], ...] = ()
        rest = kids[1:]
        if rest and isinstance(rest[0], lark.Tree) and rest[0].data == "placement":
            placement = tuple(
                (str(p.children[0]), _int(str(p.children[1]), self.span(p)))
                for p in rest[0].children
            )
            rest = rest[1:]
        elif rest and rest[0] is None and self.dialect is S.Dialect.OPENCL:
            rest = rest[1:]
        body = rest[-1]
        params = tuple(
            S.Param(self.type_words(p.children[0]), str(p.children[2]), self.span(p))
            for p in rest[:-1]
            if p is not None
        )
        return S.Thread(proc, placement, params, self.stmts(body.children), self.span(node))

    def stree(self, node: lark.Tree[Any]) -> S.ScopeTree:
        level = str(node.children[0])
        procs: list[int] = []
        children: list[S.ScopeTree] = []
        for c in node.children[1:]:
            if isinstance(c, lark.Tree):
                children.append(self.stree(c))
            else:
                procs.append(_proc(str(c)))
        return S.ScopeTree(level, tuple(procs), tuple(children), self.span(node))

    # ---------------------------------------------------------------- statements

    def stmts(self, nodes: list[Any]) -> tuple[S.Stmt, ...]:
        out: list[S.Stmt] = []
        for n in nodes:
            out.extend(self.stmt(n))
        return tuple(out)

    def stmt(self, node: lark.Tree[Any]) -> list[S.Stmt]:
        sp = self.span(node)
        k = node.children
        match node.data:
            case "decl":
                init = self.expr(k[3]) if k[3] is not None else None
                typ = self.type_words(k[0]) + (("*",) if k[1] is not None else ())
                return [S.Decl(typ, str(k[2]), init, sp)]
            case "assign":
                return [S.Assign(str(k[0]), self.expr(k[1]), sp)]
            case "store":
                return [S.Store(str(k[1]), self.expr(k[2]), sp)]
            case "call_stmt":
                call = self.expr(k[-1])
                assert isinstance(call, S.Call)
                return [S.CallStmt(call, sp)]
            case "if_":
                orelse = self.stmt(k[2]) if k[2] is not None else []
                return [S.If(self.expr(k[0]), tuple(self.stmt(k[1])), tuple(orelse), sp)]
            case "while_":
                return [S.While(self.expr(k[0]), tuple(self.stmt(k[1])), sp)]
            case "labelled":
                return self.stmt(k[1])  # herd's barrier labels (`B1:`) carry no meaning
            case "block":
                return list(self.stmts(list(k)))
        raise AssertionError(node.data)

    def expr(self, node: Any) -> S.Expr:
        sp = self.span(node)
        k = node.children
        match node.data:
            case "const":
                return S.Const(_int(str(k[0]), sp), sp)
            case "name":
                return S.Name(str(k[0]), sp)
            case "deref":
                return S.Deref(str(k[1]), sp)
            case "addr":
                return S.AddrOf(str(k[0]), sp)
            case "neg":
                return S.UnOp("-", self.expr(k[0]), sp)
            case "lnot":
                return S.UnOp("!", self.expr(k[0]), sp)
            case "cast":
                return self.expr(k[-1])
            case "call":
                args = tuple(self.expr(a) for a in k[1:] if a is not None)
                return S.Call(str(k[0]), args, sp)
            case "lor" | "land" | "bor" | "bxor" | "band":
                op = {"lor": "||", "land": "&&", "bor": "|", "bxor": "^", "band": "&"}[node.data]
                return S.BinOp(op, self.expr(k[0]), self.expr(k[1]), sp)
            case "compare" | "binop":
                return S.BinOp(str(k[1]), self.expr(k[0]), self.expr(k[2]), sp)
        raise AssertionError(node.data)

    # ---------------------------------------------------------------- condition

    def cloc(self, node: lark.Tree[Any]) -> S.CLoc:
        sp = self.span(node)
        k = node.children
        match node.data:
            case "creg":
                return S.CLoc(_proc(str(k[0])), str(k[1]), None, sp)
            case "cmem":
                return S.CLoc(None, str(k[0]), None, sp)
            case "celem":
                return S.CLoc(None, str(k[0]), _int(str(k[1]), sp), sp)
        raise AssertionError(node.data)

    def prop(self, node: lark.Tree[Any]) -> S.HProp:
        k = node.children
        match node.data:
            case "true":
                return S.PBool(True)
            case "false":
                return S.PBool(False)
            case "atom":
                return S.PAtom(self.cloc(k[0]), self.signed(k[2]), str(k[1]) == "!=")
            case "not_":
                return S.PNot(self.prop(k[1]))
            case "and_":
                return S.PBin("/\\", self.prop(k[0]), self.prop(k[2]))
            case "or_":
                return S.PBin("\\/", self.prop(k[0]), self.prop(k[2]))
            case "implies":
                return S.PBin("->", self.prop(k[0]), self.prop(k[2]))
        raise AssertionError(node.data)
