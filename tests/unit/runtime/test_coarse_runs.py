"""spf.runtime.coarse_runs: a coarse plan's order and parts from the runs of its coarse levels
(the generated fill and reach stages) are the row sort's and ``coarse.split``'s, array for
array, for every team size, on keys in runs of every length (cuts falling inside runs, at
their boundaries, in levels of one run and in empty levels), and the level sizes are
numpy's."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf.analysis.coarse_inspector import (
    CORDER,
    REACH_GOT,
    RUN_AT,
    RUN_FIRST,
    RUN_HI,
    RUN_LEN,
    RUN_LO,
    RUN_TOP,
    RUN_WORK,
    RUNS_N,
    WORK,
    build_run_reach,
)
from spf.analysis.executor import build_executor
from spf.kernels import sptrsv_csr
from spf.runtime import coarse, copies
from spf.runtime.coarse_runs import (
    MIN_RUN,
    SAMPLED_PAIRS,
    SAMPLED_WINDOWS,
    Reach,
    breaks,
    find_runs,
    likely_runs,
    split_runs,
)
from spf.runtime.plan import _pick, _reach
from spf.runtime.run_scan import RunScan

if TYPE_CHECKING:
    from spf.runtime.plan import WavefrontKernel


def run_keys(rng: np.random.Generator, n: int, count: int, longest: int) -> np.ndarray:
    """``n`` int32 keys below ``count`` in runs of 1 to ``longest`` equal keys, a key's runs
    in no order, some keys unused (empty coarse levels)."""
    lengths = rng.integers(1, longest + 1, n)
    keys = rng.integers(0, count, n)
    return np.repeat(keys, lengths)[:n].astype(np.int32)


@pytest.mark.parametrize("n", [40, 999, 5000, 20000])
@pytest.mark.parametrize("longest", [48, 128, 700])
def test_the_runs_give_the_row_sorts_parts(
    sptrsv_wavefront: WavefrontKernel, n: int, longest: int
) -> None:
    rng = np.random.default_rng(n + longest)
    nclev = max(n // 300, 1)
    clev = run_keys(rng, n, nclev, longest)
    nclev = int(clev.max()) + 1
    level = rng.integers(0, 7, n).astype(np.int32)
    work = rng.integers(1, 9, n).astype(np.int64)
    given = {"N": n}
    for team in (1, 2, 3, 4):
        found = find_runs(clev, nclev)
        assert found is not None
        sizes, parts, total = sptrsv_wavefront._by_runs(given, level, 7, found, work, team, None)
        levelptr, cptr, corder, wsum = sptrsv_wavefront._sorted(given, level, 7, clev, nclev, work)
        blocks = coarse.Blocks(coarse.RUN_SHIFT, n, (False,), runs=True)
        want = coarse.split(corder, cptr, nclev, work, blocks, team, wsum)
        assert total == int(wsum[-1])
        np.testing.assert_array_equal(sizes(), levelptr)
        assert (parts.levels, parts.parts) == (want.levels, want.parts)
        for name in ("ptr", "partptr", "order", "largest"):
            np.testing.assert_array_equal(getattr(parts, name), getattr(want, name), name)


def _numpy_reach(work: np.ndarray, asked: list[tuple[int, int]]) -> Reach:
    """The reach stage in numpy, recording each run's twice share and work in ``asked``."""

    def reach(first: np.ndarray, size: np.ndarray, share: np.ndarray) -> np.ndarray:
        got = np.empty(len(first), dtype=np.int64)
        for k, (f, s, h) in enumerate(zip(first, size, share, strict=True)):
            sums = np.cumsum(work[f : f + s])
            asked.append((int(2 * h), int(sums[-1])))
            got[k] = sums[np.searchsorted(sums, h)]
        return got

    return reach


@pytest.mark.parametrize("in_c", [False, True])
@pytest.mark.parametrize("team", [2, 3, 4])
def test_the_cuts_read_only_runs_whose_share_lies_in_their_first_half(
    sptrsv_wavefront: WavefrontKernel, team: int, in_c: bool
) -> None:
    """A cut moves to the nearer boundary of the run its share falls in (a tie: the later
    one), so a run whose share lies in its second half of work (or at the half) ends the
    part whatever its rows' work: ``split_runs`` reads the rows of the other runs only,
    and its parts are ``coarse.split``'s, ties included (even work), in numpy and in C
    (:mod:`spf.runtime.run_scan`)."""
    scan = sptrsv_wavefront._split()[8] if in_c else None
    rng = np.random.default_rng(team)
    n = 30000
    clev = run_keys(rng, n, 60, 300)
    nclev = int(clev.max()) + 1
    found = find_runs(clev, nclev)
    assert found is not None
    order = np.argsort(clev, kind="stable")
    cptr = np.zeros(nclev + 1, dtype=np.int64)
    np.cumsum(np.bincount(clev, minlength=nclev), out=cptr[1:])
    blocks = coarse.Blocks(coarse.RUN_SHIFT, n, (False,), runs=True)
    for work in (rng.integers(1, 9, n), np.full(n, 2), rng.integers(1, 3, n) * 2):
        work = work.astype(np.int64)
        wsum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(work[order], out=wsum[1:])
        run_sum = np.zeros(len(found.first) + 1, dtype=np.int64)
        run_sum[1:] = wsum[found.pos[1:]]
        asked: list[tuple[int, int]] = []
        parts = split_runs(found, run_sum, order, team, _numpy_reach(work, asked), scan=scan)
        want = coarse.split(order, cptr, nclev, work, blocks, team, wsum)
        for name in ("ptr", "partptr", "largest"):
            np.testing.assert_array_equal(getattr(parts, name), getattr(want, name), name)
        assert (parts.levels, parts.parts) == (want.levels, want.parts)
        assert asked
        assert all(twice < whole for twice, whole in asked)


@pytest.mark.parametrize("in_c", [False, True])
@pytest.mark.parametrize("team", [2, 3, 4])
def test_the_cuts_read_only_runs_whose_half_lies_within_a_node_of_the_share(
    sptrsv_wavefront: WavefrontKernel, team: int, in_c: bool
) -> None:
    """Given each run's largest work of a node, ``split_runs`` reads only the runs whose
    half of work lies within that of the share (the least prefix sum reaching the share is
    at most the share plus one node's work, less one): on even work, as Poisson's rows
    nearly are, a few runs instead of about half of those the cuts fall in; the parts are
    ``coarse.split``'s, ties included, in numpy and in C (:mod:`spf.runtime.run_scan`)."""
    scan = sptrsv_wavefront._split()[8] if in_c else None
    rng = np.random.default_rng(team)
    n = 30000
    clev = run_keys(rng, n, 60, 300)
    nclev = int(clev.max()) + 1
    found = find_runs(clev, nclev)
    assert found is not None
    order = np.argsort(clev, kind="stable")
    cptr = np.zeros(nclev + 1, dtype=np.int64)
    np.cumsum(np.bincount(clev, minlength=nclev), out=cptr[1:])
    blocks = coarse.Blocks(coarse.RUN_SHIFT, n, (False,), runs=True)
    ends = np.append(found.start[1:], n)
    for work in (rng.integers(1, 9, n), np.full(n, 2), rng.integers(1, 3, n) * 2):
        work = work.astype(np.int64)
        top = np.maximum.reduceat(work, found.start)  # each run's, in node order
        assert np.array_equal(
            top, [work[a:b].max() for a, b in zip(found.start, ends, strict=True)]
        )
        wsum = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(work[order], out=wsum[1:])
        run_sum = np.zeros(len(found.first) + 1, dtype=np.int64)
        run_sum[1:] = wsum[found.pos[1:]]
        asked: list[tuple[int, int]] = []
        unbounded: list[tuple[int, int]] = []
        parts = split_runs(found, run_sum, order, team, _numpy_reach(work, asked), top, scan)
        split_runs(found, run_sum, order, team, _numpy_reach(work, unbounded), scan=scan)
        want = coarse.split(order, cptr, nclev, work, blocks, team, wsum)
        for name in ("ptr", "partptr", "largest"):
            np.testing.assert_array_equal(getattr(parts, name), getattr(want, name), name)
        assert set(asked) <= set(unbounded)
        assert all(twice < whole for twice, whole in asked)
        if work.min() == work.max():  # a half within one node of the share: rare
            assert len(asked) * 4 < len(unbounded)


def _parts_fields(parts: coarse.Parts) -> dict[str, object]:
    fields = ("levels", "parts", "ptr", "partptr", "largest", "breaks", "work", "stretches")
    got: dict[str, object] = {}
    for name in fields:
        value = getattr(parts, name)
        got[name] = (value.dtype, value.tolist()) if isinstance(value, np.ndarray) else value
    return got


@pytest.mark.parametrize("team", [1, 2, 3, 4, 7])
def test_the_parts_cut_in_c_are_numpys(sptrsv_wavefront: WavefrontKernel, team: int) -> None:
    """``split_runs`` in C (:mod:`spf.runtime.run_scan`: the cuts, the parts and the breaks)
    gives numpy's parts field for field and dtype for dtype, with and without each run's
    largest work, asking the reach stage about the same runs: uneven and even work, levels
    of one run and empty levels, more threads than a level has runs; each part's work is
    the sum of its nodes'."""
    scan = sptrsv_wavefront._split()[8]
    rng = np.random.default_rng(10 + team)
    for n, count, longest in ((30000, 60, 300), (5000, 400, 40), (2000, 3, 900)):
        clev = run_keys(rng, n, count, longest)
        nclev = int(clev.max()) + 3  # two empty levels at the end
        found = find_runs(clev, nclev)
        assert found is not None
        order = np.argsort(clev, kind="stable").astype(np.int32)
        for work in (rng.integers(1, 9, n), np.full(n, 2), rng.integers(1, 3, n) * 2):
            work = work.astype(np.int64)
            wsum = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(work[order], out=wsum[1:])
            run_sum = np.zeros(len(found.first) + 1, dtype=np.int64)
            run_sum[1:] = wsum[found.pos[1:]]
            top = np.maximum.reduceat(work, found.start)
            for tops in (top, None):
                asked: list[tuple[int, int]] = []
                in_c: list[tuple[int, int]] = []
                want = split_runs(found, run_sum, order, team, _numpy_reach(work, asked), tops)
                got = split_runs(found, run_sum, order, team, _numpy_reach(work, in_c), tops, scan)
                assert got.order is order
                assert _parts_fields(got) == _parts_fields(want)
                assert sorted(in_c) == sorted(asked)
                assert got.work is not None  # each part's work: its nodes' (the join's)
                sums = np.add.reduceat(work[order], got.partptr[: got.parts])
                assert got.work.tolist() == sums.tolist()
    narrow = run_sum.astype(np.int32)  # not what the C reads: numpy's way, the same parts
    want = split_runs(found, narrow, order, team, _numpy_reach(work, []), top)
    got = split_runs(found, narrow, order, team, _numpy_reach(work, []), top, scan)
    assert _parts_fields(got) == _parts_fields(want)


def test_short_runs_keep_the_row_sort() -> None:
    rng = np.random.default_rng(1)
    n = 10 * MIN_RUN
    scattered = rng.integers(0, 5, n).astype(np.int32)
    assert find_runs(scattered, 5) is None  # ~n runs: more than n / MIN_RUN
    assert find_runs(np.repeat(np.arange(5, dtype=np.int32), 2 * MIN_RUN), 5) is not None
    assert find_runs(np.zeros(0, dtype=np.int32), 0) is None


def _patterns(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Keys in runs: in no order (nearly every run boundary a break), increasing (none), a
    cycle of three keys (a break at every boundary but each key's last), and a mix."""
    mixed = run_keys(rng, n, 6, 4 * MIN_RUN)
    mixed[: n // 2] = np.sort(mixed[: n // 2])
    return [
        run_keys(rng, n, max(n // 300, 2), 700),
        np.sort(run_keys(rng, n, max(n // 300, 2), 48)),
        (np.arange(n) // (2 * MIN_RUN) % 3).astype(np.int32),
        mixed,
    ]


@pytest.mark.parametrize("n", [2 * MIN_RUN, 5000, 70000])
def test_the_runs_breaks_are_the_orders(n: int) -> None:
    """The positions where the order steps to a row that is not the next one, from the runs
    alone, are those of the order; ``copies.pays`` reading them answers as reading the
    order does (the work also at the boundary of its rule, where the samples decide)."""
    rng = np.random.default_rng(n)
    for clev in _patterns(rng, n):
        found = find_runs(clev, int(clev.max()) + 1)
        assert found is not None
        sizes = np.diff(found.pos)
        order = np.concatenate(
            [np.arange(f, f + s) for f, s in zip(found.first, sizes, strict=True)]
        )
        want = np.flatnonzero(order[1:] != order[:-1] + 1)
        np.testing.assert_array_equal(breaks(found), want)
        near = int(copies.RUN_WORK * (1 + len(want) * (n - 1) / min(copies.SAMPLES, n - 1)))
        for work in (copies.MIN_WORK, 3 * copies.MIN_WORK, near, near + 1):
            assert copies.pays(order, work, breaks(found)) == copies.pays(order, work), work


@pytest.mark.parametrize("n", [2, 3, 4, 100, 16385, 16386, 99991, 1_000_001, 3_333_334])
def test_the_sampled_breaks_are_those_a_search_finds(
    sptrsv_wavefront: WavefrontKernel, n: int
) -> None:
    """``copies.pays`` looks each break up where the sample equal to it can only be (one of
    four samples by the step): the count of breaks among the samples is a binary search's,
    for breaks at random, right on samples, beside them, at both ends of the order, in
    numpy and in C (:meth:`spf.runtime.run_scan.RunScan.sampled`)."""
    scan = sptrsv_wavefront._split()[8]
    at = np.linspace(0, n - 2, num=min(copies.SAMPLES, n - 1), dtype=np.int64)
    rng = np.random.default_rng(n)
    ends = np.array([0, n - 2], dtype=np.int64)
    for k in (0, 1, 50, 7000):
        picked = rng.choice(at, min(k, len(at)))
        near = np.concatenate([picked - 1, picked, picked + 1, rng.integers(0, n - 1, k)])
        for candidates in (near, ends, rng.integers(0, n - 1, k)):
            found = np.unique(np.clip(candidates, 0, n - 2)).astype(np.int64)
            where = np.minimum(np.searchsorted(at, found), len(at) - 1)
            want = int(np.count_nonzero(at[where] == found))
            assert copies._sampled(len(at), found, n) == want
            if len(at) > 1:
                assert scan.sampled(len(at), found, n) == want


@pytest.mark.parametrize("n", [3, 4, 5, 100, 16384, 16385, 16386, 99991, 1_000_001, 2**31 - 1])
def test_the_samples_computed_are_linspaces(n: int) -> None:
    """``copies.pays`` computes only the samples it looks at, as ``np.linspace`` computes
    them (the float step, the product truncated, the last one ``n - 2``), past the last
    one too: the same integers, sample for sample."""
    samples = min(copies.SAMPLES, n - 1)
    at = np.linspace(0, n - 2, num=samples, dtype=np.int64)
    j = np.arange(samples + 3, dtype=np.int64)
    got = copies._samples_at(j, samples - 1, (n - 2) / (samples - 1), n)
    np.testing.assert_array_equal(got[:samples], at)
    assert (got[samples:] == n - 2).all()


def test_every_position_is_looked_up_as_a_search_finds_it(
    sptrsv_wavefront: WavefrontKernel,
) -> None:
    """Every position of small orders all at once (of some, one at a time too), and every position
    beside a sample of orders of many sizes: each is among the samples exactly when a
    binary search among ``np.linspace``'s finds it (two candidate samples per break), in
    numpy and in C."""
    scan = sptrsv_wavefront._split()[8]
    rng = np.random.default_rng(11)
    sizes = [*range(2, 400), *map(int, rng.integers(16_000, 2**31 - 2, 60))]
    for n in sizes:
        samples = min(copies.SAMPLES, n - 1)
        at = np.linspace(0, n - 2, num=samples, dtype=np.int64)
        if n < 400:
            found = np.arange(n - 1, dtype=np.int64)
            alone = n < 64 or n in (127, 128, 129, 255, 256, 257, 399)  # 80K lookups: 8 s
            singles = [found[i : i + 1] for i in range(len(found))] if alone else []
        else:
            near = (at[:, None] + np.arange(-2, 3)[None, :]).ravel()
            found = np.unique(np.clip(near, 0, n - 2)).astype(np.int64)
            singles = []
        for got in (found, *singles):
            where = np.minimum(np.searchsorted(at, got), len(at) - 1)
            want = int(np.count_nonzero(at[where] == got))
            assert copies._sampled(samples, got, n) == want
            if samples > 1:
                assert scan.sampled(samples, got, n) == want


def test_the_runs_count_their_coarse_levels() -> None:
    rng = np.random.default_rng(3)
    clev = run_keys(rng, 20000, 40, 200)
    given = find_runs(clev, int(clev.max()) + 1)
    counted = find_runs(clev)
    assert given is not None
    assert counted is not None
    for name in ("first", "pos", "levelruns"):
        np.testing.assert_array_equal(getattr(counted, name), getattr(given, name), name)


def _numpy_starts(clev: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.flatnonzero(clev[1:] != clev[:-1]) + 1]).astype(np.int64)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 31, 32, 33, 1000, 4099])
def test_the_scan_finds_the_runs_starts_as_numpy(sptrsv_wavefront: WavefrontKernel, n: int) -> None:
    """The C scan for the runs' starts (:mod:`spf.runtime.run_scan`, sixteen pairs at a
    time) gives numpy's starts and the runs' keys for every length mod 16, changes at
    every node, at none, at the pairs that straddle its blocks of sixteen and in its tail,
    and keys that differ in one bit or in the sign; None once the runs pass the cap,
    whichever pair passes it."""
    scan = sptrsv_wavefront._split()[8]
    assert isinstance(scan, RunScan)
    rng = np.random.default_rng(n)
    patterns = [
        np.zeros(n, dtype=np.int32),
        np.arange(n, dtype=np.int32),
        run_keys(rng, n, 3, 20),
        rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int64).astype(np.int32),
    ]
    edges = np.zeros(n, dtype=np.int32)  # a change at each block edge and the tail's nodes
    for at in (1, 15, 16, 17, 32, 33, n - 1, n - 2):
        if 0 < at < n:
            edges[at:] ^= 1 << (at % 31)
    patterns.append(edges)
    for clev in patterns:
        want = _numpy_starts(clev)
        for cap in sorted({1, max(len(want) - 1, 1), len(want), len(want) + 1, n}):
            got = scan.starts(clev, cap)
            if len(want) > cap:
                assert got is None, cap
            else:
                assert got is not None, cap
                assert got[0].dtype == np.int64
                assert got[1].dtype == np.int32
                np.testing.assert_array_equal(got[0], want)
                np.testing.assert_array_equal(got[1], clev[want])


def test_the_runs_found_by_the_scan_are_numpys(sptrsv_wavefront: WavefrontKernel) -> None:
    """:func:`find_runs` with the C scan and sort gives numpy's runs, field for field and
    dtype for dtype (levels counted or given, empty levels, a level of one run, one run),
    and refuses the keys numpy refuses (more than ``n / MIN_RUN`` runs); keys that are not
    a contiguous ``int32`` array, and keys the given levels do not cover (numpy's error),
    take numpy's way."""
    scan = sptrsv_wavefront._split()[8]
    rng = np.random.default_rng(8)
    fields = ("first", "pos", "levelruns", "start", "size", "at", "perm")
    one = np.full(100, 3, dtype=np.int32)
    cases = [run_keys(rng, 20000, 40, 200), run_keys(rng, 4099, 7, 40), one]
    for clev in cases:
        most = int(clev.max())
        for keys in (clev, clev.astype(np.int64), np.repeat(clev, 2)[::2]):
            for levels in (None, most + 1, most + 5):
                want, got = find_runs(keys, levels), find_runs(keys, levels, scan=scan)
                assert want is not None
                assert got is not None
                for name in fields:
                    mine, numpys = getattr(got, name), getattr(want, name)
                    assert mine.dtype == numpys.dtype, name
                    np.testing.assert_array_equal(mine, numpys, name)
            for way in (None, scan):  # a key past the levels given: numpy's error either way
                with pytest.raises(ValueError, match="wrong size"):
                    find_runs(keys, most, scan=way)
    n = 16 * 100
    ragged = np.repeat(np.arange(n // 15 + 1, dtype=np.int32), 15)[:n]  # 107 runs > n / 16
    assert find_runs(ragged) is None
    assert find_runs(ragged, scan=scan) is None
    fitting = np.repeat(np.arange(n // 16, dtype=np.int32), 16)  # exactly n / 16 runs
    assert find_runs(fitting, scan=scan) is not None


def test_likely_runs_tells_runs_from_scattered_keys() -> None:
    rng = np.random.default_rng(2)
    n = 1 << 16
    assert likely_runs(run_keys(rng, n, 50, 8 * MIN_RUN))
    assert likely_runs(np.repeat(np.arange(n // 128, dtype=np.int32), 128))
    assert not likely_runs(rng.integers(0, 12, n).astype(np.int32))
    assert not likely_runs(np.zeros(1, dtype=np.int32))


def test_likely_runs_reads_windows_of_consecutive_keys() -> None:
    """The guess counts the changes of key in ``SAMPLED_WINDOWS`` evenly spaced windows of
    consecutive pairs (a few cache lines each), not in pairs spread over the whole loop:
    keys in runs inside the windows and scattered between them are taken for runs, the
    other way round for scattered keys; a loop whose windows would meet
    (``SAMPLED_WINDOWS`` of ``SAMPLED_PAIRS / SAMPLED_WINDOWS + 1`` nodes or fewer) is read
    whole."""
    n = 1_000_003
    width = SAMPLED_PAIRS // SAMPLED_WINDOWS
    gap = n // SAMPLED_WINDOWS
    inside = np.zeros(n, dtype=np.bool_)
    for w in range(SAMPLED_WINDOWS):
        inside[w * gap : w * gap + width + 1] = True
    rng = np.random.default_rng(5)
    scattered = rng.integers(0, 1 << 20, n).astype(np.int32)
    runs = (np.arange(n) // 500).astype(np.int32)
    assert likely_runs(np.where(inside, runs, scattered))
    assert not likely_runs(np.where(inside, scattered, runs))
    small = np.repeat(np.arange(40, dtype=np.int32), 26)  # 1,039 pairs, 39 changes: all read
    assert likely_runs(small)
    assert not likely_runs(rng.integers(0, 3, 1000).astype(np.int32))


def test_likely_runs_sees_runs_whose_breaks_fall_on_a_whole_stride() -> None:
    """Runs of 244 nodes from node 1 on a 1M-node loop break between nodes 244k and
    244k + 1: samples a whole stride apart (244 = (n - 1) // 4096) would all straddle a
    break and take the runs for scattered keys."""
    n = 1_000_001
    keys = ((np.arange(n) + 243) // 244).astype(np.int32)
    assert likely_runs(keys)


def test_the_reach_stage_finds_the_least_prefix_sum_reaching_each_share(
    sptrsv_wavefront: WavefrontKernel,
) -> None:
    """Per run and share, the least prefix sum of the work along the run that reaches the
    share, the largest ``int64`` where none does (a share above the run's work, a run of
    no node): numpy's, whatever the stage keeps in locals."""
    rng = np.random.default_rng(5)
    n = 5000
    work = rng.integers(1, 9, n).astype(np.int64)
    first = rng.integers(0, n - 300, 400).astype(np.int64)
    size = rng.integers(0, 300, 400).astype(np.int64)
    totals = np.array([work[a : a + s].sum() for a, s in zip(first, size, strict=True)])
    share = rng.integers(1, totals + 2)  # some above the run's work
    share[0], share[1] = totals[0], 1  # the run's whole work; its first node's
    size[2] = 0  # a run of no node
    reach_k = sptrsv_wavefront._split()[7]
    got = _reach(reach_k, work, _pick(reach_k, {"N": n}), first, size, share)
    top = np.iinfo(np.int64).max
    for r, (a, s) in enumerate(zip(first, size, strict=True)):
        sums = np.cumsum(work[a : a + s])
        reached = sums[sums >= share[r]]
        assert got[r] == (reached[0] if len(reached) else top), r


def test_the_fill_stage_keeps_each_runs_work_and_largest_work(
    sptrsv_wavefront: WavefrontKernel,
) -> None:
    """Per run (in node order) the fill writes the order at the run's positions, the sum of
    its nodes' work and their largest work, which bounds where the cuts read
    (:func:`split_runs`'s ``top``); in two ranges of runs as on one."""
    rng = np.random.default_rng(9)
    n = 20000
    clev = run_keys(rng, n, 40, 300)
    found = find_runs(clev, int(clev.max()) + 1)
    assert found is not None
    work = rng.integers(1, 9, n).astype(np.int64)
    runs = len(found.start)
    fill_k = sptrsv_wavefront._split()[6]
    ends = np.append(found.start[1:], n)
    for halves in ((0, runs), (0, runs // 3, runs)):
        order = np.full(n, -1, dtype=np.int32)  # the executor's width
        run_work, run_top = np.zeros(runs, dtype=np.int64), np.zeros(runs, dtype=np.int64)
        arrays = {CORDER: order, RUN_WORK: run_work, RUN_TOP: run_top, WORK: work}
        arrays |= {RUN_FIRST: found.start, RUN_LEN: found.size, RUN_AT: found.at}
        for lo, hi in itertools.pairwise(halves):
            fill_k(check=False, **arrays, **{RUNS_N: runs, RUN_LO: lo, RUN_HI: hi, "N": n})
        np.testing.assert_array_equal(order, np.argsort(clev, kind="stable"))
        spans = list(zip(found.start, ends, strict=True))
        np.testing.assert_array_equal(run_work, [work[a:b].sum() for a, b in spans])
        np.testing.assert_array_equal(run_top, [work[a:b].max() for a, b in spans])


def test_the_reach_stage_stores_its_answer_once_a_run() -> None:
    """The answer of :func:`build_run_reach` is written by one statement per run, after the
    run's nodes (kept in a local along them): updated in ``reach_got`` at every node, gcc
    stored it and loaded it again each time (~0.05 of the stage's serial solves on
    Poisson)."""
    comp = sptrsv_csr()
    comp.wavefront("i")
    ((analysis, _),) = build_executor(comp.ir).loops
    stage = build_run_reach(analysis, "h")
    writers = [st for st in stage.stmts if any(w[0] == REACH_GOT for w in st.writes)]
    assert len(writers) == 1
    assert writers[0].domain.count(",") == 0, writers[0].domain  # one iterator: the run


@pytest.mark.parametrize("longest", [48, 700])
def test_the_runs_in_node_order_are_the_sorted_runs(longest: int) -> None:
    """What the fill reads (the runs in node order, each with its position in coarse-level
    order) describes the runs sorted by coarse level: ``perm`` maps one onto the other."""
    rng = np.random.default_rng(longest)
    clev = run_keys(rng, 20000, 40, longest)
    found = find_runs(clev)
    assert found is not None
    assert (np.diff(found.start) > 0).all()
    assert found.start[0] == 0
    np.testing.assert_array_equal(found.first, found.start[found.perm])
    np.testing.assert_array_equal(found.pos[:-1], found.at[found.perm])
    np.testing.assert_array_equal(np.diff(found.pos), found.size[found.perm])
    assert int(found.size.sum()) == len(clev)
