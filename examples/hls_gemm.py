"""A pipelined GEMM for Vitis HLS, checked by C simulation (no Vitis needed).

``C += A·B`` with the loops reordered to ``i, k, j`` so that consecutive ``j`` iterations
update different elements of ``C``, and the ``j`` loop pipelined with initiation interval 1.
The bounds ``N, M, K <= 256`` size the trip-count pragmas and the m_axi port depths.

Run ``python examples/hls_gemm.py [out.cpp]``: prints the loop nest with its pragmas, checks
their placement, runs the C simulation on random matrices against numpy and, given a path,
writes the Vitis HLS source there (add it to a Vitis HLS project with top function ``gemm``).
"""

from __future__ import annotations

import sys

import numpy as np

import spf.kernels
from spf.codegen.hls import generate
from spf.codegen.hls_check import check
from spf.runtime.hls import compile_hls

BOUNDS = {"N": 256, "M": 256, "K": 256}


def pipelined_gemm() -> spf.Computation:
    comp = spf.kernels.gemm()
    s = comp.stmts[0]
    s.interchange("j", "k")  # i, k, j: no dependence between consecutive j iterations
    s.pipeline("j", ii=1)  # #pragma HLS PIPELINE II=1 opens the j loop
    return comp


def main() -> None:
    comp = pipelined_gemm()
    print(comp.loop_structure())
    source = generate(comp, hls_bounds=BOUNDS)
    report = check(source)  # raises if a pragma is misplaced
    for loop in report.loops:
        pragmas = "; ".join(p.text.removeprefix("#pragma HLS ") for p in loop.pragmas)
        print(f"{'  ' * len(loop.parents)}loop {loop.var}: {pragmas}")
    ports = ", ".join(f"{p.get('port')}:{p.flags[0]}" for p in report.functions[0].interfaces)
    print(f"interfaces: {ports}")

    kernel = compile_hls(comp, hls_bounds=BOUNDS)  # g++ C simulation of the same source
    rng = np.random.default_rng(0)
    n, m, k = 37, 53, 29  # odd sizes
    A, B = rng.standard_normal((n, k)), rng.standard_normal((k, m))
    C = np.zeros((n, m))
    kernel(C=C, A=A, B=B)
    assert np.allclose(C, A @ B), "C simulation differs from numpy"
    print(f"C simulation of {n}x{k} @ {k}x{m} matches numpy ({kernel.command.split()[0]})")
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(source)
        print(f"wrote {sys.argv[1]}")


if __name__ == "__main__":
    main()
