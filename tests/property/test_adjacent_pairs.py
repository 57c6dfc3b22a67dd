"""The neighbouring-pairs form of an ordering over pairs (spf.analysis.fact_plan) is sound.

An ordering ``k1 < k2 => col(k1) < col(k2)`` inside a row (and the other transitive
conclusions) is checked on the pairs ``(k, k + 1)`` only. On random small index arrays (empty
rows, repeated and decreasing columns) the verdict of that check, both enumerated from its
sets and run as the generated C check, must be the verdict of the definition over all pairs,
computed by a plain Python loop; a conclusion that is not transitive is never reduced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import spf
from spf.analysis.fact_plan import adjacent_form
from spf.errors import ArgumentError
from spf.runtime.fact_check import FactChecker
from spf.sets.facts import Fact, check_domain

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

UFS = {
    "rowptr": spf.UF(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    ),
    "col": spf.UF("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}"),
}
ROW = "forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => "
WHOLE = "forall k1, k2: 0 <= k1 < k2 < NNZ => "

Relation = Callable[[int, int], bool]
REDUCED: list[tuple[str, Relation, bool]] = [
    # (fact, relation of col(k1), col(k2), within one row (else over the whole array))
    (ROW + "col(k1) < col(k2)", lambda a, b: a < b, True),
    (ROW + "col(k1) <= col(k2)", lambda a, b: a <= b, True),
    (ROW + "col(k2) < col(k1)", lambda a, b: a > b, True),
    (ROW + "col(k1) + 2 <= col(k2)", lambda a, b: a + 2 <= b, True),
    (ROW + "col(k1) = col(k2)", lambda a, b: a == b, True),
    (WHOLE + "col(k1) <= col(k2)", lambda a, b: a <= b, False),
]
NOT_TRANSITIVE = [
    ROW + "col(k1) <= col(k2) + 3",  # a drop of at most 3 from any earlier entry
    ROW + "col(k2) - col(k1) <= 2 && col(k1) - col(k2) <= 2",  # a row within 2 columns
    ROW + "col(k1) + col(k2) >= 1",
]


@st.composite
def csr(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    n = draw(st.integers(0, 4))
    lengths = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    rowptr = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int32)
    nnz = int(rowptr[-1])
    col = np.array(draw(st.lists(st.integers(0, 5), min_size=nnz, max_size=nnz)), dtype=np.int32)
    return {"N": n, "M": 6, "NNZ": nnz}, {"rowptr": rowptr, "col": col}


def definition(rel: Relation, in_rows: bool, ufs: dict[str, np.ndarray]) -> bool:
    """The fact over every pair, by a plain loop."""
    rowptr, col = ufs["rowptr"], ufs["col"]
    runs = (
        [range(int(rowptr[i]), int(rowptr[i + 1])) for i in range(len(rowptr) - 1)]
        if in_rows
        else [range(len(col))]
    )
    return all(rel(int(col[a]), int(col[b])) for r in runs for a in r for b in r if a < b)


def enumerated(fact: Fact, params: dict[str, int], ufs: dict[str, np.ndarray]) -> bool:
    """``fact`` on each point of its check domain, enumerated by the set algebra."""
    points = check_domain(fact, UFS).points(params, ufs)
    return all(fact.conclusion.contains(p, params, ufs) for p in points)


@functools.cache
def reduced(text: str) -> Fact:
    adj = adjacent_form(Fact.parse(text, UFS), UFS, ["N", "M", "NNZ"])
    assert adj is not None, text
    return adj.fact


@functools.cache
def checker(text: str) -> FactChecker:
    """The generated check of ``text`` (as a kernel runs it before a call)."""
    return FactChecker([Fact.parse(text, UFS)], UFS)


@pytest.mark.parametrize(("text", "rel", "in_rows"), REDUCED, ids=[t for t, _, _ in REDUCED])
@PROPERTY
@given(data=csr())
def test_neighbouring_pairs_decide_as_all_pairs(
    text: str, rel: Relation, in_rows: bool, data: tuple[dict[str, int], dict[str, np.ndarray]]
) -> None:
    params, ufs = data
    truth = definition(rel, in_rows, ufs)
    fact = reduced(text)
    assert len(fact.vars) == len(Fact.parse(text, UFS).vars) - 1
    assert enumerated(fact, params, ufs) == truth
    check = checker(text)
    assert check.cost[0].how == "each call"
    assert check.cost[0].checked == fact.text
    if truth:
        check.check(params, ufs)
    else:
        with pytest.raises(ArgumentError, match=r"k1 = .*, k2 = "):
            check.check(params, ufs)


@pytest.mark.parametrize("text", NOT_TRANSITIVE)
def test_conclusions_that_are_not_transitive_keep_every_pair(text: str) -> None:
    assert adjacent_form(Fact.parse(text, UFS), UFS, ["N", "M", "NNZ"]) is None
    assert checker(text).cost[0].how == "remembered"


def test_a_premise_that_does_not_chain_keeps_every_pair() -> None:
    # k1 in the first half of a row, k2 anywhere after it: (k, k + 1) chains would test
    # pairs this fact does not cover, so it is not reduced
    text = (
        "forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) && 2*k1 < rowptr(i) + rowptr(i+1)"
        " => col(k1) < col(k2)"
    )
    assert adjacent_form(Fact.parse(text, UFS), UFS, ["N", "M", "NNZ"]) is None
