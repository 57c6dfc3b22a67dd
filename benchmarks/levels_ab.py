"""The generated levels executor against the hand-written level solve (issue 31), in one process.

On the 12-level random lower triangle of ``spf bench --only sptrsv`` (1M rows; ``--rows``):

* ``--part levels`` (default): C copies of the executor of copies on the ``auto`` kernel's
  levels plan (its arrays and copies), each thread's CPU time per level
  (``CLOCK_THREAD_CPUTIME_ID``), the busier thread's time summed over the levels (what two
  threads on two free cores take between barriers: robust to other processes' load), for
  the plan's parts (``schedule(static, 1)``) and for halves of each level
  (``schedule(static)``, the hand code's), each with and without the compare per entry
  (``col == i ? row : u(col)``) that the executor printed before ``spf.kernels.DIAGONAL_LAST``;
* ``--part calls``: wall clock of whole calls, interleaved, at 2 threads (the serial kernel
  at 1): serial and ``auto`` levels plan with the kernel's facts before (``col(k) <= i``
  alone) and now, the executor of copies called without the values' hash, the hand C
  levels; rounds during which other processes used the CPUs are reported apart.

``PYTHONPATH=<tree> python benchmarks/levels_ab.py [--part levels|calls] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import spf.sparse
from spf import kernels
from spf.bench.common import Runtime, load_c
from spf.bench.sptrsv_hand import hand_levels
from spf.runtime import plan as planmod
from spf.runtime import threads
from spf.runtime.kernel import Kernel

sp: Any = importlib.import_module("scipy.sparse")

LEVEL_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <time.h>
#include <omp.h>
static double tcpu(void)
{ struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
#define ROW(o, r0, r1) { double row = f[o]; \
  for (int64_t k = r0; k < r1 - 1; k++) { const int64_t c = pcol[k]; row -= pval[k] * ENTRY_READ; } \
  u[o] = row / pval[r1 - 1]; }
void parts(int64_t nlev, int64_t nparts, const int32_t *restrict lp, const int32_t *restrict order,
           const int32_t *restrict pp, const int32_t *restrict prow, const int32_t *restrict pcol,
           const double *restrict pval, const double *restrict f, double *restrict u, double *acc)
{
  #pragma omp parallel
  {
    const int tid = omp_get_thread_num();
    for (int64_t lv = 0; lv < nlev; lv++) {
      const double t0 = tcpu();
      #pragma omp for schedule(static, 1) nowait
      for (int64_t q = lp[lv]; q < (lp[lv + 1] < nparts ? lp[lv + 1] : nparts); q++)
        for (int64_t p = pp[q]; p < pp[q + 1]; p++) { const int64_t o = order[p]; ROW(o, prow[p], prow[p + 1]) }
      acc[tid * nlev + lv] += tcpu() - t0;
      #pragma omp barrier
    }
  }
}
void halves(int64_t nlev, const int32_t *restrict lp, const int32_t *restrict order,
            const int32_t *restrict prow, const int32_t *restrict pcol, const double *restrict pval,
            const double *restrict f, double *restrict u, double *acc)
{
  #pragma omp parallel
  {
    const int tid = omp_get_thread_num();
    for (int64_t lv = 0; lv < nlev; lv++) {
      const double t0 = tcpu();
      #pragma omp for schedule(static) nowait
      for (int64_t p = lp[lv]; p < lp[lv + 1]; p++) { const int64_t o = order[p]; ROW(o, prow[p], prow[p + 1]) }
      acc[tid * nlev + lv] += tcpu() - t0;
      #pragma omp barrier
    }
  }
}
"""
LEVEL_CDEF = """
void parts(int64_t, int64_t, const int32_t *, const int32_t *, const int32_t *, const int32_t *,
           const int32_t *, const double *, const double *, double *, double *);
void halves(int64_t, const int32_t *, const int32_t *, const int32_t *, const int32_t *,
            const double *, const double *, double *, double *);
"""
READS = {"compare": "(__builtin_expect(c == o, 0) ? row : u[c])", "plain": "u[c]"}


def triangle(n: int) -> Any:
    """The bench's generated 12-level lower triangle (``spf.bench.sptrsv``)."""
    rng = np.random.default_rng(4)
    strict = sp.tril(sp.random_array((n, n), density=2.0 / n, format="csr", rng=rng), k=-1)
    m = sp.csr_array(strict + sp.eye_array(n, format="csr") * 4.0)
    m.sort_indices()
    return m


def solve(before: bool, cache: str, method: str | None = None) -> Any:
    """``sptrsv_csr`` compiled, with its facts of before (``col(k) <= i`` alone) or now."""
    if before:
        comp = kernels.sptrsv_csr(triangular=False)
        comp.assume(kernels.TRIANGULAR)
    else:
        comp = kernels.sptrsv_csr()
    if method is not None:
        comp.wavefront("i", method=method)
    return comp.compile(cache_dir=cache)


def others_busy() -> float:
    """CPU seconds the machine spent busy since boot (all processes)."""
    with open("/proc/stat") as fh:
        v = [int(x) for x in fh.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def levels_part(
    args: dict[str, Any], f: np.ndarray, want: np.ndarray, rounds: int, work: str
) -> None:
    rt = Runtime(work)
    rt.set_threads(2)
    auto = solve(False, work, "auto")
    plan = auto.inspect(check=False, strategy="levels", threads=2, copies=True, **args)
    auto(u=np.zeros(len(f)), f=f, plan=plan, check=False, **args)  # builds the copies
    made = planmod._COPIES[plan]
    arrays, values = made.arrays, made.refresh(args)
    levelptr = np.asarray(plan.levelptr).astype(np.int32)
    nlev = len(levelptr) - 1
    u = np.zeros(len(f))
    variants: list[tuple[str, np.ndarray, Callable[[], None]]] = []
    for tag, read in READS.items():
        ffi, lib, _ = load_c(
            LEVEL_C.replace("ENTRY_READ", read), LEVEL_CDEF, f"levels_ab_{tag}", work
        )
        fb = ffi.from_buffer
        rows = (fb("int32_t[]", arrays["order_i"]), fb("int32_t[]", arrays["rowptr_part"]),
                fb("int32_t[]", arrays["col_part"]), fb("double[]", values["L_part"]),
                fb("double[]", f), fb("double[]", u))  # fmt: skip
        lp, pp = fb("int32_t[]", arrays["levelptr_i"]), fb("int32_t[]", arrays["partptr_i"])
        lv = fb("int32_t[]", levelptr)
        a1, a2 = np.zeros(2 * nlev), np.zeros(2 * nlev)
        b1, b2 = fb("double[]", a1), fb("double[]", a2)

        def by_parts(
            lib: Any = lib, rows: Any = rows, lp: Any = lp, pp: Any = pp, b: Any = b1
        ) -> None:
            lib.parts(plan.coarse_levels, plan.parts, lp, rows[0], pp, *rows[1:], b)

        def by_halves(lib: Any = lib, rows: Any = rows, lv: Any = lv, b: Any = b2) -> None:
            lib.halves(nlev, lv, *rows, b)

        variants += [(f"parts, {tag}", a1, by_parts), (f"halves, {tag}", a2, by_halves)]
    for name, _, fn in variants:
        u[:] = 0.0
        fn()
        assert np.array_equal(u, want), name
    busier: dict[str, list[float]] = {v[0]: [] for v in variants}
    rng = random.Random(0)
    for r in range(rounds + 1):
        for name, acc, fn in rng.sample(variants, len(variants)):
            acc[:] = 0.0
            fn()
            if r:
                busier[name].append(float(acc.reshape(2, nlev).max(axis=0).sum()))
    hand = statistics.median(busier["halves, plain"])
    print(f"load average {os.getloadavg()}; {plan.parts} parts, {nlev} levels")
    for name, got in busier.items():
        med = statistics.median(got)
        print(f"| {name} | {1e3 * med:.3f} ms | {med / hand:.3f}x the hand loop (halves, plain) |")


def calls_part(
    args: dict[str, Any], f: np.ndarray, want: np.ndarray, rounds: int, work: str
) -> None:
    rt = Runtime(work)
    n = len(f)
    variants: list[tuple[str, int, Callable[[], None]]] = []
    plan = None
    for before in (True, False):
        tag = "before" if before else "now"
        serial, auto = solve(before, work), solve(before, work, "auto")
        us, ua = np.zeros(n), np.zeros(n)
        rt.set_threads(2)
        plan = auto.inspect(check=False, strategy="levels", threads=2, **args)

        def one(s: Any = serial, u: np.ndarray = us) -> None:
            s(u=u, f=f, check=False, **args)

        def two(k: Any = auto, p: Any = plan, u: np.ndarray = ua) -> None:
            k(u=u, f=f, plan=p, check=False, **args)

        one()
        two()
        assert np.array_equal(us, want), tag
        assert np.array_equal(ua, want), tag
        variants += [(f"serial, {tag}", 1, one), (f"auto levels plan, {tag}", 2, two)]
    assert plan is not None
    made = planmod._COPIES[plan]
    bare = auto._copy_kernels[made.narrow]  # the 'now' kernel's executor of copies
    merged = {**args, "levelptr_i": plan.coarse_ptr, "partptr_i": plan.part_ptr,
              "order_i": plan.coarse_order, "nlevels_i": plan.coarse_levels,
              "nparts_i": plan.parts, **made.arrays, **made.refresh(args),
              "u": np.zeros(n), "f": f}  # fmt: skip

    def executor() -> None:
        Kernel.__call__(bare, check=False, **merged)

    variants.append(("executor of copies, no hash", 2, executor))

    class Ctx:
        pass

    ctx: Any = Ctx()
    ctx.rt, ctx.threads, ctx.work = rt, [2], Path(work)
    by_hand, _ = hand_levels(ctx, plan, args, f, want)
    variants.append(("hand C levels", 2, by_hand[0][2]))
    times: dict[str, list[tuple[float, float]]] = {v[0]: [] for v in variants}
    rng = random.Random(0)
    for r in range(rounds + 2):
        b0, o0, got = others_busy(), own_cpu(), {}
        for name, t, fn in rng.sample(variants, len(variants)):
            rt.set_threads(t)
            t0 = time.perf_counter()
            fn()
            got[name] = time.perf_counter() - t0
        other = (others_busy() - b0) - (own_cpu() - o0)
        if r >= 2:
            for name, dt in got.items():
                times[name].append((dt, other))
    print(f"load average {os.getloadavg()}")
    for label, keep in (("all rounds", 1e9), ("quiet rounds (others < 0.02 s CPU)", 0.02)):
        kept = {k: [d for d, o in v if o <= keep] for k, v in times.items()}
        if not kept["serial, before"]:
            print(f"{label}: none")
            continue
        base = statistics.median(kept["serial, before"])
        print(f"{label}: {len(kept['serial, before'])}")
        for name, got_ in kept.items():
            med = statistics.median(got_)
            print(f"| {name} | {1e3 * med:.3f} ms | {base / med:.2f}x serial before |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("levels", "calls"), default="levels")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=41)
    ns = ap.parse_args()
    threads.set_adaptive(False)  # the thread counts asked for, whatever the load
    m = triangle(ns.rows)
    args = spf.sparse.sptrsv_args(m)
    f = np.random.default_rng(2).uniform(-1.0, 1.0, args["N"])
    want = np.zeros(args["N"])
    with tempfile.TemporaryDirectory() as work:
        solve(False, work)(u=want, f=f, check=False, **args)
        part = levels_part if ns.part == "levels" else calls_part
        part(args, f, want, ns.rounds, work)


if __name__ == "__main__":
    main()
