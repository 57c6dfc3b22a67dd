"""Push-form inspector edges (spf.analysis.inspector): on random sparsity patterns, the
generated inspectors of Gauss-Seidel (flow dependences pulled, anti dependences pushed),
SpTRSV without its triangular assumption (the same) and ILU(0) (its source row discovered
as ``col(k)``) give levels that respect every dependence pair found by tracing the loop's
memory accesses, and for Gauss-Seidel and SpTRSV exactly the longest-path levels of those
pairs."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np
import pytest
import scipy.sparse as sps

from spf import Computation, kernels
from spf.analysis.inspector import analyze_wavefront
from spf.sparse import gauss_seidel_args

Access = tuple[list[int], list[int]]
"""The locations one row reads and writes."""


def pattern(n: int, density: float, seed: int) -> dict[str, np.ndarray]:
    """A random square pattern with every diagonal entry stored, sorted columns."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng, format="csr")
    m = sps.csr_array(m + sps.eye_array(n))
    m.sum_duplicates()
    m.sort_indices()
    return gauss_seidel_args(m)


def gauss_seidel_rows(a: dict[str, np.ndarray]) -> Iterable[Access]:
    """Row ``i`` reads ``x(col(k))`` for every off-diagonal ``k`` and writes ``x(i)``."""
    rowptr, col = a["rowptr"], a["col"]
    for i in range(len(rowptr) - 1):
        cols = [int(c) for c in col[rowptr[i] : rowptr[i + 1]]]
        yield [c for c in cols if c != i], [i]


def ilu0_rows(a: dict[str, np.ndarray]) -> Iterable[Access]:
    """The entries ILU(0) row ``i`` reads and writes (the loop of ``kernels.ilu0_csr``)."""
    rowptr, col, diag = a["rowptr"], a["col"], a["diag"]
    for i in range(len(rowptr) - 1):
        reads, writes = [], []
        for k in range(rowptr[i], diag[i]):
            c = int(col[k])
            reads += [k, int(diag[c])]
            writes.append(k)
            where = {int(col[j2]): j2 for j2 in range(diag[c] + 1, rowptr[c + 1])}
            for j1 in range(k + 1, rowptr[i + 1]):
                if int(col[j1]) in where:
                    reads += [j1, int(where[int(col[j1])])]
                    writes.append(j1)
        yield reads, writes


def traced_pairs(rows: Iterable[Access]) -> set[tuple[int, int]]:
    """Every (earlier row, later row) pair with a flow, anti or output dependence."""
    writer: dict[int, int] = {}
    readers: dict[int, set[int]] = {}
    pairs: set[tuple[int, int]] = set()
    for r, (reads, writes) in enumerate(rows):
        for loc in reads:
            if loc in writer and writer[loc] != r:
                pairs.add((writer[loc], r))
        for loc in writes:
            pairs |= {(s, r) for s in readers.get(loc, ()) if s != r}
            if loc in writer and writer[loc] != r:
                pairs.add((writer[loc], r))
        for loc in reads:
            readers.setdefault(loc, set()).add(r)
        for loc in writes:
            writer[loc], readers[loc] = r, set()
    return pairs


def longest_path_levels(n: int, pairs: set[tuple[int, int]]) -> np.ndarray:
    """Levels by relaxing every pair until nothing changes (no use of the row order)."""
    level = np.zeros(n, dtype=np.int64)
    changed = True
    while changed:
        changed = False
        for s, t in pairs:
            if level[t] < level[s] + 1:
                level[t], changed = level[s] + 1, True
    return level


@functools.cache
def inspector(factory: Callable[..., Computation], **options: object) -> Computation:
    comp = factory(**options)
    comp.wavefront("i")
    return comp.inspector("i")


def inspect(insp: Computation, a: dict[str, np.ndarray], *, compiled: bool) -> np.ndarray:
    n = int(a["N"])
    level, nlevels = np.zeros(n, dtype=np.int64), np.zeros((), dtype=np.int64)
    call = {k: v for k, v in a.items() if k in insp.ufs or k in ("N", "NNZ")}
    run: Callable[..., object] = insp.compile() if compiled else insp.interpret
    run(level=level, nlevels=nlevels, **call)
    assert int(nlevels) == (int(level.max()) + 1 if n else 0)
    return level


CASES = [(1, 0.0, 0), (2, 1.0, 1), (5, 0.0, 2), (9, 0.4, 3), (17, 0.2, 4), (33, 0.1, 5)]


@pytest.mark.parametrize(("n", "density", "seed"), CASES)
def test_gauss_seidel_levels_equal_the_traced_ones(n: int, density: float, seed: int) -> None:
    a = pattern(n, density, seed)
    want = longest_path_levels(n, traced_pairs(gauss_seidel_rows(a)))
    level = inspect(inspector(kernels.gauss_seidel_csr), a, compiled=False)
    np.testing.assert_array_equal(level, want)


@pytest.mark.parametrize(("n", "density", "seed"), CASES)
def test_sptrsv_without_triangularity_levels(n: int, density: float, seed: int) -> None:
    """SpTRSV over a full pattern (diagonal last): row ``i`` reads ``u(col(k))`` of earlier
    and later rows alike, as Gauss-Seidel does."""
    a = pattern(n, density, seed)
    rowptr, col = a["rowptr"], a["col"].copy()
    for i in range(n):  # move the diagonal to the end of its row, as sptrsv_csr expects
        row = col[rowptr[i] : rowptr[i + 1]]
        col[rowptr[i] : rowptr[i + 1]] = [*(c for c in row if c != i), i]
    args = {"rowptr": rowptr, "col": col, "N": np.int64(n), "NNZ": np.int64(len(col))}
    want = longest_path_levels(n, traced_pairs(gauss_seidel_rows(args | {"col": col})))
    level = inspect(inspector(kernels.sptrsv_csr, triangular=False), args, compiled=False)
    np.testing.assert_array_equal(level, want)


@pytest.mark.parametrize(("n", "density", "seed"), CASES)
def test_ilu0_levels_respect_every_traced_pair(n: int, density: float, seed: int) -> None:
    """ILU(0)'s inspector orders row ``i`` after row ``col(k)`` for every ``k`` left of the
    diagonal (a superset of the traced pairs, which depend on the matching columns)."""
    a = pattern(n, density, seed)
    level = inspect(inspector(kernels.ilu0_csr), a, compiled=False)
    for s, t in traced_pairs(ilu0_rows(a)):
        assert level[s] < level[t], (s, t)
    rowptr, col, diag = a["rowptr"], a["col"], a["diag"]
    left = {(int(col[k]), i) for i in range(n) for k in range(rowptr[i], diag[i])}
    np.testing.assert_array_equal(level, longest_path_levels(n, left))


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_compiled_push_inspector(index_dtype: str) -> None:
    for n, density, seed in [(1, 0.0, 0), (101, 0.03, 1), (400, 0.01, 2)]:
        a = pattern(n, density, seed)
        a = {
            k: v.astype(index_dtype) if k in ("rowptr", "col", "diag") else v for k, v in a.items()
        }
        want = longest_path_levels(n, traced_pairs(gauss_seidel_rows(a)))
        level = inspect(
            inspector(kernels.gauss_seidel_csr, index_dtype=index_dtype), a, compiled=True
        )
        np.testing.assert_array_equal(level, want)


def test_gauss_seidel_edges() -> None:
    """Gauss-Seidel's seven carried dependences leave two edges: the flow from row
    ``col(k) < i`` pulled over ``s1``, the anti dependence to row ``col(k) > i`` pushed over
    ``s2``; the inspector runs the pull before the push in each row."""
    comp = kernels.gauss_seidel_csr()
    analysis = analyze_wavefront(comp.ir, [s.name for s in comp.stmts], "i")
    assert [(e.stmt, e.push, e.other) for e in analysis.edges] == [
        ("s1", False, "j"),
        ("s2", True, "j"),
    ]
    comp.wavefront("i")
    insp = comp.inspector("i")
    assert insp.stmt("s1").source == "$level$(ip) = max($level$(ip), $level$(j) + 1);"
    assert insp.stmt("s2").source == "$level$(j) = max($level$(j), $level$(i) + 1);"
    insp.check_legality()


def test_ilu0_edge_is_discovered() -> None:
    """ILU(0)'s carried flow dependences do not say which row wrote the entry read; spf
    proves ``i = col(k)`` from the facts and keeps one pull edge over ``(i, k)``."""
    comp = kernels.ilu0_csr()
    analysis = analyze_wavefront(comp.ir, [s.name for s in comp.stmts], "i")
    ((edge,),) = [analysis.edges]
    assert (edge.stmt, edge.push, edge.other, edge.iterators) == ("s0", False, "col(k)", ("i", "k"))
