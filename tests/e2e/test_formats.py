"""CSR -> SELL-C-sigma (spf.formats): relation, generated inspector and executor vs scipy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError, SpfError
from spf.formats import sell
from spf.testing import random_csr

# (rows, cols, density): empty matrix, one row, N not a multiple of C, long and short rows
SHAPES = [(0, 0, 0.0), (0, 5, 0.0), (5, 0, 0.0), (1, 9, 0.5), (1, 1, 1.0), (13, 7, 0.0),
          (37, 20, 0.2), (64, 64, 0.05), (101, 33, 0.15), (250, 400, 0.02)]  # fmt: skip
FORMATS = [(8, 1), (8, 32), (4, 1), (4, 16), (1, 1)]


@pytest.fixture(scope="module")
def kernels() -> dict[tuple[int, int, str], Any]:
    """Compiled executors (scheduled), one per format and index dtype."""
    out = {}
    for c, sigma in FORMATS:
        for idx in ("int32", "int64"):
            out[c, sigma, idx] = sell(c, sigma, index_dtype=idx).scheduled_executor().compile()
    return out


@pytest.mark.parametrize(("c", "sigma"), FORMATS)
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize(("n", "m", "density"), SHAPES)
def test_inspector_and_executor_match_scipy(
    kernels: dict[tuple[int, int, str], Any],
    c: int,
    sigma: int,
    index_dtype: str,
    n: int,
    m: int,
    density: float,
) -> None:
    fmt = sell(c, sigma, index_dtype=index_dtype)
    a = random_csr(n, m, density, rng=n * 31 + m, empty_rows=n // 4 if n > 2 else 0)
    s = fmt.inspect_matrix(a)
    # the inspector's arrays hold exactly A
    assert np.allclose(s.to_dense(), a.toarray())
    assert s.cs.dtype == np.dtype(index_dtype)
    assert s.scol.dtype == np.dtype(index_dtype)
    assert -(-n // c) == s.NC
    assert s.NV >= s.NNZ == a.nnz
    lengths = np.diff(a.indptr)
    for ch in range(s.NC):  # chunk length = longest row of the chunk, pointers = prefix sum
        rows = s.perm[c * ch : min(c * ch + c, n)]
        assert s.cl[ch] == (lengths[rows].max() if len(rows) else 0)
        assert s.cs[ch + 1] == s.cs[ch] + c * s.cl[ch]
    # sigma-sorting: a permutation, rows by decreasing length inside each window
    assert sorted(s.perm.tolist()) == list(range(n))
    assert np.array_equal(s.iperm[s.perm], np.arange(n))
    if sigma > 1:
        for w in range(0, n, sigma):
            lw = lengths[s.perm[w : w + sigma]]
            assert np.all(lw[:-1] >= lw[1:])
    # the generated executor computes y += A x, checking every declared UF fact
    x = np.random.default_rng(1).uniform(-1, 1, m)
    y0 = np.random.default_rng(2).uniform(-1, 1, n)
    y = y0.copy()
    kernels[c, sigma, index_dtype](y=y, x=x, check=True, **s.args())
    assert np.allclose(y, y0 + a @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sigma", [1, 8])
def test_relation_maps_csr_entries_to_filled_sell_slots(sigma: int) -> None:
    fmt = sell(4, sigma)
    a = random_csr(11, 9, 0.3, rng=5, empty_rows=2)
    s = fmt.inspect_matrix(a)
    image = fmt.relation.apply(spf.Set(fmt.csr_domain))
    rp = a.indptr.astype(np.int32)
    ufs = {"rowptr": rp, "iperm": s.iperm}
    got = set(image.points(params={"N": 11}, ufs=ufs))
    want = set()
    for i in range(11):
        p = int(s.iperm[i])
        for j in range(int(rp[i + 1] - rp[i])):
            want.add((p // 4, j, p % 4))
    assert got == want
    # and every slot the relation names holds the CSR entry it came from
    for ch, j, r in got:
        row = int(s.perm[4 * ch + r])
        slot = int(s.cs[ch]) + 4 * j + r
        assert s.val[slot] == a.data[a.indptr[row] + j]
        assert s.scol[slot] == a.indices[a.indptr[row] + j]


def test_inspector_is_generated_spf_code() -> None:
    fmt = sell(8, 32)
    lengths, fill = fmt.lengths(), fmt.fill()
    assert [st.name for st in lengths.stmts] == ["s0", "s1"]
    assert "max(" in lengths.stmts[0].source
    assert "cs$(c + 1)" in lengths.stmts[1].source
    src = fill.codegen("c")
    assert "void sell8_32_fill(" in src
    assert "perm" in src
    assert "#pragma omp simd" in fmt.scheduled_executor().codegen("c")


def test_padding_and_wrong_arguments() -> None:
    fmt = sell(4, 1)
    a = sp.csr_array(np.array([[1.0, 0, 0], [1.0, 2.0, 3.0], [0, 0, 0], [4.0, 0, 0], [5.0, 0, 0]]))
    s = fmt.inspect_matrix(a)
    assert s.cl.tolist() == [3, 1]
    assert s.NV == 16
    assert s.fill_ratio == 16 / 6
    with pytest.raises(ArgumentError, match="index_dtype"):
        fmt.inspect(a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data, (5, 3))
    with pytest.raises(ArgumentError, match="N\\+1"):
        fmt.inspect(a.indptr.astype(np.int32), a.indices.astype(np.int32), a.data, (4, 3))
    for bad in [
        {"C": 0},
        {"C": 4, "sigma": 6},
        {"C": 4, "sigma": 0},
        {"C": 4, "index_dtype": "int8"},
    ]:
        with pytest.raises(SpfError):
            sell(**bad)  # type: ignore[arg-type]
