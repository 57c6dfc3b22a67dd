"""The chain pass (:mod:`spf.analysis.chain_pass`) of a solve, Gauss-Seidel and ILU(0), and
the latter two's coarse plans joined along chains (docs/inspection.md, "The chain pass in
32-bit masks"; the solve's joined plans: ``test_wavefront_solve_chains.py``).

Gauss-Seidel's row loop pushes its anti dependences (row ``i`` reads ``x[j]`` before row
``j > i`` writes it), so its pass raises the needs in memory at every edge; the solve's and
ILU(0)'s pull every edge into its row and keep a row's maxima in locals. Each pass, whole or
in pieces of the sinks (each piece into its own needs, joined by their maxima, as the join
runs it on two threads), writes per part the needs that numpy finds from the edges, on
random parts; a plan joined by force (short run blocks, every loop joined) sweeps and
factors bitwise as the serial kernels do, at 1 and 2 OpenMP threads, int32 and int64
indices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.analysis.chain_pass import (
    CHAIN_HI,
    CHAIN_LEVEL,
    CHAIN_LO,
    CHAIN_NEED,
    CHAIN_NEED_LOW,
    CHAIN_PART,
    CHAIN_PARTS,
    CHAIN_SLOT,
)
from spf.runtime import chains, coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args, ilu0_args, sptrsv_args


def _grid(width: int) -> sps.csr_array:
    """2-D Poisson on a ``width`` x ``width`` grid, diagonal made dominant, sorted."""
    m = sps.csr_array(spf.sparse.poisson2d(width) + sps.eye_array(width * width) * 0.5)
    m.sort_indices()
    return m


def _random(n: int, seed: int) -> sps.csr_array:
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=4.0 / n, rng=rng, format="csr")
    m = sps.csr_array(m + m.T + sps.eye_array(n) * 10.0)
    m.sum_duplicates()
    m.sort_indices()
    return m


Factory = Callable[..., spf.Computation]
KERNELS: dict[str, tuple[Factory, Callable[..., dict[str, Any]]]] = {
    "sptrsv": (kernels.sptrsv_csr, sptrsv_args),
    "gauss_seidel": (kernels.gauss_seidel_csr, gauss_seidel_args),
    "ilu0": (kernels.ilu0_csr, ilu0_args),
}
CASES = [(k, d) for k in KERNELS for d in ("int32", "int64")]


def _compiled(name: str, dtype: str) -> tuple[str, str, WavefrontKernel]:
    comp = KERNELS[name][0](index_dtype=dtype)
    comp.wavefront("i", method="auto")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return name, dtype, k


@pytest.fixture(scope="module", params=CASES)
def wavefront(request: pytest.FixtureRequest) -> tuple[str, str, WavefrontKernel]:
    return _compiled(*request.param)


@pytest.fixture(scope="module", params=[c for c in CASES if c[0] != "sptrsv"])
def sweep_or_factor(request: pytest.FixtureRequest) -> tuple[str, str, WavefrontKernel]:
    return _compiled(*request.param)


def _edges(name: str, m: sps.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """The loop's dependences between rows as (source, sink) pairs: the solve's and ILU(0)'s
    row ``i`` reads the rows ``j < i`` of its lower entries; Gauss-Seidel's row ``i`` reads
    ``x[j]`` of every entry, written by row ``j`` before it (``j < i``) or after it
    (``j > i``: the anti dependence ``i -> j``)."""
    coo = m.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    if name in ("sptrsv", "ilu0"):
        lower = col < row
        return col[lower], row[lower]
    off = col != row
    return np.minimum(row, col)[off], np.maximum(row, col)[off]


def _needs(
    parts: int, edges: tuple[np.ndarray, np.ndarray], part: np.ndarray, tables: np.ndarray
) -> list[np.ndarray]:
    """Per part, the greatest coarse level plus one (``tables[0]``) of its nodes' sources
    whose part's chain (``tables[1]``) is later, and earlier, than the node's (0: none)."""
    src, snk = (part[x] for x in edges)
    level, slot = tables
    out = []
    for later in (True, False):
        crossing = slot[src] > slot[snk] if later else slot[src] < slot[snk]
        need = np.zeros(parts, dtype=np.int64)
        np.maximum.at(need, snk[crossing], level[src[crossing]])
        out.append(need)
    return out


@pytest.mark.parametrize("matrix", ["grid 23", "random 500"])
def test_the_chain_pass_writes_the_needs_of_the_edges(
    wavefront: tuple[str, str, WavefrontKernel], matrix: str
) -> None:
    """The pass over the sinks ``[0, n)`` in one call and in pieces, each into its own
    needs joined by their maxima (as the join runs it on two threads), writes, on random
    parts, the needs numpy finds from the edges; Gauss-Seidel's pass raises them in memory
    (push edges), the solve's and ILU(0)'s through locals."""
    name, dtype, k = wavefront
    kind, size = matrix.split()
    m = _grid(int(size)) if kind == "grid" else _random(int(size), 3)
    if name == "sptrsv":
        m = sps.csr_array(sps.tril(m))
    n = m.shape[0]
    args = KERNELS[name][1](m, index_dtype=dtype)
    index = {key: v for key, v in args.items() if key not in ("A", "L")}
    pass_k, _ = k._make_chains()  # type: ignore[misc]
    assert ("coarse_chain_need_run" in pass_k.source) == (name != "gauss_seidel")
    rng = np.random.default_rng(n)
    parts = 37
    part = rng.integers(0, parts, n).astype(np.int32)
    tables = np.stack([rng.integers(1, 40, parts), rng.integers(0, 4, parts)]).astype(np.int32)
    want = _needs(parts, _edges(name, m), part, tables)
    assert want[0].any()
    assert want[1].any()
    reads = {CHAIN_PART: part, CHAIN_LEVEL: tables[0], CHAIN_SLOT: tables[1]}
    reads |= {CHAIN_PARTS: parts, **index}
    for spans in ([(0, n)], [(0, n // 2), (n // 2, n)], [(0, 1), (1, n - 7), (n - 7, n)]):
        got = np.zeros((2, parts), dtype=np.int32)
        for lo, hi in spans:
            need = np.zeros((2, parts), dtype=np.int32)
            pass_k(**reads, **{CHAIN_NEED: need[0], CHAIN_NEED_LOW: need[1]},
                   **{CHAIN_LO: lo, CHAIN_HI: hi})  # fmt: skip
            got = np.maximum(got, need)
        np.testing.assert_array_equal(got[0], want[0], err_msg=f"{spans}")
        np.testing.assert_array_equal(got[1], want[1], err_msg=f"{spans}")


def _forced_plan(k: WavefrontKernel, index: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """The coarse plan for 2 threads with every loop joined (16-row runs, the plan of the
    fewest coarse levels preferred), asserted joined."""
    joined: list[chains.Joined] = []
    join = chains.join

    def recorded(*a: Any) -> chains.Joined:
        got = join(*a)
        joined.append(got)
        return got

    monkeypatch.setattr(coarse, "RUN_SHIFT", 4)
    monkeypatch.setattr(chains, "JOIN_NODES", 0)
    monkeypatch.setattr(chains, "join", recorded)
    monkeypatch.setattr(chains, "estimate", lambda parts, total, unit=1.0: 1e9 / parts.levels)
    monkeypatch.setattr(plan_module.GOVERNOR, "team", lambda: 2)
    plan = k.inspect(threads=2, strategy="coarse", **index)
    assert plan.strategy == "coarse"
    assert [j.cap > 0 for j in joined] == [True]
    assert plan.interleaved
    return plan


@pytest.mark.parametrize("width", [17, 40])
def test_joined_plans_sweep_and_factor_bitwise(
    sweep_or_factor: tuple[str, str, WavefrontKernel],
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
) -> None:
    """A Gauss-Seidel sweep (three, one plan) and an ILU(0) factorization on a plan joined
    along chains equal the serial kernel's bitwise."""
    name, dtype, k = sweep_or_factor
    m = _grid(width)
    n = m.shape[0]
    factory, make_args = KERNELS[name]
    serial = factory(index_dtype=dtype).compile()
    args, ref = make_args(m, index_dtype=dtype), make_args(m, index_dtype=dtype)
    index = {key: v for key, v in args.items() if key != "A"}
    plan = _forced_plan(k, index, monkeypatch)
    if name == "ilu0":
        k(plan=plan, **args)
        serial(**ref)
        np.testing.assert_array_equal(args["A"], ref["A"])
        return
    rng = np.random.default_rng(width)
    b = rng.standard_normal(n)
    x, want = np.zeros(n), np.zeros(n)
    for _ in range(3):
        k(x=x, b=b, plan=plan, **args)
        serial(x=want, b=b, **ref)
        np.testing.assert_array_equal(x, want)
