"""``stmt.partial_sums(loop, count, min_trip)`` (:mod:`spf.codegen.partial_sums`;
docs/scheduling.md, "Partial sums"): the CSR SpMV's row sums, reassociated into ``count``
accumulators on rows of at least ``min_trip`` entries, equal bitwise a Python reference that
adds in that order, on random matrices with empty rows, one row, one dense row and no rows,
int32 and int64 indices, checked and unchecked; a solve fused with the SpMV gives the same
bits under every plan at one and two threads; loops that carry no accumulation, commands
with bad arguments and tags that clash are refused, naming the loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.bench.fused import fused_solve_mv
from spf.errors import CodegenError, IllegalScheduleError, ScheduleError
from spf.sparse import csr_args, gauss_seidel_args, read_matrix_market, sptrsv_args

if TYPE_CHECKING:
    from pathlib import Path


def reference(m: Any, x: np.ndarray, y0: np.ndarray, count: int, min_trip: int) -> np.ndarray:
    """``y0 + m·x`` row by row as the partial sums add it (Python floats: no fma)."""
    out = y0.copy()
    for i in range(m.shape[0]):
        lo, hi = int(m.indptr[i]), int(m.indptr[i + 1])
        products = [float(m.data[k]) * float(x[m.indices[k]]) for k in range(lo, hi)]
        if hi - lo < min_trip:
            acc = float(y0[i])
            for p in products:
                acc += p
            out[i] = acc
            continue
        sums = [float(y0[i])] + [0.0] * (count - 1)
        for t, p in enumerate(products):
            sums[t % count] += p
        while len(sums) > 1:
            sums = [a + b for a, b in zip(sums[::2], sums[1::2], strict=True)]
        out[i] = sums[0]
    return out


def matrix(case: str) -> Any:
    rng = np.random.default_rng(3)
    if case == "empty":
        return sps.csr_array((0, 5))
    if case == "one row":
        return sps.csr_array(rng.standard_normal((1, 37)))
    m = sps.lil_array(sps.random_array((83, 61), density=0.15, rng=rng, format="csr"))
    if case == "dense row":
        m[40, :] = rng.standard_normal(61)
    m[7, :] = 0.0  # an empty row among the others
    out = sps.csr_array(m)
    out.sort_indices()
    return out


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("case", ["random", "dense row", "one row", "empty"])
@pytest.mark.parametrize(("count", "min_trip"), [(4, 16), (2, 2), (8, 8)])
def test_spmv_sums_bitwise(index_dtype: str, case: str, count: int, min_trip: int) -> None:
    comp = kernels.spmv_csr(index_dtype=index_dtype)
    comp.stmt(0).partial_sums("k", count, min_trip)
    k = comp.compile()
    m = matrix(case)
    x = np.random.default_rng(4).standard_normal(m.shape[1])
    y0 = np.random.default_rng(5).standard_normal(m.shape[0])
    want = reference(m, x, y0, count, min_trip)
    for check in (True, False):
        y = y0.copy()
        k(y=y, x=x, check=check, **csr_args(m, index_dtype))
        np.testing.assert_array_equal(y, want)
        np.testing.assert_allclose(y, y0 + m @ x, rtol=1e-12, atol=1e-12)


def summed(first: float, products: list[float], count: int, min_trip: int) -> float:
    """``first - sum(products)`` as a solve's row with partial sums subtracts them."""
    if len(products) < min_trip:
        acc = first
        for p in products:
            acc -= p
        return acc
    sums = [first] + [0.0] * (count - 1)
    for t, p in enumerate(products):
        sums[t % count] -= p
    while len(sums) > 1:
        sums = [a + b for a, b in zip(sums[::2], sums[1::2], strict=True)]
    return sums[0]


def solve_reference(m: Any, b: np.ndarray, upper: bool, count: int, min_trip: int) -> np.ndarray:
    """The triangular solve of ``m``'s lower (or upper) part, rows as the kernel sums them."""
    n = m.shape[0]
    x = np.zeros(n)
    for i in reversed(range(n)) if upper else range(n):
        lo, hi = int(m.indptr[i]), int(m.indptr[i + 1])
        cols = m.indices[lo:hi]
        d = lo + int(np.flatnonzero(cols == i)[0])
        ks = range(d + 1, hi) if upper else range(lo, d)
        products = [float(m.data[k]) * float(x[m.indices[k]]) for k in ks]
        x[i] = summed(float(b[i]), products, count, min_trip) / float(m.data[d])
    return x


def dominant(n: int, seed: int) -> Any:
    """A random square matrix, every diagonal entry stored and dominant, columns sorted,
    a few long rows (dense left of the diagonal) among short ones."""
    rng = np.random.default_rng(seed)
    m = sps.lil_array(sps.random_array((n, n), density=0.02, rng=rng, format="csr"))
    for i in (n // 3, n // 2, n - 1):
        m[i, : i + 1] = rng.uniform(-1.0, 1.0, i + 1)
        m[i, i:] = rng.uniform(-1.0, 1.0, n - i)
    out = sps.csr_array(m)
    out = sps.csr_array(out + sps.diags_array(np.abs(out).sum(axis=1) + 1.0))
    out.sum_duplicates()
    out.sort_indices()
    return out


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize(("count", "min_trip"), [(4, 16), (2, 2), (8, 8)])
def test_solve_rows_bitwise(index_dtype: str, upper: bool, count: int, min_trip: int) -> None:
    comp = kernels.trsv_diag_csr(upper=upper, index_dtype=index_dtype)
    comp.stmt("s1").partial_sums("k", count, min_trip)
    k = comp.compile()
    m = dominant(230, 11)
    b = np.random.default_rng(12).standard_normal(230)
    want = solve_reference(m, b, upper, count, min_trip)
    for check in (True, False):
        x = np.zeros(230)
        k(x=x, b=b, check=check, **gauss_seidel_args(m, index_dtype))
        np.testing.assert_array_equal(x, want)
    part = sps.triu(m) if upper else sps.tril(m)
    np.testing.assert_allclose(part @ want, b, rtol=1e-10, atol=1e-10)


def test_wavefront_solve_plans_bitwise(omp_threads: int) -> None:
    """Every plan of a solve with partial sums, on the rows or on part-ordered copies of
    them (``copies=True``), and the p2p executor, give the serial reference's bits."""
    lower = sps.csr_array(sps.tril(dominant(1500, 13)))
    lower.sort_indices()
    f = np.random.default_rng(14).standard_normal(1500)
    want = solve_reference(lower, f, False, 4, 8)
    args = sptrsv_args(lower)
    index = {a: v for a, v in args.items() if a != "L"}
    for method in ("auto", "p2p"):
        comp = kernels.sptrsv_csr()
        comp.stmt("s1").partial_sums("k", 4, 8)
        comp.wavefront("i", method=method)
        k = comp.compile()
        strategies = ("serial", "levels", "coarse", "auto") if method == "auto" else ("auto",)
        for strategy in strategies:
            for copies in (False, True) if strategy in ("levels", "coarse") else (None,):
                plan = k.inspect(strategy=strategy, threads=2, copies=copies, **index)
                u = np.zeros(1500)
                k(u=u, f=f, plan=plan, **args)
                np.testing.assert_array_equal(u, want, err_msg=f"{method} {strategy} {copies}")


def test_solve_without_its_facts_refused() -> None:
    """``sptrsv_csr(triangular=False)`` leaves out the facts that keep ``col(k)`` from
    ``i``: an entry might read the row's running value."""
    comp = kernels.sptrsv_csr(triangular=False)
    comp.stmt("s1").partial_sums("k")
    with pytest.raises(IllegalScheduleError, match=r"loop 'k' of s1.*partial sums"):
        comp.codegen()


def test_sums_take_only_long_rows() -> None:
    comp = kernels.spmv_csr()
    comp.stmt(0).partial_sums("k", 4, 16)
    source = comp.codegen()
    assert "if (__builtin_expect(spf_s1_k - spf_s0_k >= 16, 0))" in source
    assert "spf_acc = (spf_acc + spf_acc1) + (spf_acc2 + spf_acc3);" in source
    assert "for (; spf_sk_k < spf_s1_k - 4; spf_sk_k += 4)" in source
    assert comp.stmt(0).tags == {"k": ("sums(4,16)",)}
    comp.stmt(0).partial_sums("k", 2, 4)  # a second command replaces the first
    assert comp.stmt(0).tags == {"k": ("sums(2,4)",)}
    assert "spf_acc2" not in comp.codegen()


def fused(sums: bool) -> spf.Computation:
    """The lower solve then ``y = A·x``, fused (``spf.bench.fused``), both row loops of
    partial sums (4, 8) with ``sums``."""
    return fused_solve_mv((4, 8) if sums else None)


def test_fused_plans_agree(omp_threads: int) -> None:
    rng = np.random.default_rng(9)
    n = 700
    m = dominant(n, 9)
    args = gauss_seidel_args(m)
    index = {key: v for key, v in args.items() if key != "A"}
    b = rng.standard_normal(n)
    k = fused(True).compile()
    want: tuple[np.ndarray, np.ndarray] | None = None
    for strategy in ("serial", "levels", "coarse", "auto"):
        plan = k.inspect(strategy=strategy, threads=2, **index)
        x, y = np.zeros(n), np.zeros(n)
        k(x=x, y=y, b=b, plan=plan, **args)
        if want is None:
            want = x, y
        np.testing.assert_array_equal(x, want[0], err_msg=strategy)
        np.testing.assert_array_equal(y, want[1], err_msg=strategy)
    assert want is not None
    np.testing.assert_array_equal(want[0], solve_reference(m, b, False, 4, 8))
    np.testing.assert_array_equal(want[1], reference(m, want[0], np.zeros(n), 4, 8))


def test_loop_without_accumulation_refused() -> None:
    comp = kernels.spmv_csr()
    comp.stmt(0).partial_sums("i", 4, 16)
    with pytest.raises(IllegalScheduleError, match=r"loop 'i' of s0.*no dependence is carried"):
        comp.codegen()


def test_row_reading_itself_refused() -> None:
    """``y(i) += A(k) * y(col(k))`` with no fact keeping ``col(k)`` from ``i``: an entry may
    read the row's own running sum, which partial sums would not hold."""
    comp = spf.Computation("self_mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.declare_uf(
        "rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
    domain = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
    s = comp.add_stmt(spf.Stmt("$y$(i) += $A$(k) * $y$(j);", domain, "{[i,k,j]->[0,i,0,k,0,j,0]}"))
    s.partial_sums("k")
    with pytest.raises(IllegalScheduleError, match=r"partial sums:.*reads another element of y"):
        comp.codegen()


def test_two_statements_in_the_loop_refused() -> None:
    comp = spf.Computation("two")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("z", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    domain = "{[i,k]: 0 <= i < N && 0 <= k < N}"
    s = comp.add_stmt(spf.Stmt("$y$(i) += $x$(k);", domain, "{[i,k]->[0,i,0,k,0]}"))
    comp.add_stmt(spf.Stmt("$z$(k) = $x$(k);", domain, "{[i,k]->[0,i,0,k,1]}"))
    s.partial_sums("k", 4, 16)
    with pytest.raises(CodegenError, match=r"partial_sums: loop k .*not one accumulation"):
        comp.codegen()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s: s.partial_sums("k", 3), "count of loop 'k' must be one of 2, 4, 8"),
        (lambda s: s.partial_sums("k", 4, 2), "min_trip of loop 'k' must be at least count"),
        (lambda s: s.partial_sums("k", 0), "count must be a positive int"),
        (lambda s: s.partial_sums("nope", 4), "nope"),
        (lambda s: s.unroll("k", 2).partial_sums("k", 4), "partial sums runs in order"),
    ],
)
def test_bad_commands(call: Any, match: str) -> None:
    comp = kernels.spmv_csr()
    with pytest.raises((ScheduleError, spf.errors.SpfError), match=match):
        call(comp.stmt(0))


@pytest.mark.parametrize("name", ["bcsstk13.mtx", "pushpull.mtx"])
def test_suitesparse_pair_bitwise(suitesparse_dir: Path, name: str) -> None:
    """The fused pair of partial sums on real matrices of long rows: the 2-thread plan's
    bits are the Python reference's."""
    raw = sps.csr_array(read_matrix_market(suitesparse_dir / name))
    m = sps.csr_array(abs(raw) + sps.diags_array(np.abs(raw).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    n = m.shape[0]
    args = gauss_seidel_args(m)
    b = np.random.default_rng(15).standard_normal(n)
    k = fused(True).compile()
    plan = k.inspect(threads=2, **{a: v for a, v in args.items() if a != "A"})
    x, y = np.zeros(n), np.zeros(n)
    k(x=x, y=y, b=b, plan=plan, **args)
    np.testing.assert_array_equal(x, solve_reference(m, b, False, 4, 8))
    np.testing.assert_array_equal(y, reference(m, x, np.zeros(n), 4, 8))


def test_targets() -> None:
    """C/OpenMP and MPI (and a CUDA program's host loops) print the sums, a solve's row too
    where no row scalar holds it (MPI, CUDA host code: the update's own target kept in
    ``spf_acc``); a CUDA kernel's loop and an HLS loop refuse the tag, naming the loop and
    what to do."""
    comp = kernels.spmv_csr()
    comp.stmt(0).partial_sums("k", 4, 8)
    solve = kernels.trsv_diag_csr()
    solve.stmt("s1").partial_sums("k", 4, 8)
    for target in ("c", "mpi", "cuda"):
        assert "spf_acc3" in comp.codegen(target=target), target
        assert "spf_acc3" in solve.codegen(target=target), target
    m = dominant(300, 21)
    b = np.random.default_rng(3).standard_normal(300)
    x = np.zeros(300)
    solve.compile(target="cuda", emulate=True)(x=x, b=b, **gauss_seidel_args(m))
    # C++ (the emulator's and nvcc's host compiler) may contract a product and its sum
    np.testing.assert_allclose(x, solve_reference(m, b, False, 4, 8), rtol=1e-13, atol=1e-15)
    with pytest.raises(CodegenError, match=r"loop k is tagged sums\(4,8\).*target='hls'"):
        comp.codegen(target="hls")
    gpu = kernels.spmv_csr()
    s = gpu.stmt(0)
    s.split("i", 32, "i0", "i1")
    s.gpu(("i0",), ("i1",))
    s.partial_sums("k", 4, 8)
    with pytest.raises(CodegenError, match=r"loop k of CUDA kernel .*drop partial_sums"):
        gpu.codegen(target="cuda")


def test_split_after_the_command() -> None:
    """A split moves the tag to the outer loop: refused, saying to tag the inner one; the
    inner loop tagged after the split runs (its sums within each chunk of 8)."""
    comp = kernels.spmv_csr()
    s = comp.stmt(0)
    s.partial_sums("k", 4, 8).split("k", 8, "k0", "k1")
    with pytest.raises(CodegenError, match=r"loop k0 holds loop k1.*partial_sums\('k1'\)"):
        comp.codegen()
    comp = kernels.spmv_csr()
    comp.stmt(0).split("k", 8, "k0", "k1").partial_sums("k1", 4, 4)
    m = matrix("dense row")
    x = np.random.default_rng(4).standard_normal(m.shape[1])
    y = np.zeros(m.shape[0])
    comp.compile()(y=y, x=x, **csr_args(m))
    np.testing.assert_allclose(y, m @ x, rtol=1e-12, atol=1e-12)


def test_dense_kernels() -> None:
    """Loops of a parameter's trip: the dense MV's and GEMM's reductions."""
    rng = np.random.default_rng(6)
    mv = kernels.dense_mv()
    mv.stmt(0).partial_sums("j", 4, 8)
    a, x, y = rng.standard_normal((13, 37)), rng.standard_normal(37), np.zeros(13)
    mv.compile()(y=y, A=a, x=x)
    np.testing.assert_allclose(y, a @ x, rtol=1e-12, atol=1e-12)
    gemm = kernels.gemm()
    gemm.stmt(0).partial_sums("k", 8, 8)
    a, b, c = rng.standard_normal((37, 45)), rng.standard_normal((45, 29)), np.zeros((37, 29))
    gemm.compile()(A=a, B=b, C=c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-12, atol=1e-12)


def test_gauss_seidel_two_loops_in_a_row(omp_threads: int) -> None:
    """A Gauss-Seidel sweep's row holds two loops of partial sums (left and right of the
    diagonal), both into the row's local: the wavefront plans give the serial kernel's
    bits, which equal the in-order sweep's to round-off."""
    m = dominant(500, 17)
    args = gauss_seidel_args(m)
    b = np.random.default_rng(18).standard_normal(500)

    def sweep(sums: bool, wavefront: bool) -> Any:
        comp = kernels.gauss_seidel_csr()
        if sums:
            comp.stmt("s1").partial_sums("k", 4, 8)
            comp.stmt("s2").partial_sums("k", 4, 8)
        if wavefront:
            comp.wavefront("i")
        return comp.compile()

    want, plain = np.zeros(500), np.zeros(500)
    sweep(True, False)(x=want, b=b, **args)
    sweep(False, False)(x=plain, b=b, **args)
    np.testing.assert_allclose(want, plain, rtol=1e-12, atol=1e-13)
    k = sweep(True, True)
    for strategy in ("serial", "levels", "coarse", "auto"):
        plan = k.inspect(
            strategy=strategy, threads=2, **{a: v for a, v in args.items() if a != "A"}
        )
        x = np.zeros(500)
        k(x=x, b=b, plan=plan, **args)
        np.testing.assert_array_equal(x, want, err_msg=strategy)


def test_parallel_rows_bitwise(omp_threads: int) -> None:
    """The rows loop in parallel, each row's sums as on one thread."""
    comp = kernels.spmv_csr()
    comp.stmt(0).parallelize("i").partial_sums("k", 4, 16)
    m = matrix("dense row")
    x = np.random.default_rng(19).standard_normal(m.shape[1])
    y0 = np.random.default_rng(20).standard_normal(m.shape[0])
    y = y0.copy()
    comp.compile()(y=y, x=x, **csr_args(m))
    np.testing.assert_array_equal(y, reference(m, x, y0, 4, 16))
