"""Conversions from a compressed source whose pointer array does not span its storage
positions exactly: ``rowptr[0] > 0``, ``rowptr[N] < NNZ`` (entries past the last row, which
the CSR relation leaves out and ``scipy.sparse`` allows), or ``N`` below the rows the pointer
array holds. The declared facts allow all three and SpMV reads such a matrix right; every
conversion gives the matrix the pointers describe, with the entries they cover (before the
fix, CSR -> COO and CSC -> CSR kept ``NNZ`` phantom entries and CSR -> BCSR(2, 2) raised an
internal order fault)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert

DESTINATIONS = [COO, CSR, CSC, ELL, DIA, SELL(2, 1), SELL(2, 4), BCSR(2, 2), BCSR(1, 1)]


def _matrix() -> Any:
    return sp.random_array((6, 5), density=0.4, rng=np.random.default_rng(2), format="csr")


def _cases() -> dict[str, dict[str, Any]]:
    args = spf.sparse.csr_args(_matrix())  # rowptr [0 1 3 5 8 9 12], NNZ 12
    rp = args["rowptr"]
    return {
        "last below NNZ": {**args, "rowptr": np.minimum(rp, 8).astype(np.int32)},
        "first above 0": {**args, "rowptr": np.maximum(rp, 2).astype(np.int32)},
        "both": {**args, "rowptr": np.clip(rp, 2, 8).astype(np.int32)},
        "fewer rows": {**args, "N": 3},
        "no rows": {**args, "N": 0},
    }


def _expected(args: dict[str, Any]) -> np.ndarray[Any, Any]:
    """The matrix the pointers describe (row i: entries rowptr[i] .. rowptr[i+1] - 1)."""
    n = args["N"]
    rp = args["rowptr"]
    dense = np.zeros((n, args["M"]))
    for i in range(n):
        for k in range(rp[i], rp[i + 1]):
            dense[i, args["col"][k]] += args["A"][k]
    return dense


def _dense(fmt: spf.Format, out: dict[str, Any]) -> np.ndarray[Any, Any]:
    """``out`` (the arrays of ``fmt``) as a dense matrix, column by column through SpMV."""
    kernel = fmt.spmv().compile()
    rows, cols = fmt.extents(out)
    dense = np.zeros((rows, cols))
    for j in range(cols):
        x = np.zeros(cols)
        x[j] = 1.0
        y = np.zeros(rows)
        kernel(y=y, x=x, **out)
        dense[:, j] = y
    return dense


@pytest.mark.parametrize("case", list(_cases()))
@pytest.mark.parametrize("dst", DESTINATIONS, ids=lambda f: f.name)
def test_csr_source_pointers_not_spanning_positions(case: str, dst: spf.Format) -> None:
    args = _cases()[case]
    rp = args["rowptr"][: args["N"] + 1]
    snapshot = {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray)}
    out = convert(CSR, dst).compile()(**args)
    want = _expected(args)
    got = _dense(dst, out)
    n, m = want.shape
    assert np.allclose(got[:n, :m], want)
    assert not got[n:].any()
    assert not got[:, m:].any()
    if "NNZ" in out:  # COO, CSR, CSC: exactly the entries the pointers cover
        assert out["NNZ"] == int(rp[-1] - rp[0])
    for k, v in snapshot.items():  # the source is never modified
        assert np.array_equal(args[k], v)


@pytest.mark.parametrize("dst", [COO, CSR, CSC], ids=lambda f: f.name)
def test_csc_source_pointers_below_nnz(dst: spf.Format) -> None:
    m = _matrix()
    args = spf.sparse.csc_args(m)
    cut = int(args["colptr"][3])  # keep the first three columns' entries
    args["colptr"] = np.minimum(args["colptr"], cut).astype(np.int32)
    out = convert(CSC, dst).compile()(**args)
    want = m.toarray()
    want[:, 3:] = 0.0
    assert np.allclose(_dense(dst, out), want)
    assert out["NNZ"] == cut


def test_pointer_errors_name_the_callers_arrays() -> None:
    """A bad pointer array is still reported on the caller's own values."""
    args = _cases()["first above 0"]
    args["rowptr"] = args["rowptr"].copy()
    args["rowptr"][3] = 1  # decreasing, after a first entry above 0
    with pytest.raises(spf.ArgumentError, match=r"rowptr\[2\] = 3 and rowptr\[3\] = 1"):
        convert(CSR, COO).compile()(**args)


@pytest.mark.parametrize("dst_name", ["COO3", "CSF3"])
@pytest.mark.parametrize(
    "cut",
    [
        {"pos1": [0, 2]},  # the last root fiber left out
        {"pos1": [1, 3]},  # the first one left out
        {"pos3": [0, 1, 2, 3, 4]},  # the last entry of the last fiber left out
    ],
    ids=["root end", "root start", "leaf end"],
)
def test_csf_source_pointers_not_spanning_entries(dst_name: str, cut: dict[str, Any]) -> None:
    """The same for a CSF source, level by level (CSF -> COO(3) kept phantom (0, 0, 0)
    entries and CSF -> CSF stored one as an explicit zero)."""
    from spf.formats import CSF

    coords = np.array([[0, 0, 1, 2, 2], [1, 3, 0, 2, 2], [0, 1, 1, 0, 3]])
    args = spf.sparse.csf_args(coords, np.arange(1.0, 6.0), (3, 4, 5))
    args.update({k: np.array(v, dtype=np.int32) for k, v in cut.items()})
    want: dict[tuple[int, ...], float] = {}  # the entries the pointers reach
    p1 = args["pos1"]
    for a in range(p1[0], p1[1]):
        for b in range(args["pos2"][a], args["pos2"][a + 1]):
            for c in range(args["pos3"][b], args["pos3"][b + 1]):
                key = (int(args["crd1"][a]), int(args["crd2"][b]), int(args["crd3"][c]))
                want[key] = float(args["A"][c])
    dst = spf.formats.COO(3) if dst_name == "COO3" else CSF(3)
    out = convert(CSF(3), dst).compile()(**args)
    assert out["NNZ"] == len(want)
    if dst_name == "COO3":
        got = {
            (int(out["crd1"][k]), int(out["crd2"][k]), int(out["crd3"][k])): float(out["A"][k])
            for k in range(out["NNZ"])
        }
    else:
        back = convert(CSF(3), spf.formats.COO(3)).compile()(**out)
        got = {
            (int(back["crd1"][k]), int(back["crd2"][k]), int(back["crd3"][k])): float(back["A"][k])
            for k in range(back["NNZ"])
        }
    assert got == want
