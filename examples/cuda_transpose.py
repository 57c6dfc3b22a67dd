"""Dense transpose on a CUDA grid: ``tile_gpu`` maps 16x16 tiles to blocks and threads.

Runs the generated CUDA source on the CPU through spf's emulator (``emulate=True``), so it
works without a GPU; ``python cuda_transpose.py --gpu`` runs the same source on a GPU
(``compile(target="cuda")``: nvcc when it is on PATH, else pycuda or CuPy). Sizes that are
not multiples of 16 leave partial blocks, which the kernel's guards handle.
"""

from __future__ import annotations

import sys

import numpy as np

import spf


def build(tile: int = 16) -> spf.Computation:
    """``B = A^T`` for ``N x N`` float arrays, tiled ``tile x tile`` onto the GPU."""
    comp = spf.Computation("transpose")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);",
            "{[i,j]: 0 <= i < N && 0 <= j < N}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    s.tile_gpu("i", "j", tile, tile)
    return comp


def main(argv: list[str]) -> None:
    emulate = "--gpu" not in argv
    comp = build()
    print(comp.loop_structure())
    source = comp.codegen("cuda")
    kernel_line = next(line for line in source.splitlines() if "__global__" in line)
    print(kernel_line)
    kernel = comp.compile(target="cuda", emulate=emulate)
    rng = np.random.default_rng(0)
    for n in (1, 16, 37, 100):
        A = rng.random((n, n), dtype=np.float32)
        B = np.zeros((n, n), dtype=np.float32)
        kernel(A=A, B=B)
        assert np.array_equal(B, A.T), f"transpose wrong for N={n}"
    where = "emulated on the CPU" if emulate else "on the GPU"
    print(f"transpose {where} matches numpy for N = 1, 16, 37, 100")


if __name__ == "__main__":
    main(sys.argv[1:])
