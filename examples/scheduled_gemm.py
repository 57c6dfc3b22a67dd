"""GEMM scheduled Tiramisu-style: loops interchanged, tiled (full tiles scanned apart from
partial ones, so their inner loops have constant bounds), vectorized with a scalar remainder
and parallelized; the generated C is printed, compiled, run and checked against numpy.
"""

from __future__ import annotations

import time

import numpy as np

import spf
from spf import kernels


def scheduled() -> spf.Computation:
    comp = kernels.gemm()  # C[i, j] += A[i, k] * B[k, j]
    s = comp.stmt("s0")
    s.interchange("j", "k")  # i, k, j: B and C rows are read contiguously
    s.tile("i", "k", 32, 64, "i0", "k0", "i1", "k1")
    s.vectorize("j", 8)  # j0 and j1 [vector(8)], plus the scalar remainder
    s.parallelize("i0")
    return comp


def main() -> None:
    comp = scheduled()
    comp.check_legality()
    print(comp.trace.as_python())
    print(comp.loop_structure())
    print(comp.codegen())
    kernel = comp.compile()
    rng = np.random.default_rng(1)
    for n, k, m in [(37, 70, 29), (64, 64, 64), (1, 3, 9), (250, 130, 190)]:
        A, B = rng.random((n, k)), rng.random((k, m))
        C = np.zeros((n, m))
        start = time.perf_counter()
        kernel(C=C, A=A, B=B)
        took = time.perf_counter() - start
        assert np.allclose(C, A @ B), (n, k, m)
        print(f"{n}x{k} @ {k}x{m}: matches numpy ({took * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
