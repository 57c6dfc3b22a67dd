"""convert(CSR, BCSR(r, c)) and convert(BCSR(r, c), CSR / COO): the block pattern
synthesized from the BCSR relation, checked against scipy's tobsr (API §12)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, ELL, convert

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _matrices() -> list[tuple[str, Any]]:
    rng = np.random.default_rng(5)
    lil = sp.random_array((37, 20), density=0.2, rng=rng, format="lil")
    lil[[0, 4, 5, 36], :] = 0.0
    return [
        ("empty_rows", sp.csr_array(lil)),
        ("empty", sp.csr_array((0, 0))),
        ("no_rows", sp.csr_array((0, 5))),
        ("no_cols", sp.csr_array((5, 0))),
        ("all_zero", sp.csr_array((9, 4))),
        ("one_row", sp.random_array((1, 9), density=0.5, rng=rng, format="csr")),
        ("one_entry", sp.csr_array(([3.0], ([0], [0])), shape=(1, 1))),
        ("odd", sp.random_array((101, 33), density=0.15, rng=rng, format="csr")),
        ("wide", sp.random_array((13, 57), density=0.3, rng=rng, format="csr")),
        ("dense", sp.csr_array(rng.standard_normal((11, 7)))),
    ]


@pytest.fixture(scope="module")
def kernels() -> Callable[[spf.Format, spf.Format, str], Any]:
    """Each conversion compiled once per module."""
    cache: dict[tuple[str, str, str], Any] = {}

    def get(src: spf.Format, dst: spf.Format, index_dtype: str) -> Any:
        key = (src.name, dst.name, index_dtype)
        if key not in cache:
            cache[key] = convert(src, dst, index_dtype=index_dtype).compile()
        return cache[key]

    return get


def _padded(matrix: Any, r: int, c: int) -> Any:
    """``matrix`` in the BCSR extents ``r*NB`` by ``c*MB`` (zero rows and columns added)."""
    n, m = matrix.shape
    shape = (-(-n // r) * r, -(-m // c) * c)
    coo = matrix.tocoo()
    return sp.csr_array((coo.data, (coo.row, coo.col)), shape=shape)


CASES = [(2, 2, "int32"), (2, 2, "int64"), (3, 2, "int32"), (1, 1, "int64"), (4, 3, "int32")]


@pytest.mark.parametrize(("r", "c", "index_dtype"), CASES)
def test_csr_to_bcsr_matches_scipy_tobsr(kernels: Any, r: int, c: int, index_dtype: str) -> None:
    """The arrays equal scipy's tobsr((r, c)) of the zero-padded matrix, block columns
    increasing within block rows, partial blocks zero-filled; SpMV over them is scipy's."""
    spmv = spf.kernels.spmv(BCSR(r, c), index_dtype=index_dtype).compile()
    for label, matrix in _matrices():
        out = kernels(CSR, BCSR(r, c), index_dtype)(**spf.sparse.csr_args(matrix, index_dtype))
        assert sorted(out) == ["A", "MB", "NB", "NNZB", "bcol", "browptr"], label
        padded = _padded(matrix, r, c)
        bsr = padded.tobsr(blocksize=(r, c))
        bsr.sort_indices()
        np.testing.assert_array_equal(out["browptr"], bsr.indptr, err_msg=label)
        np.testing.assert_array_equal(out["bcol"], bsr.indices, err_msg=label)
        np.testing.assert_array_equal(out["A"], bsr.data.reshape(-1, r, c), err_msg=label)
        assert out["browptr"].dtype == out["bcol"].dtype == np.dtype(index_dtype), label
        assert (out["NB"], out["MB"], out["NNZB"]) == (
            padded.shape[0] // r, padded.shape[1] // c, len(bsr.indices)
        ), label  # fmt: skip
        want = spf.sparse.bcsr_args(matrix, r, c, index_dtype)
        np.testing.assert_array_equal(out["A"].reshape(-1), want["A"], err_msg=label)
        if padded.shape[0] and padded.shape[1]:
            x = np.zeros(padded.shape[1])
            x[: matrix.shape[1]] = np.linspace(-1.0, 1.0, matrix.shape[1])
            y = np.zeros(padded.shape[0])
            spmv(y=y, x=x, **out)
            np.testing.assert_allclose(y, padded @ x, rtol=1e-12, atol=1e-12, err_msg=label)


@pytest.mark.parametrize("dst", [CSR, COO], ids=lambda f: f.name)
@pytest.mark.parametrize(("r", "c", "index_dtype"), [(2, 2, "int32"), (3, 2, "int64")])
def test_bcsr_to_csr_and_coo_matches_scipy(
    kernels: Any, r: int, c: int, index_dtype: str, dst: spf.Format
) -> None:
    """Back from BCSR (flat A as spf.sparse.bcsr_args gives it, or A[NNZB, r, c]): the
    zero-padded matrix, the blocks' zero fill dropped, CSR canonical."""
    for label, matrix in _matrices():
        args = spf.sparse.bcsr_args(matrix, r, c, index_dtype)
        if label == "odd":
            args["A"] = args["A"].reshape(-1, r, c)
        out = kernels(BCSR(r, c), dst, index_dtype)(**args)
        padded = _padded(matrix, r, c)
        assert (out["N"], out["M"]) == padded.shape, label
        assert out["NNZ"] == matrix.nnz, label
        if dst is CSR:
            got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=padded.shape)
            assert got.has_canonical_format, label
            np.testing.assert_array_equal(out["rowptr"], padded.indptr, err_msg=label)
        else:
            got = sp.coo_array((out["A"], (out["row"], out["col"])), shape=padded.shape)
        np.testing.assert_array_equal(got.toarray(), padded.toarray(), err_msg=label)


def test_blocks_open_in_any_row_order_within_a_block_row(kernels: Any) -> None:
    """A block first met in a block row's second row still sorts before later columns."""
    matrix = sp.csr_array(np.array([[0, 0, 0, 0, 5.0, 0], [1.0, 0, 2.0, 0, 0, 3.0]]))
    out = kernels(CSR, BCSR(2, 2), "int32")(**spf.sparse.csr_args(matrix))
    assert out["browptr"].tolist() == [0, 3]
    assert out["bcol"].tolist() == [0, 1, 2]
    assert out["A"].tolist() == [[[0, 0], [1, 0]], [[0, 0], [2, 0]], [[5, 0], [0, 3]]]


def test_round_trips_on_suitesparse(kernels: Any, suitesparse_dir: Path) -> None:
    """CSR -> BCSR(2, 2) -> CSR on the small SuiteSparse matrices: scipy's blocks, then the
    matrix back."""
    paths = sorted(suitesparse_dir.glob("*.mtx"))
    assert paths
    for path in paths:
        matrix = sp.csr_array(spf.sparse.read_matrix_market(path))
        if matrix.nnz > 200_000:
            continue
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
        out = kernels(CSR, BCSR(2, 2), "int32")(**spf.sparse.csr_args(matrix, "int32"))
        want = spf.sparse.bcsr_args(matrix, 2, 2, "int32")
        for key in ("browptr", "bcol", "NB", "MB", "NNZB"):
            np.testing.assert_array_equal(out[key], want[key], err_msg=f"{path.name} {key}")
        np.testing.assert_array_equal(out["A"].reshape(-1), want["A"], err_msg=path.name)
        back = kernels(BCSR(2, 2), CSR, "int32")(**out)
        padded = _padded(matrix, 2, 2)
        np.testing.assert_array_equal(back["rowptr"], padded.indptr, err_msg=path.name)
        np.testing.assert_array_equal(back["col"], padded.indices, err_msg=path.name)
        np.testing.assert_array_equal(back["A"], padded.data, err_msg=path.name)


@pytest.mark.parametrize(
    ("src", "dst", "hint"),
    [
        (COO, BCSR(2, 2), "convert COO to CSR first"),
        (CSC, BCSR(2, 3), "convert CSC to CSR first"),
        (ELL, BCSR(2, 2), "convert ELL to CSR first"),
        (BCSR(2, 2), ELL, "convert BCSR2x2 to CSR first, then CSR to ELL"),
        (BCSR(2, 2), BCSR(4, 4), "convert BCSR2x2 to CSR first"),
    ],
    ids=lambda v: getattr(v, "name", "hint"),
)
def test_pairs_not_synthesized_name_both_formats(
    src: spf.Format, dst: spf.Format, hint: str
) -> None:
    with pytest.raises(spf.SpfError, match=rf"convert\({src.name} -> {dst.name}\).*{hint}"):
        convert(src, dst)


def test_out_of_range_columns_are_refused(kernels: Any) -> None:
    kernel = kernels(CSR, BCSR(2, 2), "int32")
    with pytest.raises(spf.ArgumentError, match=r"convert\(CSR -> BCSR2x2\)"):
        kernel(rowptr=np.array([0, 1], dtype=np.int32), col=np.array([4], dtype=np.int32),
               A=np.ones(1), N=1, M=4, NNZ=1)  # fmt: skip
