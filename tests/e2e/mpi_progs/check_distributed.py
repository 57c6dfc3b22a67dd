"""Row-distributed kernels (API.md §19) on real ranks, against the single-process kernels.

Run by tests/e2e/test_mpi_distributed.py as ``mpiexec -n P python -m mpi4py
check_distributed.py [matrix.mtx ...]``. Every rank checks, and rank 0 prints in rank order
(spf.mpi.report): CSR SpMV bitwise equal to the serial kernel (random with empty rows, 2-D
Poisson, one row, empty, int64 indices, an owner array, the given SuiteSparse matrices), the
exact ghost count on 2-D Poisson, A^T·x and a dot product to round-off, a Jacobi iteration and
CG, and bad input raising ArgumentError on every rank (no deadlock).
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import spf
import spf.mpi
from spf import kernels
from spf.bench.mpi_cg import cg_step
from spf.sparse import read_matrix_market

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
FAILED: list[str] = []


def report(line: str, ok: bool) -> None:
    if not spf.mpi.report(COMM, line, ok=ok):
        FAILED.append(line)


def poisson(n: int) -> sp.csr_array:
    t = sp.diags_array([-1.0, 4.0, -1.0], offsets=[-1, 0, 1], shape=(n, n))
    e = sp.eye_array(n)
    return sp.csr_array(
        sp.kron(e, t) + sp.kron(sp.diags_array([-1.0, -1.0], offsets=[-1, 1], shape=(n, n)), e)
    )


def serial(comp: spf.Computation, **args: object) -> None:
    comp.compile()(**args)


# ----------------------------------------------------------------------------- SpMV


def spmv_dist(index_dtype: str) -> object:
    comp = kernels.spmv_csr(index_dtype=index_dtype)
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    return comp.compile(target="mpi")


def check_spmv(name: str, matrix: sp.csr_array, kernel: object, dtype: str, owner=None) -> dict:
    n, m = matrix.shape
    x = np.random.default_rng(n + 7).random(m)
    args = spf.mpi.scatter_csr(matrix, COMM, owner, index_dtype=dtype)
    mine = spf.mpi.owned_rows(n, COMM, owner)
    y = np.zeros(mine.size)
    kernel(comm=COMM, y=y, x=np.ascontiguousarray(x[spf.mpi.owned_rows(m, COMM, owner)]), **args)
    whole = spf.mpi.gather(y, COMM, owner)
    want = np.zeros(n)
    if n:
        serial(
            kernels.spmv_csr(index_dtype=dtype),
            y=want,
            x=x,
            **spf.sparse.csr_args(matrix, index_dtype=dtype),
        )
    stats = kernel.exchange_stats()
    report(
        f"spmv {name} ({n}x{m}, {dtype}{', owner array' if owner is not None else ''}): "
        f"bitwise equal to the serial kernel; received {stats['entries_received']} entries "
        f"in {stats['messages_received']} messages",
        bool(np.array_equal(whole, want)),
    )
    return stats


def spmv_cases(paths: list[str]) -> None:
    k32, k64 = spmv_dist("int32"), spmv_dist("int64")
    rng = np.random.default_rng(3)
    rand = sp.random_array((37, 37), density=0.08, format="csr", rng=4)
    rand = sp.csr_array(rand)
    check_spmv("random, empty rows", rand, k32, "int32")
    check_spmv("random, empty rows", rand, k64, "int64")
    check_spmv("one row", sp.csr_array(np.array([[2.0]])), k32, "int32")
    check_spmv("empty", sp.csr_array((5, 5)), k32, "int32")
    owner = rng.integers(0, SIZE, 37)
    check_spmv("random", rand, k32, "int32", owner=owner)
    g = 12
    stats = check_spmv("2-D Poisson", poisson(g), k32, "int32")
    # block rows of a g x g grid: a rank exchanges one grid row (g entries) per neighbour
    rows = spf.mpi.owned_rows(g * g, COMM)
    neighbours = int(rows.size > 0 and rows[0] > 0) + int(rows.size > 0 and rows[-1] < g * g - 1)
    report(
        f"spmv 2-D Poisson {g}x{g}: {stats['entries_received']} ghosts = {g} per neighbour "
        f"({neighbours} neighbours), as PETSc's MatMult exchanges",
        SIZE == 1 or stats["entries_received"] == g * neighbours,
    )
    for path in paths:
        matrix = read_matrix_market(path)
        matrix.sort_indices()
        check_spmv(path.rsplit("/", 1)[-1], matrix, k32, "int32")
    # a second call with the same index arrays reuses the plan; changed values take effect
    args = spf.mpi.scatter_csr(rand, COMM)
    mine = spf.mpi.owned_rows(37, COMM)
    x = np.ones(37)
    y1, y2 = np.zeros(mine.size), np.zeros(mine.size)
    k32(comm=COMM, y=y1, x=x[mine].copy(), **args)
    plan = k32._plan
    args["A"] = args["A"] * 2
    k32(comm=COMM, y=y2, x=x[mine].copy(), **args)
    report("spmv: a second call reuses the plan", k32._plan is plan and np.allclose(y2, 2 * y1))


# ----------------------------------------------------------------------------- A^T x, dot


def spmtv_and_dot() -> None:
    comp = kernels.spmtv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    k = comp.compile(target="mpi")
    for name, matrix in (
        ("random 29x23", sp.csr_array(sp.random_array((29, 23), density=0.1, rng=5))),
        ("2-D Poisson 8x8", poisson(8)),
    ):
        n, m = matrix.shape
        x = np.random.default_rng(9).random(n)
        args = spf.mpi.scatter_csr(matrix, COMM)
        y0 = np.random.default_rng(10).random(m)
        y = y0[spf.mpi.owned_rows(m, COMM)].copy()
        k(comm=COMM, y=y, x=x[spf.mpi.owned_rows(n, COMM)].copy(), **args)
        whole = spf.mpi.gather(y, COMM)
        want = y0 + matrix.T @ x
        report(
            f"A^T x {name}: equals y + A^T x (max |diff| {np.abs(whole - want).max():.1e}); "
            f"sent {k.exchange_stats()['entries_sent']} partial sums to their owners",
            bool(np.allclose(whole, want, rtol=1e-13, atol=1e-13)),
        )
    dot = spf.Computation("ddot")
    dot.add_data_space("s", "double", shape=())
    dot.add_data_space("x", "double", shape=("N",))
    dot.add_data_space("w", "double", shape=("N",))
    dot.add_stmt(spf.Stmt("$s$() += $x$(i) * $w$(i);", "{[i]: 0 <= i < N}"))
    dot.distribute_rows("i", data={"x": 0, "w": 0})
    kd = dot.compile(target="mpi")
    for n in (0, 1, 101):
        x = np.random.default_rng(n).random(n)
        w = np.random.default_rng(n + 1).random(n)
        mine = spf.mpi.owned_rows(n, COMM)
        s = np.array(0.5)
        kd(comm=COMM, s=s, x=x[mine].copy(), w=w[mine].copy(), N=n)
        report(
            f"dot n={n}: 0.5 + x.w on every rank ({float(s):.6f}), one MPI_Allreduce",
            bool(np.isclose(float(s), 0.5 + float(x @ w), rtol=1e-13))
            and kd.exchange_stats()["allreduces"] == 1,
        )


# ----------------------------------------------------------------------------- Jacobi, CG


def jacobi() -> spf.Computation:
    """x_new = x + D^-1 (b - A x), one computation in the row loop."""
    comp = spf.Computation("jacobi_csr")
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    for name, extent in (("t", "N"), ("b", "N"), ("d", "N"), ("xn", "N"), ("A", "NNZ"), ("x", "M")):
        comp.add_data_space(name, "double", shape=(extent,))
    comp.assume("M = N")
    comp.add_stmt(spf.Stmt("$t$(i) = $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0, 0, 0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$t$(i) -= $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0, i, 1, k, j]}",
        )
    )
    comp.add_stmt(
        spf.Stmt(
            "$xn$(i) = $x$(i) + $t$(i) / $d$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 2, 0, 0]}"
        )
    )
    return comp


def check_jacobi() -> None:
    g = 9
    matrix = poisson(g)
    n = g * g
    b = np.random.default_rng(1).random(n)
    d = matrix.diagonal().copy()
    comp = jacobi()
    comp.distribute_rows("i", data={"t": 0, "b": 0, "d": 0, "xn": 0, "x": 0})
    k = comp.compile(target="mpi")
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(n, COMM)
    x, xs = np.zeros(n), np.zeros(n)
    ser = jacobi().compile()
    full = spf.sparse.csr_args(matrix)
    for _ in range(5):
        xn = np.zeros(mine.size)
        k(
            comm=COMM,
            t=np.zeros(mine.size),
            b=b[mine].copy(),
            d=d[mine].copy(),
            xn=xn,
            x=x[mine].copy(),
            **args,
        )
        x = spf.mpi.gather(xn, COMM)
        xsn = np.zeros(n)
        ser(
            t=np.zeros(n),
            b=b,
            d=d,
            xn=xsn,
            x=xs,
            A=full["A"],
            rowptr=full["rowptr"],
            col=full["col"],
            N=n,
            M=n,
            NNZ=full["NNZ"],
        )
        xs = xsn
    report(
        f"Jacobi 5 sweeps on 2-D Poisson {g}x{g}: equals the serial sweeps",
        bool(np.allclose(x, xs, rtol=1e-14, atol=1e-14)),
    )


def cg(
    kernel: object, matrix: sp.csr_array, b: np.ndarray, iters: int, dist: bool, owner=None
) -> np.ndarray:
    """Unpreconditioned CG from x = 0; ``dist``: on this rank's rows (args scattered, by
    ``owner`` when given)."""
    n = matrix.shape[0]
    if dist:
        args = spf.mpi.scatter_csr(matrix, COMM, owner)
        mine = spf.mpi.owned_rows(n, COMM, owner)
        args["comm"] = COMM
    else:
        args = dict(spf.sparse.csr_args(matrix))
        mine = np.arange(n)
    x = np.zeros(mine.size)
    r = b[mine].copy()
    p = r.copy()
    rr = np.array(float(b @ b))
    scalars = {name: np.zeros(()) for name in ("pq", "rrn", "alpha", "beta")}
    for _ in range(iters):
        kernel(x=x, r=r, q=np.zeros(mine.size), p=p, rr=rr, **scalars, **args)
    return spf.mpi.gather(x, COMM, owner) if dist else x


def check_cg() -> None:
    g = 10
    matrix = poisson(g)
    n = g * g
    b = np.random.default_rng(2).random(n)
    dist = cg_step().compile(target="mpi")  # the benchmark's CG iteration, one computation
    x = cg(dist, matrix, b, 25, True)
    xs = cg(cg_step(distribute=False).compile(), matrix, b, 25, False)
    residual = float(np.linalg.norm(b - matrix @ x) / np.linalg.norm(b))
    stats = dist.exchange_stats()
    report(
        f"CG 25 iterations (one computation, {stats['allreduces']} allreduces per iteration) on "
        f"2-D Poisson {g}x{g}: equals serial CG to round-off, residual {residual:.1e}",
        bool(np.allclose(x, xs, rtol=1e-9, atol=1e-12)) and residual < 1e-6,
    )
    # rows with and without ghosts interleave: p is read in place and copied back run by run
    owner = np.random.default_rng(5).integers(0, SIZE, n)
    xo = cg(dist, matrix, b, 25, True, owner)
    report(
        "CG 25 iterations with an owner array: equals serial CG to round-off",
        bool(np.allclose(xo, xs, rtol=1e-9, atol=1e-12)),
    )


# ----------------------------------------------------------------------------- bad input


def expect_error(what: str, call) -> None:
    try:
        call()
    except spf.ArgumentError as err:
        report(f"{what}: ArgumentError ({str(err)[:90]}...)", True)
        return
    report(f"{what}: no error", False)


def bad_input() -> None:
    k = spmv_dist("int32")
    matrix = poisson(6)
    n = 36
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(n, COMM)
    x = np.ones(mine.size)

    def sizes() -> None:
        k(comm=COMM, y=np.zeros(mine.size), x=x, **{**args, "N": n + (RANK == SIZE - 1)})

    expect_error("N differs on the last rank", sizes)

    def not_partition() -> None:
        owner = np.zeros(n, dtype=np.int64)
        owner[3] = SIZE if RANK == 0 else 0
        k(comm=COMM, y=np.zeros(mine.size), x=x, owner=owner, **args)

    expect_error("owner array with a rank outside the job on rank 0", not_partition)

    def other_owner() -> None:
        owner = np.zeros(n, dtype=np.int64)
        owner[RANK] = SIZE - 1  # a partition on each rank, but not the same one
        rows = spf.mpi.owned_rows(n, COMM, owner)
        own_args = spf.mpi.scatter_csr(matrix, COMM, owner)
        k(comm=COMM, y=np.zeros(rows.size), x=np.ones(rows.size), **own_args)

    if SIZE > 1:
        expect_error("ranks pass different owner arrays", other_owner)

    def dtype() -> None:
        k(
            comm=COMM,
            y=np.zeros(mine.size, dtype=np.float32 if RANK == 0 else np.float64),
            x=x,
            **args,
        )

    expect_error("y float32 on rank 0", dtype)

    def short() -> None:
        values = args["A"][:-1] if RANK == 0 else args["A"]
        k(comm=COMM, y=np.zeros(mine.size), x=x, **{**args, "A": values})

    expect_error("A one entry short of NNZ on rank 0", short)
    other = kernels.spmtv_csr()
    other.distribute_rows("i", data={"y": 0, "x": 0})
    k2 = other.compile(target="mpi")

    def different() -> None:
        (k if RANK % 2 == 0 else k2)(comm=COMM, y=np.zeros(mine.size), x=x, **args)

    if SIZE > 1:
        expect_error("rank 1 calls another computation", different)

    def positional() -> None:
        y = np.zeros(mine.size)
        if RANK == SIZE - 1:  # refused on every rank (it was on this one only: a hang)
            k(y, comm=COMM, x=x, **args)
        else:
            k(comm=COMM, y=y, x=x, **args)

    expect_error("a positional argument on the last rank", positional)
    expect_error(
        "check='yes' (a serial kernel refuses it)",
        lambda: k(comm=COMM, y=np.zeros(mine.size), x=x, check="yes", **args),
    )
    owner = (np.arange(n) * SIZE // n).astype(np.int64)
    own_args = spf.mpi.scatter_csr(matrix, COMM, owner)
    rows = spf.mpi.owned_rows(n, COMM, owner)
    k(comm=COMM, y=np.zeros(rows.size), x=np.ones(rows.size), check=False, **own_args)
    kept = k._plan is not None and any(a is own_args["col"] for a in k._plan.keep)
    report(f"an unchecked plan keeps the index arrays its key addresses: {kept}", kept)


def repeated_calls() -> None:
    """Calls with the same arrays reuse the last call's checked arguments (and agree inside
    the executor): the result of each equals the first's bitwise; an index array changed in
    place is re-inspected with check=True; after a good call, a bad global size on one rank
    while the others repeat the call raises on every rank, and a new index array on one rank
    re-plans on every rank; an array made read-only on one rank still raises everywhere."""
    k = spmv_dist("int32")
    matrix = poisson(7)
    n = 49
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(n, COMM)
    x_all = np.random.default_rng(5).random(n)
    x, y = x_all[mine].copy(), np.zeros(mine.size)
    k(comm=COMM, y=y, x=x, **args)
    first = y.copy()
    same = True
    for _ in range(3):
        y[:] = 0.0
        k(comm=COMM, y=y, x=x, **args)
        same = same and bool(np.array_equal(y, first))
    report("repeated calls with the same arrays: bitwise equal to the first call", same)
    col = args["col"]
    col[:] = (col + 1) % n  # in place: the same object and address, other columns
    y[:] = 0.0
    k(comm=COMM, y=y, x=x, **args)
    local = sp.csr_array((args["A"], col, args["rowptr"]), shape=(mine.size, n))
    report(
        "an index array changed in place, check=True: re-inspected, equals scipy",
        bool(np.allclose(y, local @ x_all, rtol=1e-14, atol=0.0)),
    )

    y[:] = 0.0
    k(comm=COMM, y=y, x=x, **args)  # a good call: repeats of it agree inside the executor

    def later_mismatch() -> None:
        k(comm=COMM, y=y, x=x, **{**args, "N": n + (RANK == 0)})  # the others repeat it

    expect_error("N differs on rank 0 after a good call the others repeat", later_mismatch)
    moved = (col + 3) % n if RANK == 0 else col  # rank 0 alone: a new index array
    y[:] = 0.0
    k(comm=COMM, y=y, x=x, **{**args, "col": moved})
    local = sp.csr_array((args["A"], moved, args["rowptr"]), shape=(mine.size, n))
    report(
        "a new index array on rank 0 while the others repeat their call: re-planned, equals scipy",
        bool(np.allclose(y, local @ x_all, rtol=1e-14, atol=0.0)),
    )

    def read_only() -> None:
        y.flags.writeable = RANK != 0
        k(comm=COMM, y=y, x=x, **args)

    expect_error("y made read-only on rank 0 after repeated calls", read_only)
    y.flags.writeable = True
    k(comm=COMM, y=y, x=x, **args)
    k(comm=COMM, y=y, x=x, **args)  # a repeat of a good call again

    def reshaped() -> None:
        if RANK == 0:
            x.shape = (1, x.size)  # in place: the same object
        k(comm=COMM, y=y, x=x, **args)

    expect_error("x reshaped in place on rank 0 after repeated calls", reshaped)
    x.shape = (x.size,)

    def aliased() -> None:
        k(comm=COMM, y=x if RANK == 0 else y, x=x, **args)  # restrict, and x is read

    expect_error("y and x the same array on rank 0", aliased)
    # an input only read may be read-only (the executor's compact buffers are its own)
    frozen = {**args, "x": x.copy()}
    for value in frozen.values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    y[:] = 0.0
    k(comm=COMM, y=y, x=frozen["x"], **{a: v for a, v in frozen.items() if a != "x"})
    want = np.zeros(mine.size)  # this rank's rows (col was changed in place above)
    serial(kernels.spmv_csr(), y=want, x=x_all, **{**args, "N": mine.size})
    report(
        "read-only x, rowptr, col and A: bitwise equal to the serial kernel",
        bool(np.array_equal(y, want)),
    )


def parallel_rows() -> None:
    """A distributed kernel whose rows run in an OpenMP parallel loop: bitwise equal to the
    serial kernel, and ``last_threads`` is the team of the call, repeated or not."""
    from spf.runtime.threads import openmp_threads

    comp = kernels.spmv_csr()
    comp.stmts[0].parallelize("i")
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    k = comp.compile(target="mpi")
    matrix = poisson(9)
    args = spf.mpi.scatter_csr(matrix, COMM)
    mine = spf.mpi.owned_rows(81, COMM)
    x_all = np.random.default_rng(6).random(81)
    want = np.zeros(81)  # y += A x twice, by the single-process kernel
    one = kernels.spmv_csr().compile()
    for _ in range(2):
        one(y=want, x=x_all, **spf.sparse.csr_args(matrix))
    teams = []
    equal = True
    for n in (2, 1, 2):
        with openmp_threads(n):
            y = np.zeros(mine.size)
            k(comm=COMM, y=y, x=x_all[mine].copy(), **args)
            teams.append(k.last_threads)
            k(comm=COMM, y=y, x=x_all[mine].copy(), **args)  # new x objects: a full call
            equal = equal and bool(np.array_equal(y, want[mine]))
            y[:] = 0.0
            xl = x_all[mine].copy()
            k(comm=COMM, y=y, x=xl, **args)
            k(comm=COMM, y=y, x=xl, **args)  # a repeat
            teams.append(k.last_threads)
            equal = equal and bool(np.array_equal(y, want[mine]))
    report(
        f"parallel rows: bitwise equal to serial; last_threads is each call's team ({teams})",
        equal and teams == [2, 2, 1, 1, 2, 2],
    )


def main() -> None:
    spmv_cases(sys.argv[1:])
    repeated_calls()
    parallel_rows()
    spmtv_and_dot()
    check_jacobi()
    check_cg()
    bad_input()
    if FAILED:
        raise SystemExit(f"check_distributed: {len(FAILED)} check(s) failed")


if __name__ == "__main__":
    main()
