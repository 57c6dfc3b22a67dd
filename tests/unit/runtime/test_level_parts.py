"""spf.runtime.level_parts: a "levels" plan's parts. Each level's parts tile it in order; a
level of enough work is cut into several chunks per thread at equal shares of its work, a
smaller one as spf.runtime.coarse.split cuts it (one part per thread), and a plan for one
thread keeps one part per level; ``largest`` is the busiest thread's work under the
round-robin deal of the executor's ``schedule(static, 1)``."""

from __future__ import annotations

import numpy as np
import pytest

from spf.runtime import coarse
from spf.runtime.level_parts import CHUNK_WORK, INTERLEAVE, level_parts


def levels_of(sizes: list[int], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(order, levelptr, work, wsum) of levels of ``sizes`` rows, each level's rows
    increasing, work 1 to 4 a row."""
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    level = np.repeat(np.arange(len(sizes)), sizes)
    rng.shuffle(level)
    order = np.argsort(level, kind="stable").astype(np.int64)
    levelptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    work = rng.integers(1, 5, n).astype(np.int64)
    wsum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(work[order], out=wsum[1:])
    return order, levelptr, work, wsum


@pytest.mark.parametrize("team", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_parts_tile_each_level_in_chunks_of_balanced_work(team: int, seed: int) -> None:
    sizes = [70_000, 5, 0, 30_000, 1, 9_000, 150_000]
    order, levelptr, work, wsum = levels_of(sizes, seed)
    parts = level_parts(order, levelptr, len(sizes), work, team, wsum)
    base = coarse.split(order, levelptr, len(sizes), work, None, team, wsum)
    assert parts.partptr[0] == 0
    assert parts.partptr[parts.parts] == len(order)
    assert np.all(np.diff(parts.partptr) > 0)
    assert len(parts.ptr) == len(sizes) + 1
    assert parts.ptr[-1] == parts.parts
    for lev in range(len(sizes)):
        a, b = levelptr[lev], levelptr[lev + 1]
        mine = parts.partptr[parts.ptr[lev] : parts.ptr[lev + 1] + 1].copy()
        if len(mine) > 1:
            assert mine[0] == a
            assert lev == len(sizes) - 1 or mine[-1] == b
        level_work = int(wsum[b] - wsum[a])
        per = min(max(level_work // (team * CHUNK_WORK), 1), INTERLEAVE) if team > 1 else 1
        want_parts = team * per if team > 1 else 1
        count = int(parts.ptr[lev + 1] - parts.ptr[lev])
        if per == 1:  # as coarse.split cuts it
            assert count == int(base.ptr[lev + 1] - base.ptr[lev])
            continue
        assert count == want_parts
        chunk = np.diff(wsum[np.append(mine[:-1], b)])
        assert chunk.max() - chunk.min() <= 2 * int(work.max())  # equal shares of the work
        dealt = [int(chunk[t::team].sum()) for t in range(team)]
        assert int(parts.largest[lev]) == max(dealt)
    if team == 1:
        assert parts.parts == sum(1 for s in sizes if s)


def test_small_levels_keep_one_part_per_thread() -> None:
    order, levelptr, work, wsum = levels_of([3_000, 2_000, 500], 7)
    parts = level_parts(order, levelptr, 3, work, 2, wsum)
    base = coarse.split(order, levelptr, 3, work, None, 2, wsum)
    np.testing.assert_array_equal(parts.partptr, base.partptr)
    np.testing.assert_array_equal(parts.ptr, base.ptr)
