"""spf.formats.convert: conversions synthesized from two format relations (API §12)."""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert

if TYPE_CHECKING:
    from pathlib import Path

    from spf.formats.convert import ConversionKernel

PAIRS = [(COO, CSR), (CSR, CSC), (CSR, COO), (COO, CSC), (CSC, CSR), (CSC, COO), (CSR, CSR),
         (COO, COO)]  # fmt: skip


def _coo_with_duplicates(n: int, m: int, nnz: int, seed: int) -> object:
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, nnz) if n else np.zeros(0, dtype=np.int64)
    cols = rng.integers(0, m, nnz) if m else np.zeros(0, dtype=np.int64)
    return sp.coo_array((rng.standard_normal(nnz), (rows, cols)), shape=(n, m))


def _matrices() -> list[tuple[str, object]]:
    lil = _coo_with_duplicates(30, 20, 90, 1).tolil()
    lil[4, :] = 0
    lil[11, :] = 0
    return [
        ("duplicates", _coo_with_duplicates(30, 20, 120, 0)),
        ("empty_rows", sp.coo_array(lil)),
        ("empty", sp.coo_array((6, 5))),
        ("one_row", _coo_with_duplicates(1, 12, 7, 2)),
        ("tall", _coo_with_duplicates(60, 3, 50, 3)),
    ]


def _args(fmt: spf.Format, matrix: object, index_dtype: str) -> dict[str, object]:
    if fmt is COO:
        return spf.sparse.coo_args(matrix, index_dtype)  # duplicates kept, any order
    return spf.sparse.format_args(matrix, fmt, index_dtype)


def _canonical(fmt: spf.Format, out: dict[str, object], shape: tuple[int, int]) -> object:
    if fmt is COO:
        return sp.coo_array((out["A"], (out["row"], out["col"])), shape=shape).tocsr()
    if fmt is CSR:
        m = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=shape)
    else:
        m = sp.csc_array((out["A"], out["row"], out["colptr"]), shape=shape)
    assert m.has_sorted_indices
    assert m.has_canonical_format
    return m.tocsr()


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize(("src", "dst"), PAIRS, ids=lambda f: f.name)
def test_convert_matches_scipy(src: spf.Format, dst: spf.Format, index_dtype: str) -> None:
    kernel = convert(src, dst, index_dtype=index_dtype).compile()
    for label, matrix in _matrices():
        shape = matrix.shape  # type: ignore[attr-defined]
        out = kernel(**_args(src, matrix, index_dtype))
        assert out["N"] == shape[0]
        assert out["M"] == shape[1]
        got = _canonical(dst, out, shape)
        want = sp.csr_array(matrix)
        want.sum_duplicates()
        diff = abs(got - want)
        assert diff.nnz == 0 or diff.max() < 1e-12, label
        if dst is not COO:
            assert out["NNZ"] == want.nnz, label
        for key in dst.ufs:
            assert out[key].dtype == np.dtype(index_dtype), (label, key)


def test_duplicates_merge_within_rows_only() -> None:
    """Equal columns at the end of one row and the start of the next stay apart; a row of
    nothing but copies of one entry becomes one entry (regression: the in-place merge)."""
    row = np.array([0, 1, 0, 1, 2, 2, 2], dtype=np.int32)
    col = np.array([3, 3, 3, 0, 1, 1, 1], dtype=np.int32)
    a = np.arange(1.0, 8.0)
    out = convert(COO, CSR).compile()(row=row, col=col, A=a, N=3, M=4, NNZ=7)
    assert out["rowptr"].tolist() == [0, 1, 3, 4]
    assert out["col"].tolist() == [3, 0, 3, 1]
    assert out["A"].tolist() == [4.0, 4.0, 2.0, 18.0]
    assert out["NNZ"] == 4


_KERNELS: dict[tuple[str, str, int], ConversionKernel] = {}


def _kernel(dst: spf.Format, index_dtype: str) -> ConversionKernel:
    """``convert(COO, dst)`` compiled once per destination, index type and rank threshold."""
    key = (dst.name, index_dtype, importlib.import_module("spf.formats.convert").RANK_COST)
    if key not in _KERNELS:
        _KERNELS[key] = convert(COO, dst, index_dtype=index_dtype).compile()
    return _KERNELS[key]


def _check_sorted_conversion(
    dst: spf.Format,
    row: object,
    col: object,
    a: object,
    shape: tuple[int, int],
    index_dtype: str = "int32",
) -> None:
    """COO ``(row, col, a)`` -> ``dst`` equals scipy's, canonical (sorted, summed)."""
    r, c = np.asarray(row, dtype=index_dtype), np.asarray(col, dtype=index_dtype)
    v = np.asarray(a, dtype=np.float64)
    out = _kernel(dst, index_dtype)(row=r, col=c, A=v, N=shape[0], M=shape[1], NNZ=len(v))
    want = sp.csr_array(sp.coo_array((v, (r, c)), shape=shape))
    want.sum_duplicates()
    got = _canonical(dst, out, shape)
    assert out["NNZ"] == want.nnz
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-12)


@pytest.mark.parametrize("dst", [CSR, CSC], ids=lambda f: f.name)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_input_already_in_order_and_its_fallbacks(dst: spf.Format, index_dtype: str) -> None:
    """Entries already in the destination's order are copied (path 0); one entry out of
    order, or two equal neighbours, fall back to the sort (and the duplicate merge)."""
    m = sp.random_array((40, 30), density=0.2, format="csr", rng=5)
    m = m if dst is CSR else m.T.tocsr()
    coo = sp.coo_array(m)
    r, c, v = coo.row, coo.col, coo.data
    if dst is CSC:
        r, c = c, r
    shape = (40, 30)
    _check_sorted_conversion(dst, r, c, v, shape, index_dtype)  # in order: copied
    swapped = np.arange(len(v))
    swapped[[3, 4]] = swapped[[4, 3]]
    _check_sorted_conversion(dst, r[swapped], c[swapped], v[swapped], shape, index_dtype)
    twice = np.sort(np.concatenate([np.arange(len(v)), [7]]))  # entry 7 twice, adjacent
    _check_sorted_conversion(dst, r[twice], c[twice], v[twice], shape, index_dtype)


@pytest.mark.parametrize("length", [16, 17, 40])
def test_long_rows_take_the_counting_sort(length: int) -> None:
    """One row of ``length`` unsorted entries with duplicates: the sum of squared row lengths
    (length**2) against 16 * NNZ picks the rank sort (16) or the counting sort (17, 40)."""
    rng = np.random.default_rng(length)
    col = rng.integers(0, 12, length)
    _check_sorted_conversion(CSR, np.full(length, 2), col, rng.standard_normal(length), (4, 12))
    _check_sorted_conversion(CSC, col, np.full(length, 2), rng.standard_normal(length), (12, 4))


def test_mixed_long_and_short_rows() -> None:
    """A dense row among short ones (arrow-like): counting sort, duplicates summed."""
    rng = np.random.default_rng(9)
    n = 200
    row = np.concatenate([np.zeros(n, dtype=np.int64), rng.integers(0, n, 300)])
    col = np.concatenate([rng.permutation(n), rng.integers(0, n, 300)])
    a = rng.standard_normal(len(row))
    for keep in (slice(None), slice(n, None)):  # with the dense row, then without it
        _check_sorted_conversion(CSR, row[keep], col[keep], a[keep], (n, n))
        _check_sorted_conversion(CSR, row[keep], col[keep], a[keep], (n, n), "int64")


@pytest.mark.parametrize("cost", [0, 10**9])
@pytest.mark.parametrize("dst", [CSR, CSC], ids=lambda f: f.name)
def test_each_sort_alone_matches_scipy(
    dst: spf.Format, cost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rank sort threshold forced each way: every row counting-sorted (0) or every row
    rank-sorted (10**9); both equal to scipy on every test matrix."""
    monkeypatch.setattr(importlib.import_module("spf.formats.convert"), "RANK_COST", cost)
    for _, matrix in _matrices():
        coo = sp.coo_array(matrix)
        shape = (int(coo.shape[0]), int(coo.shape[1]))
        _check_sorted_conversion(dst, coo.row, coo.col, coo.data, shape)


@pytest.mark.parametrize("cost", [0, 16])
@pytest.mark.parametrize("where", ["none", "first", "middle", "last"])
def test_duplicates_summed_only_when_present(
    where: str, cost: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without duplicates the entries stay where the sort put them (no merge); with a
    duplicate pair in the first, a middle or the last row, the merge starts at that row
    (the row pointers before it are copied) and sums it. Both sorts (``cost``)."""
    monkeypatch.setattr(importlib.import_module("spf.formats.convert"), "RANK_COST", cost)
    rng = np.random.default_rng(3)
    cells = rng.permutation(50 * 40)[:600]
    row, col = cells // 40, cells % 40
    a = rng.standard_normal(600)
    if where != "none":
        target = {"first": 0, "middle": 23, "last": 49}[where]
        mine = np.flatnonzero(row == target)
        row[500], col[500] = target, col[mine[0]]
    _check_sorted_conversion(CSR, row, col, a, (50, 40))


def test_output_feeds_spmv_of_destination() -> None:
    matrix = _coo_with_duplicates(25, 18, 80, 4)
    out = convert(COO, CSR).compile()(**spf.sparse.coo_args(matrix))
    y = np.zeros(25)
    x = np.linspace(0.0, 1.0, 18)
    spf.kernels.spmv(CSR).compile()(y=y, x=x, **out)
    np.testing.assert_allclose(y, sp.csr_array(matrix) @ x)


def test_conversion_is_spf_computations() -> None:
    conv = convert(COO, CSR)
    assert isinstance(conv, spf.Computation)
    assert "cv_ptr" in str(conv)
    # one function (run with the call's fault record, spf.codegen.faults, and its wrapper)
    functions = re.findall(r"^void (\w+)\(", conv.codegen("c"), re.MULTILINE)
    assert functions == ["convert_coo_csr_spf_faults", "convert_coo_csr"]
    # CSR rows visited in order: one counting pass, no sort, no duplicate merge
    assert len(convert(CSR, CSC).stmts) < len(conv.stmts)
    assert "cv_ord" not in convert(CSR, CSC).data_spaces


def test_out_of_range_coordinates_refused() -> None:
    args = spf.sparse.coo_args(sp.coo_array(np.eye(3)))
    args["row"] = np.array([0, 1, 3], dtype=np.int32)
    with pytest.raises(spf.ArgumentError, match="outside the declared range"):
        convert(COO, CSR).compile()(**args)
    args["row"] = np.array([0, -1, 2], dtype=np.int32)
    with pytest.raises(spf.ArgumentError, match="outside the declared range"):
        convert(COO, CSC).compile()(**args)


def test_source_violating_its_assumption_refused() -> None:
    args = spf.sparse.csr_args(sp.csr_array(np.array([[1.0, 2.0], [3.0, 0.0]])))
    args["col"] = np.array([1, 0, 0], dtype=np.int32)  # row 0 unsorted
    with pytest.raises(spf.SpfError, match="col"):
        convert(CSR, CSC).compile()(**args)


def test_bad_arguments() -> None:
    kernel = convert(COO, CSR).compile()
    args = spf.sparse.coo_args(sp.coo_array(np.eye(2)))
    with pytest.raises(spf.ArgumentError, match="missing argument"):
        kernel(**{k: v for k, v in args.items() if k != "row"})
    with pytest.raises(spf.ArgumentError, match="unknown argument"):
        kernel(**args, rowptr=np.zeros(3))
    with pytest.raises(spf.ArgumentError, match="non-negative int"):
        kernel(**{**args, "NNZ": -1})


@pytest.mark.parametrize("dst", [DIA, ELL, BCSR(2, 2), SELL(4, 1)], ids=lambda f: f.name)
def test_unsupported_pairs_have_clear_errors(dst: spf.Format) -> None:
    # CSR <-> DIA, ELL, SELL are synthesized (test_format_padded_convert.py,
    # test_format_sell_convert.py); between two laid-out formats they go through CSR
    with pytest.raises(spf.SpfError, match=rf"convert\(SELL2_1 -> {dst.name}\).*CSR first"):
        convert(SELL(2, 1), dst)
    with pytest.raises(spf.SpfError, match="index_dtype"):
        convert(COO, CSR, index_dtype="float64")
    with pytest.raises(spf.SpfError, match=r"spf\.Format"):
        convert("COO", CSR)  # type: ignore[arg-type]


def test_convert_suitesparse(suitesparse_dir: Path) -> None:
    to_csr = convert(COO, CSR).compile()
    to_csc = convert(CSR, CSC).compile()
    for path in sorted(suitesparse_dir.glob("*.mtx")):
        name = path.name
        matrix = sp.coo_array(spf.sparse.read_matrix_market(path))
        order = np.random.default_rng(0).permutation(matrix.nnz)  # the sorts, not the copy
        shuffled = sp.coo_array(
            (matrix.data[order], (matrix.row[order], matrix.col[order])), shape=matrix.shape
        )
        shape = (int(matrix.shape[0]), int(matrix.shape[1]))
        for dst in (CSR, CSC):
            _check_sorted_conversion(dst, shuffled.row, shuffled.col, shuffled.data, shape)
        out = to_csr(**spf.sparse.coo_args(matrix))
        want = sp.csr_array(matrix)
        want.sum_duplicates()
        assert np.array_equal(out["rowptr"], want.indptr), name
        assert np.array_equal(out["col"], want.indices), name
        np.testing.assert_allclose(out["A"], want.data, err_msg=name)
        csc = to_csc(**out)
        ref = want.tocsc()
        assert np.array_equal(csc["colptr"], ref.indptr), name
        assert np.array_equal(csc["row"], ref.indices), name
