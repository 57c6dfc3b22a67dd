"""Conversion kernels check their sizes before allocating, and size their scratch by the
entries, not by the column count (API.md §16; issue 27 item 7)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, Format, convert
from spf.formats.ranks import KEY_SLACK, rank_sizes

_KERNELS: dict[tuple[str, str, str], Any] = {}


def _kernel(src: Format, dst: Format, index_dtype: str = "int32") -> Any:
    """``convert(src, dst)`` compiled once per pair and index type for this module."""
    key = (src.name, dst.name, index_dtype)
    if key not in _KERNELS:
        _KERNELS[key] = convert(src, dst, index_dtype=index_dtype).compile()
    return _KERNELS[key]


def _small() -> Any:
    return sp.csr_array(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 5.0, 0.0]]))


def _peak(fn: Any) -> tuple[Any, int]:
    """``fn()`` and the most memory Python and numpy held at once while it ran."""
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------- a size disagreeing with its array
@pytest.mark.parametrize(
    ("src", "dst", "size", "array"),
    [
        (CSR, SELL(4, 1), "N", "rowptr"),
        (CSR, BCSR(2, 2), "N", "rowptr"),
        (CSR, ELL, "N", "rowptr"),
        (CSR, DIA, "NNZ", "A"),
        (COO, CSR, "NNZ", "A"),
        (DIA, COO, "ND", "A"),
        (ELL, CSR, "W", "A"),
        (BCSR(2, 2), COO, "NNZB", "A"),
        (SELL(4, 1), COO, "NV", "val"),
    ],
    ids=lambda v: v.name if isinstance(v, Format) else str(v),
)
def test_size_disagreeing_with_its_array_named_before_allocating(
    src: Format, dst: Format, size: str, array: str
) -> None:
    args = spf.sparse.format_args(_small(), src)
    args[size] = 10**12
    kernel = _kernel(src, dst)
    with pytest.raises(spf.ArgumentError) as err:
        _peak(lambda: kernel(**args))
    text = str(err.value)
    assert f"convert({src.name} -> {dst.name})" in text
    assert f"{size} = {10**12}" in text
    assert f"{array} has " in text


def test_size_disagreeing_with_its_array_allocates_nothing() -> None:
    args = spf.sparse.csr_args(_small())
    args["N"] = 10**9  # rowptr has 4 entries: 10**9 + 1 would be 4 GB of row pointers
    kernel = _kernel(CSR, SELL(4, 1))
    tracemalloc.start()
    try:
        with pytest.raises(spf.ArgumentError, match=r"rowptr has 4 entries"):
            kernel(**args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# ------------------------------------------------- sizes no array records, too big to hold
@pytest.mark.parametrize(
    ("src", "dst", "size"),
    [(COO, CSR, "N"), (COO, SELL(4, 8), "N"), (CSR, CSC, "M"), (COO, DIA, "N")],
    ids=lambda v: v.name if isinstance(v, Format) else str(v),
)
@pytest.mark.parametrize("value", [10**13, 2**62], ids=["1e13", "2^62"])
def test_size_too_big_for_memory_refused_naming_it(
    src: Format, dst: Format, size: str, value: int
) -> None:
    """COO's N and M and CSR's M are recorded by no array: a huge one reaches the
    allocation, which refuses it (ArgumentError naming the size), not numpy (MemoryError,
    ValueError) nor the operating system (the process killed)."""
    args = spf.sparse.format_args(_small(), src, "int64")
    args[size] = value
    with pytest.raises(spf.ArgumentError, match=rf"{size} = {value}.*memory") as err:
        _kernel(src, dst, "int64")(**args)
    assert f"check {size}" in str(err.value)


def test_longest_row_too_long_for_ell_refused_naming_w() -> None:
    """W is the longest row, computed by the kernel: one row of every column of a 2*10^6
    square matrix would make ELL's arrays 4*10^12 slots."""
    n = 2_000_000
    args = {"row": np.zeros(n, dtype=np.int32), "col": np.arange(n, dtype=np.int32),
            "A": np.ones(n), "N": n, "M": n, "NNZ": n}  # fmt: skip
    with pytest.raises(spf.ArgumentError, match=r"W = 2000000 \(the longest row\).*memory"):
        _kernel(COO, ELL)(**args)


# ---------------------------------------------- scratch sized by entries, not by columns
WIDE = 5 * 10**9


def _wide() -> Any:
    """3 x 5*10^9 with 46 entries: row 1 holds 40 (some duplicated) spread over the columns,
    so COO -> CSR takes its long-row path."""
    rng = np.random.default_rng(3)
    cols = np.concatenate([rng.integers(0, WIDE, 36), [0, WIDE - 1, 7, 7], [5, WIDE - 2]])
    cols = np.concatenate([cols, [3, 3, 4 * 10**9, 4 * 10**9 + 1]])
    rows = np.concatenate([np.ones(40, dtype=np.int64), [0, 0], [2, 2, 2, 2]])
    return sp.coo_array((rng.standard_normal(len(rows)), (rows, cols)), shape=(3, WIDE))


def _bcsr_reference(m: Any, r: int, c: int) -> dict[str, Any]:
    """BCSR arrays by numpy (scipy's tobsr sizes its scratch by the block columns)."""
    coo = sp.coo_array(m)
    coo.sum_duplicates()
    keys = (coo.row // r) * (-(-m.shape[1] // c)) + coo.col // c
    blocks, which = np.unique(keys, return_inverse=True)
    nb = -(-m.shape[0] // r)
    values = np.zeros((len(blocks), r, c))
    np.add.at(values, (which, coo.row % r, coo.col % c), coo.data)
    mb = -(-m.shape[1] // c)
    browptr = np.searchsorted(blocks // mb, np.arange(nb + 1))
    return {"browptr": browptr, "bcol": blocks % mb, "A": values, "NNZB": len(blocks)}


@pytest.mark.parametrize("dst", [CSR, BCSR(4, 4), DIA, SELL(8, 32), ELL, COO],
                         ids=lambda f: f.name)  # fmt: skip
def test_scratch_sized_by_entries_not_columns(dst: Format) -> None:
    """A 3 x 5*10^9 matrix of 46 entries converts at once, as scipy converts it (a scratch
    array per column would be 40 GB)."""
    m = _wide()
    csr = m.tocsr()
    csr.sum_duplicates()
    src = COO if dst in (CSR, COO) else CSR
    args = spf.sparse.format_args(m if src is COO else csr, src, "int64")
    kernel = _kernel(src, dst, "int64")
    out, peak = _peak(lambda: kernel(**args))
    assert peak < 16 << 20
    if dst is BCSR(4, 4):
        want = _bcsr_reference(csr, 4, 4)
    elif dst is COO:
        want = {"row": m.row, "col": m.col, "A": m.data}
    else:
        want = spf.sparse.format_args(csr, dst, "int64")
    for key, value in want.items():
        assert np.array_equal(np.asarray(out[key]).reshape(-1), np.asarray(value).reshape(-1)), key


def test_ranks_take_the_sort_only_past_the_slack() -> None:
    """Keys are their own ranks while the extent is at most NNZ + KEY_SLACK; beyond, 2
    passes for keys below 2^32, 4 above, of at most 16 bits."""
    assert rank_sizes(1000 + KEY_SLACK, 1000)["CV_NB"] == 0
    assert rank_sizes(1001 + KEY_SLACK, 1000) == {
        "CV_KR": 1000, "CV_NB": 1000, "CV_NH": 1 << 9, "CV_RB": 9, "CV_RQ": 1}  # fmt: skip
    wide = rank_sizes(WIDE, 10)
    assert (wide["CV_RQ"], wide["CV_RB"], wide["CV_NH"]) == (2, 9, 512)
    assert rank_sizes(2**63 - 1, 10)["CV_RB"] == 16


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dst", [CSR, CSC], ids=lambda f: f.name)
def test_long_rows_sorted_by_ranks_match_scipy(dst: Format, index_dtype: str) -> None:
    """COO -> CSR / CSC through the long-row path, inner extents past the slack (sorted by
    a radix sort into ranks) and below it (their own ranks), duplicates summed."""
    rng = np.random.default_rng(5)
    wide = 2**31 - 1 if index_dtype == "int32" else 3 * 10**10
    for n, m, nnz in ((4, wide, 300), (7, KEY_SLACK + 10, 500)):
        shape = (n, m) if dst is CSR else (m, n)
        inner = np.concatenate([rng.integers(0, m, nnz - 20), np.full(20, m - 1)])
        outer = np.where(rng.random(nnz) < 0.9, 1, rng.integers(0, n, nnz))
        rows, cols = (outer, inner) if dst is CSR else (inner, outer)
        coo = sp.coo_array((rng.standard_normal(nnz), (rows, cols)), shape=shape)
        out = _kernel(COO, dst, index_dtype)(**spf.sparse.coo_args(coo, index_dtype))
        want = sp.csr_array(coo) if dst is CSR else sp.csc_array(coo)
        want.sum_duplicates()
        ptr, idx = ("rowptr", "col") if dst is CSR else ("colptr", "row")
        assert np.array_equal(out[ptr], want.indptr)
        assert np.array_equal(out[idx], want.indices)
        assert np.allclose(out["A"], want.data, rtol=1e-14, atol=0)
