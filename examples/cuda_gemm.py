"""Tiled GEMM on a CUDA grid with shared-memory tiles and barriers (Tiramisu Layers III/IV).

``C += A B``: each block computes a ``T x T`` tile of ``C``. Inside the block loops a
sequential loop ``kk`` walks the ``T``-wide slices of the inner dimension; in each slice one
thread nest loads a tile of ``A`` and one of ``B`` into ``__shared__`` buffers
(``add_buffer(scope="shared")`` + ``store_in``) and a second thread nest multiplies them.
The CUDA printer separates consecutive thread nests by ``__syncthreads()`` and ends each
``kk`` iteration with one, so the GPU runs exactly what the sequential loops mean: every
tile is loaded before anyone multiplies, and every thread has multiplied before the next
slice overwrites it. Loads outside the matrices store zeros; only threads inside ``C``
accumulate.

The dependence check (on by default) proves the mapping legal: shared tiles are private to
each block, so the block loops carry nothing, and within a thread nest no thread reads what
another writes. Runs emulated on the CPU by default; ``--gpu`` runs it on a GPU.
"""

from __future__ import annotations

import sys

import numpy as np

import spf


def build(tile: int = 8) -> spf.Computation:
    """``C[N, M] += A[N, K] @ B[K, M]`` in double precision with ``tile x tile`` blocks."""
    T = tile
    comp = spf.Computation("gemm_shared")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    comp.add_data_space("As", "double", shape=(T, T))
    comp.add_data_space("Bs", "double", shape=(T, T))
    tiles = (
        f"0 <= bi && {T}*bi < N && 0 <= bj && {T}*bj < M && 0 <= ti < {T} && 0 <= tj < {T} "
        f"&& 0 <= kk && {T}*kk < K"
    )
    # block loops bi, bj; sequential kk; thread nest 0 (ti, tj): the loads; thread nest 1
    # (ti, tj, then k sequential per thread): the multiplication
    load_a = comp.add_stmt(
        spf.Stmt(
            f"$As$(ti,tj) = ({T}*bi+ti < N && {T}*kk+tj < K) ? $A$({T}*bi+ti, {T}*kk+tj) : 0.0;",
            f"{{[bi,bj,kk,ti,tj]: {tiles}}}",
            "{[bi,bj,kk,ti,tj]->[0,bi,0,bj,0,kk,0,ti,0,tj,0,0,0]}",
        )
    )
    load_b = comp.add_stmt(
        spf.Stmt(
            f"$Bs$(ti,tj) = ({T}*kk+ti < K && {T}*bj+tj < M) ? $B$({T}*kk+ti, {T}*bj+tj) : 0.0;",
            f"{{[bi,bj,kk,ti,tj]: {tiles}}}",
            "{[bi,bj,kk,ti,tj]->[0,bi,0,bj,0,kk,0,ti,0,tj,1,0,0]}",
        )
    )
    multiply = comp.add_stmt(
        spf.Stmt(
            f"$C$({T}*bi+ti, {T}*bj+tj) += $As$(ti,k) * $Bs$(k,tj);",
            f"{{[bi,bj,kk,ti,tj,k]: {tiles} && 0 <= k < {T} && {T}*bi+ti < N && {T}*bj+tj < M}}",
            "{[bi,bj,kk,ti,tj,k]->[0,bi,0,bj,0,kk,1,ti,0,tj,0,k,0]}",
        )
    )
    load_a.store_in(comp.add_buffer("sA", (T, T), "double", scope="shared"), ["ti", "tj"])
    load_b.store_in(comp.add_buffer("sB", (T, T), "double", scope="shared"), ["ti", "tj"])
    for s in (load_a, load_b, multiply):
        s.gpu(("bi", "bj"), ("ti", "tj"))
    return comp


def main(argv: list[str]) -> None:
    emulate = "--gpu" not in argv
    comp = build()
    print(comp.loop_structure())
    source = comp.codegen("cuda")
    print(f"{source.count('__syncthreads();')} barriers, shared tiles:")
    print("\n".join(line for line in source.splitlines() if "__shared__" in line))
    kernel = comp.compile(target="cuda", emulate=emulate)
    rng = np.random.default_rng(2)
    for n, m, k in ((1, 1, 1), (8, 8, 8), (13, 17, 11), (33, 20, 45)):
        A = rng.random((n, k))
        B = rng.random((k, m))
        C = rng.random((n, m))
        expected = C + A @ B
        kernel(A=A, B=B, C=C)
        assert np.allclose(C, expected), f"GEMM wrong for N={n}, M={m}, K={k}"
    where = "emulated on the CPU" if emulate else "on the GPU"
    print(f"shared-tile GEMM {where} matches numpy (partial tiles included)")


if __name__ == "__main__":
    main(sys.argv[1:])
