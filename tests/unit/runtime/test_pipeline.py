"""``spf.runtime.pipeline.pipeline`` on hand-made loops of a chain fused with a free kernel:
every node once, the chain's rows in order as the first part of each level, each free row
in a level after the block that completes it, the rows left over split in two halves."""

from __future__ import annotations

import numpy as np
import pytest

from spf.runtime import coarse, pipeline


def levels_of(parts: coarse.Parts) -> list[list[list[int]]]:
    """Each level's parts as lists of nodes."""
    out = []
    for lev in range(parts.levels):
        lo, hi = int(parts.ptr[lev]), int(parts.ptr[lev + 1])
        out.append(
            [parts.order[parts.partptr[p] : parts.partptr[p + 1]].tolist() for p in range(lo, hi)]
        )
    return out


def band(n: int, reach: int) -> tuple[np.ndarray, np.ndarray]:
    """``after`` and ``work`` of a solve whose row ``i`` reads rows ``i - reach .. i - 1``
    fused with a product whose row ``p`` reads ``x`` up to row ``p + reach``."""
    after = np.concatenate((np.arange(n), np.minimum(np.arange(n) + reach, n - 1)))
    work = np.concatenate((np.minimum(np.arange(n), reach) + 1, np.full(n, 2 * reach + 1)))
    return after.astype(np.int32), work.astype(np.int64)


@pytest.mark.parametrize("blocks", [1, 2, 4, 8])
def test_parts_hold_every_node_once_each_after_what_completes_it(blocks: int) -> None:
    n, reach = 64, 3
    after, work = band(n, reach)
    parts = pipeline.pipeline(after, work, blocks)
    assert parts is not None
    assert sorted(parts.order.tolist()) == list(range(2 * n))
    assert parts.levels == blocks + 1
    assert parts.parts == 2 * parts.levels
    got = levels_of(parts)
    chain = [row for level in got[:-1] for row in level[0]]
    assert chain == list(range(n))  # the solve's rows in order, part 0 of each level
    level_of = {node: lev for lev, level in enumerate(got) for part in level for node in part}
    for p in range(n):
        assert level_of[n + p] > level_of[int(after[n + p])], f"product row {p} runs too early"
    for level in got:
        for part in level:
            assert part == sorted(part)  # each part's rows increase


def test_a_level_takes_free_rows_up_to_its_blocks_time() -> None:
    """A level's second part takes ready free rows up to ``SHARE`` times its block's work
    (the second thread's rows balance the solve block's time: a unit of the solve costs
    more than one of the product); with every row ready it takes more than the block's
    units (it stopped at them: the second thread idled through the block's end)."""
    n, reach = 64, 3
    after, work = band(n, reach)
    parts = pipeline.pipeline(after, work, 4)
    assert parts is not None
    got = levels_of(parts)
    assert got[0][1] == []  # nothing is ready before the first block is done
    past = 0
    for lev in range(1, 4):
        block = int(work[got[lev][0]].sum())
        free = int(work[got[lev][1]].sum())
        assert 0 < free <= block * pipeline.SHARE
        past += free > block
        assert int(parts.largest[lev]) == max(block, free)
    assert past > 0
    first, second = (int(work[part].sum()) for part in got[-1])
    assert abs(first - second) <= 2 * reach + 1  # the rest in two halves


def test_rows_that_wait_on_the_last_row_run_in_the_last_level() -> None:
    n = 40
    after = np.concatenate((np.arange(n), np.full(n, n - 1))).astype(np.int32)
    work = np.ones(2 * n, dtype=np.int64)
    parts = pipeline.pipeline(after, work, 4)
    assert parts is not None
    got = levels_of(parts)
    assert all(level[1] == [] for level in got[:-1])
    assert sorted(got[-1][0] + got[-1][1]) == list(range(n, 2 * n))


def test_too_few_rows_for_the_blocks_gives_none() -> None:
    after, work = band(3, 1)
    assert pipeline.pipeline(after, work, 4) is None
    assert pipeline.pipeline(after, work, 2) is not None


@pytest.mark.parametrize("n", range(1, 12))
def test_parts_never_outnumber_the_nodes(n: int) -> None:
    """The executor's checked call assumes ``nparts <= 2 * N``: with as many solve rows as
    blocks (each its own block) the pipeline made ``2 * (n + 1)`` parts, and its own plan
    was refused by a ``check=True`` call (N = 2: 6 parts)."""
    after, work = band(n, 1)
    for blocks in (1, 2, 4, 8):
        parts = pipeline.pipeline(after, work, blocks)
        assert parts is None or parts.parts <= 2 * n, (n, blocks)


def test_applies_to_a_chain_then_a_free_kernel_on_two_threads() -> None:
    assert pipeline.applies((False, True), 2)
    assert not pipeline.applies((False, True), 1)
    assert not pipeline.applies((True, False), 2)
    assert not pipeline.applies((False, False), 2)
    assert not pipeline.applies((False, True, True), 2)


def test_reweigh_undoes_the_coarse_chain_weight() -> None:
    work = np.array([3 * coarse.CHAIN_WEIGHT, 2 * coarse.CHAIN_WEIGHT, 5, 7], dtype=np.int64)
    got = pipeline.reweigh(work)
    assert got.tolist() == [3 * pipeline.CHAIN_WEIGHT, 2 * pipeline.CHAIN_WEIGHT, 5, 7]
    assert work[0] == 3 * coarse.CHAIN_WEIGHT  # a copy
