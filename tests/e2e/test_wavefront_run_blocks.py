"""The coarse pass of one kernel grows its blocks as runs of rows (docs/inspection.md, "Coarse
levels"): a row joins the block of the row before only through an edge from it, a block holds
at most ``2**RUN_SHIFT`` rows, and a part may cut between any two rows of a coarse level that
are not neighbours. On a 2-D grid in natural order the blocks lie inside the grid rows,
aligned to their starts, so the coarse levels are ``y + x // 128`` and every part runs whole
stretches of consecutive rows; on matrices whose rows often depend on the row before (banded
random triangles) the plans pass the generated check of every dependence and solve with the
serial bits at 1 and 2 threads, int32 and int64."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.runtime import coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import sptrsv_args
from spf.testing import compiled, fixed_team


def _kernel(dtype: str) -> WavefrontKernel:
    comp = kernels.sptrsv_csr(index_dtype=dtype)
    comp.wavefront("i", method="auto")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


def _runs(order: np.ndarray, partptr: np.ndarray, parts: int) -> list[np.ndarray]:
    """Each part's stretches of consecutive rows."""
    out = []
    for p in range(parts):
        rows = order[partptr[p] : partptr[p + 1]]
        out += np.split(rows, np.flatnonzero(np.diff(rows) != 1) + 1)
    return out


def _grid(width: int, height: int) -> sp.csr_array:
    """The 5-point Laplacian of a ``width`` x ``height`` grid, rows numbered ``y * width + x``."""

    def line(m: int) -> sp.csr_array:
        return sp.csr_array(sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m)))

    eye_w, eye_h = sp.eye_array(width), sp.eye_array(height)
    return sp.csr_array(sp.kron(eye_h, line(width)) + sp.kron(line(height), eye_w))


def _banded(n: int, seed: int, near: float = 0.9) -> sp.csr_array:
    """A lower triangle whose rows depend on the row before with probability ``near`` and on
    two random rows of the 300 before."""
    rng = np.random.default_rng(seed)
    rows = [np.arange(1, n)[rng.random(n - 1) < near]]
    cols = [rows[0] - 1]
    for _ in range(2):
        i = np.arange(2, n)
        rows.append(i)
        cols.append(np.maximum(i - 1 - rng.integers(1, 300, n - 2), 0))
    r, c = np.concatenate(rows), np.concatenate(cols)
    strict = sp.csr_array((rng.uniform(-1, 1, len(r)), (r, c)), shape=(n, n))
    m = sp.csr_array(sp.tril(strict, k=-1) + sp.eye_array(n) * 8.0)
    m.sum_duplicates()
    m.sort_indices()
    return m


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_grid_blocks_align_with_the_grid_rows(dtype: str) -> None:
    width, height = 400, 60
    grid = sp.csr_array(sp.tril(_grid(width, height), format="csr"))
    args = sptrsv_args(grid, index_dtype=dtype)
    kernel = _kernel(dtype)
    assert kernel._runs
    plan = kernel.inspect(strategy="coarse", threads=2, **args)
    blocks = -(-width // 2**coarse.RUN_SHIFT)  # 4 blocks per grid row: 128, 128, 128, 16
    assert plan.coarse_levels == height + blocks - 1
    assert plan.parts == 2 * plan.coarse_levels - 2  # one block alone at each end
    stretches = _runs(plan.coarse_order, plan.part_ptr, plan.parts)
    for rows in stretches:  # whole blocks, inside one grid row
        assert rows[0] // width == rows[-1] // width
        assert rows[0] % width % 2**coarse.RUN_SHIFT == 0
    assert len(stretches) == height * blocks
    f = np.random.default_rng(1).uniform(-1, 1, width * height)
    want = np.zeros_like(f)
    compiled("sptrsv_csr", index_dtype=dtype)(u=want, f=f, **args)
    for team in (1, 2):
        u = np.zeros_like(f)
        with fixed_team(team):
            kernel(u=u, f=f, plan=plan, **args)
        np.testing.assert_array_equal(u, want)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("seed", range(3))
def test_banded_plans_pass_the_dependence_check_with_the_serial_bits(dtype: str, seed: int) -> None:
    lower = _banded(20000, seed)
    args = sptrsv_args(lower, index_dtype=dtype)
    kernel = _kernel(dtype)
    f = np.random.default_rng(seed).uniform(-1, 1, lower.shape[0])
    want = np.zeros_like(f)
    compiled("sptrsv_csr", index_dtype=dtype)(u=want, f=f, **args)
    for threads in (2, 3):
        plan = kernel.inspect(strategy="coarse", threads=threads, **args)
        assert plan.coarse_levels < plan.levels  # the blocks merge levels
        rebuilt = dataclasses.replace(plan, coarse_order=plan.coarse_order.copy())
        assert isinstance(rebuilt, Plan)
        for team in (1, 2):  # the rebuilt plan is checked against every dependence first
            for p in (plan, rebuilt):
                u = np.zeros_like(f)
                with fixed_team(team):
                    kernel(u=u, f=f, plan=p, **args)
                np.testing.assert_array_equal(u, want)


def _reference_coarse_levels(lower: sp.csr_array) -> np.ndarray:
    """Each row's coarse level by the definition of run blocks, one row at a time: a row
    with an edge from the row before joins the stretch begun at ``s``, in the block ``b = s
    + ((i - s) >> RUN_SHIFT << RUN_SHIFT)``, and takes the max of ``clev(j) + (j < b)`` over
    its sources; a row without one begins a stretch and takes the max of ``clev(j) + 1``."""
    n, shift = lower.shape[0], coarse.RUN_SHIFT
    ptr, col = lower.indptr, lower.indices
    clev = np.zeros(n, dtype=np.int64)
    start = 0
    for i in range(n):
        sources = [int(j) for j in col[ptr[i] : ptr[i + 1]] if j < i]
        if sources and max(sources) == i - 1:
            block = start + ((i - start) >> shift << shift)
            clev[i] = max(int(clev[j]) + (j < block) for j in sources)
        else:
            start = i
            clev[i] = max((int(clev[j]) + 1 for j in sources), default=0)
    return clev


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("split", [False, True])
def test_coarse_levels_are_those_of_the_run_blocks(
    dtype: str, split: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The coarse level of each row in the plan (the parts' levels) is the definition's, on
    banded triangles whose rows read the row before at random, from the joint pass (one
    thread, and two without ``SPLIT_PASS``) and from the coarse-level pass of two threads
    (``split``; docs/inspection.md, "Selects in the pass"); both passes mask the crossing
    edges' coarse levels."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", split)
    kernel = _kernel(dtype)
    # seed 0's stretches of rows reading the row before are shorter than a block (each block
    # starts a stretch); near=1.0 makes one stretch of every row: blocks start inside it
    for lower in (_banded(6000, 0), _banded(6000, 1, near=1.0)):
        args = sptrsv_args(lower, index_dtype=dtype)
        want = _reference_coarse_levels(lower)
        for team in (1, 2):
            with fixed_team(team):
                plan = kernel.inspect(check=False, strategy="coarse", threads=2, **args)
            assert team == 1 or kernel._split_kernels is not None  # the two-thread pass ran
            parts = plan_module.plan_parts(plan)
            np.testing.assert_array_equal(coarse.row_parts(parts)[1], want)


def test_a_kernel_with_push_edges_keeps_fixed_blocks() -> None:
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method="auto")
    kernel = comp.compile()
    assert isinstance(kernel, WavefrontKernel)
    assert not kernel._runs
