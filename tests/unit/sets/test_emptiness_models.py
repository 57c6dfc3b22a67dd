"""The emptiness search shares the models it finds among the sets of one shape
(``spf.sets.emptiness._witnesses``): a set that holds a model found before is not empty
without a search, and every verdict is the one a search of its own reaches."""

from __future__ import annotations

from typing import TYPE_CHECKING

import islpy as isl

from spf import UF, Set
from spf.sets import facts
from spf.sets.memo import clear_all

if TYPE_CHECKING:
    import pytest

UFS = [UF("rowptr", domain="{[j]: 0 <= j <= N}", monotonic="nondecreasing"), UF("col")]
TRI = [facts.Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")]
TEXT = "{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) %s}"
"""One shape (widths, calls, parameters): the sets differ in the constraint on col(k)."""


def _samples(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one for each sample the search asks isl for."""
    calls: list[int] = []
    sample = isl.Set.sample_point
    monkeypatch.setattr(isl.Set, "sample_point", lambda s: calls.append(1) or sample(s))
    return calls


def test_a_set_that_holds_a_model_found_before_is_not_empty_without_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clear_all()
    samples = _samples(monkeypatch)
    assert not facts.is_empty_under(Set(TEXT % "< i", ufs=UFS), TRI)
    assert samples  # a search found a model
    samples.clear()
    assert not facts.is_empty_under(Set(TEXT % "< i + 5", ufs=UFS), TRI)  # holds it too
    assert samples == []
    # a set of that shape without the model is searched, and decided as before
    assert facts.is_empty_under(Set(TEXT % "> i", ufs=UFS), TRI)
    assert samples


def test_shared_models_give_the_verdicts_of_searches_of_their_own() -> None:
    bounds = ["< i", "< i + 5", "> i", ">= i", "= i", "< i - 3", "> i + 2", "<= i - 1"]
    sets = [Set(TEXT % b, ufs=UFS) for b in bounds]
    clear_all()
    shared = [facts.is_empty_under(s, TRI) for s in sets]
    alone = []
    for s in sets:
        clear_all()
        alone.append(facts.is_empty_under(Set(str(s), ufs=UFS), TRI))
    assert shared == alone
    assert shared == [False, False, True, False, False, False, True, False]
