"""Hidden (``exists``) variables are bound: ``==``, ``hash``, ``is_subset`` and ``is_equal``
do not depend on their names or order, also when UF arguments use them."""

from __future__ import annotations

import pytest

from spf import ArityError, Relation, Set

EVEN = "{[i]: exists(a: i = 2a && f(a) > 0)}"


def test_renamed_existential_in_uf_argument_is_equal() -> None:
    a, b = Set(EVEN), Set(EVEN.replace("a", "b").replace("exists(b", "exists(b"))
    assert str(b) == "{[i] : exists b : 1 <= f(b) && i = 2*b}"
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_subset(b)
    assert b.is_subset(a)
    assert a.is_equal(b)
    assert b.is_equal(a)
    assert len({a, b}) == 1


def test_names_are_kept_for_printing() -> None:
    assert str(Set(EVEN)) == "{[i] : exists a : 1 <= f(a) && i = 2*a}"


def test_undetermined_existential_renamed() -> None:
    a = Set("{[i]: exists(a: 0 <= a < i && f(a) > 0)}")
    b = Set("{[i]: exists(b: 0 <= b < i && f(b) > 0)}")
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_subset(b)
    assert b.is_subset(a)
    assert a.is_equal(b)


def test_two_existentials_renamed_and_swapped() -> None:
    a = Set("{[i]: exists(a, b: 0 <= a < i && a < b < N && f(a) > g(b))}")
    b = Set("{[i]: exists(x, y: 0 <= y < i && y < x < N && f(y) > g(x))}")
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_subset(b)
    assert b.is_subset(a)


def test_existential_renamed_through_an_equality() -> None:
    a = Set("{[i]: exists(a, c: i = 2a && c = a + 1 && f(c) > 0)}")
    b = Set("{[i]: exists(x, y: i = 2x && y = x + 1 && f(y) > 0)}")
    assert a == b
    assert a.is_equal(b)


def test_relation_with_renamed_existential() -> None:
    a = Relation("{[i] -> [j]: exists(a: 0 <= a < i && j = f(a))}")
    b = Relation("{[i] -> [j]: exists(z: 0 <= z < i && j = f(z))}")
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_equal(b)


@pytest.mark.parametrize(
    ("small", "big"),
    [
        (
            "{[i]: exists(a: 0 <= a < i && f(a) > 5)}",
            "{[i]: exists(b: 0 <= b < i && f(b) > 0)}",
        ),
        (
            "{[i]: exists(a: 0 <= a < i && f(a) > 0)}",
            "{[i]: exists(b: 0 <= b <= i && f(b) > 0)}",
        ),
        ("{[i]: exists(a: i = 2a && f(a) > 0)}", "{[i]: exists(a: i = 2a && f(a) >= 0)}"),
        ("{[i]: i = 4 && f(2) > 0}", EVEN),
    ],
)
def test_proper_subsets_with_existentials(small: str, big: str) -> None:
    s, b = Set(small), Set(big)
    assert s.is_subset(b)
    assert not b.is_subset(s)
    assert not s.is_equal(b)
    assert s != b


def test_existential_and_its_expression_are_equal_sets() -> None:
    """``a`` is determined by ``i``: the set without ``exists`` is the same set."""
    hidden = Set(EVEN)
    direct = Set("{[i]: f(floor(i/2)) > 0 && i % 2 = 0}")
    assert hidden != direct  # different canonical forms ...
    assert hidden.is_equal(direct)  # ... of one set


def test_is_equal_sees_sets_written_differently() -> None:
    a, b = Set("{[i]: 0 <= i < 2}"), Set("{[i]: i = 0 || i = 1}")
    assert a.is_equal(b)
    assert a.is_equal("{[i]: 0 <= i <= 1}")


def test_is_equal_arity_mismatch_is_an_arity_error() -> None:
    with pytest.raises(ArityError, match="is_equal"):
        Set("{[i]: 0 <= i}").is_equal(Set("{[i, j]: 0 <= i}"))


def test_different_hidden_structure_is_not_equal() -> None:
    a = Set("{[i]: exists(a: 0 <= a < i && f(a) > 0)}")
    b = Set("{[i]: exists(a: 0 <= a < i && g(a) > 0)}")
    assert a != b
    assert not a.is_subset(b)
    assert not b.is_subset(a)


def test_symmetric_existentials_in_either_order() -> None:
    """Regression (found by the property test): the calls were sorted before the hidden
    variables, so ``exists(b, a: ...)`` kept ``f(a)``, ``f(b)`` in a non-canonical order."""
    text = (
        "{[i]: exists(@0, @1: 0 <= i < N && 0 <= @0 < i && f(@0) > 0 && 0 <= @1 < i && f(@1) > 0)}"
    )
    a = Set(text.replace("@0", "b").replace("@1", "a"))
    b = Set(text.replace("@0", "a").replace("@1", "b"))
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_equal(b)
    assert Set(str(a)) == a


def test_existentials_in_two_union_parts_read_back_equal() -> None:
    """Regression: each part's ``exists a`` read back as two hidden variables (a, a_1)."""
    s = Set("{[i]: exists(a: 0 <= i < N && 0 <= a < i && f(a) != 0)}")
    assert " union " in str(s)
    assert Set(str(s)) == s
    two = Set("{[i] : exists a : 0 < f(a) < i} union {[i] : exists b : f(b) > i && g(b) > 0}")
    assert len(two.body_iset().get_basic_sets()) == 2
    assert Set(str(two)) == two


NESTED = "{[i,j]: j = sigma(inter2(i))}"
NAMED = "{[i,j]: exists m: inter2(i) = m && j = sigma(m)}"


def test_existential_naming_an_inner_call_is_the_nested_call() -> None:
    """IEGenLib's composed access ``sigma(inter2(i))`` against the same access with the
    inner call named by an existential: equal, both ways subset (``==`` stays structural)."""
    nested, named = Set(NESTED), Set(NAMED)
    assert nested.is_subset(named)
    assert named.is_subset(nested)
    assert nested.is_equal(named)
    assert named.is_equal(nested)
    assert nested != named
    narrower = Set("{[i,j]: exists m: inter2(i) = m && j = sigma(m) && m > 3}")
    assert narrower.is_subset(nested)
    assert not nested.is_subset(narrower)


@pytest.mark.parametrize(
    ("named", "nested"),
    [
        (
            "{[i,j]: exists m, n: inter2(i) = m && n = sigma(m) && j = f(n, m)}",
            "{[i,j]: j = f(sigma(inter2(i)), inter2(i))}",
        ),
        (
            "{[i,j]: exists m: m = inter2(i) + 1 && j = sigma(2m)}",
            "{[i,j]: j = sigma(2inter2(i) + 2)}",
        ),
        ("{[i] -> [j]: exists m: m = col(i) && j = perm(m)}", "{[i] -> [j]: j = perm(col(i))}"),
    ],
)
def test_existentials_naming_calls_in_chains(named: str, nested: str) -> None:
    kind = Relation if "->" in named else Set
    assert kind(named).is_equal(kind(nested))


def test_existential_in_its_own_call_is_not_a_name_for_it() -> None:
    """``m = g(m)`` does not determine ``m``: the subset stays unproved (sound)."""
    a = Set("{[i]: exists m: m = g(m) && i = f(m)}")
    assert not a.is_subset(Set("{[i]: i = f(g(i))}"))
