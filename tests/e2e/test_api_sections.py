"""The code of API.md §11 (run-time inspection) and §13 (C import), run as written there
(up to the inputs the spec leaves to the reader: ``L``, ``f``, ``n``) and checked against
scipy / numpy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import spf
from spf.errors import ArgumentError

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _own_cache(kernel_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))


def lower_triangle(n: int, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=0.05, random_state=seed, format="csr")
    low = sp.tril(a, k=-1) + sp.diags(rng.uniform(1.0, 2.0, n))
    low = sp.csr_matrix(low)
    low.sort_indices()
    return low


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
def test_section_11_wavefront_sptrsv() -> None:
    n = 301
    L = lower_triangle(n, 3)  # the spec's name
    f = np.random.default_rng(4).standard_normal(n)
    u = np.zeros(n)
    # API.md §11, as written:
    comp = spf.kernels.sptrsv_csr()
    s = comp.stmts[-1]  # the row statement(s) of the solve
    comp.wavefront("i")  # loop i of every statement that has it runs by levels
    k = comp.compile()
    plan = k.inspect(rowptr=L.indptr, col=L.indices, N=n, NNZ=L.nnz)  # generated inspector
    k(u=u, L=L.data, f=f, rowptr=L.indptr, col=L.indices, N=n, NNZ=L.nnz, plan=plan)
    print(plan.levels, plan.level_sizes[:5])
    assert s.name in {t.name for t in comp.stmts}
    want = spla.spsolve_triangular(L.tocsr(), f, lower=True)
    np.testing.assert_allclose(u, want, rtol=1e-10, atol=1e-12)
    assert plan.levels >= 1
    assert int(np.sum(plan.level_sizes)) == n
    other = lower_triangle(n, 5)
    with pytest.raises(ArgumentError):
        k(u=u, L=other.data, f=f, rowptr=other.indptr, col=other.indices, N=n, NNZ=other.nnz,
          plan=plan)  # fmt: skip


def test_section_13_from_c_computes_what_the_function_computes() -> None:
    source = """
    #define N 7
    void axpy2(double alpha, double x[N], double y[N]) {
      for (int i = 0; i < N; i++)
        y[i] += alpha * x[i];
      for (int i = 1; i < N; i++)
        y[i] = y[i] + y[i - 1];
    }
    """
    comp = spf.from_c(source, function="axpy2")
    x, y = np.arange(7.0), np.ones(7)
    want = np.cumsum(1.0 + 0.5 * x)
    comp.compile()(x=x, y=y, alpha=np.array(0.5))  # a 0-d array for a by-value double
    np.testing.assert_array_equal(y, want)
