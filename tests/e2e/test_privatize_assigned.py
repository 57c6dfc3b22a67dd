"""``parallelize(loop, reduction="privatize")`` copies only what the loop reduces: a data
space the loop also assigns (``tmp(i) = 0.0`` then ``tmp(i) = tmp(i) + ...``, PolyBench's
atax) is written in place; a private copy's merge would add its sums to the input values."""

from __future__ import annotations

import numpy as np

from spf.bench.polybench.kernels import atax


def test_privatize_leaves_assigned_data_spaces_shared(omp_threads: int) -> None:
    comp = atax()
    for name in ("s1", "s2", "s3"):
        comp.stmt(name).parallelize("i", reduction="privatize")
    copies = [line for line in comp.codegen().splitlines() if "per-thread copies" in line]
    assert copies == ["  /* reduction(privatize) over loop i: per-thread copies of y */"]
    m, n = 78, 83
    rng = np.random.default_rng(0)
    a, x = rng.random((m, n)), rng.random(n)
    tmp, y = rng.random(m), rng.random(n)  # inputs the kernel overwrites
    comp.compile()(A=a, x=x, y=y, tmp=tmp, M=m, N=n)
    np.testing.assert_allclose(tmp, a @ x)
    np.testing.assert_allclose(y, a.T @ (a @ x))


def test_an_assigned_data_space_may_mix_operators(omp_threads: int) -> None:
    # covariance's mean: m(j) = 0, += over i, /= n in the privatized j loop; no copy of m is
    # made, so its two operators do not matter (codegen refused: "+ and * in one loop")
    from spf.bench.polybench.medley import covariance

    comp = covariance()
    comp.stmt("s1").parallelize("j", reduction="privatize")
    assert "per-thread copies" not in comp.codegen()
    m, n = 9, 7
    rng = np.random.default_rng(1)
    data = rng.random((n, m))
    mean = np.zeros(m)
    want = data.mean(0)  # the kernel centers data in place
    comp.compile()(data=data, cov=np.zeros((m, m)), mean=mean, float_n=float(n), M=m, N=n)
    np.testing.assert_allclose(mean, want)
