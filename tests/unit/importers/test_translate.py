"""The translation of each construct, and the reason given for each inexpressible one."""

from __future__ import annotations

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.importers import Reason, Unsupported, import_text


def c11(body1: str, body0: str = "atomic_store_explicit(x, 1, memory_order_relaxed);") -> str:
    return (
        "C T\n{ [x] = 0; [y] = 0; }\n"
        f"P0 (atomic_int* x, atomic_int* y) {{\n  {body0}\n}}\n"
        f"P1 (atomic_int* x, atomic_int* y) {{\n  {body1}\n}}\n"
        "exists (x=1)\n"
    )


def opencl(body0: str, body1: str, where: str = "@wg 0", decl: str = "global") -> str:
    return (
        "OpenCL T\n{ [x] = 0; [y] = 0; }\n"
        f"P0{where} ({decl} atomic_int* x, {decl} atomic_int* y) {{\n  {body0}\n}}\n"
        f"P1{where} ({decl} atomic_int* x, {decl} atomic_int* y) {{\n  {body1}\n}}\n"
        "exists (1:r0=0)\n"
    )


def thread(text: str, proc: int) -> list[str]:
    """The instruction lines of thread `proc` in PISA text."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"P{proc} @"))
    end = lines.index("}", start)
    return [ln.strip() for ln in lines[start + 1 : end]]


def test_c11_mp_relaxed_exact_text() -> None:
    text = import_text(
        "C MP\n{ [x] = 0; [y] = 0; }\n"
        "P0 (atomic_int* x, atomic_int* y) {\n"
        "  atomic_store_explicit(x, 1, memory_order_relaxed);\n"
        "  atomic_store_explicit(y, 1, memory_order_release);\n}\n"
        "P1 (atomic_int* x, atomic_int* y) {\n"
        "  int r0 = atomic_load_explicit(y, memory_order_acquire);\n"
        "  int r1 = *x;\n}\n"
        "exists (1:r0=1 /\\ 1:r1=0)\n",
        "mp.litmus",
    ).text
    assert text == (
        "PISA MP\n"
        '"Imported from the herd C11 test MP."\n'
        "source = mp.litmus\n"
        "dialect = c11\n"
        "{\n"
        "  .global .32b @x = 0;\n"
        "  .global .32b @y = 0;\n"
        "}\n"
        "\n"
        "P0 @ wg 0, gpu 0 {\n"
        "  st.global.relaxed.32b [@x], 1;\n"
        "  st.global.release.system.32b [@y], 1;\n"
        "}\n"
        "\n"
        "P1 @ wg 1, gpu 0 {\n"
        "  ld.global.acquire.system.32b %r0, [@y];\n"
        "  ld.global.32b %r1, [@x];\n"
        "}\n"
        "\n"
        "exists (P1:%r0 == 1 /\\ P1:%r1 == 0)\n"
    )


def test_diy7_header_lines_are_kept_as_metadata() -> None:
    text = import_text(
        'C MP+po+po\n"PodWW Rfe PodRR Fre"\nCycle=Rfe PodRR Fre PodWW\nGenerator=diy7\n'
        "{\n[x]=0;\n[y]=0;\n}\n"
        "P0 (atomic_int* y,atomic_int* x) {\n"
        "  atomic_store_explicit(x,1,memory_order_relaxed);\n}\n"
        "exists (x=1)\n",
        "mp.litmus",
    ).text
    assert text.startswith(
        "PISA MP+po+po\n"
        '"Imported from the herd C11 test MP+po+po: PodWW Rfe PodRR Fre"\n'
        "source = mp.litmus\ndialect = c11\n"
        "herd.Cycle = Rfe PodRR Fre PodWW\nherd.Generator = diy7\n{\n"
    )


def test_opencl_scopes_regions_and_tree() -> None:
    text = import_text(
        "OpenCL T\n{ x = 0; s = 5; }\n"
        "P0 (int* x, int* s) {\n"
        "  atomic_store_explicit(x, 1, memory_order_release, memory_scope_work_group);\n"
        "  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acq_rel, "
        "memory_scope_device);\n}\n"
        "P1 (int* x, int* s) {\n"
        "  int r0 = atomic_load_explicit(x, memory_order_seq_cst, memory_scope_all_svm_devices);\n"
        "  atomic_work_item_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE, "
        "memory_order_acq_rel, memory_scope_sub_group);\n"
        "  int r1 = atomic_load(s);\n}\n"
        "scopes: (device (work_group (sub_group P0) (sub_group P1)))\n"
        "regions: x:global, s:local\n"
        "exists (1:r0=1 /\\ s=5)\n",
        "t.litmus",
    ).text
    assert "  .shared .32b @s = 5;" in text
    assert "P0 @ wg 0, sg 0, gpu 0 {" in text and "P1 @ wg 0, sg 1, gpu 0 {" in text
    assert thread(text, 0) == [
        "st.global.release.workgroup.32b [@x], 1;",
        "fence.shared.acq_rel.gpu;",
    ]
    assert thread(text, 1) == [
        "ld.global.seq_cst.system.32b %r0, [@x];",
        "fence.subgroup;",
        "ld.shared.seq_cst.gpu.32b %r1, [@s];",
    ]
    assert text.endswith("exists (P1:%r0 == 1 /\\ @s == 5)\n")


def test_local_variable_of_one_of_several_work_groups_is_named_by_its_work_group() -> None:
    text = import_text(
        "OpenCL T\n{ [s] = 0; [g] = 0; }\n"
        "P0@wg 0 (local int* s) {\n  *s = 1;\n}\n"
        "P1@wg 1 (global int* g) {\n  *g = 1;\n}\n"
        "exists (s=1 /\\ g=1)\n",
        "t.litmus",
    ).text
    assert text.endswith("exists (wg0:@s == 1 /\\ @g == 1)\n")


def test_if_else_and_expressions() -> None:
    text = import_text(
        c11(
            "int r0 = atomic_load_explicit(y, memory_order_relaxed);\n"
            "  int r1 = 0;\n"
            "  if (r0 != 0 && r1 < 3) { r1 = r0 + 2; } else { r1 = 7 ^ r0; }\n"
            "  atomic_store_explicit(x, r1 * 2, memory_order_relaxed);"
        ),
        "t.litmus",
    ).text
    assert thread(text, 1) == [
        "ld.global.relaxed.32b %r0, [@y];",
        "mov.32b %r1, 0;",
        "ucmp.ne.32b %_p1, %r0, 0;",
        "sel.32b %_t2, 1, 0, %_p1;",
        "scmp.lt.32b %_p3, %r1, 3;",
        "sel.32b %_t4, 1, 0, %_p3;",
        "and.32b %_t5, %_t2, %_t4;",
        "ucmp.ne.32b %_p6, %_t5, 0;",
        "goto.cond !%_p6, L1;",
        "iadd.32b %r1, %r0, 2;",
        "goto L2;",
        "L1:",
        "mov.32b %_t7, 7;",
        "xor.32b %r1, %_t7, %r0;",
        "L2:",
        "umul.32b %_t8, %r1, 2;",
        "st.global.relaxed.32b [@x], %_t8;",
    ]


def test_register_written_only_in_a_branch_starts_at_zero() -> None:
    text = import_text(
        c11(
            "int r0 = atomic_load_explicit(y, memory_order_relaxed);\n  if (r0) { int r1 = *x; }"
        ).replace("exists (x=1)", "exists (1:r1=0)"),
        "t.litmus",
    ).text
    assert "  P1:%r1 = 0;" in text
    assert "ucmp.ne.32b %_p1, %r0, 0;" in thread(text, 1)


def test_rmw_exchange_and_cas_with_register_expected() -> None:
    text = import_text(
        c11(
            "int r0 = atomic_fetch_sub_explicit(x, 1, memory_order_acq_rel);\n"
            "  int r1 = atomic_exchange_explicit(y, 3, memory_order_release);\n"
            "  int e = 3;\n"
            "  int r2 = atomic_compare_exchange_strong_explicit(y, &e, 4, "
            "memory_order_release, memory_order_relaxed);"
        ),
        "t.litmus",
    ).text
    assert thread(text, 1) == [
        "iatom.global.acq_rel.system.sub.32b %r0, [@x], 1;",
        "iatom.global.release.system.xchg.32b %r1, [@y], 3;",
        "mov.32b %e, 3;",
        "iatom.global.release.system.cas.32b %_t1, [@y], %e, 4;",
        "ucmp.eq.32b %_p2, %_t1, %e;",
        "sel.32b %r2, 1, 0, %_p2;",
        "mov.32b %e, %_t1;",
    ]


def test_relaxed_fence_is_dropped_and_seq_cst_fence_is_global_system() -> None:
    text = import_text(
        c11(
            "atomic_thread_fence(memory_order_relaxed);\n"
            "  atomic_thread_fence(memory_order_seq_cst);"
        ),
        "t.litmus",
    ).text
    assert thread(text, 1) == ["fence.global.seq_cst.system;"]


def test_herd_condition_forms() -> None:
    text = import_text(
        c11("int r0 = *y;").replace(
            "exists (x=1)", "locations [y; 1:r0;]\n~exists (~([x]=1) \\/ 1:r0 != -1 => y=0)"
        ),
        "t.litmus",
    ).text
    assert "locations [@y; P1:%r0;]" in text
    assert text.endswith("~exists ((~(@x == 1) \\/ P1:%r0 != -1) -> @y == 0)\n")


SKIPS = [
    (c11("int r0 = atomic_fetch_add(x, 1);"), Reason.SC_RMW),
    (c11("int r0 = atomic_load_explicit(x, memory_order_consume);"), Reason.CONSUME),
    (c11("int r0 = atomic_load_explicit(x, memory_order_release);"), Reason.ORDER),
    (
        c11(
            "int e = 0;\n  int r0 = atomic_compare_exchange_strong_explicit(x, &e, 1, "
            "memory_order_acq_rel, memory_order_relaxed);"
        ),
        Reason.CAS_ORDER,
    ),
    (
        c11(
            "int e = 0;\n  int r0 = atomic_compare_exchange_weak_explicit(x, &e, 1, "
            "memory_order_relaxed, memory_order_relaxed);"
        ),
        Reason.WEAK_CAS,
    ),
    (c11("int r0 = 0;\n  while (r0 == 0) { r0 = *x; }"), Reason.LOOP),
    (c11("int r0 = *x / 2;"), Reason.OPERATOR),
    (c11("int r0 = x;"), Reason.POINTER),
    (c11("long r0 = *x;"), Reason.TYPE),
    (c11("spin_lock(x);"), Reason.CALL),
    (opencl("atomic_thread_fence(memory_order_seq_cst);", "int r0 = *x;"), Reason.CALL),
    (
        opencl(
            "atomic_store_explicit(x, 1, memory_order_release, memory_scope_work_item);",
            "int r0 = *x;",
        ),
        Reason.WORK_ITEM_SCOPE,
    ),
    (
        opencl(
            "atomic_store_explicit(x, 1, memory_order_release, memory_scope_sub_group);",
            "int r0 = *x;",
        ),
        Reason.SUBGROUP_ATOMIC,
    ),
    (
        opencl(
            "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, "
            "memory_scope_sub_group);",
            "int r0 = *x;",
        ),
        Reason.SUBGROUP_FENCE,
    ),
    (
        opencl(
            "atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_release, "
            "memory_scope_all_svm_devices);",
            "int r0 = *x;",
            decl="local",
        ),
        Reason.SYSTEM_LOCAL_FENCE,
    ),
    (
        opencl(
            "atomic_work_item_fence(CLK_IMAGE_MEM_FENCE, memory_order_release, "
            "memory_scope_device);",
            "int r0 = *x;",
        ),
        Reason.FENCE_SPACES,
    ),
    (
        opencl("*x = 1;", "int r0 = *x;", where="", decl="local"),
        Reason.LOCAL_SHARING,
    ),
    (opencl("*x = 1;", "int r0 = *x;", where="@cluster 0"), Reason.PLACEMENT),
    (opencl("*x = 1;", "int r0 = *x;", decl="constant"), Reason.SPACE),
    (
        opencl(
            "*x = 1;\n  work_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_device);",
            "work_group_barrier(CLK_GLOBAL_MEM_FENCE);\n  int r0 = *x;",
        ),
        Reason.BARRIER,
    ),
    (c11("int r0 = *x;").replace("exists (x=1)", "exists (3:r0=1)"), Reason.CONDITION),
]


@pytest.mark.parametrize(
    ("text", "reason"), SKIPS, ids=[r.value + str(i) for i, (_, r) in enumerate(SKIPS)]
)
def test_skip_reasons(text: str, reason: Reason) -> None:
    with pytest.raises(Unsupported) as info:
        import_text(text, "t.litmus")
    assert info.value.reason is reason
    assert info.value.render().startswith("t.litmus:")
    assert info.value.render().endswith(f"[{reason.value}]")


def test_neither_dialect_names_the_expected_ones() -> None:
    with pytest.raises(PisaMMError) as info:
        import_text("AArch64 MP\n{ }\n P0 ;\n", "a.litmus")
    text = info.value.render()
    assert text.startswith("a.litmus:1:1: error: not a test in an importable dialect")
    assert "herd C11 test (first line `C NAME`)" in text and "OpenCL test" in text


def test_syntax_error_is_located() -> None:
    with pytest.raises(PisaMMError) as info:
        import_text(
            "C T\n{ [x] = 0; }\nP0 (atomic_int* x) {\n  *x = ;\n}\nexists (x=1)\n", "s.litmus"
        )
    assert info.value.render(getattr(info.value, "sources", None)).startswith(
        "s.litmus:4:8: error: unexpected ';' in the herd C11 dialect [syntax]"
    )


@pytest.mark.parametrize(
    ("tree", "places"),
    [
        (
            "(system (device (work_group P0)) (device (work_group P1)))",
            ("wg 0, gpu 0", "wg 1, gpu 1"),
        ),
        ("(device P0 P1)", ("wg 0, gpu 0", "wg 1, gpu 0")),
        ("(dev (wg (sg P1) (sg P0)))", ("wg 0, sg 1, gpu 0", "wg 0, sg 0, gpu 0")),
    ],
)
def test_scope_trees(tree: str, places: tuple[str, str]) -> None:
    text = import_text(
        opencl("*x = 1;", "int r0 = *x;", where="").replace("exists", f"scopes: {tree}\nexists"),
        "t.litmus",
    ).text
    assert f"P0 @ {places[0]} {{" in text and f"P1 @ {places[1]} {{" in text
