"""The executors read a plan's arrays in 32 bits (``spf.analysis.executor.PLAN_DTYPE``,
docs/inspection.md "The plan's arrays in 32 bits"): every method and strategy runs bitwise
equal to the serial kernel at 1 and 2 OpenMP threads, int32 and int64 indices, on the plan's
32-bit arrays (narrowed once per plan) and, for a plan of more positions than 32 bits hold
(the limit lowered here), on the executor compiled with 64-bit plan arrays."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from spf import kernels
from spf.runtime import plan_narrow
from spf.runtime.plan import WavefrontKernel
from spf.sparse import sptrsv_args
from spf.testing import compiled, fixed_team
from spf.testing import random_lower as lower

CASES = [
    ("levels", "wavefront", {}),
    ("p2p", "wavefront", {}),
    ("auto", "coarse", {"copies": False}),
    ("auto", "levels", {"copies": False}),
    ("auto", "coarse", {"copies": True}),
    ("coarse", "coarse", {}),
]


@pytest.fixture(scope="module", params=["int32", "int64"])
def dtype(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=[1, 2])
def team(request: pytest.FixtureRequest) -> Iterator[int]:
    with fixed_team(int(request.param)):
        yield int(request.param)


def _kernel(method: str, dtype: str) -> WavefrontKernel:
    comp = kernels.sptrsv_csr(index_dtype=dtype)
    comp.wavefront("i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.mark.parametrize(("method", "strategy", "options"), CASES)
def test_narrow_and_wide_plan_arrays_give_the_serial_bits(
    method: str,
    strategy: str,
    options: dict[str, bool],
    dtype: str,
    team: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = lower(3000, 0.002, seed=7)
    args = sptrsv_args(m, index_dtype=dtype)
    f = np.random.default_rng(3).uniform(-1.0, 1.0, m.shape[0])
    want = np.zeros_like(f)
    compiled("sptrsv_csr", index_dtype=dtype)(u=want, f=f, **args)
    k = _kernel(method, dtype)
    plan = k.inspect(strategy=strategy, threads=2, **options, **args)
    assert plan.strategy == strategy
    for check in (True, False):
        u = np.zeros_like(f)
        k(u=u, f=f, plan=plan, check=check, **args)
        assert np.array_equal(u, want)
    assert k._wide_kernel is None  # 3000 positions fit 32 bits
    executor = team > 1 and not plan.copies  # one thread runs the serial kernel
    if executor:
        kept = plan_narrow._NARROWED[plan]
        assert kept
        assert all(small.dtype == np.int32 for _, small in kept.values())
    monkeypatch.setattr(plan_narrow, "NARROW_LIMIT", 100)  # the plan's 3000 do not fit now
    wide = k.inspect(strategy=strategy, threads=2, **options, **args)
    for check in (True, False):
        u = np.zeros_like(f)
        k(u=u, f=f, plan=wide, check=check, **args)
        assert np.array_equal(u, want)
    assert (k._wide_kernel is not None) == executor


def test_a_plan_keeps_one_narrowed_copy_per_array() -> None:
    """The 32-bit arrays are made once per plan; a levels and a p2p kernel of the same
    computation pass different arrays of one plan under one name, each gets its own."""
    m = lower(2000, 0.003, seed=11)
    args = sptrsv_args(m)
    levels = _kernel("levels", "int32")
    plan = levels.inspect(strategy="wavefront", **args)
    nm = levels._names
    first = plan_narrow.narrowed(plan, {nm.levelptr: plan.groupptr}, [nm.levelptr])
    again = plan_narrow.narrowed(plan, {nm.levelptr: plan.groupptr}, [nm.levelptr])
    assert first[nm.levelptr] is again[nm.levelptr]
    assert np.array_equal(first[nm.levelptr], plan.groupptr)
    other = plan_narrow.narrowed(plan, {nm.levelptr: plan.levelptr}, [nm.levelptr])
    assert np.array_equal(other[nm.levelptr], plan.levelptr)
    assert not other[nm.levelptr].flags.writeable
