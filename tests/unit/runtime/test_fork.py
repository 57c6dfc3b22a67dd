"""A process forked after spf ran OpenMP kernels or its worker threads (``multiprocessing``'s
default start method on Linux) runs kernels and worker jobs, never waits forever for threads
the fork did not copy: libgomp's team and spf's worker pool exist in the parent only."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import numpy as np
import pytest

import spf
from spf.runtime import checksum, threads

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _in_child(work: Callable[[], bool], seconds: float = 30.0) -> int:
    """The exit status of a forked child running ``work`` (0: it returned True; 1: False or
    an exception; -1: still running after ``seconds``, then killed)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            code = 0 if work() else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return -1


def _parallel_scale() -> spf.Computation:
    comp = spf.Computation("fork_scale")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(spf.Stmt("$y$(i) = 2 * $x$(i) + 1;", "{[i]: 0 <= i < N}"))
    s.parallelize("i")
    return comp


def test_a_forked_child_runs_a_parallel_kernel_after_the_parent_did() -> None:
    kernel = _parallel_scale().compile()
    x = np.arange(100_000.0)

    def run() -> bool:
        y = np.zeros_like(x)
        kernel(x=x, y=y)
        return bool(np.array_equal(y, 2 * x + 1))

    previous = threads.set_adaptive(False)  # the parent's team really has two threads
    try:
        with threads.openmp_threads(2):
            assert run()
            assert kernel.last_threads == 2
            assert _in_child(run) == 0
    finally:
        threads.set_adaptive(previous)


def test_a_forked_child_runs_jobs_on_spfs_worker_threads() -> None:
    assert checksum.submit(lambda: 1).result(timeout=30) == 1  # the parent's pool started
    assert _in_child(lambda: checksum.submit(lambda: 2).result() == 2) == 0
