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
