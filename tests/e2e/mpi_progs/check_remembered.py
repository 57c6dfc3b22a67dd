"""Remembered MPI compiles on real ranks, run by tests/e2e/test_mpi_remembered.py.

``mpiexec -n P python -m mpi4py check_remembered.py MODE``: every rank compiles, for target
"mpi", the EXAMPLES.md ``dscale`` (examples/mpi_dscale.py, a plain MPI kernel), the row-distributed CSR SpMV
(``spf.mpi.spmv``) and the distributed COO SpMV (partial sums sent to the rows' owners), all
ranks at once (``MODE`` ``first``, on an empty cache: they write the same entries side by
side). ``MODE`` ``remembered`` first makes analysis, code generation and every compiler run
(``mpicc`` and its ``--version``) raise, so the compiles must come from the entries the first
job wrote. Each kernel's result is compared with numpy/scipy, and each rank prints what it
checked (``spf.mpi.report``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import spf
import spf.mpi
from spf.formats import builtin

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
import mpi_dscale  # the EXAMPLES.md computation, from examples/

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()


class RefusedError(Exception):
    """Raised by every step a remembered compile must not take."""


def refuse(*_: object, **__: object) -> None:
    raise RefusedError("a remembered compile analysed, generated code or ran a compiler")


def refuse_work() -> None:
    import spf.codegen
    import spf.distributed.kernel
    import spf.runtime.build
    import spf.runtime.compile
    import spf.runtime.mpi

    spf.codegen.generate = refuse  # type: ignore[assignment]
    spf.runtime.compile.bounds_obligations = refuse  # type: ignore[assignment]
    spf.distributed.kernel._generate = refuse  # type: ignore[assignment]
    spf.distributed.kernel.analyse = refuse  # type: ignore[assignment]
    spf.runtime.build._run_compiler = refuse  # type: ignore[assignment]
    spf.runtime.build.compiler_version = refuse  # type: ignore[assignment]
    spf.runtime.mpi.build = refuse  # type: ignore[assignment]


def dscale() -> bool:
    kernel = mpi_dscale.dscale().compile(target="mpi")
    a = np.ones((4, 8))
    kernel(comm=COMM, a=a, P=SIZE)
    return bool(np.array_equal(a, np.full((4, 8), 2.0 + RANK)))


def spmv(name: str) -> bool:
    fmt = builtin(name)
    kernel = spf.mpi.spmv(fmt).compile(target="mpi")
    matrix = sp.random_array((37, 37), density=0.1, rng=5, format="csr")
    x = np.random.default_rng(1).random(37)
    rows = spf.mpi.owned_rows(37, COMM)
    y = np.zeros(rows.size)
    kernel(comm=COMM, y=y, x=np.ascontiguousarray(x[rows]), **spf.mpi.scatter(matrix, fmt, COMM))
    return bool(np.allclose(spf.mpi.gather(y, COMM), matrix @ x, rtol=1e-13, atol=1e-13))


def main() -> None:
    mode = sys.argv[1]
    if mode == "remembered":
        refuse_work()
    checks = {"dscale": dscale(), "CSR SpMV": spmv("CSR"), "COO SpMV": spmv("COO")}
    line = ", ".join(f"{k} {'equal' if v else 'WRONG'}" for k, v in checks.items())
    if not spf.mpi.report(COMM, f"{mode}: {line}", ok=all(checks.values())):
        raise SystemExit("a kernel's result is wrong")


if __name__ == "__main__":
    main()
