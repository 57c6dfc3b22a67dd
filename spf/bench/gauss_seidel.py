"""One forward Gauss-Seidel sweep on 2-D Poisson: serial spf vs its wavefronts.

``spf.kernels.gauss_seidel_csr()`` serially and with ``wavefront("i")`` (``levels``: a
barrier per level; ``p2p``: point-to-point waits, counters for the pushed anti dependences)
at each thread count, from one plan its generated inspector built (timed too), on the 2-D
Poisson matrix of the ``sptrsv`` section (``trsv_grid``; ~2·grid levels, the anti-diagonals).
Each wavefront sweep is first checked bitwise against the serial sweep. Poisson has narrow
levels, so the wavefronts are not expected to beat the serial sweep there (no target).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median


def _plan(kernel: Any, args: dict[str, Any]) -> Any:
    """A plan that runs the executor (not a serial fallback, where the kernel offers one)."""
    if "strategy" in inspect.signature(kernel.inspect).parameters:
        return kernel.inspect(check=False, strategy="wavefront", **args)
    return kernel.inspect(check=False, **args)


def run(ctx: Context) -> Section:
    sec = Section("gauss_seidel")
    g = ctx.cfg.trsv_grid
    a = spf.sparse.poisson2d(g)
    args = spf.sparse.gauss_seidel_args(a)
    n = int(args["N"])
    cache = str(ctx.work / "kernels")
    serial = spf.kernels.gauss_seidel_csr().compile(cache_dir=cache)
    rng = np.random.default_rng(3)
    b, x0 = rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n)
    want = x0.copy()
    serial(x=want, b=b, check=False, **args)
    xs: dict[str, np.ndarray] = {"serial": x0.copy()}

    def serial_call() -> None:
        serial(x=xs["serial"], b=b, check=False, **args)

    variants: list[Variant] = [("spf serial", 1, serial_call)]
    levels = 0
    for method in ("levels", "p2p"):
        comp = spf.kernels.gauss_seidel_csr()
        comp.wavefront("i", method=method)
        kernel = comp.compile(cache_dir=cache)
        plan = _plan(kernel, args)
        levels = plan.levels
        x = xs[method] = x0.copy()
        kernel(x=x, b=b, plan=plan, check=False, **args)
        if not np.array_equal(x, want):
            raise SystemExit(f"gauss_seidel: the wavefront ({method}) sweep differs from serial")

        def call(kernel: Any = kernel, x: np.ndarray = x, plan: Any = plan) -> None:
            kernel(x=x, b=b, plan=plan, check=False, **args)

        variants += [(f"spf wavefront {method}", t, call) for t in ctx.threads]
        if method == "levels":

            def inspect_call(kernel: Any = kernel) -> None:
                _plan(kernel, args)

            variants.append(("spf inspector", 1, inspect_call))
    ctx.log(f"gauss_seidel: N = {n:,}")
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    ms = {(code, t): 1e3 * median(times[code, t]) for code, t, _ in variants}
    base = ms["spf serial", 1]
    sec.line(
        f"### Gauss-Seidel sweep, 2-D Poisson {g}x{g}: N = {n:,}, nnz = {args['NNZ']:,}, "
        f"{levels:,} levels\n\n{load_note(load)}\n"
    )
    sec.table(
        ["code", "threads", "median ms", "speed-up over serial spf"],
        [[c, str(t), f"{ms[c, t]:.3f}", f"{base / ms[c, t]:.2f}x"] for c, t, _ in variants],
    )
    sec.data.update(
        median_ms={f"{c} ({t})": v for (c, t), v in ms.items()}, load=load, N=n, levels=levels
    )
    return sec
