"""Checked calls of a sparse einsum output on inputs a checked call verified run the phases
unchecked (spf.index_notation.verified): on both paths (the single pass on one thread, the
two phases on two), SpAdd, sorted and unsorted SpGEMM, int32 and int64, empty rows and one
row; the results equal scipy's and the checked call's, bit for bit. Inputs changed in place,
new arrays, other parameter values and calls that failed are checked again, with the error
a kernel that never saw the inputs raises."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import CSR
from spf.runtime.kernel import Kernel
from spf.sparse import csr_args
from spf.testing import fixed_team, random_csr

SPADD = "C(i,j) = A(i,j) - 2 * B(i,j)"
UNSORTED = spf.Format("UCSR", coords="[i, j]", storage=CSR.storage, ufs=dict(CSR.ufs))
"""CSR's relation without its fact (columns increasing within a row)."""


def _einsum(what: str, dtype: str) -> Any:
    """A fresh kernel (nothing verified yet) of ``what``: SpAdd, SpGEMM or SpGEMM into
    CSR's relation without its order fact (rows unsorted)."""
    if what == "spadd":
        return spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, index_dtype=dtype).compile()
    if what == "spgemm":
        return spf.kernels.spgemm_csr(index_dtype=dtype).compile()
    return spf.einsum(spf.kernels.SPGEMM, A=CSR, B=CSR, C=UNSORTED, index_dtype=dtype,
                      sizes={"i": "N", "k": "K", "j": "M"}).compile()  # fmt: skip


def _matrix(n: int, m: int, density: float, seed: int) -> sp.csr_array:
    """A random CSR matrix, columns sorted, its rows 1, 4, 7, ... empty."""
    return random_csr(n, m, density, rng=seed, empty_rows=range(1, n, 3))


def _args(what: str, a: sp.csr_array, b: sp.csr_array, dtype: str) -> dict[str, Any]:
    args = {**csr_args(a, dtype, prefix="A_"), **csr_args(b, dtype, prefix="B_")}
    if what != "spadd":  # spgemm_csr's sizes are N, K, M
        args = {k: v for k, v in args.items() if not isinstance(v, int)}
        args.update(N=a.shape[0], K=a.shape[1], M=b.shape[1])
    return args


def _want(what: str, a: sp.csr_array, b: sp.csr_array) -> sp.csr_array:
    return sp.csr_array(a - 2 * b if what == "spadd" else a @ b)


def _same(out: dict[str, Any], want: sp.csr_array, what: str) -> None:
    got = sp.csr_array((out["A"], out["col"], out["rowptr"]), shape=want.shape, copy=True)
    if what == "spgemm_u":
        got.sort_indices()
    want.sort_indices()
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    assert np.allclose(got.data, want.data)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``check`` of every compiled kernel's call (the phases, the single pass, its bound)."""
    seen: list[bool] = []
    call = Kernel.__call__

    def spy(self: Kernel, *positional: object, check: bool = True, **args: object) -> None:
        seen.append(check)
        call(self, *positional, check=check, **args)

    monkeypatch.setattr(Kernel, "__call__", spy)
    return seen


PATHS = [1, 2]  # the OpenMP team: the single pass, the two phases
WHAT = ["spadd", "spgemm", "spgemm_u"]
SHAPES = [(40, 30, 0.2), (1, 9, 0.5), (6, 4, 0.0)]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("what", WHAT)
def test_checked_calls_on_verified_inputs_run_unchecked(
    what: str, dtype: str, checks: list[bool]
) -> None:
    k = _einsum(what, dtype)
    for n, m, density in SHAPES:
        a, b = _matrix(n, m, density, 3), _matrix(n if what == "spadd" else m, m, density, 4)
        args = _args(what, a, b, dtype)
        for team in PATHS:
            with fixed_team(team):
                checks.clear()
                first = k(**args)
                assert checks, (team, n)
                assert all(checks), (team, n)  # verified in full
                checks.clear()
                again = k(**args)
                assert checks, (team, n)
                assert not any(checks), (team, n)  # known inputs: unchecked
            _same(first, _want(what, a, b), what)
            for key in ("rowptr", "col", "A"):
                assert np.array_equal(first[key], again[key]), key
                assert first[key].dtype == again[key].dtype
            assert np.asarray(first["A"]).tobytes() == np.asarray(again["A"]).tobytes()


def _refused(k: Any, args: dict[str, Any]) -> str:
    with pytest.raises(spf.ArgumentError) as info:
        k(**args)
    return str(info.value)


def _spadd_inputs(dtype: str) -> tuple[sp.csr_array, sp.csr_array, dict[str, Any]]:
    a, b = _matrix(40, 30, 0.3, 5), _matrix(40, 30, 0.3, 6)
    return a, b, _args("spadd", a, b, dtype)


@pytest.mark.parametrize("team", PATHS)
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_fact_broken_in_place_after_verification_is_refused(team: int, dtype: str) -> None:
    # the inputs verified, then A's row 3 reversed in place (columns decreasing), then A's
    # row 3 restored and a column out of range: each refused with the error a kernel that
    # never saw the inputs gives, and every later call too (a failed call is not remembered)
    _, _, args = _spadd_inputs(dtype)
    k = _einsum("spadd", dtype)
    ptr, col = args["A_rowptr"], args["A_col"]
    lo, hi = int(ptr[3]), int(ptr[4])
    assert hi - lo >= 2
    with fixed_team(team):
        k(**args)
        k(**args)  # verified contents
        row = col[lo:hi].copy()
        col[lo:hi] = row[::-1]
        fresh = _refused(_einsum("spadd", dtype), args)
        assert "A_col(k1) < A_col(k2)" in fresh
        assert _refused(k, args) == fresh
        assert _refused(k, args) == fresh
        col[lo:hi] = row
        k(**args)  # the verified contents again
        col[hi - 1] = 30  # J = 30: out of range (the row still increasing)
        fresh = _refused(_einsum("spadd", dtype), args)
        assert "outside the declared range" in fresh
        assert _refused(k, args) == fresh


@pytest.mark.parametrize("team", PATHS)
def test_new_inputs_and_other_extents_are_checked(team: int) -> None:
    # other arrays holding a broken fact after other contents were verified, and the same
    # arrays with a smaller column extent (their columns then out of range): both refused
    a, b, args = _spadd_inputs("int32")
    k = _einsum("spadd", "int32")
    with fixed_team(team):
        _same(k(**args), _want("spadd", a, b), "spadd")
        other = dict(args)
        other["B_rowptr"] = args["B_rowptr"].copy()
        other["B_rowptr"][5] = other["B_rowptr"][7]  # decreasing at row 6
        assert "B_rowptr" in _refused(k, other)
        narrow = {**args, "A_M": 20, "B_M": 20}
        assert "outside the declared range" in _refused(k, narrow)
        _same(k(**args), _want("spadd", a, b), "spadd")


@pytest.mark.parametrize("what", ["spgemm", "spgemm_u"])
def test_spgemm_column_out_of_range_after_verification_is_refused(what: str) -> None:
    a, b = _matrix(30, 20, 0.3, 7), _matrix(20, 25, 0.3, 8)
    args = _args(what, a, b, "int64")
    k = _einsum(what, "int64")
    for team in PATHS:
        with fixed_team(team):
            k(**args)
            k(**args)
    args["A_col"][4] = 20  # K = 20: B_rowptr would be read past its end
    fresh = _refused(_einsum(what, "int64"), args)
    assert "A_col" in fresh
    for team in PATHS:
        with fixed_team(team):
            assert _refused(k, args) == fresh


@pytest.mark.parametrize("team", PATHS)
@pytest.mark.parametrize("what", WHAT)
def test_shorter_values_with_sizes_not_passed_are_checked(what: str, team: int) -> None:
    # the operands' NNZ not passed: the binder takes them from the value arrays' lengths;
    # the same index arrays verified, then A's values cut short: A_rowptr now points past
    # A_NNZ, refused as a fresh kernel refuses it (a key of the index arrays and the passed
    # parameters alone ran it unchecked, reading past A's end)
    a, b = _matrix(30, 20, 0.3, 11), _matrix(30 if what == "spadd" else 20, 20, 0.3, 12)
    args = {k: v for k, v in _args(what, a, b, "int64").items() if not k.endswith("NNZ")}
    k = _einsum(what, "int64")
    with fixed_team(team):
        _same(k(**args), _want(what, a, b), what)
        k(**args)  # verified contents
        short = {**args, "A": args["A"][:3].copy()}
        fresh = _refused(_einsum(what, "int64"), short)
        assert "A_NNZ" in fresh
        assert _refused(k, short) == fresh


def test_unchecked_calls_verify_nothing(checks: list[bool]) -> None:
    # a check=False call is not a verification: the next checked call checks
    _, _, args = _spadd_inputs("int32")
    k = _einsum("spadd", "int32")
    with fixed_team(1):
        k(check=False, **args)
        checks.clear()
        k(**args)
    assert checks
    assert all(checks)


def test_inputs_that_are_not_contiguous_arrays_are_checked_every_call(
    checks: list[bool],
) -> None:
    a, b, args = _spadd_inputs("int32")
    k = _einsum("spadd", "int32")
    strided = np.repeat(args["A_col"], 2)[::2]  # the same values, not C-contiguous
    args["A_col"] = strided
    with fixed_team(1):
        for _ in range(2):
            checks.clear()
            with pytest.raises(spf.ArgumentError, match="A_col"):
                k(**args)  # the binding refuses it, on every call
    args["A_col"] = np.ascontiguousarray(strided)
    with fixed_team(1):
        _same(k(**args), _want("spadd", a, b), "spadd")


def test_a_kernel_whose_inputs_never_repeat_stops_hashing(
    monkeypatch: pytest.MonkeyPatch, checks: list[bool]
) -> None:
    # MISSES checked calls in a row on new inputs: from then on every call is checked, the
    # inputs hashed no more; a call on verified inputs before that resets the count
    monkeypatch.setattr("spf.index_notation.verified.MISSES", 3)
    k = _einsum("spadd", "int32")
    inputs = [_args("spadd", _matrix(20, 10, 0.3, s), _matrix(20, 10, 0.3, s + 1), "int32")
              for s in range(4)]  # fmt: skip

    def ways(args: dict[str, Any]) -> bool:
        checks.clear()
        k(**args)
        return all(checks)

    with fixed_team(1):
        assert [ways(inputs[n]) for n in (0, 1, 0, 2, 3)] == [True, True, False, True, True]
        assert not ways(inputs[2])  # two misses since the last hit: still hashing
        assert [ways(inputs[n]) for n in (1, 3)] == [False, False]
        for n in (0, 1, 2):  # fresh inputs each call: three misses, then no more hashing
            a, b = _matrix(20, 10, 0.3, 9 + n), _matrix(20, 10, 0.3, 20 + n)
            assert ways(_args("spadd", a, b, "int32"))
        assert ways(inputs[0])  # verified before, but the kernel checks every call now
        assert ways(inputs[0])


def test_refused_calls_are_no_misses(monkeypatch: pytest.MonkeyPatch, checks: list[bool]) -> None:
    # MISSES checked calls on broken inputs (each refused) do not stop the hashing: the
    # next inputs that pass are remembered and their next call runs unchecked
    monkeypatch.setattr("spf.index_notation.verified.MISSES", 3)
    _, _, args = _spadd_inputs("int32")
    k = _einsum("spadd", "int32")
    broken = dict(args)
    broken["B_rowptr"] = args["B_rowptr"].copy()
    broken["B_rowptr"][5] = broken["B_rowptr"][7]  # decreasing at row 6
    with fixed_team(1):
        for _ in range(4):
            _refused(k, broken)
        k(**args)
        checks.clear()
        k(**args)
    assert checks
    assert not any(checks)
