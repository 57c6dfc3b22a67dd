"""Injectivity facts (a UF one-to-one over an interval) checked in one marking pass.

SELL-C-sigma reads its rows through ``perm``; a checked call used to accept a ``perm`` that
repeats a row (in range, so its declared range let it through) and return a wrong ``y``: the
repeated row written twice, the displaced one never. ``SELL(C, sigma > 1)`` now states
``forall t1, t2: 0 <= t1 < t2 < N => perm(t1) != perm(t2)``, which the checked function
tests before its loops with a bit per row (spf.analysis.injective,
spf.codegen.injective_marks); a user's ``assume`` of that form, or ``perm(t1) = perm(t2)
=> t1 = t2``, takes the same way instead of a quadratic pass once per content.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, Computation, Stmt
from spf.analysis.injective import ASCENDING, DESCENDING, EITHER, first_repeat, injective_form
from spf.formats import CSR, SELL, convert
from spf.runtime.fact_check import FactChecker
from spf.sets.facts import Fact

PAIRS = "forall t1, t2: 0 <= t1 < t2 < N => p(t1) != p(t2)"
SAME = "forall t1, t2: p(t1) = p(t2) => t1 = t2"


def _matrix(n: int = 40, seed: int = 1) -> Any:
    return sp.random(n, n, density=0.2, format="csr", random_state=seed)


@pytest.fixture(scope="module")
def sell48() -> Any:
    return spf.kernels.spmv(SELL(4, 8)).compile()


def test_checked_sell_spmv_refuses_a_repeated_row(sell48: Any) -> None:
    """The bug: ``perm[1] = perm[0]`` passed a checked call and gave a wrong ``y``."""
    m = _matrix()
    args = SELL(4, 8).args(m)
    x = np.random.default_rng(0).random(40)
    y = np.zeros(40)
    sell48(y=y, x=x, **args)
    np.testing.assert_allclose(y, m @ x)
    bad = {**args, "perm": args["perm"].copy()}
    bad["perm"][1] = bad["perm"][0]
    row = int(args["perm"][0])
    y = np.zeros(40)
    with pytest.raises(ArgumentError) as err:
        sell48(y=y, x=x, **bad)
    text = str(err.value)
    assert f"perm[0] = perm[1] = {row}" in text
    assert "perm must hold a different value at each position 0 <= t < N" in text
    assert "fix perm so that no value repeats" in text
    assert not y.any()  # refused before the loops: nothing written
    sell48(y=y, x=x, **bad, check=False)  # the caller's word


def test_sell_spmv_checks_perm_before_its_loops_not_once_per_content() -> None:
    cost = spf.kernels.spmv(SELL(8, 32)).compile().check_cost
    assert [(c.fact, c.first) for c in cost] == [
        ("forall t1, t2: 0 <= t1 < t2 < N => perm(t1) != perm(t2)", "before loops")
    ]
    assert SELL(8, 32).assume
    assert not SELL(8, 32).ordered  # no order: conversions unchanged
    assert not SELL(8, 1).assume  # no perm, no fact


def test_a_repeat_found_after_known_contents_is_still_refused(sell48: Any) -> None:
    """Remembered contents (spf.runtime.known) skip the pass only for verified contents."""
    m = _matrix(64, 3)
    args = SELL(4, 8).args(m)
    x, y = np.ones(64), np.zeros(64)
    for _ in range(3):
        sell48(y=y, x=x, **args)
    perm = args["perm"].copy()
    perm[10], perm[63] = perm[63], perm[63]
    with pytest.raises(ArgumentError, match=rf"perm\[10\] = perm\[63\] = {perm[63]}"):
        sell48(y=np.zeros(64), x=x, **{**args, "perm": perm})


def _scatter(fact: str, *, ranged: bool = True) -> Any:
    """``y(p(i)) = x(i)``, ``p`` assumed one-to-one by ``fact``."""
    comp = Computation("scatter_rows")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf(
        "p", domain="{[t]: 0 <= t < N}", range="{[v]: 0 <= v < N}" if ranged else None,
        dtype="int32",
    )  # fmt: skip
    comp.assume(fact)
    comp.add_stmt(Stmt("$y$(j) = $x$(i);", "{[i, j]: 0 <= i < N && j = p(i)}",
                       "{[i, j] -> [0, i, 0, j, 0]}"))  # fmt: skip
    return comp.compile()


@pytest.mark.parametrize("fact", [PAIRS, SAME])
def test_a_users_injectivity_fact_takes_the_marking_pass(fact: str) -> None:
    k = _scatter(fact)
    assert [c.first for c in k.check_cost] == ["before loops"]
    p = np.array([3, 0, 4, 1, 2], np.int32)
    y, x = np.zeros(5), np.arange(1.0, 6.0)
    k(y=y, x=x, p=p, N=5)
    assert list(y) == [2.0, 4.0, 5.0, 1.0, 3.0]
    p = np.array([3, 0, 4, 0, 2], np.int32)
    with pytest.raises(ArgumentError, match=r"p\[1\] = p\[3\] = 0") as err:
        k(y=np.zeros(5), x=x, p=p, N=5)
    assert "it fails first at t1 = 1, t2 = 3" in str(err.value)
    assert f"the assumption {fact!r}" in str(err.value)


def test_an_injectivity_fact_over_an_unranged_uf_keeps_its_quadratic_check() -> None:
    """No declared range, no mark array: checked once per content, as before."""
    k = _scatter(PAIRS, ranged=False)
    cost = k.check_cost[0]  # then the bounds of y(p(i)), which p's range no longer proves
    assert (cost.fact, cost.how, cost.first) == (PAIRS, "remembered", "own pass")
    with pytest.raises(ArgumentError, match="fails first at t1 = 1, t2 = 3"):
        k(y=np.zeros(5), x=np.ones(5), p=np.array([3, 0, 4, 0, 2], np.int32), N=5)


def _ufs() -> dict[str, spf.UF]:
    return {"p": spf.UF("p", domain="{[t]: 0 <= t < N}", range="{[v]: 0 <= v < N}")}


@pytest.mark.parametrize(
    ("text", "order"),
    [
        (PAIRS, ASCENDING),
        (SAME, EITHER),
        ("forall a, b: 1 <= b < a < N => p(a) < p(b) || p(a) > p(b)", DESCENDING),
        ("forall t1, t2: 0 <= t1 < N && 0 <= t2 < N && p(t1) = p(t2) => t1 = t2", EITHER),
    ],
)
def test_the_forms_recognized(text: str, order: str) -> None:
    form = injective_form(Fact.parse(text, _ufs()), _ufs())
    assert form is not None
    assert form.order == order


@pytest.mark.parametrize(
    "text",
    [
        "forall t1, t2: 0 <= t1 < t2 < N => p(t1) < p(t2)",  # an order, not injectivity
        "forall t1, t2: 0 <= t1 < t2 < N && t2 != t1 + 2 => p(t1) != p(t2)",
        "forall t1, t2: 1 <= t1 < N && 0 <= t2 < N && p(t1) = p(t2) => t1 = t2",  # two ranges
        "forall t1, t2: 0 <= t1 < t2 < N => p(t1) != p(t2) + 1",
    ],
)
def test_other_facts_are_not_taken_for_injectivity(text: str) -> None:
    assert injective_form(Fact.parse(text, _ufs()), _ufs()) is None


@pytest.mark.parametrize("text", [PAIRS, SAME, "forall a, b: 1 <= b < a < N => p(a) != p(b)"])
def test_the_first_repeat_is_the_quadratic_checks_first_point(text: str) -> None:
    """:func:`first_repeat` (numpy) names the point and count the fact's own check loop
    (quadratic) names, on every array of 5 values in 0..3."""
    ufs = _ufs()
    fact = Fact.parse(text, ufs)
    form = injective_form(fact, ufs)
    assert form is not None
    from spf.runtime.fact_check import _Checks

    loops = _Checks("injective_reference", [fact], ufs)
    for values in itertools.islice(itertools.product(range(4), repeat=5), 0, None, 7):
        p = np.array(values, np.int32)
        want = loops.run({"N": 5}, {"p": p})
        got = first_repeat(form, p, {"N": 5})
        if want is None:
            assert got is None, values
        else:
            assert got == (want[1], want[2]), values


def test_the_checker_without_a_kernel_checks_with_numpy() -> None:
    """The each-call pass outside a kernel's checked function (FactChecker alone)."""
    checker = FactChecker([Fact.parse(PAIRS, _ufs())], _ufs())
    assert [c.how for c in checker.cost] == ["each call"]
    checker.check({"N": 4}, {"p": np.array([2, 0, 3, 1], np.int32)})
    with pytest.raises(ArgumentError, match=r"p\[0\] = p\[2\] = 2, .* \(3 such pairs in all\)"):
        checker.check({"N": 4}, {"p": np.array([2, 0, 2, 2], np.int32)})


def test_conversions_of_sell_still_round_trip() -> None:
    """SELL's fact is no order: a conversion into it does not sort, one from it is as before."""
    m = _matrix(30, 5)
    out = convert(CSR, SELL(4, 8)).compile()(**spf.sparse.csr_args(m))
    back = convert(SELL(4, 8), CSR).compile()(**out)
    got = sp.csr_matrix((back["A"], back["col"], back["rowptr"]), shape=m.shape)
    assert abs(got - m).max() == 0


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_repeat_beside_a_value_out_of_range_is_named_by_the_fallback(dtype: str) -> None:
    """An out-of-range ``perm`` value sends the call to the checked-reads fallback (spf.
    codegen.range_pass), which tests the marks too (skipping the value out of range)."""
    m = _matrix()
    k = spf.kernels.spmv(SELL(4, 8), index_dtype=dtype).compile()
    args = spf.sparse.format_args(m, SELL(4, 8), dtype)
    perm = args["perm"].copy()
    perm[5], perm[7] = perm[2], 1000
    with pytest.raises(ArgumentError, match=rf"perm\[2\] = perm\[5\] = {perm[2]}, "):
        k(y=np.zeros(40), x=np.ones(40), **{**args, "perm": perm})
    perm[5] = args["perm"][5]  # the value out of range alone: the range error, as before
    with pytest.raises(ArgumentError, match=r"perm\[7\] = 1000 is outside the declared range"):
        k(y=np.zeros(40), x=np.ones(40), **{**args, "perm": perm})
