"""CSR SpMV on a CUDA grid, one row per thread (``split`` + ``gpu``).

The row loop is split into blocks of 32 rows; each thread walks its row's nonzeros. The
index arrays (UFs ``rowptr`` and ``col``) are copied to the device like the data. Runs
emulated on the CPU by default; ``--gpu`` runs it on a GPU.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from spf.kernels import spmv_csr
from spf.sparse import csr_args

if TYPE_CHECKING:
    import spf


def build(rows_per_block: int = 32, index_dtype: str = "int32") -> spf.Computation:
    """``y += A x`` for CSR ``A``; rows ``i = rows_per_block * i0 + i1``, ``i0`` a block."""
    comp = spmv_csr(index_dtype=index_dtype)
    s = comp.stmts[0]
    s.split("i", rows_per_block, "i0", "i1")
    s.gpu(("i0",), ("i1",))
    return comp


def main(argv: list[str]) -> None:
    emulate = "--gpu" not in argv
    comp = build()
    print(comp.loop_structure())
    kernel = comp.compile(target="cuda", emulate=emulate)
    rng = np.random.default_rng(1)
    for n, m in ((0, 4), (1, 1), (70, 50), (300, 200)):
        A = sp.random_array((n, m), density=0.1, format="lil", rng=rng)
        if n > 3:
            A[n // 2, :] = 0  # an empty row
        A = sp.csr_array(A)
        x = rng.random(m)
        y = rng.random(n)
        expected = y + A @ x
        kernel(y=y, x=x, **csr_args(A))
        assert np.allclose(y, expected), f"SpMV wrong for a {n}x{m} matrix"
    where = "emulated on the CPU" if emulate else "on the GPU"
    print(f"CSR SpMV {where} matches scipy (empty rows and an empty matrix included)")


if __name__ == "__main__":
    main(sys.argv[1:])
