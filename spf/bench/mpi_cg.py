"""One unpreconditioned CG iteration as one row-distributed computation (docs/backends/mpi.md,
"Phases"), and the CG loop around it, for ``spf bench --only mpi``."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import spf

RTOL = 1e-8
MAX_ITERATIONS = 100_000


def cg_step(distribute: bool = True) -> spf.Computation:
    """q = A p, pq = p.q; alpha = rr / pq on every rank; x += alpha p, r -= alpha q,
    rrn = r.r; beta = rrn / rr, rr = rrn; p = r + beta p (its rows distributed over the
    ranks unless ``distribute`` is False: the serial reference)."""
    comp = spf.Computation("cg_step")
    comp.declare_uf(
        "rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    for name, extent in (("x", "N"), ("r", "N"), ("q", "N"), ("p", "M"), ("A", "NNZ")):
        comp.add_data_space(name, "double", shape=(extent,))
    for name in ("pq", "rr", "rrn", "alpha", "beta"):
        comp.add_data_space(name, "double", shape=())
    comp.assume("M = N")
    rows, once = "{[i]: 0 <= i < N}", "{[c]: c = 0}"
    nnz = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
    for source, domain, schedule in (
        ("$pq$() = 0.0;", once, "{[c] -> [0, c, 0, 0, 0]}"),
        ("$rrn$() = 0.0;", once, "{[c] -> [0, c, 1, 0, 0]}"),
        ("$q$(i) = 0.0;", rows, "{[i] -> [1, i, 0, 0, 0]}"),
        ("$q$(i) += $A$(k) * $p$(j);", nnz, "{[i,k,j] -> [1, i, 1, k, j]}"),
        ("$pq$() += $p$(i) * $q$(i);", rows, "{[i] -> [1, i, 2, 0, 0]}"),
        ("$alpha$() = $rr$() / $pq$();", once, "{[c] -> [2, c, 0, 0, 0]}"),
        ("$x$(i) += $alpha$() * $p$(i);", rows, "{[i] -> [3, i, 0, 0, 0]}"),
        ("$r$(i) -= $alpha$() * $q$(i);", rows, "{[i] -> [3, i, 1, 0, 0]}"),
        ("$rrn$() += $r$(i) * $r$(i);", rows, "{[i] -> [3, i, 2, 0, 0]}"),
        ("$beta$() = $rrn$() / $rr$();", once, "{[c] -> [4, c, 0, 0, 0]}"),
        ("$rr$() = $rrn$();", once, "{[c] -> [4, c, 1, 0, 0]}"),
        ("$p$(i) = $r$(i) + $beta$() * $p$(i);", rows, "{[i] -> [5, i, 0, 0, 0]}"),
    ):
        comp.add_stmt(spf.Stmt(source, domain, schedule))
    if distribute:
        comp.distribute_rows("i", data={"x": 0, "r": 0, "q": 0, "p": 0})
    return comp


def solve(comm: Any, args: dict[str, Any], b_loc: np.ndarray, b_norm: float) -> dict[str, Any]:
    """CG from x = 0 until ||r|| < RTOL ||b|| (KSPCG's default test without a preconditioner:
    the residual is the unpreconditioned one); the time per iteration is the slowest rank's
    loop time over the iterations. ``rr`` is summed over the ranks inside the computation, so
    every rank stops after the same iteration."""
    from mpi4py import MPI

    kernel: Any = cg_step().compile(target="mpi")
    x, r, q = np.zeros(b_loc.size), b_loc.copy(), np.zeros(b_loc.size)
    p = b_loc.copy()
    rr = np.array(b_norm * b_norm)
    scalars = {name: np.zeros(()) for name in ("pq", "rrn", "alpha", "beta")}
    call = dict(comm=comm, x=x, r=r, q=q, p=p, rr=rr, check=False, **scalars, **args)
    tol = (RTOL * b_norm) ** 2
    scratch = {
        k: (v.copy() if isinstance(v, np.ndarray) and k not in args else v) for k, v in call.items()
    }
    kernel(**scratch)  # the inspector and the exchange plan (kept: same index arrays)
    its = 0
    comm.Barrier()
    t0 = time.perf_counter()
    while float(rr) >= tol and its < MAX_ITERATIONS:
        kernel(**call)
        its += 1
    total = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    return {
        "cg_iterations": its,
        "cg_ms_per_iteration": total / max(1, its) * 1e3,
        "cg_converged": float(rr) < tol,
        "cg_x": x,
    }
