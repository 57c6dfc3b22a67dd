"""The tensor bench's einsum kernels built at ``-O3`` and at ``-O2`` (``-march=native`` both),
timed against each other: one thread, interleaved rounds (each in a shuffled order), CPU time of the calling thread,
medians; the sparse outputs' arrays compared bit for bit between the two builds. The
evidence behind ``spf.runtime.compile.optimisation_flags`` (docs/backends/c.md).

    PYTHONPATH=. python benchmarks/opt_levels.py [--rounds 15] [--grid 700] [--two-phases]
                                                 [--only SpGEMM ...]

``--two-phases`` times the sparse outputs' two phases (what a team of threads runs) on one
thread instead of their single pass. Inputs as ``spf bench --only tensor``'s (a 2-D Poisson
matrix of ``grid**2`` rows, a random 200k-row matrix with 2M entries), and the power-law
tensor at 1M entries for MTTKRP.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

import spf
import spf.index_notation.sparse_output as sparse_output
import spf.kernels
import spf.sparse
from spf.bench import tensor_inputs as inputs
from spf.bench.tensor import unsorted_spgemm
from spf.formats import CSF, CSR

LEVELS = {"-O3": ["-O3", "-march=native"], "-O2": ["-O2", "-march=native"]}
RANK = 16


def mttkrp() -> Any:
    comp = spf.einsum("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", B=CSF(3))
    comp.stmt("s1").parallelize("B_p1")
    return comp


MAKERS: dict[str, Callable[[], Any]] = {
    "SpMV": lambda: spf.einsum("y(i) = A(i,j) * x(j)", A=CSR),
    "SpAdd": lambda: spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR),
    "SpGEMM": spf.kernels.spgemm_csr,
    "SpGEMM unsorted": unsorted_spgemm,
    "MTTKRP": mttkrp,
}


def calls(kernel: str, fn: Any, mats: dict[str, tuple[Any, Any, Any]]) -> dict[str, Any]:
    """``fn``'s unchecked calls on each input, by input name."""
    if kernel == "MTTKRP":
        coords, values, shape = inputs.power_law_tensor(1_000_000)
        args = spf.sparse.csf_args(coords, values, shape, prefix="B_")
        rng = np.random.default_rng(5)
        c, d = rng.random((shape[1], RANK)), rng.random((shape[2], RANK))
        out = np.zeros((shape[0], RANK))
        return {"power-law 1M": lambda: fn(check=False, A=out, C=c, D=d, **args)}
    got = {}
    for label, (x, add, mul) in mats.items():
        args = spf.sparse.csr_args(x, prefix="A_")
        if kernel == "SpMV":
            v, y = np.random.default_rng(6).random(x.shape[1]), np.zeros(x.shape[0])
            got[label] = lambda a=args, v=v, y=y: fn(check=False, y=y, x=v, **a)
            continue
        other = add if kernel == "SpAdd" else mul
        args = {**args, **spf.sparse.csr_args(other, prefix="B_")}
        if kernel != "SpAdd":  # spgemm_csr's sizes are N, K, M
            args = {k: v for k, v in args.items() if not isinstance(v, int)}
            args.update(N=x.shape[0], K=x.shape[1], M=other.shape[1])
        got[label] = lambda a=args: fn(check=False, **a)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--grid", type=int, default=700)
    ap.add_argument("--two-phases", action="store_true")
    ap.add_argument("--only", action="append", choices=list(MAKERS), help="repeatable")
    opts = ap.parse_args()
    if opts.two_phases:  # the two phases at one thread: what a team runs, per thread
        sparse_output._serial = lambda parallel: False  # type: ignore[assignment]
    a = inputs.random_csr(200_000, 200_000, 2_000_000, 1)
    b = inputs.random_csr(200_000, 200_000, 2_000_000, 2)
    p, q = inputs.poisson_pair(opts.grid)
    mats = {f"Poisson {opts.grid}^2": (p, q, p), "random 200k": (a, b, b)}
    jobs: dict[tuple[str, str, str], Any] = {}
    for kernel, make in MAKERS.items():
        if opts.only and kernel not in opts.only:
            continue
        for level, flags in LEVELS.items():
            fn = make().compile(cflags=flags)
            for label, call in calls(kernel, fn, mats).items():
                jobs[kernel, label, level] = call
    outs = {key: call() for key, call in jobs.items()}  # warm-up, and the results
    times: dict[tuple[str, str, str], list[float]] = {key: [] for key in jobs}
    rng = random.Random(33)
    order = list(jobs)
    for _ in range(opts.rounds):
        rng.shuffle(order)  # each round in a fresh order: no build always runs first
        for key in order:
            t = time.thread_time()
            jobs[key]()
            times[key].append(time.thread_time() - t)
    what = "two phases" if opts.two_phases else "single pass"
    print(f"{opts.rounds} rounds, sparse outputs' {what}, load {os.getloadavg()[0]:.1f}")
    print("| kernel | input | -O3 ms | -O2 ms | -O2/-O3 | same bits |")
    print("|---|---|---|---|---|---|")
    for kernel, label, level in jobs:
        if level != "-O3":
            continue
        o3, o2 = (statistics.median(times[kernel, label, lv]) * 1e3 for lv in LEVELS)
        x, y = outs[kernel, label, "-O3"], outs[kernel, label, "-O2"]
        same = "-"
        if isinstance(x, dict):
            same = str(all(np.array_equal(x[k], y[k]) for k in x))
        print(f"| {kernel} | {label} | {o3:.2f} | {o2:.2f} | {o2 / o3:.3f} | {same} |")


if __name__ == "__main__":
    main()
