"""The range pass of the checked function (spf.codegen.range_pass, API.md §16).

A checked call tests a non-monotonic index array with a declared domain that its loops read
where a test would cost more than a pass (``bcol`` once per BCSR block, before the block's
loops; spf.codegen.range_reads) in one vectorised pass before the loops and
then reads it as it is; a value out of range sends the call to the loops with every read
checked, so the error (which array, index and value), the bounds safety and the rule that an
entry the kernel never reads is not an error are those of the in-loop checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, Computation, Stmt, kernels
from spf.codegen import lower_checked
from spf.codegen.range_pass import READS_MACRO, READS_SUFFIX, ranged
from spf.formats import SELL
from spf.testing import compiled, random_csr

if TYPE_CHECKING:
    from pathlib import Path

GUARD = 8


def _scatter_rows(dtype: str, tmp_path: Path) -> spf.Kernel:
    """``Y[f(i), :] += X[i, :]``: ``f(i)`` is read once per row of 4 (a ranged array)."""
    comp = Computation("scatter_rows")
    comp.add_data_space("Y", "double", shape=("M", 4))
    comp.add_data_space("X", "double", shape=("N", 4))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < M}", dtype=dtype)
    comp.add_stmt(
        Stmt("$Y$(j, c) += $X$(i, c);", "{[i,j,c]: 0 <= i < N && j = f(i) && 0 <= c < 4}")
    )
    assert ranged(lower_checked(comp.ir)) == {"f"}
    return comp.compile(cache_dir=tmp_path)


def _bcsr(m: Any, dtype: str) -> dict[str, Any]:
    a = spf.sparse.bcsr_args(m, 2, 2, dtype)
    x = np.arange(1.0, 2 * a["MB"] + 1)
    return {**a, "x": x, "y": np.zeros(2 * a["NB"])}


@pytest.fixture(scope="module")
def matrix() -> Any:
    return random_csr(23, 17, 0.2, 3, empty_rows=[4, 9])


def test_the_pass_takes_the_arrays_read_where_it_pays() -> None:
    assert ranged(lower_checked(kernels.spmv_bcsr(2, 2).ir)) == {"bcol"}  # once per block
    assert ranged(lower_checked(kernels.spmm_csr().ir)) == {"col"}  # once per row of B
    # cl once per chunk, perm once per lane and column of its slice (spf.codegen.range_reads)
    assert ranged(lower_checked(kernels.spmv(SELL(8, 32)).ir)) == {"cl", "perm"}
    # read once per entry in a sparse row's (or lane's) innermost loop: tested where read
    for comp in (kernels.spmv_csr(), kernels.spmv_csc(), kernels.spmv_coo()):
        assert ranged(lower_checked(comp.ir)) == frozenset()
    source = compiled("spmv_bcsr", 2, 2).source
    assert f"spmv_bcsr_2x2{READS_SUFFIX}(" in source
    assert "__attribute__((noinline, cold));" in source


def test_an_array_read_in_rows_another_array_chose_is_tested_by_the_pass() -> None:
    # SpGEMM reads B's row A_col(A_k) once per entry of A in that column: B_col's entries
    # are read once per multiply-add, the pass reads each once
    spgemm = kernels.spgemm_csr(parallel=False)
    for phase in (spgemm.symbolic, spgemm.numeric, spgemm.single):
        assert phase is not None
        assert ranged(lower_checked(phase.ir)) == {"A_col", "B_col"}


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_spgemm_checks_the_columns_of_b_it_reads(dtype: str, matrix: Any) -> None:
    kernel = kernels.spgemm_csr(index_dtype=dtype, parallel=False).compile()
    a = spf.sparse.csr_args(matrix, dtype)
    b = spf.sparse.csr_args(sp.csr_array(matrix.T), dtype)
    args = {"A_rowptr": a["rowptr"], "A_col": a["col"], "A": a["A"], "B_rowptr": b["rowptr"],
            "B_col": b["col"], "B": b["A"], "N": 23, "K": 17, "M": 23}  # fmt: skip
    got = kernel(**args)
    product = sp.csr_array((got["A"], got["col"], got["rowptr"]), shape=(23, 23))
    np.testing.assert_allclose(product.toarray(), (matrix @ matrix.T).toarray())
    unchecked = kernel(check=False, **args)
    for key in ("rowptr", "col", "A"):
        np.testing.assert_array_equal(unchecked[key], got[key])
    read = int(b["rowptr"][int(a["col"][0])])  # an entry of B that A's first entry reads
    for bad in (23, -1):
        b_col = b["col"].copy()
        b_col[read] = bad
        with pytest.raises(ArgumentError, match=r"outside the declared range") as e:
            kernel(**{**args, "B_col": b_col})
        assert f"B_col[{read}] = {bad} " in str(e.value)
    assert kernel(**args)["A"].tolist() == got["A"].tolist()  # nothing remembered of them


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_checked_calls_read_ranged_arrays_and_compute_the_product(dtype: str, matrix: Any) -> None:
    kernel = compiled("spmv_bcsr", 2, 2, index_dtype=dtype)
    for m in (matrix, sp.csr_array((3, 5)), sp.csr_array(np.ones((1, 6)))):
        args = _bcsr(m, dtype)
        kernel(**args)
        rows, cols = m.shape
        np.testing.assert_allclose(args["y"][:rows], m @ args["x"][:cols])
        checked = args["y"].copy()
        args["y"][:] = 0.0
        kernel(check=False, **args)
        np.testing.assert_array_equal(args["y"], checked)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_value_out_of_range_is_found_by_the_checked_reads(dtype: str, tmp_path: Path) -> None:
    kernel = _scatter_rows(dtype, tmp_path)
    m, n = 6, 5
    rng = np.random.default_rng(2)
    x = rng.random((n, 4))
    good = np.array([3, 0, 5, 3, 1], dtype=dtype)
    bads = [m, -1, 2**31 - 1] + ([2**40, -(2**40)] if dtype == "int64" else [])
    for k in (0, n - 1):
        for bad in bads:
            whole = np.full((m + 2 * GUARD, 4), 7.0)
            whole[GUARD:-GUARD] = 0.0
            y = whole[GUARD:-GUARD]  # Y[f(i)] += ...: a bad f(i) would land outside
            f = good.copy()
            f[k] = bad
            with pytest.raises(ArgumentError, match=r"outside the declared range") as e:
                kernel(Y=y, X=x, f=f, M=m, N=n)
            assert f"f[{k}] = {bad} " in str(e.value)
            assert "partially written" in str(e.value)  # found where the loops read it
            assert (whole[:GUARD] == 7.0).all()
            assert (whole[-GUARD:] == 7.0).all()
    y = np.zeros((m, 4))
    kernel(Y=y, X=x, f=good, M=m, N=n)  # nothing remembered from the failures
    want = np.zeros((m, 4))
    np.add.at(want, good, x)
    np.testing.assert_allclose(y, want)


def test_the_fallback_is_built_by_the_first_call_that_needs_it(tmp_path: Path) -> None:
    kernel = _scatter_rows("int32", tmp_path)
    name = kernel.name + READS_SUFFIX
    assert f"#ifdef {READS_MACRO}" in kernel.source
    assert not hasattr(kernel._lib, name)  # the kernel's own build leaves it out
    m, n = 6, 5
    x, y = np.ones((n, 4)), np.zeros((m, 4))
    kernel(Y=y, X=x, f=np.array([3, 0, 5, 3, 1], dtype=np.int32), M=m, N=n)
    assert kernel._reads is None  # every value in range: no fallback needed
    libraries = {p.name for p in tmp_path.rglob("*.so")}
    with pytest.raises(ArgumentError, match=r"f\[2\] = 6 is outside the declared range"):
        kernel(Y=y, X=x, f=np.array([3, 0, 6, 3, 1], dtype=np.int32), M=m, N=n)
    assert kernel._reads is not None
    built = {p.name for p in tmp_path.rglob("*.so")} - libraries
    assert len(built) == 1  # cached with the kernel's library
    assert next(iter(built)).startswith(name)


def test_an_entry_out_of_range_the_kernel_never_reads_is_not_an_error(matrix: Any) -> None:
    kernel = compiled("spmv_bcsr", 2, 2)
    args = _bcsr(matrix, "int32")
    args["bcol"] = np.append(args["bcol"], 10**6).astype(np.int32)  # past browptr[NB]
    args["A"] = np.append(args["A"], np.ones(4))
    args["NNZB"] += 1
    kernel(**args)
    rows, cols = matrix.shape
    np.testing.assert_allclose(args["y"][:rows], matrix @ args["x"][:cols])


def _offset_scatter(dtype: str, tmp_path: Path) -> spf.Kernel:
    """``y(f(i) - L + 2, :) = i + 1`` with ``f``'s range ``L - 2 <= v < L + 3``."""
    comp = Computation("offset_scatter")
    comp.add_constant("L")
    comp.add_data_space("y", "double", shape=("5", 2))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: L - 2 <= v < L + 3}",
                    dtype=dtype)  # fmt: skip
    comp.add_stmt(
        Stmt("$y$(j - L + 2, c) = i + 1.0;", "{[i,j,c]: 0 <= i < N && j = f(i) && 0 <= c < 2}")
    )
    assert ranged(lower_checked(comp.ir)) == {"f"}
    return comp.compile(cache_dir=tmp_path)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_range_that_does_not_start_at_zero_is_tested_at_both_ends(
    dtype: str, tmp_path: Path
) -> None:
    kernel = _offset_scatter(dtype, tmp_path)
    low = -7
    y = np.zeros((5, 2))
    kernel(y=y, f=np.array([low - 2, low + 2, low], dtype=dtype), N=3, L=low)
    np.testing.assert_array_equal(y[:, 0], [1.0, 0.0, 3.0, 0.0, 2.0])
    for bad in (low - 3, low + 3):
        f = np.array([low, bad, low], dtype=dtype)
        with pytest.raises(ArgumentError, match=rf"f\[1\] = {bad} is outside"):
            kernel(y=np.zeros((5, 2)), f=f, N=3, L=low)


def test_a_range_beyond_the_index_type_refuses_every_entry(tmp_path: Path) -> None:
    kernel = _offset_scatter("int32", tmp_path)
    f = np.array([0, 1], dtype=np.int32)  # L = 2**40: no int32 value can be in range
    with pytest.raises(ArgumentError, match=r"f\[0\] = 0 is outside"):
        kernel(y=np.zeros((5, 2)), f=f, N=2, L=2**40)
    wide = _offset_scatter("int64", tmp_path)
    y = np.zeros((5, 2))
    wide(y=y, f=np.array([2**40 + 2, 2**40 - 2], dtype=np.int64), N=2, L=2**40)
    np.testing.assert_array_equal(y[:, 1], [2.0, 0.0, 0.0, 0.0, 1.0])
