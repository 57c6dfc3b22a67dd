"""OpenMP kernels on a busy machine: calls get no more threads than cores are free
(spf.runtime.threads), the user's setting is restored, and the cap can be turned off."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import types
from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf.codegen.signature import Arg, Signature
from spf.codegen.unit import TranslationUnit
from spf.errors import ArgumentError
from spf.runtime import Kernel, threads

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TEAM_SRC = r"""
#include <stdint.h>
#include <omp.h>
void team(int64_t *restrict t) {
  #pragma omp parallel
  {
    #pragma omp single
    t[0] = omp_get_num_threads();
  }
}
"""
TEAM = Signature(function="team", args=(Arg(name="t", kind="data", ctype="int64_t", shape=(1,)),))


@pytest.fixture
def governor(monkeypatch: pytest.MonkeyPatch) -> Iterator[threads.ThreadGovernor]:
    """The process's governor on a pretend 2-CPU machine whose load the test sets."""
    gov = threads.GOVERNOR
    saved = dict(vars(gov))
    monkeypatch.setattr(gov, "cpus", [0, 1])
    monkeypatch.setattr(threads, "_busy_seconds", lambda cpus: None)
    gov.enabled, gov._next, gov._last = True, 0.0, None
    yield gov
    vars(gov).clear()
    vars(gov).update(saved)
    gov._next = 0.0


def _team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, others: float) -> int:
    monkeypatch.setattr(threads, "_runnable_others", lambda: others)
    threads.GOVERNOR._next, threads.GOVERNOR._last = 0.0, None
    kernel = Kernel.build(TEAM, TEAM_SRC, cache_dir=tmp_path)
    gomp = threads.openmp_library()
    assert gomp is not None
    gomp.omp_set_num_threads(2)
    t = np.zeros(1, dtype=np.int64)
    kernel(t=t)
    assert gomp.omp_get_max_threads() == 2, "the user's thread count is restored"
    assert kernel.last_threads == int(t[0]), "last_threads is the team the call ran on"
    return int(t[0])


def test_a_busy_core_takes_a_thread_away(
    governor: threads.ThreadGovernor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _team(tmp_path, monkeypatch, others=1.0) == 1
    assert governor.free == pytest.approx(1.0)


def test_an_idle_machine_keeps_every_thread(
    governor: threads.ThreadGovernor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _team(tmp_path, monkeypatch, others=0.2) == 2


def test_an_overloaded_machine_still_runs_one_thread(
    governor: threads.ThreadGovernor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _team(tmp_path, monkeypatch, others=7.0) == 1
    assert governor.free == 0.0


def test_the_cap_can_be_turned_off(
    governor: threads.ThreadGovernor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert threads.set_adaptive(False) is True
    assert _team(tmp_path, monkeypatch, others=1.0) == 2
    assert threads.set_adaptive(True) is False
    monkeypatch.setenv(threads.ENV, "0")
    assert not threads.ThreadGovernor().enabled


def test_free_cores_is_measured_from_proc() -> None:
    free = threads.free_cores()
    assert 0.0 <= free <= len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({}, threads.SPIN_COUNT),
        ({"GOMP_SPINCOUNT": "5"}, "5"),
        ({"OMP_WAIT_POLICY": "active"}, None),
    ],
)
def test_idle_workers_spin_briefly_unless_the_user_chose(
    env: dict[str, str], want: str | None
) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    code = (
        "import os\nfrom spf.runtime import threads\nassert threads.openmp_library() is not None\n"
        "print(os.environ.get('GOMP_SPINCOUNT'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**base, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(want)


SIMD_SRC = r"""
#include <stdint.h>
void twice(int64_t n, double *restrict v) {
  #pragma omp simd
  for (int64_t i = 0; i < n; i++)
    v[i] *= 2.0;
}
"""
SIMD = Signature(
    function="twice",
    args=(
        Arg(name="n", kind="param", ctype="int64_t"),
        Arg(name="v", kind="data", ctype="double", shape=("n",)),
    ),
)


def test_last_threads_is_none_before_the_first_call_then_the_team(
    governor: threads.ThreadGovernor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(threads, "_runnable_others", lambda: 0.0)
    kernel = Kernel.build(TEAM, TEAM_SRC, cache_dir=tmp_path)
    assert kernel.last_threads is None
    t = np.zeros(1, dtype=np.int64)
    for n in (1, 2):
        with threads.openmp_threads(n):
            kernel(t=t)
        assert (int(t[0]), kernel.last_threads) == (n, n)
        kernel(t=t, check=False)  # the fast path
        assert kernel.last_threads == int(t[0])


def test_last_threads_is_one_without_a_parallel_region(tmp_path: Path) -> None:
    """A ``simd`` pragma is not a parallel region (as the unit's record says), and
    ``openmp=False`` builds have none."""
    v = np.ones(5)
    unit = TranslationUnit(SIMD_SRC, openmp=True, parallel=False)
    for openmp in (True, False):
        kernel = Kernel.build(SIMD, unit, openmp=openmp, cache_dir=tmp_path)
        assert kernel.last_threads is None
        kernel(v=v, n=5, check=False)
        assert kernel.last_threads == 1
    np.testing.assert_array_equal(v, 4.0)
    kernel = Kernel.build(TEAM, TEAM_SRC, openmp=False, cache_dir=tmp_path)
    kernel(t=np.zeros(1, dtype=np.int64))
    assert kernel.last_threads == 1


def test_openmp_threads_sets_the_count_for_a_block_and_restores_it() -> None:
    gomp = threads.openmp_library()
    assert gomp is not None
    before = gomp.omp_get_max_threads()
    with threads.openmp_threads(3):
        assert gomp.omp_get_max_threads() == 3
        assert threads.default_team() == 3
    assert gomp.omp_get_max_threads() == before
    with pytest.raises(RuntimeError), threads.openmp_threads(1):
        raise RuntimeError
    assert gomp.omp_get_max_threads() == before
    for bad in (0, -2, 1.5, True):
        with (
            pytest.raises(ArgumentError, match="openmp_threads: n must be an int >= 1"),
            threads.openmp_threads(bad),  # type: ignore[arg-type]
        ):
            pass


def test_a_worker_asleep_right_after_the_load_was_read_is_not_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/proc/loadavg counted this thread and an OpenMP worker still spinning after a
    parallel region; by the time this process's threads are listed the worker sleeps: it
    is still this process's, not a runnable thread of another one."""
    own = iter([frozenset({"10", "11"}), frozenset({"10"})])  # before, after the load
    monkeypatch.setattr(threads, "_own_running", lambda: next(own))
    monkeypatch.setattr(threads, "_read", lambda path: "0.50 0.40 0.30 2/100 4321\n")
    assert threads._runnable_others() == 0.0
    busy = iter([frozenset({"10"}), frozenset({"10"})])
    monkeypatch.setattr(threads, "_own_running", lambda: next(busy))
    monkeypatch.setattr(threads, "_read", lambda path: "0.50 0.40 0.30 3/100 4321\n")
    assert threads._runnable_others() == 2.0


def test_runnable_threads_count_only_with_cpu_time(
    governor: threads.ThreadGovernor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runnable thread of another process that got no CPU time over the interval (one
    that woke while this process held both cores, and needs little) takes no thread away;
    with the others' CPU time at ``RUNNABLE_CPU`` or more, the runnable threads count."""

    clock = {"busy": 5.0, "own": 1.0}
    monkeypatch.setattr(threads, "_busy_seconds", lambda cpus: clock["busy"])
    monkeypatch.setattr(
        threads,
        "time",
        types.SimpleNamespace(process_time=lambda: clock["own"], monotonic=time.monotonic),
    )
    monkeypatch.setattr(threads, "_runnable_others", lambda: 1.0)
    governor._measure(100.0)  # the first reading: no interval, the runnable count alone
    assert governor._cap == 1
    clock["busy"] += 0.4 + 0.002  # this process's two threads, the others 0.01 cores
    clock["own"] += 0.4
    governor._measure(100.2)
    assert governor.reading is not None
    assert governor.reading.cpu == pytest.approx(0.01)
    assert governor._cap == 0
    assert governor.free == pytest.approx(1.99)
    clock["busy"] += 0.4 + 0.16  # the others 0.8 cores: their runnable thread counts
    clock["own"] += 0.4
    governor._measure(100.4)
    assert governor._cap == 1


def test_this_process_s_children_are_not_other_processes(
    governor: threads.ThreadGovernor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quiet host, made so: the CPUs' busy time is this process's and its children's
    alone (what /proc/stat reads where nothing else runs). A child that burns 0.3 s of CPU
    between two measurements (a compiler spf runs for a kernel's first build) is this
    process's work: the reading sees no other process and leaves every thread."""

    def quiet_host(cpus: list[int]) -> float:
        t = os.times()
        return time.process_time() + t.children_user + t.children_system

    monkeypatch.setattr(threads, "_busy_seconds", quiet_host)
    monkeypatch.setattr(threads, "_runnable_others", lambda: 0.0)
    governor._measure(time.monotonic())
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    subprocess.run([sys.executable, "-c", burn], check=True)
    governor._measure(time.monotonic())
    assert governor.reading is not None
    assert governor.reading.cpu is not None
    assert governor.reading.cpu == pytest.approx(0.0, abs=0.05)
    assert governor._cap == 0
