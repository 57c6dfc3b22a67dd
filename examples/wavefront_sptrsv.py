"""Parallel sparse triangular solve by run-time inspection (docs/inspection.md).

``spf.kernels.sptrsv_csr`` with ``comp.wavefront("i")``: spf synthesizes an inspector (a
Computation of its own) that groups the rows into dependence levels, and an executor that
runs all levels inside one OpenMP parallel region. The script solves ``L u = f`` for the
lower triangle of a matrix (a SuiteSparse ``.mtx`` file given on the command line, else a
random one), checks the result against scipy and the serial spf kernel, and prints the
levels and the times of the inspector, the executor and the serial solve.

Run: ``python examples/wavefront_sptrsv.py [matrix.mtx]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

import spf
from spf.sparse import read_matrix_market


def lower_triangle(argv: list[str]) -> sp.csr_array:
    """The strict lower triangle of the matrix plus a dominant diagonal."""
    if len(argv) > 1:
        m = read_matrix_market(argv[1])
        m.data[m.data == 0] = 1.0
    else:
        m = sp.random_array((20000, 20000), density=2e-4, format="csr", rng=3)
    a = sp.tril(m, k=-1)
    return sp.csr_array(a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0))


def best_of(runs: int, fn: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str]) -> None:
    L = lower_triangle(argv)
    n = L.shape[0]
    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i")
    print(comp.inspector("i").stmt("s1").source, "  <- the inspector's level update")
    solve = comp.compile()
    serial = spf.kernels.sptrsv_csr().compile()
    args = spf.sparse.sptrsv_args(L)
    plan = solve.inspect(**args)
    sizes = plan.level_sizes
    print(f"{n} rows, {L.nnz} nonzeros: {plan.levels} levels, {sizes.max()} rows in the largest")
    print(f"plan.strategy = {plan.strategy!r} (serial, levels or coarse: the least estimated time)")

    f = np.random.default_rng(0).random(n)
    u, ref = np.zeros(n), np.zeros(n)
    solve(u=u, f=f, plan=plan, **args)
    serial(u=ref, f=f, **args)
    assert np.array_equal(u, ref), "the wavefront solve differs from the serial one"
    assert np.allclose(u, spsolve_triangular(sp.csr_matrix(L), f, lower=True))
    print("matches scipy's spsolve_triangular and (bitwise) the serial spf kernel")

    t_insp = best_of(3, lambda: solve.inspect(**args))
    t_exec = best_of(5, lambda: solve(u=u, f=f, plan=plan, **args))
    t_serial = best_of(5, lambda: serial(u=ref, f=f, **args))
    print(
        f"inspector {t_insp * 1e3:.2f} ms, executor {t_exec * 1e3:.2f} ms, "
        f"serial {t_serial * 1e3:.2f} ms (one run each on this machine)"
    )


if __name__ == "__main__":
    main(sys.argv)
