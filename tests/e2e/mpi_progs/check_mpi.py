"""Run under ``mpiexec -n P`` by tests/e2e/test_mpi.py: every target-"mpi" check on real ranks.

Each rank compares its result with the sequential one (numpy / scipy on the whole problem, and
the sequential blur compiled for target "c"; the shift of ``mpi_shift.py`` with rank loops
of one iteration; the two-row halos of ``mpi_rows.py`` against numpy) and prints
``rank <r> ok: <check>`` per check; any failure raises, so the job exits non-zero. Rank 0
compiles each kernel first and the others then load it from the (shared, per-test) cache. Usage: ``check_mpi.py <repo root>``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

sys.path.insert(0, str(Path(sys.argv[1]) / "examples"))

from typing import TYPE_CHECKING

import mpi_blur
import mpi_dscale
import mpi_spmv

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mpi_rows
import mpi_shift
from idle_barrier import barrier

from spf.errors import ArgumentError

if TYPE_CHECKING:
    import spf
    from spf.runtime import Kernel

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


def ok(what: str) -> None:
    print(f"rank {RANK} ok: {what}", flush=True)


def expect_error(call: Callable[[], object], message: str) -> None:
    try:
        call()
    except ArgumentError as err:
        if message not in str(err):
            raise AssertionError(f"expected {message!r} in: {err}") from err
    else:
        raise AssertionError(f"no ArgumentError ({message})")


def compiled(make: Callable[[], spf.Computation], target: str = "mpi") -> Kernel:
    """Rank 0 builds, then every other rank loads the cached library."""
    if RANK == 0:
        kernel = make().compile(target=target)
    barrier(COMM)
    if RANK != 0:
        kernel = make().compile(target=target)
    assert kernel.compiler_output.strip() == "", kernel.compiler_output  # -Wall -Wextra clean
    return kernel


def check_dscale() -> None:
    kernel = compiled(mpi_dscale.dscale)
    assert kernel.signature.startswith("void dscale(MPI_Comm comm, int64_t P, double"), kernel
    a = np.ones((4, 8))
    kernel(comm=COMM, a=a, P=SIZE)
    assert np.array_equal(a, np.full((4, 8), 2.0 + RANK)), a
    # fewer iterations than ranks: ranks >= P run nothing
    b = np.ones((4, 8))
    kernel(comm=COMM, a=b, P=1)
    assert np.array_equal(b, np.full((4, 8), 2.0 if RANK == 0 else 1.0)), b
    ok("dscale")
    for bad, message in (
        ({"a": a, "P": SIZE}, "missing argument comm"),
        ({"comm": 0, "a": a, "P": SIZE}, "expected an mpi4py communicator"),
        ({"comm": MPI.COMM_NULL, "a": a, "P": SIZE}, "COMM_NULL"),
        ({"comm": COMM, "a": a.astype(np.float32), "P": SIZE}, "float32"),
    ):
        expect_error(lambda bad=bad: kernel(**bad), message)
    ok("dscale argument errors")


def check_blur(nl: int, w: int, tiramisu_order: bool = False) -> None:
    kernel = compiled(lambda: mpi_blur.blur(tiramisu_order=tiramisu_order))
    label = " tiramisu-order" if tiramisu_order else ""
    seq = compiled(lambda: mpi_blur.blur(distributed=False), target="c")
    rng = np.random.default_rng(nl * 1000 + w)
    img = rng.random((SIZE * nl + 2, w))  # the same image on every rank
    a = mpi_blur.local_block(img, RANK, nl, SIZE)
    bx, out = np.zeros((nl + 2, w)), np.full((nl, w), -1.0)
    kernel(comm=COMM, a=a, bx=bx, out=out, P=SIZE, NL=nl, W=w)
    # the sequential result: the same two stages over the whole image, and numpy
    whole = np.full((SIZE * nl, w), -1.0)
    seq(a=img.copy(), bx=np.zeros_like(img), out=whole, NL=SIZE * nl, W=w)
    mine = slice(RANK * nl, (RANK + 1) * nl)
    assert np.array_equal(out, whole[mine]), f"blur {nl}x{w}: differs from the sequential run"
    assert np.allclose(out[:, 1:-1], mpi_blur.global_blur(img)[mine])
    assert np.all(out[:, [0, -1]] == -1.0)  # columns outside the domain untouched
    ok(f"blur{label} nl={nl} w={w}")
    if tiramisu_order:
        return
    # P = 1 on more ranks: the scanner drops the one-iteration rank loop; only rank 0 runs
    img1 = img[: nl + 2].copy()
    out1 = np.full((nl, w), -1.0)
    kernel(comm=COMM, a=img1, bx=np.zeros((nl + 2, w)), out=out1, P=1, NL=nl, W=w)
    if RANK == 0:
        assert np.allclose(out1[:, 1:-1], mpi_blur.global_blur(img[: nl + 2]))
    else:
        assert np.all(out1 == -1.0), "a rank outside the distributed loop ran it"
    ok(f"blur P=1 nl={nl} w={w}")
    # a bad argument on the last rank raises on every rank (the others used to wait forever
    # for the halo rows it never sent)
    bad = a.astype(np.float32) if RANK == SIZE - 1 else a
    expect_error(
        lambda: kernel(comm=COMM, a=bad, bx=bx, out=out, P=SIZE, NL=nl, W=w), "got float32"
    )
    ok(f"blur float32 on the last rank: ArgumentError on every rank nl={nl} w={w}")
    # P - 1 on the last rank: it would skip the halo its neighbour waits for (a hang)
    fewer = SIZE - (RANK == SIZE - 1)
    expect_error(
        lambda: kernel(comm=COMM, a=a, bx=bx, out=out, P=fewer, NL=nl, W=w),
        "different values of parameter P",
    )
    ok(f"blur P - 1 on the last rank: ArgumentError on every rank nl={nl} w={w}")
    # check=False makes no agreement (no blocking collective) and gives the same rows
    again = np.full((nl, w), -1.0)
    kernel(comm=COMM, a=a, bx=bx, out=again, P=SIZE, NL=nl, W=w, check=False)
    assert np.array_equal(again, out), f"blur {nl}x{w}: check=False differs"


def check_spmv(n: int, m: int, index_dtype: str) -> None:
    kernel = compiled(lambda: mpi_spmv.spmv(index_dtype))
    matrix = sp.random_array((n, m), density=0.05, format="csr", rng=n + m).tolil()
    if n > 2:
        matrix[1, :] = 0  # an empty row
    matrix = sp.csr_array(matrix)
    x = np.random.default_rng(m).random(m)
    args = mpi_spmv.local_args(COMM, matrix, x, index_dtype)
    kernel(**args)
    lo, hi = mpi_spmv.row_blocks(n, SIZE)[RANK]
    assert np.allclose(args["y"], (matrix @ x)[lo:hi]), f"spmv {n}x{m} {index_dtype}: wrong y"
    ok(f"spmv n={n} m={m} {index_dtype}")


def check_shift(p: int, n: int) -> None:
    """Rank loops of one iteration (``q = 0`` split off the receive's ``1 <= q < P``, and the
    whole loop when ``P == 1``) run on their rank only."""
    kernel = compiled(mpi_shift.shift)
    x, h, y = mpi_shift.inputs(RANK, n)
    h0, y0 = h.copy(), y.copy()
    kernel(comm=COMM, x=x, h=h, y=y, P=p, N=n)
    want = mpi_shift.expected(RANK, p, n)
    if want is None:
        assert np.array_equal(y, y0), f"shift P={p}: rank {RANK} >= P ran"
        assert np.array_equal(h, h0), f"shift P={p}: rank {RANK} >= P received"
    else:
        assert np.allclose(y, want), f"shift P={p} n={n}: wrong y"
    ok(f"shift P={p} n={n}")


def check_rows(nl: int, w: int) -> None:
    """Halos of two whole rows, one message of ``2*W`` consecutive elements each way."""
    kernel = compiled(mpi_rows.rows)
    a = mpi_rows.block(RANK, SIZE, nl, w)
    out = np.full((nl, w), -1.0)
    kernel(comm=COMM, a=a, out=out, P=SIZE, NL=nl, W=w)
    assert np.allclose(out, mpi_rows.expected(RANK, SIZE, nl, w)), f"rows nl={nl} w={w}"
    ok(f"rows2 nl={nl} w={w}")


def main() -> None:
    check_dscale()
    for nl, w in ((2, 5), (6, 3)):
        check_rows(nl, w)
    for p in sorted({SIZE, 1, 2}):
        check_shift(p, 7)
    check_shift(SIZE, 0)
    for nl, w in ((5, 7), (1, 3), (16, 33)):
        check_blur(nl, w)
    check_blur(5, 7, tiramisu_order=True)  # stages created first, the exchange ordered later
    for n, m, dtype in ((37, 29, "int32"), (40, 41, "int64"), (3, 5, "int32"), (SIZE, 1, "int64")):
        check_spmv(n, m, dtype)
    COMM.Barrier()
    ok("all")


if __name__ == "__main__":
    main()
