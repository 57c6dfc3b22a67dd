"""Preconditioned conjugate gradients with ILU(0) on 2-D Poisson: spf against scipy, the same
preconditioner (issue 31).

On 2-D Poisson (the ``sptrsv`` section's grid: 1M rows, ``--quick`` 10,000), ``A x = b`` is
solved from ``x = 0`` to ``|r| <= 1e-8 |b|`` with ``M = L·U``, the ILU(0) factors of ``A``
(computed once by ``spf.kernels.ilu0_csr`` as a wavefront, in place):

* ``spf PCG``: ``y = A·p`` by ``spf.kernels.spmv_csr`` (row loop parallel) and ``z = U⁻¹ L⁻¹
  r`` as ONE computation, the two triangular solves fused into one wavefront loop
  (:func:`preconditioner`) run on its default plan (``inspect()``: serial when the levels are
  too narrow), at each thread count; the loop is :func:`pcg` (numpy vector operations);
* ``scipy cg``: :func:`scipy.sparse.linalg.cg` with the same factors as ``M⁻¹`` through
  SuperLU's triangular solves (``splu`` of ``L`` and of ``U`` in their natural order: no
  pivoting, no fill, so the factors are ``L`` and ``U`` themselves; ~5x faster than
  ``spsolve_triangular``, which converts and checks the matrix on every call).

The vector operations (dot products, norms, updates) of both run with one OpenBLAS thread:
OpenBLAS's workers spin after a call, and alternating with libgomp's team on 2 cores each
pool's spinning steals the core the other one waits for (on the shared machine a 90,000-entry
dot product took ~36 ms with two OpenBLAS threads between spf calls, ~0.3 ms with one; that
was what made ``examples/pcg.py`` spend ~50 ms an iteration).

Printed: iterations (spf and scipy must agree within one), total time and time per
iteration, medians of interleaved runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

import spf
import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median, openblas_threads
from spf.runtime.plan import WavefrontKernel

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy
spla: Any = importlib.import_module("scipy.sparse.linalg")

RTOL = 1e-8
Vector = np.ndarray


def preconditioner() -> spf.Computation:
    """``z = U⁻¹ (L⁻¹ r)`` with the ILU(0) factors stored in place in ``A`` (unit ``L`` below
    the diagonal, ``U`` on and above it): the unit-lower solve and the upper solve
    (``spf.kernels.trsv_diag_csr``, its rows last first) appended and fused into one row
    loop, run as one wavefront whose inspector orders both solves' dependences."""
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


class SpfPcg:
    """The spf kernels of one matrix: ILU(0) factored once, then ``A·p`` and ``M⁻¹ r``.
    ``strategy`` is the preconditioner plan's (``inspect(strategy=...)``)."""

    def __init__(self, a: Any, *, strategy: str = "auto", cache_dir: str | None = None) -> None:
        options: dict[str, Any] = {} if cache_dir is None else {"cache_dir": cache_dir}
        ilu = spf.kernels.ilu0_csr()
        ilu.wavefront("i")
        mv = spf.kernels.spmv_csr()
        mv.stmts[0].parallelize("i")
        self.mv: Any = mv.compile(**options)
        apply = preconditioner().compile(**options)
        if not isinstance(apply, WavefrontKernel):
            raise SystemExit("pcg: the fused preconditioner did not compile to a wavefront")
        self.apply = apply
        self.csr = spf.sparse.csr_args(a)
        self.args = spf.sparse.ilu0_args(a)  # A (copied: factored in place), rowptr, col, diag
        index = {k: v for k, v in self.args.items() if k != "A"}
        factor: Any = ilu.compile(**options)
        factor(**self.args)
        self.plan = self.apply.inspect(strategy=strategy, **index)  # the pattern is fixed
        n = a.shape[0]
        self.w, self.z, self.y = np.zeros(n), np.zeros(n), np.zeros(n)
        # A serial plan, or a call whose team the busy-machine cap lowers to one, runs the
        # serial kernel, compiled on its first call: compile it here, with the factoring,
        # so that no timed solve pays for it (the first timed run of --quick, 2 threads in
        # the harness's order, took 3.1 s instead of 0.15 s: the compile, not the threads).
        serial, zero = self.apply.inspect(strategy="serial", check=False, **index), np.zeros(n)
        for plan in (serial, self.plan):
            self.apply(r=zero, w=self.w, z=self.z, plan=plan, check=False, **self.args)
        self.matvec(zero)

    def matvec(self, p: Vector) -> Vector:
        """``A·p`` (into a buffer the next call overwrites)."""
        self.y[:] = 0.0
        self.mv(y=self.y, x=p, check=False, **self.csr)
        return self.y

    def psolve(self, r: Vector) -> Vector:
        """``U⁻¹ L⁻¹ r`` (into a buffer the next call overwrites)."""
        self.apply(r=r, w=self.w, z=self.z, plan=self.plan, check=False, **self.args)
        return self.z

    def factors(self) -> tuple[Any, Any]:
        """The unit-lower ``L`` (its diagonal not stored) and ``U`` as scipy CSR matrices."""
        f = sp.csr_array((self.args["A"], self.args["col"], self.args["rowptr"]))
        return sp.csr_array(sp.tril(f, k=-1)), sp.csr_array(sp.triu(f))


def pcg(
    matvec: Callable[[Vector], Vector], psolve: Callable[[Vector], Vector], b: Vector
) -> tuple[Vector, int]:
    """Preconditioned conjugate gradients from ``x = 0`` until ``|r| <= RTOL |b|``:
    ``(x, iterations)``. ``matvec`` and ``psolve`` may return the same buffer every call."""
    x, r = np.zeros_like(b), b.copy()
    p = psolve(r).copy()
    rz, target = float(r @ p), RTOL * float(np.linalg.norm(b))
    for it in range(1, 10 * len(b) + 1):
        q = matvec(p)
        alpha = rz / float(p @ q)
        x += alpha * p
        r -= alpha * q
        if np.sqrt(float(r @ r)) <= target:
            return x, it
        z = psolve(r)
        rz, old = float(r @ z), rz
        p *= rz / old
        p += z
    raise SystemExit(f"pcg: no convergence in {10 * len(b)} iterations")


def superlu_psolve(lower: Any, upper: Any) -> Callable[[Vector], Vector]:
    """``U⁻¹ L⁻¹ r`` by SuperLU's triangular solves: ``splu`` of the unit-lower ``L`` (given
    without its diagonal) and of ``U`` in their natural order, without pivoting or scaling
    (the factors of a triangular matrix are itself and a diagonal: no fill)."""
    n = lower.shape[0]
    opts = {"permc_spec": "NATURAL", "diag_pivot_thresh": 0.0, "options": {"Equil": False}}
    lu_l = spla.splu(sp.csc_matrix(lower + sp.eye_array(n, format="csr")), **opts)
    lu_u = spla.splu(sp.csc_matrix(upper), **opts)

    def psolve(r: Vector) -> Vector:
        return np.asarray(lu_u.solve(lu_l.solve(r)))

    return psolve


def run(ctx: Context) -> Section:
    sec = Section("pcg")
    g = ctx.cfg.trsv_grid
    a = sp.csr_array(spf.sparse.poisson2d(g))
    a.sort_indices()
    n = a.shape[0]
    b = np.random.default_rng(0).uniform(-1.0, 1.0, n)
    mine = SpfPcg(a, cache_dir=str(ctx.work / "kernels"))
    lower, upper = mine.factors()
    psolve = superlu_psolve(lower, upper)
    blas = openblas_threads()
    one_blas: Callable[[], object] = (lambda: blas[1](1)) if blas else (lambda: None)
    found: dict[tuple[str, int], tuple[int, Vector]] = {}

    def spf_run(t: int) -> Callable[[], object]:
        def call() -> None:
            one_blas()  # after the harness set OpenBLAS to the variant's thread count
            x, iterations = pcg(mine.matvec, mine.psolve, b)
            found["spf PCG", t] = (iterations, x)

        return call

    def scipy_run() -> None:
        one_blas()
        counted = [0]
        x, info = spla.cg(
            a, b, rtol=RTOL, atol=0.0, maxiter=10 * n,
            M=spla.LinearOperator((n, n), matvec=psolve),
            callback=lambda _: counted.__setitem__(0, counted[0] + 1),
        )  # fmt: skip
        if info != 0:
            raise SystemExit(f"pcg: scipy's cg did not converge (info {info})")
        found["scipy cg", 1] = (counted[0], x)

    variants: list[Variant] = [("spf PCG", t, spf_run(t)) for t in ctx.threads]
    variants.append(("scipy cg", 1, scipy_run))
    ctx.log(f"pcg: N = {n:,}")
    rounds = 1 if ctx.cfg.quick else 3
    times, load = measure(ctx, variants, rounds, warmup=0)
    its = {key: found[key][0] for key in found}
    norm_b = float(np.linalg.norm(b))
    for key, (_, x) in found.items():
        residual = float(np.linalg.norm(b - a @ x)) / norm_b
        if residual > 2 * RTOL:
            raise SystemExit(f"pcg: {key[0]} ({key[1]} threads) left a residual {residual:.1e}")
    ms = {(c, t): 1e3 * median(times[c, t]) for c, t, _ in variants}
    ref = ms["scipy cg", 1]
    sec.line(
        f"### PCG, ILU(0), 2-D Poisson {g}x{g}: N = {n:,}, nnz = {a.nnz:,}, to a relative "
        f"residual of {RTOL:g}; spf preconditioner plan: {mine.plan.levels:,} levels over both "
        f"solves, strategy {mine.plan.strategy!r}; scipy: cg with M⁻¹ by SuperLU's triangular "
        "solves of the same factors; vector operations on one OpenBLAS thread\n\n"
        f"{load_note(load)}\n"
    )
    sec.table(
        ["code", "threads", "iterations", "total ms", "ms per iteration", "speed-up over scipy"],
        [
            [c, str(t), str(its[c, t]), f"{v:.1f}", f"{v / its[c, t]:.3f}", f"{ref / v:.2f}x"]
            for (c, t), v in ms.items()
        ],
    )
    worst = max(abs(its[k] - its["scipy cg", 1]) for k in its)
    sec.target(
        "spf PCG takes the iterations of scipy's cg (within 1)",
        f"{sorted(set(its.values()))}",
        worst <= 1,
    )
    sec.data.update(
        median_ms={f"{c} ({t})": v for (c, t), v in ms.items()},
        iterations={f"{c} ({t})": v for (c, t), v in its.items()},
        load=load,
        N=n,
        plan_strategy=mine.plan.strategy,
        plan_levels=mine.plan.levels,
    )
    return sec
