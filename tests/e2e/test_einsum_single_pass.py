"""A sparse einsum output built in one pass on one thread (spf.index_notation.single_pass):
the same arrays, bit for bit, as the two phases a team of threads runs, against scipy, on
matrices with empty rows, no rows, one row, no entries, int32 and int64 indices; which
path a call takes follows the OpenMP team (``parallel=False``: always the single pass).
The kernels are compiled once per index type (module cache)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import CSR
from spf.sparse import csr_args
from spf.testing import fixed_team as _team

_KERNELS: dict[tuple[str, str, bool], Any] = {}
SPADD = "C(i,j) = A(i,j) - 2 * B(i,j)"


def _kernel(text: str, dtype: str, parallel: bool = True) -> Any:
    key = (text, dtype, parallel)
    if key not in _KERNELS:
        if text == spf.kernels.SPGEMM:
            comp: Any = spf.kernels.spgemm_csr(index_dtype=dtype, parallel=parallel)
        else:
            comp = spf.einsum(text, A=CSR, B=CSR, C=CSR, index_dtype=dtype, parallel=parallel)
        _KERNELS[key] = comp.compile()
    return _KERNELS[key]


def _matrix(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    """A random CSR matrix, columns sorted, its rows 1, 4, 7, ... empty."""
    a = sp.random_array((n, m), density=density, format="coo", rng=seed)
    keep = a.coords[0] % 3 != 1
    out = sp.csr_array((a.data[keep], (a.coords[0][keep], a.coords[1][keep])), shape=(n, m))
    out.sort_indices()
    return out


MATRICES = [(40, 30, 0.1), (1, 9, 0.5), (17, 1, 0.4), (0, 5, 0.0), (6, 4, 0.0), (31, 23, 0.3)]


def _args(a: sp.csr_array, b: sp.csr_array, dtype: str, spgemm: bool) -> dict[str, Any]:
    args = {**csr_args(a, dtype, prefix="A_"), **csr_args(b, dtype, prefix="B_")}
    if spgemm:  # spgemm_csr's sizes are N, K, M
        args = {k: v for k, v in args.items() if not isinstance(v, int)}
        args.update(N=a.shape[0], K=a.shape[1], M=b.shape[1])
    return args


def _same(out: dict[str, Any], want: Any, dtype: str) -> None:
    want = sp.csr_array(want)
    want.sort_indices()
    assert out["col"].dtype == out["rowptr"].dtype == np.dtype(dtype)
    assert out["NNZ"] == out["col"].size == out["A"].size == int(out["rowptr"][-1])
    assert np.array_equal(out["rowptr"], want.indptr)
    assert np.array_equal(out["col"], want.indices)
    assert np.allclose(out["A"], want.data)


def _both_paths(
    text: str, a: sp.csr_array, b: sp.csr_array, dtype: str, kernel: Any = None
) -> dict[str, Any]:
    """The output on one thread and on two, checked equal bit for bit; which path each took
    is seen on the single pass's kernel (``last_threads`` is set by its calls only). The
    einsum's ``kernel`` (default: :func:`_kernel`'s, all CSR)."""
    spgemm = text == spf.kernels.SPGEMM
    k = _kernel(text, dtype) if kernel is None else kernel
    args = _args(a, b, dtype, spgemm)
    single = k.single.kernel
    with _team(2):
        before = single.last_threads
        two = k(**args)
        assert single.last_threads == before  # the two phases ran
    with _team(1):
        one = k(**args)
    assert single.last_threads == 1
    for key in ("rowptr", "col", "A"):
        assert one[key].tobytes() == two[key].tobytes(), key
    assert one["NNZ"] == two["NNZ"]
    return one


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("n", "m", "density"), MATRICES)
def test_spadd_single_pass_equals_the_two_phases_and_scipy(
    dtype: str, n: int, m: int, density: float
) -> None:
    a, b = _matrix(n, m, density, 7), _matrix(n, m, density / 2, 8)
    _same(_both_paths(SPADD, a, b, dtype), a - 2 * b, dtype)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_spadd_single_pass_of_identical_and_disjoint_patterns(dtype: str) -> None:
    a = _matrix(31, 23, 0.3, 9)
    disjoint = sp.csr_array(_matrix(31, 23, 0.4, 10).toarray() * (a.toarray() == 0))
    for b in (a, disjoint, sp.csr_array((31, 23))):
        b.sort_indices()
        _same(_both_paths(SPADD, a, b, dtype), a - 2 * b, dtype)


def test_single_pass_outputs_hold_their_entries_and_at_most_twice_their_memory() -> None:
    # the arrays of the bound's size are trimmed to the entries written: views where at
    # least half the slots were used (SpAdd of identical patterns fills half its bound),
    # copies where fewer were (SpGEMM of dense-ish rows), as scipy's prune
    a = _matrix(31, 23, 0.3, 9)
    rng = np.random.default_rng(15)
    d, e = sp.csr_array(rng.random((30, 40))), sp.csr_array(rng.random((40, 50)))
    for text, x, y in ((SPADD, a, a), (spf.kernels.SPGEMM, d, e)):
        out = _both_paths(text, x, y, "int32")
        for key in ("col", "A"):
            assert out[key].size == out["NNZ"], key
            base = out[key].base
            assert base is None or base.size <= 2 * out[key].size + 1, key


def test_spadd_serial_kernel_runs_the_single_pass_whatever_the_team() -> None:
    a, b = _matrix(40, 30, 0.2, 11), _matrix(40, 30, 0.2, 12)
    k = _kernel(SPADD, "int32", parallel=False)
    with _team(2):
        out = k(**_args(a, b, "int32", False))
    assert k.single.kernel.last_threads == 1
    _same(out, a - 2 * b, "int32")


def test_spadd_single_pass_checks_the_operands_order() -> None:
    # A's row repeats a column: the merge's ordering fact fails, on either path
    a = {"A_rowptr": np.array([0, 6, 6], np.int32), "A_col": np.ones(6, np.int32),
         "A": np.ones(6), "A_NNZ": 6}  # fmt: skip
    b = {"B_rowptr": np.array([0, 1, 2], np.int32), "B_col": np.array([2, 0], np.int32),
         "B": np.ones(2), "B_NNZ": 2}  # fmt: skip
    k = _kernel(SPADD, "int32")
    for team in (1, 2):
        with _team(team), pytest.raises(spf.ArgumentError, match="A_col"):
            k(I=2, J=3, **a, **b)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("n", "k", "m"), [(26, 18, 22), (1, 9, 7), (17, 5, 1), (0, 4, 3), (6, 4, 0)]
)
def test_spgemm_single_pass_equals_the_two_phases_and_scipy(
    dtype: str, n: int, k: int, m: int
) -> None:
    a, b = _matrix(n, k, 0.3, 13), _matrix(k, m, 0.5, 14)
    _same(_both_paths(spf.kernels.SPGEMM, a, b, dtype), a @ b, dtype)


def test_spgemm_single_pass_sorts_long_rows_and_trims_a_loose_bound() -> None:
    # rows of 150 columns (the radix sort: above the rank sort's threshold), and a bound
    # (the products, 40 * 150 per row) far above the entries: the arrays are copied to size
    rng = np.random.default_rng(15)
    a = sp.csr_array(rng.random((30, 40)))
    b = sp.csr_array(rng.random((40, 150)) * (rng.random((40, 150)) < 0.9))
    out = _both_paths(spf.kernels.SPGEMM, a, b, "int32")
    _same(out, a @ b, "int32")
    assert out["col"].base is None  # copies: fewer than half the bound's slots used
    assert out["A"].base is None


UNSORTED = spf.Format(
    "UCSR", coords="[i, j]",
    storage="{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
    ufs={"rowptr": spf.UF("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                          monotonic="nondecreasing"),
         "col": spf.UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")},
)  # fmt: skip
"""CSR's relation without its fact (columns increasing within a row)."""


def _first_touch(a: sp.csr_array, b: sp.csr_array) -> list[list[int]]:
    """Each row of ``a @ b``'s columns in the order the products first reach them."""
    rows = []
    for i in range(a.shape[0]):
        seen: dict[int, None] = {}
        for k in a.indices[a.indptr[i] : a.indptr[i + 1]]:
            seen.update(dict.fromkeys(b.indices[b.indptr[k] : b.indptr[k + 1]].tolist()))
        rows.append(list(seen))
    return rows


def test_spgemm_into_a_format_without_the_order_fact_leaves_rows_unsorted() -> None:
    # no sort on either path, short rows (rank sort in CSR) and rows of 150 columns (radix
    # sort in CSR) alike: each row's columns come in first-touch order, the values as
    # scipy's, the same arrays bit for bit on one thread and on two
    comp = spf.einsum(spf.kernels.SPGEMM, A=CSR, B=CSR, C=UNSORTED,
                      sizes={"i": "N", "k": "K", "j": "M"})  # fmt: skip
    for phase in (comp.single, comp.numeric):
        assert phase is not None
        assert not {"srt", "rnk", "tmp"} & set(phase.data_spaces)
    k = comp.compile()
    rng = np.random.default_rng(20)
    long_a = sp.csr_array(rng.random((30, 40)))
    long_b = sp.csr_array(rng.random((40, 150)) * (rng.random((40, 150)) < 0.9))
    for a, b in ((_matrix(26, 18, 0.3, 13), _matrix(18, 22, 0.5, 14)), (long_a, long_b)):
        out = _both_paths(spf.kernels.SPGEMM, a, b, "int32", kernel=k)
        ptr = out["rowptr"]
        got = [out["col"][ptr[i] : ptr[i + 1]].tolist() for i in range(a.shape[0])]
        assert got == _first_touch(a, b)
        c = sp.csr_array((out["A"], out["col"], ptr), shape=(a.shape[0], b.shape[1]))
        assert not c.has_sorted_indices
        assert np.allclose(c.toarray(), (a @ b).toarray())


_UNSORTED_KERNELS: dict[str, Any] = {}


def _unsorted(dtype: str) -> Any:
    """SpGEMM into :data:`UNSORTED` with ``dtype`` indices, compiled once."""
    if dtype not in _UNSORTED_KERNELS:
        comp = spf.einsum(spf.kernels.SPGEMM, A=CSR, B=CSR, C=UNSORTED, index_dtype=dtype,
                          sizes={"i": "N", "k": "K", "j": "M"})  # fmt: skip
        _UNSORTED_KERNELS[dtype] = comp.compile()
    return _UNSORTED_KERNELS[dtype]


def test_unsorted_single_pass_accumulates_into_the_output() -> None:
    # no mark, no dense row, no column list: the products go to their slots at the cursor
    comp = spf.einsum(spf.kernels.SPGEMM, A=CSR, B=CSR, C=UNSORTED,
                      sizes={"i": "N", "k": "K", "j": "M"})  # fmt: skip
    assert comp.single is not None
    assert {"pos", "at"} <= set(comp.single.data_spaces)
    assert not {"mark", "acc", "lst", "len"} & set(comp.single.data_spaces)
    assert len(comp.single.stmts) == 3


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("n", "k", "m"), [(26, 18, 22), (1, 9, 7), (0, 4, 3), (5, 3, 0), (9, 6, 1)]
)
def test_unsorted_single_pass_equals_the_two_phases_and_scipy(
    dtype: str, n: int, k: int, m: int
) -> None:
    # empty rows (every third), one row, no rows, no columns, one column; the slots of
    # row 0 start at the workspace's zeros, and a row after empty rows starts where they
    # did: first-touch order and the two phases' values bit for bit
    a, b = _matrix(n, k, 0.4, 21), _matrix(k, m, 0.5, 22)
    out = _both_paths(spf.kernels.SPGEMM, a, b, dtype, kernel=_unsorted(dtype))
    ptr = out["rowptr"]
    assert out["col"].dtype == ptr.dtype == np.dtype(dtype)
    assert [out["col"][ptr[i] : ptr[i + 1]].tolist() for i in range(n)] == _first_touch(a, b)
    c = sp.csr_array((out["A"], out["col"], ptr), shape=(n, m))
    assert np.allclose(c.toarray(), (a @ b).toarray())


def test_unsorted_single_pass_starts_a_slot_at_zero_then_adds() -> None:
    # row 0's only products are -0.0 (an explicit -0.0 in A): 0 + -0.0 is +0.0, as in the
    # two phases' dense row; a slot holding the first product as it is would keep -0.0
    a = sp.csr_array((np.array([-0.0, 2.0]), np.array([0, 0]), np.array([0, 1, 2])), shape=(2, 2))
    b = sp.csr_array(np.array([[3.0, 5.0], [0.0, 0.0]]))
    out = _both_paths(spf.kernels.SPGEMM, a, b, "int32", kernel=_unsorted("int32"))
    assert out["col"].tolist() == [0, 1, 0, 1]
    assert out["A"].tolist() == [0.0, 0.0, 6.0, 10.0]
    assert not np.signbit(out["A"]).any()


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
def test_sddmm_and_elementwise_products_single_pass_bounded_by_their_operands() -> None:
    # outputs holding at most one operand's entries (SDDMM's S) or the fewer of two (A * B,
    # an intersection merge): bounded by those sizes, no count of products
    rng = np.random.default_rng(16)
    s, a, b = _matrix(31, 23, 0.3, 17), _matrix(31, 23, 0.4, 18), _matrix(31, 23, 0.2, 19)
    x, y = rng.random((31, 5)), rng.random((23, 5))
    sddmm = spf.einsum("O(i,j) = S(i,j) * X(i,k) * Y(j,k)", S=CSR, O=CSR).compile()
    times = spf.einsum("C(i,j) = A(i,j) * B(i,j)", A=CSR, B=CSR, C=CSR).compile()
    assert sddmm.single.bound is None
    assert times.single.bound is None
    calls = [
        (sddmm, {"X": x, "Y": y, **csr_args(s, prefix="S_")}, s.multiply(x @ y.T)),
        (times, {**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_")}, a.multiply(b)),
    ]
    for kernel, args, want in calls:
        with _team(2):
            two = kernel(**args)
        with _team(1):
            one = kernel(**args)
        assert kernel.single.kernel.last_threads == 1
        for key in ("rowptr", "col", "A"):
            assert one[key].tobytes() == two[key].tobytes(), key
        got = sp.csr_array((one["A"], one["col"], one["rowptr"]), shape=want.shape)
        assert np.allclose(got.toarray(), sp.csr_array(want).toarray())


def test_an_index_named_pos_keeps_the_direct_single_pass() -> None:
    # the workspace takes a name neither the operands nor the indices have (it was named
    # pos unless a data space was: an index pos made the einsum a VerifyError)
    comp = spf.einsum("C(i,j) = A(i,pos) * B(pos,j)", A=CSR, B=CSR, C=UNSORTED,
                      sizes={"i": "N", "pos": "K", "j": "M"})  # fmt: skip
    assert comp.single is not None
    assert "pos_" in comp.single.data_spaces
    a, b = _matrix(12, 9, 0.4, 23), _matrix(9, 11, 0.5, 24)
    out = _both_paths(spf.kernels.SPGEMM, a, b, "int32", kernel=comp.compile())
    ptr = out["rowptr"]
    assert [out["col"][ptr[i] : ptr[i + 1]].tolist() for i in range(12)] == _first_touch(a, b)
    c = sp.csr_array((out["A"], out["col"], ptr), shape=(12, 11))
    assert np.allclose(c.toarray(), (a @ b).toarray())
