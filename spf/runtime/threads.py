"""OpenMP kernels on a busy machine: as many threads as cores are free (docs/backends/c.md).

A parallel region ends at a barrier that waits for every thread of its team. When another
process holds one of the cores, the thread that lands there runs only when the scheduler gives
it a time slice (milliseconds), so a 2-thread SpMV of a few hundred microseconds can take tens
of times its single-thread time. spf therefore runs each OpenMP kernel call with no more
threads than cores are free:

* free cores = the CPUs this process may run on (``os.sched_getaffinity``) minus the demand
  of other processes, measured at most every :data:`INTERVAL_S` seconds: the larger of the
  CPU time they used on those CPUs since the last measurement (``/proc/stat`` less this
  process's own CPU time and that of its children that ended in between: the compilers spf
  runs, :func:`_own_seconds`) and their runnable threads (``/proc/loadavg`` less this process's
  running threads, smoothed over the last few measurements; a process waiting for a core
  this process holds uses no CPU time but is runnable), the runnable threads counted only
  when the others' CPU time reached :data:`RUNNABLE_CPU` cores (:meth:`ThreadGovernor.cap`);
  where ``/proc`` is missing, the 1-minute load average (:func:`os.getloadavg`);
* when fewer cores are free than the team OpenMP would start, the call runs under
  ``omp_set_num_threads(free)`` and the previous setting is restored afterwards, so the
  user's ``OMP_NUM_THREADS`` / ``omp_set_num_threads`` remain the upper bound;
* ``SPF_ADAPTIVE_THREADS=0`` in the environment (or :func:`set_adaptive` from Python) turns
  this off: every call then gets OpenMP's own thread count;
* a kernel's ``last_threads`` is the team its last call ran with (:meth:`ThreadGovernor.enter`),
  and :func:`openmp_threads` sets OpenMP's count for a block of code (``with
  openmp_threads(1): ...``).

Idle OpenMP workers also wait passively: unless ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is
set, spf sets ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` before libgomp is loaded (libgomp
reads it once, when it starts), so a worker spins briefly and then sleeps instead of burning
a core another process could use (libgomp's own default spins 300000 times).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import cffi

from spf.errors import ArgumentError, ToolchainError

INTERVAL_S = 0.2
"""How long a measurement of the free cores is used before it is taken again."""

SPIN_COUNT = "10000"
"""``GOMP_SPINCOUNT`` spf sets when neither it nor ``OMP_WAIT_POLICY`` is set."""

RUNNABLE_CPU = 0.25
"""The cores' worth of CPU time other processes must have used over the last interval for
their runnable threads to count as demand. The runnable count is one sample taken at the
moment of the measurement, and while this process's threads hold both cores every thread
that just woke counts there, however little it then runs (a poller, a kernel thread); a
thread that really wants a core gets its fair share from the scheduler within a few
milliseconds, so over the interval (:data:`INTERVAL_S`) its CPU time shows it (a third of a
core beside this process's two threads). On an idle 2-core machine the benchmark's fused
calls on small matrices read 0.5 runnable threads (smoothed) while the others used 0.01
cores, and ran on one thread."""

ENV = "SPF_ADAPTIVE_THREADS"

_GOMP: list[ctypes.CDLL] = []
"""libgomp, opened once and never closed (ctypes does not dlclose): a kernel library may then
be unloaded (at exit, say) while OpenMP's worker threads still run in libgomp."""

_OMP: list[tuple[Callable[[], int], Callable[[int], None]]] = []
"""``omp_get_max_threads`` and ``omp_set_num_threads`` through cffi (cheaper calls than
ctypes: they run around every capped kernel call)."""


def openmp_library() -> ctypes.CDLL | None:
    """libgomp, loaded (``RTLD_GLOBAL``) on first use after setting its wait policy."""
    if _GOMP:
        return _GOMP[0]
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    # the soname first: find_library runs ldconfig or the compiler (~20 ms)
    for name in _gomp_names():
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        lib.omp_get_max_threads.restype = ctypes.c_int
        lib.omp_get_max_threads.argtypes = []
        lib.omp_set_num_threads.restype = None
        lib.omp_set_num_threads.argtypes = [ctypes.c_int]
        ffi = cffi.FFI()
        ffi.cdef("int omp_get_max_threads(void); void omp_set_num_threads(int);")
        fast = ffi.dlopen(name)
        _OMP.append((fast.omp_get_max_threads, fast.omp_set_num_threads))
        _GOMP.append(lib)
        return lib
    return None


def _gomp_names() -> Iterator[str | None]:
    yield "libgomp.so.1"
    yield ctypes.util.find_library("gomp")


def _read(path: str) -> str:
    """A small /proc file's text (raw os calls: a text-mode ``open`` costs several times more)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16).decode("ascii", "replace")
    finally:
        os.close(fd)


def _allowed_cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def _busy_seconds(cpus: list[int]) -> float | None:
    """CPU seconds spent busy (not idle or iowait) on ``cpus`` since boot, from /proc/stat."""
    wanted = {f"cpu{c}" for c in cpus}
    try:
        lines = _read("/proc/stat").splitlines()
    except OSError:
        return None
    ticks = 0
    for line in lines:
        fields = line.split()
        if fields and fields[0] in wanted:
            values = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
            ticks += sum(values) - values[3] - values[4]
    return ticks / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that ended and were
    waited for (``os.times``): the compilers spf runs for a kernel's first build.

    The interval of a measurement runs from the previous one, which may be seconds earlier:
    a compile of the kernels a program then calls (an executor is compiled on its plan's
    first call) runs in child processes, and counted as another process's CPU time a child
    that burned 0.3 s between two measurements read as 0.37 busy cores on a host where
    nothing else ran (tests/unit/runtime/test_threads.py), and 0.6 s as 0.40 cores beside
    other processes' 1.58 (the reading was their sum, 2.00) on the shared machine."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _own_running() -> frozenset[str]:
    """The ids of this process's threads that are running or runnable now."""
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return frozenset()
    out = set()
    for tid in tids:
        try:
            state = _read(f"/proc/self/task/{tid}/stat").rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "R":
            out.add(tid)
    return frozenset(out)


def _runnable_others() -> float:
    """Threads of other processes that are runnable now (they want a core whether or not they
    have one), from /proc/loadavg; elsewhere the 1-minute load average less this thread.

    This process's own running threads are read just before and just after /proc/loadavg,
    and every thread running in either read is taken as counted there: an OpenMP worker
    that was still spinning after the last parallel region when the load was read and
    asleep a moment later would otherwise count as another process's thread."""
    before = _own_running()
    try:
        running = int(_read("/proc/loadavg").split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        try:
            return max(0.0, os.getloadavg()[0] - 1.0)
        except OSError:
            return 0.0
    if running <= 1:
        return 0.0  # this thread alone
    return max(0.0, float(running - max(len(before | _own_running()), 1)))


@dataclass(frozen=True)
class Reading:
    """One measurement of the free cores (:attr:`ThreadGovernor.reading`): what it saw of
    other processes and what it decided, so that a call run on fewer threads than asked
    can say why (``spf bench`` prints it)."""

    cpu: float | None
    """Cores' worth of CPU time other processes used since the last measurement (None on
    the first one, or without /proc/stat); this process's children (its compilers) are not
    other processes."""
    runnable: float
    """Their runnable threads, smoothed over the last few measurements."""
    free: float
    cap: int
    """0: no cap; else the most threads a call gets until the next measurement."""


class ThreadGovernor:
    """The thread cap of OpenMP kernel calls, from the cores other processes leave free."""

    def __init__(self) -> None:
        self.enabled = os.environ.get(ENV, "1").strip().lower() not in ("0", "no", "off", "false")
        self.cpus = _allowed_cpus()
        self.free = float(len(self.cpus))
        """The free cores last measured."""
        self._cap = 0
        self._next = 0.0
        self._last: tuple[float, float, float] | None = None  # (wall, busy, own cpu) seconds
        self._runnable = 0.0
        self.reading: Reading | None = None
        """The last measurement (None before the first)."""
        self.forked = False
        """This process was forked from one that had loaded libgomp (and may have run
        parallel regions): libgomp's threads did not come along, so every call runs on one
        thread (more would wait for threads that do not exist)."""

    def cap(self) -> int:
        """0 when a call may use every thread OpenMP gives it, else the most it should use
        (1 in a process forked after spf loaded libgomp: :attr:`forked`)."""
        if self.forked:
            return 1
        if not self.enabled:
            return 0
        now = time.monotonic()
        if now >= self._next:
            self._measure(now)
        return self._cap

    def _measure(self, now: float) -> None:
        self._next = now + INTERVAL_S
        busy, own = _busy_seconds(self.cpus), _own_seconds()
        last, self._last = self._last, (None if busy is None else (now, busy, own))
        runnable = _runnable_others()
        self._runnable = runnable if last is None else 0.5 * (self._runnable + runnable)
        others, cpu = self._runnable, None
        if last is not None and busy is not None and now > last[0]:
            cpu = ((busy - last[1]) - (own - last[2])) / (now - last[0])
            if cpu >= 0.0:  # below: a child that ran across readings was waited for in
                # this one, its whole CPU time subtracted here (the runnable count then)
                others = max(others, cpu) if cpu >= RUNNABLE_CPU else cpu
        ncpu = len(self.cpus)
        self.free = min(float(ncpu), max(0.0, ncpu - others))
        # A core at least half free is worth a thread.
        threads = max(1, math.floor(self.free + 0.5))
        self._cap = 0 if threads >= ncpu else threads
        self.reading = Reading(cpu, self._runnable, self.free, self._cap)

    def enter(self) -> tuple[int, int]:
        """Before an OpenMP kernel call: ``(previous, team)``. ``team`` is the number of
        threads the call's parallel regions get: OpenMP's own count (``OMP_NUM_THREADS``,
        ``omp_set_num_threads``), lowered to the cap with ``omp_set_num_threads`` when fewer
        cores are free; ``previous`` is the setting to give back to :meth:`restore`
        afterwards (0: nothing was changed)."""
        cap = self.cap()
        if not _OMP and openmp_library() is None:
            return 0, default_team()  # nothing to lower the count with
        get, put = _OMP[0]
        team = get()
        if not cap or team <= cap:
            return 0, team
        put(cap)
        return team, cap

    def team(self) -> int:
        """The team the next OpenMP kernel call would get (:meth:`enter`'s ``team``), without
        changing OpenMP's setting: a caller that has a serial kernel runs it when this is 1
        (a parallel executor on a team of one only pays for its order and barriers)."""
        cap = self.cap()
        team = default_team()
        return min(team, cap) if cap else team

    @staticmethod
    def restore(previous: int) -> None:
        """Undo :meth:`enter` (``previous`` is the first value it returned)."""
        if previous:
            _OMP[0][1](previous)


GOVERNOR = ThreadGovernor()
"""The process's governor (every :class:`~spf.runtime.kernel.Kernel` built with OpenMP)."""


def _forked() -> None:
    # a forked child's own and children's CPU counters start at zero: its first reading
    # must not take the parent's as its previous one
    GOVERNOR._last = None
    GOVERNOR._next = 0.0
    if _GOMP:
        # libgomp's worker threads stay in the parent, but its state says they exist: a
        # parallel region of more than one thread in the child waits for them forever
        GOVERNOR.forked = True


os.register_at_fork(after_in_child=_forked)


def set_adaptive(enabled: bool) -> bool:
    """Turn the thread cap on or off for this process; returns the previous setting."""
    previous, GOVERNOR.enabled = GOVERNOR.enabled, bool(enabled)
    return previous


def free_cores() -> float:
    """The cores other processes leave free, as last measured (measures when stale)."""
    now = time.monotonic()
    if now >= GOVERNOR._next:
        GOVERNOR._measure(now)
    return GOVERNOR.free


def default_team() -> int:
    """The threads a parallel region gets from OpenMP now: ``omp_get_max_threads()``, or
    where libgomp cannot be loaded, ``OMP_NUM_THREADS`` (its first level) or the CPUs this
    process may run on."""
    if _OMP or openmp_library() is not None:
        return int(_OMP[0][0]())
    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    return int(first) if first.isdigit() and int(first) > 0 else len(_allowed_cpus())


@contextlib.contextmanager
def openmp_threads(n: int) -> Iterator[None]:
    """``with openmp_threads(n):`` OpenMP parallel regions started by this thread (spf's
    kernels included) get at most ``n`` threads (``omp_set_num_threads``); the previous
    setting is restored on leaving. The cap for busy cores still applies under ``n``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"openmp_threads: n must be an int >= 1, got {n!r}")
    if not _OMP and openmp_library() is None:
        raise ToolchainError(
            "openmp_threads: libgomp (GCC's OpenMP runtime) cannot be loaded, so the thread "
            "count cannot be set from Python; set OMP_NUM_THREADS before starting Python"
        )
    get, put = _OMP[0]
    previous = get()
    put(n)
    try:
        yield
    finally:
        put(previous)
