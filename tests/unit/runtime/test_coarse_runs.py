"""spf.runtime.coarse_runs: a coarse plan's order and parts from the runs of its coarse levels
(the generated fill and reach stages) are the row sort's and ``coarse.split``'s, array for
array, for every team size, on keys in runs of every length (cuts falling inside runs, at
their boundaries, in levels of one run and in empty levels), and the level sizes are
numpy's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf.runtime import coarse
from spf.runtime.coarse_runs import MIN_RUN, find_runs

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
@pytest.mark.parametrize("check", [True, False])
def test_the_runs_give_the_row_sorts_parts(
    sptrsv_wavefront: WavefrontKernel, n: int, longest: int, check: bool
) -> None:
    rng = np.random.default_rng(n + longest)
    nclev = max(n // 300, 1)
    clev = run_keys(rng, n, nclev, longest)
    nclev = int(clev.max()) + 1
    level = rng.integers(0, 7, n).astype(np.int32)
    work = rng.integers(1, 9, n).astype(np.int64)
    given = {"N": n}
    for team in (1, 2, 3, 4):
        got = sptrsv_wavefront._by_runs(given, level, 7, clev, nclev, work, check, team, None)
        assert got is not None
        sizes, parts, total = got
        levelptr, cptr, corder, wsum = sptrsv_wavefront._sorted(
            given, level, 7, clev, nclev, work, check
        )
        blocks = coarse.Blocks(coarse.RUN_SHIFT, n, (False,), runs=True)
        want = coarse.split(corder, cptr, nclev, work, blocks, team, wsum)
        assert total == int(wsum[-1])
        np.testing.assert_array_equal(sizes(), levelptr)
        assert (parts.levels, parts.parts) == (want.levels, want.parts)
        for name in ("ptr", "partptr", "order", "largest"):
            np.testing.assert_array_equal(getattr(parts, name), getattr(want, name), name)


def test_short_runs_keep_the_row_sort() -> None:
    rng = np.random.default_rng(1)
    n = 10 * MIN_RUN
    scattered = rng.integers(0, 5, n).astype(np.int32)
    assert find_runs(scattered, 5) is None  # ~n runs: more than n / MIN_RUN
    assert find_runs(np.repeat(np.arange(5, dtype=np.int32), 2 * MIN_RUN), 5) is not None
    assert find_runs(np.zeros(0, dtype=np.int32), 0) is None
