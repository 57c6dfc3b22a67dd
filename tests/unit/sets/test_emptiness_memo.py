"""``is_empty`` is remembered per (immutable) set and UF declarations: a repeated query is
free and a set under other declarations gets its own verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf import UF, Set

if TYPE_CHECKING:
    import pytest

TEXT = "{[i]: 0 <= i < N && f(i) >= 5}"


def test_the_verdict_follows_the_declarations_and_is_remembered() -> None:
    small = UF("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < 3}")
    wide = UF("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < 30}")
    bounded, free = Set(TEXT, ufs=[small]), Set(TEXT, ufs=[wide])
    assert bounded.is_empty()
    assert not free.is_empty()
    assert not Set(TEXT).is_empty()
    # the same body under both declarations (a set rebuilt with other UFs)
    rebuilt = type(bounded)._make(bounded._body, {"f": wide})
    assert not rebuilt.is_empty()
    assert bounded.is_empty()
    # one verdict per declarations, on the body equal sets share (bodies are values)
    verdicts = {k[1]: v for k, v in bounded._body.memo.items() if k[0] == "is_empty"}
    assert verdicts[(("f", small),)] is True
    assert verdicts[(("f", wide),)] is False


def test_a_set_decided_under_facts_still_pickles_and_keeps_its_verdict() -> None:
    """What the search shares by shape (some of it not picklable) stays out of a pickled
    set: a kernel's signature pickles the sets of its facts (the einsum's warm entry)."""
    import pickle

    from spf.sets.facts import Fact, is_empty_under

    ufs = [UF("rowptr", domain="{[j]: 0 <= j <= N}", monotonic="nondecreasing"), UF("col")]
    tri = [Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")]
    s = Set("{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) > i}", ufs=ufs)
    assert is_empty_under(s, tri)
    again = pickle.loads(pickle.dumps(s))
    assert again == s
    assert is_empty_under(again, tri)
    assert not again.is_empty()  # without the fact


def test_a_verdict_under_facts_is_shared_by_sets_equal_but_for_their_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from spf.sets import facts

    ufs = [UF("rowptr", domain="{[j]: 0 <= j <= N}", monotonic="nondecreasing"), UF("col")]
    tri = [facts.Fact.parse("forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i")]
    text = "{[%s, %s] : 0 <= %s < M && rowptr(%s) <= %s < rowptr(%s+1) && col(%s) > %s + 1}"
    first = Set(text % (("i", "k") * 4), ufs=ufs)
    assert facts.is_empty_under(first, tri)
    searches: list[object] = []
    search = facts._is_empty_under
    monkeypatch.setattr(facts, "_is_empty_under", lambda *a: searches.append(a) or search(*a))
    assert facts.is_empty_under(Set(text % (("ip", "kp") * 4), ufs=ufs), tri)
    assert searches == []
    assert not facts.is_empty_under(
        Set(text.replace(" + 1}", " - 9}") % (("a", "b") * 4), ufs=ufs), tri
    )
    assert len(searches) == 1
