"""A "levels" plan whose large levels are cut into several chunks per thread
(spf.runtime.level_parts), dealt round robin by the executor's ``schedule(static, 1)``:
bitwise the serial solve at two threads, with and without copies, int32 and int64, and
scipy's solve to rounding."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from spf import kernels
from spf.runtime import threads
from spf.runtime.plan import WavefrontKernel
from spf.sparse import sptrsv_args


@pytest.fixture(scope="module")
def lower() -> sp.csr_array:
    """A random lower triangle of 120k rows with few levels (its first levels hold tens of
    thousands of rows: several chunks per thread)."""
    n = 120_000
    rng = np.random.default_rng(11)
    strict = sp.tril(sp.random_array((n, n), density=2.0 / n, format="csr", rng=rng), k=-1)
    m = sp.csr_array(strict + sp.eye_array(n, format="csr") * 4.0)
    m.sort_indices()
    return m


@pytest.fixture
def two(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Two OpenMP threads, never capped to one."""
    monkeypatch.setattr(threads.GOVERNOR, "cap", lambda: 0)
    with threads.openmp_threads(2):
        yield


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("copies", [False, True])
@pytest.mark.usefixtures("two")
def test_round_robin_chunks_solve_bitwise_as_serial(
    lower: sp.csr_array, dtype: str, copies: bool
) -> None:
    comp = kernels.sptrsv_csr(index_dtype=dtype)
    comp.wavefront("i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    assert "#pragma omp for schedule(static, 1)" in k.source
    args = sptrsv_args(lower, dtype)
    plan = k.inspect(strategy="levels", threads=2, copies=copies, **args)
    per_level = np.diff(plan.coarse_ptr[: plan.coarse_levels + 1])
    assert plan.strategy == "levels"
    assert per_level.max() > 2
    f = np.random.default_rng(3).uniform(-1.0, 1.0, lower.shape[0])
    want = np.zeros(lower.shape[0])
    kernels.sptrsv_csr(index_dtype=dtype).compile()(u=want, f=f, **args)
    u = np.zeros(lower.shape[0])
    k(u=u, f=f, plan=plan, **args)
    assert k.last_threads == 2
    np.testing.assert_array_equal(u, want)
    ref = spla.spsolve_triangular(lower, f, lower=True)
    np.testing.assert_allclose(u, ref, rtol=1e-12, atol=1e-12)
