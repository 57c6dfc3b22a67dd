"""spf.formats.convert: conversions synthesized from two format relations (API §12)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert

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
    assert conv.codegen("c").count("void ") == 1
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


SUITESPARSE = Path("/work/shared/data/suitesparse")


@pytest.mark.skipif(not SUITESPARSE.is_dir(), reason="SuiteSparse matrices not present")
def test_convert_suitesparse() -> None:
    to_csr = convert(COO, CSR).compile()
    to_csc = convert(CSR, CSC).compile()
    for name in ("bcsstk13.mtx", "lp_afiro.mtx", "LFAT5_hypersparse.mtx", "arrow.mtx"):
        path = SUITESPARSE / name
        if not path.exists():
            continue
        matrix = sp.coo_array(spf.sparse.read_matrix_market(path))
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
