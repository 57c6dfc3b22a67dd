"""Wavefront Gauss-Seidel and ILU(0) by run-time inspection (docs/inspection.md).

``spf.kernels.gauss_seidel_csr`` carries flow dependences (a row reads the new ``x`` of the
rows before it) and anti dependences (it reads the old ``x`` of the rows after it, which
they overwrite); spf's inspector pulls the first kind and pushes the second.
``spf.kernels.ilu0_csr``'s source rows are discovered from its facts (``i = col(k)``). The
script runs Gauss-Seidel sweeps on 2-D Poisson and an ILU(0) factorization (of a SuiteSparse
``.mtx`` file given on the command line, else a random matrix) as wavefronts, checks both
bitwise against the serial kernels, and prints the levels and the times.

Run: ``python examples/wavefront_gs_ilu0.py [matrix.mtx]``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

import spf


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def gauss_seidel(grid: int, sweeps: int) -> None:
    a = spf.sparse.poisson2d(grid)
    n = a.shape[0]
    comp = spf.kernels.gauss_seidel_csr()
    comp.wavefront("i")
    wave, serial = comp.compile(), spf.kernels.gauss_seidel_csr().compile()
    args = spf.sparse.gauss_seidel_args(a)
    t_inspect = timed(lambda: wave.inspect(**args))
    plan = wave.inspect(**args)
    b, x, ref = np.ones(n), np.zeros(n), np.zeros(n)
    t_wave = timed(lambda: [wave(x=x, b=b, plan=plan, **args) for _ in range(sweeps)])
    t_serial = timed(lambda: [serial(x=ref, b=b, **args) for _ in range(sweeps)])
    assert np.array_equal(x, ref), "wavefront Gauss-Seidel differs from the serial sweep"
    residual = float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))
    print(f"Gauss-Seidel on 2-D Poisson {grid}x{grid} ({n} rows): {plan.levels} levels")
    print(
        f"  inspector {t_inspect * 1e3:.2f} ms; {sweeps} sweeps: wavefront {t_wave * 1e3:.2f} ms,"
    )
    print(f"  serial {t_serial * 1e3:.2f} ms; equal bitwise; relative residual {residual:.3e}")


def matrix(argv: list[str]) -> sp.csr_array:
    if len(argv) > 1:
        m = sp.csr_array(spf.sparse.read_matrix_market(argv[1]))
    else:
        r = sp.random_array((5000, 5000), density=1e-3, format="csr", rng=2)
        m = sp.csr_array(r + sp.eye_array(5000) * 8.0)
    m.sum_duplicates()
    m.sort_indices()
    return m


def ilu0(m: sp.csr_array) -> None:
    comp = spf.kernels.ilu0_csr()
    comp.wavefront("i", method="p2p")
    wave, serial = comp.compile(), spf.kernels.ilu0_csr().compile()
    args, ref = spf.sparse.ilu0_args(m), spf.sparse.ilu0_args(m)
    plan = wave.inspect(**{k: v for k, v in args.items() if k != "A"})
    t_wave = timed(lambda: wave(plan=plan, **args))
    t_serial = timed(lambda: serial(**ref))
    assert np.array_equal(args["A"], ref["A"]), "wavefront ILU(0) differs from the serial one"
    print(f"ILU(0) of a {m.shape[0]}x{m.shape[1]} matrix ({m.nnz} nonzeros), p2p waits:")
    print(
        f"  {plan.levels} levels; wavefront {t_wave * 1e3:.2f} ms, serial {t_serial * 1e3:.2f} ms;"
    )
    print("  equal bitwise")


def main(argv: list[str]) -> None:
    gauss_seidel(grid=150, sweeps=10)
    ilu0(matrix(argv))


if __name__ == "__main__":
    main(sys.argv)
