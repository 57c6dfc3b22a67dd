"""The coarse inspector's 32-bit levels: the pass starts every node at level 0 itself (no
zeroed arrays) unless push edges raise later nodes, the plan's 64-bit ``level_of`` is
widened in place over the pass's buffer, and a loop beyond 32-bit levels is refused."""

from __future__ import annotations

import numpy as np
import pytest

import spf.kernels
import spf.sparse
from spf.errors import ArgumentError
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel, _wide
from spf.testing import random_lower


def coarse_kernel(method: str = "auto") -> WavefrontKernel:
    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i", method=method)
    kernel = comp.compile()
    assert isinstance(kernel, WavefrontKernel)
    return kernel


def reference_levels(lower: object) -> np.ndarray:
    """Each row's dependence level, one row at a time."""
    a = spf.sparse.sptrsv_args(lower)
    rowptr, col, n = a["rowptr"], a["col"], a["N"]
    level = np.zeros(n, dtype=np.int64)
    for i in range(n):
        deps = [int(j) for j in col[rowptr[i] : rowptr[i + 1]] if j < i]
        level[i] = 1 + max((level[j] for j in deps), default=-1)
    return level


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 1001, 1 << 16])
def test_levels_widen_in_place_over_the_pass_buffer(n: int) -> None:
    rng = np.random.default_rng(n)
    buf = np.empty(2 * n, dtype=np.int32)
    buf[:n] = rng.integers(0, 2**31 - 1, n)
    buf[n:] = -1  # the coarse levels: read no more
    want = buf[:n].astype(np.int64)
    got = _wide(buf[:n])
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert n == 0 or np.shares_memory(got, buf)
    alone = rng.integers(0, 100, 5).astype(np.int32)  # not half of a buffer: a copy
    np.testing.assert_array_equal(_wide(alone), alone.astype(np.int64))


def test_the_pass_starts_each_node_itself_whatever_the_arrays_held() -> None:
    """Without push edges the pass's level arrays need no zeroing: filled with garbage first,
    it computes the same levels, coarse levels, work and counts as on zeroed arrays."""
    kernel = coarse_kernel()
    assert kernel._zeroed
    lower = random_lower(500, 0.02, 3)
    args = spf.sparse.sptrsv_args(lower)
    index = {k: v for k, v in args.items() if k in kernel.inspected_arguments}
    stage = kernel._stages[0]
    n = args["N"]

    def run(fill: int) -> dict[str, np.ndarray]:
        out = {name: np.full(n, fill, dtype=np.int32) for name in ("level", "clev")}
        out["work"] = np.full(n, fill, dtype=np.int64)
        out |= {name: np.zeros((), dtype=np.int64) for name in ("nlevels", "nclev")}
        stage(coarse_shift=2, **out, **index)
        return out

    zeroed, dirty = run(0), run(987654)
    for name in ("level", "clev", "work", "nlevels", "nclev"):
        np.testing.assert_array_equal(dirty[name], zeroed[name])
    np.testing.assert_array_equal(zeroed["level"], reference_levels(lower))
    plan = kernel.inspect(**index)
    assert plan.level_of.dtype == np.int64
    np.testing.assert_array_equal(plan.level_of, reference_levels(lower))


def test_push_edges_keep_the_zeroed_arrays() -> None:
    """Gauss-Seidel's anti dependences are push edges (they raise later rows' levels before
    those rows are visited): its pass does not start the levels itself."""
    comp = spf.kernels.gauss_seidel_csr()
    comp.wavefront("i", method="auto")
    kernel = comp.compile()
    assert isinstance(kernel, WavefrontKernel)
    assert not kernel._zeroed


def test_more_nodes_than_32_bit_levels_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = coarse_kernel()
    args = spf.sparse.sptrsv_args(random_lower(50, 0.05, 1))
    monkeypatch.setattr(plan_module, "MAX_NODES", 49)
    with pytest.raises(ArgumentError, match=r"50 nodes.*at most 49.*method='levels' or 'p2p'"):
        kernel.inspect(**args)


def test_a_coarse_plan_keeps_its_32_bit_levels_until_level_of_is_read() -> None:
    """The inspector seals the pass's 32-bit levels as they are and leaves ``level_of``
    unwidened: a call with ``check=True`` checks the seal without widening it, the first read
    widens it to the levels (int64), and a plan rebuilt with other levels, or pickled, is
    checked against the same seal."""
    import dataclasses
    import pickle

    kernel = coarse_kernel()
    lower = random_lower(800, 0.01, 5)
    args = spf.sparse.sptrsv_args(lower)
    plan = kernel.inspect(strategy="coarse", threads=2, **args)
    seal = [e for e in plan.inspected if e[0] == plan_module.LEVELS_SEAL]
    assert [e[1] for e in seal] == ["int32"]
    assert "level_of" not in plan.__dict__
    f = np.random.default_rng(0).uniform(-1, 1, args["N"])
    want = np.zeros_like(f)
    kernel(u=want, f=f, plan=kernel.inspect(strategy="serial", **args), **args)
    u = np.zeros_like(f)
    kernel(u=u, f=f, plan=plan, check=True, **args)
    np.testing.assert_array_equal(u, want)
    assert "level_of" not in plan.__dict__  # the seal was read from the 32-bit levels
    assert plan.level_of.dtype == np.int64
    np.testing.assert_array_equal(plan.level_of, reference_levels(lower))
    assert not plan.level_of.flags.writeable
    forged = plan.level_of.copy()
    forged[[0, -1]] = forged[[-1, 0]]
    with pytest.raises(ArgumentError, match="level_of"):
        kernel(u=u, f=f, plan=dataclasses.replace(plan, level_of=forged), check=True, **args)
    again = pickle.loads(pickle.dumps(kernel.inspect(strategy="coarse", threads=2, **args)))
    np.testing.assert_array_equal(again.level_of, reference_levels(lower))
    u = np.zeros_like(f)
    kernel(u=u, f=f, plan=again, check=True, **args)
    np.testing.assert_array_equal(u, want)
