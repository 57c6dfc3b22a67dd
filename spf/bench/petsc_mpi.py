"""PETSc's side of ``spf bench --only mpi``: run by the *system* python under its own mpiexec.

``mpiexec -n P /usr/bin/python3 petsc_mpi.py MATRIX.npz ROUNDS CG`` on each rank

1. loads the matrix the bench wrote (``indptr``, ``indices``, ``data`` of a square CSR
   matrix, ``cuts``: the row partition, ``x``: the vector to multiply and CG's right-hand
   side) and takes its rows;
2. builds the ``MPIAIJ`` matrix from them (``createAIJ(csr=...)``: preallocation, insertion,
   assembly, which also sets up ``MatMult``'s scatter) and times it (slowest rank; the
   second of two builds);
3. counts ``MatMult``'s ghosts: the distinct columns of the rank's rows that it does not own
   (the off-diagonal block's columns, what the scatter receives);
4. times ``MatMult`` (``Barrier; t0; MatMult; t1``, slowest rank, median and fastest over
   ``ROUNDS``);
5. when ``CG`` is 1, solves with ``KSPCG`` (no preconditioner, rtol 1e-8, zero initial guess)
   and reports the iteration count and the time per iteration.

``petsc_mpi.py --probe`` exits with 0 when petsc4py can be imported. Rank 0 prints one
``PETSC {json}`` line. This file imports neither spf nor scipy (the system
python has numpy and petsc4py only). Debian's ``python3-petsc4py-real`` puts petsc4py under
``/usr/lib/petscdir``; :func:`petsc_path` finds it when ``import petsc4py`` does not.
"""

from __future__ import annotations

import glob
import importlib
import json
import sys
import time
from typing import Any

import numpy as np

RTOL = 1e-8
PREFIX = "PETSC "
INSTALL = "apt-get install python3-petsc4py-real"


def petsc_path() -> str | None:
    """Where Debian's real-number petsc4py lives, when it is not on the default path."""
    found = sorted(glob.glob("/usr/lib/petscdir/petsc*/*-real/lib/python3/dist-packages"))
    return found[-1] if found else None


def import_petsc4py() -> Any:
    """The ``petsc4py`` package (adds Debian's path when needed); ImportError without it."""
    try:
        petsc4py = importlib.import_module("petsc4py")
    except ImportError:
        path = petsc_path()
        if path is None:
            raise
        sys.path.insert(0, path)
        petsc4py = importlib.import_module("petsc4py")
    return petsc4py


def load_petsc() -> Any:
    """``petsc4py.PETSc``, initialised."""
    petsc4py = import_petsc4py()
    petsc4py.init(sys.argv[:1])
    return importlib.import_module("petsc4py.PETSc")


def gather(petsc: Any, comm: Any, value: float) -> list[float]:
    """Each rank's ``value``, on every rank (through a PETSc vector: the system python has
    no mpi4py)."""
    vec = petsc.Vec().createMPI((1, comm.getSize()), comm=comm)
    vec.setArray([value])
    scatter, every = petsc.Scatter.toAll(vec)
    scatter.scatter(vec, every)
    out = [float(v) for v in every.getArray()]
    for obj in (scatter, every, vec):
        obj.destroy()
    return out


def slowest(petsc: Any, comm: Any, seconds: float) -> float:
    return max(gather(petsc, comm, seconds))


def main(path: str, rounds: int, cg: bool) -> None:
    petsc = load_petsc()
    comm = petsc.COMM_WORLD
    rank = comm.getRank()
    data = np.load(path)
    cuts = data["cuts"]
    lo, hi = int(cuts[rank]), int(cuts[rank + 1])
    indptr, n = data["indptr"], int(cuts[-1])
    first, last = int(indptr[lo]), int(indptr[hi])
    itype = petsc.IntType
    rp = (indptr[lo : hi + 1] - first).astype(itype)
    col = np.ascontiguousarray(data["indices"][first:last], dtype=itype)
    val = np.ascontiguousarray(data["data"][first:last], dtype=petsc.ScalarType)
    x_all = data["x"]

    mat: Any = None
    for _ in range(2):  # the second assembly is timed (the first loads libraries)
        if mat is not None:
            mat.destroy()
        comm.barrier()
        t0 = time.perf_counter()
        mat = petsc.Mat().createAIJ(
            size=((hi - lo, n), (hi - lo, n)), csr=(rp, col, val), comm=comm
        )
        mat.assemble()
        assembly = slowest(petsc, comm, time.perf_counter() - t0)
    start, end = mat.getOwnershipRange()
    _, cols, _ = mat.getValuesCSR()
    ghosts = int(np.unique(cols[(cols < start) | (cols >= end)]).size)

    x, y = mat.createVecs()
    x.setArray(np.ascontiguousarray(x_all[start:end]))
    mat.mult(x, y)  # warm up
    times = []
    for _ in range(rounds):
        comm.barrier()
        t0 = time.perf_counter()
        mat.mult(x, y)
        times.append(slowest(petsc, comm, time.perf_counter() - t0))
    out: dict[str, Any] = {
        "petsc_version": ".".join(map(str, petsc.Sys.getVersion())),
        "ranks": comm.getSize(),
        "assembly_ms": assembly * 1e3,
        "matmult_ms": float(np.median(times)) * 1e3,
        "matmult_fastest_ms": float(np.min(times)) * 1e3,
        "ghosts": [int(g) for g in gather(petsc, comm, ghosts)],
    }
    if cg:
        out.update(solve(petsc, comm, mat, x))
    if rank == 0:
        print(PREFIX + json.dumps(out), flush=True)


def solve(petsc: Any, comm: Any, mat: Any, b: Any) -> dict[str, Any]:
    """KSPCG without a preconditioner from x = 0 to ``RTOL`` (relative to ||b||)."""
    ksp = petsc.KSP().create(comm)
    ksp.setOperators(mat)
    ksp.setType("cg")
    ksp.getPC().setType("none")
    ksp.setTolerances(rtol=RTOL, atol=0.0, max_it=100_000)
    ksp.setInitialGuessNonzero(False)
    ksp.setUp()
    sol = b.duplicate()
    sol.set(0.0)
    comm.barrier()
    t0 = time.perf_counter()
    ksp.solve(b, sol)
    total = slowest(petsc, comm, time.perf_counter() - t0)
    its = int(ksp.getIterationNumber())
    r = b.duplicate()
    mat.mult(sol, r)
    r.aypx(-1.0, b)
    return {
        "cg_iterations": its,
        "cg_ms_per_iteration": total / max(1, its) * 1e3,
        "cg_converged": int(ksp.getConvergedReason()) > 0,
        "cg_residual": float(r.norm() / b.norm()),
    }


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:  # exit status 0 when petsc4py can be imported
        import_petsc4py()
        sys.exit(0)
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1")
