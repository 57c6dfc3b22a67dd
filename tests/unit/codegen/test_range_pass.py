"""The range pass of the checked function (spf.codegen.range_pass, API.md §16).

A checked call tests each non-monotonic index array with a declared domain (``col``, ``row``,
``bcol``, ``scol``, ``perm``) in one vectorised pass before the loops and then reads it as it
is; a value out of range sends the call to the loops with every read checked, so the error
(which array, index and value), the bounds safety and the rule that an entry the kernel never
reads is not an error are those of the in-loop checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, Computation, Stmt, kernels
from spf.codegen import lower_checked
from spf.codegen.range_pass import READS_SUFFIX, ranged
from spf.formats import SELL
from spf.testing import compiled, random_csr

if TYPE_CHECKING:
    from pathlib import Path

GUARD = 8


def _csc(m: Any, dtype: str) -> dict[str, Any]:
    n, cols = m.shape
    return {**spf.sparse.csc_args(m, dtype), "x": np.arange(1.0, cols + 1), "y": np.zeros(n)}


@pytest.fixture(scope="module")
def matrix() -> Any:
    return random_csr(23, 17, 0.2, 3, empty_rows=[4, 9])


def test_non_monotonic_index_arrays_with_a_declared_domain_are_ranged() -> None:
    assert ranged(lower_checked(kernels.spmv_csc())) == {"row"}
    assert ranged(lower_checked(kernels.spmv_csr())) == {"col"}
    assert ranged(lower_checked(kernels.spmv_bcsr(2, 2))) == {"bcol"}
    assert {"scol", "perm"} <= ranged(lower_checked(kernels.spmv(SELL(8, 32))))
    # monotonic arrays are tested whole by their own pass, never by this one
    assert not ranged(lower_checked(kernels.spmv_csc())) & {"colptr"}
    source = compiled("spmv_csc").source
    assert f"spmv_csc{READS_SUFFIX}(M, N, NNZ, colptr, row, y, A, x, spf_bounds, spf_fault)" in (
        source
    )


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_checked_calls_read_ranged_arrays_and_compute_the_product(dtype: str, matrix: Any) -> None:
    kernel = compiled("spmv_csc", index_dtype=dtype)
    for m in (matrix, sp.csr_array((3, 5)), sp.csr_array(np.ones((1, 6)))):
        args = _csc(m, dtype)
        kernel(**args)
        np.testing.assert_allclose(args["y"], m @ args["x"])
        checked = args["y"].copy()
        args["y"][:] = 0.0
        kernel(check=False, **args)
        np.testing.assert_array_equal(args["y"], checked)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("where", ["first", "last"])
def test_a_value_out_of_range_is_found_by_the_checked_reads(
    dtype: str, where: str, matrix: Any
) -> None:
    kernel = compiled("spmv_csc", index_dtype=dtype)
    n = matrix.shape[0]
    bads = [n, -1, 2**31 - 1] + ([2**40, -(2**40)] if dtype == "int64" else [])
    for bad in bads:
        args = _csc(matrix, dtype)
        whole = np.full(n + 2 * GUARD, 7.0)
        whole[GUARD:-GUARD] = 0.0
        args["y"] = whole[GUARD:-GUARD]  # y(row(k)) += ...: a bad row would land outside
        k = 0 if where == "first" else matrix.nnz - 1
        args["row"][k] = bad
        with pytest.raises(ArgumentError, match=r"outside the declared range") as e:
            kernel(**args)
        assert f"row[{k}] = {bad} " in str(e.value)
        assert "partially written" in str(e.value)  # found where the loops read it
        assert (whole[:GUARD] == 7.0).all()
        assert (whole[-GUARD:] == 7.0).all()
        args["row"][k] = spf.sparse.csc_args(matrix, dtype)["row"][k]
        args["y"][:] = 0.0
        kernel(**args)  # the same arrays, mended: nothing remembered from the failure
        np.testing.assert_allclose(args["y"], matrix @ args["x"])


def test_an_entry_out_of_range_the_kernel_never_reads_is_not_an_error(matrix: Any) -> None:
    kernel = compiled("spmv_csc")
    args = _csc(matrix, "int32")
    extra = {"row": np.append(args["row"], 10**6).astype(np.int32), "A": np.append(args["A"], 5.0)}
    args |= extra | {"NNZ": matrix.nnz + 1}  # row[NNZ - 1] lies past colptr[M]: never read
    kernel(**args)
    np.testing.assert_allclose(args["y"], matrix @ args["x"])


def _offset_scatter(dtype: str, tmp_path: Path) -> spf.Kernel:
    """``y(f(i) - L) = i`` with ``f``'s range ``L - 2 <= v < L + 3`` (``y`` holds 5 more)."""
    comp = Computation("offset_scatter")
    comp.add_constant("L")
    comp.add_data_space("y", "double", shape=("5",))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: L - 2 <= v < L + 3}",
                    dtype=dtype)  # fmt: skip
    comp.add_stmt(Stmt("$y$(f(i) - L + 2) = i + 1.0;", "{[i]: 0 <= i < N}"))
    assert ranged(lower_checked(comp)) == {"f"}
    return comp.compile(cache_dir=tmp_path)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_range_that_does_not_start_at_zero_is_tested_at_both_ends(
    dtype: str, tmp_path: Path
) -> None:
    kernel = _offset_scatter(dtype, tmp_path)
    low = -7
    y = np.zeros(5)
    kernel(y=y, f=np.array([low - 2, low + 2, low], dtype=dtype), N=3, L=low)
    np.testing.assert_array_equal(y, [1.0, 0.0, 3.0, 0.0, 2.0])
    for bad in (low - 3, low + 3):
        f = np.array([low, bad, low], dtype=dtype)
        with pytest.raises(ArgumentError, match=rf"f\[1\] = {bad} is outside"):
            kernel(y=np.zeros(5), f=f, N=3, L=low)


def test_a_range_beyond_the_index_type_refuses_every_entry(tmp_path: Path) -> None:
    kernel = _offset_scatter("int32", tmp_path)
    f = np.array([0, 1], dtype=np.int32)  # L = 2**40: no int32 value can be in range
    with pytest.raises(ArgumentError, match=r"f\[0\] = 0 is outside"):
        kernel(y=np.zeros(5), f=f, N=2, L=2**40)
    wide = _offset_scatter("int64", tmp_path)
    y = np.zeros(5)
    wide(y=y, f=np.array([2**40 + 2, 2**40 - 2], dtype=np.int64), N=2, L=2**40)
    np.testing.assert_array_equal(y, [2.0, 0.0, 0.0, 0.0, 1.0])
