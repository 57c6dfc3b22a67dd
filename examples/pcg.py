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
the iteration counts agree (within 1) and so do the solutions.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg, spsolve_triangular

import spf

SUITESPARSE = Path(__file__).resolve().parents[2] / "shared" / "data" / "suitesparse"
RTOL = 1e-8
Vector = np.ndarray


def preconditioner() -> spf.Computation:
    """``z = U⁻¹ (L⁻¹ r)`` with the ILU(0) factors stored in place in ``A``: the two solves
    fused into one wavefront loop."""
    comp = spf.Computation("ilu0_apply")
    for name in ("r", "w", "z"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    lower = spf.kernels.trsv_diag_csr(unit=True)  # s0, s1: w = L⁻¹ r
    upper = spf.kernels.trsv_diag_csr(upper=True)  # s2, s3, s4: z = U⁻¹ w, rows last first
    comp.append_computation(lower, "{[]}", "{[] -> [0]}", {"x": "w", "A": "A", "b": "r"})
    comp.append_computation(upper, "{[]}", "{[] -> [1]}", {"x": "z", "A": "A", "b": "w"})
    for first, second in (("s1", "s2"), ("s2", "s3"), ("s3", "s4")):
        comp.fuse(first, second, 1)  # statement by statement into the lower solve's loop
    comp.wavefront("_i0_i")
    return comp


class Spf:
    """The spf kernels of one matrix: factor once, then apply ``A`` and the preconditioner."""

    def __init__(self, a: sp.csr_array) -> None:
        ilu = spf.kernels.ilu0_csr()
        ilu.wavefront("i")
        mv = spf.kernels.spmv_csr()
        mv.stmts[0].parallelize("i")
        self.mv, self.apply = mv.compile(), preconditioner().compile()
        self.csr = spf.sparse.csr_args(a)
        self.args = spf.sparse.ilu0_args(a)  # A (copied: factored in place), rowptr, col, diag
        index = {k: v for k, v in self.args.items() if k != "A"}
        ilu.compile()(**self.args)
        # once (the pattern does not change); by levels even where the default plan would
        # run Poisson's narrow levels serially, to show the fused executor
        self.plan = self.apply.inspect(strategy="wavefront", **index)
        n = a.shape[0]
        self.w, self.z, self.y = np.zeros(n), np.zeros(n), np.zeros(n)

    def matvec(self, p: Vector) -> Vector:
        self.y[:] = 0.0
        self.mv(y=self.y, x=p, check=False, **self.csr)
        return self.y

    def psolve(self, r: Vector) -> Vector:
        self.apply(r=r, w=self.w, z=self.z, plan=self.plan, check=False, **self.args)
        return self.z.copy()

    def factors(self) -> tuple[sp.csr_array, sp.csr_array]:
        """The unit-lower ``L`` (diagonal not stored) and ``U`` as scipy matrices."""
        f = sp.csr_array((self.args["A"], self.args["col"], self.args["rowptr"]))
        return sp.csr_array(sp.tril(f, k=-1)), sp.csr_array(sp.triu(f))


def pcg(
    matvec: Callable[[Vector], Vector], psolve: Callable[[Vector], Vector], b: Vector
) -> tuple[Vector, int]:
    """Preconditioned conjugate gradients from ``x = 0`` until ``|r| <= RTOL |b|``."""
    x, r = np.zeros_like(b), b.copy()
    z = psolve(r)
    p, rz, target = z.copy(), float(r @ z), RTOL * float(np.linalg.norm(b))
    for it in range(1, 10 * len(b) + 1):
        q = matvec(p)
        alpha = rz / float(p @ q)
        x += alpha * p
        r -= alpha * q
        if np.linalg.norm(r) <= target:
            return x, it
        z = psolve(r)
        rz, old = float(r @ z), rz
        p = z + (rz / old) * p
    raise SystemExit("pcg: no convergence")


def solve(name: str, a: sp.csr_array) -> None:
    a = sp.csr_array(a)
    a.sum_duplicates()
    a.sort_indices()
    n = a.shape[0]
    b = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    kernels = Spf(a)
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
