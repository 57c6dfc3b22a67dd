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
    all chains or all free keeps its counts; the mean weight of a unit comes back (what the
    estimate scales its barriers by)."""
    extent = 5
    work = np.arange(1, extent * len(free) + 1, dtype=np.int64)
    kept = work.copy()
    unit = coarse.weigh(work, extent, free)
    assert unit == pytest.approx(work.sum() / kept.sum())  # what a unit weighs on average
    mixed = any(free) and not all(free)
    for g, alone in enumerate(free):
        part = slice(g * extent, (g + 1) * extent)
        scale = coarse.CHAIN_WEIGHT if mixed and not alone else 1
        np.testing.assert_array_equal(work[part], kept[part] * scale, err_msg=f"kernel {g}")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("free", [(False, True), (True, False, False)])
def test_fused_run_blocks_are_cut_by_rows(seed: int, threads: int, free: tuple[bool, ...]) -> None:
    """Kernels fused into one loop, some free, with run blocks: each coarse level's nodes are
    cut by row, not by node. Each level's parts hold its nodes once, each part's in
    increasing order; no part cuts a run of consecutive nodes of a kernel that is not free
    (a block's piece); part ``k`` holds rows (a run: its first row) below those of part
    ``k + 1``, whatever the kernel; and each part's work is what ``largest`` says."""
    order, levelptr, work = random_levels(seed)
    n, levels = len(order), len(levelptr) - 1
    extent = -(-n // len(free))
    blocks = coarse.Blocks(coarse.RUN_SHIFT, extent, free, runs=True)
    parts = coarse.split(order, levelptr, levels, work, blocks, threads)
    got = parts.order
    ends = np.append(parts.partptr[: parts.parts], n)
    assert parts.levels == levels
    for lev in range(levels):
        lo, hi = int(levelptr[lev]), int(levelptr[lev + 1])
        np.testing.assert_array_equal(np.sort(got[lo:hi]), order[lo:hi])
        first, last = parts.ptr[lev], parts.ptr[lev + 1]
        assert ends[first] == lo
        assert ends[last] == hi
        keys = {}  # node -> its row, or the first row of its run
        for a, b in itertools.pairwise(order[lo:hi]):
            keys.setdefault(int(a), int(a) % extent)
            same = b == a + 1 and b // extent == a // extent and not free[b // extent]
            keys[int(b)] = keys[int(a)] if same else int(b) % extent
        keys.setdefault(int(order[lo]), int(order[lo]) % extent)
        below = -1
        for p in range(first, last):
            nodes = got[ends[p] : ends[p + 1]]
            assert (np.diff(nodes) > 0).all()
            mine = [keys[int(v)] for v in nodes]
            assert min(mine) > below, f"level {lev}: part {p} reaches below the part before"
            below = max(mine)
            assert int(work[nodes].sum()) <= int(parts.largest[lev])
        assert max(int(work[got[ends[p] : ends[p + 1]]].sum()) for p in range(first, last)) == int(
            parts.largest[lev]
        )


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_the_level_bound_is_never_below_the_levels_estimate(threads: int) -> None:
    """``inspect(strategy="auto")`` skips counting the level sizes when a coarse plan beats
    ``level_bound``: no sizes may give the levels a higher estimate."""
    rng = np.random.default_rng(threads)
    for levels in (1, 2, 7, 300):
        for _ in range(20):
            sizes = rng.integers(1, 50, levels) * rng.integers(1, 3, levels)
            rows = int(sizes.sum())
            work = rows * int(rng.integers(1, 6))
            ptr = np.concatenate([[0], np.cumsum(sizes)])
            for unit in (1.0, 1.7):
                est = coarse.level_estimate(ptr, levels, work, threads, unit)
                assert coarse.level_bound(rows, levels, work, threads, unit) >= est
        even = np.full(levels, threads * 5)  # every level's rows shared evenly: the bound met
        ptr = np.concatenate([[0], np.cumsum(even)])
        est = coarse.level_estimate(ptr, levels, int(ptr[-1]) * 3, threads)
        bound = coarse.level_bound(int(ptr[-1]), levels, int(ptr[-1]) * 3, threads)
        assert est <= bound <= est * (1 + 1e-6)


def _cut_parts_by_levels(
    order: np.ndarray,
    start: np.ndarray,
    cut: np.ndarray,
    end: np.ndarray,
    wsum: np.ndarray,
    drop_empty: bool,
) -> coarse.Parts:
    """``coarse.cut_parts`` as it was written before it ran over the boundaries' rows:
    each level's boundaries a row of its own (the reference the faster one must match)."""
    edges = np.maximum.accumulate(np.concatenate([start, cut, end], axis=1), axis=1)
    lo, hi = edges[:, :-1], edges[:, 1:]
    keep = hi > lo
    counts = keep.sum(axis=1)
    parts = int(counts.sum())
    partptr = np.append(lo[keep], len(order)).astype(np.int64)
    each = np.where(keep, wsum[hi] - wsum[lo], 0)
    largest = each.max(axis=1)
    if drop_empty:
        largest, counts = largest[counts > 0], counts[counts > 0]
    if largest.dtype.kind == "f":
        largest = np.ceil(largest).astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return coarse.Parts(len(counts), ptr, partptr, order, parts, largest, work=each[keep])


@pytest.mark.parametrize("seed", range(6))
def test_cut_parts_are_those_cut_level_by_level(seed: int) -> None:
    """The parts ``coarse.cut_parts`` finds over the rows of all levels' boundaries are
    those found level by level, array for array and dtype for dtype: cuts before, inside
    and past their levels, empty levels and parts, integer and float work, 1 to 6 threads,
    empty levels kept and dropped."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        levels, threads, n = (
            int(rng.integers(0, 40)),
            int(rng.integers(1, 7)),
            int(rng.integers(0, 300)),
        )
        bound = np.sort(rng.integers(0, n + 1, levels + 1))
        bound[0], bound[-1] = 0, n
        start, end = bound[:-1, None], bound[1:, None]
        cut = np.sort(rng.integers(0, n + 1, (levels, threads - 1)), axis=1)
        if rng.random() < 0.5:
            cut = np.minimum(np.maximum(cut, start), end)
        steps = rng.integers(1, 5, n) if rng.random() < 0.5 else 3.0 * rng.random(n)
        wsum = np.concatenate([[0], np.cumsum(steps)])
        order = rng.permutation(n)
        for drop_empty in (False, True):
            got = coarse.cut_parts(order, start, cut, end, wsum, drop_empty)
            want = _cut_parts_by_levels(order, start, cut, end, wsum, drop_empty)
            for name in ("levels", "parts"):
                assert getattr(got, name) == getattr(want, name)
            for name in ("ptr", "partptr", "order", "largest", "work"):
                a, b = getattr(got, name), getattr(want, name)
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)
