"""spf.tune on GEMM and CSR SpMV (docs/tune.md): a schedule found by a search, checked.

The search tries scheduling commands in the order a cost model from the priced PDFG likes
them, checks each for legality before compiling it, compares its outputs with the default
schedule's and times it interleaved with the default. Run with a budget in seconds
(default 4, what CI runs): ``python examples/tune_gemm.py 60``.

The functions ``default_pdfg`` and ``tuned_pdfg`` give the priced PDFG of GEMM before and after
a schedule ``spf.tune`` found for 512 x 512 matrices (docs/tune.md draws both).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

import spf
from spf import kernels

if TYPE_CHECKING:
    from spf.pdfg import PDFG

SIZES = {"N": 512, "M": 512, "K": 512}

FOUND = """\
comp.stmt("s0").interchange("j", "k")
comp.stmt("s0").tile("i", "k", 32, 32, "i0", "k0", "i1", "k1")
comp.stmt("s0").vectorize("j", 8, outer="j0", inner="j1")
comp.stmt("s0").parallelize("i0")
"""
"""A schedule ``spf.tune(kernels.gemm(), args, budget=60)`` printed for 512 x 512 matrices
(``res.comp.trace.as_python()``), pasted here."""


def default_pdfg() -> PDFG:
    """GEMM's PDFG priced for :data:`SIZES`, default schedule."""
    return kernels.gemm().pdfg(params=SIZES)


def tuned_pdfg() -> PDFG:
    """The same after the schedule :data:`FOUND`."""
    comp = kernels.gemm()
    exec(FOUND, {"comp": comp})
    return comp.pdfg(params=SIZES)


def tune_gemm(budget: float) -> None:
    rng = np.random.default_rng(0)
    n, m, k = 96, 80, 64
    args = {"C": np.zeros((n, m)), "A": rng.random((n, k)), "B": rng.random((k, m))}
    comp = kernels.gemm()
    res = spf.tune(comp, args, budget=budget, seed=0, reuse=False)
    print(f"GEMM {n}x{k}x{m}: {res.speedup:.2f}x over the default schedule")
    print(f"  {res.tried} candidates measured, {res.illegal} illegal, budget {budget:g} s")
    for trial in res.history:
        shown = "-" if trial.time is None else f"{trial.time * 1e6:.0f} us"
        print(f"  {trial.status:9} {shown:>8}  {trial.summary}")
    print("the schedule, to paste:")
    print(res.comp.trace.as_python() or "  (the default schedule)")
    out = {**args, "C": np.zeros((n, m))}
    res.comp.compile()(**out)
    np.testing.assert_allclose(out["C"], args["A"] @ args["B"], rtol=1e-12)
    assert len(comp.trace) == 0, "spf.tune leaves the computation it was given alone"


def tune_spmv(budget: float) -> None:
    a = sp.csr_array(sp.random_array((2000, 2000), density=0.005, rng=1))
    args = spf.sparse.csr_args(a)
    args.update(y=np.zeros(2000), x=np.random.default_rng(2).random(2000))
    res = spf.tune(kernels.spmv_csr(), args, budget=budget, seed=0, reuse=False)
    print(f"CSR SpMV 2000 rows, {a.nnz} entries: {res!r}")
    out = {**args, "y": np.zeros(2000)}
    res.comp.compile()(**out)
    np.testing.assert_allclose(out["y"], a @ args["x"], rtol=1e-12)


def main() -> None:
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    tune_gemm(budget)
    tune_spmv(budget)
    for name, graph in (("default", default_pdfg()), ("tuned", tuned_pdfg())):
        print(f"PDFG of GEMM 512, {name} schedule: loops {' > '.join(loop_labels(graph))}")


def loop_labels(graph: PDFG) -> list[str]:
    """The labels of the PDFG's loop boxes, outer first (the loops of the first nest)."""
    labels = re.findall(r'label="([^"]*)"; tooltip', graph.to_dot())
    return [text.replace("\\l", " ").strip() for text in labels]


if __name__ == "__main__":
    main()
