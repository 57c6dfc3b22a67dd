"""The cut by rows of kernels fused into one loop (``spf.runtime.coarse._split_by_rows``) in
fixed C (:meth:`spf.runtime.chain_scan.ChainScan.split_rows`) gives numpy's parts field for
field: random levels, levels of runs of consecutive rows (whose cuts move to a run's end),
empty levels, one to eight threads, int32 and int64 orders."""

from __future__ import annotations

import numpy as np
import pytest

from spf.runtime import coarse
from spf.runtime.build import light_opt_flags
from spf.runtime.chain_scan import ChainScan, build_chain_scan
from spf.runtime.compile import optimisation_flags


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> ChainScan:
    cache = tmp_path_factory.mktemp("split_rows_scan")
    return build_chain_scan(optimisation_flags(None, "light", light_opt_flags()), str(cache))


def fused_levels(
    seed: int, free: tuple[bool, ...], runs: bool, empty: bool
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """(order, levelptr, levels, work) of ``len(free)`` kernels of ``extent`` rows each (node
    ``g * extent + row``): with ``runs``, a kernel that is not free has its levels in runs of
    consecutive rows; with ``empty``, some levels hold no node."""
    rng = np.random.default_rng(seed)
    extent = int(rng.integers(1, 400))
    top = int(rng.integers(1, 30))
    level = np.empty(len(free) * extent, dtype=np.int64)
    for g, alone in enumerate(free):
        rows = slice(g * extent, (g + 1) * extent)
        if runs and not alone:
            lengths = rng.integers(1, 40, extent)
            starts = np.repeat(np.arange(extent), lengths)[:extent]
            level[rows] = rng.integers(0, top, extent)[starts]
        else:
            level[rows] = rng.integers(0, top, extent)
    if empty:
        level *= 2  # every odd level empty
    order = np.argsort(level, kind="stable")
    levels = int(level.max()) + 1
    counts = np.bincount(level, minlength=levels)
    levelptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return order, levelptr, levels, rng.integers(1, 9, len(order)).astype(np.int64)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("free", [(False, True), (True, False), (False, True, False)])
@pytest.mark.parametrize("seed", range(10))
def test_the_c_cut_by_rows_is_numpys(
    scan: ChainScan, seed: int, free: tuple[bool, ...], dtype: type[np.integer]
) -> None:
    for runs in (False, True):
        for empty in (False, True):
            order, levelptr, levels, work = fused_levels(seed, free, runs, empty)
            order = order.astype(dtype)
            extent = len(order) // len(free)
            blocks = coarse.Blocks(coarse.RUN_SHIFT, extent, free, runs=True)
            for threads in (1, 2, 3, 8):
                want = coarse.split(order, levelptr, levels, work, blocks, threads)
                got = coarse.split(order, levelptr, levels, work, blocks, threads, scan=scan)
                case = f"runs={runs} empty={empty} threads={threads}"
                assert (got.levels, got.parts) == (want.levels, want.parts), case
                for name in ("ptr", "partptr", "order", "largest", "work"):
                    a, b = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
                    assert a.dtype == b.dtype, f"{name} {case}"
                    np.testing.assert_array_equal(a, b, err_msg=f"{name} {case}")
