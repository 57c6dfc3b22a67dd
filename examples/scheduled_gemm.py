"""GEMM scheduled Tiramisu-style: loops interchanged, tiled (full tiles scanned apart from
partial ones, so their inner loops have constant bounds), vectorized with a scalar remainder
and parallelized; the generated C is printed, compiled, run and checked against numpy.

Then BLIS's packed GEMM from commands only (``packed()``, what ``spf bench`` times): blocked
for the caches, B packed into a KC x NC panel of NR-wide slivers and A into an MC x KC block
of MR-high slivers (``cache_read``, Layer III), and an MR x NR register micro-kernel by
unroll-and-jam (``vectorize`` + ``unroll``).
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


def packed(
    mr: int = 6, nr: int = 32, vec: int = 8, kc: int = 256, mc: int = 96, nc: int = 1536
) -> spf.Computation:
    """BLIS's loops ``j0, k0, i0, j2, i2, k1, i3, j3`` with both operands packed."""
    comp = kernels.gemm()
    s = comp.stmt("s0")
    s.split("j", nc, "j0", "jj")
    s.split("jj", nr, "j2", "j3")
    s.split("k", kc, "k0", "k1")
    s.split("i", mc, "i0", "ii")
    s.split("ii", mr, "i2", "i3")
    for pos, name in enumerate(("j0", "k0", "i0", "j2", "i2", "k1", "i3", "j3")):
        if s.loops[pos] != name:
            s.interchange(s.loops[pos], name)
    # B's KC x NC panel as NC/NR slivers of KC x NR: the micro-kernel reads them contiguously
    comp.cache_read("B", at=(s, "k0"), layout=["j2", "k1", "j3"])
    comp.cache_read("A", at=(s, "i0"), layout=["i2", "k1", "i3"])
    comp.buffer("A_pack_buf").allocate_at(s, "i0")  # each i0 (each thread) packs its own
    s.vectorize("j3", vec)  # j30, j31: the register tile of C is mr x (nr / vec) vectors
    s.unroll("i3", mr)
    s.unroll("j30", nr // vec)
    s.parallelize("i0")
    return comp


def check_packed() -> None:
    comp = packed(mr=4, nr=16, kc=64, mc=32, nc=128)
    print(comp.trace.as_python())
    print(comp.loop_structure())
    kernel = comp.compile()
    rng = np.random.default_rng(2)
    for n, k, m in [(37, 70, 29), (130, 200, 150), (1, 1, 1), (64, 64, 64)]:
        A, B = rng.random((n, k)), rng.random((k, m))
        C = np.zeros((n, m))
        kernel(C=C, A=A, B=B)
        assert np.allclose(C, A @ B), (n, k, m)
        print(f"packed {n}x{k} @ {k}x{m}: matches numpy")


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
    check_packed()


if __name__ == "__main__":
    main()
