"""Fused coarse plans whose free kernel's rows run interleaved (docs/inspection.md, "Fused
kernels interleaved in their parts"): each product row of the fused lower solve and
``y = A·x`` moved right after the solve row that completes it
(:func:`spf.runtime.interleave.interleave`), the coarse levels cut again. The fused kernel
on such a plan equals the two kernels run one after the other bitwise, the parts run on one
thread and on two, int32 and int64 indices, random, SuiteSparse and 2-D Poisson matrices;
the plan rebuilt from its arrays passes the generated check of its parts against the
dependences."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime import coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

MATRICES = ["poisson", "random", "cryg2500.mtx", "bcsstk13.mtx", "olm1000.mtx"]


@pytest.fixture
def team(omp_threads: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """The parts run on exactly ``omp_threads`` OpenMP threads: a team of one runs the parts
    too (not the loop in order, which a team of one takes)."""
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    return omp_threads


def solve_mv(dtype: str) -> WavefrontKernel:
    comp = spf.Computation(f"solve_mv_{dtype}")
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
    comp.wavefront("_i0_i", method="coarse")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.fixture(scope="module", params=["int32", "int64"])
def fused(request: pytest.FixtureRequest) -> tuple[str, WavefrontKernel]:
    return request.param, solve_mv(request.param)


def matrix(name: str, suitesparse_dir: Path) -> Any:
    if name == "poisson":
        return sps.csr_array(spf.sparse.poisson2d(60))
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


def interleaved_plan(
    k: WavefrontKernel, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, np.ndarray]:
    """The coarse plan of run blocks for 2 threads, interleaved: the estimate is made to
    prefer the run blocks (the first candidate) and then their interleaving, on 16-row runs
    (``coarse.RUN_SHIFT`` 4: runs as short against these grids as 128 rows on 1M); with
    the nodes interleaving moved."""
    made: list[Any] = []
    interleave = plan_module.interleave

    def recorded(*a: Any) -> Any:
        got = interleave(*a)
        made.append(got)
        return got

    seen: list[coarse.Parts] = []

    def preferred(parts: coarse.Parts, total: int, unit: float = 1.0) -> float:
        seen.append(parts)
        if any(parts is got.parts for got in made):
            return 20.0
        return 10.0 if len(seen) == 1 else 1.0

    monkeypatch.setattr(plan_module, "interleave", recorded)
    monkeypatch.setattr(coarse, "estimate", preferred)
    monkeypatch.setattr(coarse, "RUN_SHIFT", 4)
    plan = k.inspect(threads=2, **{key: v for key, v in args.items() if key != "A"})
    assert plan.strategy == "coarse"
    assert len(made) == 1
    return plan, made[0].moved


@pytest.mark.parametrize("name", MATRICES)
def test_interleaved_parts_equal_the_kernels_one_after_the_other(
    fused: tuple[str, WavefrontKernel],
    team: int,
    monkeypatch: pytest.MonkeyPatch,
    suitesparse_dir: Path,
    name: str,
) -> None:
    dtype, k = fused
    m = matrix(name, suitesparse_dir)
    n = m.shape[0]
    args = gauss_seidel_args(m, index_dtype=dtype)
    plan, moved = interleaved_plan(k, args, monkeypatch)
    if name == "poisson":
        assert len(moved) > n // 2  # all but the rows reading two parts' solve rows
    b = np.random.default_rng(n).standard_normal(n)
    x, y = np.zeros(n), np.zeros(n)
    kernels.trsv_diag_csr().compile()(x=x, b=b, **gauss_seidel_args(m))
    kernels.spmv_csr().compile()(y=y, x=x, **spf.sparse.csr_args(m))
    order = np.asarray(plan.coarse_order)
    rebuilt = dataclasses.replace(plan, coarse_order=order.copy())  # checked on first use
    for p in (plan, rebuilt):
        gx, gy = np.zeros(n), np.zeros(n)
        k(x=gx, y=gy, b=b, plan=p, **args)
        assert k.last_threads == team
        np.testing.assert_array_equal(gx, x, err_msg=f"{name} {dtype}: x")
        np.testing.assert_array_equal(gy, y, err_msg=f"{name} {dtype}: y")


def test_interleaved_product_rows_follow_the_solve_row_completing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a 2-D grid every product row but those whose solve rows at their coarse level lie
    in two runs runs in the same part as solve row ``p + width`` (its highest column, the
    grid row below), after it and before the next solve row (most right after it; in the
    last grid row two product rows share their last solve row); the parts of each coarse level are cut again by work,
    the moved rows weighed ``INTERLEAVED_WEIGHT``; no coarse level is added."""
    from spf.runtime.interleave import INTERLEAVED_WEIGHT

    width = 60
    m = sps.csr_array(spf.sparse.poisson2d(width))
    n = m.shape[0]
    k = solve_mv("int32")
    args = gauss_seidel_args(m)
    plan, moved = interleaved_plan(k, args, monkeypatch)
    order = np.asarray(plan.coarse_order)
    where = np.empty(2 * n, dtype=np.int64)
    where[order] = np.arange(2 * n)
    rows = moved - n
    last = np.array([m.indices[m.indptr[p] : m.indptr[p + 1]].max() for p in rows])
    assert (where[moved] > where[last]).all()
    solves = np.cumsum(order < n)  # solve rows up to each position: none between the two
    assert (solves[where[moved]] == solves[where[last]]).all()
    assert np.count_nonzero(where[moved] == where[last] + 1) > len(moved) * 9 // 10
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    part = np.searchsorted(ptr, np.arange(2 * n), side="right") - 1
    assert (part[where[moved]] == part[where[last]]).all()
    assert len(moved) > n * 9 // 10
    assert 0 < INTERLEAVED_WEIGHT < 1
    assert plan.coarse_levels <= 2 * width + 2 * width // 16 + 2


def test_an_interleaved_part_running_a_row_before_its_source_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plan built from arrays whose part runs a product row before the solve row it reads
    is refused on its first call (the generated check compares positions within a part); the
    same order in a plan not marked ``interleaved`` is refused at once (its parts' rows must
    increase)."""
    m = sps.csr_array(spf.sparse.poisson2d(40))
    n = m.shape[0]
    k = solve_mv("int64")
    args = gauss_seidel_args(m, index_dtype="int64")
    plan, moved = interleaved_plan(k, args, monkeypatch)
    order = np.asarray(plan.coarse_order).copy()
    where = np.empty(2 * n, dtype=np.int64)
    where[order] = np.arange(2 * n)
    p = int(moved[len(moved) // 2])
    before = where[p] - 1  # its last source, right before it
    assert order[before] < n
    order[[before, where[p]]] = order[[where[p], before]]
    forged = dataclasses.replace(plan, coarse_order=order)
    x, y = np.zeros(n), np.zeros(n)
    with pytest.raises(spf.ArgumentError, match="before its source within a part"):
        k(x=x, y=y, b=np.ones(n), plan=forged, **args)
    with pytest.raises(spf.ArgumentError, match="increasing order"):
        dataclasses.replace(plan, interleaved=False)
