"""Partial sums on long sparse rows (docs/scheduling.md, "Layer II: partial sums").

1. ``spf.kernels.spmv_csr()`` with ``partial_sums("k", 4, 16)``: rows of at least 16
   entries add into four sums (entry ``t`` into sum ``t mod 4``), added pairwise at the
   row's end; the result equals scipy's ``A @ x`` to round-off, and the in-order kernel's
   and the partial sums' times are printed side by side (not asserted: shared machines).
2. A lower solve fused with the product with its solution (``spf.bench.fused``), both row
   loops with partial sums, run as a wavefront: every plan (serial, levels, coarse, auto)
   gives the same bits, at 1 and 2 threads, and they solve the system.
3. The same command on a solve without the facts that keep ``col(k)`` from ``i`` is refused.

Run: ``python examples/partial_sums.py [matrix.mtx]`` (default: a random matrix with a few
dense rows; checks its results and fails loudly).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

import spf
from spf.bench.fused import dominant, fused_solve_mv
from spf.runtime.threads import openmp_threads
from spf.sparse import csr_args, gauss_seidel_args, read_matrix_market


def matrix(argv: list[str]) -> Any:
    """The matrix of the command line (its pattern, dominant diagonal), or a random one:
    rows of 40 entries on average among rows of a few."""
    if len(argv) > 1:
        return dominant(read_matrix_market(Path(argv[1])), 7)
    rng = np.random.default_rng(0)
    m = sp.lil_array(sp.random_array((3000, 3000), density=0.002, rng=rng, format="csr"))
    for i in range(0, 3000, 3):
        m[i, rng.choice(3000, 120, replace=False)] = 1.0
    return dominant(sp.csr_array(m), 7)


def best_ms(call: Any, calls: int = 50, samples: int = 21) -> float:
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        times.append((time.perf_counter() - t0) / calls)
    return 1e3 * float(np.median(times))


def spmv(a: Any) -> None:
    args = csr_args(a)
    x = np.random.default_rng(1).standard_normal(a.shape[1])
    plain = spf.kernels.spmv_csr().compile()
    summed = spf.kernels.spmv_csr()
    summed.stmt(0).partial_sums("k", 4, 16)
    kernel = summed.compile()
    ys = np.zeros(a.shape[0]), np.zeros(a.shape[0])
    kernel(y=ys[1], x=x, **args)
    if not np.allclose(ys[1], a @ x, rtol=1e-12, atol=1e-12):
        raise SystemExit("partial sums: the SpMV differs from scipy's A @ x")
    times = [best_ms(lambda k=k, y=y: k(y=y, x=x, check=False, **args))
             for k, y in ((plain, ys[0]), (kernel, ys[1]))]  # fmt: skip
    print(f"SpMV, {a.shape[0]:,} rows, {a.nnz / a.shape[0]:.1f} entries a row (1 thread): "
          f"in order {times[0]:.4f} ms, partial sums {times[1]:.4f} ms "
          f"({times[1] / times[0]:.2f}x)")  # fmt: skip


def fused_pair(a: Any) -> None:
    n = a.shape[0]
    args = gauss_seidel_args(a)
    index = {k: v for k, v in args.items() if k != "A"}
    b = np.random.default_rng(2).standard_normal(n)
    kernel = fused_solve_mv((4, 16)).compile()
    want: tuple[np.ndarray, np.ndarray] | None = None
    for threads in (1, 2):
        with openmp_threads(threads):
            for strategy in ("serial", "levels", "coarse", "auto"):
                plan = kernel.inspect(strategy=strategy, threads=2, **index)
                x, y = np.zeros(n), np.zeros(n)
                kernel(x=x, y=y, b=b, plan=plan, **args)
                want = (x, y) if want is None else want
                if not (np.array_equal(x, want[0]) and np.array_equal(y, want[1])):
                    raise SystemExit(f"partial sums: plan {strategy!r} at {threads} threads "
                                     "differs from the serial plan")  # fmt: skip
    assert want is not None
    lower = sp.csr_array(sp.tril(a))
    if not np.allclose(lower @ want[0], b, rtol=1e-10, atol=1e-10):
        raise SystemExit("partial sums: the fused solve does not solve the system")
    if not np.allclose(want[1], a @ want[0], rtol=1e-12, atol=1e-12):
        raise SystemExit("partial sums: the fused product differs from scipy's")
    print("fused solve + product with partial sums: every plan gives the same bits, 1 and 2 "
          "threads")  # fmt: skip


def refused() -> None:
    loose = spf.kernels.sptrsv_csr(triangular=False)
    loose.stmt("s1").partial_sums("k")
    try:
        loose.check_legality()
    except spf.IllegalScheduleError as err:
        print("refused without the triangular facts:", str(err).split(":")[1].strip())
        return
    raise SystemExit("partial sums: a solve without its facts was accepted")


if __name__ == "__main__":
    a = matrix(sys.argv)
    spmv(a)
    fused_pair(a)
    refused()
