"""Fused coarse plans whose coarse levels are joined along chains of parts
(:mod:`spf.runtime.chains`; docs/inspection.md, "Coarse levels joined along chains"): a part
of the joined plan runs the parts of one thread slot at several consecutive coarse levels one
after the other. The fused lower solve and ``y = A·x`` on such a plan equals the two kernels
run one after the other bitwise, the parts run on one thread and on two, int32 and int64
indices, random, SuiteSparse and 2-D Poisson matrices of odd widths; the plan rebuilt from
its arrays passes the generated check of its parts against the dependences, and the same
plan with one joined part's rows reversed is refused."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.errors import ArgumentError
from spf.runtime import chains, coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

MATRICES = ["poisson 61", "poisson 127", "random", "cryg2500.mtx", "bcsstk13.mtx", "olm1000.mtx"]


def solve_mv(dtype: str, method: str = "auto") -> WavefrontKernel:
    comp = spf.Computation(f"solve_mv_chains_{dtype}_{method}")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.append_computation(
        kernels.trsv_diag_csr(index_dtype=dtype),
        "{[]}",
        "{[] -> [0]}",
        {"x": "x", "A": "A", "b": "b"},
    )
    comp.append_computation(
        kernels.spmv_csr(index_dtype=dtype), "{[]}", "{[] -> [1]}", {"y": "y", "A": "A", "x": "x"}
    )
    comp.fuse("s2", "s3", 1)
    comp.wavefront("_i0_i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.fixture(scope="module", params=["int32", "int64"])
def fused(request: pytest.FixtureRequest) -> tuple[str, WavefrontKernel]:
    """The fused kernel planning coarse levels (never the loop in order)."""
    return request.param, solve_mv(request.param, "coarse")


@pytest.fixture(scope="module", params=["int32", "int64"])
def fused_auto(request: pytest.FixtureRequest) -> tuple[str, WavefrontKernel]:
    return request.param, solve_mv(request.param)


def matrix(name: str, suitesparse_dir: Path) -> Any:
    if name.startswith("poisson"):
        return sps.csr_array(spf.sparse.poisson2d(int(name.split()[1])))
    if name == "random":
        rng = np.random.default_rng(4)
        m = sps.random_array((900, 900), density=0.004, rng=rng, format="csr")
        m = sps.csr_array(m + sps.eye_array(900, format="csr") * 3.0)
    else:
        m = sps.csr_array(read_matrix_market(suitesparse_dir / name))
        m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    return m


def plans(
    k: WavefrontKernel, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any, list[tuple[coarse.Parts, chains.Joined]]]:
    """The fused plan for 2 threads without joins and with them (on 16-row runs, as short
    against these grids as 128 rows on 1M; any loop joined, the joined plan of the fewest
    coarse levels preferred to every other), and the parts :func:`chains.join` was given
    with what it gave."""
    index = {key: v for key, v in args.items() if key != "A"}
    monkeypatch.setattr(coarse, "RUN_SHIFT", 4)
    monkeypatch.setattr(chains, "JOIN_NODES", 1 << 62)
    before = k.inspect(threads=2, **index)
    made: list[tuple[coarse.Parts, chains.Joined]] = []
    join = chains.join

    def recorded(*a: Any) -> chains.Joined:
        got = join(*a)
        made.append((a[0], got))
        return got

    monkeypatch.setattr(chains, "JOIN_NODES", 0)
    monkeypatch.setattr(chains, "join", recorded)
    monkeypatch.setattr(chains, "estimate", lambda parts, total, unit=1.0: 1e9 / parts.levels)
    return before, k.inspect(threads=2, **index), made


@pytest.mark.parametrize("name", MATRICES)
def test_joined_parts_equal_the_kernels_one_after_the_other(
    fused: tuple[str, WavefrontKernel],
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    suitesparse_dir: Path,
    name: str,
) -> None:
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)  # parts on one thread too
    dtype, k = fused
    m = matrix(name, suitesparse_dir)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    before, plan, made = plans(k, args, monkeypatch)
    assert plan.strategy == before.strategy == "coarse"
    assert len(made) == 1
    given, got = made[0]
    if got.cap:  # joined: fewer coarse levels, each part a chain's run of old parts
        assert plan.interleaved
        assert plan.coarse_levels == got.parts.levels < given.levels
        assert np.array_equal(np.sort(plan.coarse_order), np.arange(2 * n))
    if name.startswith("poisson"):
        assert got.cap
        assert plan.coarse_levels * 2 <= given.levels
        assert plan.coarse_levels < before.coarse_levels
    b = np.random.default_rng(n).standard_normal(n)
    x, y = np.zeros(n), np.zeros(n)
    kernels.trsv_diag_csr().compile()(x=x, b=b, **gauss_seidel_args(m))
    kernels.spmv_csr().compile()(y=y, x=x, **spf.sparse.csr_args(m))
    order = np.asarray(plan.coarse_order)
    rebuilt = dataclasses.replace(plan, coarse_order=order.copy())  # checked on first use
    for p in (plan, rebuilt):
        gx, gy = np.zeros(n), np.zeros(n)
        k(x=gx, y=gy, b=b, plan=p, **args)
        assert k.last_threads == omp_threads
        np.testing.assert_array_equal(gx, x, err_msg=f"{name} {dtype}: x")
        np.testing.assert_array_equal(gy, y, err_msg=f"{name} {dtype}: y")


def test_a_joined_part_run_backwards_is_refused(
    fused: tuple[str, WavefrontKernel], monkeypatch: pytest.MonkeyPatch, suitesparse_dir: Path
) -> None:
    """The generated check reads positions inside a joined part: the largest part reversed
    runs solve rows before the rows they read."""
    dtype, k = fused
    m = matrix("poisson 61", suitesparse_dir)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    _, plan, made = plans(k, args, monkeypatch)
    assert made[0][1].cap
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    big = int(np.argmax(np.diff(ptr)))
    order = np.asarray(plan.coarse_order).copy()
    order[ptr[big] : ptr[big + 1]] = order[ptr[big] : ptr[big + 1]][::-1]
    bad = dataclasses.replace(plan, coarse_order=order)
    with pytest.raises(ArgumentError, match="dependence"):
        k(x=np.zeros(n), y=np.zeros(n), b=np.ones(n), plan=bad, **args)


@pytest.mark.parametrize(("width", "threads"), [(301, 2), (401, 2), (401, 3), (501, 4)])
def test_auto_joins_the_fused_plan_of_poisson(
    fused_auto: tuple[str, WavefrontKernel], width: int, threads: int
) -> None:
    """``auto`` on a fused loop of at least ``JOIN_NODES`` nodes (odd grid widths), planned
    for 2, 3 and 4 threads: the estimate takes a joined plan, a barrier per several grid
    rows instead of one per grid row (with more than two chains a pipeline, each chain a
    group behind the next); bitwise equal to the two kernels, its parts checked against the
    dependences when rebuilt from its arrays."""
    dtype, k = fused_auto
    m = sps.csr_array(spf.sparse.poisson2d(width))
    n = m.shape[0]
    assert 2 * n >= chains.JOIN_NODES
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan = k.inspect(threads=threads, **{key: v for key, v in args.items() if key != "A"})
    assert plan.strategy == "coarse"
    assert plan.interleaved
    assert plan.coarse_levels * 2 < width  # a grid row a coarse level before
    assert plan.parts > plan.coarse_levels * (threads - 1)
    b = np.random.default_rng(width).standard_normal(n)
    x, y = np.zeros(n), np.zeros(n)
    kernels.trsv_diag_csr().compile()(x=x, b=b, **gauss_seidel_args(m))
    kernels.spmv_csr().compile()(y=y, x=x, **spf.sparse.csr_args(m))
    rebuilt = dataclasses.replace(plan, coarse_order=np.asarray(plan.coarse_order).copy())
    for p in (plan, rebuilt):
        gx, gy = np.zeros(n), np.zeros(n)
        k(x=gx, y=gy, b=b, plan=p, **args)
        np.testing.assert_array_equal(gx, x)
        np.testing.assert_array_equal(gy, y)
