"""The coarse kernel's generated sort stages (``spf_sort_*_pair_count``, ``_pair_order``,
``_pair_sums``) against numpy: the level sizes' and coarse-level sizes' prefix sums, the
stable order by coarse level and the prefix sums of the work in that order, for node counts
of every residue mod 4 (the count loops take four nodes an iteration) and keys in long runs (a
block's rows at one coarse level, where the nodes of an iteration share a counter) or
scattered. The stages are built and called unchecked (they read the levels spf's pass wrote:
``test_wavefront_build.py``)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from spf.runtime import checksum
from spf.runtime import plan as plan_module

if TYPE_CHECKING:
    from spf.runtime.plan import WavefrontKernel


def keys(rng: np.random.Generator, n: int, count: int, runs: bool) -> np.ndarray:
    """``n`` int32 keys below ``count``, every key used; in runs of up to 9 equal keys."""
    if runs:
        out = np.repeat(rng.integers(0, count, n), rng.integers(1, 10, n))[:n]
    else:
        out = rng.integers(0, count, n)
    out[rng.permutation(n)[: min(count, n)]] = np.arange(min(count, n))
    return out.astype(np.int32)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 8, 999, 1000, 4097, 4098])
@pytest.mark.parametrize("runs", [True, False])
def test_the_sort_stages_agree_with_numpy(
    sptrsv_wavefront: WavefrontKernel, n: int, runs: bool
) -> None:
    rng = np.random.default_rng(n + 7 * runs)
    nlev, nclev = min(n, 5), min(n, 1 + n // 4)
    level, clev = keys(rng, n, nlev, runs), keys(rng, n, nclev, runs)
    work = rng.integers(1, 6, n).astype(np.int64)
    levelptr, clevptr, order, wsum = sptrsv_wavefront._sorted(
        {"N": n}, level, nlev, clev, nclev, work
    )
    np.testing.assert_array_equal(levelptr, np.concatenate([[0], np.cumsum(np.bincount(level))]))
    np.testing.assert_array_equal(clevptr, np.concatenate([[0], np.cumsum(np.bincount(clev))]))
    np.testing.assert_array_equal(order, np.argsort(clev, kind="stable"))
    np.testing.assert_array_equal(wsum, np.concatenate([[0], np.cumsum(work[order])]))


@pytest.mark.parametrize("n", [8, 9, 10, 11, 4097, 4098])
@pytest.mark.parametrize("runs", [True, False])
def test_the_count_in_halves_agrees_with_numpy(
    sptrsv_wavefront: WavefrontKernel, n: int, runs: bool
) -> None:
    """The two-thread count by coarse level (each half four nodes an iteration, the halves
    split at a multiple of four) and the same stages over every node on one thread (the
    worker's count of wide levels): the starts and the stable slots."""
    rng = np.random.default_rng(3 * n + runs)
    nclev = 1 + n // 4
    clev = keys(rng, n, nclev, runs)
    for count in (sptrsv_wavefront._key_count_halves, sptrsv_wavefront._key_count_whole):
        ptr, slot = count(clev, nclev, {"N": n})
        np.testing.assert_array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(clev))]))
        order = np.empty(n, dtype=np.int64)
        order[slot] = np.arange(n)
        np.testing.assert_array_equal(order, np.argsort(clev, kind="stable"))


@pytest.mark.parametrize("n", [8, 9, 10, 11, 4097, 4098])
@pytest.mark.parametrize("runs", [True, False])
def test_the_slots_after_the_starts_count_one_half_and_agree_with_numpy(
    sptrsv_wavefront: WavefrontKernel, n: int, runs: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The level sizes counted first (what an estimate reads), then the slots (a levels
    plan's sort): LevelCount hands the starts to the count, which then runs the histogram
    stage over the first half only, on this thread, and the slots stage in halves (one
    hand-off, not two), and returns those very starts; the slots are the stable ones."""
    rng = np.random.default_rng(5 * n + runs)
    nclev = 1 + n // 4
    clev = keys(rng, n, nclev, runs)
    want = np.concatenate([[0], np.cumsum(np.bincount(clev, minlength=nclev))])
    halves: list[object] = []
    real = plan_module._in_halves

    def counting(stage: object, *args: Any, **kw: Any) -> None:
        halves.append(stage)
        real(stage, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_module, "_in_halves", counting)
    given: list[np.ndarray | None] = []

    def counted(starts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        given.append(starts)
        return sptrsv_wavefront._key_count_halves(clev, nclev, {"N": n}, starts)

    done: Future[tuple[np.ndarray, np.ndarray] | None] = Future()
    done.set_result(None)
    count = plan_module.LevelCount(counted, want.copy, done)
    sizes = count.sizes()
    ptr, slot = count.result()
    assert len(given) == 1
    assert given[0] is sizes
    assert ptr is sizes
    assert halves == [sptrsv_wavefront._split()[5]]  # the slots stage alone
    np.testing.assert_array_equal(ptr, want)
    order = np.empty(n, dtype=np.int64)
    order[slot] = np.arange(n)
    np.testing.assert_array_equal(order, np.argsort(clev, kind="stable"))
    assert count.result()[1] is slot  # counted once


@pytest.mark.parametrize("n", [10, 4098])
def test_the_halves_agree_with_numpy_when_the_workers_are_busy(
    sptrsv_wavefront: WavefrontKernel, n: int
) -> None:
    """Every worker of spf's pool held (as the checksums and the count of the levels may
    hold them during an inspection): the caller runs the second half as well, with the
    second half's own arguments (the starts past the first half's count)."""
    gate = threading.Event()
    pool = checksum._pool()
    held = [pool.submit(gate.wait) for _ in range(pool._max_workers)]
    try:
        rng = np.random.default_rng(n)
        clev = keys(rng, n, 1 + n // 4, True)
        ptr, slot = sptrsv_wavefront._key_count_halves(clev, 1 + n // 4, {"N": n})
    finally:
        gate.set()
        for job in held:
            job.result()
    np.testing.assert_array_equal(ptr, np.concatenate([[0], np.cumsum(np.bincount(clev))]))
    order = np.empty(n, dtype=np.int64)
    order[slot] = np.arange(n)
    np.testing.assert_array_equal(order, np.argsort(clev, kind="stable"))
