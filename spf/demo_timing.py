"""The demo's timing table: like with like, the threads of each side in the table, and what a
busy machine did to each column.

* A row compares spf with a library at stated thread counts: against scipy, which runs on one
  thread, spf is timed at 1 thread and at OpenMP's count (two rows); against numpy's OpenBLAS,
  OpenBLAS is set to OpenMP's count for the row (:func:`blas_threads`).
* spf's threads are what its kernel ran on (``kernel.last_threads`` of every timed call): spf
  lowers OpenMP's count per call to the cores other processes leave free
  (:mod:`spf.runtime.threads`), so on a busy machine they may be fewer than it was allowed;
  the notes under the table say so, row by row, and what the load did to the other columns.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from spf.runtime import threads

BUSY_LOAD = 0.5
"""Load average per CPU above which the machine counts as busy in the timing table."""


class _Kernel(Protocol):
    @property
    def last_threads(self) -> int | None: ...


@dataclass(frozen=True)
class Timing:
    """One row: ``kernel`` (spf's) against ``other``, ms per call of each (medians), the threads
    each of spf's timed calls ran on, the most it was allowed, and the other's threads."""

    kernel: str
    other: str
    spf_ms: float
    other_ms: float
    spf_threads: tuple[int, ...]
    allowed: int
    other_threads: int | None
    """None: the library's own default, which could not be read."""

    def spf_cell(self) -> str:
        lo, hi = min(self.spf_threads, default=0), max(self.spf_threads, default=0)
        ran = str(lo) if lo == hi else f"{lo}-{hi}"
        return ran if lo == hi == self.allowed else f"{ran} of {self.allowed}"

    def other_cell(self) -> str:
        return "default" if self.other_threads is None else str(self.other_threads)

    def fewer(self) -> int:
        """How many timed calls of spf ran on fewer threads than allowed."""
        return sum(t < self.allowed for t in self.spf_threads)


def recording(kernel: _Kernel, call: Callable[[], object]) -> tuple[Callable[[], None], list[int]]:
    """``call`` (one call of ``kernel``) that also records the kernel's ``last_threads``."""
    seen: list[int] = []

    def run() -> None:
        call()
        seen.append(kernel.last_threads or 1)

    return run, seen


def median_ms(fns: dict[str, Callable[[], object]], repeat: int = 15) -> dict[str, float]:
    """Interleaved repeats (the machine is shared and noisy), median per function."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()  # warm up
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {k: 1e3 * statistics.median(v) for k, v in times.items()}


def against_one_thread(
    kernel: _Kernel,
    name: str,
    other: str,
    ours: Callable[[], object],
    theirs: Callable[[], object],
    *,
    parallel: bool = True,
    repeat: int = 15,
) -> list[Timing]:
    """spf against a single-threaded library (scipy): spf at 1 thread and, for a kernel with
    a parallel loop, at OpenMP's count; each row timed interleaved with the library."""
    team = threads.default_team() if parallel else 1
    counts = [1, team] if team > 1 else [1]
    rows = []
    for n in counts:
        run, seen = recording(kernel, ours)
        with threads.openmp_threads(n):
            ms = median_ms({"spf": run, "other": theirs}, repeat=repeat)
        rows.append(Timing(name, other, ms["spf"], ms["other"], tuple(seen[1:]), n, 1))
    return rows


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[int | None]:
    """numpy's OpenBLAS set to ``n`` threads inside the block (restored after); yields ``n``,
    or None where OpenBLAS's thread count cannot be set (it then keeps its default)."""
    from spf.bench.common import openblas_threads

    handle = openblas_threads()
    if handle is None:
        yield None
        return
    get, put = handle
    previous = get()
    put(n)
    try:
        yield n
    finally:
        put(previous)


def _load() -> tuple[int, float | None]:
    """The CPUs this process may use, and the 1-minute load average (None: not available)."""
    ncpu = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        return ncpu or 1, os.getloadavg()[0]
    except OSError:
        return ncpu or 1, None


def busy() -> bool:
    """Whether the 1-minute load average per CPU is above :data:`BUSY_LOAD`."""
    ncpu, load = _load()
    return load is not None and load / ncpu > BUSY_LOAD


def machine_note() -> str:
    """How busy the machine was: the 1-minute load average over the CPUs this process may use,
    the cores spf measured free, and OpenMP's thread count."""
    ncpu, load = _load()
    team = f"OpenMP's thread count {threads.default_team()}"
    if load is None:
        return f"machine: {ncpu} CPUs (load average not available here); {team}"
    per_cpu = load / ncpu
    verdict = (
        "BUSY: other processes compete for the cores, so these timings are noisy"
        if busy()
        else "quiet"
    )
    return (
        f"machine: 1-minute load average {load:.2f} on {ncpu} CPUs = {per_cpu:.2f} per CPU "
        f"({verdict}); spf measured {threads.free_cores():.1f} free cores; {team} "
        f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})"
    )


def column_notes(rows: list[Timing], is_busy: bool) -> list[str]:
    """What each column ran on, and on a busy machine what the load did to it."""
    notes = []
    for row in rows:
        if row.fewer():
            lo = min(row.spf_threads)
            text = (
                f"{row.kernel}: spf ran on {lo} of {row.allowed} threads in {row.fewer()} of "
                f"{len(row.spf_threads)} timed calls (adaptive: spf gives a call no more "
                "threads than cores are free)"
            )
            if row.other_threads is None or row.other_threads > lo:
                text += f"; {row.other} ran on {row.other_cell()} threads"
            notes.append(text)
    if is_busy and not notes:
        notes.append("spf ran every timed call on all the threads it was allowed")
    single = sorted({r.other for r in rows if r.other_threads == 1})
    if single:
        effect = "they share the cores with other processes, so their times include waiting"
        notes.append(
            f"single-threaded (1 thread): {', '.join(single)}"
            + (f"; on this busy machine {effect}" if is_busy else "")
        )
    for row in rows:
        if row.other_threads == 1:
            continue
        count = (
            "its own default thread count (it could not be set here)"
            if row.other_threads is None
            else f"set to {row.other_threads} threads, the count spf was allowed"
        )
        effect = "does not adapt: its threads wait for the cores other processes hold"
        notes.append(
            f"{row.other}: {count}" + (f"; on this busy machine it {effect}" if is_busy else "")
        )
    return notes


def print_timings(rows: list[Timing]) -> None:
    """The demo's timing table: units and threads of each column, the machine's load, and
    what that load did to each column."""
    print("Timings: median wall-clock time per call over interleaved repeats.")
    print(machine_note() + "\n")
    print(
        "| kernel | compared with | spf threads | spf (ms per call) | other threads "
        "| other (ms per call) | spf speed-up (other ms / spf ms) |\n"
        "|---|---|---:|---:|---:|---:|---:|"
    )
    for r in rows:
        print(
            f"| {r.kernel} | {r.other} | {r.spf_cell()} | {r.spf_ms:.3f} | {r.other_cell()} "
            f"| {r.other_ms:.3f} | {r.other_ms / r.spf_ms:.2f}x |"
        )
    print()
    for note in column_notes(rows, busy()):
        print(f"- {note}")
    print()
