"""spf.runtime.coarse.split: each cut between parts lands on the block boundary nearest its
share of the level's work (checked against a direct scan of the boundaries), on random
levels of increasing rows, empty and one-row levels included; with kernels fused into the
loop, blocks never span two kernels, and a kernel whose iterations are independent (free)
may be cut anywhere."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spf.runtime import coarse


def block_of(node: int, blocks: coarse.Blocks) -> tuple[int, int]:
    """(kernel, block) of a node, one at a time."""
    extent = max(blocks.extent, 1) if len(blocks.free) > 1 else node + 1
    group = node // extent
    local = node - group * extent
    return (group, local if blocks.free[group] else local >> blocks.shift)


def boundaries(order: np.ndarray, levelptr: np.ndarray, blocks: coarse.Blocks) -> np.ndarray:
    """Every position where a part may start: a level's start or end, or a row in another
    block than the row before it."""
    n = len(order)
    at = np.zeros(n + 1, dtype=np.bool_)
    blk = [block_of(int(v), blocks) for v in order]
    at[1:n] = [a != b for a, b in itertools.pairwise(blk)]
    at[levelptr] = True
    return np.flatnonzero(at)


def random_levels(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, levelptr, work): each level's rows increasing, rows a permutation."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    level = rng.integers(0, int(rng.integers(1, 40)), n)
    order = np.argsort(level, kind="stable").astype(np.int64)
    counts = np.bincount(level)
    levelptr = np.concatenate([[0], np.cumsum(counts[counts > 0])]).astype(np.int64)
    return order, levelptr, rng.integers(1, 9, n).astype(np.int64)


BLOCKS = [(coarse.BLOCK_SHIFT, ()), (3, (False, True)), (4, (True, False, False))]
"""(shift, free kernels): one kernel, or kernels fused into the loop."""


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("threads", [2, 3, 16])
@pytest.mark.parametrize(("shift", "free"), BLOCKS)
def test_cuts_fall_on_the_nearest_block_boundary_to_each_share(
    seed: int, threads: int, shift: int, free: tuple[bool, ...]
) -> None:
    order, levelptr, work = random_levels(seed)
    n, levels = len(order), len(levelptr) - 1
    blocks = coarse.Blocks(shift, -(-n // len(free)) if free else 0, free or (False,))
    parts = coarse.split(order, levelptr, levels, work, blocks, threads)
    starts = parts.partptr[: parts.parts]
    bounds = boundaries(order, levelptr, blocks)
    assert np.isin(starts, bounds).all()  # no part splits a block of a level
    wsum = np.concatenate([[0], np.cumsum(work[order])])
    want = []
    for lev in range(levels):
        s, e = int(levelptr[lev]), int(levelptr[lev + 1])
        share = wsum[s] + (wsum[e] - wsum[s]) * np.arange(1, threads) // threads
        cuts = np.searchsorted(wsum, share, side="left").clip(s, e)
        at = np.searchsorted(bounds, cuts)
        after, before = bounds[at], bounds[np.maximum(at - 1, 0)]
        nearer = wsum[cuts] - wsum[before] < wsum[after] - wsum[cuts]
        cuts = np.where(nearer, before, after)  # the nearest boundary, by work
        edges = np.maximum.accumulate(np.concatenate([[s], cuts, [e]]))
        want += [int(lo) for lo, hi in itertools.pairwise(edges) if hi > lo]
    np.testing.assert_array_equal(starts, want)
    assert parts.parts == len(want)
    assert int(parts.ptr[levels]) == len(want)
    assert n == 0 or parts.partptr[parts.parts] == n


@pytest.mark.parametrize("seed", range(4))
def test_given_work_sums_give_the_same_parts_sized_by_levels_and_parts(seed: int) -> None:
    """The caller's prefix sums of the work give the parts split builds without them, the
    sums left as they were; the pointers hold ``levels + 1`` and ``parts + 1`` entries (the
    executor's extents), none padded to the rows."""
    order, levelptr, work = random_levels(seed)
    levels = len(levelptr) - 1
    blocks = coarse.Blocks(coarse.BLOCK_SHIFT)
    wsum = np.concatenate([[0], np.cumsum(work[order])]).astype(np.int64)
    kept = wsum.copy()
    want = coarse.split(order, levelptr, levels, work, blocks, 2)
    got = coarse.split(order, levelptr, levels, work, blocks, 2, wsum)
    np.testing.assert_array_equal(wsum, kept)
    assert len(got.ptr) == levels + 1
    assert len(got.partptr) == got.parts + 1
    np.testing.assert_array_equal(got.ptr, want.ptr)
    np.testing.assert_array_equal(got.partptr, want.partptr)
    np.testing.assert_array_equal(got.largest, want.largest)


@pytest.mark.parametrize(
    "free", [(False, True), (True, False), (False, True, False), (False,), (True, True)]
)
def test_weigh_scales_the_chained_kernels_only_when_a_free_one_shares_the_loop(
    free: tuple[bool, ...],
) -> None:
    """A kernel whose rows depend on each other counts ``CHAIN_WEIGHT`` times its
    dependences against a free kernel fused into the same loop; a loop whose kernels are
    all chains or all free keeps its counts."""
    extent = 5
    work = np.arange(1, extent * len(free) + 1, dtype=np.int64)
    kept = work.copy()
    coarse.weigh(work, extent, free)
    mixed = any(free) and not all(free)
    for g, alone in enumerate(free):
        part = slice(g * extent, (g + 1) * extent)
        scale = coarse.CHAIN_WEIGHT if mixed and not alone else 1
        np.testing.assert_array_equal(work[part], kept[part] * scale, err_msg=f"kernel {g}")
