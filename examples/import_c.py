"""Import existing C loops with ``spf.from_c`` (docs/import_c.md), schedule them, run them.

1. A Jacobi-2d stencil with a time loop, written as PolyBench writes it: imported, its loop
   structure printed, compiled unscheduled and compared bitwise with the same C compiled by gcc
   (called through ctypes); then its spatial loops tiled 8x8 with the tile rows in parallel, the
   result again equal to the original.
2. A CSR Gauss-Seidel sweep written the usual way (``int j = col[k]; if (j != i) ...``): the
   index arrays become UFs, the condition on ``col(k)`` a domain constraint; compared with the
   same sweep in numpy.

Run: ``python examples/import_c.py`` (checks its results and fails loudly).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import spf

JACOBI = """
#define TSTEPS 4
#define N 40

void jacobi_2d(double A[N][N], double B[N][N])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < TSTEPS; t++) {
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
#pragma endscop
}
"""

GAUSS_SEIDEL = """
void gauss_seidel(int n, const int *rowptr, const int *col, const int *diag,
                  const double *val, const double *b, double *x)
{
  for (int i = 0; i < n; i++) {
    double sum = b[i];
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
      int j = col[k];
      if (j != i)
        sum -= val[k] * x[j];
    }
    x[i] = sum / val[diag[i]];
  }
}
"""
FLAGS = ["-O2", "-ffp-contract=off"]


def gcc_jacobi(a: np.ndarray, b: np.ndarray) -> None:
    """The original C, compiled by gcc and called through ctypes (in place)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, lib = Path(tmp) / "j.c", Path(tmp) / "libj.so"
        src.write_text(JACOBI)
        subprocess.run(["gcc", *FLAGS, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
        fn = ctypes.CDLL(str(lib)).jacobi_2d
        fn(ctypes.c_void_p(a.ctypes.data), ctypes.c_void_p(b.ctypes.data))


def stencil() -> None:
    comp = spf.from_c(JACOBI)
    print("jacobi-2d imported:")
    print(comp.loop_structure())
    rng = np.random.default_rng(0)
    a0, b0 = rng.random((40, 40)), rng.random((40, 40))
    want_a, want_b = a0.copy(), b0.copy()
    if shutil.which("gcc"):
        gcc_jacobi(want_a, want_b)
    else:
        comp.interpret(A=want_a, B=want_b)
    a, b = a0.copy(), b0.copy()
    comp.compile(cflags=FLAGS)(A=a, B=b)
    assert a.tobytes() == want_a.tobytes(), "unscheduled import differs from the C"
    for s in comp.stmts:  # tile the spatial loops of both sweeps, run the tile rows in parallel
        s.tile("i", "j", 8, 8, "i0", "j0", "i1", "j1").parallelize("i0")
    comp.check_legality()
    print("scheduled: loops of each sweep", comp.stmts[0].loops, "tags", comp.stmts[0].tags)
    a, b = a0.copy(), b0.copy()
    comp.compile(cflags=FLAGS)(A=a, B=b)
    assert a.tobytes() == want_a.tobytes(), "the tiled schedule changed the result"
    print("jacobi-2d: unscheduled and tiled+parallel runs equal the original C bit for bit")


def gauss_seidel() -> None:
    n = 60
    m = sp.random_array((n, n), density=0.1, format="csr", rng=3) + sp.eye_array(n) * n
    m = sp.csr_matrix(m)
    m.sort_indices()
    diag = np.array([m.indptr[i] + list(m.indices[m.indptr[i] : m.indptr[i + 1]]).index(i)
                     for i in range(n)], dtype=np.int32)  # fmt: skip
    comp = spf.from_c(GAUSS_SEIDEL, shapes={"val": ("NNZ",), "b": ("n",), "x": ("n",)})
    print("Gauss-Seidel imported; its statements:")
    for s in comp.stmts:
        print(f"  {s.name}: {s.source}   {s.domain}")
    b = np.linspace(1, 2, n)
    x = np.zeros(n)
    comp.compile()(rowptr=m.indptr, col=m.indices, diag=diag, val=m.data, b=b, x=x, n=n,
                   NNZ=m.nnz)  # fmt: skip
    want = np.zeros(n)
    for i in range(n):  # the same sweep in numpy
        lo, hi = m.indptr[i], m.indptr[i + 1]
        cols, vals = m.indices[lo:hi], m.data[lo:hi]
        off = cols != i
        want[i] = (b[i] - vals[off] @ want[cols[off]]) / m[i, i]
    assert np.allclose(x, want), "Gauss-Seidel differs from numpy"
    print("Gauss-Seidel: one sweep equals numpy's")


if __name__ == "__main__":
    stencil()
    gauss_seidel()
