"""Coarse plans of one solve whose coarse levels are joined along chains of parts
(:mod:`spf.runtime.chains`; docs/inspection.md, "Coarse levels joined along chains in a
solve"): ``auto`` on the lower triangle of 2-D Poisson of at least ``JOIN_NODES`` rows (odd
widths) planned for 2 and 3 threads joins the grid's halves into a pipeline, a barrier per
several grid rows; the joined plan's solve equals the serial solve bitwise, on one thread and
on two, int32 and int64 indices, also on random and SuiteSparse triangles joined by force;
the plan rebuilt from its arrays passes the generated check of its parts, and the same plan
with one joined part's rows reversed is refused."""

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
from spf.sparse import read_matrix_market, sptrsv_args

if TYPE_CHECKING:
    from pathlib import Path

MATRICES = ["poisson 61", "poisson 127", "random", "cryg2500.mtx", "bcsstk13.mtx", "olm1000.mtx"]


@pytest.fixture(scope="module", params=["int32", "int64"])
def solve(request: pytest.FixtureRequest) -> tuple[str, WavefrontKernel]:
    comp = kernels.sptrsv_csr(index_dtype=request.param)
    comp.wavefront("i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return request.param, k


def lower(name: str, suitesparse_dir: Path | None = None) -> Any:
    if name.startswith("poisson"):
        m = sps.csr_array(spf.sparse.poisson2d(int(name.split()[1])))
    elif name == "random":
        rng = np.random.default_rng(5)
        m = sps.random_array((900, 900), density=0.004, rng=rng, format="csr")
        m = sps.csr_array(m + sps.eye_array(900, format="csr") * 3.0)
    else:
        assert suitesparse_dir is not None
        m = sps.csr_array(read_matrix_market(suitesparse_dir / name))
        m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
    m = sps.csr_array(sps.tril(m))
    m.sum_duplicates()
    m.sort_indices()
    return m


def assert_solves_serially(
    k: WavefrontKernel, plan: Any, m: Any, args: dict[str, Any], seed: int, **expect: Any
) -> None:
    """``plan`` and the same plan rebuilt from its arrays (checked on first use) solve a
    random right-hand side bitwise as the serial kernel does; ``threads``, when given, the
    OpenMP threads each call must have run on; ``msg`` names the case."""
    n = m.shape[0]
    f = np.random.default_rng(seed).standard_normal(n)
    want = np.zeros(n)
    kernels.sptrsv_csr().compile()(u=want, f=f, **sptrsv_args(m))
    rebuilt = dataclasses.replace(plan, coarse_order=np.asarray(plan.coarse_order).copy())
    for p in (plan, rebuilt):
        u = np.zeros(n)
        k(u=u, f=f, plan=p, **args)
        if "threads" in expect:
            assert k.last_threads == expect["threads"]
        np.testing.assert_array_equal(u, want, err_msg=expect.get("msg", ""))


def forced(
    k: WavefrontKernel, args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, list[tuple[coarse.Parts, chains.Joined]]]:
    """The plan for 2 threads with any loop joined (16-row runs, as short against these
    matrices as 128 rows on 1M; the plan of the fewest coarse levels preferred), and the
    parts :func:`chains.join` was given with what it gave."""
    index = {key: v for key, v in args.items() if key != "L"}
    made: list[tuple[coarse.Parts, chains.Joined]] = []
    join = chains.join

    def recorded(*a: Any) -> chains.Joined:
        got = join(*a)
        made.append((a[0], got))
        return got

    monkeypatch.setattr(coarse, "RUN_SHIFT", 4)
    monkeypatch.setattr(chains, "JOIN_NODES", 0)
    monkeypatch.setattr(chains, "join", recorded)
    monkeypatch.setattr(chains, "estimate", lambda parts, total, unit=1.0: 1e9 / parts.levels)
    return k.inspect(threads=2, strategy="coarse", **index), made


@pytest.mark.parametrize("name", MATRICES)
def test_joined_parts_equal_the_serial_solve(
    solve: tuple[str, WavefrontKernel],
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    suitesparse_dir: Path,
    name: str,
) -> None:
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)  # parts on one thread too
    dtype, k = solve
    m = lower(name, suitesparse_dir)
    n = m.shape[0]
    args = sptrsv_args(m, index_dtype=dtype)
    plan, made = forced(k, args, monkeypatch)
    assert plan.strategy == "coarse"
    assert len(made) == 1
    given, got = made[0]
    if got.cap:  # joined: fewer coarse levels, each part a chain's run of old parts
        assert plan.interleaved
        assert plan.coarse_levels == got.parts.levels < given.levels
        assert np.array_equal(np.sort(plan.coarse_order), np.arange(n))
    if name.startswith("poisson"):
        assert got.cap
        assert plan.coarse_levels * 2 <= given.levels
    assert_solves_serially(k, plan, m, args, n, threads=omp_threads, msg=f"{name} {dtype}")


def test_a_joined_part_run_backwards_is_refused(
    solve: tuple[str, WavefrontKernel], monkeypatch: pytest.MonkeyPatch, suitesparse_dir: Path
) -> None:
    """The generated check reads positions inside a joined part: the largest part reversed
    runs rows before the rows they read."""
    dtype, k = solve
    m = lower("poisson 61", suitesparse_dir)
    n = m.shape[0]
    args = sptrsv_args(m, index_dtype=dtype)
    plan, made = forced(k, args, monkeypatch)
    assert made[0][1].cap
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    big = int(np.argmax(np.diff(ptr)))
    order = np.asarray(plan.coarse_order).copy()
    order[ptr[big] : ptr[big + 1]] = order[ptr[big] : ptr[big + 1]][::-1]
    bad = dataclasses.replace(plan, coarse_order=order)
    with pytest.raises(ArgumentError, match="dependence"):
        k(u=np.zeros(n), f=np.ones(n), plan=bad, **args)


@pytest.mark.parametrize(("width", "threads"), [(367, 2), (401, 2), (401, 3)])
def test_auto_joins_the_plan_of_poisson(
    solve: tuple[str, WavefrontKernel], width: int, threads: int
) -> None:
    """``auto`` on a solve of at least ``JOIN_NODES`` rows (odd grid widths), planned for
    2 and 3 threads: the estimate takes a joined plan, a barrier per several grid rows
    instead of one per grid row; bitwise equal to the serial solve, its parts checked
    against the dependences when rebuilt from its arrays."""
    dtype, k = solve
    m = lower(f"poisson {width}")
    n = m.shape[0]
    assert n >= chains.JOIN_NODES
    args = sptrsv_args(m, index_dtype=dtype)
    plan = k.inspect(threads=threads, **{key: v for key, v in args.items() if key != "L"})
    assert plan.strategy == "coarse"
    assert plan.interleaved
    assert plan.coarse_levels * 2 < width  # a grid row a coarse level before
    assert plan.parts > plan.coarse_levels * (threads - 1)
    assert_solves_serially(k, plan, m, args, width)


def test_one_thread_keeps_the_plan_unjoined(solve: tuple[str, WavefrontKernel]) -> None:
    """Planned for one thread there is one chain: nothing to join, no chain pass."""
    dtype, k = solve
    m = lower("poisson 367")
    args = sptrsv_args(m, index_dtype=dtype)
    plan = k.inspect(threads=1, **{key: v for key, v in args.items() if key != "L"})
    assert not plan.interleaved
