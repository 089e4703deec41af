"""The bundled herd-dialect tests (tests/data/import): each translates (or is skipped) as
expected, and the translation gives the verdict derived by hand under the PISA models."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions
from pisa_mm.events.build import build
from pisa_mm.explicit.engine import run_test
from pisa_mm.importers import Reason, Unsupported, load
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.model import TestResult

DATA = Path(__file__).resolve().parents[2] / "data" / "import"

# file -> verdict under `pisa` (herd's validation line), with the hand derivation.
VERDICTS = {
    # relaxed MP: no synchronisation, Wy may be seen before Wx (allowed in RC11 too)
    "c11/MP+rlx.litmus": "Ok",
    # Wx -po-> Wy(rel.sys) -rf-> Ry(acq.sys) -po-> Rx: sw, so Rx -fr-> Wx contradicts hb: coherence
    "c11/MP+rel+acq.litmus": "No",
    # relaxed SB: nothing orders a store before a later load of another location
    "c11/SB+rlx.litmus": "Ok",
    # seq_cst at system scope: psc cycle Wx -po-> Ry -fr-> Wy -po-> Rx -fr-> Wx (sc); ~exists holds
    "c11/SB+sc.litmus": "Ok",
    # pisa: acyclic(rf | dep) only, no dependency here, so LB is allowed (C++ allows it)
    "c11/LB+rlx.litmus": "Ok",
    # acquire reads do not forbid IRIW (no sc accesses, no psc)
    "c11/IRIW+acq.litmus": "Ok",
    # both cas succeed = both read the init write: atomicity (rmw & fr;co empty)
    "c11/CAS+CAS.litmus": "No",
    # rel fence -po-> Wy -rf-> Ry -po-> acq fence: sw between the fences, Rx reading 0 = coherence
    "c11/MP+fences.litmus": "No",
    # filter 0:r0=0 keeps the executions where P0 added first: P1 reads 1 and x ends at 3
    "c11/Fetch+filter.litmus": "Ok",
    # device scope, one NDRange: rel/acq synchronise across work-groups (incl), coherence
    "opencl/MP+rel.dev+acq.dev.litmus": "No",
    # work-group scope across two work-groups: not scope-inclusive, no sw; weak outcome allowed
    "opencl/MP+rel.wg+acq.wg.litmus": "Ok",
    # both barriers in one work-group: arrive -bsync-> depart gives Wa hb_S Rb, reads see 1
    "opencl/SB+local+barrier.litmus": "No",
    # wg-scope fences in one work-group (incl): fence synchronisation, then coherence
    "opencl/MP+fences.wg.litmus": "No",
    # seq_cst device scope, all in NDRange 0: psc forbids the IRIW outcome (sc)
    "opencl/IRIW+sc.dev.litmus": "No",
    # relaxed at device scope = system scope here (one device): LB allowed under pisa
    "opencl/LB+rlx.dev.litmus": "Ok",
    # one cas wins (atomicity); P0 failing means it read P1's 2 (the only other write)
    "opencl/CAS+local.litmus": "Ok",
}
# herd's rc11 forbids load buffering (acyclic po | rf): so does the variant pisa-rc11.
RC11_VERDICTS = {"c11/LB+rlx.litmus": "No", "opencl/LB+rlx.dev.litmus": "No"}

SKIPS = {
    "c11/RMW+sc.litmus": Reason.SC_RMW,
    "c11/Ptr.litmus": Reason.POINTER,
    "opencl/MP+rlx.wg+diff-wg.litmus": Reason.NARROW_RELAXED,
    "opencl/Barrier+global-only.litmus": Reason.BARRIER,
}


def test_every_data_file_has_an_expectation() -> None:
    files = {str(p.relative_to(DATA)) for p in DATA.rglob("*.litmus")}
    assert files == set(VERDICTS) | set(SKIPS)


def _run(text: str, model: str) -> TestResult:
    test = parse_test(text, "imported.litmus")
    return run_test(test, build(test, unroll=2), load_model(model), EngineOptions())


@pytest.mark.parametrize("rel", sorted(VERDICTS))
def test_translation_gives_the_derived_verdict(rel: str) -> None:
    imported = load(str(DATA / rel))
    assert imported.dialect == rel.split("/")[0]
    assert _run(imported.text, "pisa").verdict.value == VERDICTS[rel]


@pytest.mark.parametrize("rel", sorted(RC11_VERDICTS))
def test_rc11_variant_matches_herds_rc11_on_load_buffering(rel: str) -> None:
    imported = load(str(DATA / rel))
    assert _run(imported.text, "pisa-rc11").verdict.value == RC11_VERDICTS[rel]


@pytest.mark.parametrize("rel", sorted(SKIPS))
def test_inexpressible_tests_are_skipped_with_their_reason(rel: str) -> None:
    with pytest.raises(Unsupported) as info:
        load(str(DATA / rel))
    assert info.value.reason is SKIPS[rel]
    assert info.value.span is not None and info.value.span.file.endswith(rel)


def test_opencl_barrier_test_exact_text() -> None:
    rel = "opencl/SB+local+barrier.litmus"
    assert load(str(DATA / rel)).text == (
        "PISA SB+local+barrier\n"
        '"Imported from the herd OpenCL test SB+local+barrier."\n'
        f"source = {DATA / rel}\n"
        "dialect = opencl\n"
        "{\n"
        "  .shared .32b @a = 0;\n"
        "  .shared .32b @b = 0;\n"
        "}\n"
        "\n"
        "P0 @ wg 0, sg 0, gpu 0 {\n"
        "  st.shared.32b [@a], 1;\n"
        "  barrier.workgroup;\n"
        "  ld.shared.32b %r0, [@b];\n"
        "}\n"
        "\n"
        "P1 @ wg 0, sg 1, gpu 0 {\n"
        "  st.shared.32b [@b], 1;\n"
        "  barrier.workgroup;\n"
        "  ld.shared.32b %r0, [@a];\n"
        "}\n"
        "\n"
        "exists (P0:%r0 == 0 \\/ P1:%r0 == 0)\n"
    )
