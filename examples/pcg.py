"""Preconditioned conjugate gradients with an ILU(0) preconditioner written in spf.

``python examples/pcg.py [GRID]`` solves ``A x = b`` to a relative residual of 1e-8 on 2-D
Poisson ``GRID x GRID`` (default 40: 1,600 rows) and, when the shared SuiteSparse matrices
are there, on ``bcsstk13`` (SPD, 2,003 rows; its ILU(0) has non-positive pivots, so the
preconditioner is not SPD and the example says so instead of iterating), with

* the ILU(0) factors computed in place by ``spf.kernels.ilu0_csr`` run as a wavefront;
* the preconditioner ``z = U⁻¹ L⁻¹ r`` as ONE spf computation: the unit-lower solve and the
  upper solve (``spf.kernels.trsv_diag_csr``) appended, fused into one row loop and run as one
  wavefront whose inspector orders both solves' dependences (the upper solve runs its rows
  last first, so no static proof allows the fusion);
* ``y = A·p`` by ``spf.kernels.spmv_csr`` with its row loop parallel;

and compares with scipy's ``cg`` using the same factors through ``spsolve_triangular``:
the iteration counts agree (within 1) and so do the solutions. The kernels and the PCG loop
are ``spf.bench.pcg``'s: ``spf bench --only pcg`` times them against scipy on 1M rows.
"""

from __future__ import annotations

import os

# numpy's OpenBLAS: one thread for the vector operations. Its workers spin after a call;
# alternating with spf's OpenMP team on a 2-core machine, each pool's spinning steals the core
# the other one waits for (a 90,000-entry dot product took ~36 ms instead of ~0.3 ms: most of
# an iteration's time). Vector updates are memory-bound: one thread loses little.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg, spsolve_triangular

import spf
from spf.bench.pcg import RTOL, SpfPcg, Vector, pcg

SUITESPARSE = Path(__file__).resolve().parents[2] / "shared" / "data" / "suitesparse"


def solve(name: str, a: sp.csr_array) -> None:
    a = sp.csr_array(a)
    a.sum_duplicates()
    a.sort_indices()
    n = a.shape[0]
    b = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    # the fused preconditioner by its executor (coarse levels or levels, whichever is
    # estimated faster) even where the default plan would run it serially
    kernels = SpfPcg(a, strategy="wavefront")
    lower, upper = kernels.factors()
    bad = int((upper.diagonal() <= 0).sum())
    if bad:  # L·U is then not positive definite: conjugate gradients does not apply
        print(f"{name}: ILU(0) has {bad} non-positive pivots (the preconditioner is not SPD): "
              "PCG skipped")  # fmt: skip
        return
    t0 = time.perf_counter()
    x, its = pcg(kernels.matvec, kernels.psolve, b)
    spf_s = time.perf_counter() - t0

    def precondition(r: Vector) -> Vector:
        w = spsolve_triangular(lower, r, lower=True, unit_diagonal=True)
        return np.asarray(spsolve_triangular(upper, w, lower=False))

    counted = [0]
    t0 = time.perf_counter()
    ref, info = cg(
        a,
        b,
        rtol=RTOL,
        atol=0.0,
        maxiter=10 * n,
        M=LinearOperator((n, n), matvec=precondition),  # type: ignore[call-arg]
        callback=lambda _: counted.__setitem__(0, counted[0] + 1),
    )
    scipy_s = time.perf_counter() - t0
    assert info == 0, f"{name}: scipy's cg did not converge"
    residual = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
    assert abs(its - counted[0]) <= 1, f"{name}: {its} iterations, scipy {counted[0]}"
    assert residual <= 2 * RTOL, f"{name}: relative residual {residual:.1e}"
    assert np.allclose(x, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max()), name
    print(
        f"{name}: N = {n:,}, {its} iterations (scipy cg: {counted[0]}), relative residual "
        f"{residual:.1e}; {plan_text(kernels.plan)}; spf {1e3 * spf_s:.1f} ms, "
        f"scipy {1e3 * scipy_s:.1f} ms"
    )


def plan_text(plan: object) -> str:
    levels, strategy = getattr(plan, "levels", 0), getattr(plan, "strategy", "")
    return f"preconditioner plan: {levels} levels over both solves, {strategy}"


def main(grid: int) -> None:
    solve(f"2-D Poisson {grid}x{grid}", sp.csr_array(spf.sparse.poisson2d(grid)))
    path = SUITESPARSE / "bcsstk13.mtx"
    if path.is_file():
        solve("bcsstk13", sp.csr_array(spf.sparse.read_matrix_market(path)))
    else:
        print(f"{path} not found: the SuiteSparse part is skipped")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
