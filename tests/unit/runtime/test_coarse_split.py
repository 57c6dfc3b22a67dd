"""spf.runtime.coarse.split: each cut between parts lands on the first block boundary at or
after its share of the level's work (checked against a direct scan of the boundaries), on
random levels of increasing rows, empty and one-row levels included."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spf.runtime import coarse


def boundaries(order: np.ndarray, levelptr: np.ndarray, shift: int) -> np.ndarray:
    """Every position where a part may start: a level's start or end, or a row in another
    block than the row before it."""
    n = len(order)
    at = np.zeros(n + 1, dtype=np.bool_)
    blk = order >> shift
    at[1:n] = blk[1:] != blk[:-1]
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


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("threads", [2, 3, 16])
def test_cuts_fall_on_the_first_block_boundary_after_each_share(seed: int, threads: int) -> None:
    order, levelptr, work = random_levels(seed)
    n, levels = len(order), len(levelptr) - 1
    parts = coarse.split(order, levelptr, levels, work, coarse.BLOCK_SHIFT, threads)
    starts = parts.partptr[: parts.parts]
    bounds = boundaries(order, levelptr, coarse.BLOCK_SHIFT)
    assert np.isin(starts, bounds).all()  # no part splits a block of a level
    wsum = np.concatenate([[0], np.cumsum(work[order])])
    want = []
    for lev in range(levels):
        s, e = int(levelptr[lev]), int(levelptr[lev + 1])
        share = wsum[s] + (wsum[e] - wsum[s]) * np.arange(1, threads) // threads
        cuts = np.searchsorted(wsum, share, side="left").clip(s, e)
        cuts = bounds[np.searchsorted(bounds, cuts)]  # the first boundary at or after each
        edges = np.maximum.accumulate(np.concatenate([[s], cuts, [e]]))
        want += [int(lo) for lo, hi in itertools.pairwise(edges) if hi > lo]
    np.testing.assert_array_equal(starts, want)
    assert parts.parts == len(want)
    assert int(parts.ptr[levels]) == len(want)
    assert n == 0 or parts.partptr[parts.parts] == n
