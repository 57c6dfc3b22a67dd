"""convert(src, ELL / DIA / BCSR) and convert(ELL / DIA / SELL / BCSR, COO / CSR / CSC):
the padded layouts synthesized from their relations, checked against scipy (API §12)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def _matrices() -> list[tuple[str, Any]]:
    rng = np.random.default_rng(11)
    lil = sp.random_array((37, 20), density=0.2, rng=rng, format="lil")
    lil[[0, 4, 5, 36], :] = 0.0
    skewed = sp.lil_array((29, 31))
    skewed[5, :] = 1.0  # one long row: everything else padded
    skewed[20, :7] = 2.0
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
        ("skewed", sp.csr_array(skewed)),
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


def _args(src: spf.Format, matrix: Any, index_dtype: str) -> dict[str, Any]:
    if src is COO:
        return spf.sparse.coo_args(matrix, index_dtype)
    return spf.sparse.format_args(matrix, src, index_dtype)


def _dense(fmt: spf.Format, out: dict[str, Any]) -> Any:
    """The matrix a COO / CSR / CSC result holds, through scipy (duplicates summed)."""
    shape = (out["N"], out["M"])
    if fmt is COO:
        return sp.coo_array((out["A"], (out["row"], out["col"])), shape=shape).toarray()
    if fmt is CSR:
        return sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=shape).toarray()
    return sp.csc_array((out["A"], out["row"], out["colptr"]), shape=shape).toarray()


SOURCES = [(CSR, "int32"), (CSR, "int64"), (COO, "int64"), (CSC, "int32")]


@pytest.mark.parametrize("dst", [ELL, DIA], ids=lambda f: f.name)
@pytest.mark.parametrize(("src", "index_dtype"), SOURCES, ids=lambda v: getattr(v, "name", v))
def test_to_padded_matches_reference(
    kernels: Any, src: spf.Format, index_dtype: str, dst: spf.Format
) -> None:
    """Every array equals spf.sparse's scipy-built reference (ELL: rows in column order,
    padding value 0 and column 0; DIA: offsets sorted, A[d, i] = entry (i, i + offsets[d])),
    offsets equal scipy's todia(), and the SpMV from the relation equals scipy's."""
    spmv = spf.kernels.spmv(dst, index_dtype=index_dtype).compile()
    for label, matrix in _matrices():
        out = kernels(src, dst, index_dtype)(**_args(src, matrix, index_dtype))
        want = spf.sparse.format_args(matrix, dst, index_dtype)
        assert sorted(out) == sorted(want), label
        for key, value in want.items():
            np.testing.assert_array_equal(out[key], value, err_msg=f"{label}: {key}")
            if isinstance(value, np.ndarray):
                assert out[key].dtype == value.dtype, (label, key)
        if dst is DIA and min(matrix.shape):
            with warnings.catch_warnings():  # scipy warns past 100 diagonals
                warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
                offsets = matrix.todia().offsets
            np.testing.assert_array_equal(out["offsets"], np.sort(offsets))
        n, m = matrix.shape
        if n and m:
            x = np.linspace(-1.0, 1.0, m)
            y = np.zeros(n)
            spmv(y=y, x=x, **out)
            np.testing.assert_allclose(y, matrix @ x, rtol=1e-12, atol=1e-12, err_msg=label)


# every laid-out source into every destination and both index types, though not every
# combination of the three (compile time)
STORED = [
    (ELL, "int32", COO), (ELL, "int32", CSR), (ELL, "int64", CSC), (DIA, "int64", COO),
    (DIA, "int32", CSR), (DIA, "int64", CSC), (SELL(4, 8), "int32", CSR),
    (SELL(8, 1), "int64", COO), (SELL(2, 4), "int64", CSC),
]  # fmt: skip


@pytest.mark.parametrize(("src", "index_dtype", "dst"), STORED,
                         ids=lambda v: getattr(v, "name", v))  # fmt: skip
def test_from_padded_matches_scipy(
    kernels: Any, src: spf.Format, index_dtype: str, dst: spf.Format
) -> None:
    """The matrix read back equals scipy's; padding never appears as an entry (NNZ equals
    the matrix's); a compressed result is canonical (sorted, no duplicates)."""
    for label, matrix in _matrices():
        out = kernels(src, dst, index_dtype)(**_args(src, matrix, index_dtype))
        np.testing.assert_array_equal(_dense(dst, out), matrix.toarray(), err_msg=label)
        assert out["NNZ"] == matrix.nnz, label
        for key in ("row", "col", "rowptr", "colptr"):
            if key in out:
                assert out[key].dtype == np.dtype(index_dtype), (label, key)
        if dst is CSR:
            back = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=matrix.shape)
            assert back.has_canonical_format, label


def test_ell_padding_is_the_zero_run_at_a_row_end(kernels: Any) -> None:
    """ELL rows have no stored length: zeros before a row's last nonzero are explicit
    entries (kept), the zeros after it padding (dropped), whatever their column."""
    col = np.array([[2, 0, 1], [0, 2, 2], [1, 1, 1]], dtype=np.int32)
    a = np.array([[5.0, 0.0, 7.0], [0.0, 0.0, 0.0], [0.0, 4.0, 0.0]])
    out = kernels(ELL, COO, "int32")(col=col, A=a, N=3, M=3, W=3)
    assert out["row"].tolist() == [0, 0, 0, 2, 2]
    assert out["col"].tolist() == [2, 0, 1, 1, 1]
    assert out["A"].tolist() == [5.0, 0.0, 7.0, 0.0, 4.0]
    csr = kernels(ELL, CSR, "int32")(col=col, A=a, N=3, M=3, W=3)
    assert csr["rowptr"].tolist() == [0, 3, 3, 4]  # row 2's explicit zero at column 1 summed
    assert csr["col"].tolist() == [0, 1, 2, 1]
    assert csr["A"].tolist() == [0.0, 7.0, 5.0, 4.0]


def test_dia_explicit_zeros_are_dropped_like_scipy(kernels: Any) -> None:
    """DIA slots holding 0 (inside the band or off the matrix) are not entries, as in
    scipy's dia_array.tocoo(); duplicate COO entries land in one DIA slot, summed."""
    offsets = np.array([-1, 0, 2], dtype=np.int32)
    a = np.array([[9.0, 1.0, 0.0], [2.0, 0.0, 3.0], [4.0, 9.0, 9.0]])  # off-matrix 9s ignored
    out = kernels(DIA, COO, "int32")(offsets=offsets, A=a, N=3, M=3, ND=3)
    want = np.array([[2.0, 0.0, 4.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    np.testing.assert_array_equal(_scipy_dia(a, offsets), want)
    assert out["NNZ"] == 4
    np.testing.assert_array_equal(_dense(COO, out), want)
    row = np.array([0, 0, 2], dtype=np.int32)
    col = np.array([1, 1, 2], dtype=np.int32)
    dia = kernels(COO, DIA, "int32")(row=row, col=col, A=np.array([1.0, 2.0, 3.0]), N=3, M=3,
                                     NNZ=3)  # fmt: skip
    assert dia["offsets"].tolist() == [0, 1]
    assert dia["A"].tolist() == [[0.0, 0.0, 3.0], [3.0, 0.0, 0.0]]


def _scipy_dia(a: Any, offsets: Any) -> Any:
    """spf's DIA ``A[d, i]`` (entry ``(i, i + off)``) as scipy's row-of-columns layout."""
    n = a.shape[1]
    out = np.zeros((len(offsets), n))
    for d, off in enumerate(offsets):
        for i in range(n):
            if 0 <= i + off < n:
                out[d, i + off] = a[d, i]
    return sp.dia_array((out, offsets), shape=(n, n)).toarray()


def test_ell_row_columns_unsorted_and_repeated_still_give_canonical_csr(kernels: Any) -> None:
    col = np.array([[3, 1, 3], [2, 0, 0]], dtype=np.int64)
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    out = kernels(ELL, CSR, "int64")(col=col, A=a, N=2, M=4, W=3)
    assert out["rowptr"].tolist() == [0, 2, 4]
    assert out["col"].tolist() == [1, 3, 0, 2]
    assert out["A"].tolist() == [2.0, 4.0, 5.0, 4.0]


def test_round_trips_on_suitesparse(kernels: Any, suitesparse_dir: Path) -> None:
    """CSR -> ELL / DIA / BCSR(2, 2) / SELL(8, 32) -> CSR on the small SuiteSparse matrices:
    the arrays spf.sparse builds with scipy, then scipy's canonical CSR back (BCSR: of the
    matrix zero-padded to even extents); ELL and DIA where their padded A stays small."""
    paths = sorted(suitesparse_dir.glob("*.mtx"))
    assert paths
    for path in paths:
        matrix = sp.csr_array(spf.sparse.read_matrix_market(path))
        if matrix.nnz > 200_000:
            continue
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
        coo = matrix.tocoo()
        width = int(np.diff(matrix.indptr).max(initial=0))
        ndiag = len(np.unique(coo.col.astype(np.int64) - coo.row))
        fmts = [f for f, slots in ((ELL, width), (DIA, ndiag)) if slots * matrix.shape[0] < 4e6]
        for fmt in [*fmts, BCSR(2, 2), SELL(8, 32)]:
            packed = kernels(CSR, fmt, "int32")(**spf.sparse.csr_args(matrix, "int32"))
            want = spf.sparse.format_args(matrix, fmt, "int32")
            for key, value in want.items():
                got = np.reshape(packed[key], np.shape(value))  # BCSR's A: flat in spf.sparse
                np.testing.assert_array_equal(got, value, err_msg=f"{path.name} {key}")
            back = kernels(fmt, CSR, "int32")(**packed)
            ref = _padded(matrix, 2, 2) if fmt.name == "BCSR2x2" else matrix
            np.testing.assert_array_equal(back["rowptr"], ref.indptr, err_msg=path.name)
            np.testing.assert_array_equal(back["col"], ref.indices, err_msg=path.name)
            np.testing.assert_array_equal(back["A"], ref.data, err_msg=path.name)


@pytest.mark.parametrize(
    ("src", "dst", "hint"),
    [
        (ELL, DIA, r"convert ELL to CSR first, then CSR to DIA"),
        (DIA, ELL, r"convert DIA to CSR first, then CSR to ELL"),
        (ELL, SELL(4, 1), r"convert ELL to CSR first, then CSR to SELL4_1"),
        (SELL(2, 1), SELL(4, 1), r"convert SELL2_1 to CSR first"),
        (SELL(2, 1), ELL, r"convert SELL2_1 to CSR first"),
        (COO, BCSR(2, 2), "convert COO to CSR first"),
        (CSC, BCSR(2, 3), "convert CSC to CSR first"),
        (ELL, BCSR(2, 2), "convert ELL to CSR first"),
        (BCSR(2, 2), ELL, "convert BCSR2x2 to CSR first, then CSR to ELL"),
        (BCSR(2, 2), BCSR(4, 4), "convert BCSR2x2 to CSR first"),
    ],
    ids=lambda v: getattr(v, "name", "hint"),
)
def test_pairs_not_synthesized_name_both_formats(src: spf.Format, dst: spf.Format,
                                                 hint: str) -> None:  # fmt: skip
    with pytest.raises(spf.SpfError, match=rf"convert\({src.name} -> {dst.name}\).*{hint}"):
        convert(src, dst)


def test_out_of_range_source_values_are_refused(kernels: Any) -> None:
    ell = kernels(ELL, COO, "int32")
    with pytest.raises(spf.ArgumentError, match=r"convert\(ELL -> COO\)"):
        ell(col=np.array([[0, 5]], dtype=np.int32), A=np.ones((1, 2)), N=1, M=3, W=2)
    dia = kernels(DIA, COO, "int32")
    with pytest.raises(spf.ArgumentError, match=r"convert\(DIA -> COO\)"):
        dia(offsets=np.array([3], dtype=np.int32), A=np.ones((1, 2)), N=2, M=3, ND=1)
    to_ell = kernels(CSR, ELL, "int32")
    with pytest.raises(spf.ArgumentError, match=r"convert\(CSR -> ELL\)"):
        to_ell(rowptr=np.array([0, 1], dtype=np.int32), col=np.array([7], dtype=np.int32),
               A=np.ones(1), N=1, M=2, NNZ=1)  # fmt: skip
    to_bcsr = kernels(CSR, BCSR(2, 2), "int32")
    with pytest.raises(spf.ArgumentError, match=r"convert\(CSR -> BCSR2x2\)"):
        to_bcsr(rowptr=np.array([0, 1], dtype=np.int32), col=np.array([4], dtype=np.int32),
                A=np.ones(1), N=1, M=4, NNZ=1)  # fmt: skip


def test_synthesis_reads_the_relation_not_the_name() -> None:
    """A DIA-like format of one's own (other names, K diagonals) converts both ways."""
    mine = spf.Format(
        "MYDIA",
        coords="[r, c]",
        storage="{[r, c] -> [e, q]: 0 <= e < K && 0 <= q < N && r = q && c = q + shift(e) "
        "&& 0 <= c < M}",
        ufs=[spf.UF("shift", domain="{[t]: 0 <= t < K}", range="{[v]: -N < v < M}")],
        value="band",
        value_shape=("K", "N"),
    )
    matrix = _matrices()[0][1]
    out = convert(CSR, mine).compile()(**spf.sparse.csr_args(matrix))
    want = spf.sparse.dia_args(matrix, names={"offsets": "shift", "A": "band", "ND": "K"})
    assert sorted(out) == sorted(want)
    for key, value in want.items():
        np.testing.assert_array_equal(out[key], value, err_msg=key)
    back = convert(mine, CSR).compile()(**out)
    np.testing.assert_array_equal(back["rowptr"], matrix.indptr)
    np.testing.assert_array_equal(back["col"], matrix.indices)


def _padded(matrix: Any, r: int, c: int) -> Any:
    """``matrix`` in the BCSR extents ``r*NB`` by ``c*MB`` (zero rows and columns added)."""
    n, m = matrix.shape
    shape = (-(-n // r) * r, -(-m // c) * c)
    coo = matrix.tocoo()
    return sp.csr_array((coo.data, (coo.row, coo.col)), shape=shape)


BCSR_CASES = [(2, 2, "int32"), (2, 2, "int64"), (3, 2, "int32"), (1, 1, "int64"), (4, 3, "int32")]


@pytest.mark.parametrize(("r", "c", "index_dtype"), BCSR_CASES)
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


def test_csr_to_bcsr_blocks_in_and_out_of_column_order(kernels: Any) -> None:
    """Blocks met in increasing block column order within every block row keep their scan
    order (no sort); a block row where a later row opens a block left of an earlier one's
    takes the counting sort by block column. Both give scipy's sorted BCSR."""
    in_order = np.array([[1.0, 0, 0, 2.0, 0, 0], [0, 3.0, 0, 0, 0, 4.0], [5.0, 0, 0, 0, 6.0, 0]])
    out_of_order = in_order.copy()
    out_of_order[0, 0] = 0.0  # row 0 opens block column 1 only, then row 1 opens 0
    for dense in (in_order, out_of_order):
        matrix = sp.csr_array(dense)
        out = kernels(CSR, BCSR(2, 2), "int32")(**spf.sparse.csr_args(matrix))
        bsr = _padded(matrix, 2, 2).tobsr(blocksize=(2, 2))
        bsr.sort_indices()
        np.testing.assert_array_equal(out["browptr"], bsr.indptr)
        np.testing.assert_array_equal(out["bcol"], bsr.indices)
        np.testing.assert_array_equal(out["A"], bsr.data)


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
