"""Sparse lower-triangular solve ``L·u = f`` (CSR, diagonal last): spf, hand C, scipy, MKL.

Two matrices of 1M rows (``--quick``: 10k): the lower triangle (diagonal included) of the 2-D
Poisson matrix (1000x1000 grid, 3M entries, ~2000 dependence levels of ~500 rows), and a
generated random lower triangle (about 2 entries below the diagonal per row, diagonal 4: a
stand-in for a SuiteSparse matrix with few levels, since the SuiteSparse matrices in
``/work/shared/data/suitesparse`` are too small to time a solve; 12 levels). On each:

* ``spf``: ``spf.kernels.sptrsv_csr()`` with its default schedule (serial), and on Poisson the
  loop one writes by hand (same flags) and ``scipy.sparse.linalg.spsolve_triangular``; the
  target on serial spf over the hand C compares the two timed again on the calling
  thread's CPU time (both one thread), the table's rows are wall time;
* ``spf wavefront levels`` / ``p2p`` at 1 and 2 threads: the same kernel with
  ``wavefront("i")`` from a plan forced to ``strategy="wavefront"`` (the executor runs whatever
  the levels), checked bitwise against serial spf;
* ``spf wavefront coarse`` at 1 and 2 threads: ``wavefront("i")`` (``method="auto"``, the
  coarse executor) on a plan forced to ``strategy="coarse"`` for that many threads;
* ``spf wavefront auto (levels forced)`` at 1 and 2 threads: ``wavefront("i")``
  (``method="auto"``) on a plan forced to ``strategy="levels"`` for that many threads: the
  levels on part-ordered copies where they pay (:mod:`spf.runtime.copies`), the plan
  ``auto`` weighs against the loop in order, timed whichever ``auto`` picks (the evidence
  for :data:`spf.runtime.coarse.PARALLEL_EFFICIENCY`);
* ``spf wavefront auto``: the plan the ``auto`` kernel's ``inspect(...)`` picks by default
  (its ``strategy`` is printed: serial, levels or coarse);
* ``spf inspector``: the levels kernel's ``inspect(...)`` (levels, counting sort, strategy and
  groups); ``spf coarse inspector``: the auto kernel's (levels and coarse levels in one pass,
  the counting sort by coarse level with the level sizes, the parts; a coarse plan sorts by
  level only when its level order is read), at each thread count: on two threads the pass
  runs as two at once, the levels and their count on a worker thread (the targets take the
  faster row and say which);
* ``hand C levels`` at 1 and 2 threads (:mod:`spf.bench.sptrsv_hand`): a level-scheduled
  solve written by hand on level-ordered copies of the rows, the same levels: the ceiling of a
  level-scheduled solve on this machine, without a kernel call's checks; ``hand C levels,
  prefetch``: the same loop prefetching the row 32 positions ahead, as spf's executor of
  copies does on large vectors (:mod:`spf.codegen.prefetch`);
* ``MKL IE trsv`` (``pip install mkl``, the ``bench`` extra): ``mkl_sparse_d_trsv`` after
  ``mkl_sparse_set_sv_hint`` and ``mkl_sparse_optimize``, at 1 and 2 threads.

Variants are timed interleaved (shuffled each round) with ``SPF_ADAPTIVE_THREADS=0``-style
forced thread counts (the runtime sets them per call). spf's own cap on a busy machine may
still run a call on fewer threads: the table's thread column says what each spf row ran
with (:mod:`spf.bench.teams`), ``2 (ran 1)`` when the cap engaged.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure, median
from spf.bench.mkl import MklTrsv, load_mkl
from spf.bench.sptrsv_hand import hand_levels
from spf.bench.teams import Teams

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy
spla: Any = importlib.import_module("scipy.sparse.linalg")

LEVELS_FORCED = "spf wavefront auto (levels forced)"
"""The row of the ``auto`` kernel's levels plan, forced: what ``auto`` would run on copies."""

HAND_C = r"""
#include <stdint.h>
/* Forward solve L u = f, CSR with the diagonal last in each row. The row before's result is
   kept in a register (prev) and read from there when a row's last entry left of the
   diagonal is in column i - 1 (a stencil's neighbour): without it each such row waits on
   the previous row's store through memory (what spf's serial kernel does too since its
   spf_prev local; this loop read memory before and ran 1.44x spf's time on Poisson). */
void hand_sptrsv(int64_t n, const int32_t *restrict rowptr, const int32_t *restrict col,
                 const double *restrict l, const double *restrict f, double *restrict u)
{
  double prev = 0.0;
  int64_t prev_at = -1;
  for (int64_t i = 0; i < n; i++) {
    double s = f[i];
    const int32_t end = rowptr[i + 1] - 1;
    int32_t k = rowptr[i];
    if (k < end) {
      for (; k < end - 1; k++)
        s -= l[k] * u[col[k]];
      const int32_t c = col[k];
      s -= l[k] * (c == prev_at ? prev : u[c]);
    }
    prev = s / l[end];
    u[i] = prev;
    prev_at = i;
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
    kernels = _kernels(ctx)
    mkl, where = load_mkl()
    if mkl is not None:
        ctx.rt.setters.append(mkl.MKL_Set_Num_Threads)
    sec.data.update(spf_source=kernels["serial"].source, spf_command=kernels["serial"].command)
    poisson = sp.csr_array(sp.tril(spf.sparse.poisson2d(g), format="csr"))
    title = f"lower triangle of 2-D Poisson {g}x{g}"
    teams = Teams()
    ms, plan = _solve(ctx, sec, kernels, mkl, poisson, title, teams, hand=True)
    if mkl is None:
        sec.line(f"MKL: not available ({where}); its rows are missing.\n")
    serial = ms["spf", 1]
    cpu = sec.data["serial_cpu_ms"]
    r = cpu["spf"] / cpu["hand C"]
    sec.target(
        "forward solve: spf <= 1.05x serial hand C (the calling thread's CPU time)",
        f"{r:.3f}x",
        r <= 1.05,
        f"wall time {serial / ms['hand C', 1]:.3f}x (the table's rows)",
    )
    s = ms["scipy spsolve_triangular", 1] / serial
    sec.target("scipy spsolve_triangular >= 15x slower than serial spf", f"{s:.1f}x", s >= 15)
    t2 = max(ctx.threads)
    w = serial / ms["spf wavefront auto", t2]
    forced = serial / ms["spf wavefront levels", t2]
    note = f"plan.strategy={plan.strategy!r}; the levels executor forced: {forced:.2f}x"
    note = "; ".join(x for x in (note, _auto_note(teams, plan, t2)) if x)
    sec.target(f"Poisson: auto ({t2} threads) >= 1.2x faster than serial spf", f"{w:.2f}x",
               w >= 1.2, note)  # fmt: skip
    i, it = _inspector(ms, ctx.threads, serial)
    sec.target("Poisson: coarse inspector <= 1 serial spf solve", f"{i:.2f}x ({it} threads)",
               i <= 1.0)  # fmt: skip
    rng = np.random.default_rng(4)
    n = g * g
    strict = sp.tril(sp.random_array((n, n), density=2.0 / n, format="csr", rng=rng), k=-1)
    few = sp.csr_array(strict + sp.eye_array(n, format="csr") * 4.0)
    teams2 = Teams()
    ms2, plan2 = _solve(ctx, sec, kernels, mkl, few, "random lower triangle (generated)", teams2)
    best = ms2["spf", 1] / ms2["spf wavefront auto", t2]
    ceiling = f"hand C levels {ms2['spf', 1] / ms2['hand C levels', t2]:.2f}x"
    ceiling += f", with prefetch {ms2['spf', 1] / ms2['hand C levels, prefetch', t2]:.2f}x"
    ceiling += f", auto's levels plan forced {ms2['spf', 1] / ms2[LEVELS_FORCED, t2]:.2f}x"
    note2 = "; ".join(x for x in (f"{plan2.levels} levels, {plan2.strategy}", ceiling,
                                  _auto_note(teams2, plan2, t2)) if x)  # fmt: skip
    sec.target(f"few levels: auto ({t2} threads) >= 1.6x faster than serial spf",
               f"{best:.2f}x", best >= 1.6, note2)  # fmt: skip
    i2, it2 = _inspector(ms2, ctx.threads, ms2["spf", 1])
    sec.target("few levels: coarse inspector <= 2 serial spf solves", f"{i2:.2f}x ({it2} threads)",
               i2 <= 2.0)  # fmt: skip
    sec.data.update(poisson_ms=_keyed(ms), few_levels_ms=_keyed(ms2), few_levels=plan2.levels,
                    poisson_levels=plan.levels, N=n, mkl=where,
                    poisson_threads_as_run=teams.labels(),
                    few_levels_threads_as_run=teams2.labels())  # fmt: skip
    return sec


def _auto_note(teams: Teams, plan: Any, threads: int) -> str:
    """The auto row's note on the threads its calls ran with: a serial plan runs the loop in
    order on one thread by design (not a busy machine: :meth:`Teams.note` would say so)."""
    if plan.strategy == "serial":
        return "a serial plan: the loop in order on one thread"
    return teams.note("spf wavefront auto", threads)


def _inspector(
    ms: dict[tuple[str, int], float], threads: list[int], serial: float
) -> tuple[float, int]:
    """The coarse inspector's least time in serial solves, and the thread count of its row."""
    return min((ms["spf coarse inspector", t] / serial, t) for t in threads)


def _keyed(ms: dict[tuple[str, int], float]) -> dict[str, float]:
    return {f"{code} ({t} threads)": v for (code, t), v in ms.items()}


def _kernels(ctx: Context) -> dict[str, Any]:
    cache = str(ctx.work / "kernels")
    out: dict[str, Any] = {"serial": spf.kernels.sptrsv_csr().compile(cache_dir=cache)}
    for method in ("levels", "p2p", "auto"):
        comp = spf.kernels.sptrsv_csr()
        comp.wavefront("i", method=method)
        out[method] = comp.compile(cache_dir=cache)
    return out


def _solve(
    ctx: Context,
    sec: Section,
    kernels: dict[str, Any],
    mkl: Any,
    lower: Any,
    title: str,
    teams: Teams,
    hand: bool = False,
) -> tuple[dict[tuple[str, int], float], Any]:
    """Time every variant on ``lower`` (interleaved), print the table, its thread column as
    the wavefront kernels ran (``teams``); (medians in ms keyed by (code, threads), the default
    plan)."""
    lower.sort_indices()
    args = spf.sparse.sptrsv_args(lower)
    n = args["N"]
    f = np.random.default_rng(2).uniform(-1.0, 1.0, n)
    want = np.zeros(n)
    serial = kernels["serial"]

    def spf_call() -> None:
        serial(u=want, f=f, check=False, **args)

    spf_call()
    variants: list[Variant] = [("spf", 1, spf_call)]
    if hand:
        variants += _references(ctx, sec, lower, args, f, want)
    forced = kernels["levels"].inspect(check=False, strategy="wavefront", **args)
    by_hand, sec.data["hand_levels_command"] = hand_levels(ctx, forced, args, f, want)
    variants += by_hand
    auto = kernels["auto"].inspect(check=False, threads=max(ctx.threads), **args)
    for method in ("levels", "p2p"):
        for t in ctx.threads:
            call = _checked(kernels[method], forced, args, f, want)
            variants.append(teams.watch(f"spf wavefront {method}", t, call, kernels[method]))
    variants += _forced(ctx, kernels["auto"], args, f, want, teams)
    call = _checked(kernels["auto"], auto, args, f, want)
    variants.append(teams.watch("spf wavefront auto", max(ctx.threads), call, kernels["auto"]))

    def inspect() -> None:
        kernels["levels"].inspect(check=False, **args)

    def inspect_coarse() -> None:
        kernels["auto"].inspect(check=False, threads=max(ctx.threads), **args)

    variants.append(("spf inspector", 1, inspect))
    variants += [("spf coarse inspector", t, inspect_coarse) for t in ctx.threads]
    if mkl is not None:
        for t in ctx.threads:
            ctx.rt.set_threads(t)
            handle, u = MklTrsv(mkl, args), np.zeros(n)
            handle.solve(f, u)
            if not np.allclose(u, want, rtol=1e-10, atol=1e-10):
                raise SystemExit("sptrsv: MKL's trsv gives a wrong u")
            variants.append(("MKL IE trsv", t, _mkl_call(handle, f, u)))
    ctx.log(f"sptrsv: {title}: N = {n:,}")
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    if hand:
        _serial_cpu(ctx, sec, [v for v in variants if v[0] in ("spf", "hand C")])
    ms = {(code, t): 1e3 * median(times[code, t]) for code, t, _ in variants}
    largest = int(auto.level_sizes.max()) if auto.levels else 0
    sec.line(
        f"### Forward solve, {title}: N = {n:,}, nnz = {args['NNZ']:,}, {auto.levels:,} levels "
        f"(mean {n / max(auto.levels, 1):,.0f} rows, largest {largest:,}; "
        f"{forced.groups:,} executor groups; {auto.coarse_levels:,} coarse levels, "
        f"{auto.parts:,} parts); default plan strategy {auto.strategy!r}\n\n"
        f"{load_note(load)}\n"
    )  # fmt: skip
    base = ms["spf", 1]
    rows = [[c if c != "spf wavefront auto" else f"{c} ({auto.strategy})", teams.label(c, t),
             f"{v:.3f}", f"{base / v:.2f}x"] for (c, t), v in ms.items()]  # fmt: skip
    sec.table(["code", "threads (as run)", "median ms", "speed-up over serial spf"], rows)
    return ms, auto


def _forced(
    ctx: Context, kernel: Any, args: dict[str, Any], f: Any, want: Any, teams: Teams
) -> list[Variant]:
    """The ``auto`` kernel's coarse and levels plans, each forced, at each thread count."""
    out: list[Variant] = []
    for strategy, code in (("coarse", "spf wavefront coarse"), ("levels", LEVELS_FORCED)):
        for t in ctx.threads:
            plan = kernel.inspect(check=False, strategy=strategy, threads=t, **args)
            out.append(teams.watch(code, t, _checked(kernel, plan, args, f, want), kernel))
    return out


def _serial_cpu(ctx: Context, sec: Section, pair: list[Variant]) -> None:
    """Serial spf and the serial hand C timed again, interleaved, on the calling thread's
    CPU time (``sec.data["serial_cpu_ms"]``, medians in ms): both run on one thread, and on
    the shared 2-core host their wall times also count the time other processes hold
    that core (docs/inspection.md quotes the runs that compared the two clocks)."""
    times, load = measure(ctx, pair, ctx.cfg.trsv_rounds, warmup=1, clock=time.thread_time)
    sec.data["serial_cpu_ms"] = {code: 1e3 * median(times[code, t]) for code, t, _ in pair}
    sec.data["serial_cpu_load"] = load


def _mkl_call(handle: MklTrsv, f: np.ndarray, u: np.ndarray) -> Any:
    def call() -> None:
        handle.solve(f, u)

    return call


def _checked(kernel: Any, plan: Any, args: dict[str, Any], f: Any, want: Any) -> Any:
    """A call of ``kernel`` with ``plan``, after checking it once bitwise against ``want``."""
    u = np.zeros(len(f))

    def call() -> None:
        kernel(u=u, f=f, plan=plan, check=False, **args)

    call()
    if not np.array_equal(u, want):
        raise SystemExit(f"sptrsv: the wavefront solve ({plan.strategy}) differs from serial spf")
    return call


def _references(
    ctx: Context, sec: Section, lower: Any, args: dict[str, Any], f: Any, want: Any
) -> list[Variant]:
    """Hand C and scipy, checked against ``want``."""
    ffi, hand, command = load_c(HAND_C, HAND_CDEF, "bench_hand_sptrsv", str(ctx.work))
    sec.data["hand_command"] = command
    u = np.zeros(len(f))
    fb = ffi.from_buffer
    hb = (fb("int32_t[]", args["rowptr"]), fb("int32_t[]", args["col"]), fb("double[]", args["L"]),
          fb("double[]", f), fb("double[]", u))  # fmt: skip
    out: dict[str, Any] = {}

    def hand_call() -> None:
        hand.hand_sptrsv(args["N"], *hb)

    def scipy_call() -> None:
        out["scipy"] = spla.spsolve_triangular(lower, f, lower=True)

    hand_call()
    scipy_call()
    for name, got in (("hand C", u), ("scipy", out["scipy"])):
        if not np.allclose(got, want, rtol=1e-10, atol=1e-10):
            raise SystemExit(f"sptrsv: {name} gives a wrong u")
    return [("hand C", 1, hand_call), ("scipy spsolve_triangular", 1, scipy_call)]
