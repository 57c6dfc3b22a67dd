"""A coarse inspection that sorts its run blocks by their runs (docs/inspection.md, "Sorting
the runs, not the rows") builds the plan the row sort builds, array for array, on a grid
and a banded triangle, int32 and int64, on one thread and on two (the fill in halves, the
level sizes from the worker), and its solves keep the serial bits at 1 and 2 threads."""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, cast

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.runtime import coarse_runs
from spf.runtime import plan as plan_module
from spf.sparse import poisson2d, sptrsv_args
from spf.testing import compiled, fixed_team

if TYPE_CHECKING:
    from spf.runtime.plan import Plan, WavefrontKernel

ARRAYS = ("coarse_ptr", "part_ptr", "coarse_order", "level_of", "levelptr")


def _plans(
    kernel: WavefrontKernel, args: dict[str, object], strategy: str, team: int
) -> tuple[Plan, Plan]:
    """The plan by runs and the plan by rows (every loop's runs too short for the runs)."""
    with fixed_team(team):
        runs = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(coarse_runs, "MIN_RUN", 1 << 40)
            rows = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
    return runs, rows


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_the_runs_plan_is_the_row_sorts(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)  # the triangles here are smaller
    solve = kernels.sptrsv_csr(index_dtype=dtype)
    solve.wavefront("i")
    kernel = cast("WavefrontKernel", solve.compile())
    n = 30000
    band = sp.diags_array([-1.0] * 3, offsets=[-1, -2, -170], shape=(n, n))
    for lower in (
        sp.csr_array(sp.tril(poisson2d(300), format="csr")),
        sp.csr_array(sp.tril(band, format="csr") + sp.eye_array(n) * 4.0),
    ):
        lower.sort_indices()
        args = sptrsv_args(lower, index_dtype=dtype)
        f = np.random.default_rng(5).uniform(-1, 1, lower.shape[0])
        want = np.zeros_like(f)
        compiled("sptrsv_csr", index_dtype=dtype)(u=want, f=f, **args)
        for strategy in ("auto", "coarse"):
            for team in (1, 2):
                runs, rows = _plans(kernel, args, strategy, team)
                assert (runs.strategy, runs.coarse_levels, runs.parts, runs.copies) == (
                    rows.strategy,
                    rows.coarse_levels,
                    rows.parts,
                    rows.copies,
                )
                for name in ARRAYS:
                    np.testing.assert_array_equal(getattr(runs, name), getattr(rows, name), name)
                for threads in (1, 2):
                    u = np.zeros_like(f)
                    with fixed_team(threads):
                        kernel(u=u, f=f, plan=runs, **args)
                    np.testing.assert_array_equal(u, want)


@pytest.mark.parametrize("copies", [False, True])
def test_the_runs_order_stays_32_bit_until_read(
    copies: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fill writes the order of the parts in 32 bits and the plan runs on it as it is:
    ``coarse_order`` is widened (int64, read-only, the row sort's values) only when a caller
    reads it, never by a call (with or without copies), and a pickled plan holds it wide."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    solve = kernels.sptrsv_csr()
    solve.wavefront("i")
    kernel = cast("WavefrontKernel", solve.compile())
    lower = sp.csr_array(sp.tril(poisson2d(300), format="csr"))
    lower.sort_indices()
    args = sptrsv_args(lower)
    f = np.random.default_rng(6).uniform(-1, 1, lower.shape[0])
    want = np.zeros_like(f)
    compiled("sptrsv_csr")(u=want, f=f, **args)
    with fixed_team(2):
        plan = kernel.inspect(check=False, strategy="coarse", copies=copies, **args)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(coarse_runs, "MIN_RUN", 1 << 40)
        rows = kernel.inspect(check=False, strategy="coarse", copies=copies, **args)
    assert plan.__dict__[plan_module.NARROW_ORDER].dtype == np.int32
    assert "coarse_order" not in plan.__dict__
    for threads in (2, 1, 2):
        for check in (True, False):
            u = np.zeros_like(f)
            with fixed_team(threads):
                kernel(u=u, f=f, plan=plan, check=check, **args)
            np.testing.assert_array_equal(u, want)
    assert "coarse_order" not in plan.__dict__  # no call widened it
    wide = plan.coarse_order
    assert wide.dtype == np.int64
    assert not wide.flags.writeable
    assert plan.coarse_order is wide
    np.testing.assert_array_equal(wide, rows.coarse_order)
    back = pickle.loads(pickle.dumps(plan))
    assert back.coarse_order.dtype == np.int64
    assert plan_module.NARROW_ORDER not in back.__dict__
    np.testing.assert_array_equal(back.coarse_order, wide)
    u = np.zeros_like(f)
    with fixed_team(2):
        kernel(u=u, f=f, plan=back, **args)
    np.testing.assert_array_equal(u, want)


@pytest.mark.parametrize("copies", [False, True])
def test_a_plan_too_long_for_32_bits_runs_the_wide_order(
    copies: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan whose positions do not fit 32 bits (here: ``fits`` says so) runs on the 64-bit
    executor (or the 64-bit copies), which read ``plan.coarse_order``, widened from the
    fill's 32-bit order by the call."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    solve = kernels.sptrsv_csr()
    solve.wavefront("i")
    kernel = cast("WavefrontKernel", solve.compile())
    lower = sp.csr_array(sp.tril(poisson2d(200), format="csr"))
    lower.sort_indices()
    args = sptrsv_args(lower)
    f = np.random.default_rng(7).uniform(-1, 1, lower.shape[0])
    want = np.zeros_like(f)
    compiled("sptrsv_csr")(u=want, f=f, **args)
    with fixed_team(2):
        plan = kernel.inspect(check=False, strategy="coarse", copies=copies, **args)
    assert plan_module.NARROW_ORDER in plan.__dict__
    monkeypatch.setattr(plan_module, "fits", lambda positions: False)
    u = np.zeros_like(f)
    with fixed_team(2):
        kernel(u=u, f=f, plan=plan, check=False, **args)
    np.testing.assert_array_equal(u, want)
    assert plan.__dict__["coarse_order"].dtype == np.int64  # what the wide executor read
