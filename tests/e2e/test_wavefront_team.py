"""A wavefront call whose OpenMP team is one thread runs the serial kernel (docs/inspection.md
"What the plan chooses"): when the busy-machine cap (spf.runtime.threads) or the user's
``OMP_NUM_THREADS`` leaves one thread, a levels, coarse or p2p plan runs the loop in its
original order instead of the parallel executor, with the same bits; with two threads the
executor runs. A forged coarse plan is still refused at one thread."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, kernels
from spf.runtime import threads
from spf.runtime.kernel import Kernel
from spf.runtime.plan import WavefrontKernel
from spf.sparse import sptrsv_args
from spf.testing import compiled


@pytest.fixture(scope="module")
def solvers() -> dict[str, WavefrontKernel]:
    """SpTRSV (int32) as a wavefront of each method."""
    out = {}
    for method in ("auto", "levels", "p2p"):
        comp = kernels.sptrsv_csr(index_dtype="int32")
        comp.wavefront("i", method=method)
        k = comp.compile()
        assert isinstance(k, WavefrontKernel)
        out[method] = k
    return out


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the kernels called (every call goes through ``Kernel.__call__``)."""
    names: list[str] = []
    original = Kernel.__call__

    def spy(self: Kernel, *positional: object, check: bool = True, **args: object) -> None:
        names.append(self.name)
        original(self, *positional, check=check, **args)

    monkeypatch.setattr(Kernel, "__call__", spy)
    return names


@pytest.fixture(params=[0, 1])
def cap(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """Two OpenMP threads, the busy-machine cap forced to ``param`` (0: no cap; 1: the machine
    is busy, one thread)."""
    monkeypatch.setattr(threads.GOVERNOR, "cap", lambda: int(request.param))
    with threads.openmp_threads(2):
        yield int(request.param)


def poisson(n: int) -> sp.csr_array:
    return sp.csr_array(sp.tril(spf.sparse.poisson2d(n), format="csr"))


PLANS = [("auto", "coarse"), ("auto", "levels"), ("levels", "wavefront"), ("p2p", "wavefront")]


@pytest.mark.parametrize(("method", "strategy"), PLANS)
def test_a_team_of_one_runs_the_serial_kernel(
    solvers: dict[str, WavefrontKernel], ran: list[str], cap: int, method: str, strategy: str
) -> None:
    k = solvers[method]
    m = poisson(40)
    args = sptrsv_args(m, "int32")
    f = np.random.default_rng(3).uniform(-1.0, 1.0, m.shape[0])
    plan = k.inspect(strategy=strategy, threads=2, **args)
    assert plan.strategy == strategy
    want = np.zeros(m.shape[0])
    compiled("sptrsv_csr", index_dtype="int32")(u=want, f=f, **args)
    ran.clear()
    u = np.zeros(m.shape[0])
    k(u=u, f=f, plan=plan, **args)
    np.testing.assert_array_equal(u, want)
    serial = [name for name in ran if name.endswith("_serial")]
    if cap == 1:
        assert serial, ran
        assert k.last_threads == 1
    else:
        assert not serial, ran
        assert k.last_threads == 2


def test_a_forged_coarse_plan_is_refused_at_one_thread(
    solvers: dict[str, WavefrontKernel], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The serial kernel would run any order correctly, but a plan whose parts race is still
    an error at one thread (the same answer at every team size)."""
    monkeypatch.setattr(threads.GOVERNOR, "cap", lambda: 1)
    k = solvers["auto"]
    m = poisson(20)
    args = sptrsv_args(m, "int32")
    plan = k.inspect(strategy="levels", threads=1, **args)
    ptr = plan.coarse_ptr.copy()
    ptr[1 : plan.levels] = ptr[2 : plan.levels + 1]  # levels 0 and 1: two parts of one level
    ptr[plan.levels :] = plan.parts
    forged = dataclasses.replace(plan, coarse_levels=plan.levels - 1, coarse_ptr=ptr)
    with pytest.raises(ArgumentError, match="race"):
        k(u=np.zeros(m.shape[0]), f=np.ones(m.shape[0]), plan=forged, **args)
