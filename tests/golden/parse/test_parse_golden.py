"""Golden outputs of `pisa-mm parse`; regenerate with `python tests/golden/promote_parse.py`."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from promote_parse import cases, render

from pisa_mm.cli import main
from pisa_mm.events.kinds import Kind

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_parse_output_matches_golden(case: Path) -> None:
    expected = case.with_suffix(".out")
    assert expected.exists(), f"no {expected.name}: run tests/golden/promote_parse.py"
    code, text = render(case)
    assert code == 0
    assert text == expected.read_text(encoding="utf-8")


def test_enough_cases_cover_every_instruction_family() -> None:
    text = "\n".join(c.read_text(encoding="utf-8") for c in CASES)
    families = ["ld.", "st.", "iatom.", "fatom.", "fence.", "barrier.workgroup", "cp.async.",
                "wait_group", "wait_all", "commit_group", "mov.", "iadd.", "isub.", "smul.",
                "umul.", "and.", "or.", "xor.", "not.", "shl.", "shr.", "asr.", "smin.",
                "smax.", "umin.", "umax.", "ineg.", "scmp.", "ucmp.", "sel.", "addrof.",
                "goto ", "goto.cond", "return;", "return.cond", "shfl.", "ired.",
                "redfirstidx.", ".generic", ".private", ".const", ".shared", "host"]  # fmt: skip
    assert len(CASES) >= 20
    assert [f for f in families if f not in text] == []


def test_json_output_lists_every_event() -> None:
    case = next(c for c in CASES if c.stem == "MP+rel+acq")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["parse", "--json", str(case), str(case)]) == 0
    docs = json.loads(out.getvalue())
    assert len(docs) == 2 and docs[0]["name"] == "MP+rel+acq"
    kinds = [e["kind"] for e in docs[0]["events"]]
    assert kinds.count(Kind.EXIT.value) == 2 and kinds.count("W") == 4
    assert [1, 0] not in docs[0]["po_edges"]


def _relations_from_json(doc: dict[str, Any]) -> dict[str, set[tuple[int, int]]]:
    """Every static relation rebuilt from `parse --json`'s linear form, as docs/cli.md says."""
    ids = [e["id"] for e in doc["events"]]
    rels = {name: {(a, b) for a, b in pairs} for name, pairs in doc["relations"].items()}
    for name, classes in doc["classes"].items():
        rels[name] = {(a, b) for c in classes for a in c for b in c}
    rels["incl"] = {(a, b) for left, right in doc["incl_blocks"] for a in left for b in right}
    parent = {b: a for a, b in doc["po_edges"]}
    rels["po"] = set()
    for b in ids:
        a = parent.get(b)
        while a is not None:
            rels["po"].add((a, b))
            a = parent.get(a)
    rels["id"] = {(a, a) for a in ids}
    rels["ext"] = {(a, b) for a in ids for b in ids if a != b} - rels["int"]
    return rels


def test_json_relations_rebuild_every_static_relation() -> None:
    from pisa_mm.events.build import build
    from pisa_mm.events.relations import static_relations
    from pisa_mm.litmus import load_test

    for case in CASES:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["parse", "--json", str(case)]) == 0
        (doc,) = json.loads(out.getvalue())
        want = static_relations(build(load_test(str(case))))
        got = _relations_from_json(doc)
        assert set(got) == set(want)
        for name, pairs in want.items():
            assert got[name] == pairs, (case.stem, name)


def test_unroll_option_overrides_metadata() -> None:
    case = next(c for c in CASES if c.stem == "Loop+spin")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["parse", "--json", "--unroll", "0", str(case)]) == 0
    (doc,) = json.loads(out.getvalue())
    assert doc["unroll"] == 0
    assert [p["cut"] for p in doc["threads"][1]["paths"]].count(True) == 1
    assert len(doc["threads"][1]["paths"]) == 2


def test_rich_table_keeps_brackets_of_pisa_text() -> None:
    from pisa_mm.events.build import build
    from pisa_mm.litmus import load_test
    from pisa_mm.report.parse_table import render_rich

    case = next(c for c in CASES if c.stem == "MP+rel+acq")
    text = render_rich(build(load_test(str(case), strict=False)))
    assert "st.global.32b [@x], 1" in text
