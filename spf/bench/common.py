"""Shared machinery of the benchmarks: configuration, thread control, interleaved timing.

Every timed comparison calls each variant (code x thread count) once per round, in an order
reshuffled (seeded) every round, and reports medians over the rounds: a fixed order would give
every variant the same predecessor (a 2-thread call right after a 1-thread one first wakes the
sleeping OpenMP worker). Before a timed phase the harness waits, up to ``max_wait_s``, for the
CPUs to be idle, and redoes a phase that other processes disturbed, keeping the least disturbed
attempt; each table says how busy the machine was while it was measured.

Thread counts are switched in-process: ``omp_set_num_threads`` through a small C helper
(libgomp is one shared object in the process, so it applies to spf's kernels too), OpenBLAS's
``openblas_set_num_threads`` and MKL's ``MKL_Set_Num_Threads`` when those are loaded.
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cffi

from spf.runtime.build import build
from spf.runtime.threads import openmp_library

Variant = tuple[str, int, Callable[[], object]]  # (code, threads, one call)
Times = dict[tuple[str, int], list[float]]

QUIET = 0.05  # a phase is quiet when other processes and steal take at most 5% of the CPUs


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes and repeat counts (``FULL`` for ``make bench``, ``QUICK`` for smoke runs)."""

    quick: bool
    poisson_grid: int  # the Poisson matrix has grid**2 rows
    random_rows: int
    random_nnz: int
    spmv_rounds: int
    gemm_sizes: tuple[int, ...]
    gemm_rounds: int
    blur_shape: tuple[int, int]
    blur_rounds: int
    trsv_grid: int
    trsv_rounds: int
    triad_n: int
    triad_rounds: int
    compile_runs: int  # fresh-interpreter compile probes (cold and warm each)
    codegen_sizes: tuple[int, ...]
    max_wait_s: float  # longest wait for a quiet machine before a timed phase
    attempts: int  # timed phases disturbed by other processes are redone up to this often
    warmup: int = 2


FULL = Config(
    quick=False,
    poisson_grid=1000,
    random_rows=200_000,
    random_nnz=2_000_000,
    spmv_rounds=100,
    gemm_sizes=(1024, 2048),
    gemm_rounds=7,
    blur_shape=(2112, 3520),
    blur_rounds=60,
    trsv_grid=1000,
    trsv_rounds=25,
    triad_n=20_000_000,
    triad_rounds=30,
    compile_runs=3,
    codegen_sizes=(10, 30, 100),
    max_wait_s=10.0,
    attempts=2,
)
QUICK = Config(
    quick=True,
    poisson_grid=120,
    random_rows=10_000,
    random_nnz=100_000,
    spmv_rounds=5,
    gemm_sizes=(256,),
    gemm_rounds=3,
    blur_shape=(160, 600),
    blur_rounds=5,
    trsv_grid=100,
    trsv_rounds=3,
    triad_n=1_000_000,
    triad_rounds=4,
    compile_runs=1,
    codegen_sizes=(3, 10),
    max_wait_s=0.0,
    attempts=1,
    warmup=1,
)


HELPER_C = r"""
#include <stdint.h>
#include <omp.h>

/* STREAM triad. */
void stream_triad(int64_t n, double *restrict a, const double *restrict b,
                  const double *restrict c, double s)
{
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++)
    a[i] = b[i] + s * c[i];
}

void set_threads(int n) { omp_set_num_threads(n); }

/* Size of the team a parallel region gets now. */
int team_size(void)
{
  int t = 0;
  #pragma omp parallel
  {
    #pragma omp single
    t = omp_get_num_threads();
  }
  return t;
}
"""

HELPER_CDEF = """
void stream_triad(int64_t n, double *a, const double *b, const double *c, double s);
void set_threads(int n);
int team_size(void);
"""


def load_c(source: str, cdef: str, name: str, cache_dir: str) -> tuple[cffi.FFI, Any, str]:
    """Build ``source`` with spf's own build (same flags as generated kernels) and load it."""
    openmp_library()  # libgomp starts with the wait policy spf's kernels get
    built = build(source, name=name, openmp=True, cflags=None, cache_dir=cache_dir)
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    # RTLD_NODELETE keeps the library, hence libgomp, mapped until the process ends:
    # unloading libgomp while its idle workers still spin in it crashes at exit.
    lib = ffi.dlopen(str(built.path), ffi.RTLD_NOW | ffi.RTLD_NODELETE)
    return ffi, lib, built.command


def openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """numpy's OpenBLAS thread count: ``(get, set)`` through ctypes, or None where numpy's
    OpenBLAS (and its ``*openblas_get/set_num_threads*``) cannot be found."""
    import numpy as np

    base = Path(np.__file__).resolve().parent
    for path in sorted(glob.glob(str(base.parent / "numpy.libs" / "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"),
                               ("scipy_openblas", ""), ("openblas", "")):  # fmt: skip
            getter = f"{prefix}_get_num_threads{suffix}"
            setter = f"{prefix}_set_num_threads{suffix}"
            if hasattr(lib, setter) and hasattr(lib, getter):
                get = getattr(lib, getter)
                get.restype, get.argtypes = ctypes.c_int, []
                put = getattr(lib, setter)
                put.restype, put.argtypes = None, [ctypes.c_int]
                return get, put
    return None


class Runtime:
    """The helper C library (triad, thread control), shared by every benchmark in a run."""

    def __init__(self, cache_dir: str) -> None:
        self.ffi, self.lib, self.command = load_c(HELPER_C, HELPER_CDEF, "bench_helper", cache_dir)
        self.setters: list[Callable[[int], object]] = [self.lib.set_threads]
        blas = openblas_threads()
        if blas is not None:
            self.setters.append(blas[1])

    def set_threads(self, n: int) -> None:
        for setter in self.setters:
            setter(n)

    def check_threads(self, n: int) -> None:
        """``omp_set_num_threads(n)`` gives parallel regions ``n`` threads."""
        self.set_threads(n)
        got = int(self.lib.team_size())
        if got != n:
            raise SystemExit(f"asked for {n} OpenMP threads, a parallel region got {got}")

    def triad(self, a: Any, b: Any, c: Any, s: float) -> None:
        fb = self.ffi.from_buffer
        self.lib.stream_triad(a.size, fb("double[]", a), fb("double[]", b), fb("double[]", c), s)


# ------------------------------------------------------------------------------- CPU load
def _stat() -> list[int] | None:
    try:
        with open("/proc/stat") as f:
            return [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None


class CpuLoad:
    """CPU use by other processes (and hypervisor steal) while timing, from ``/proc/stat``."""

    def __init__(self) -> None:
        self.start = self._sample()

    @staticmethod
    def _sample() -> tuple[float, float, float, float] | None:
        ticks = _stat()
        if ticks is None:
            return None
        hz = float(os.sysconf("SC_CLK_TCK"))
        user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        busy = (user + nice + system + irq + softirq) / hz
        return busy, steal / hz, own, time.monotonic()

    def stop(self) -> dict[str, float] | None:
        """Fractions of all CPUs' time since construction: other processes, and steal."""
        end = self._sample()
        if self.start is None or end is None:
            return None
        cpu_s = max((end[3] - self.start[3]) * (os.cpu_count() or 1), 1e-9)
        other = (end[0] - self.start[0]) - (end[2] - self.start[2])
        return {
            "other_processes": max(other, 0.0) / cpu_s,
            "steal": (end[1] - self.start[1]) / cpu_s,
        }


def busy_fraction(seconds: float) -> float | None:
    """Fraction of all CPUs' time that was busy (anything but idle) over ``seconds``."""
    first = _stat()
    time.sleep(seconds)
    last = _stat()
    if first is None or last is None:
        return None
    b0, b1 = sum(first) - first[3] - first[4], sum(last) - last[3] - last[4]
    return (b1 - b0) / max(sum(last) - sum(first), 1)


def wait_quiet(max_wait_s: float) -> float:
    """Wait until the CPUs are idle (< 3% busy) for three half-second samples; seconds waited."""
    t0, quiet = time.monotonic(), 0
    while quiet < 3 and time.monotonic() - t0 < max_wait_s:
        busy = busy_fraction(0.5)
        if busy is None:
            break
        quiet = quiet + 1 if busy < 0.03 else 0
    return time.monotonic() - t0


def disturbed(load: dict[str, float] | None) -> float:
    return 0.0 if load is None else load["other_processes"] + load["steal"]


def load_note(info: dict[str, Any]) -> str:
    load = info.get("load")
    if load is None:
        return "(CPU load not measurable here)"
    text = (
        f"while timing, other processes used {100 * load['other_processes']:.0f}% of the "
        f"CPUs' time, steal {100 * load['steal']:.0f}% (attempts: {info['attempts']}, "
        f"waited {info['waited_s']:.0f} s for a quiet machine)"
    )
    if disturbed(load) > QUIET:
        text += " -- the machine was not quiet: multi-threaded timings are suspect"
    return text


# -------------------------------------------------------------------------------- timing
def rotation(
    variants: list[Variant],
    rt: Runtime,
    rounds: int,
    warmup: int,
    clock: Callable[[], float] = time.perf_counter,
) -> Times:
    """Seconds per call of each variant: every round calls each once, in a shuffled order.
    ``clock``: wall time, or ``time.thread_time`` for the calling thread's CPU time (for
    one-thread code on a shared machine: time other processes take is not counted). A
    variant's function with a ``timed`` attribute is timed by that alone, its ``after``
    (bookkeeping: :meth:`spf.bench.teams.Teams.watch`) run once the clock stopped."""
    times: Times = {(c, t): [] for c, t, _ in variants}
    rng = random.Random(0)
    for r in range(warmup + rounds):
        for code, threads, fn in rng.sample(variants, len(variants)):
            rt.set_threads(threads)
            run = getattr(fn, "timed", fn)
            t0 = clock()
            run()
            dt = clock() - t0
            after = getattr(fn, "after", None)
            if after is not None:
                after()
            if r >= warmup:
                times[code, threads].append(dt)
    return times


@dataclasses.dataclass
class Context:
    """What every benchmark gets: configuration, runtime, thread counts, a work directory."""

    cfg: Config
    rt: Runtime
    threads: list[int]
    work: Path
    log: Callable[[str], None]


def measure(
    ctx: Context,
    variants: list[Variant],
    rounds: int,
    warmup: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Times, dict[str, Any]]:
    """:func:`rotation` after waiting for a quiet machine, redone when others disturbed it."""
    cfg = ctx.cfg
    best: tuple[Times, dict[str, float] | None] | None = None
    waited, tries = 0.0, 0
    for _ in range(max(cfg.attempts, 1)):
        tries += 1
        waited += wait_quiet(cfg.max_wait_s)
        load = CpuLoad()
        got = (rotation(variants, ctx.rt, rounds, cfg.warmup if warmup is None else warmup,
                        clock), load.stop())  # fmt: skip
        if best is None or disturbed(got[1]) < disturbed(best[1]):
            best = got
        if disturbed(best[1]) <= QUIET:
            break
    assert best is not None
    return best[0], {"load": best[1], "attempts": tries, "waited_s": waited}


def measure_groups(
    ctx: Context, groups: list[list[Variant]], rounds: int, warmup: int | None = None
) -> tuple[Times, dict[str, Any]]:
    """:func:`measure` for each group in turn (one group per thread pool).

    Libraries with their own worker pools (OpenBLAS's pthreads, Halide's, libgomp's) leave
    their workers spinning for a while after a parallel call; interleaved with another
    pool's 2-thread call on 2 cores, the spinning workers steal the core the other one
    needs. So variants that use different pools are timed in separate phases; within a phase
    the order is shuffled as usual. The load reported is the worst phase's.
    """
    times: Times = {}
    worst: dict[str, Any] | None = None
    for group in groups:
        if not group:
            continue
        got, info = measure(ctx, group, rounds, warmup)
        times.update(got)
        if worst is None or disturbed(info["load"]) > disturbed(worst["load"]):
            worst = info
    return times, worst or {"load": None, "attempts": 0, "waited_s": 0.0}


def median(ts: list[float]) -> float:
    return statistics.median(ts) if ts else float("nan")


# ------------------------------------------------------------------------------ printing
@dataclasses.dataclass
class Section:
    """One benchmark's output: markdown, target verdicts, and data for the JSON file."""

    name: str
    markdown: list[str] = dataclasses.field(default_factory=list)
    targets: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def line(self, text: str = "") -> None:
        self.markdown.append(text)

    def table(self, header: list[str], rows: list[list[str]], align: str | None = None) -> None:
        """A markdown table; ``align`` is one character per column, ``l`` or ``r``."""
        spec = align or "l" + "r" * (len(header) - 1)
        self.markdown.append("| " + " | ".join(header) + " |")
        self.markdown.append("|" + "|".join("---" if a == "l" else "---:" for a in spec) + "|")
        for row in rows:
            self.markdown.append("| " + " | ".join(row) + " |")
        self.markdown.append("")

    def target(self, what: str, measured: str, met: bool, note: str = "") -> None:
        self.targets.append({"target": what, "measured": measured, "met": met, "note": note})


def progress(text: str) -> None:
    print(f"[spf bench] {text}", file=sys.stderr, flush=True)
