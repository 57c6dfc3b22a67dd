"""The SpMV of every built-in format with distributed rows (API.md §19) on real ranks.

Run by tests/e2e/test_mpi_distributed.py as ``mpiexec -n P python -m mpi4py
check_formats.py``: for CSR, ELL, SELL(4, 1), SELL(2, 4), COO and CSC, ``spf.mpi.spmv(fmt)``
on the arguments ``spf.mpi.scatter`` gives each rank, against the single-process kernel of the
same format on the whole matrix: bitwise for the row formats and COO, to round-off for CSC
(bitwise on one rank), on a random matrix with empty rows (int32 and int64 indices), an odd
non-square one, one row and an empty matrix (ranks without rows), an owner array; the
exchange counts against CSR's; COO entries held by ranks other than their rows' owners; a
communicator freed through another reference. Each kernel is compiled once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from idle_barrier import barrier
from mpi4py import MPI

import spf
import spf.mpi
from spf.formats import BCSR, BDIA, SELL, builtin
from spf.mpi_formats import blocks

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
FAILED: list[str] = []
FORMATS = [
    builtin("CSR"), builtin("ELL"), SELL(4, 1), SELL(2, 4), builtin("COO"), builtin("CSC"),
    builtin("DIA"), BDIA(4), BCSR(2, 2), BCSR(3, 2),
]  # fmt: skip


def report(line: str, ok: bool) -> None:
    if not spf.mpi.report(COMM, line, ok=ok):
        FAILED.append(line)


def canonical(matrix: sp.sparray) -> sp.csr_array:
    out = sp.csr_array(matrix)
    out.sum_duplicates()
    out.sort_indices()
    return out


def cases() -> list[tuple[str, sp.csr_array, str, object]]:
    rand = canonical(sp.random_array((37, 37), density=0.08, rng=4))
    owner = np.random.default_rng(3).integers(0, SIZE, 37)
    return [
        ("random 37x37, empty rows", rand, "int32", None),
        ("random 37x37, empty rows", rand, "int64", None),
        ("odd 23x31", canonical(sp.random_array((23, 31), density=0.15, rng=7)), "int32", None),
        ("one row", canonical(sp.csr_array(np.array([[2.0]]))), "int32", None),
        ("empty 5x5", sp.csr_array((5, 5)), "int32", None),
        ("random 37x37, owner array", rand, "int32", owner),
    ]


def run(kernel: object, fmt: object, matrix: sp.csr_array, dtype: str, owner: object) -> tuple:
    """The gathered y, y's and x's global values (BCSR: vectors of whole blocks, split by
    block, ``owner`` one rank per block row)."""
    r, c = blocks(fmt)
    n, m = r * -(-matrix.shape[0] // r), c * -(-matrix.shape[1] // c)
    if owner is not None and r > 1:
        owner = owner[: n // r]
    x = np.random.default_rng(n + 7).random(m)
    y0 = np.random.default_rng(n + 8).random(n)
    args = spf.mpi.scatter(matrix, fmt, COMM, owner, index_dtype=dtype)
    y = np.ascontiguousarray(y0[spf.mpi.owned_rows(n, COMM, owner, block=r)])
    x_loc = np.ascontiguousarray(x[spf.mpi.owned_rows(m, COMM, owner, block=c)])
    kernel(comm=COMM, y=y, x=x_loc, **args)
    return spf.mpi.gather(y, COMM, owner, block=r), y0, x


def compiled() -> tuple[dict[tuple[str, str], object], dict[tuple[str, str], object]]:
    """Each format's serial and distributed kernel for both index types, compiled by rank 0
    first; the other ranks then load them from the shared cache (SPF_CACHE_DIR) instead of
    running the same compiles side by side."""
    if RANK:
        barrier(COMM)
    serial: dict[tuple[str, str], object] = {}
    dist: dict[tuple[str, str], object] = {}
    for fmt in FORMATS:
        for dtype in ("int32", "int64"):
            dist[fmt.name, dtype] = spf.mpi.spmv(fmt, index_dtype=dtype).compile(target="mpi")
            serial[fmt.name, dtype] = spf.kernels.spmv(fmt, index_dtype=dtype).compile()
    if not RANK:
        barrier(COMM)
    return serial, dist


def check_formats() -> None:
    serial, dist = compiled()
    csr_stats: dict[str, dict[str, int]] = {}
    for fmt in FORMATS:
        for name, matrix, dtype, owner in cases():
            if owner is not None and fmt.name == "BCSR3x2":
                continue  # 13 block rows, 19 block columns: an owner array splits both
            key = (fmt.name, dtype)
            whole, y0, x = run(dist[key], fmt, matrix, dtype, owner)
            want = y0.copy()
            if matrix.shape[0]:
                serial[key](y=want, x=x, **fmt.args(matrix, dtype))
            stats = dist[key].exchange_stats()
            label = f"{fmt.name} {name} ({dtype})"
            if fmt.name == "CSR":
                csr_stats[label[4:]] = stats
            exact = fmt.name != "CSC" or SIZE == 1
            same = bool(np.array_equal(whole, want))
            close = bool(np.allclose(whole, want, rtol=1e-13, atol=1e-13))
            report(
                f"{label}: {'bitwise equal' if same else 'equal to round-off'} to the serial "
                f"kernel; received {stats['entries_received']} entries in "
                f"{stats['messages_received']} messages",
                same if exact else close,
            )
            if fmt.name in ("ELL", "SELL4_1", "SELL2_4", "COO"):
                report(
                    f"{label}: exchanges what CSR exchanges (the ghosts of x alone)",
                    counts(stats) == counts(csr_stats[label[len(fmt.name) + 1 :]]),
                )
            if fmt.name.startswith("BCSR"):
                report(
                    f"{label}: receives whole blocks of x: the block columns of its blocks "
                    "it does not own",
                    stats["entries_received"] == block_ghosts(fmt, matrix, dtype, owner),
                )
            if fmt.name in ("DIA", "BDIA4"):
                report(
                    f"{label}: receives the image of its rows' diagonals minus its own entries",
                    stats["entries_received"] == diagonal_ghosts(fmt.name, matrix, dtype, owner),
                )
            if fmt.name == "CSC" and owner is None:
                report(
                    f"{label}: sends one partial sum per row of another rank its columns touch",
                    stats["entries_sent"] == csc_remote_rows(matrix),
                )
    coo_anywhere(dist[("COO", "int32")], serial[("COO", "int32")])


def counts(stats: dict[str, int]) -> tuple[int, ...]:
    return tuple(stats[k] for k in ("messages_sent", "entries_sent", "messages_received",
                                    "entries_received"))  # fmt: skip


def block_ghosts(fmt: object, matrix: sp.csr_array, dtype: str, owner: object) -> int:
    r, c = blocks(fmt)
    if owner is not None:
        owner = owner[: -(-matrix.shape[0] // r)]
    args = spf.mpi.scatter(matrix, fmt, COMM, owner, index_dtype=dtype)
    mine = spf.mpi.owned_rows(args["MB"], COMM, owner)
    return c * int(np.setdiff1d(np.unique(args["bcol"]), mine).size)


def diagonal_ghosts(name: str, matrix: sp.csr_array, dtype: str, owner: object) -> int:
    """The columns the rank's DIA / BDIA slots read inside the matrix, less its own."""
    n, m = matrix.shape
    fmt = builtin("DIA") if name == "DIA" else BDIA(4)
    args = spf.mpi.scatter(matrix, fmt, COMM, owner, index_dtype=dtype)
    rows = spf.mpi.owned_rows(n, COMM, owner).size
    if name == "DIA":
        cols = np.arange(rows)[None, :] + args["offsets"][:, None]
    else:
        dptr, doff = args["dptr"], args["doff"]
        block = np.repeat(np.arange(dptr.size - 1), np.diff(dptr))
        row = 4 * block[:, None] + np.arange(4)[None, :]
        cols = np.where(row < rows, row + doff[:, None], -1)
    cols = cols[(cols >= 0) & (cols < m)]
    return int(np.setdiff1d(np.unique(cols), spf.mpi.owned_rows(m, COMM, owner)).size)


def csc_remote_rows(matrix: sp.csr_array) -> int:
    n, m = matrix.shape
    cols = spf.mpi.owned_rows(m, COMM)
    rows = np.unique(matrix.tocsc()[:, cols].tocoo().row)
    mine = spf.mpi.owned_rows(n, COMM)
    return int(np.setdiff1d(rows, mine).size)


def coo_anywhere(kernel: object, serial: object) -> None:
    """COO entries in contiguous blocks of the entry list (a file read in slices), not by
    row: the entries of other ranks' rows are summed at their owners."""
    matrix = canonical(sp.random_array((41, 41), density=0.1, rng=11))
    full = builtin("COO").args(matrix, "int32")
    mine = spf.mpi.Partition(full["NNZ"], SIZE).owned(RANK)
    args = {
        "A": full["A"][mine].copy(),
        "row": full["row"][mine].copy(),
        "col": full["col"][mine].copy(),
        "N": 41,
        "M": 41,
        "NNZ": int(mine.size),
    }
    x = np.random.default_rng(1).random(41)
    y = np.zeros(spf.mpi.owned_rows(41, COMM).size)
    kernel(comm=COMM, y=y, x=x[spf.mpi.owned_rows(41, COMM)].copy(), **args)
    want = np.zeros(41)
    serial(y=want, x=x, **full)
    report(
        "COO entries in blocks of the entry list: summed at their rows' owners, equal to "
        f"round-off ({kernel.exchange_stats()['entries_sent']} entries sent)",
        bool(np.allclose(spf.mpi.gather(y, COMM), want, rtol=1e-13, atol=1e-13)),
    )


def freed_communicator() -> None:
    """A Dup freed through another Python object holding its handle: ArgumentError, not a
    crash in MPI."""
    kernel = spf.mpi.spmv(builtin("CSR")).compile(target="mpi")
    matrix = canonical(sp.random_array((9, 9), density=0.3, rng=2))
    dup = COMM.Dup()
    args = spf.mpi.scatter(matrix, builtin("CSR"), dup)
    rows = spf.mpi.owned_rows(9, dup)
    kernel(comm=dup, y=np.zeros(rows.size), x=np.ones(rows.size), **args)
    MPI.Intracomm(dup).Free()
    try:
        kernel(comm=dup, y=np.zeros(rows.size), x=np.ones(rows.size), **args)
    except spf.ArgumentError as err:
        report(f"a Dup freed through another reference: ArgumentError ({str(err)[:60]}...)", True)
        return
    report("a Dup freed through another reference: no error", False)


def main() -> None:
    check_formats()
    freed_communicator()
    if FAILED:
        raise SystemExit(f"check_formats: {len(FAILED)} check(s) failed")


if __name__ == "__main__":
    main()
