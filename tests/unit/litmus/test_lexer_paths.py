"""The lexer's two ways of reading a token (each terminal on its own, then one regex per
context once it has been used enough) read the same token everywhere."""

from __future__ import annotations

import random
from pathlib import Path

from pisa_mm.litmus import lexer
from pisa_mm.litmus import parser as _parser

ROOT = Path(__file__).resolve().parents[3]
EXTRA = "(* open comment (* x *) ~exists !~ /\\ \\/ && || -> == != = .v4.32b P1 wg0 gpu2 1e5"


def _contexts() -> list[lexer.Context]:
    """The parser's contexts: its module's constants (a search of `gc`'s objects found only
    some of them after the CLI tests had run in the same process)."""
    found = {c.names: c for c in vars(_parser).values() if isinstance(c, lexer.Context) and c.names}
    found[lexer._ANY_TOKEN.names] = lexer._ANY_TOKEN
    return list(found.values())


def test_both_readers_read_the_same_token_at_every_offset() -> None:
    files = sorted((ROOT / "litmus").rglob("*.litmus"))
    texts = [p.read_text() for p in random.Random(9).sample(files, min(10, len(files)))]
    texts.append(EXTRA)
    contexts = _contexts()
    assert len(contexts) > 20
    for ctx in contexts:
        compiled = lexer._compile(ctx.names)
        for text in texts:
            for offset in range(len(text) + 1):
                ctx.uses = 0  # always the terminal-by-terminal path
                assert ctx._scan(text, offset) == compiled(text, offset), (ctx.names, offset)


def test_a_context_compiles_its_regex_after_some_use() -> None:
    ctx = lexer.Context("INT", "COMMA")
    for _ in range(lexer._COMPILE_AFTER):
        assert ctx.match("1,", 0) == ("INT", 0, 1)
    assert ctx.match is lexer._compile(ctx.names)
    assert ctx.match(" ,", 0) == ("COMMA", 1, 2)
