"""Argument checks inside the generated loops (spf.codegen.arg_checks, docs/backends/c.md).

A compiled C kernel called with ``check=True`` tests each index value where its loops read it
(range; monotonicity where the reads cover one run of indices) and raises ``ArgumentError``
after the call, naming the array, the fact, the index and the value; a value outside the range
is replaced before any access uses it, so nothing is read or written out of bounds. Facts the
loops cannot check (monotonic UFs read elsewhere, assumptions) are checked before the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import ArgumentError, Computation, Stmt, kernels
from spf.codegen import lower_checked
from spf.codegen.arg_checks import dense_monotonic, prechecked

if TYPE_CHECKING:
    from pathlib import Path

GUARD = 16
"""Elements of a canary zone on each side of an output."""


def _guarded(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A zeroed output of ``n`` elements inside a buffer with canary zones on both sides."""
    whole = np.full(n + 2 * GUARD, 7.0)
    whole[GUARD : GUARD + n] = 0.0
    return whole, whole[GUARD : GUARD + n]


def _canaries_intact(whole: np.ndarray) -> bool:
    return bool((whole[:GUARD] == 7.0).all() and (whole[-GUARD:] == 7.0).all())


def _csr_args(m: sps.csr_matrix) -> dict[str, Any]:
    n, cols = m.shape
    return {
        "A": m.data.copy(),
        "rowptr": m.indptr.astype(np.int32),
        "col": m.indices.astype(np.int32),
        "x": np.arange(1.0, cols + 1),
        "y": np.zeros(n),
        "N": n,
        "M": cols,
        "NNZ": m.nnz,
    }


@pytest.fixture(scope="module")
def matrix() -> sps.csr_matrix:
    rng = np.random.default_rng(1)
    return sps.random(40, 30, density=0.2, format="csr", random_state=rng)


@pytest.fixture(scope="module")
def spmv() -> spf.Kernel:
    comp = kernels.spmv_csr()
    comp.stmt(0).parallelize("i")
    return comp.compile()


@pytest.fixture(scope="module")
def spmtv() -> spf.Kernel:
    return kernels.spmtv_csr().compile()  # scatters: y(col(k)) += ...


def test_compiled_source_holds_the_checked_function(spmv: spf.Kernel) -> None:
    assert "void spmv_csr_spf_checked(" in spmv.source
    assert "spf_checked" not in kernels.spmv_csr().codegen("c")  # only what compile builds
    # rowptr (monotonic, domain declared) is tested whole before the loops, read as it is
    assert prechecked(lower_checked(kernels.spmv_csr().ir)) == {"rowptr"}
    assert dense_monotonic(lower_checked(kernels.spmv_csr().ir)) == {}
    assert "spf_scan_rowptr(rowptr, " in spmv.source


def test_valid_arguments_compute_the_product(spmv: spf.Kernel, matrix: sps.csr_matrix) -> None:
    args = _csr_args(matrix)
    spmv(**args)
    np.testing.assert_allclose(args["y"], matrix @ args["x"])
    args["y"][:] = 0.0
    spmv(check=False, **args)
    np.testing.assert_allclose(args["y"], matrix @ args["x"])


@pytest.mark.parametrize("bad", [30, -1, 2**31 - 1])
def test_column_out_of_range_names_array_index_and_value(
    spmv: spf.Kernel, matrix: sps.csr_matrix, bad: int
) -> None:
    args = _csr_args(matrix)
    k = int(matrix.indptr[7]) + 1
    args["col"][k] = bad
    with pytest.raises(ArgumentError, match=r"col\[\d+\] = .* outside the declared range") as e:
        spmv(**args)
    assert f"col[{k}] = {bad} " in str(e.value)
    assert "partially written" in str(e.value)


def test_non_monotonic_rowptr_is_refused(spmv: spf.Kernel, matrix: sps.csr_matrix) -> None:
    args = _csr_args(matrix)
    rp = args["rowptr"]
    rp[5], rp[6] = rp[6] + 1, rp[5]  # both within range; row 5 now starts after row 6
    with pytest.raises(ArgumentError, match="declared nondecreasing") as e:
        spmv(**args)
    assert f"rowptr[5] = {rp[5]} and rowptr[6] = {rp[6]}" in str(e.value)


def test_rowptr_beyond_nnz_is_refused_before_col_is_read(
    spmv: spf.Kernel, matrix: sps.csr_matrix
) -> None:
    args = _csr_args(matrix)
    args["rowptr"][-1] = matrix.nnz + 10**6  # the last row would run far past col and A
    with pytest.raises(ArgumentError, match=r"rowptr\[40\] = .* outside the declared range"):
        spmv(**args)


def test_mutated_index_array_between_calls_is_caught(
    spmv: spf.Kernel, matrix: sps.csr_matrix
) -> None:
    args = _csr_args(matrix)
    spmv(**args)
    spmv(**args)  # the same arrays again: nothing remembered that could go stale
    args["col"][3] = 99  # in place: same array object, shape, dtype and address
    with pytest.raises(ArgumentError, match=r"col\[3\] = 99"):
        spmv(**args)
    args["col"][3] = 0
    args["rowptr"][2] = args["rowptr"][3] + 1
    with pytest.raises(ArgumentError, match="declared nondecreasing"):
        spmv(**args)


def test_scatter_with_a_bad_column_writes_nothing_out_of_bounds(
    spmtv: spf.Kernel, matrix: sps.csr_matrix
) -> None:
    n, m = matrix.shape
    args = _csr_args(matrix)
    whole, y = _guarded(m)
    args |= {"y": y, "x": np.ones(n)}
    args["col"][4] = m + 3  # y(col(k)) would land in the canary zone
    with pytest.raises(ArgumentError, match=r"col\[4\] = 33"):
        spmtv(**args)
    assert _canaries_intact(whole)
    args["col"][4] = -5
    with pytest.raises(ArgumentError, match=r"col\[4\] = -5"):
        spmtv(**args)
    assert _canaries_intact(whole)


def test_uf_indexed_store_out_of_range(tmp_path: Path) -> None:
    comp = Computation("scatter")
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < NNZ}")
    comp.add_stmt(Stmt("$A$(f(i)) = 1.0;", "{[i]: 0 <= i < N}"))
    k = comp.compile(cache_dir=tmp_path)
    whole, a = _guarded(5)
    with pytest.raises(ArgumentError, match=r"f\[2\] = 5 is outside"):
        k(A=a, f=np.array([4, 0, 5, 1], dtype=np.int32), N=4)
    assert _canaries_intact(whole)


def test_value_the_kernel_never_reads_is_not_an_error(spmv: spf.Kernel) -> None:
    m = sps.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    args = _csr_args(m)
    # NNZ covers one more entry than rowptr uses: the loops never read col[3]
    args |= {"A": np.append(args["A"], 9.0), "col": np.append(args["col"], 50).astype(np.int32)}
    args["NNZ"] = 4
    spmv(**args)
    np.testing.assert_allclose(args["y"], m @ args["x"])


def test_monotonic_uf_read_in_loop_bounds_is_tested_before_the_loops(tmp_path: Path) -> None:
    comp = Computation("rows")
    comp.add_data_space("y", "double", shape=("M",))
    comp.declare_uf("rp", domain="{[i]: 0 <= i <= R}", range="{[v]: 0 <= v <= M}",
                    monotonic="nondecreasing")  # fmt: skip
    comp.add_stmt(Stmt("$y$(k) += 1.0;", "{[k]: rp(0) <= k < rp(1)}"))
    assert prechecked(lower_checked(comp.ir)) == {"rp"}  # read in a loop bound: tested whole
    k = comp.compile(cache_dir=tmp_path)
    y = np.zeros(4)
    with pytest.raises(ArgumentError, match=r"rp\[1\] = 1 and rp\[2\] = 0") as e:
        k(y=y, rp=np.array([0, 1, 0], dtype=np.int32), R=2)
    assert "partially written" not in str(e.value)  # found before the loops
    assert not y.any()


def test_violated_assumption_is_still_refused(matrix: sps.csr_matrix) -> None:
    comp = kernels.spmv_csr()
    comp.assume("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= 28")
    k = comp.compile()
    args = _csr_args(matrix)
    args["col"] = np.minimum(args["col"], 28)
    k(**args)
    row = 3
    start = int(matrix.indptr[row])
    assert matrix.indptr[row + 1] > start
    args["col"][start] = 29  # in range, breaks the assumption
    with pytest.raises(ArgumentError, match=rf"col\(k\) <= 28.* i = {row}, k = {start}") as e:
        k(**args)
    cost = k.check_cost[0]  # new contents: tested where the loops load col(k)
    assert (cost.how, cost.first) == ("remembered", "in loop")
    assert "partially written" in str(e.value)
    args["col"][start] = 30  # outside the range too: the assumption's own loop finds it
    with pytest.raises(ArgumentError, match=rf"col\[{start}\] = 30 is outside"):
        k(**args)


def test_assumption_check_loop_does_not_trust_rowptr(matrix: sps.csr_matrix) -> None:
    comp = kernels.spmv_csr()
    comp.assume("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) >= 0")
    k = comp.compile()
    args = _csr_args(matrix)
    args["rowptr"][-1] = 10**9  # the assumption's loop would read col far out of bounds
    with pytest.raises(ArgumentError, match=r"rowptr\[40\] = 1000000000 is outside"):
        k(**args)


def test_two_argument_uf_fault_names_the_element(tmp_path: Path) -> None:
    comp = Computation("pick")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("g", arity=2, domain="{[i, j]: 0 <= i < N and 0 <= j < 2}",
                    range="{[v]: 0 <= v < M}")  # fmt: skip
    comp.add_stmt(Stmt("$y$(i) += $x$(g(i, j));", "{[i, j]: 0 <= i < N and 0 <= j < 2}"))
    k = comp.compile(cache_dir=tmp_path)
    g = np.array([[0, 1], [2, 9], [1, 1]], dtype=np.int32)
    with pytest.raises(ArgumentError, match=r"g\[1, 1\] = 9 is outside"):
        k(y=np.zeros(3), x=np.ones(3), g=g)
    g[1, 1] = 2
    y = np.zeros(3)
    k(y=y, x=np.array([1.0, 10.0, 100.0]), g=g)
    assert y.tolist() == [11.0, 200.0, 20.0]


@pytest.mark.parametrize("check", [True, False])
def test_unchecked_fast_path_still_refuses_wrong_arrays(
    spmv: spf.Kernel, matrix: sps.csr_matrix, check: bool
) -> None:
    args = _csr_args(matrix)
    wrong: list[tuple[str, object, str]] = [
        ("y", np.zeros(40, dtype=np.float32), "expected dtype float64"),
        ("y", np.zeros(41), r"expected shape \(40,\)"),
        ("y", np.zeros(80)[::2], "not C-contiguous"),
        ("x", list(range(30)), "expected a numpy array"),
        ("col", args["col"].astype(np.int64), "expected dtype int32"),
        ("N", 40.0, "must be an integer"),
    ]
    readonly = np.zeros(40)
    readonly.flags.writeable = False
    wrong.append(("y", readonly, "read-only"))
    for name, value, message in wrong:
        with pytest.raises(ArgumentError, match=message):
            spmv(check=check, **(args | {name: value}))
    with pytest.raises(ArgumentError, match="unknown argument"):
        spmv(check=check, **args, z=1)
    del args["x"]
    with pytest.raises(ArgumentError, match="missing array argument"):
        spmv(check=check, **args)


def test_check_must_be_a_bool(spmv: spf.Kernel, matrix: sps.csr_matrix) -> None:
    with pytest.raises(ArgumentError, match="check must be True or False"):
        spmv(check=1, **_csr_args(matrix))  # type: ignore[arg-type]


def test_parameters_inferred_from_shapes_still_work(matrix: sps.csr_matrix) -> None:
    k = kernels.spmv_csr().compile()
    args = _csr_args(matrix)
    del args["N"], args["M"]
    k(**args)
    np.testing.assert_allclose(args["y"], matrix @ args["x"])
    args["col"][0] = 30
    with pytest.raises(ArgumentError, match=r"col\[0\] = 30"):
        k(**args)


@pytest.mark.parametrize("check", [True, False])
def test_array_made_read_only_after_an_accepted_call_is_refused(
    spmv: spf.Kernel, matrix: sps.csr_matrix, check: bool
) -> None:
    args = _csr_args(matrix)
    spmv(check=check, **args)  # accepted: its look is remembered
    args["y"].flags.writeable = False
    with pytest.raises(ArgumentError, match="read-only"):
        spmv(check=check, **args)


def test_overlapping_output_is_refused_for_views_and_the_same_array(spmv: spf.Kernel) -> None:
    square = sps.random(30, 30, density=0.2, format="csr", random_state=2)
    args = _csr_args(square)
    shared = np.zeros(30)
    with pytest.raises(ArgumentError, match="share memory"):
        spmv(**(args | {"y": shared, "x": shared}))  # both own their memory: the same array
    buf = np.zeros(45)
    with pytest.raises(ArgumentError, match="share memory"):
        spmv(**(args | {"y": buf[:30], "x": buf[15:]}))
    spmv(**(args | {"y": buf[:30], "x": np.ones(30)}))  # a view that overlaps nothing


def _gather(name: str, rng: str, shape: str, at: str) -> Computation:
    comp = Computation(name)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=(shape,))
    comp.declare_uf("g", domain="{[i]: 0 <= i < N}", range=rng)
    comp.add_stmt(Stmt(f"$y$(i) = $x$({at});", "{[i]: 0 <= i < N}"))
    return comp


def test_range_with_negative_values_is_checked_in_the_loops(tmp_path: Path) -> None:
    comp = _gather("shifted", "{[v]: -M <= v < M}", "2 * M", "g(i) + M")
    k = comp.compile(cache_dir=tmp_path)
    assert "(uint64_t)v - (uint64_t)lo > lim" in k.source  # not zero-based: lo is subtracted
    x, y = np.arange(6.0), np.zeros(3)
    k(y=y, x=x, g=np.array([-3, 0, 2], dtype=np.int32), M=3)
    assert y.tolist() == [0.0, 3.0, 5.0]
    for bad in (-4, 3):
        with pytest.raises(ArgumentError, match=rf"g\[1\] = {bad} is outside.*partially written"):
            k(y=y, x=x, g=np.array([0, bad, 1], dtype=np.int32), M=3)


def test_zero_based_range_above_zero_is_checked_before_the_call(tmp_path: Path) -> None:
    comp = _gather("from_one", "{[v]: 1 <= v <= M}", "M + 1", "g(i)")
    k = comp.compile(cache_dir=tmp_path)
    assert "if (__builtin_expect((uint64_t)v > lim, 0))" in k.source  # [0, hi] in the loops
    x, y = np.arange(4.0), np.zeros(3)
    k(y=y, x=x, g=np.array([1, 3, 2], dtype=np.int32), M=3)
    assert y.tolist() == [1.0, 3.0, 2.0]
    for bad in (0, 4, -1):  # 0 passes the loops' test: the call checks the range itself
        with pytest.raises(ArgumentError, match=rf"g\[2\] = {bad} is outside") as e:
            k(y=np.zeros(3), x=x, g=np.array([1, 2, bad], dtype=np.int32), M=3)
        assert "partially written" not in str(e.value)
