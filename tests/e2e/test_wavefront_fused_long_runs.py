"""The second plan of run blocks of a fused solve and product (docs/inspection.md, "Fused
kernels interleaved in their parts"): a fused loop of at least ``coarse.IN_ORDER_NODES``
nodes planned for two threads also gets run blocks of up to ``2**coarse.LONG_RUN_SHIFT``
rows, and keeps the one estimated faster. On a 2-D grid 600 rows wide the longer runs win
(each part runs a grid row's stretch of up to 256 solve rows), on one 300 rows wide they
would leave two neighbouring pieces at a coarse level that no part can separate, and the
128-row runs stay. Both plans equal the two kernels one after the other bitwise, their parts
run on one thread and on two. The coarse levels are not joined along chains here
(:data:`spf.runtime.chains.JOIN_NODES` raised): a joined part runs the parts of several
coarse levels, whose stretches may continue one another
(``tests/e2e/test_wavefront_fused_chains.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime import chains, coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args


@pytest.fixture(scope="module")
def fused() -> WavefrontKernel:
    comp = spf.Computation("solve_mv_long_runs")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.append_computation(
        kernels.trsv_diag_csr(), "{[]}", "{[] -> [0]}", {"x": "x", "A": "A", "b": "b"}
    )
    comp.append_computation(
        kernels.spmv_csr(), "{[]}", "{[] -> [1]}", {"y": "y", "A": "A", "x": "x"}
    )
    comp.fuse("s2", "s3", 1)
    comp.wavefront("_i0_i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


def longest_solve_stretch(plan: Any, n: int) -> int:
    """The most consecutive solve rows (nodes below ``n``) one part runs one after the other
    (the product rows interleaved between them skipped)."""
    order = np.asarray(plan.coarse_order)
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    part = np.searchsorted(ptr, np.arange(len(order)), side="right") - 1
    solve = np.flatnonzero(order < n)
    rows, parts = order[solve], part[solve]
    breaks = np.flatnonzero((np.diff(rows) != 1) | (np.diff(parts) != 0))
    edges = np.concatenate([[-1], breaks, [len(rows) - 1]])
    return int(np.diff(edges).max())


@pytest.mark.parametrize(
    ("width", "longest"), [(600, 1 << coarse.LONG_RUN_SHIFT), (300, 1 << coarse.RUN_SHIFT)]
)
def test_fused_plan_takes_the_longer_runs_where_estimated_faster(
    fused: WavefrontKernel,
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    longest: int,
) -> None:
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)  # parts on one thread too
    monkeypatch.setattr(chains, "JOIN_NODES", 1 << 62)  # the run blocks' own stretches
    m = sps.csr_array(spf.sparse.poisson2d(width))
    n = m.shape[0]
    assert 2 * n >= coarse.IN_ORDER_NODES
    args = gauss_seidel_args(m)
    plan = fused.inspect(threads=2, **{k: v for k, v in args.items() if k != "A"})
    assert plan.strategy == "coarse"
    assert plan.interleaved
    assert longest_solve_stretch(plan, n) == longest
    b = np.random.default_rng(width).standard_normal(n)
    x, y = np.zeros(n), np.zeros(n)
    kernels.trsv_diag_csr().compile()(x=x, b=b, **args)
    kernels.spmv_csr().compile()(y=y, x=x, **spf.sparse.csr_args(m))
    gx, gy = np.zeros(n), np.zeros(n)
    fused(x=gx, y=gy, b=b, plan=plan, **args)
    assert fused.last_threads == omp_threads
    np.testing.assert_array_equal(gx, x)
    np.testing.assert_array_equal(gy, y)
