"""The demo's timing table compares like with like: the threads of each column are in the
table, spf is timed at 1 thread against single-threaded scipy, OpenBLAS at spf's count, and a
busy machine's effect on each column is said under the table."""

from __future__ import annotations

import os

import numpy as np
import pytest

from spf import demo_timing, kernels, sparse
from spf.bench.common import openblas_threads
from spf.demo_timing import Timing
from spf.runtime import threads

ROWS = [
    Timing("CSR SpMV", "scipy A @ x", 0.5, 1.0, (1, 1), 1, 1),
    Timing("CSR SpMV", "scipy A @ x", 0.4, 1.0, (1, 2, 2), 2, 1),
    Timing("DGEMM", "numpy A @ B (OpenBLAS)", 4.0, 2.0, (1, 1), 2, 2),
]


# the load per CPU (busy above demo_timing.BUSY_LOAD): 0.1 and 7.5 on 2 CPUs, the same
# verdicts on a machine of any size
@pytest.mark.parametrize(("per_cpu", "busy"), [(0.05, False), (3.75, True)])
def test_table_labels_units_threads_and_load(
    per_cpu: float, busy: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ncpu = len(os.sched_getaffinity(0))
    load = per_cpu * ncpu
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    demo_timing.print_timings(ROWS)
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| kernel"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[:2] == ["kernel", "compared with"]
    assert all("ms" in c or "threads" in c for c in cells[2:]), cells
    assert "| CSR SpMV | scipy A @ x | 1 | 0.500 | 1 | 1.000 | 2.00x |" in out
    assert "| CSR SpMV | scipy A @ x | 1-2 of 2 | 0.400 | 1 | 1.000 | 2.50x |" in out
    assert "| DGEMM | numpy A @ B (OpenBLAS) | 1 of 2 | 4.000 | 2 | 2.000 | 0.50x |" in out
    assert "CSR SpMV: spf ran on 1 of 2 threads in 1 of 3 timed calls (adaptive" in out
    assert (
        "DGEMM: spf ran on 1 of 2 threads in 2 of 2 timed calls (adaptive: spf gives a call no "
        "more threads than cores are free); numpy A @ B (OpenBLAS) ran on 2 threads"
    ) in out
    assert "single-threaded (1 thread): scipy A @ x" in out
    assert "numpy A @ B (OpenBLAS): set to 2 threads, the count spf was allowed" in out
    assert f"load average {load:.2f} on {ncpu} CPUs = {load / ncpu:.2f} per CPU" in out
    assert ("BUSY" in out) is busy
    assert ("on this busy machine it does not adapt" in out) is busy
    assert ("on this busy machine they share the cores" in out) is busy


def test_busy_machine_where_spf_kept_its_threads_says_so() -> None:
    rows = [Timing("SpMV", "scipy A @ x", 0.5, 1.0, (2, 2), 2, 1)]
    assert demo_timing.column_notes(rows, is_busy=True)[0] == (
        "spf ran every timed call on all the threads it was allowed"
    )
    assert not any("spf ran" in n for n in demo_timing.column_notes(rows, is_busy=False))
    unknown = Timing("DGEMM", "OpenBLAS", 1.0, 1.0, (2,), 2, None)
    assert unknown.other_cell() == "default"
    assert "its own default thread count" in demo_timing.column_notes([unknown], False)[0]


def test_spmv_against_scipy_is_timed_at_one_thread_and_at_openmps_count() -> None:
    comp = kernels.spmv_csr()
    comp.stmt(0).parallelize("i")
    kernel = comp.compile()
    a = sparse.poisson2d(20)
    args, x, y = sparse.csr_args(a), np.ones(a.shape[1]), np.zeros(a.shape[0])

    def run() -> None:
        kernel(y=y, x=x, check=False, **args)

    with threads.openmp_threads(2):
        rows = demo_timing.against_one_thread(kernel, "SpMV", "scipy", run, lambda: a @ x, repeat=3)
    assert [(r.allowed, r.other_threads, len(r.spf_threads)) for r in rows] == [
        (1, 1, 3),
        (2, 1, 3),
    ]
    assert set(rows[0].spf_threads) == {1}
    assert set(rows[1].spf_threads) <= {1, 2}  # 1 when spf found a core busy
    serial = demo_timing.against_one_thread(
        kernel, "SpMV", "scipy", run, lambda: a @ x, parallel=False, repeat=2
    )
    assert [(r.allowed, r.spf_threads) for r in serial] == [(1, (1, 1))]


def test_blas_threads_sets_openblas_and_restores_it() -> None:
    handle = openblas_threads()
    assert handle is not None, "numpy's OpenBLAS thread setter is found"
    get, _ = handle
    before = get()
    with demo_timing.blas_threads(1) as n:
        assert (n, get()) == (1, 1)
    assert get() == before
