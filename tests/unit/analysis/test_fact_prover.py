"""The fact prover: facts the checked ones imply are not checked (spf.analysis.fact_prover)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.analysis.fact_prover import implied_facts, pairwise_closure

if TYPE_CHECKING:
    from spf.sets.facts import Fact


def _facts(comp: spf.Computation) -> tuple[list[Fact], list[str]]:
    return list(comp.assumptions), sorted(comp.params)


def test_lower_and_upper_parts_follow_from_sorted_rows_and_the_diagonal() -> None:
    comp = spf.kernels.gauss_seidel_csr()
    facts, constants = _facts(comp)
    assert implied_facts(facts, comp.ufs, constants) == {2: (0, 1, 4), 3: (0, 1, 4)}


def test_sorted_rows_on_neighbours_close_to_every_pair() -> None:
    comp = spf.kernels.gauss_seidel_csr()
    facts, constants = _facts(comp)
    pair = pairwise_closure(facts[4], comp.ufs, constants)
    assert pair is not None
    assert len(pair.vars) == 3
    broken = spf.Set("{[i, a, b]: 0 <= i < N && rowptr(i) <= a < b < rowptr(i+1)}", comp.ufs)
    assert pair.premise.is_subset(broken)
    assert broken.is_subset(pair.premise)
    assert pairwise_closure(facts[1], comp.ufs, constants) is None  # not an ordering


def test_a_fact_nothing_implies_is_kept() -> None:
    comp = spf.kernels.sptrsv_csr()  # columns <= row: no sortedness to derive it from
    facts, constants = _facts(comp)
    lower_and_last = facts[:2]  # TRIANGULAR, DIAGONAL_LAST: neither implies the other
    assert implied_facts(lower_and_last, comp.ufs, constants) == {}
    # with every row's last entry its diagonal (DIAGONAL_STORED), the lower fact follows
    assert implied_facts(facts, comp.ufs, constants) == {0: (1, 2)}
    comp = spf.kernels.gauss_seidel_csr()
    facts, constants = _facts(comp)
    without = [f for n, f in enumerate(facts) if n != 4]  # no sorted rows: nothing follows
    assert implied_facts(without, comp.ufs, constants) == {}


def test_facts_implying_each_other_are_not_both_dropped() -> None:
    comp = spf.kernels.spmv_csr()
    comp.assume("forall i: 0 <= i < N => rowptr(i) < rowptr(i+1)")
    comp.assume("forall i: 0 <= i < N => rowptr(i) + 1 <= rowptr(i+1)")
    facts, constants = _facts(comp)
    assert implied_facts(facts, comp.ufs, constants) == {0: (1,)}
    kernel = comp.compile()
    assert [c.how for c in kernel.check_cost][:2] == ["implied", kernel.check_cost[1].how]
    assert kernel.check_cost[1].how != "implied"
    m = sp.csr_array(np.array([[1.0, 0.0], [0.0, 2.0]]))
    args = {**spf.sparse.csr_args(m), "y": np.zeros(2), "x": np.ones(2)}
    kernel(**args)
    args["rowptr"][1] = 0  # row 0 empty: both facts fail, the one kept says so
    with pytest.raises(spf.ArgumentError, match=r"rowptr\(i\+1\)' does not hold.* i = 0"):
        kernel(**args)
