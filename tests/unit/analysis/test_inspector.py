"""Inspector synthesis for wavefront loops (API.md section 11): the generated inspector
Computation computes the same dependence levels as a direct Python computation on random
lower-triangular matrices, interpreted and compiled, and the counting-sort stages give the
level-ordered iteration list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

from spf import Computation, kernels
from spf.analysis.inspector import analyze_wavefront, build_level_sort
from spf.sparse import sptrsv_args

if TYPE_CHECKING:
    from collections.abc import Callable


def lower(n: int, density: float, seed: int) -> sp.csr_array:
    """A random lower-triangular CSR matrix with a stored nonzero diagonal."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, format="csr", random_state=rng)
    m = sp.tril(a, k=-1) + sp.identity(n) * 4.0
    return sp.csr_array(m)


def python_levels(rowptr: np.ndarray, col: np.ndarray) -> np.ndarray:
    n = len(rowptr) - 1
    level = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for k in range(rowptr[i], rowptr[i + 1] - 1):
            level[i] = max(level[i], level[col[k]] + 1)
    return level


def run_levels(insp: Computation, args: dict[str, object], *, compiled: bool) -> np.ndarray:
    n = int(args["N"])  # type: ignore[call-overload]
    level = np.zeros(n, dtype=np.int64)
    nlev = np.zeros((), dtype=np.int64)
    call = {"rowptr": args["rowptr"], "col": args["col"], "N": n, "NNZ": args["NNZ"]}
    if compiled:
        insp.compile()(level=level, nlevels=nlev, **call)
    else:
        insp.interpret(level=level, nlevels=nlev, **call)
    assert int(nlev) == (int(level.max()) + 1 if n else 0)
    return level


CASES = [(1, 0.0, 0), (2, 0.5, 1), (7, 0.4, 2), (13, 0.0, 3), (31, 0.2, 4), (64, 0.05, 5)]


@pytest.mark.parametrize(("n", "density", "seed"), CASES)
def test_interpreted_inspector_matches_python_levels(n: int, density: float, seed: int) -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    args = sptrsv_args(lower(n, density, seed))
    level = run_levels(comp.inspector("i"), args, compiled=False)
    np.testing.assert_array_equal(level, python_levels(args["rowptr"], args["col"]))


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_compiled_inspector_matches_python_levels(index_dtype: str) -> None:
    comp = kernels.sptrsv_csr(index_dtype=index_dtype)
    comp.wavefront("i")
    insp = comp.inspector("i")
    for n, density, seed in [(1, 0.0, 0), (9, 0.0, 1), (301, 0.02, 2), (500, 0.3, 3)]:
        args = sptrsv_args(lower(n, density, seed), index_dtype)
        level = run_levels(insp, args, compiled=True)
        np.testing.assert_array_equal(level, python_levels(args["rowptr"], args["col"]))


def test_dependences_are_simplified_to_one_edge() -> None:
    """SpTRSV's three carried flow dependences (s0, s1, s2 -> s1) all say ``col(k) -> i``:
    one edge remains, its source the sink's iterator ``j = col(k)``."""
    comp = kernels.sptrsv_csr()
    analysis = analyze_wavefront(comp.ir, [s.name for s in comp.stmts], "i")
    assert (analysis.var, analysis.extent) == ("i", "N")
    assert len(analysis.edges) == 1
    edge = analysis.edges[0]
    assert (edge.stmt, edge.other, edge.loop_var, edge.push) == ("s1", "j", "i", False)
    assert len(analysis.dropped) == 2
    assert all("subsumed" in d or "duplicate" in d for d in analysis.dropped)


def test_inspector_is_a_printable_schedulable_computation(
    golden: Callable[[str, str], None],
) -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    insp = comp.inspector("i")
    text = str(insp)
    assert "$level$(ip) = max($level$(ip), $level$(j) + 1);" in text
    assert set(insp.data_spaces) == {"level", "nlevels"}
    assert set(insp.ufs) == {"rowptr", "col"}
    insp.check_legality()
    golden("codegen/c/sptrsv_wavefront_inspector.c", insp.codegen())


def test_level_sort_stages_give_level_order() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    args = sptrsv_args(lower(40, 0.1, 7))
    n = int(args["N"])
    level = run_levels(comp.inspector("i"), args, compiled=False)
    count_ir, order_ir = build_level_sort(
        analyze_wavefront(comp.ir, [s.name for s in comp.stmts], "i"), "t"
    )
    count, order_comp = Computation.from_ir(count_ir), Computation.from_ir(order_ir)
    levelptr = np.zeros(n + 1, dtype=np.int64)
    slot = np.zeros(n, dtype=np.int64)
    fill = np.zeros(n, dtype=np.int64)
    count.interpret(level=level, levelptr=levelptr, slot=slot, fill=fill, N=n)
    order = np.zeros(n, dtype=np.int64)
    order_comp.interpret(slot=slot, order=order, N=n)
    sizes = np.bincount(level, minlength=n)
    np.testing.assert_array_equal(levelptr, np.concatenate([[0], np.cumsum(sizes)]))
    np.testing.assert_array_equal(order, np.argsort(level, kind="stable"))
