"""``spf.runtime.interleave.interleave`` on hand-made parts: which free nodes move, where
they land, and where the coarse levels may be cut again; and in fixed C
(:mod:`spf.runtime.chain_scan`) the parts numpy gives, on random fused loops."""

from __future__ import annotations

import numpy as np
import pytest

from spf.runtime.build import light_opt_flags
from spf.runtime.chain_scan import ChainScan, build_chain_scan
from spf.runtime.coarse import Parts
from spf.runtime.compile import optimisation_flags
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


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> ChainScan:
    cache = tmp_path_factory.mktemp("interleave_scan")
    return build_chain_scan(optimisation_flags(None, "light", light_opt_flags()), str(cache))


def random_fused(seed: int, dtype: type[np.integer]) -> tuple[Parts, np.ndarray, np.ndarray]:
    """A fused loop of two kernels (nodes ``[0, m)`` a solve's rows, ``[m, 2m)`` a free
    product's) planned in coarse levels of runs of consecutive solve rows cut into 1-3
    parts, each product row after every run it may read: (the parts, each node's freedom,
    each node's sources as a dense 0/1 matrix by rows)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(8, 60))
    n = 2 * m
    solve_level = np.sort(rng.integers(0, max(2, m // 6), m))  # runs of consecutive rows
    edges = np.zeros((n, n), dtype=bool)
    for i in range(m, n):  # a product row reads a few solve rows, often one run's tail
        row = i - m
        srcs = {row, *rng.integers(0, m, int(rng.integers(0, 3))).tolist()}
        if rng.random() < 0.5 and row > 0:
            srcs.add(row - 1)
        edges[i, list(srcs)] = True
    level = np.empty(n, dtype=np.int64)
    level[:m] = solve_level
    for i in range(m, n):
        level[i] = level[np.flatnonzero(edges[i])].max() + 1
    order = np.argsort(level, kind="stable")
    levels = int(level.max()) + 1
    partptr, ptr = [0], [0]
    for c in range(levels):
        at = np.flatnonzero(level[order] == c)
        pieces = np.array_split(at, int(rng.integers(1, 4))) if len(at) else []
        for piece in pieces:
            if len(piece):
                partptr.append(int(piece[-1]) + 1)
        ptr.append(len(partptr) - 1)
    parts = Parts(
        levels,
        np.array(ptr, dtype=np.int64),
        np.array(partptr, dtype=np.int64),
        order.astype(dtype),
        len(partptr) - 1,
        np.zeros(levels),
    )
    free = np.arange(n) >= m
    return parts, free, edges


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(25))
def test_the_c_loops_interleave_as_numpy(
    scan: ChainScan, seed: int, dtype: type[np.integer]
) -> None:
    """``interleave`` with the fixed C loops of :mod:`spf.runtime.chain_scan` gives numpy's
    parts field for field (order, cuts, work) and the same moved nodes, at 1-3 threads."""
    parts, free, edges = random_fused(seed, dtype)
    n = len(parts.order)
    pos_of, key_of = sink_inputs(parts)
    last_pos = np.full(n, -1, dtype=np.int64)
    last_key = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    for snk in range(n):
        srcs = np.flatnonzero(edges[snk])
        if len(srcs):
            last_pos[snk] = pos_of[srcs].max()
            last_key[snk] = key_of[srcs].max()
    work = np.random.default_rng(seed).integers(1, 9, n).astype(np.int64)
    moved_any = False
    for threads in (1, 2, 3):
        want = interleave(parts, pos_of, (last_pos, last_key), free, work, threads)
        got = interleave(parts, pos_of, (last_pos, last_key), free, work, threads, scan)
        np.testing.assert_array_equal(got.moved, want.moved)
        moved_any |= len(want.moved) > 0
        a, b = got.parts, want.parts
        assert (a.levels, a.parts, a.stretches) == (b.levels, b.parts, b.stretches)
        for name in ("ptr", "partptr", "order", "largest", "work"):
            x, y = getattr(a, name), getattr(b, name)
            assert (x is None) == (y is None), name
            if x is not None:
                assert np.asarray(x).dtype == np.asarray(y).dtype, name
                np.testing.assert_array_equal(x, y, err_msg=name)
    if seed < 20:
        assert moved_any  # the cases exercise the moves (a few seeds may move none)
