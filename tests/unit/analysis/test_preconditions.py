"""spf.analysis.preconditions: the parameter condition ``run => not bad`` as readable
``assume`` text that parses back to the same set, and the Precondition facts."""

from __future__ import annotations

import doctest

import islpy as isl
import pytest

from spf import Set
from spf.analysis.preconditions import Precondition, condition, parameter_text
from spf.sets.facts import Fact

CONTEXT = "[M, N] -> { : M >= 0 and N >= 0 }"


@pytest.mark.parametrize(
    ("run", "bad", "expected"),
    [
        ("{ : }", "{ : N = 0 }", "N >= 1"),  # durbin's r(0)
        ("{ : N >= 1 }", "{ : N >= 6 }", "N <= 5"),  # one conjunction: no premise needed
        ("{ : N >= 1 }", "{ : N >= 1 and M = 0 }", "N >= 1 => M >= 1"),
        ("{ : N >= 1 and M >= 1 }", "{ : M > N >= 1 }", "N >= 1 => N >= M"),  # M >= 1 dropped
        ("{ : N >= 1 }", "{ : N >= 1 }", None),  # out of bounds wherever it runs
    ],
)
def test_condition(run: str, bad: str, expected: str | None) -> None:
    params = "[M, N] -> "
    got = condition(isl.Set(params + run), isl.Set(params + bad), isl.Set(CONTEXT))
    assert got == expected


def test_condition_is_exact_within_the_context() -> None:
    """``premise => conclusion`` holds exactly where no access is out of bounds."""
    context = isl.Set("[NX, NY, T] -> { : NX >= 0 and NY >= 0 and T >= 0 }")
    run = isl.Set("[NX, NY, T] -> { : NY > 0 and T > 0 }")
    bad = isl.Set("[NX, NY, T] -> { : NX = 0 and NY > 0 and T > 0 }")
    text = condition(run, bad, context)
    assert text == "NY >= 1 && T >= 1 => NX >= 1"
    fact = Fact.parse(text)
    premise, conclusion = fact.premise.body_iset().params(), fact.conclusion.body_iset().params()
    holds = premise.complement().union(conclusion)
    assert holds.intersect(context).is_equal(bad.complement().intersect(context))


@pytest.mark.parametrize(
    "text",
    [
        "[N] -> { : N >= 1 }",
        "[M, N] -> { : M <= N or N = 0 }",
        "[M, N] -> { : 2M <= N + 3 and N <= 100 }",
        "[N] -> { : exists e: N = 2e + 1 and N >= 5 }",
        "[N, K] -> { : (N = 0 and K >= 2) or N >= 7 }",
        "[N] -> { : exists a, b: N = 6a + 1 and N = 4b + 1 }",
    ],
)
def test_parameter_text_parses_back_to_the_same_set(text: str) -> None:
    s = isl.Set(text)
    printed = parameter_text(s)
    assert Set(f"{{[] : {printed}}}").body_iset().params().is_equal(s), printed


def test_parameter_text_of_universe_and_empty() -> None:
    assert parameter_text(isl.Set("[N] -> { : }")) == "true"
    assert parameter_text(isl.Set("[N] -> { : 1 = 0 }")) == "false"


def test_precondition_is_a_parameter_fact_with_its_access() -> None:
    p = Precondition.make(
        "NY >= 1 && TMAX >= 1 => NX >= 1", stmt="s0", access="ey(0, j)", data_space="ey",
        kind="write", example="t = 0, j = 0 with NX = 0, NY = 1, TMAX = 1 (index (0, 0))",
    )  # fmt: skip
    assert isinstance(p, Fact)
    assert p.is_parameter_fact
    assert p.vars == ()
    assert sorted(p.params) == ["NX", "NY", "TMAX"]
    assert p.text == "NY >= 1 && TMAX >= 1 => NX >= 1 (for ey(0, j) in statement s0)"
    assert str(p) == p.text
    assert repr(p) == f"Precondition({p.text!r})"
    assert p.describe().startswith(
        "statement s0 writes ey(0, j) inside data space 'ey' only under the precondition "
        "'NY >= 1 && TMAX >= 1 => NX >= 1' (outside it, e.g. at t = 0, j = 0"
    )
    assert Precondition.from_data(p.to_data()) == p


def test_module_examples_run() -> None:
    import spf.analysis.preconditions as module

    result = doctest.testmod(module)
    assert result.attempted > 0
    assert result.failed == 0
