"""An unchecked coarse inspection on a team of two threads runs its pass over the dependences
as two passes at once (``SPLIT_PASS``, the default: the levels and the work on a worker
thread, the coarse levels on the caller's; without it, the joint pass on the caller's
thread; docs/inspection.md, "The inspector on two threads"), and its sort's count, order
and sums in halves. The plans are those of the one-thread inspection, array for array and seal for
seal (and their copies), for every strategy, int32 and int64, on a grid, a banded and a
random triangle; the solves keep the serial bits at 1 and 2 threads. A checked inspection,
one of fewer than ``SPLIT_NODES`` nodes and a kernel whose pass is not the run-block one
keep the joint pass."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.runtime import plan as plan_module
from spf.runtime.kernel import Kernel
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import poisson2d, sptrsv_args
from spf.testing import compiled, fixed_team

ARRAYS = ("coarse_ptr", "part_ptr", "coarse_order", "level_of", "levelptr", "order", "groupptr")


def _kernel(dtype: str) -> WavefrontKernel:
    """The auto SpTRSV kernel (coarse levels, run blocks)."""
    solve = kernels.sptrsv_csr(index_dtype=dtype)
    solve.wavefront("i")
    return cast("WavefrontKernel", solve.compile())


def _triangles() -> dict[str, sp.csr_array]:
    n = 30000
    rng = np.random.default_rng(7)
    strict = sp.tril(sp.random_array((n, n), density=2.0 / n, format="csr", rng=rng), k=-1)
    band = sp.diags_array([-1.0] * 3, offsets=[-1, -2, -170], shape=(n, n))
    return {
        "grid": sp.csr_array(sp.tril(poisson2d(180), format="csr")),
        "random": sp.csr_array(strict + sp.eye_array(n) * 4.0),
        "banded": sp.csr_array(sp.tril(band, format="csr") + sp.eye_array(n) * 4.0),
        "scattered": _scattered(n),
    }


def _scattered(n: int) -> sp.csr_array:
    """A random triangle in which most rows also read the row before: fewer coarse levels
    than levels, in runs too short to sort by (the coarse candidate sorted by rows)."""
    rng = np.random.default_rng(7)
    strict = sp.tril(sp.random_array((n, n), density=3.0 / n, format="csr", rng=rng), k=-1)
    before = np.where(rng.random(n - 1) < 0.7, -1.0, 0.0)
    chain = sp.diags_array([before], offsets=[-1], shape=(n, n))
    lower = sp.csr_array(strict + chain + sp.eye_array(n) * 4.0)
    lower.eliminate_zeros()
    return lower


def _same(a: Plan, b: Plan) -> None:
    assert (a.strategy, a.levels, a.coarse_levels, a.parts) == (
        b.strategy,
        b.levels,
        b.coarse_levels,
        b.parts,
    )
    assert a.inspected == b.inspected  # the level seal and the index arrays' checksums
    assert a.copies == b.copies  # the rows' lengths checked beside the sort
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("split", "ahead"), [(False, False), (True, False), (True, True)])
def test_two_thread_plans_are_the_one_thread_plans(
    dtype: str, split: bool, ahead: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``split``: the pass as two at once (``SPLIT_PASS``), else the joint pass on the
    caller; ``ahead``: the worker counts every loop's levels after its split pass (as it
    does wide levels' while the caller is still in its pass); else the levels are counted
    when first asked for (here all narrow)."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)  # every triangle here is smaller
    monkeypatch.setattr(plan_module, "SPLIT_PASS", split)
    if ahead:
        monkeypatch.setattr(plan_module, "MIN_ROWS_PER_LEVEL", 1)
        monkeypatch.setattr(plan_module, "HALVES_WHEN_LATE", False)
    kernel = _kernel(dtype)
    for lower in _triangles().values():
        lower.sort_indices()
        args = sptrsv_args(lower, index_dtype=dtype)
        f = np.random.default_rng(3).uniform(-1, 1, lower.shape[0])
        want = np.zeros_like(f)
        compiled("sptrsv_csr", index_dtype=dtype)(u=want, f=f, **args)
        for strategy in ("auto", "coarse", "levels", "serial"):
            with fixed_team(1):
                one = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
            with fixed_team(2):
                two = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
            _same(one, two)
            _same(one, kernel.inspect(strategy=strategy, threads=2, **args))  # checked, joint
            for team in (1, 2):
                u = np.zeros_like(f)
                with fixed_team(team):
                    kernel(u=u, f=f, plan=two, **args)
                np.testing.assert_array_equal(u, want)
    assert kernel._split_kernels is not None  # the stages in halves (and the two passes) ran


def test_a_two_thread_inspection_runs_the_joint_pass_and_its_stages_in_halves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without ``SPLIT_PASS`` (on by default) the caller runs the joint pass and no half of
    it runs on a worker; the fill of a plan sorted by its runs and the sort by level still
    run in halves, one on a worker thread."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", False)
    calls: list[tuple[str, bool]] = []
    real = Kernel.__call__

    def seen(self: Kernel, *positional: object, **kw: Any) -> None:
        calls.append((self.name, threading.current_thread() is threading.main_thread()))
        real(self, *positional, **kw)

    monkeypatch.setattr(Kernel, "__call__", seen)
    kernel = _kernel("int32")
    grid = sp.csr_array(sp.tril(poisson2d(180), format="csr"))
    for strategy in ("coarse", "levels"):
        calls.clear()
        with fixed_team(2):
            kernel.inspect(check=False, strategy=strategy, threads=2, **sptrsv_args(grid))
        names = {name for name, _ in calls}
        assert not any("_coarse_levels_" in n or "_coarse_blocks_" in n for n in names)
        assert (kernel._stages[0].name, True) in calls  # the joint pass, on the caller
        halves = "_runs" if strategy == "coarse" else "_ranged_order"
        mains = [main for name, main in calls if name.endswith(halves)]
        # two halves, one on the caller; the other on the worker unless the worker
        # had not taken it when the caller finished (then the caller runs it: _in_halves)
        assert len(mains) == 2
        assert True in mains


def test_a_plan_sorted_by_rows_on_two_threads_counts_no_level_sizes_it_does_not_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The coarse candidate of scattered coarse levels (sorted by rows, not runs) after the
    pass on two threads leaves the narrow levels uncounted, as a plan sorted by its runs
    does: a ``"coarse"`` plan never reads their sizes, and the ``"auto"`` one here settles
    without them (``spf.runtime.coarse.level_bound``). The plans are the one-thread ones."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", True)  # and without it (below)
    counted: list[int] = []
    real = plan_module._level_sizes

    def sizes(*args: Any) -> np.ndarray:
        counted.append(1)
        return real(*args)

    monkeypatch.setattr(plan_module, "_level_sizes", sizes)
    kernel = _kernel("int32")
    lower = _scattered(30000)
    lower.sort_indices()
    args = sptrsv_args(lower)
    for strategy in ("coarse", "auto"):
        with fixed_team(2):
            two = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
        assert two.strategy == "coarse"
        assert two.coarse_levels < two.levels  # a coarse candidate of its own
        assert counted == []
        with fixed_team(1):
            _same(kernel.inspect(check=False, strategy=strategy, threads=2, **args), two)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", False)
    for strategy in ("coarse", "auto"):
        with fixed_team(2):
            two = kernel.inspect(check=False, strategy=strategy, threads=2, **args)
        assert counted == []
        with fixed_team(1):
            _same(kernel.inspect(check=False, strategy=strategy, threads=2, **args), two)


@pytest.mark.parametrize("late", ["blocks", "levels"])
def test_the_levels_seal_is_the_one_thread_plans_whichever_pass_ends_first(
    late: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker, done with the levels while the caller is still in its pass (``late``
    "blocks": the caller's pass held back 50 ms), takes their checksum for the plan's seal
    right away, and the caller records it; a worker that ends last leaves it to the
    caller's prefetch. Either way the seal (and the plan) is the one-thread plan's."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", True)
    kernel = _kernel("int32")
    lower = sp.csr_array(sp.tril(poisson2d(180), format="csr"))
    lower.sort_indices()
    args = sptrsv_args(lower)
    with fixed_team(1):
        one = kernel.inspect(check=False, threads=2, **args)
    taken: list[int] = []
    record = plan_module.record_checksum

    def recorded(a: np.ndarray, value: int) -> None:
        taken.append(value)
        record(a, value)

    real, hashed, early = Kernel.__call__, plan_module.digest, threading.Event()

    def digest(a: np.ndarray) -> int:
        early.set()  # the worker ended first and hashes (it read the caller's pass running)
        return hashed(a)

    class Done(threading.Event):  # the caller's "my pass is over" (plan.py's only Event)
        def set(self) -> None:
            super().set()
            early.set()

    def held(self: Kernel, *positional: object, **kw: Any) -> None:
        # the late pass waits: for the worker's hash ("blocks"), or for the caller to mark
        # its pass over ("levels"); deterministic on a loaded machine, not a race
        if self.name.endswith(f"_coarse_{late}_i"):
            early.wait(30)
        real(self, *positional, **kw)

    if late == "levels":
        kinds = {"Event": Done, "Lock": threading.Lock, "local": threading.local}
        monkeypatch.setattr(plan_module, "threading", SimpleNamespace(**kinds))
    monkeypatch.setattr(plan_module, "digest", digest)
    monkeypatch.setattr(plan_module, "record_checksum", recorded)
    monkeypatch.setattr(Kernel, "__call__", held)
    with fixed_team(2):
        two = kernel.inspect(check=False, threads=2, **args)
    _same(one, two)
    assert len(taken) == (1 if late == "blocks" else 0)


@pytest.mark.parametrize("team", [1, 2])
def test_a_worker_seals_and_counts_the_levels_beside_the_runs(
    team: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the joint pass (one thread or two), a worker takes the levels' checksum (the
    plan's seal) and their count while the caller finds the coarse levels' runs; the
    caller counts nothing and the plan is the one whose caller counted the levels and
    prefetched their seal (levels under ``PREFETCH_BYTES``), seal for seal, its solves
    the serial bits. Coarse levels without likely runs leave the caller nothing to do
    meanwhile: it counts the levels itself."""
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)
    monkeypatch.setattr(plan_module, "SPLIT_PASS", False)  # the joint pass on two threads too
    kernel = _kernel("int32")
    lower = sp.csr_array(sp.tril(poisson2d(180), format="csr"))
    lower.sort_indices()
    args = sptrsv_args(lower)
    with fixed_team(team):
        want = kernel.inspect(check=False, threads=2, **args)  # 130 KB of levels: the caller
    hashed, count = plan_module.digest, plan_module._count_of
    hashing: list[str] = []
    counting: list[str] = []

    def digest(a: np.ndarray) -> int:
        hashing.append(threading.current_thread().name)
        return hashed(a)

    def count_of(key: np.ndarray) -> int:
        counting.append(threading.current_thread().name)
        return count(key)

    monkeypatch.setattr(plan_module, "PREFETCH_BYTES", 0)
    monkeypatch.setattr(plan_module, "digest", digest)
    monkeypatch.setattr(plan_module, "_count_of", count_of)
    with fixed_team(team):
        got = kernel.inspect(check=False, threads=2, **args)
    _same(want, got)
    caller = threading.current_thread().name
    assert len(hashing) == 1
    assert hashing[0] != caller
    assert counting
    assert caller not in counting  # the runs gave the coarse levels' count
    f = np.random.default_rng(3).uniform(-1, 1, lower.shape[0])
    u_ref, u = np.zeros_like(f), np.zeros_like(f)
    compiled("sptrsv_csr")(u=u_ref, f=f, **args)
    for t in (1, 2):
        with fixed_team(t):
            kernel(u=u, f=f, plan=got, **args)  # checked: the seal holds
        np.testing.assert_array_equal(u, u_ref)
    hashing.clear()
    counting.clear()
    scattered = _triangles()["random"]  # no likely runs: nothing to do beside a worker
    scattered.sort_indices()
    with fixed_team(team):
        kernel.inspect(check=False, threads=2, **sptrsv_args(scattered))
    assert not hashing
    assert caller in counting


def test_a_checked_or_small_inspection_keeps_the_joint_pass() -> None:
    kernel = _kernel("int32")
    args = sptrsv_args(sp.csr_array(sp.tril(poisson2d(40), format="csr")))
    with fixed_team(2):
        kernel.inspect(threads=2, **args)
        kernel.inspect(threads=2, check=False, **args)  # 1,600 rows: under SPLIT_NODES
    assert kernel._split_kernels is None


def test_a_kernel_with_push_edges_has_no_split_pass() -> None:
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method="auto")
    kernel = comp.compile()
    assert isinstance(kernel, WavefrontKernel)
    assert kernel._make_split is None
