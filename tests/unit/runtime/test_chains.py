"""The joins of coarse levels along chains of parts (:mod:`spf.runtime.chains`): the new
levels keep every dependence the chain pass reports, a chain's new level never falls, a group
holds at most its cap, and the joined parts are the old ones in new-level, chain, level order."""

from __future__ import annotations

import numpy as np
import pytest

from spf.runtime import chains
from spf.runtime.coarse import Parts


def test_a_pipeline_of_two_chains_joins_cap_levels_a_group() -> None:
    """Chain 1 reads only itself, chain 0 reads chain 1 a coarse level before (2-D
    Poisson's two halves of a grid's anti-diagonals): chain 1 groups the levels ``1 .. 4``,
    ``5 .. 8``, ..., chain 0 (after its level 0 and 1, which read no other chain) the levels
    ``2 .. 5``, ``6 .. 9``, ... one group later."""
    levels = 12
    ptr = [0, *range(1, 2 * levels, 2)]  # level 0 one part, then two each
    need = [0] * ptr[-1]
    for c in range(1, levels):
        need[ptr[c]] = c  # chain 0 at level c reads chain 1 (or 0's lone part) at c - 1
    new = chains.groups(ptr, need, 4)
    chain1 = [new[ptr[c] + 1] for c in range(1, levels)]
    chain0 = [new[ptr[c]] for c in range(levels)]
    assert chain0 == [0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    assert chain1 == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]


def check_groups(
    ptr: list[int], need: tuple[list[int], list[int]], new: list[int], cap: int
) -> None:
    level = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    chain = np.arange(ptr[-1]) - np.asarray(ptr)[level]
    for t in range(int(chain.max()) + 1):
        mine = [new[p] for p in np.flatnonzero(chain == t)]
        assert mine == sorted(mine)  # a chain's new level never falls
        assert max(np.unique(mine, return_counts=True)[1]) <= cap
    for p in range(ptr[-1]):
        # every part of a later (earlier) chain at or before level need - 1 is at an earlier
        # new level
        for nd, side in ((need[0][p], chain > chain[p]), (need[1][p], chain < chain[p])):
            before = (level <= nd - 1) & side
            assert all(new[q] < new[p] for q in np.flatnonzero(before))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("cap", [1, 2, 5])
def test_random_part_graphs_keep_their_dependences(seed: int, cap: int) -> None:
    rng = np.random.default_rng(seed)
    levels = int(rng.integers(2, 40))
    sizes = rng.integers(1, 4, levels)
    ptr = [0, *np.cumsum(sizes).tolist()]
    level = np.repeat(np.arange(levels), sizes)
    high = [int(rng.integers(0, c + 1)) if rng.random() < 0.5 else 0 for c in level]
    low = [int(rng.integers(0, c + 1)) if rng.random() < 0.3 else 0 for c in level]
    new = chains.groups(ptr, high, cap, low)
    check_groups(ptr, (high, low), new, cap)


def test_a_pipeline_of_four_chains_keeps_its_lag_one_group_a_stage() -> None:
    """Four chains, each reading the next one's rows a coarse level before (the grid cut in
    four a level): chain ``t`` lags chain ``t + 1`` by one group, not by the lagging
    chains' groups (the bound is taken per side)."""
    levels = 40
    ptr = list(range(0, 4 * levels + 1, 4))
    high = [0] * ptr[-1]
    for c in range(1, levels):
        for t in range(3):
            high[ptr[c] + t] = c  # chain t reads chain t + 1 at level c - 1
    new = chains.groups(ptr, high, 8)
    check_groups(ptr, (high, [0] * ptr[-1]), new, 8)
    assert max(new) + 1 <= levels // 8 + 4  # 5 groups a chain, 3 groups of lag


def test_join_gathers_each_chains_parts_in_level_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three coarse levels of two parts, chain 0 at levels 1 and 2 reading chain 1 a level
    before: joined under the cap that the estimate ranks first (here: fewest levels, the
    first cap of a tie), each new part holds its chain's old parts in coarse-level order,
    with their work summed."""
    order = np.arange(12, dtype=np.int64)[::-1].copy()
    ptr = np.array([0, 2, 4, 6], dtype=np.int64)
    partptr = np.array([0, 2, 4, 6, 8, 10, 12], dtype=np.int64)
    parts = Parts(3, ptr, partptr, order, 6, np.array([2, 2, 2]), work=np.full(6, 2.0))
    need = np.zeros(6, dtype=np.int64)  # per part
    need[2] = 1  # level 1's chain 0 reads level 0 (chain 1)
    need[4] = 2
    monkeypatch.setattr(chains, "estimate", lambda p, total, unit=1.0: 100.0 / p.levels)
    none = np.zeros(6, dtype=np.int64)
    got = chains.join(parts, (need, none), np.ones(12, dtype=np.int64), 12, 1.0, 1.0)
    assert got.cap == chains.CAPS[0] == 2
    assert got.parts.levels == 2
    assert got.parts.ptr.tolist() == [0, 2, 4]
    # level 0: chain 0's level 0, chain 1's levels 0 and 1 (its cap); level 1: chain 0's
    # levels 1 and 2 (after chain 1's level 0), chain 1's level 2
    old = [order[partptr[p] : partptr[p + 1]].tolist() for p in range(6)]
    assert got.parts.order.tolist() == old[0] + old[1] + old[3] + old[2] + old[4] + old[5]
    assert got.parts.partptr.tolist() == [0, 2, 6, 10, 12]
    assert got.parts.largest.tolist() == [4, 4]
    assert got.parts.work is not None
    assert got.parts.work.tolist() == [2, 4, 4, 2]


def test_join_keeps_the_parts_when_no_cap_is_estimated_faster() -> None:
    order = np.arange(4, dtype=np.int64)
    parts = Parts(2, np.array([0, 1, 2]), np.array([0, 2, 4]), order, 2, np.array([2, 2]))
    none = np.zeros(2, dtype=np.int64)
    got = chains.join(parts, (none, none), np.ones(4, dtype=np.int64), 4, 1.0, 1e9)
    assert got.cap == 0
    assert got.parts is parts
