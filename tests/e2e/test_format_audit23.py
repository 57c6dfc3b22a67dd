"""What the audit of conversions and run-time inspection (audit23) found: a laid-out source
whose coordinates are computed (BCSR's ``j = c*bcol(kb) + ci``, SELL's ``i = C*ch + r``,
BDIA's ``i = R*b + r``) into int32 arrays too small for them, an unchecked conversion's
error about a decreasing pointer array naming the conversion's own scratch, and
``kernel.inspect`` without an index array naming the generated inspector's C prototype."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, BDIA, COO, CSC, CSR, DIA, SELL, convert

BIG = 3_000_000_000  # more columns than int32 holds; the arrays stay small


@pytest.mark.parametrize("dst", [COO, CSR])
def test_bcsr_columns_beyond_int32_refused_not_wrapped(dst: spf.Format) -> None:
    # the block columns fit int32 (750M), the columns 4*bcol + ci do not: the COO was
    # given column -1294967297 (wrapped) where scipy has 2999999999
    m = sp.coo_array((np.array([1.0, 2.0]), (np.array([0, 1]), np.array([BIG - 1, 5]))),
                     shape=(3, BIG))  # fmt: skip
    args = BCSR(1, 4).args(m)
    assert args["bcol"].dtype == np.int32
    with pytest.raises(spf.ArgumentError, match=r"int32.*index_dtype='int64'") as err:
        convert(BCSR(1, 4), dst).compile()(**args)
    assert "4*MB" in str(err.value)
    assert f"convert(BCSR1x4 -> {dst.name})" in str(err.value)
    out = convert(BCSR(1, 4), COO, index_dtype="int64").compile()(
        **{**args, "browptr": args["browptr"].astype(np.int64),
           "bcol": args["bcol"].astype(np.int64)})  # fmt: skip
    got = sorted(zip(out["row"].tolist(), out["col"].tolist(), out["A"].tolist(), strict=True))
    assert got == [(0, BIG - 1, 1.0), (1, 5, 2.0)]


def test_sell_and_bdia_rows_beyond_int32_refused_not_wrapped() -> None:
    n = 2**31 + 5  # SELL(2^20, 1): 2049 chunks, one entry in the last row (row -2147483644)
    c = 2**20
    nc = -(-n // c)
    cl = np.zeros(nc, np.int32)
    cl[-1] = 1
    cs = np.zeros(nc + 1, np.int32)
    cs[1:] = np.cumsum(c * cl.astype(np.int64))
    nv = int(cs[-1])
    val, scol = np.zeros(nv), np.zeros(nv, np.int32)
    val[int(cs[-2]) + n - 1 - c * (nc - 1)] = 7.0
    sell = {"cs": cs, "cl": cl, "scol": scol, "val": val, "N": n, "M": 5, "NC": nc, "NV": nv}
    with pytest.raises(spf.ArgumentError, match=r"row i = .* reaches 2147483652.*int32"):
        convert(SELL(c, 1), COO).compile()(**sell)
    nb = -(-n // c)
    dptr = np.zeros(nb + 1, np.int32)
    dptr[-1] = 1
    a = np.zeros((1, c))
    a[0, n - 1 - c * (nb - 1)] = 5.0
    bdia = {"dptr": dptr, "doff": np.zeros(1, np.int32), "A": a, "N": n, "M": n, "NB": nb,
            "NS": 1}  # fmt: skip
    with pytest.raises(spf.ArgumentError, match=r"int32"):
        convert(BDIA(c), COO).compile()(**bdia)


def test_int32_coordinates_that_fit_still_convert() -> None:
    m = sp.random_array((7, 9), density=0.4, rng=np.random.default_rng(3), format="csr")
    for fmt in (BCSR(2, 4), SELL(4, 1), BDIA(2)):
        args = fmt.args(m) if fmt.name[:4] != "BDIA" else spf.sparse.bdia_args(m, 2, max_fill=50)
        out = convert(fmt, COO).compile()(**args)
        n, mm = fmt.extents(args)
        dense = sp.coo_array((out["A"], (out["row"], out["col"])), shape=(n, mm)).toarray()
        assert np.array_equal(dense[:7, :9], m.toarray())


@pytest.mark.parametrize("dst", [CSC, CSR, SELL(2, 4)])
def test_unchecked_decreasing_pointers_named_in_the_callers_terms(dst: spf.Format) -> None:
    # check=False leaves the order facts unchecked; the kernel still refuses what it cannot
    # compute, but named its own scratch ("run-time index array cv_cur[1] = 4")
    args = {"rowptr": np.array([0, 3, 0, 3], np.int32), "col": np.array([0, 1, 2], np.int32),
            "A": np.array([1.0, 2.0, 3.0]), "N": 3, "M": 3, "NNZ": 3}  # fmt: skip
    with pytest.raises(spf.ArgumentError, match=r"rowptr.*nondecreasing.*rowptr\[2\] = 0") as err:
        convert(CSR, dst).compile()(**args, check=False)
    assert "cv_" not in str(err.value)


def test_inspect_without_an_index_array_names_what_it_reads() -> None:
    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i")
    solve = comp.compile()
    low = sp.csr_array(sp.eye_array(5) * 2.0)
    args = spf.sparse.sptrsv_args(low)
    for missing in ("col", "NNZ"):
        given = {k: v for k, v in args.items() if k not in ("L", missing)}
        with pytest.raises(spf.ArgumentError) as err:
            solve.inspect(**given)
        text = str(err.value)
        assert text.startswith("sptrsv_csr.inspect: missing argument(s) " + missing), text
        assert "inspector" not in text.split(";")[0]
        assert "int64_t" not in text
        assert "reads N, NNZ, col, rowptr" in text


def test_own_coordinate_format_without_declared_ranges_converts() -> None:
    # i = cc(k), j = rr(k) with the UFs undeclared: every conversion out of it failed with
    # errors naming its scratch ("the access cv_cur(i) ... cv_path") or its sizes as unknown
    # arguments ("unknown argument(s) M, N for convert_tcoo_coo")
    tcoo = spf.Format("TCOO", coords="[i, j]",
                      storage="{[i, j] -> [k]: 0 <= k < NNZ && i = cc(k) && j = rr(k)}",
                      ufs=[spf.UF("rr"), spf.UF("cc")], value="vv")  # fmt: skip
    m = sp.random_array((6, 8), density=0.4, rng=np.random.default_rng(3), format="coo")
    args = {"rr": m.col.astype(np.int32), "cc": m.row.astype(np.int32), "vv": m.data.copy(),
            "N": 6, "M": 8, "NNZ": m.nnz}  # fmt: skip
    x = np.linspace(0.5, 2.0, 8)
    for dst in (CSR, CSC, COO, DIA, SELL(2, 4)):
        out = convert(tcoo, dst).compile()(**args)
        rows, cols = dst.extents(out)
        y, xp = np.zeros(rows), np.zeros(cols)
        xp[:8] = x
        spf.kernels.spmv(dst).compile()(y=y, x=xp, **out)
        np.testing.assert_allclose(y[:6], m.toarray() @ x)
    bad = {**args, "cc": np.where(np.arange(m.nnz) == 1, 6, args["cc"]).astype(np.int32)}
    with pytest.raises(spf.ArgumentError, match=r"cc\[1\] = 6 is outside the declared range"):
        convert(tcoo, CSR).compile()(**bad)
