"""Sparse lower-triangular solve ``L·u = f`` (CSR, diagonal last): spf, hand C, scipy.

``L`` is the lower triangle (diagonal included) of the 2-D Poisson matrix (1000x1000 grid: 1M
rows, 3M entries). A forward solve is a chain of dependences along the rows:
``spf.kernels.sptrsv_csr()`` with its default schedule, the loop one writes by hand (same
flags), and ``scipy.sparse.linalg.spsolve_triangular(L, f, lower=True)`` run serially; the
same kernel with ``wavefront("i")`` (levels, one barrier per level, and ``p2p``) runs on 2
threads from a plan its generated inspector built (timed too). Poisson has ~2000 levels, so a
wavefront cannot beat the serial loop there; a random lower triangle of the same size has few
levels. The executor visits the rows of a level scattered over the matrix (it does not
reorder the matrix), so on one thread it is slower than the serial loop, which streams.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure, median

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy
spla: Any = importlib.import_module("scipy.sparse.linalg")

HAND_C = r"""
#include <stdint.h>
/* Forward solve L u = f, CSR with the diagonal last in each row. */
void hand_sptrsv(int64_t n, const int32_t *restrict rowptr, const int32_t *restrict col,
                 const double *restrict l, const double *restrict f, double *restrict u)
{
  for (int64_t i = 0; i < n; i++) {
    double s = f[i];
    const int32_t end = rowptr[i + 1] - 1;
    for (int32_t k = rowptr[i]; k < end; k++)
      s -= l[k] * u[col[k]];
    u[i] = s / l[end];
  }
}
"""
HAND_CDEF = """
void hand_sptrsv(int64_t n, const int32_t *rowptr, const int32_t *col, const double *l,
                 const double *f, double *u);
"""


def run(ctx: Context) -> Section:
    sec = Section("sptrsv")
    g = ctx.cfg.trsv_grid
    lower = sp.csr_array(sp.tril(spf.sparse.poisson2d(g), format="csr"))
    lower.sort_indices()
    args = spf.sparse.sptrsv_args(lower)
    n = args["N"]
    f = np.random.default_rng(2).uniform(-1.0, 1.0, n)
    kernel = spf.kernels.sptrsv_csr().compile(cache_dir=str(ctx.work / "kernels"))
    ffi, hand, command = load_c(HAND_C, HAND_CDEF, "bench_hand_sptrsv", str(ctx.work))
    sec.data.update(spf_source=kernel.source, spf_command=kernel.command, hand_command=command)
    u_spf, u_hand = np.zeros(n), np.zeros(n)
    fb = ffi.from_buffer
    hb = (fb("int32_t[]", args["rowptr"]), fb("int32_t[]", args["col"]), fb("double[]", args["L"]),
          fb("double[]", f), fb("double[]", u_hand))  # fmt: skip
    out: dict[str, Any] = {}

    def spf_call() -> None:
        kernel(u=u_spf, f=f, check=False, **args)

    def hand_call() -> None:
        hand.hand_sptrsv(n, *hb)

    def scipy_call() -> None:
        out["scipy"] = spla.spsolve_triangular(lower, f, lower=True)

    spf_call()
    hand_call()
    scipy_call()
    want = out["scipy"]
    for name, got in (("spf", u_spf), ("hand C", u_hand)):
        if not np.allclose(got, want, rtol=1e-10, atol=1e-10):
            raise SystemExit(f"sptrsv: {name} gives a wrong u")
    variants: list[Variant] = [("spf", 1, spf_call), ("hand C", 1, hand_call),
                               ("scipy spsolve_triangular", 1, scipy_call)]  # fmt: skip
    waves = _wavefront_kernels(ctx)
    variants += _wavefront_variants(waves, args, f, u_spf)
    ctx.log(f"sptrsv: N = {n:,}")
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    ms = {code: 1e3 * median(times[code, t]) for code, t, _ in variants}
    sec.line(
        f"### Forward solve, lower triangle of 2-D Poisson {g}x{g}: N = {n:,}, "
        f"nnz = {args['NNZ']:,} (serial)\n\n{load_note(load)}\n"
    )
    sec.table(
        ["code", "median ms", "/ hand C", "speed-up over scipy"],
        [[c, f"{v:.3f}", f"{v / ms['hand C']:.3f}", f"{ms['scipy spsolve_triangular'] / v:.1f}x"]
         for c, v in ms.items()],
    )  # fmt: skip
    r = ms["spf"] / ms["hand C"]
    sec.target("forward solve: spf <= 1.05x serial hand C", f"{r:.3f}x", r <= 1.05)
    s = ms["scipy spsolve_triangular"] / ms["spf"]
    sec.target("forward solve: spf >= 10x faster than scipy", f"{s:.1f}x", s >= 10)
    w = ms["spf wavefront levels"] / ms["spf"]
    sec.target("Poisson: wavefront (levels, 2 threads) <= 1.0x serial spf", f"{w:.2f}x", w <= 1.0)
    i = ms["spf inspector"] / ms["spf"]
    sec.target("inspector <= 2 serial spf solves", f"{i:.2f}x", i <= 2.0)
    sec.data.update(median_ms=ms, load=load, N=n, nnz=args["NNZ"])
    _few_levels(ctx, sec, waves, n)
    return sec


def _wavefront_kernels(ctx: Context) -> dict[str, Any]:
    out: dict[str, Any] = {
        "serial": spf.kernels.sptrsv_csr().compile(cache_dir=str(ctx.work / "kernels"))
    }
    for method in ("levels", "p2p"):
        comp = spf.kernels.sptrsv_csr()
        comp.wavefront("i", method=method)
        out[method] = comp.compile(cache_dir=str(ctx.work / "kernels"))
    return out


def _wavefront_variants(
    waves: dict[str, Any], args: dict[str, Any], f: np.ndarray, want: np.ndarray
) -> list[Variant]:
    """2-thread wavefront solves from one plan (checked bitwise against ``want``, the serial
    spf result) and the inspector."""
    plan = waves["levels"].inspect(check=False, **args)
    out: list[Variant] = []
    for method in ("levels", "p2p"):
        u = np.zeros(len(f))
        kernel = waves[method]

        def call(kernel: Any = kernel, u: np.ndarray = u) -> None:
            kernel(u=u, f=f, plan=plan, check=False, **args)

        call()
        if not np.array_equal(u, want):
            raise SystemExit(f"sptrsv: the wavefront ({method}) solve differs from serial spf")
        out.append((f"spf wavefront {method}", 2, call))

    def inspect() -> None:
        waves["levels"].inspect(check=False, **args)

    out.append(("spf inspector", 1, inspect))
    return out


def _few_levels(ctx: Context, sec: Section, waves: dict[str, Any], n: int) -> None:
    """A random lower triangle (about 2 entries below the diagonal per row): few levels."""
    rng = np.random.default_rng(4)
    strict = sp.tril(sp.random(n, n, density=2.0 / n, format="csr", random_state=rng), k=-1)
    lower = sp.csr_array(strict + sp.identity(n, format="csr") * 4.0)
    lower.sort_indices()
    args = spf.sparse.sptrsv_args(lower)
    f = rng.uniform(-1.0, 1.0, n)
    want = np.zeros(n)

    def serial() -> None:
        waves["serial"](u=want, f=f, check=False, **args)

    serial()
    plan = waves["levels"].inspect(check=False, **args)
    variants = [("spf", 1, serial), *_wavefront_variants(waves, args, f, want)]
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    ms = {code: 1e3 * median(times[code, t]) for code, t, _ in variants}
    sec.line(
        f"\n### Forward solve, random lower triangle: N = {n:,}, nnz = {args['NNZ']:,}, "
        f"{plan.levels} levels (largest {int(plan.level_sizes.max()):,} rows)\n\n"
        f"{load_note(load)}\n"
    )
    sec.table(
        ["code", "threads", "median ms", "speed-up over serial spf"],
        [[c, str(t), f"{ms[c]:.3f}", f"{ms['spf'] / ms[c]:.2f}x"] for c, t, _ in variants],
    )
    best = ms["spf"] / min(ms["spf wavefront levels"], ms["spf wavefront p2p"])
    sec.target("few levels: wavefront (2 threads) >= 1.5x faster than serial spf",
               f"{best:.2f}x", best >= 1.5)  # fmt: skip
    sec.data.update(few_levels_ms=ms, few_levels=plan.levels)
