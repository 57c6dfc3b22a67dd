"""End to end: Tiramisu Layer II semantics, each checked by running generated code.

Full and partial tiles scanned apart (constant inner bounds in full tiles), ``vectorize``
with a full vector part that gcc vectorizes plus a scalar remainder, ``unroll`` factors that
do and do not divide, ``after`` at ``ROOT`` / ``i`` / ``j``, ``then`` chains over statements
of different depth, ``compute_at`` and ``inline`` on the two-stage blur (against numpy, the
interpreter, JSON and the trace), ``interchange`` on GEMM, skewed wavefront and diagonal
stencils (parallel legality before and after skewing), and seeded random command sequences
on GEMM and jacobi2d with big enough factors to leave full and partial tiles.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import zlib
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import spf
from spf import Computation, IllegalScheduleError, SpfError, Stmt, kernels
from spf.schedule import ROOT, trace_of
from spf.schedule.trace import blame, culprit

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime import Kernel

Array = np.ndarray[Any, Any]


@pytest.fixture(scope="session")
def cache(shared_cache: Path) -> Path:
    return shared_cache


def build(comp: Computation, cache: Path, check: bool = True) -> Kernel:
    return comp.compile(cache_dir=str(cache), check=check)


def state(comp: Computation) -> list[tuple[str, str, str, str, str, dict[str, Any]]]:
    return [
        (s.name, str(s.domain), str(s.schedule), str(s.reads), str(s.writes), s.tags)
        for s in comp.stmts
    ]


def loop_bounds(code: str, var: str) -> list[str]:
    """The condition of every ``for`` loop over ``var`` in generated C."""
    return re.findall(rf"for \(int64_t {var} = [^;]*; ([^;]*);", code)


# --------------------------------------------------------------- full and partial tiles
def fill(n: str = "N", m: str = "M") -> Computation:
    comp = Computation("fill2")
    comp.add_data_space("buf", "int32_t", shape=(n, m))
    comp.add_stmt(
        Stmt(
            "$buf$(i,j) = 3*i + j;",
            f"{{[i,j]: 0 <= i < {n} && 0 <= j < {m}}}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    return comp


FULL_TILE = "for i0:\n  for j0:\n    for i1:\n      for j1:\n        s0"
CONSTANT_TILE = re.compile(
    r"for \(int64_t i1 = 0; i1 <= 3; i1\+\+\)\s*\{\s*for \(int64_t j1 = 0; j1 <= 7; j1\+\+\)"
)


@pytest.mark.parametrize(("n", "m"), [(9, 13), (8, 16), (3, 5), (0, 7), (13, 0), (17, 1)])
def test_full_tiles_have_constant_bounds(cache: Path, n: int, m: int) -> None:
    comp = fill()
    comp.stmt(0).tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    structure = comp.loop_structure()
    assert FULL_TILE in structure  # the full tiles, and the partial pieces apart:
    assert structure.count("s0") > 1
    assert CONSTANT_TILE.search(comp.codegen())  # full tiles: constant bounds, no min/max
    guard = np.full(n * m + 16, -1, dtype=np.int32)
    buf = guard[8 : 8 + n * m].reshape(n, m)
    build(comp, cache)(buf=buf, N=n, M=m)
    want = 3 * np.arange(n)[:, None] + np.arange(m)[None, :]
    assert np.array_equal(buf, want)
    assert np.all(guard[:8] == -1)
    assert np.all(guard[8 + n * m :] == -1)


def test_constant_sizes_that_divide_leave_no_partial_tile(cache: Path) -> None:
    comp = fill("16", "24")
    comp.stmt(0).tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    assert comp.loop_structure() == "for i0:\n  for j0:\n    for i1:\n      for j1:\n        s0"
    buf = np.zeros((16, 24), dtype=np.int32)
    build(comp, cache)(buf=buf)
    assert np.array_equal(buf, 3 * np.arange(16)[:, None] + np.arange(24)[None, :])


def test_small_tiles_stay_whole() -> None:
    comp = fill()
    comp.stmt(0).tile("i", "j", 2, 3, "i0", "j0", "i1", "j1")
    assert comp.loop_structure() == "for i0:\n  for j0:\n    for i1:\n      for j1:\n        s0"


def test_split_separates_the_last_partial_piece(cache: Path) -> None:
    comp = kernels.dense_mv()
    comp.stmt(0).split("j", 4, "j0", "j1")
    structure = "for i:\n  for j0:\n    for j1:\n      s0\n  for j1:\n    s0"
    assert comp.loop_structure().startswith(structure)  # then the case M < 4
    rng = np.random.default_rng(1)
    for n, m in [(5, 9), (3, 8), (4, 3), (1, 0)]:
        A, x, y = rng.random((n, m)), rng.random(m), np.zeros(n)
        build(comp, cache)(y=y, A=A, x=x)
        assert np.allclose(y, A @ x)


# -------------------------------------------------------------------------- vectorize
def saxpy(n: str = "N") -> Computation:
    comp = Computation("saxpy")
    comp.add_data_space("y", "double", shape=(n,))
    comp.add_data_space("x", "double", shape=(n,))
    comp.add_stmt(Stmt("$y$(i) = 2.5 * $x$(i) + $y$(i);", f"{{[i]: 0 <= i < {n}}}"))
    return comp


@pytest.mark.default_flags  # a vectorised schedule, built as users build it (-O3)
@pytest.mark.parametrize(("width", "n"), [(8, 10), (4, 9), (16, 32), (8, 3), (4, 0)])
def test_vectorize_with_a_scalar_remainder(cache: Path, width: int, n: int) -> None:
    comp = saxpy()
    comp.stmt(0).vectorize("i", width)
    assert comp.loop_structure() == (f"for i0:\n  for i1 [vector({width})]:\n    s0\nfor i1:\n  s0")
    code = comp.codegen()
    bounds = loop_bounds(code, "i1")
    assert bounds[0] == f"i1 <= {width - 1}"  # the full vector: a constant trip count
    assert "%" in bounds[1]  # the remainder: what is left of N
    assert code.count("#pragma omp simd") == 1
    rng = np.random.default_rng(width * 100 + n)
    x, y0 = rng.random(n), rng.random(n)
    y = y0.copy()
    build(comp, cache)(y=y, x=x, N=n)
    assert np.allclose(y, 2.5 * x + y0)


@pytest.mark.default_flags  # a vectorised schedule, built as users build it (-O3)
def test_vectorize_with_a_constant_size_that_divides(cache: Path) -> None:
    comp = saxpy("32")
    comp.stmt(0).vectorize("i", 16, "v", "lane")
    assert comp.loop_structure() == "for v:\n  for lane [vector(16)]:\n    s0"
    x, y = np.arange(32.0), np.ones(32)
    build(comp, cache)(y=y, x=x)
    assert np.allclose(y, 2.5 * np.arange(32.0) + 1)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")
def test_gcc_vectorizes_the_full_vector_part(tmp_path: Path) -> None:
    comp = saxpy()
    comp.stmt(0).vectorize("i", 8)
    code = comp.codegen()
    src = tmp_path / "saxpy.c"
    src.write_text(code)
    lines = code.splitlines()
    pragma = next(k for k, line in enumerate(lines) if "#pragma omp simd" in line) + 1
    done = subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-O3",
            "-march=native",
            "-fopenmp",
            "-fPIC",
            "-shared",
            "-fopt-info-vec-optimized",
            "-o",
            str(tmp_path / "saxpy.so"),
            str(src),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    vectorized = {
        int(m.group(1))
        for m in re.finditer(r"saxpy\.c:(\d+):\d+: optimized: loop vector", done.stderr)
    }
    # the vector loop's header follows the pragma; its body is the next lines
    assert vectorized & set(range(pragma + 1, pragma + 5)), (done.stderr, code)


# ----------------------------------------------------------------------------- unroll
@pytest.mark.parametrize("factor", [2, 3, 4, 8])
def test_unroll_factors_that_do_and_do_not_divide(cache: Path, factor: int) -> None:
    comp = kernels.gemm()
    comp.stmt(0).unroll("k", factor)
    assert f"#pragma GCC unroll {factor}" in comp.codegen()
    assert comp.loop_structure() == f"for i:\n  for j:\n    for k [unroll({factor})]:\n      s0"
    rng = np.random.default_rng(factor)
    A, B = rng.random((5, 8)), rng.random((8, 3))  # K = 8: 2, 4, 8 divide, 3 does not
    C = np.zeros((5, 3))
    build(comp, cache)(C=C, A=A, B=B)
    assert np.allclose(C, A @ B)


@pytest.mark.default_flags  # a vectorised schedule, built as users build it (-O3)
def test_unroll_and_vectorize_the_same_split(cache: Path) -> None:
    comp = saxpy()
    comp.stmt(0).split("i", 16, "i0", "i1").vectorize("i1", 4).unroll("i10", 4)
    structure = comp.loop_structure()
    assert "for i10 [unroll(4)]:" in structure
    assert "for i11 [vector(4)]:" in structure
    for n in (0, 5, 16, 37):
        x, y = np.arange(float(n)), np.ones(n)
        build(comp, cache)(y=y, x=x, N=n)
        assert np.allclose(y, 2.5 * np.arange(float(n)) + 1)


# --------------------------------------------------------------------------- ordering
def planes(depths: tuple[int, ...]) -> Computation:
    """Statement ``k`` of depth ``d`` writes ``b<k>[i, j] = k + 1 + 10 i + 100 j`` over
    ``[0, 6) x [0, 5)`` (its first ``d`` iterators; ``d = 0``: a scalar)."""
    comp = Computation("planes")
    for k, d in enumerate(depths):
        its = ["i", "j"][:d]
        comp.add_data_space(f"b{k}", "int64_t", shape=(6, 5)[:d] if d else None)
        target = f"$b{k}$({', '.join(its)})" if d else f"$b{k}$"
        dom = " && ".join(f"0 <= {v} < {n}" for v, n in zip(its, (6, 5), strict=False))
        value = " + ".join([str(k + 1), *(f"{10 ** (p + 1)}*{v}" for p, v in enumerate(its))])
        domain = f"{{[{', '.join(its)}]: {dom}}}" if d else "{[]}"
        comp.add_stmt(Stmt(f"{target} = {value};", domain))
    return comp


def run_planes(comp: Computation, depths: tuple[int, ...], cache: Path) -> None:
    bufs = {f"b{k}": np.zeros((6, 5)[:d], dtype=np.int64) for k, d in enumerate(depths)}
    build(comp, cache)(**bufs)
    i, j = np.arange(6)[:, None], np.arange(5)[None, :]
    for k, d in enumerate(depths):
        want = {0: np.array(k + 1), 1: k + 1 + 10 * np.arange(6), 2: k + 1 + 10 * i + 100 * j}
        assert np.array_equal(bufs[f"b{k}"], want[d])


def test_after_at_root_i_and_j(cache: Path) -> None:
    depths = (2, 2, 2, 2)
    comp = planes(depths)
    s0, s1, s2, s3 = comp.stmts
    s3.after(s0, ROOT)  # its own nest, right after s0's
    s1.after(s0, "i")
    s2.after(s1, "j")
    assert comp.loop_structure() == (
        "for i:\n  for j:\n    s0\n  for j:\n    s1\n    s2\nfor i:\n  for j:\n    s3"
    )
    run_planes(comp, depths, cache)


def test_statements_left_unordered_keep_their_order(cache: Path) -> None:
    depths = (2, 2, 2)
    comp = planes(depths)
    comp.stmt("s2").after("s0", "j")
    assert comp.loop_structure() == ("for i:\n  for j:\n    s0\n    s2\nfor i:\n  for j:\n    s1")
    run_planes(comp, depths, cache)


def test_then_chain_over_statements_of_different_depth(cache: Path) -> None:
    depths = (1, 2, 1, 0)
    comp = planes(depths)
    s0, s1, s2, s3 = comp.stmts
    last = s0.then(s1, "i").then(s2, "i").then(s3, ROOT)
    assert last is s3
    assert comp.loop_structure() == "for i:\n  s0\n  for j:\n    s1\n  s2\ns3"
    run_planes(comp, depths, cache)


def test_conflicting_predecessors_are_an_error() -> None:
    comp = planes((2, 2, 2))
    s0, s1, s2 = comp.stmts
    s2.after(s0, "j")
    with pytest.raises(SpfError, match="conflicting predecessors"):
        s2.after(s1, "j")


# ------------------------------------------------------------------- blur: compute_at
def blur_data(n: int, m: int) -> tuple[Array, Array, Array]:
    img = np.random.default_rng(n * 31 + m).random((n, m))
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    return img, bx, (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def test_blur_compute_at_the_consumer_tile(cache: Path) -> None:
    comp = kernels.blur2d()
    bx_stmt, out_stmt = comp.stmts
    out_stmt.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    bx_stmt.compute_at(out_stmt, "j0")
    assert bx_stmt.loops == ("i0", "j0", "i", "j")
    assert bx_stmt.domain.arity == 4
    # tile (i0, j0) computes rows 4*i0 .. 4*i0+5 (a halo of 2 rows), columns of its tile
    assert bx_stmt.domain.contains([1, 0, 9, 3], {"N": 20, "M": 20})
    assert not bx_stmt.domain.contains([1, 0, 10, 3], {"N": 20, "M": 20})
    assert not bx_stmt.domain.contains([1, 0, 3, 3], {"N": 20, "M": 20})
    assert [ds for ds, _ in bx_stmt.reads] == ["img", "img", "img"]
    comp.check_legality()
    for n, m in [(11, 13), (6, 10), (3, 3), (20, 19)]:
        img, _bx_want, out_want = blur_data(n, m)
        out, bx = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
        build(comp, cache)(out=out, bx=bx, img=img)
        assert np.allclose(out, out_want)
        out2, bx2 = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
        comp.interpret(out=out2, bx=bx2, img=img)
        assert np.allclose(out2, out_want)


def test_compute_at_a_row_loop_keeps_a_fused_structure(cache: Path) -> None:
    comp = kernels.blur2d()
    comp.assume("N >= 3")  # else the rows of bx no output row reads (N <= 2) get a nest
    comp.stmt("s0").compute_at("s1", "i")
    # the shared loop is s0's new outer loop i_ (s0 has its own i) and s1's loop i
    assert comp.stmt("s0").loops == ("i_", "i", "j")
    assert comp.loop_structure() == "for i_:\n  for i:\n    for j:\n      s0\n  for j:\n    s1"
    img, _, out_want = blur_data(8, 9)
    out, bx = np.zeros((6, 7)), np.zeros((8, 7))
    build(comp, cache)(out=out, bx=bx, img=img)
    assert np.allclose(out, out_want)


def test_compute_at_is_recorded_replayed_and_serialized() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    comp.stmt("s0").compute_at("s1", "j0")
    text = trace_of(comp).as_python()
    assert text.splitlines()[-1] == 'comp.stmt("s0").compute_at("s1", "j0")'
    fresh = kernels.blur2d()
    exec(text, {"comp": fresh, "spf": spf})
    assert state(fresh) == state(comp)
    assert state(trace_of(comp).replay(kernels.blur2d())) == state(comp)
    back = Computation.from_json(comp.to_json())
    assert state(back) == state(comp)
    assert trace_of(back) == trace_of(comp)
    assert back.loop_structure() == comp.loop_structure()


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda c: c.stmt("s1").compute_at("s0", "i"), "does not read 'out'"),
        (lambda c: c.stmt("s0").compute_at("s1", ROOT), "level must be a loop"),
        (lambda c: c.stmt("s0").compute_at("s1", "k"), "k"),
        (lambda c: c.stmt("s0").compute_at("s0", "i"), "at itself"),
    ],
)
def test_compute_at_errors_change_nothing(call: Any, pattern: str) -> None:
    comp = kernels.blur2d()
    before = comp.to_json()
    with pytest.raises(SpfError, match=pattern):
        call(comp)
    assert comp.to_json() == before


def test_compute_at_needs_the_only_reader() -> None:
    comp = kernels.blur2d()
    comp.add_data_space("copy", "double", shape=("N", "M-2"))
    comp.add_stmt(Stmt("$copy$(i, j) = $bx$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M - 2}"))
    with pytest.raises(SpfError, match="s2 also reads 'bx'"):
        comp.stmt("s0").compute_at("s1", "i")


# ---------------------------------------------------------------------- blur: inline
def test_inline_the_blur_producer(cache: Path) -> None:
    comp = kernels.blur2d()
    s0 = comp.stmt("s0")
    assert s0.inline() is s0
    assert [s.name for s in comp.stmts] == ["s1"]
    assert "bx" not in comp.data_spaces
    assert comp.loop_structure() == "for i:\n  for j:\n    s1"
    assert trace_of(comp).as_python() == 'comp.stmt("s0").inline()'
    img, _, out_want = blur_data(9, 12)
    out = np.zeros((7, 10))
    kernel = build(comp, cache)
    assert "bx" not in kernel.source.split("{")[0].split("void blur2d")[1]
    kernel(out=out, img=img)
    assert np.allclose(out, out_want)
    back = Computation.from_json(comp.to_json())
    assert state(back) == state(comp)
    replayed = trace_of(comp).replay(kernels.blur2d())
    assert state(replayed) == state(comp)


def test_inline_then_schedule_the_consumer(cache: Path) -> None:
    comp = kernels.blur2d()
    comp.stmt("s0").inline()
    comp.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1").parallelize("i0")
    img, _, out_want = blur_data(14, 11)
    out = np.zeros((12, 9))
    build(comp, cache)(out=out, img=img)
    assert np.allclose(out, out_want)


def test_inline_errors() -> None:
    comp = kernels.blur2d()
    with pytest.raises(SpfError, match="nothing reads 'out'"):
        comp.stmt("s1").inline()
    assert [s.name for s in comp.stmts] == ["s0", "s1"]


# ---------------------------------------------------------- fusion, interchange, skew
def test_blur_fusion_needs_the_shift(cache: Path) -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").after("s0", "i")
    with pytest.raises(IllegalScheduleError, match="flow dependence on 'bx' from s0 to s1"):
        comp.codegen()
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2).after("s0", "i")
    img, bx_want, out_want = blur_data(10, 7)
    out, bx = np.zeros((8, 5)), np.zeros((10, 5))
    build(comp, cache)(out=out, bx=bx, img=img)
    assert np.allclose(out, out_want)
    assert np.allclose(bx, bx_want)


@pytest.mark.parametrize("order", [("j", "k"), ("i", "k"), ("i", "j")])
def test_gemm_reordered_by_interchange(cache: Path, order: tuple[str, str]) -> None:
    comp = kernels.gemm()
    comp.stmt(0).interchange(*order)
    loops = ["i", "j", "k"]
    a, b = loops.index(order[0]), loops.index(order[1])
    loops[a], loops[b] = loops[b], loops[a]
    assert comp.stmt(0).loops == tuple(loops)
    x, y, z = loops
    assert comp.loop_structure() == f"for {x}:\n  for {y}:\n    for {z}:\n      s0"
    rng = np.random.default_rng(7)
    A, B = rng.random((9, 7)), rng.random((7, 5))
    C = np.zeros((9, 5))
    build(comp, cache)(C=C, A=A, B=B)
    assert np.allclose(C, A @ B)


def stencil(name: str, source: str) -> Computation:
    comp = Computation(name)
    comp.add_data_space("A", "int64_t", shape=(12, 14))
    comp.add_stmt(Stmt(source, "{[i,j]: 1 <= i < 11 && 1 <= j < 13}", "{[i,j]->[0,i,0,j,0]}"))
    return comp


STENCILS = {
    # dependences (1, 0) and (0, 1): skew by 1 and interchange: a wavefront
    "wavefront": ("$A$(i,j) = $A$(i-1,j) + 3*$A$(i,j-1) + 1;", 1),
    # dependences (1, -1) and (0, 1): a diagonal neighbour needs a skew of 2
    "diagonal": ("$A$(i,j) = $A$(i-1,j+1) + 3*$A$(i,j-1) + 1;", 2),
}


@pytest.mark.parametrize("name", list(STENCILS))
def test_skewing_makes_the_inner_loop_parallel(cache: Path, name: str) -> None:
    source, factor = STENCILS[name]
    comp = stencil(name, source)
    s = comp.stmt(0)
    assert not comp.is_parallel_legal(s, "i")
    assert not comp.is_parallel_legal(s, "j")
    s.skew("i", "j", factor, new_j="t").interchange("i", "t")
    assert s.loops == ("t", "i")
    assert not comp.is_parallel_legal(s, "t")
    assert comp.is_parallel_legal(s, "i")
    s.parallelize("i")
    comp.check_legality()
    assert comp.loop_structure() == "for t:\n  for i [parallel]:\n    s0"
    start = (np.arange(12 * 14, dtype=np.int64).reshape(12, 14) * 7) % 11
    want = start.copy()
    stencil(name, source).interpret(A=want)
    got = start.copy()
    build(comp, cache)(A=got)
    assert np.array_equal(got, want)


def test_parallel_inner_loop_without_skewing_is_refused() -> None:
    source, _ = STENCILS["wavefront"]
    comp = stencil("wavefront", source)
    comp.stmt(0).parallelize("j")
    with pytest.raises(IllegalScheduleError, match="'j'"):
        comp.codegen()


@pytest.mark.default_flags  # a vectorised schedule, built as users build it (-O3)
def test_an_illegal_tiling_is_refused_and_blamed(cache: Path) -> None:
    source, _ = STENCILS["diagonal"]
    comp = stencil("diagonal", source)
    comp.stmt(0).shift("i", 0).tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    with pytest.raises(IllegalScheduleError, match=r"flow dependence on 'A'.*'j0'"):
        comp.codegen()
    entry = culprit(comp, ["s0"], "j0")
    assert entry is not None
    assert entry.command.method == "tile"
    assert blame(comp, ["s0"], "j0") == (
        '; caused by comp.stmt("s0").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1") '
        "(check=False generates it anyway)"
    )
    build(comp, cache, check=False)  # on the user's responsibility


# ------------------------------------------------------- random legal command sequences
def _gemm_args(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A, B = rng.random((11, 9)), rng.random((9, 13))
    return {"C": np.zeros((11, 13)), "A": A, "B": B}, {"C": A @ B}


def _jacobi_args(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Array]]:
    A = rng.random((13, 13))
    B = np.zeros((13, 13))
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    return {"B": np.zeros((13, 13)), "A": A}, {"B": B}


ARGS = {"gemm": _gemm_args, "jacobi2d": _jacobi_args}


def random_step(comp: Computation, rng: random.Random, tag: int) -> None:
    s = comp.stmt(0)
    n = len(s.loops)
    kind = rng.choice(["tile", "split", "interchange", "vectorize", "unroll", "skew", "reverse"])
    if kind == "tile" and n >= 2:
        d = rng.randrange(n - 1)
        s.tile(d, d + 1, rng.choice([4, 5]), rng.choice([4, 8]), *(f"{c}{tag}" for c in "abcd"))
    elif kind == "split":
        s.split(rng.randrange(n), rng.choice([4, 6]), f"a{tag}", f"b{tag}")
    elif kind == "interchange" and n >= 2:
        s.interchange(*rng.sample(range(n), 2))
    elif kind == "vectorize":
        s.vectorize(n - 1, rng.choice([4, 8]), f"v{tag}", f"w{tag}")
    elif kind == "skew" and n >= 2:
        a, b = sorted(rng.sample(range(n), 2))
        s.skew(a, b, rng.choice([1, -1]))
    elif kind == "reverse":
        s.reverse(rng.randrange(n))
    else:
        s.unroll(rng.randrange(n), rng.choice([2, 3, 4]))


CASES = [(name, seed) for name in ARGS for seed in range(8)]


@pytest.mark.parametrize(("name", "seed"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_random_legal_sequences_give_identical_results(name: str, seed: int, cache: Path) -> None:
    comp: Computation = getattr(kernels, name)()
    rng = random.Random(zlib.crc32(f"tiramisu/{name}/{seed}".encode()))
    for tag in range(rng.randint(2, 4)):
        random_step(comp, rng, tag)
    back = Computation.from_json(comp.to_json())
    assert state(back) == state(comp)
    try:
        comp.check_legality()
    except IllegalScheduleError:
        with pytest.raises(IllegalScheduleError):
            comp.compile(cache_dir=str(cache))
        return
    args, want = ARGS[name](np.random.default_rng(seed))
    build(comp, cache)(**args)
    for key, value in want.items():
        assert np.allclose(args[key], value), trace_of(comp).as_python()


def test_random_sequences_are_mostly_legal() -> None:
    legal = 0
    for name, seed in CASES:
        comp: Computation = getattr(kernels, name)()
        rng = random.Random(zlib.crc32(f"tiramisu/{name}/{seed}".encode()))
        for tag in range(rng.randint(2, 4)):
            random_step(comp, rng, tag)
        try:
            comp.check_legality()
            legal += 1
        except IllegalScheduleError:
            pass
    assert legal >= len(CASES) // 2


# ------------------------------------------------ blur: compute_at into a per-tile buffer
def tiled_blur(buffer: bool, parallel: bool) -> Computation:
    """Tiramisu's blur: ``bx`` computed at the consumer's 4x8 tile (``j0``) and, with
    ``buffer``, stored in a 6x8 buffer allocated in each iteration of the tile loop ``i0``
    (a tile reads rows ``4*i0 .. 4*i0+5`` and columns ``8*j0 .. 8*j0+7`` of ``bx``: six
    consecutive rows and eight consecutive columns are distinct modulo 6 and 8)."""
    comp = kernels.blur2d()
    s_bx, s_out = comp.stmts
    s_out.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    s_bx.compute_at(s_out, "j0")
    if buffer:
        buf = comp.add_buffer("tile_bx", (6, 8), "double", scope="stack")
        s_bx.store_in(buf, ["i % 6", "j % 8"])
        buf.allocate_at(s_out, "i0")
    if parallel:
        s_out.parallelize("i0")
    return comp


BLUR_SIZES = [(11, 13), (6, 10), (3, 3), (20, 19), (4, 11), (7, 3)]
"""Odd sizes: partial tiles in both dimensions, one tile (``N - 2 <= 4``), one column."""


def test_blur_compute_at_into_a_per_tile_buffer(cache: Path) -> None:
    comp = tiled_blur(buffer=True, parallel=False)
    comp.check_legality()  # the halo rows are written again in each tile's own buffer
    kernel = build(comp, cache)
    assert "bx" not in kernel.signature  # bx lives in the per-tile buffer only
    body = kernel.source[kernel.source.index("void blur2d(") :]
    # every nest allocates the buffer inside its i0 loop (a loop of one iteration included)
    assert body.count("double tile_bx[48] = {0};") == body.count("for (int64_t i0 = ")
    assert body.index("for (int64_t i0 = ") < body.index("double tile_bx[48] = {0};")
    for n, m in BLUR_SIZES:
        img, _, out_want = blur_data(n, m)
        out = np.full((n - 2, m - 2), -1.0)
        kernel(out=out, img=img)
        assert np.allclose(out, out_want), (n, m)
        out2 = np.zeros((n - 2, m - 2))
        comp.interpret(out=out2, img=img)
        assert np.allclose(out2, out_want), (n, m)
    back = Computation.from_json(comp.to_json())
    assert back.codegen() == comp.codegen()


def test_parallel_tiles_need_the_per_tile_buffer() -> None:
    comp = tiled_blur(buffer=False, parallel=True)
    with pytest.raises(IllegalScheduleError, match=r"loop 'i0'.*output dependence on 'bx'"):
        comp.check_legality()


def test_parallel_tiles_with_the_per_tile_buffer_run_right(cache: Path) -> None:
    comp = tiled_blur(buffer=True, parallel=True)
    kernel = build(comp, cache, check=False)
    body = kernel.source[kernel.source.index("void blur2d(") :]
    pragma = body.index("#pragma omp parallel for")
    assert pragma < body.index("for (int64_t i0 = ") < body.index("double tile_bx[48] = {0};")
    for n, m in BLUR_SIZES:
        img, _, out_want = blur_data(n, m)
        out = np.full((n - 2, m - 2), -1.0)
        kernel(out=out, img=img)
        assert np.allclose(out, out_want), (n, m)


def test_parallel_tiles_with_the_per_tile_buffer_are_legal() -> None:
    comp = tiled_blur(buffer=True, parallel=True)
    assert comp.is_parallel_legal("s1", "i0")
    comp.check_legality()


def test_a_value_from_an_earlier_allocation_is_refused() -> None:
    """``b(i - 1)`` is read in iteration ``i`` of the loop its buffer is allocated in: that
    value was written in the previous allocation and is not written again."""
    comp = Computation("stale")
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_data_space("c", "double", shape=("N",))
    s0 = comp.add_stmt(Stmt("$b$(i) = 1.0 * i;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    s1 = comp.add_stmt(Stmt("$c$(i) = $b$(i - 1);", "{[i]: 1 <= i < N}", "{[i]->[1,i,0]}"))
    s1.after(s0, "i")
    buf = comp.add_buffer("bb", (2,), "double", scope="stack")
    s0.store_in(buf, ["i % 2"])
    comp.check_legality()  # one buffer for the whole function: fine
    buf.allocate_at(s0, "i")
    with pytest.raises(IllegalScheduleError, match=r"s1 reads 'b'.*allocation is gone"):
        comp.check_legality()
