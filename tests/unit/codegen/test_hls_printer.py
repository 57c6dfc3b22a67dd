"""The HLS printer (spf.codegen.hls) and the pragma placement checker (spf.codegen.hls_check).

Generated sources are parsed with the checker (loops, pragmas, interfaces) rather than
matched as text, so each test says which loop a pragma must open.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf
import spf.kernels
from spf import cexpr as cx
from spf.codegen.hls import (
    bounds_header,
    constant_trip_count,
    expr_range,
    extent_expr,
    generate,
    generate_unit,
    local_bytes,
    parse_bounds_header,
    print_hls,
    trip_range,
)
from spf.codegen.hls_check import Report, check, scan
from spf.codegen.loop_ast import Block, Call, For, Int, Op, UFRead, Var
from spf.codegen.program import lower
from spf.errors import CodegenError
from spf.formats import builtin

if TYPE_CHECKING:
    from collections.abc import Callable

BOUNDS = {"N": 64, "M": 64, "K": (1, 64)}


def loop_pragmas(report: Report, var: str) -> list[list[str]]:
    """For each loop over ``var``: its opening pragmas as ``DIRECTIVE key=value ...``."""
    out = []
    for loop in report.loops_of(var):
        out.append(
            [" ".join([p.directive, *(f"{k}={v}" for k, v in p.options)]) for p in loop.pragmas]
        )
    return out


def pipelined_gemm() -> spf.Computation:
    comp = spf.kernels.gemm()
    s = comp.stmts[0]
    s.interchange("j", "k")
    s.pipeline("j")
    return comp


# ----------------------------------------------------------------------------- interfaces
def test_top_function_is_extern_c_with_one_interface_per_argument() -> None:
    report = check(generate(spf.kernels.spmv_csr()))
    (fn,) = report.functions
    assert fn.name == "spmv_csr"
    assert fn.extern_c
    assert fn.params == ("M", "N", "NNZ", "col", "rowptr", "y", "A", "x")
    modes = {p.get("port"): p.flags[0] for p in fn.interfaces}
    assert modes == {
        "M": "s_axilite",
        "N": "s_axilite",
        "NNZ": "s_axilite",
        "col": "m_axi",
        "rowptr": "m_axi",
        "y": "m_axi",
        "A": "m_axi",
        "x": "m_axi",
        "return": "s_axilite",
    }
    bundles = [p.get("bundle") for p in fn.interfaces if p.flags[0] == "m_axi"]
    assert bundles == ["gmem0", "gmem1", "gmem2", "gmem3", "gmem4"]
    assert all(p.get("offset") == "slave" for p in fn.interfaces if p.flags[0] == "m_axi")


def test_index_arrays_are_const_pointers_and_no_c_only_constructs_remain(
    golden: Callable[[str, str], None],
) -> None:
    source = generate(spf.kernels.spmv_csr(index_dtype="int64"))
    # const int64_t *rowptr / *col, double *y, <cstdint>: the whole text is golden
    golden("codegen/hls/spmv_csr_int64.cpp", source)
    for banned in ("restrict", "omp", "spf_acc", "calloc", "malloc", "free(", "<stdlib.h>"):
        assert banned not in source, banned


def test_m_axi_depth_follows_bounds() -> None:
    report = check(generate(spf.kernels.gemm(), hls_bounds={"N": 8, "M": 16, "K": 4}))
    depth = {p.get("port"): p.get("depth") for p in report.functions[0].interfaces}
    assert depth == {
        "C": "128",
        "A": "32",
        "B": "64",
        "K": None,
        "M": None,
        "N": None,
        "return": None,
    }
    unbounded = check(generate(spf.kernels.gemm()))
    assert all(p.get("depth") is None for p in unbounded.functions[0].interfaces)


def test_index_array_ports_get_their_depth_from_the_uf_domain() -> None:
    """Index arrays are m_axi ports too: C/RTL co-simulation needs their depth as much as
    the data spaces' (rowptr and col had none, whatever the bounds)."""
    source = generate(spf.kernels.spmv_csr(), hls_bounds={"N": 20, "NNZ": 30, "M": 10})
    depth = {p.get("port"): p.get("depth") for p in check(source).functions[0].interfaces}
    assert (depth["rowptr"], depth["col"], depth["y"], depth["A"]) == ("21", "30", "20", "30")
    ell = generate(spf.kernels.spmv(builtin("ELL")), hls_bounds={"N": 20, "W": 30, "M": 10})
    depth = {p.get("port"): p.get("depth") for p in check(ell).functions[0].interfaces}
    assert depth["col"] == "600"  # a 2-d index array col(p, w): N * W entries


# ----------------------------------------------------------------------------- loop pragmas
def test_pipeline_opens_the_pipelined_loop() -> None:
    report = check(generate(pipelined_gemm(), hls_bounds=BOUNDS))
    assert [loop.var for loop in report.loops] == ["i", "k", "j"]
    assert report.loops_of("j")[0].parents == ("i", "k")
    assert loop_pragmas(report, "j") == [["PIPELINE ii=1", "LOOP_TRIPCOUNT min=0 max=64"]]
    assert loop_pragmas(report, "k") == [["LOOP_TRIPCOUNT min=1 max=64"]]
    assert loop_pragmas(report, "i") == [["LOOP_TRIPCOUNT min=0 max=64"]]


def test_pipeline_initiation_interval_and_unroll_factor() -> None:
    comp = spf.kernels.gemm()
    s = comp.stmts[0]
    s.pipeline("k", ii=3)
    s.unroll("j", 2)
    report = check(generate(comp))
    assert loop_pragmas(report, "k")[0][0] == "PIPELINE ii=3"
    assert loop_pragmas(report, "j")[0][0] == "UNROLL factor=2"
    assert loop_pragmas(report, "i") == [[]]


def test_vectorized_loop_becomes_a_partial_unroll() -> None:
    comp = spf.Computation("scale")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(j) = 2.0 * $a$(j);", "{[j]: 0 <= j < N}", "{[j]->[0,j,0]}"))
    comp.stmts[0].vectorize("j", 4, "j0", "j1")
    report = check(generate(comp))
    assert any(p.startswith("UNROLL factor=4") for p in loop_pragmas(report, "j1")[0])


def test_tripcount_without_bounds_is_a_comment_naming_the_option() -> None:
    source = generate(pipelined_gemm())
    report = check(source)
    assert all(p.directive != "LOOP_TRIPCOUNT" for p in report.pragmas)
    assert "// no LOOP_TRIPCOUNT for j: no bounds given (hls_bounds={'M': max})" in source


def test_tripcount_of_uf_bounded_loop_needs_hls_tripcounts() -> None:
    comp = spf.kernels.spmv_csr()
    comp.stmts[0].pipeline("k")
    source = generate(comp, hls_bounds={"N": 1000})
    assert "no LOOP_TRIPCOUNT for k: its bounds read rowptr" in source
    report = check(generate(comp, hls_bounds={"N": 1000}, hls_tripcounts={"k": (0, 32)}))
    assert loop_pragmas(report, "k") == [["PIPELINE ii=1", "LOOP_TRIPCOUNT min=0 max=32"]]
    assert loop_pragmas(report, "i") == [["LOOP_TRIPCOUNT min=0 max=1000"]]


def test_constant_loops_get_no_tripcount() -> None:
    comp = spf.Computation("fixed")
    comp.add_data_space("a", "double", shape=(8, 4))
    comp.add_stmt(
        spf.Stmt("$a$(i, j) = i + j;", "{[i,j]: 0 <= i < 8 && 0 <= j < 4}", "{[i,j]->[0,i,0,j,0]}")
    )
    comp.stmts[0].pipeline("j")
    report = check(generate(comp))
    assert loop_pragmas(report, "j") == [["PIPELINE ii=1"]]
    assert report.functions[0].interfaces[0].get("depth") == "32"


def test_tiled_loops_get_tripcounts_from_tile_sizes() -> None:
    comp = spf.kernels.gemm()
    comp.stmts[0].tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    comp.stmts[0].pipeline("k")
    source = generate(comp, hls_bounds={"N": 64, "M": 64, "K": 64})
    report = check(source)
    assert "no LOOP_TRIPCOUNT" not in source
    # interval arithmetic: max is an upper bound (guards are not used), min a lower bound
    assert {p[0].split()[-1] for p in loop_pragmas(report, "i0")} == {"max=16"}
    assert {tuple(p) for p in loop_pragmas(report, "j0")} == {("LOOP_TRIPCOUNT min=0 max=8",)}
    # full tiles have constant trip counts (no pragma); partial ones are bounded
    i1 = {tuple(p) for p in loop_pragmas(report, "i1")}
    assert () in i1
    assert ("LOOP_TRIPCOUNT min=0 max=4",) in i1
    assert ("LOOP_TRIPCOUNT min=0 max=7",) in {tuple(p) for p in loop_pragmas(report, "j1")}
    assert all(p[0] == "PIPELINE ii=1" for p in loop_pragmas(report, "k"))


def test_pipelined_loop_around_variable_loop_is_refused() -> None:
    comp = spf.kernels.gemm()
    comp.stmts[0].pipeline("j")
    with pytest.raises(
        CodegenError, match=r"loop j is pipelined.*loop k.*not a constant.*pipeline loop k"
    ):
        generate(comp)


def test_pipelined_loop_may_contain_a_constant_loop() -> None:
    comp = spf.Computation("rows")
    comp.add_data_space("a", "double", shape=("N", 4))
    comp.add_stmt(
        spf.Stmt(
            "$a$(i, j) = 2.0 * $a$(i, j);",
            "{[i,j]: 0 <= i < N && 0 <= j < 4}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    comp.stmts[0].pipeline("i")
    report = check(generate(comp))
    assert loop_pragmas(report, "i")[0][0] == "PIPELINE ii=1"


def test_nested_pipelines_are_refused() -> None:
    comp = spf.Computation("rows")
    comp.add_data_space("a", "double", shape=("N", 4))
    comp.add_stmt(
        spf.Stmt("$a$(i, j) = 1.0;", "{[i,j]: 0 <= i < N && 0 <= j < 4}", "{[i,j]->[0,i,0,j,0]}")
    )
    comp.stmts[0].pipeline("i")
    comp.stmts[0].pipeline("j")
    with pytest.raises(CodegenError, match="loop j is pipelined inside pipelined loop i"):
        generate(comp)


# ----------------------------------------------------------------------------- local arrays
def folded_blur() -> spf.Computation:
    comp = spf.kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", 2)
    s1.after(s0, "i")
    s0.storage_fold("i", 3)
    return comp


def test_local_buffer_needs_bounds() -> None:
    with pytest.raises(
        CodegenError, match=r"buffer 'bx_buf' has extent 'M-2'.*hls_bounds=\{'M': <max>\}"
    ):
        generate(folded_blur())


def test_local_buffer_is_a_fixed_multidimensional_array_with_partition() -> None:
    comp = folded_blur()
    comp.buffer("bx_buf").partition(0, 3, "complete")
    source = generate(comp, hls_bounds={"N": 100, "M": 50})
    assert "double bx_buf[3][48] = {};" in source
    assert "#define bx(t0, t1) bx_buf[(t0) % 3][t1]" in source
    report = check(source)
    (part,) = [p for p in report.pragmas if p.directive == "ARRAY_PARTITION"]
    assert part.options == (("variable", "bx_buf"), ("type", "complete"), ("dim", "1"))
    assert "bx_buf" not in report.functions[0].params


def test_cyclic_partition_on_second_dimension() -> None:
    comp = spf.kernels.blur2d()
    buf = comp.add_buffer("bx_buf", ("N", "M-2"), "double", scope="stack")
    comp.stmts[0].store_in(buf, ["i", "j"])
    buf.partition(1, 4, "cyclic")
    source = generate(comp, hls_bounds={"N": 32, "M": 32})
    assert "double bx_buf[32][30];" in source  # stack buffers are not zero-filled
    report = check(source)
    (part,) = [p for p in report.pragmas if p.directive == "ARRAY_PARTITION"]
    assert part.options == (
        ("variable", "bx_buf"),
        ("type", "cyclic"),
        ("factor", "4"),
        ("dim", "2"),
    )


def test_partitioned_argument_buffer_is_refused() -> None:
    comp = spf.kernels.blur2d()
    buf = comp.add_buffer("bx_buf", ("N", "M-2"), "double", scope="global")
    comp.stmts[0].store_in(buf, ["i", "j"])
    buf.partition(0, 2, "block")
    with pytest.raises(CodegenError, match=r"'bx_buf' is a kernel argument.*cannot partition"):
        generate(comp)


def with_locals() -> spf.Computation:
    """``x`` doubled through a local ``_i0_tmp[n]``, then scaled by a local scalar ``_i1_a``."""
    twice = spf.Computation("twice")
    twice.add_parameter("x", "double*")
    twice.add_data_space("tmp", "double", shape=("n",))
    twice.add_stmt(spf.Stmt("$tmp$(i) = 2 * $x$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    twice.add_stmt(spf.Stmt("$x$(i) += $tmp$(i);", "{[i]: 0 <= i < n}", "{[i]->[1,i,0]}"))
    scale = spf.Computation("scale")
    scale.add_parameter("v", "double*")
    scale.add_parameter("a", "double")
    scale.add_stmt(spf.Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    main = spf.Computation("locals")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(twice, "{[]}", "{[]->[0]}", ["x"])
    main.append_computation(scale, "{[]}", "{[]->[1]}", ["x", "0.5"])
    return main


def test_local_bytes_of_a_source_text_match_the_unit_record() -> None:
    blur = spf.kernels.blur2d()
    s0, s1 = blur.stmts
    s1.shift("i", 2).after(s0, "i")
    s0.storage_fold("i", 3)
    unit = generate_unit(blur, hls_bounds={"N": 64, "M": 64})
    assert local_bytes(unit.source) == unit.local_bytes == 3 * 62 * 8
    assert local_bytes("  const float w[2][4] = {};\n  int64_t n = 3;\n") == 32


def test_local_data_spaces_are_zero_filled_fixed_arrays() -> None:
    with pytest.raises(
        CodegenError, match=r"local data space '_i0_tmp' has extent 'n'.*'n': <max>"
    ):
        generate(with_locals())
    source = generate(with_locals(), hls_bounds={"n": 100})
    assert "double _i0_tmp[100] = {};" in source
    assert "#define _i0_tmp(t0) _i0_tmp[t0]" in source
    report = check(source)
    assert report.functions[0].params == ("n", "x")


def test_bad_bound_options() -> None:
    with pytest.raises(CodegenError, match="unknown name 'Q'; known names: K, M, N"):
        generate(spf.kernels.gemm(), hls_bounds={"Q": 4})
    with pytest.raises(CodegenError, match=r"hls_bounds\['N'\] must be a maximum"):
        generate(spf.kernels.gemm(), hls_bounds={"N": (5, 2)})
    with pytest.raises(CodegenError, match=r"hls_bounds\['N'\] must be a maximum"):
        generate(spf.kernels.gemm(), hls_bounds={"N": True})
    with pytest.raises(
        CodegenError, match="hls_tripcounts: unknown name 'z'; known names: i, j, k"
    ):
        generate(spf.kernels.gemm(), hls_tripcounts={"z": 4})


def test_bounds_may_be_numpy_integers() -> None:
    """``hls_bounds={"N": rowptr.max()}`` is a numpy integer: it was refused as 'must be a
    maximum (int)'."""
    bounds = {"N": np.int64(8), "M": (np.int32(1), 4), "K": np.uint16(2)}
    assert generate(spf.kernels.gemm(), hls_bounds=bounds) == generate(
        spf.kernels.gemm(), hls_bounds={"N": 8, "M": (1, 4), "K": 2}
    )


# ----------------------------------------------------------------------------- statements
def test_library_call_in_statement_is_refused() -> None:
    # the statement parser already refuses unknown calls; the printer checks the Program too
    program = lower(spf.kernels.dense_mv().ir)
    (s0,) = program.stmts
    printf = cx.Call("printf", (cx.Num('"%d"'), cx.Param("j")))
    body = (cx.Assign(cx.Access("y", (cx.Param("i"),)), "+=", printf),)
    printing = replace(s0, body=body, calls=s0.calls | {"printf"})
    bad = replace(program, stmts=(printing,))
    with pytest.raises(
        CodegenError, match=r"statement s0 calls printf\(\), which Vitis HLS cannot"
    ):
        print_hls(bad)
    free = (cx.Assign(cx.Name("t"), "=", cx.Call("free", (cx.Name("x"),))),)
    freed = replace(program, stmts=(replace(s0, body=free, calls=frozenset({"free"})),))
    with pytest.raises(CodegenError, match=r"calls free\(\)"):
        print_hls(freed)


@pytest.mark.parametrize(
    "body", ["$a$(i) = (_Bool)$b$(i) + 1;", "{ _Bool t = $b$(i) > 0; $a$(i) = t; }"]
)
def test_c99_bool_in_a_statement_is_refused(body: str) -> None:
    """gcc takes C99's _Bool, g++ (the C simulation) and Vitis' C++ front end do not: a raw
    g++ CompileError before; a CodegenError naming the statement and the C++ spelling now."""
    comp = spf.Computation("boolean")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(spf.Stmt(body, "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    assert "_Bool" in comp.codegen("c")
    with pytest.raises(CodegenError, match=r"statement s0 uses _Bool, .*C\+\+"):
        generate(comp)


def test_math_calls_are_allowed() -> None:
    comp = spf.Computation("m")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(
        spf.Stmt("$a$(i) = sqrt(fabs($a$(i))) + exp(0.0);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}")
    )
    check(generate(comp))


def test_codegen_dispatch_uses_the_hls_printer() -> None:
    source = spf.kernels.gemm().codegen("hls")
    assert source == generate(spf.kernels.gemm())
    assert parse_bounds_header(source) == {}


def test_bounds_header_round_trip() -> None:
    header = bounds_header({"N": (0, 64), "M": (2, 8)})
    assert header == "// spf-hls-bounds: M=2..8 N=0..64"
    assert parse_bounds_header(f"#include <x>\n{header}\n") == {"N": (0, 64), "M": (2, 8)}
    source = generate(spf.kernels.gemm(), hls_bounds={"N": 3, "M": (1, 4), "K": 2})
    assert parse_bounds_header(source) == {"N": (0, 3), "M": (1, 4), "K": (0, 2)}


# ----------------------------------------------------------------------------- intervals
def test_expr_range() -> None:
    env = {"N": (0, 10), "i": (0, 9)}
    assert expr_range(extent_expr("N-2"), env) == (-2, 8)
    assert expr_range(extent_expr("(N) * (3)"), env) == (0, 30)
    assert expr_range(Op("min", (Int(3), Op("-", (Var("N"), Var("i"))))), env) == (-9, 3)
    assert expr_range(Op("floord", (Var("N"), Int(4))), env) == (0, 2)
    assert expr_range(Op("%", (Var("i"), Int(4))), env) == (0, 3)
    assert expr_range(Op("select", (Var("i"), Int(1), Var("N"))), env) == (0, 10)
    assert expr_range(UFRead("rowptr", (Var("i"),)), env) is None
    assert expr_range(Var("M"), env) is None
    with pytest.raises(CodegenError, match="only"):
        extent_expr("N ** 2")


@pytest.mark.parametrize("name", ["None", "True", "lambda", "pass", "yield", "is", "in", "await"])
def test_extents_may_use_names_that_are_python_words(name: str) -> None:
    """An extent is C text: a symbolic constant named like a Python keyword (``lambda``) or
    constant (``True``, once read as the number 1) is a name like any other; the C target
    accepts it, and the HLS printer refused it as 'not an integer expression'."""
    assert extent_expr(f"({name}) * (3) - 2") == Op("-", (Op("*", (Var(name), Int(3))), Int(2)))
    assert expr_range(extent_expr(f"{name} - 2"), {name: (0, 10)}) == (-2, 8)


def test_trip_counts() -> None:
    body = Block((Call("s0", ()),))
    loop = For("j", Var("i"), Op("<", (Var("j"), Var("N"))), 1, body, 1)
    assert trip_range(loop, {"N": (0, 10), "i": (0, 9)}) == (0, 10)
    assert constant_trip_count(loop) is None
    fixed = For("j", Var("i"), Op("<=", (Var("j"), Op("+", (Var("i"), Int(3))))), 1, body, 1)
    assert constant_trip_count(fixed) == 4
    stepped = For("j", Int(0), Op("<", (Var("j"), Int(10))), 3, body, 1)
    assert constant_trip_count(stepped) == 4
    both = For(
        "j",
        Int(0),
        Op("&&", (Op("<", (Var("j"), Int(10))), Op("<", (Var("j"), Var("N"))))),
        1,
        body,
        1,
    )
    assert trip_range(both, {"N": (0, 100)}) == (0, 10)


# ----------------------------------------------------------------------------- the checker
GOOD = """\
#include <cstdint>
#define s0(i) a[i] = 0; /* a comment with { braces */
extern "C" void f(int64_t n, double *a)
{
  #pragma HLS INTERFACE m_axi port=a offset=slave bundle=gmem0
  #pragma HLS INTERFACE s_axilite port=n
  #pragma HLS INTERFACE s_axilite port=return
  double buf[4][8];
  #pragma HLS ARRAY_PARTITION variable=buf type=cyclic factor=2 dim=2
  for (int64_t i = 0; i < n; i++)  // a loop
  {
    #pragma HLS PIPELINE II=1
    #pragma HLS LOOP_TRIPCOUNT min=0 max=16
    if (i > 0) { a[i] = buf[0][0]; } else a[i] = 1;
  }
}
"""


def test_checker_accepts_well_placed_pragmas() -> None:
    report = check(GOOD)
    assert [(loop.var, len(loop.pragmas)) for loop in report.loops] == [("i", 2)]
    assert report.functions[0].pointers == frozenset({"a"})


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            ("    #pragma HLS PIPELINE II=1\n", "    a[0] = 1;\n    #pragma HLS PIPELINE II=1\n"),
            "PIPELINE must be the first statement of a loop body",
        ),
        (
            ("    #pragma HLS PIPELINE II=1\n", "    #pragma HLS PIPELINE II=0\n"),
            "ii must be at least 1",
        ),
        (("min=0 max=16", "min=20 max=16"), "min > max"),
        (("min=0 max=16", "min=1"), "LOOP_TRIPCOUNT needs max="),
        (
            (
                "  double buf[4][8];\n",
                "  a[0] = 0;\n  double buf[4][8];\n  #pragma HLS UNROLL factor=2\n",
            ),
            "UNROLL must be the first statement of a loop body",
        ),
        (("  #pragma HLS INTERFACE s_axilite port=n\n", ""), "no INTERFACE pragma for port n"),
        (("port=return", "port=q"), "port=q is not a parameter of f"),
        (("m_axi port=a", "m_axi port=n"), "m_axi needs a pointer or array parameter"),
        (("variable=buf", "variable=bug"), "no local array bug declared before the pragma"),
        (("variable=buf", "variable=a"), "a is an argument; Vitis cannot partition it"),
        (("dim=2", "dim=3"), "dim=3 is not within the rank 2 of buf"),
        (("type=cyclic factor=2", "type=cyclic"), "cyclic partitioning needs factor="),
        (("PIPELINE II=1", "PIPELIN II=1"), "unknown HLS directive PIPELIN"),
        (
            ("  double buf[4][8];\n", "  double *buf = (double *)malloc(64);\n"),
            "dynamic allocation (malloc)",
        ),
        (("a[i] = 1;", "f(n, a);"), "recursive call of f"),
        (
            (
                "    #pragma HLS PIPELINE II=1\n",
                "    #pragma omp simd\n    #pragma HLS PIPELINE II=1\n",
            ),
            "OpenMP pragma in HLS code",
        ),
        (
            (
                "  #pragma HLS INTERFACE s_axilite port=return\n",
                "  a[0] = 0;\n  #pragma HLS INTERFACE s_axilite port=return\n",
            ),
            "INTERFACE must open the function body",
        ),
    ],
)
def test_checker_reports_misplaced_or_bad_pragmas(edit: tuple[str, str], problem: str) -> None:
    old, new = edit
    assert old in GOOD
    report = scan(GOOD.replace(old, new, 1))
    assert any(problem in p for p in report.problems), report.problems
    with pytest.raises(CodegenError, match="HLS pragma problems"):
        check(GOOD.replace(old, new, 1))


def test_checker_pragma_after_loop_body_belongs_to_no_loop() -> None:
    source = GOOD.replace("  }\n}\n", "  }\n  #pragma HLS PIPELINE II=1\n}\n")
    assert any("PIPELINE must be the first statement" in p for p in scan(source).problems)


def test_checker_sees_loops_without_braces_and_while_loops() -> None:
    source = GOOD.replace(
        "    if (i > 0)",
        "    for (int64_t j = 0; j < 4; j++) a[j] = 0;\n    while (n < 0) { n++; }\n    if (i > 0)",
    )
    report = check(source)
    assert [(loop.var, loop.parents) for loop in report.loops] == [
        ("i", ()),
        ("j", ("i",)),
        ("", ("i",)),
    ]


def test_checker_finds_a_pragma_moved_out_of_place_in_generated_code() -> None:
    source = generate(pipelined_gemm())
    assert check(source).loops_of("j")[0].pragmas
    lines = source.splitlines()
    k = next(i for i, line in enumerate(lines) if "PIPELINE" in line)
    call = next(i for i, line in enumerate(lines) if line.strip() == "s0(i, j, k);")
    lines.insert(call + 1, lines.pop(k))  # the pragma now follows the statement
    report = scan("\n".join(lines))
    assert report.loops_of("j")[0].pragmas == ()
    assert any("PIPELINE must be the first statement of a loop body" in p for p in report.problems)


def test_checker_skips_multiline_macros_and_block_comments() -> None:
    macro = (
        "#define s1(i) do { \\\n  a[i] = 0; \\\n  for (;;) { } \\\n} while (0)\n/* for (i) { */\n"
    )
    report = check(GOOD.replace("extern", macro + "extern", 1))
    assert [loop.var for loop in report.loops] == ["i"]


# ----------------------------------------------------------------------------- audit fixes
def _one_iteration_j(tag: Callable[[spf.Stmt], object]) -> spf.Computation:
    comp = spf.Computation("one")
    comp.add_data_space("x", "double", shape=("N", 4))
    s = comp.add_stmt(
        spf.Stmt("$x$(i,j) = 1.0;", "{[i,j]: 0<=i<N && j = 2}", "{[i,j]->[0,i,0,j,0]}")
    )
    tag(s)
    return comp


@pytest.mark.parametrize(
    ("tag", "pragma"),
    [(lambda s: s.pipeline("j"), "PIPELINE"), (lambda s: s.unroll("j", 2), "UNROLL")],
)
def test_directive_on_a_loop_codegen_removes_warns_naming_it(
    tag: Callable[[spf.Stmt], object], pragma: str
) -> None:
    """``j = 2`` has one iteration: isl prints no ``j`` loop, so the directive had nowhere
    to go and was dropped silently; now a DroppedTagWarning names the statement and loop."""
    words = rf"statement s0: loop j is tagged .*no #pragma HLS {pragma}"
    with pytest.warns(spf.DroppedTagWarning, match=words):
        src = generate(_one_iteration_j(tag), hls_bounds={"N": 16})
    assert f"HLS {pragma}" not in src
    with pytest.warns(spf.DroppedTagWarning, match=words):
        _one_iteration_j(tag).codegen("hls", hls_bounds={"N": 16})


def test_directive_on_a_kept_loop_does_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    src = generate(pipelined_gemm(), hls_bounds=BOUNDS)
    assert "#pragma HLS PIPELINE II=1" in src
    assert not [w for w in recwarn if issubclass(w.category, spf.DroppedTagWarning)]


def test_partition_of_a_rank_0_buffer_is_refused_naming_it() -> None:
    comp = spf.Computation("r0")
    buf = comp.add_buffer("acc", (), "double", scope="stack")
    with pytest.raises(spf.ArgumentError, match="buffer 'acc' is a scalar \\(rank 0\\)"):
        buf.partition(0, 2, "cyclic")


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ({"hls_bounds": {"N": 2**70}}, r"hls_bounds\['N'\]: the constant 1180591620717411303424"),
        ({"hls_bounds": {"N": 2**62}}, r"local array double t\[4611686018427387904\] takes"),
    ],
)
def test_bounds_beyond_int64_are_a_codegen_error_naming_the_constant(
    option: dict[str, dict[str, int]], words: str
) -> None:
    """Before, ``double t[1180591620717411303424]`` reached g++, which rejected it."""
    comp = spf.Computation("bigloc")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("t", "double", ("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = 1.0;", "{[i]: 0<=i<N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$x$(i) = $t$(i);", "{[i]: 0<=i<N}", "{[i]->[1,i,0]}"))
    with pytest.raises(CodegenError, match=words):
        generate(comp, **option)
    with pytest.raises(CodegenError, match=words):
        comp.compile(target="hls", **option)
