"""Parallel reductions: ``y = A^T x`` from CSR and a histogram (docs/scheduling.md).

1. The row loop of ``spf.kernels.spmtv_csr()`` scatters into ``y(col(k))``: a plain
   ``parallelize("i")`` is refused, with a message naming both reduction options.
2. ``parallelize("i", reduction="atomic")`` (OpenMP atomic updates) and
   ``reduction="privatize"`` (per-thread copies of ``y`` added up after the loop) run it in
   parallel; both equal scipy's ``A.T @ x``.
3. A histogram ``h(key(k)) += 1`` the same way, against ``numpy.bincount``.
4. A prefix sum is not a reduction: refused even with ``reduction=``.

Run: ``python examples/scatter_reduction.py`` (checks its results and fails loudly).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import spf
from spf.sparse import csr_args


def transpose_product(rng: np.random.Generator) -> None:
    plain = spf.kernels.spmtv_csr()
    plain.stmt(0).parallelize("i")
    try:
        plain.check_legality()
    except spf.IllegalScheduleError as err:
        if 'reduction="privatize"' not in str(err):
            raise SystemExit(f"the refusal does not name both options: {err}") from err
        print("plain parallelize refused:", str(err).split(";")[0])
    else:
        raise SystemExit("a scatter loop was accepted as parallel without reduction=")
    A = sp.random_array((2000, 1500), density=0.005, format="csr", rng=rng)
    x = rng.random(2000)
    for option in ("atomic", "privatize"):
        comp = spf.kernels.spmtv_csr()
        comp.stmt(0).parallelize("i", reduction=option)
        print(comp.loop_structure())
        y = np.zeros(1500)
        comp.compile()(y=y, x=x, **csr_args(A))
        err = float(np.abs(y - A.T @ x).max())
        print(f"A^T x with reduction={option!r}: max error {err:.1e}")
        if err > 1e-10:
            raise SystemExit(f"reduction={option!r} gives a wrong A^T x")


def histogram(rng: np.random.Generator) -> None:
    comp = spf.Computation("histogram")
    comp.add_data_space("h", "int32_t", shape=("B",))
    comp.declare_uf("key", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < B}")
    comp.add_stmt(spf.Stmt("$h$(key(k)) += 1;", "{[k]: 0 <= k < N}", "{[k] -> [0, k, 0]}"))
    comp.stmt(0).parallelize("k", reduction="privatize")
    keys = rng.integers(0, 16, size=100_000).astype(np.int32)
    h = np.zeros(16, dtype=np.int32)
    comp.compile()(h=h, key=keys, N=keys.size)
    if not np.array_equal(h, np.bincount(keys, minlength=16)):
        raise SystemExit("the histogram is wrong")
    print("histogram:", h.tolist())


def prefix_sum_is_not_a_reduction() -> None:
    comp = spf.Computation("prefix")
    comp.add_data_space("y", "double", shape=("N + 1",))
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i + 1) = $y$(i) + $a$(i);", "{[i]: 0 <= i < N}"))
    comp.stmt(0).parallelize("i", reduction="atomic")
    try:
        comp.check_legality()
    except spf.IllegalScheduleError as err:
        print("prefix sum refused:", str(err).split(";")[0])
    else:
        raise SystemExit("a prefix sum was accepted as a reduction")


def main() -> None:
    rng = np.random.default_rng(0)
    transpose_product(rng)
    histogram(rng)
    prefix_sum_is_not_a_reduction()


if __name__ == "__main__":
    main()
