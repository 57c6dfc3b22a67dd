"""``spf.runtime.interleave.interleave`` on hand-made parts: which free nodes move, where
they land, and where the coarse levels may be cut again."""

from __future__ import annotations

import numpy as np

from spf.runtime.coarse import Parts
from spf.runtime.interleave import INTERLEAVED_WEIGHT, interleave, sink_inputs


def two_levels() -> Parts:
    """Chain nodes 0-5 (rows of a kernel that is not free) at level 0 in two parts, runs
    0-2 and 3-5 (rows 0, 1, 2 and 3, 4, 5); free nodes 6-9 at level 1 in one part."""
    order = np.arange(10, dtype=np.int64)
    return Parts(2, np.array([0, 2, 3]), np.array([0, 3, 6, 10]), order, 3, np.zeros(2))


def sinks(parts: Parts, sources: dict[int, list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """What the generated sink pass writes for these edges (sink: its sources)."""
    pos_of, key_of = sink_inputs(parts)
    last_pos = np.full(10, -1, dtype=np.int64)
    last_key = np.full(10, np.iinfo(np.int64).min, dtype=np.int64)
    for snk, srcs in sources.items():
        last_pos[snk] = max(pos_of[s] for s in srcs)
        last_key[snk] = max(key_of[s] for s in srcs)
    return last_pos, last_key


def test_free_nodes_move_after_the_source_completing_them() -> None:
    parts = two_levels()
    free = np.arange(10) >= 6
    # 6 reads 0 and 1 (one run), 7 reads 2 and 3 (two parts), 8 reads 5, 9 reads nothing
    last = sinks(parts, {6: [0, 1], 7: [2, 3], 8: [5]})
    pos_of, _ = sink_inputs(parts)
    got = interleave(parts, pos_of, last, free, np.ones(10, dtype=np.int64), 2)
    assert sorted(got.moved.tolist()) == [6, 8]
    order = got.parts.order.tolist()
    assert order[: order.index(6) + 1] == [0, 1, 6]  # right after its last source
    assert order.index(8) == order.index(5) + 1
    assert order[-2:] == [7, 9]  # the others stay at level 1, after every level-0 node
    ptr, partptr = got.parts.ptr, got.parts.partptr
    assert got.parts.levels == 2
    cuts = set(partptr[1 : ptr[1]].tolist())  # the cuts inside level 0
    assert cuts <= {order.index(2) + 1, order.index(3)}  # between the runs, 6 with 0 and 1
    assert sorted(order) == list(range(10))
    assert 0 < INTERLEAVED_WEIGHT < 1


def test_nothing_moves_when_every_source_is_split_or_absent() -> None:
    parts = two_levels()
    free = np.arange(10) >= 6
    last = sinks(parts, {7: [2, 3], 8: [1, 4]})
    pos_of, _ = sink_inputs(parts)
    got = interleave(parts, pos_of, last, free, np.ones(10, dtype=np.int64), 2)
    assert len(got.moved) == 0
    assert got.parts is parts
