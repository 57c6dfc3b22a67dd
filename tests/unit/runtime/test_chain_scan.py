"""The join's loops in fixed C (:mod:`spf.runtime.chain_scan`) give the values of
:mod:`spf.runtime.chains`' numpy and Python: the nodes' parts, each cap's new levels and
the joined order, on random plans (int32 and int64 orders), and
:func:`spf.runtime.chains.join` through them the same joined parts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf.runtime import chains
from spf.runtime.build import light_opt_flags
from spf.runtime.chain_scan import MAX_TABLE, ChainScan, build_chain_scan, in_halves
from spf.runtime.coarse import Parts
from spf.runtime.compile import optimisation_flags

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> ChainScan:
    cache: Path = tmp_path_factory.mktemp("chain_scan")
    return build_chain_scan(optimisation_flags(None, "light", light_opt_flags()), str(cache))


def random_plan(
    seed: int, dtype: type[np.integer], with_work: bool
) -> tuple[Parts, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """A plan of 2-60 coarse levels of 1-3 non-empty parts over a random permutation, the
    needs per part a chain pass could report (a source's coarse level + 1, at most the
    part's own level: 0 or an earlier one) and each node's work."""
    rng = np.random.default_rng(seed)
    levels = int(rng.integers(2, 60))
    per_level = rng.integers(1, 4, levels)
    ptr = np.concatenate([[0], np.cumsum(per_level)]).astype(np.int64)
    parts = int(ptr[-1])
    sizes = rng.integers(1, 9, parts)
    partptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(partptr[-1])
    order = rng.permutation(n).astype(dtype)
    part_level = np.repeat(np.arange(levels), per_level)
    need = []
    for share in (0.5, 0.3):
        got = np.where(rng.random(parts) < share, rng.integers(0, part_level + 1), 0)
        need.append(got.astype(np.int32))
    work = rng.integers(1, 20, n).astype(np.int64)
    part_work = np.add.reduceat(work[order], partptr[:-1]).astype(np.float64)
    largest = np.maximum.reduceat(part_work, ptr[:-1]).astype(np.int64)
    kept = part_work if with_work else None
    plan = Parts(levels, ptr, partptr, order, parts, largest, work=kept)
    return plan, (need[0], need[1]), work


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(12))
def test_the_loops_give_numpys_values(scan: ChainScan, seed: int, dtype: type[np.integer]) -> None:
    plan, need, _ = random_plan(seed, dtype, with_work=False)
    n, starts = len(plan.order), plan.partptr[:-1]
    part = chains.chain_parts(plan, n, scan)
    assert part.dtype == np.int32
    np.testing.assert_array_equal(part, chains.chain_parts(plan, n))
    for p in range(plan.parts):  # each position's node lies in the part holding it
        assert (part[plan.order[plan.partptr[p] : plan.partptr[p + 1]]] == p).all()
    high, low = (x.astype(np.int64) for x in need)
    for cap in (*chains.CAPS, 1):
        got = scan.groups(plan.ptr, plan.levels, high, low, cap)
        assert got is not None
        want = chains.groups(plan.ptr.tolist(), high.tolist(), cap, low.tolist())
        assert got.tolist() == want
    perm = np.random.default_rng(seed).permutation(plan.parts)
    size = np.diff(plan.partptr)[perm]
    gathered = scan.gather(plan.order, np.ascontiguousarray(starts[perm]), size, n)
    assert gathered.dtype == plan.order.dtype
    want_order = np.concatenate(
        [plan.order[starts[p] : starts[p] + np.diff(plan.partptr)[p]] for p in perm]
    )
    np.testing.assert_array_equal(gathered, want_order)


@pytest.mark.parametrize("with_work", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_join_through_the_loops_joins_alike(
    scan: ChainScan, seed: int, with_work: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any join preferred (the estimate: fewer levels faster), the same cap, levels, parts,
    order and work either way."""
    monkeypatch.setattr(chains, "estimate", lambda p, total, unit=1.0: 1e6 / p.levels)
    plan, need, work = random_plan(seed, np.int32 if seed % 2 else np.int64, with_work)
    total = int(work.sum())
    by_numpy = chains.join(plan, need, work, total, 1.0, 0.0)
    by_scan = chains.join(plan, need, work, total, 1.0, 0.0, scan)
    assert by_scan.cap == by_numpy.cap > 0
    assert by_scan.gain == by_numpy.gain
    a, b = by_scan.parts, by_numpy.parts
    assert a.levels == b.levels
    assert a.parts == b.parts
    for name in ("ptr", "partptr", "order", "largest", "work"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


def test_a_need_at_its_own_level_is_refused(scan: ChainScan) -> None:
    """A need must name an earlier coarse level (a chain pass never reports a source at the
    part's own level in another chain, which the coarse pass put one level later)."""
    ptr = np.array([0, 2, 4], dtype=np.int64)
    need = np.array([0, 0, 2, 0], dtype=np.int64)  # level 1's chain 0 at level 1 itself
    with pytest.raises(ValueError, match="not before its own"):
        scan.groups(ptr, 2, need, np.zeros(4, dtype=np.int64), 2)


def test_a_table_too_large_is_not_joined(scan: ChainScan) -> None:
    levels = MAX_TABLE // 2 + 1
    ptr = np.concatenate([[0], np.full(levels, 2).cumsum()]).astype(np.int64)
    none = np.zeros(int(ptr[-1]), dtype=np.int64)
    assert scan.groups(ptr, levels, none, none, 2) is None


@pytest.mark.parametrize(("cut", "end"), [(0, 7), (3, 7), (7, 7), (0, 0)])
def test_in_halves_runs_both_ranges(cut: int, end: int) -> None:
    seen: list[tuple[int, int]] = []
    in_halves(lambda lo, hi: seen.append((lo, hi)), cut, end)
    assert sorted(seen) == [(0, cut), (cut, end)]


def test_in_halves_raises_the_other_threads_error() -> None:
    def run(lo: int, hi: int) -> None:
        if lo > 0:
            raise RuntimeError("second half")

    with pytest.raises(RuntimeError, match="second half"):
        in_halves(run, 2, 4)
