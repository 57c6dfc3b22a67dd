"""What ``make demo`` runs: build, schedule, generate, compile and run real kernels.

``python -m spf.demo [MATRIX.mtx] [--out DIR]``: reads a Matrix Market file (default: the
2-D Poisson matrix of a 300 x 300 grid), builds CSR SpMV and the sparse forward solve,
parallelizes the SpMV rows (legal: rows write disjoint ``y(i)``), generates C, compiles and
runs it, checks the results against scipy, prints times against scipy (spf at 1 thread and at
OpenMP's count: :mod:`spf.demo_timing`), and writes the
generated C and the computation summaries to the output folder (default ``out/``). Then
:mod:`spf.demo_more`: SELL-C-sigma SpMV through a generated inspector, the fused and folded
blur, a scheduled DGEMM, and the HLS, CUDA and MPI backends. It ends with the UF-aware set
layer on the SpMV domain. Any failed check raises.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import spf
from spf import demo_more, demo_timing, kernels, sparse
from spf.errors import ArgumentError


def _lower_with_diagonal(a: Any) -> Any:
    """A well-conditioned lower-triangular matrix with a's lower pattern, diagonal last."""
    sps = sparse._scipy()
    low = sps.tril(a, -1, format="csr")
    diag = np.asarray(abs(low).sum(axis=1)).ravel() + 1.0
    return (low + sps.diags(diag)).tocsr()


def _write_pdfg(comp: spf.Computation, stem: Path) -> None:
    """The PDFG as DOT text, and rendered to SVG when Graphviz is installed."""
    graph = comp.pdfg()
    graph.write(stem.parent / f"{stem.name}.dot")
    if shutil.which("dot"):
        graph.render(stem.parent / f"{stem.name}.svg")


def _spmv(a: Any, out: Path) -> list[demo_timing.Timing]:
    comp = kernels.spmv_csr()
    _write_pdfg(comp, out / "spmv_csr.before")
    row = comp.stmt(0)
    row.parallelize(row.loops[0])
    _write_pdfg(comp, out / "spmv_csr.after")
    print("CSR SpMV, rows in parallel:")
    print("  " + comp.loop_structure().replace("\n", "\n  "))
    t0 = time.perf_counter()
    kernel = comp.compile()
    print(f"  Computation -> kernel in {time.perf_counter() - t0:.2f} s ({kernel.path.name})")
    args = sparse.csr_args(a)
    x = np.random.default_rng(0).random(a.shape[1])
    y = np.zeros(a.shape[0])
    kernel(y=y, x=x, **args)
    want = a @ x
    if not np.allclose(y, want, equal_nan=True):  # NaN / inf in the file: NaN on both sides
        raise AssertionError("generated SpMV differs from scipy")
    (out / "spmv_csr.c").write_text(kernel.source)
    (out / "spmv_csr.txt").write_text(str(comp) + "\n")

    def run() -> None:
        y[:] = 0.0
        kernel(y=y, x=x, check=False, **args)

    return demo_timing.against_one_thread(
        kernel, "CSR SpMV (y = A x)", "scipy A @ x", run, lambda: a @ x
    )


def _forward_solve(a: Any, out: Path) -> list[demo_timing.Timing]:
    sps_linalg = sparse._scipy("scipy.sparse.linalg")
    low = _lower_with_diagonal(a)
    comp = kernels.sptrsv_csr()
    print("Forward solve (loop-carried dependence on u over i; not parallel):")
    print("  " + comp.loop_structure().replace("\n", "\n  "))
    carried = sorted({d for dep in comp.dependences() for d in dep.carried_by})
    print(f"  dependences carried by loops: {', '.join(carried)}")
    _write_pdfg(comp, out / "sptrsv_csr")
    kernel = comp.compile()
    args = sparse.sptrsv_args(low)
    f = np.random.default_rng(1).random(a.shape[0])
    u = np.zeros(a.shape[0])
    kernel(u=u, f=f, **args)
    want = sps_linalg.spsolve_triangular(low, f, lower=True)
    if not np.allclose(u, want, equal_nan=True):
        raise AssertionError("generated forward solve differs from scipy")
    (out / "sptrsv_csr.c").write_text(kernel.source)
    (out / "sptrsv_csr.txt").write_text(str(comp) + "\n")
    return demo_timing.against_one_thread(
        kernel,
        "forward solve (L u = f), no parallel loop",
        "scipy spsolve_triangular",
        lambda: kernel(u=u, f=f, check=False, **args),
        lambda: sps_linalg.spsolve_triangular(low, f, lower=True),
        parallel=False,
        repeat=5,
    )


def _sets() -> None:
    dom = spf.Set("{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}")
    shift = spf.Relation("{[i,k,j] -> [ii,k,j]: ii = i + 1}")
    print("UF-aware sets: shifting the row loop rewrites the UF arguments")
    print(f"  {dom}\n  -> {shift.apply(dom)}")
    two = (
        "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && "
        "rowptr(ip) <= k < rowptr(ip+1)}"
    )
    mono = spf.UF("rowptr", monotonic="nondecreasing")
    plain, declared = spf.Set(two).is_empty(), spf.Set(two, ufs={"rowptr": mono}).is_empty()
    print(f"  two rows share a nonzero: empty = {plain}; with rowptr nondecreasing: {declared}")
    if plain or not declared:
        raise AssertionError("emptiness with UF facts is wrong")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the demo; raise if any check fails."""
    parser = argparse.ArgumentParser(prog="spf demo", description=__doc__.splitlines()[0])
    parser.add_argument("matrix", nargs="?", help="Matrix Market file (default: 2-D Poisson)")
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    opts = parser.parse_args(argv)
    out = Path(opts.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ArgumentError(
            f"--out {opts.out!r}: cannot make the output folder: {err.strerror or err}; "
            "give a folder"
        ) from err
    if opts.matrix:
        a = sparse.read_matrix_market(opts.matrix).tocsr()
        label = Path(opts.matrix).name
    else:
        a = sparse.poisson2d(300)
        label = "2-D Poisson, 300 x 300 grid"
    print(f"matrix: {label}: {a.shape[0]} x {a.shape[1]}, {a.nnz} nonzeros\n")
    rows = _spmv(a, out)
    print()
    if a.shape[0] == a.shape[1]:
        rows += _forward_solve(a, out)
        print()
    rows += demo_more.sell_spmv(a)
    print()
    demo_more.blur(out)
    print()
    demo_more.imported_c(out)
    print()
    rows.append(demo_more.gemm())
    print()
    demo_more.backends(out)
    print()
    demo_timing.print_timings(rows)
    _sets()
    print(f"\ngenerated C, computation summaries and PDFGs (.dot, .svg) written to {out}/")
    print("demo OK")


if __name__ == "__main__":
    main(sys.argv[1:])
