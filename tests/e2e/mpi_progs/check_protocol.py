"""The protocol of a repeated distributed call (docs/backends/mpi.md) on real ranks.

Run by tests/e2e/test_mpi_distributed.py as ``mpiexec -n P python -m mpi4py
check_protocol.py`` (P = 2, 3, 4). Once a call returned on every rank, a repeat makes no
blocking collective; every case where one rank's call differs ends the same on every rank:
a stale plan on a rank with neighbours, on a rank without any, a plan that only the rank's
receivers made stale, a bad argument on a rank with and without neighbours, a rank calling
another computation, every rank switching computations, and resumed calls that accumulate
(SpMV into a nonzero y, A^T x, CG's sums) equal to a run without the hiccup.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from check_distributed import FAILED, RANK, SIZE, expect_error, poisson, report
from mpi4py import MPI

import spf
import spf.mpi
from spf import kernels
from spf.bench.mpi_cg import cg_step

COMM = MPI.COMM_WORLD


def block_diagonal(n: int) -> sp.csr_array:
    """Each rank's rows read only its own columns: no rank has a neighbour."""
    cuts = spf.mpi.Partition(n, SIZE).cuts()
    rng = np.random.default_rng(11)
    dense = np.zeros((n, n))
    for r in range(SIZE):
        lo, hi = int(cuts[r]), int(cuts[r + 1])
        dense[lo:hi, lo:hi] = rng.random((hi - lo, hi - lo)) * (
            rng.random((hi - lo, hi - lo)) < 0.5
        )
    return sp.csr_array(dense)


def spmv() -> object:
    comp = kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    return comp.compile(target="mpi")


def product(matrix: sp.csr_array, x: np.ndarray, y0: np.ndarray) -> np.ndarray:
    """y0 + A x by the single-process kernel (the distributed one equals it bitwise)."""
    y = y0.copy()
    kernels.spmv_csr().compile()(y=y, x=x, **spf.sparse.csr_args(matrix))
    return y


def with_rows(args: dict, mine: np.ndarray, matrix: sp.csr_array) -> dict:
    """``args`` with this rank's rows of ``matrix`` (new arrays)."""
    local = sp.csr_array(matrix[mine])
    return {**args, "A": local.data.copy(), "col": local.indices.astype(np.int32),
            "rowptr": local.indptr.astype(np.int32), "NNZ": local.nnz}  # fmt: skip


def scattered(matrix: sp.csr_array, seed: int) -> tuple[dict, np.ndarray, np.ndarray]:
    """This rank's arguments of ``matrix``, its rows, and a random global vector."""
    n = matrix.shape[0]
    args = spf.mpi.scatter_csr(matrix, COMM)
    return args, spf.mpi.owned_rows(n, COMM), np.random.default_rng(seed).random(n)


def stale_cases(k: object) -> None:
    """Repeats, then one rank's plan goes stale in each way the protocol distinguishes."""
    for case, (name, matrix, changed) in enumerate((
        ("with neighbours (2-D Poisson)", poisson(8), [0]),
        ("without neighbours (block diagonal)", block_diagonal(40), [SIZE - 1]),
        ("only through its receivers (block diagonal; rank 0 repeats)", block_diagonal(40),
         list(range(1, SIZE))),
    )):  # fmt: skip
        n = matrix.shape[0]
        args, mine, x_all = scattered(matrix, 3)
        y0_all = np.random.default_rng(4).random(n)
        x, y = x_all[mine].copy(), y0_all[mine].copy()
        k(comm=COMM, y=y, x=x, **args)
        first = k.exchange_stats()["blocking_agreement"]
        y[:] = y0_all[mine]
        k(comm=COMM, y=y, x=x, **args)
        repeat = k.exchange_stats()["blocking_agreement"]
        # the kernel's first call agrees with a blocking collective; later first calls (new
        # arrays on every rank) drain the armed exchange and agree with it
        ok = first == int(case == 0) and repeat == 0
        ok = ok and bool(np.array_equal(spf.mpi.gather(y, COMM), product(matrix, x_all, y0_all)))
        # the changed ranks read every rank's first entry (and rank 0's, for rank 0 itself)
        new = matrix.tolil()
        cuts = spf.mpi.Partition(n, SIZE).cuts()
        for r in changed:
            row = int(cuts[r])
            if row < int(cuts[r + 1]):
                for c in cuts[:-1]:
                    new[row, int(c)] = 0.5
        new = sp.csr_array(new)
        call = with_rows(args, mine, new) if RANK in changed else args
        y[:] = y0_all[mine]  # y accumulates: a resumed call must not add twice
        k(comm=COMM, y=y, x=x, **call)
        got = spf.mpi.gather(y, COMM)
        ok = ok and bool(np.array_equal(got, product(new, x_all, y0_all)))
        y[:] = y0_all[mine]
        k(comm=COMM, y=y, x=x, **call)  # the new plan's repeat: no blocking collective again
        ok = ok and k.exchange_stats()["blocking_agreement"] == 0
        ok = ok and bool(np.array_equal(spf.mpi.gather(y, COMM), got))
        report(f"stale plan {name}, the other ranks repeat: bitwise equal to serial", ok)


def error_cases(k: object) -> None:
    for name, matrix, bad in (
        ("with neighbours", poisson(8), 0),
        ("without neighbours", block_diagonal(40), SIZE - 1),
    ):
        args, mine, _ = scattered(matrix, 0)
        x, y = np.ones(mine.size), np.zeros(mine.size)
        for _ in range(2):
            k(comm=COMM, y=y, x=x, **args)

        def wrong_dtype(y=y, x=x, args=args, bad=bad) -> None:
            k(comm=COMM, y=y, x=x.astype(np.float32) if bad == RANK else x, **args)

        expect_error(f"a bad argument on rank {bad} ({name}) while the others repeat", wrong_dtype)
        y[:] = 0.0
        k(comm=COMM, y=y, x=x, **args)  # after the error: a first call again, then repeats
        ok = k.exchange_stats()["blocking_agreement"] == 1
        k(comm=COMM, y=y, x=x, **args)
        ok = ok and k.exchange_stats()["blocking_agreement"] == 0
        report(f"after that error ({name}): agreed again, then repeats without a collective", ok)


def other_computations(k: object) -> None:
    matrix = poisson(8)
    n = 64
    args, mine, x_all = scattered(matrix, 5)
    x, y = x_all[mine].copy(), np.zeros(mine.size)
    k(comm=COMM, y=y, x=x, **args)
    t = kernels.spmtv_csr()
    t.distribute_rows("i", data={"y": 0, "x": 0})
    kt = t.compile(target="mpi")
    if SIZE > 1:
        expect_error(
            "rank 1 calls another computation while the others repeat theirs",
            lambda: (kt if RANK == 1 else k)(comm=COMM, y=y, x=x, **args),
        )
        k(comm=COMM, y=y, x=x, **args)
    # every rank switches, back and forth: each call drains the other's exchange
    good = True
    for _ in range(2):
        yt = np.zeros(mine.size)
        kt(comm=COMM, y=yt, x=x, **args)
        good = good and bool(np.allclose(spf.mpi.gather(yt, COMM), matrix.T @ x_all, rtol=1e-14))
        y[:] = 0.0
        k(comm=COMM, y=y, x=x, **args)
        want = product(matrix, x_all, np.zeros(n))
        good = good and bool(np.array_equal(spf.mpi.gather(y, COMM), want))
    report("every rank switches between SpMV and A^T x: both equal serial", good)
    # the same computation through a second kernel object on one rank
    k2 = spmv() if RANK == 0 else k
    y[:] = 0.0
    k2(comm=COMM, y=y, x=x, **args)
    report(
        "rank 0 calls the same computation through another kernel object: equals serial",
        bool(np.array_equal(spf.mpi.gather(y, COMM), product(matrix, x_all, np.zeros(n)))),
    )


def resumed_accumulations() -> None:
    """A^T x (sums sent to their owners) and CG (sums over the ranks) resumed after a
    stale plan on rank 0 equal the same calls without the hiccup."""
    t = kernels.spmtv_csr()
    t.distribute_rows("i", data={"y": 0, "x": 0})
    kt = t.compile(target="mpi")
    matrix = sp.csr_array(sp.random_array((30, 30), density=0.15, rng=6))
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(30, COMM)
    x = np.random.default_rng(7).random(30)[mine].copy()
    y0 = np.random.default_rng(8).random(30)[mine].copy()
    outs = []
    for hiccup in (False, True):
        y = y0.copy()
        kt(comm=COMM, y=y, x=x, check=False, **args)
        y = y0.copy()
        kt(comm=COMM, y=y, x=x, check=False, **args)
        y = y0.copy()
        col = args["col"].copy() if hiccup and RANK == 0 else args["col"]  # new address
        kt(comm=COMM, y=y, x=x, check=False, **{**args, "col": col})
        outs.append(y)
    report("A^T x resumed after a stale plan on rank 0: bitwise equal to the plain call",
           bool(np.array_equal(outs[0], outs[1])))  # fmt: skip

    kc = cg_step().compile(target="mpi")
    g = 9
    matrix = poisson(g)
    n = g * g
    b = np.random.default_rng(2).random(n)
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(n, COMM)
    results = []
    for hiccup in (False, True):
        x, r = np.zeros(mine.size), b[mine].copy()
        p, q = r.copy(), np.zeros(mine.size)
        rr = np.array(float(b @ b))
        scalars = {s: np.zeros(()) for s in ("pq", "rrn", "alpha", "beta")}
        for it in range(6):
            col = args["col"]
            if hiccup and it == 4 and RANK == 0:
                col = col.copy()
            kc(comm=COMM, x=x, r=r, q=q, p=p, rr=rr, check=False, **scalars,
               **{**args, "col": col})  # fmt: skip
        results.append(spf.mpi.gather(x, COMM))
    report("CG resumed after a stale plan on rank 0 at iteration 5: bitwise equal",
           bool(np.array_equal(results[0], results[1])))  # fmt: skip


def main() -> None:
    k = spmv()
    stale_cases(k)
    error_cases(k)
    other_computations(k)
    resumed_accumulations()
    if FAILED:
        raise SystemExit(f"check_protocol: {len(FAILED)} check(s) failed")


if __name__ == "__main__":
    main()
