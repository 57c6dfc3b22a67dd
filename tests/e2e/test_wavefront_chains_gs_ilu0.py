"""The chain pass (:mod:`spf.analysis.chain_pass`) of Gauss-Seidel and ILU(0), and their
coarse plans joined along chains (docs/inspection.md, "The chain pass in 32-bit masks").

Gauss-Seidel's row loop pushes its anti dependences (row ``i`` reads ``x[j]`` before row
``j > i`` writes it), so its pass keeps the needs in memory; ILU(0)'s pulls every edge into
its row and keeps them in locals. Both passes, in two halves or whole, write the needs that
numpy finds from the edges; a plan joined by force (short run blocks, every loop joined)
sweeps and factors bitwise as the serial kernels do, at 1 and 2 OpenMP threads, int32 and
int64 indices."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.analysis.chain_pass import CHAIN_HI, CHAIN_KEY, CHAIN_LO, CHAIN_NEED, CHAIN_NEED_LOW
from spf.runtime import chains, coarse
from spf.runtime import plan as plan_module
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args, ilu0_args


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
    "gauss_seidel": (kernels.gauss_seidel_csr, gauss_seidel_args),
    "ilu0": (kernels.ilu0_csr, ilu0_args),
}


@pytest.fixture(scope="module", params=[(k, d) for k in KERNELS for d in ("int32", "int64")])
def wavefront(request: pytest.FixtureRequest) -> tuple[str, str, WavefrontKernel]:
    name, dtype = request.param
    comp = KERNELS[name][0](index_dtype=dtype)
    comp.wavefront("i", method="auto")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return name, dtype, k


def _edges(name: str, m: sps.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """The loop's dependences between rows as (source, sink) pairs: ILU(0)'s row ``i``
    reads the rows ``j < i`` of its lower entries; Gauss-Seidel's row ``i`` reads ``x[j]``
    of every entry, written by row ``j`` before it (``j < i``) or after it (``j > i``: the
    anti dependence ``i -> j``)."""
    coo = m.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    if name == "ilu0":
        lower = col < row
        return col[lower], row[lower]
    off = col != row
    return np.minimum(row, col)[off], np.maximum(row, col)[off]


def _needs(n: int, src: np.ndarray, snk: np.ndarray, keys: np.ndarray) -> list[np.ndarray]:
    chain, level = keys & 0xFFFF, keys >> 16
    out = []
    for later in (True, False):
        crossing = chain[src] > chain[snk] if later else chain[src] < chain[snk]
        need = np.zeros(n, dtype=np.int64)
        np.maximum.at(need, snk[crossing], level[src[crossing]])
        out.append(need)
    return out


@pytest.mark.parametrize("matrix", ["grid 23", "random 500"])
def test_the_chain_pass_writes_the_needs_of_the_edges(
    wavefront: tuple[str, str, WavefrontKernel], matrix: str
) -> None:
    """The pass over the sinks ``[0, n)`` in one call and in two (as the join runs it on two
    threads) writes, on random keys, the needs numpy finds from the edges; Gauss-Seidel's
    pass keeps them in memory (push edges), ILU(0)'s in locals."""
    name, dtype, k = wavefront
    kind, size = matrix.split()
    m = _grid(int(size)) if kind == "grid" else _random(int(size), 3)
    n = m.shape[0]
    args = KERNELS[name][1](m, index_dtype=dtype)
    index = {key: v for key, v in args.items() if key not in ("A", "x", "b")}
    pass_k, _ = k._make_chains()  # type: ignore[misc]
    assert ("coarse_chain_need_run" in pass_k.source) == (name == "ilu0")
    rng = np.random.default_rng(n)
    keys = ((rng.integers(0, 40, n) + 1) << 16) | rng.integers(0, 4, n)
    want = _needs(n, *_edges(name, m), keys)
    assert want[0].any()
    assert want[1].any()
    for spans in ([(0, n)], [(0, n // 2), (n // 2, n)], [(0, 1), (1, n - 7), (n - 7, n)]):
        need = (np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32))
        arrays = {CHAIN_KEY: keys, CHAIN_NEED: need[0], CHAIN_NEED_LOW: need[1]}
        for lo, hi in spans:
            pass_k(**arrays, **index, **{CHAIN_LO: lo, CHAIN_HI: hi})
        np.testing.assert_array_equal(need[0], want[0], err_msg=f"{spans}")
        np.testing.assert_array_equal(need[1], want[1], err_msg=f"{spans}")


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
    wavefront: tuple[str, str, WavefrontKernel],
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
) -> None:
    """A Gauss-Seidel sweep (three, one plan) and an ILU(0) factorization on a plan joined
    along chains equal the serial kernel's bitwise."""
    name, dtype, k = wavefront
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
