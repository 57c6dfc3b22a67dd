"""Unit tests of ``spf.sets.facts``: parsing facts and emptiness under facts."""

from __future__ import annotations

import numpy as np
import pytest

from spf import UF, ParseError, Set
from spf.sets.facts import Fact, is_empty_under

TRIANGULAR = "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"
SORTED = "forall k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"
DIAG = "forall i: rowptr(i) <= diag(i) < rowptr(i+1)"


def test_parse_quantified_fact() -> None:
    f = Fact.parse(TRIANGULAR)
    assert f.vars == ("i", "k")
    assert f.premise == Set("{[i, k]: rowptr(i) <= k < rowptr(i+1)}")
    assert f.conclusion == Set("{[i, k]: col(k) <= i}")
    assert f.ufs == {"rowptr", "col"}
    assert not f.is_parameter_fact
    assert str(f) == TRIANGULAR


def test_free_variable_in_uf_argument_is_quantified() -> None:
    f = Fact.parse(SORTED)
    assert f.vars == ("i", "k1", "k2")
    assert f.params == frozenset()


def test_fact_without_premise() -> None:
    f = Fact.parse(DIAG)
    assert f.vars == ("i",)
    assert f.premise == Set("{[i]}")
    assert f.conclusion == Set("{[i]: rowptr(i) <= diag(i) < rowptr(i+1)}")


def test_parameter_fact() -> None:
    f = Fact.parse("N >= 1 && M >= N")
    assert f.vars == ()
    assert f.is_parameter_fact
    assert f.params == {"N", "M"}


@pytest.mark.parametrize(
    ("text", "match", "caret_at"),
    [
        ("forall i k: col(k) <= i", "expected a variable name", "i k"),
        ("forall i: rowptr(i) <= => col(i) < 3", "unexpected", "=> col"),
        ("forall i: a(i) => b(i) > 0 => c(i) > 0", "more than one '=>'", "=> c"),
        ("forall i, i: col(i) > 0", "variable 'i' twice", "i: col"),
        ("forall i col(i) > 0", "expected ':'", ""),
        ("forall i: => col(i) > 0", "empty premise", ""),
        ("forall col: col(col) > 0", "is a UF", "col:"),
    ],
)
def test_bad_fact_text_is_parse_error_with_caret(text: str, match: str, caret_at: str) -> None:
    ufs = {"col"} if "is a UF" in match else set()
    from spf import UF

    with pytest.raises(ParseError, match=match) as err:
        Fact.parse(text, {u: UF(u) for u in ufs})
    assert "^" in str(err.value)
    assert err.value.text == text
    if caret_at:
        assert err.value.span is not None
        assert text[err.value.span[0] :].startswith(caret_at)


def test_triangular_fact_empties_an_upper_entry() -> None:
    s = Set("{[i, k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && col(k) > i}")
    tri = Fact.parse(TRIANGULAR)
    assert not s.is_empty()
    assert is_empty_under(s, [tri])
    # a fact about other UFs proves nothing
    assert not is_empty_under(s, [Fact.parse("forall i: 0 <= p(i)")])


def test_sorted_rows_fact() -> None:
    s = Set("{[i, a, b]: rowptr(i) <= a < b < rowptr(i+1) && col(a) >= col(b)}")
    assert not s.is_empty()
    assert is_empty_under(s, [Fact.parse(SORTED)])
    # the same columns in two different rows are not ordered by it
    t = Set("{[i, a, b]: rowptr(i) <= a < rowptr(i+1) && rowptr(i+1) <= b && col(a) >= col(b)}")
    assert not is_empty_under(t, [Fact.parse(SORTED)])


def test_fact_instantiated_through_a_shifted_argument() -> None:
    # rowptr(i + 1) in the set matches rowptr(i + 1) of the fact with i bound by rowptr(i)
    s = Set("{[i]: 0 <= i < N && diag(i) >= rowptr(i+1) && rowptr(i) <= 5}")
    assert is_empty_under(s, [Fact.parse(DIAG)])


def test_parameter_fact_is_context() -> None:
    s = Set("{[i]: 0 <= i < N && N <= 0}")
    assert s.is_empty()
    t = Set("{[i]: i = 0 && N <= 0}")
    assert not t.is_empty()
    assert is_empty_under(t, [Fact.parse("N >= 1")])
    assert not is_empty_under(t, [Fact.parse("N >= -3")])


def test_facts_and_functional_consistency_together() -> None:
    # col(k) <= i for k of row i, and col(k2) with k2 = k: functional consistency needed
    s = Set("{[i, k, k2]: rowptr(i) <= k < rowptr(i+1) && k2 = k && col(k2) > i && col(k) >= 0}")
    assert is_empty_under(s, [Fact.parse(TRIANGULAR)])


def test_conjunctive_conclusion_is_used_one_constraint_at_a_time() -> None:
    # the set calls rowptr(i + 1) but not rowptr(i): the half of DIAG about rowptr(i + 1)
    # is instantiated alone
    diag = Fact.parse(DIAG)
    above = Set("{[i, k]: 0 <= i < N && k = diag(i) && k >= rowptr(i+1)}")
    below = Set("{[i, k]: 0 <= i < N && k = diag(i) && k < rowptr(i)}")
    inside = Set("{[i, k]: 0 <= i < N && k = diag(i) && k < rowptr(i+1)}")
    assert not above.is_empty()
    assert not below.is_empty()
    assert is_empty_under(above, [diag])
    assert is_empty_under(below, [diag])
    assert not is_empty_under(inside, [diag])


def _lower_triangular_pattern(rng: np.random.Generator, n: int) -> tuple[list[int], list[int]]:
    rowptr, col = [0], []
    for i in range(n):
        cols = sorted(rng.choice(i + 1, size=int(rng.integers(0, i + 2)), replace=False))
        col += [int(c) for c in cols]
        rowptr.append(len(col))
    return rowptr, col


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # a later row ip = col(k) > i: the triangular fact forbids it
            "{[i, k, ip, kp]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && i < ip < N"
            " && rowptr(ip) <= kp < rowptr(ip+1) && col(k) = ip}",
            True,
        ),
        (  # an earlier row: allowed
            "{[i, k, ip, kp]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && ip < i && 0 <= ip"
            " && rowptr(ip) <= kp < rowptr(ip+1) && col(k) = ip}",
            False,
        ),
        (  # columns not increasing within a row: the sorted fact forbids it
            "{[i, a, b]: 0 <= i < N && rowptr(i) <= a < b < rowptr(i+1) && col(b) <= col(a)}",
            True,
        ),
        (
            "{[i, a, b]: 0 <= i < N && rowptr(i) <= a < rowptr(i+1) && b = a + 1"
            " && b < rowptr(i+1) && col(b) = col(a) + 1}",
            False,
        ),
    ],
)
def test_emptiness_under_facts_on_random_patterns(text: str, expected: bool) -> None:
    """The expected answer, and brute force on random lower-triangular sorted patterns (which
    satisfy the facts): a set with a point for one of them is never reported empty."""
    facts = [Fact.parse(TRIANGULAR), Fact.parse(SORTED)]
    s = Set(text)
    assert is_empty_under(s, facts) == expected
    rng = np.random.default_rng(7)
    found = False
    for _ in range(40):
        n = int(rng.integers(1, 6))
        rowptr, col = _lower_triangular_pattern(rng, n)
        ufs = {"rowptr": np.array(rowptr), "col": np.array(col or [0])}
        found = found or bool(s.points({"N": n}, ufs))
    assert found != expected


# ------------------------------------------------- bridges: a fact's missing call, carried
def _rows_ufs(monotonic: str | None = "nondecreasing") -> dict[str, UF]:
    return {
        "rowptr": UF("rowptr", domain="{[j]: 0 <= j <= N}", monotonic=monotonic),
        "diag": UF("diag", domain="{[j]: 0 <= j < N}"),
    }


# the lower parts of two different rows share an entry: ILU0's s0 writing A(k) twice
TWO_LOWER_PARTS = (
    "{[i, ip, k]: 0 <= i < ip < N && rowptr(i) <= k < diag(i) && rowptr(ip) <= k < diag(ip)}"
)


def test_a_missing_call_of_a_monotonic_uf_is_carried_to_the_calls_present() -> None:
    """``diag(i) < rowptr(i+1)`` names ``rowptr(i+1)``, absent from the set; with rowptr
    nondecreasing it gives ``i+1 <= ip => diag(i) < rowptr(ip)``, which empties it."""
    diag = Fact.parse(DIAG)
    s = Set(TWO_LOWER_PARTS, _rows_ufs())
    assert not s.is_empty()
    assert is_empty_under(s, [diag])
    same_row = Set(TWO_LOWER_PARTS.replace("i < ip", "i = ip"), _rows_ufs())
    assert not is_empty_under(same_row, [diag])  # one row's lower part: not empty


def test_no_bridge_without_monotonicity_or_with_the_order_reversed() -> None:
    diag = Fact.parse(DIAG)
    assert not is_empty_under(Set(TWO_LOWER_PARTS, _rows_ufs(None)), [diag])
    # diag(ip) < rowptr(i) would need ip + 1 <= i: here ip < i is not given
    s = Set("{[i, ip]: 0 <= i < N && 0 <= ip < N && rowptr(i) <= diag(ip)}", _rows_ufs())
    assert not is_empty_under(s, [diag])
    later = Set("{[i, ip]: 0 <= ip < i < N && rowptr(i) <= diag(ip)}", _rows_ufs())
    assert is_empty_under(later, [diag])


def test_bridges_agree_with_concrete_arrays() -> None:
    """Brute force on small CSR patterns with a diagonal per row: every set the bridges
    prove empty has no point for any of them."""
    rng = np.random.default_rng(3)
    diag = Fact.parse(DIAG)
    texts = [
        TWO_LOWER_PARTS,
        "{[i, ip]: 0 <= ip < i < N && rowptr(i) <= diag(ip)}",
        "{[i, ip, k]: 0 <= i < ip < N && diag(i) < k < rowptr(ip) && k = diag(ip)}",
        "{[i, ip, k]: 0 <= ip < i < N && rowptr(i) <= k <= diag(i) && k = diag(ip)}",
        "{[i, ip, k]: 0 <= i < N && 0 <= ip < N && rowptr(i) <= k <= diag(i) && k = diag(ip)}",
    ]
    for text in texts:
        s = Set(text, _rows_ufs())
        proven = is_empty_under(s, [diag])
        for _ in range(20):
            n = int(rng.integers(1, 5))
            sizes = rng.integers(1, 4, size=n)
            rowptr = np.concatenate([[0], np.cumsum(sizes)])
            dg = rowptr[:-1] + rng.integers(0, sizes)
            points = list(s.points(params={"N": n}, ufs={"rowptr": rowptr, "diag": dg}))
            assert not (proven and points), (text, rowptr, dg, points)
