"""Parallel SpMV while another process keeps one core busy: fixed vs adaptive thread counts.

A busy loop (a child Python process pinned on the last CPU this process may use) holds one
core while ``spf.kernels.spmv_csr()`` with ``parallelize("i")`` on a 2-D Poisson matrix (a
300x300 grid, a call of a fraction of a millisecond, and the spmv benchmark's grid) is timed
at 1 and 2 OpenMP threads, twice, interleaved:

* ``fixed`` (before): every call gets the threads asked for (``set_adaptive(False)``); the
  thread that lands on the busy core holds the region's closing barrier until the scheduler
  gives it a time slice;
* ``adaptive`` (after, spf's default): a call gets no more threads than cores are free
  (:mod:`spf.runtime.threads`), here 1.

The target: with one core busy, the 2-thread call takes at most 2x the 1-thread call.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, median, rotation
from spf.runtime import threads

if TYPE_CHECKING:
    from spf.computation.products import CompiledKernel

BUSY_LOOP = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


def start_busy_loop(cpu: int) -> subprocess.Popen[bytes]:
    """A child process spinning on ``cpu`` until it is killed."""
    return subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(cpu)])


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()


def _load_line() -> str:
    ncpu = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    return f"1-minute load average {load:.2f} on {ncpu} CPUs ({load / ncpu:.2f} per CPU)"


def run(ctx: Context) -> Section:
    sec = Section("busy")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2 or max(ctx.threads) < 2:
        sec.line("### SpMV with one core busy\n\nneeds 2 CPUs and 2 threads; skipped\n")
        return sec
    comp = spf.kernels.spmv_csr()
    comp.stmt(0).parallelize("i")
    kernel = comp.compile(cache_dir=str(ctx.work / "kernels"))
    # A short call (a fraction of a millisecond: shorter than a scheduler time slice, where a
    # thread waiting for the busy core costs most) and the spmv benchmark's size.
    for g in sorted({min(ctx.cfg.poisson_grid, 300), ctx.cfg.poisson_grid}):
        _one_size(ctx, sec, kernel, g, cpus[-1])
    return sec


def _one_size(ctx: Context, sec: Section, kernel: CompiledKernel, g: int, cpu: int) -> None:
    top = max(ctx.threads)
    args = spf.sparse.csr_args(spf.sparse.poisson2d(g))
    x = np.random.default_rng(1).uniform(-1.0, 1.0, args["M"])
    y = np.zeros(args["N"])

    def call(adaptive: bool) -> None:
        threads.set_adaptive(adaptive)
        kernel(y=y, x=x, check=False, **args)

    variants: list[Variant] = []
    for mode, adaptive in (("fixed (before)", False), ("adaptive (after)", True)):
        for t in (1, top):
            variants.append((mode, t, functools.partial(call, adaptive)))
    busy = start_busy_loop(cpu)
    previous = threads.GOVERNOR.enabled
    try:
        time.sleep(0.5)  # let the busy loop start, and the free-core measurement see it
        ctx.log(f"busy: SpMV N = {args['N']:,} with a busy loop on CPU {cpu}")
        times = rotation(variants, ctx.rt, ctx.cfg.spmv_rounds, ctx.cfg.warmup)
        free = threads.free_cores()
        load = _load_line()
    finally:
        stop(busy)
        threads.set_adaptive(previous)
    ms = {(m, t): 1e3 * median(times[m, t]) for m, t, _ in variants}
    sec.line(
        f"### SpMV with one core busy: 2-D Poisson {g}x{g}, N = {args['N']:,}, "
        f"nnz = {args['NNZ']:,}\n\nA busy loop pinned on CPU {cpu}; {load}; spf measured "
        f"{free:.2f} free cores.\n"
    )
    rows, data = [], {}
    for mode in ("fixed (before)", "adaptive (after)"):
        one, many = ms[mode, 1], ms[mode, top]
        rows.append([mode, f"{one:.3f}", f"{many:.3f}", f"{many / one:.2f}"])
        data[mode] = {"ms_1_thread": one, f"ms_{top}_threads": many, "ratio": many / one}
    sec.table(
        ["thread count", "1 thread (median ms)", f"{top} threads (median ms)", f"{top}T / 1T"],
        rows,
    )
    after = data["adaptive (after)"]["ratio"]
    before = data["fixed (before)"]["ratio"]
    sec.target(
        f"SpMV N = {args['N']:,}, one core busy: {top} threads <= 2x 1 thread",
        f"{after:.2f}x (fixed threads: {before:.2f}x)",
        after <= 2.0,
    )
    extra: dict[str, Any] = {"free_cores": free, "load": load, "busy_cpu": cpu}
    sec.data[f"poisson{g}"] = {"median_ms": data, **extra}
