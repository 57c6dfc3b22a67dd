"""Unit tests of the public ``spf.Set`` / ``spf.Relation`` surface (API.md sections 1 and 2)."""

from __future__ import annotations

import doctest
from typing import Any

import islpy as isl
import numpy as np
import pytest

import spf
from spf import (
    UF,
    ArityError,
    ParseError,
    Relation,
    Set,
    SpfError,
    UndeclaredError,
)

SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
CSR2 = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"
TWO_ROWS = (
    "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && rowptr(ip) <= k < rowptr(ip+1)}"
)
SCHEDULE = "{[i,k,j] -> [0,i,0,k,0,j,0]}"

# A small CSR matrix: rows 0 and 2 non-empty, row 1 empty.
ROWPTR = np.array([0, 2, 2, 5], dtype=np.int32)
COL = np.array([1, 0, 2, 2, 1], dtype=np.int32)
CSR_PARAMS = {"N": 3, "M": 3, "NNZ": 5}
CSR_UFS = {"rowptr": ROWPTR, "col": COL}
SPMV_POINTS = [(0, 0, 1), (0, 1, 0), (2, 2, 2), (2, 3, 2), (2, 4, 1)]

NONDECREASING = {"rowptr": UF("rowptr", monotonic="nondecreasing")}


def make(text: str, ufs: Any = None) -> Set | Relation:
    """A Set or Relation, whichever ``text`` is."""
    return Relation(text, ufs) if "->" in text else Set(text, ufs)


def caret_column(message: str, text: str) -> int:
    """Offset in ``text`` of the first caret of the caret line that follows ``text``."""
    lines = message.splitlines()
    for n, line in enumerate(lines[:-1]):
        col = line.find(text)
        if col < 0:
            continue
        below = lines[n + 1]
        if below.strip() and set(below.strip()) <= {"^", "~"}:
            return below.index("^") - col
    raise AssertionError(f"no caret line under {text!r} in:\n{message}")


# =================================================================================== views
class TestSetViews:
    def test_arity_and_tuple_vars(self) -> None:
        s = Set(SPMV)
        assert s.arity == 3
        assert s.tuple_vars == ("i", "k", "j")

    def test_constant_tuple_entries_show_as_text(self) -> None:
        s = Set("{[0, i]: 0 <= i < 3}")
        assert s.arity == 2
        assert s.tuple_vars == ("0", "i")

    def test_empty_tuple(self) -> None:
        s = Set("{[]}")
        assert s.arity == 0
        assert s.tuple_vars == ()
        assert s.params == frozenset()
        assert s.uf_calls == ()

    def test_params(self) -> None:
        assert Set(SPMV).params == frozenset({"N"})
        assert isinstance(Set(SPMV).params, frozenset)
        assert Set("{[i,j]: 0 <= i < N && 0 <= j < M}").params == frozenset({"N", "M"})
        assert Set("{[i]: 0 <= i < 10}").params == frozenset()

    def test_params_used_only_in_uf_arguments(self) -> None:
        assert Set("{[i]: f(i + N) > M}").params == frozenset({"N", "M"})

    def test_uf_names_are_not_params(self) -> None:
        assert "rowptr" not in Set(SPMV).params
        assert "col" not in Set(SPMV).params

    def test_uf_calls(self) -> None:
        calls = Set(SPMV).uf_calls
        assert isinstance(calls, tuple)
        assert sorted(calls) == ["col(k)", "rowptr(i + 1)", "rowptr(i)"]

    def test_uf_calls_nested_and_multi_argument(self) -> None:
        assert sorted(Set("{[k,p]: 0 <= k < NNZ && p = perm(col(k))}").uf_calls) == [
            "col(k)",
            "perm(col(k))",
        ]
        assert Set("{[i,j]: g(i, j) > 0}").uf_calls == ("g(i, j)",)

    def test_uf_calls_are_distinct(self) -> None:
        s = Set("{[i]: f(i) >= 0 && f(i) <= 5 && f(i + 1) > f(i)}")
        assert sorted(s.uf_calls) == ["f(i + 1)", "f(i)"]

    def test_ufs_property_holds_declarations_only(self) -> None:
        assert Set(SPMV).ufs == {}
        decl = UF("rowptr", monotonic="nondecreasing")
        s = Set(SPMV, {"rowptr": decl, "col": UF("col")})
        assert s.ufs == {"rowptr": decl, "col": UF("col")}

    def test_ufs_property_is_a_copy(self) -> None:
        s = Set(CSR2, NONDECREASING)
        s.ufs.clear()
        assert "rowptr" in s.ufs

    def test_ufs_as_list(self) -> None:
        s = Set(SPMV, [UF("rowptr"), UF("col")])
        assert set(s.ufs) == {"rowptr", "col"}

    def test_body_iset_is_an_isl_set(self) -> None:
        iset = Set(SPMV).body_iset()
        assert isinstance(iset, isl.Set)
        assert iset.dim(isl.dim_type.set) >= 3


class TestRelationViews:
    def test_schedule(self) -> None:
        r = Relation(SCHEDULE)
        assert r.in_arity == 3
        assert r.out_arity == 7
        assert r.in_vars == ("i", "k", "j")
        assert r.out_vars == ("0", "i", "0", "k", "0", "j", "0")
        assert r.params == frozenset()
        assert r.uf_calls == ()

    def test_named_outputs(self) -> None:
        r = Relation("{[i,k] -> [ii,k]: ii = i+1}")
        assert r.in_vars == ("i", "k")
        assert r.out_vars == ("ii", "k")

    def test_expression_output(self) -> None:
        r = Relation("{[i] -> [i + 1]}")
        assert (r.in_arity, r.out_arity) == (1, 1)
        assert r.out_vars == ("i + 1",)

    def test_empty_output_tuple(self) -> None:
        r = Relation("{[i]->[]}")
        assert (r.in_arity, r.out_arity) == (1, 0)
        assert r.in_vars == ("i",)
        assert r.out_vars == ()

    def test_empty_input_tuple(self) -> None:
        r = Relation("{[]->[i]: 0 <= i < 4}")
        assert (r.in_arity, r.out_arity) == (0, 1)

    def test_uf_calls_and_params(self) -> None:
        r = Relation("{[i,k] -> [i,k,j]: j = col(k) && i < N}")
        assert r.uf_calls == ("col(k)",)
        assert r.params == frozenset({"N"})
        assert r.out_vars == ("i", "k", "j")

    def test_reversal_params(self) -> None:
        assert Relation("{[i] -> [r]: r = N - 1 - i}").params == frozenset({"N"})

    def test_set_has_no_relation_views(self) -> None:
        assert not hasattr(Set("{[i]}"), "in_arity")
        assert not hasattr(Relation("{[i]->[j]}"), "arity")


# ============================================================================ round trips
ROUND_TRIP_TEXTS = [
    SPMV,
    CSR2,
    SPMV[:-1] + " && j < i}",
    "{[k,p]: 0 <= k < NNZ && p = perm(col(k))}",
    TWO_ROWS,
    "{[i,j]: 0 <= i < N and 0 <= j < M}",
    "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
    "{[]}",
    "{[]: N > 0}",
    "{[i]: false}",
    "{[i,j]: 1 = 0}",
    "{[i]: 0 <= i < N && N < 0}",
    "{[i]: 0 <= i < 10 && i != 4}",
    "{[i]: 0 <= i < 3 || 7 <= i < 9}",
    "{[i]: 0 <= i < 3 or 5 <= i < 6}",
    "{[i]: 0 <= i < 3} union {[i]: 10 <= i < 12}",
    "{[i]: floor(i/4) = 2}",
    "{[i,j]: 0 <= i < 20 && j = floor((i+1)/3)}",
    "{[i]: 0 <= i < 20 && i % 4 = 3}",
    "{[i]: exists(a: i = 3a && 0 <= i < N)}",
    "{[i]: exists(a, b: i = 2a + 3b && 0 <= a < 4 && 0 <= b < 2)}",
    "{[i]: exists(a: i = f(a) && 0 <= a < 3)}",
    "{[i,j]: g(i, j) > 0 && 0 <= i < N}",
    "{[i,j]: h(i + 1, 2j) = i}",
    "{[i]: f(i) < f(i + 1) && 0 <= i < N}",
    "{[i,j]: f(g(i)) = j}",
    "{[i,j]: 2i + 3j <= 10 && i >= 0 && j >= 0}",
    "{[i,j]: f(i) < j}",
    "{[i]: i >= M - 1 && i <= M + 5}",
    "{[0, i]: 0 <= i < 3}",
    SCHEDULE,
    "{[i,k] -> [ii,k]: ii = i+1}",
    "{[i] -> [i + 1]}",
    "{[i]->[]}",
    "{[]->[i]: 0 <= i < 4}",
    "{[i,k] -> [i0,i1,k]: i = 4*i0 + i1 && 0 <= i1 < 4}",
    "{[i,k] -> [i0,i1,k]: i0 = floor(i/4) && i1 = i - 4*floor(i/4)}",
    "{[i,k] -> [i,kk]: kk = k + 2i}",
    "{[i,j] -> [j,i]}",
    "{[i] -> [r]: r = N - 1 - i}",
    "{[i,k,j] -> [i,j]}",
    "{[i,k] -> [i,k,j]: j = col(k)}",
    "{[i] -> [j]: j = perm(i)} union {[i] -> [j]: j = i && i < 0}",
    "{[i] -> [j]: false}",
    "{[i] -> [j]: N < 0}",
    "{[i] -> [j]: j = i % 2}",
]


@pytest.mark.parametrize("text", ROUND_TRIP_TEXTS)
def test_printing_round_trip(text: str) -> None:
    x = make(text)
    printed = str(x)
    again = type(x)(printed)
    assert again == x, f"{text!r} printed as {printed!r} reparses to {str(again)!r}"
    assert hash(again) == hash(x)
    assert str(again) == printed, "printing is not a fixpoint"
    assert again.params == x.params
    assert sorted(again.uf_calls) == sorted(x.uf_calls)


@pytest.mark.parametrize("text", ROUND_TRIP_TEXTS)
def test_repr_round_trip(text: str) -> None:
    x = make(text)
    assert repr(x) == f"{type(x).__name__}({str(x)!r})"
    assert eval(repr(x), {"Set": Set, "Relation": Relation}) == x


SHIFT = "{[i,k] -> [ii,k]: ii = i+1}"
SWAP = "{[i,k] -> [k,i]}"


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda: Relation(SHIFT).apply(Set(CSR2)), id="apply-shift"),
        pytest.param(lambda: Relation("{[i,k] -> [k]}").apply(Set(CSR2)), id="apply-project"),
        pytest.param(lambda: Relation(SCHEDULE).apply(Set(SPMV)), id="apply-schedule"),
        pytest.param(lambda: Relation(SHIFT).inverse(), id="inverse-shift"),
        pytest.param(lambda: Relation(SWAP).inverse(), id="inverse-swap"),
        pytest.param(lambda: Relation("{[i] -> [j]: j = f(i)}").inverse(), id="inverse-uf"),
        pytest.param(lambda: Relation(SWAP).compose(SHIFT), id="compose-swap-shift"),
        pytest.param(lambda: Relation(SHIFT).compose(SWAP), id="compose-shift-swap"),
        pytest.param(lambda: Relation(SHIFT).domain(), id="domain"),
        pytest.param(lambda: Relation(SHIFT).range(), id="range"),
        pytest.param(
            lambda: Relation(SCHEDULE).intersect_domain(Set(SPMV)).range(), id="range-schedule"
        ),
        pytest.param(lambda: Relation("{[i,k] -> [i,k,j]: j = col(k)}").range(), id="range-uf"),
        pytest.param(lambda: Relation(SHIFT).intersect_domain(Set(CSR2)), id="intersect-domain"),
        pytest.param(lambda: Relation(SHIFT).intersect_range(Set(CSR2)), id="intersect-range"),
        pytest.param(lambda: Set(SPMV).intersect("{[a,b,c]: col(b) < 3}"), id="intersect"),
        pytest.param(lambda: Set(CSR2).union("{[i,k]: k = rowptr(i)}"), id="union"),
    ],
)
def test_results_of_operations_round_trip(build: Any) -> None:
    x = build()
    again = type(x)(str(x))
    assert again == x, (
        f"{str(x)!r} reparses to a different object (names {again.tuple_vars if isinstance(x, Set) else (again.in_vars, again.out_vars)})"
    )
    assert str(again) == str(x)


def test_false_prints_as_false() -> None:
    assert str(Set("{[i]: false}")) == "{[i] : false}"
    assert str(Set("{[i,j]: 1 = 0}")) == "{[i, j] : false}"


def test_parameter_only_contradiction_prints_as_false() -> None:
    # A set that is empty for every parameter value should print like any other empty set.
    s = Set("{[i]: 0 <= i < N && N < 0}")
    assert s.is_empty()
    assert Set(str(s)) == s


def test_printing_is_deterministic() -> None:
    assert str(Set(SPMV)) == str(Set(SPMV))
    assert str(Set(SPMV)) == (
        "{[i, k, j] : 0 <= i && i < N && j = col(k) && k < rowptr(i + 1) && rowptr(i) <= k}"
    )


def test_printing_shows_names_and_commas() -> None:
    assert str(Relation(SCHEDULE)) == "{[i, k, j] -> [0, i, 0, k, 0, j, 0]}"
    assert str(Set("{[]}")) == "{[]}"
    assert str(Relation("{[i]->[]}")) == "{[i] -> []}"


# ====================================================================== equality / hashing
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("{[i]: 0 <= i < 3}", "{[i]: 0 <= i && i <= 2}"),
        ("{[i]: 0 <= i < 3}", "{[i]: i >= 0 and 2 >= i}"),
        ("{[i,j]: f(i) < j}", "{[i,j]: j > f(i)}"),
        ("{[i,j]: f(i) < j}", "{[i,j]: f(i) + 1 <= j}"),
        ("{[i]: 0 <= i < 3 || 2 <= i < 5}", "{[i]: 0 <= i < 5}"),
        ("{[i]: 0 <= i < 3} union {[i]: 5 <= i < 7}", "{[i]: 5 <= i < 7} union {[i]: 0 <= i < 3}"),
        ("{[i]: 2*i = 4}", "{[i]: i = 2}"),
        ("{[i]: floor(i/4) = 2}", "{[i]: 8 <= i <= 11}"),
        ("{[i,k,j] -> [0,i,0,k,0,j,0]}", "{[i,k,j] -> [0,i,0,k,0,j,0]: true}"),
        ("{[i] -> [i + 1]}", "{[i] -> [1 + i]}"),
        (
            SPMV,
            "{[i,k,j]: j = col(k) && 0 <= i && i <= N - 1 && k >= rowptr(i) && k <= rowptr(i+1) - 1}",
        ),
    ],
)
def test_equal_when_canonical_forms_agree(a: str, b: str) -> None:
    x, y = make(a), make(b)
    assert x == y
    assert (x != y) is False
    assert hash(x) == hash(y)
    assert len({x, y}) == 1
    assert str(x) == str(y)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("{[i,j]: f(i) < j}", "{[a,b]: f(a) < b}"),  # names differ
        ("{[i]: 0 <= i < 3}", "{[j]: 0 <= j < 3}"),
        ("{[i]: 0 <= i < 3}", "{[i]: 0 <= i < 4}"),
        ("{[i]: f(i) < 3}", "{[i]: g(i) < 3}"),
        ("{[i]: f(i) < N}", "{[i]: f(i) < M}"),
        ("{[i]: f(i) < 3}", "{[i]: f(i + 1) < 3}"),
        ("{[i] -> [j]}", "{[i, j]}"),
        ("{[i] -> [i + 1]}", "{[i] -> [i + 2]}"),
    ],
)
def test_not_equal(a: str, b: str) -> None:
    x, y = make(a), make(b)
    assert x != y
    assert (x == y) is False


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("{[i,j]: f(i) < j}", "{[a,b]: f(a) < b}"),
        ("{[i] -> [i + 1]}", "{[i] -> [j]: j = i + 1}"),
        (
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
            "{[i,k,j] -> [a,i,b,k,c,j,d]: a = 0 && b = 0 && c = 0 && d = 0}",
        ),
    ],
)
def test_names_matter_for_equality_but_not_for_is_equal(a: str, b: str) -> None:
    x, y = make(a), make(b)
    assert x != y
    assert x.is_equal(y)
    assert y.is_equal(x)


def test_equality_with_other_types() -> None:
    s = Set("{[i]: 0 <= i < 3}")
    assert s != "{[i]: 0 <= i < 3}"
    assert s != 3
    assert s != Relation("{[i] -> [j]}")
    assert (s == object()) is False


def test_equality_ignores_declarations_and_hash_is_stable() -> None:
    plain = Set(CSR2)
    declared = Set(CSR2, NONDECREASING)
    assert plain == declared
    assert hash(plain) == hash(declared)
    assert hash(plain) == hash(plain)


def test_sets_and_relations_work_as_dict_keys() -> None:
    table = {Set(CSR2): "csr", Relation(SCHEDULE): "schedule"}
    assert table[Set("{[i,k]: 0 <= i && i < N && rowptr(i) <= k && k < rowptr(i + 1)}")] == "csr"
    assert table[Relation(str(Relation(SCHEDULE)))] == "schedule"


# ============================================================================ immutability
@pytest.mark.parametrize(
    ("text", "attribute"),
    [
        (SPMV, "arity"),
        (SPMV, "tuple_vars"),
        (SPMV, "params"),
        (SPMV, "uf_calls"),
        (SPMV, "ufs"),
        (SPMV, "_body"),
        (SPMV, "_ufs"),
        (SPMV, "new_attribute"),
        (SCHEDULE, "in_arity"),
        (SCHEDULE, "out_vars"),
        (SCHEDULE, "_body"),
    ],
)
def test_setting_an_attribute_raises(text: str, attribute: str) -> None:
    x = make(text)
    before = str(x)
    with pytest.raises(AttributeError):
        setattr(x, attribute, 1)
    assert str(x) == before


def test_deleting_an_attribute_raises() -> None:
    s = Set(SPMV)
    with pytest.raises(AttributeError):
        del s._body  # type: ignore[attr-defined]
    assert str(s) == str(Set(SPMV))


def test_operations_do_not_modify_operands() -> None:
    s, r = Set(CSR2), Relation("{[i,k] -> [ii,k]: ii = i+1}")
    s_text, r_text = str(s), str(r)
    r.apply(s)
    r.inverse()
    r.domain()
    r.intersect_domain(s)
    s.intersect("{[i,k]: k >= 2}")
    s.union("{[i,k]: k = 0 && i = 0}")
    s.is_empty()
    assert (str(s), str(r)) == (s_text, r_text)


# =============================================================================== algebra
class TestApply:
    def test_shift_golden(self) -> None:
        r = Relation("{[i,k] -> [ii,k]: ii = i+1}")
        out = r.apply(Set(CSR2))
        assert isinstance(out, Set)
        assert str(out) == "{[ii, k] : 1 <= ii && ii <= N && k < rowptr(ii) && rowptr(ii - 1) <= k}"
        assert "rowptr(ii - 1)" in out.uf_calls
        assert out.tuple_vars == ("ii", "k")

    def test_projection_golden(self) -> None:
        out = Relation("{[i,k] -> [k]}").apply(Set(CSR2))
        assert str(out) == (
            "{[k] : exists i : 0 <= i && i < N && k < rowptr(i + 1) && rowptr(i) <= k}"
        )

    def test_schedule(self) -> None:
        out = Relation(SCHEDULE).apply(Set(SPMV))
        assert out.arity == 7
        assert out.tuple_vars == ("0", "i", "0", "k", "0", "j", "0")
        assert sorted(out.uf_calls) == ["col(k)", "rowptr(i + 1)", "rowptr(i)"]
        assert out.points(CSR_PARAMS, CSR_UFS) == [
            (0, i, 0, k, 0, j, 0) for (i, k, j) in SPMV_POINTS
        ]

    def test_text_argument(self) -> None:
        r = Relation("{[i] -> [j]: 0 <= i < 5 && j = 2i}")
        assert r.apply("{[i]: 1 <= i <= 2}") == Set("{[j]: j = 2 or j = 4}")

    def test_image_through_uf(self) -> None:
        out = Relation("{[i] -> [j]: j = f(i)}").apply("{[i]: 1 <= i <= 2}")
        assert out.points(ufs={"f": np.array([7, 8, 9])}) == [(8,), (9,)]

    def test_keeps_declarations(self) -> None:
        out = Relation("{[i,k] -> [k]}").apply(Set(CSR2, NONDECREASING))
        assert out.ufs == NONDECREASING

    def test_arity_error(self) -> None:
        with pytest.raises(ArityError, match="arity"):
            Relation("{[i] -> [j]}").apply(Set("{[i,j]}"))

    def test_type_error(self) -> None:
        with pytest.raises(SpfError):
            Relation("{[i] -> [j]}").apply(Relation("{[i] -> [j]}"))  # type: ignore[arg-type]
        with pytest.raises(SpfError):
            Relation("{[i] -> [j]}").apply(5)  # type: ignore[arg-type]


class TestCompose:
    def test_apply_first_argument_first(self) -> None:
        shift = Relation("{[i,k] -> [ii,k]: ii = i+1}")
        swap = Relation("{[i,k] -> [k,i]}")
        assert swap.compose(shift).is_equal(Relation("{[i,k] -> [k,i + 1]}"))
        assert shift.compose(swap).is_equal(Relation("{[i,k] -> [k + 1,i]}"))
        assert not swap.compose(shift).is_equal(shift.compose(swap))
        assert swap.compose(shift).intersect_domain("{[i,k]: 0 <= i < 2 && k = 5}").points() == [
            ((0, 5), (5, 1)),
            ((1, 5), (5, 2)),
        ]

    def test_through_uf(self) -> None:
        r = Relation("{[i] -> [j]: j = f(i)}").compose("{[i] -> [j]: j = g(i)}")
        assert r.is_equal(Relation("{[i] -> [j]: j = f(g(i))}"))
        assert sorted(r.uf_calls) == ["f(g(i))", "g(i)"]

    def test_arities(self) -> None:
        tile = Relation("{[i,k] -> [i0,i1,k]: i = 4*i0 + i1 && 0 <= i1 < 4}")
        out = Relation("{[a,b,c] -> [c]}").compose(tile)
        assert (out.in_arity, out.out_arity) == (2, 1)
        assert out.is_equal(Relation("{[i,k] -> [k]}"))

    def test_arity_error(self) -> None:
        with pytest.raises(ArityError):
            Relation("{[i] -> [j]}").compose(Relation("{[i] -> [j,k]}"))

    def test_type_error(self) -> None:
        with pytest.raises(SpfError):
            Relation("{[i] -> [j]}").compose(Set("{[i]}"))  # type: ignore[arg-type]


class TestInverseDomainRange:
    def test_inverse(self) -> None:
        r = Relation("{[i,k] -> [ii,k]: ii = i+1}")
        inv = r.inverse()
        assert inv.is_equal(Relation("{[ii,k] -> [i,k]: i = ii - 1}"))
        assert (inv.in_vars, inv.out_vars) == (("ii", "k"), ("i", "k"))
        assert inv.inverse() == r

    def test_inverse_with_uf(self) -> None:
        inv = Relation("{[i] -> [j]: j = f(i)}").inverse()
        assert inv.is_equal(Relation("{[j] -> [i]: j = f(i)}"))

    def test_domain_and_range(self) -> None:
        r = Relation("{[i] -> [j]: 0 <= i < 5 && j = 2i}")
        assert isinstance(r.domain(), Set)
        assert r.domain() == Set("{[i]: 0 <= i <= 4}")
        assert r.range().points() == [(0,), (2,), (4,), (6,), (8,)]

    def test_domain_range_with_uf(self) -> None:
        r = Relation("{[i,k] -> [i,k,j]: j = col(k)}")
        assert r.domain().arity == 2
        rng = r.range()
        assert rng.arity == 3
        assert rng.uf_calls == (rng.uf_calls[0],)
        assert rng.uf_calls[0].startswith("col(")

    def test_range_of_schedule(self) -> None:
        r = Relation(SCHEDULE).intersect_domain(Set(SPMV))
        assert r.range().is_equal(Relation(SCHEDULE).apply(Set(SPMV)))
        assert r.domain().is_equal(Set(SPMV))
        assert r.range().points(CSR_PARAMS, CSR_UFS) == Relation(SCHEDULE).apply(Set(SPMV)).points(
            CSR_PARAMS, CSR_UFS
        )

    def test_intersect_domain_and_range(self) -> None:
        r = Relation("{[i] -> [j]: 0 <= i < 5 && j = 2i}")
        assert r.intersect_domain("{[i]: i >= 4}") == Relation("{[i] -> [j]: i = 4 && j = 8}")
        assert r.intersect_range(Set("{[j]: j >= 4}")) == Relation(
            "{[i] -> [j]: 2 <= i <= 4 && j = 2i}"
        )

    def test_intersect_domain_with_uf_set(self) -> None:
        r = Relation("{[i,k] -> [k]}").intersect_domain(Set(CSR2))
        assert r.points(CSR_PARAMS, CSR_UFS) == [
            ((0, 0), (0,)),
            ((0, 1), (1,)),
            ((2, 2), (2,)),
            ((2, 3), (3,)),
            ((2, 4), (4,)),
        ]

    @pytest.mark.parametrize("method", ["intersect_domain", "intersect_range"])
    def test_restrict_arity_error(self, method: str) -> None:
        r = Relation("{[i] -> [j]}")
        with pytest.raises(ArityError):
            getattr(r, method)(Set("{[i,k]}"))
        with pytest.raises(ArityError):
            getattr(r, method)("{[i,k]}")


class TestIntersectUnion:
    def test_intersect(self) -> None:
        a = Set("{[i]: 0 <= i < 10}")
        assert a.intersect(Set("{[i]: 5 <= i < 20}")) == Set("{[i]: 5 <= i < 10}")

    def test_intersect_is_positional(self) -> None:
        a = Set("{[i]: 0 <= i < 10}")
        out = a.intersect(Set("{[x]: x >= 5}"))
        assert out.tuple_vars == ("i",)
        assert out == Set("{[i]: 5 <= i < 10}")

    def test_intersect_text(self) -> None:
        out = Set(SPMV).intersect("{[i,k,j]: col(k) < 2}")
        assert out.points(CSR_PARAMS, CSR_UFS) == [(0, 0, 1), (0, 1, 0), (2, 4, 1)]

    def test_intersect_relations(self) -> None:
        r = Relation("{[i] -> [j]: 0 <= i < 5 && j = 2i}").intersect("{[i] -> [j]: i < 2}")
        assert r == Relation("{[i] -> [j]: 0 <= i <= 1 && j = 2i}")

    def test_union(self) -> None:
        a = Set("{[i]: 0 <= i < 3}").union("{[i]: 5 <= i < 7}")
        assert a.points() == [(0,), (1,), (2,), (5,), (6,)]
        assert Set("{[i]: 0 <= i < 3}").union("{[i]: 2 <= i < 5}") == Set("{[i]: 0 <= i < 5}")

    def test_union_relations(self) -> None:
        r = Relation("{[i] -> [j]: i = 0 && j = 1}").union("{[i] -> [j]: i = 2 && j = 3}")
        assert r.points() == [((0,), (1,)), ((2,), (3,))]

    def test_union_with_ufs(self) -> None:
        a = Set("{[i,k]: 0 <= i < N && k = rowptr(i)}").union(
            "{[i,k]: 0 <= i < N && k = rowptr(i + 1)}"
        )
        assert a.points(CSR_PARAMS, CSR_UFS) == [(0, 0), (0, 2), (1, 2), (2, 2), (2, 5)]

    def test_empty_tuples(self) -> None:
        assert Set("{[]}").intersect("{[]}") == Set("{[]}")
        assert Set("{[]: false}").union("{[]}") == Set("{[]}")

    @pytest.mark.parametrize("method", ["intersect", "union", "is_subset", "is_equal"])
    def test_arity_error(self, method: str) -> None:
        with pytest.raises(ArityError):
            getattr(Set("{[i]: 0 <= i < 3}"), method)(Set("{[i,j]}"))
        with pytest.raises(ArityError):
            getattr(Relation("{[i] -> [j]}"), method)(Relation("{[i] -> [j,k]}"))

    @pytest.mark.parametrize("method", ["intersect", "union", "is_subset"])
    def test_type_error(self, method: str) -> None:
        with pytest.raises(SpfError):
            getattr(Set("{[i]}"), method)(Relation("{[i] -> [j]}"))
        with pytest.raises(SpfError):
            getattr(Set("{[i]}"), method)(5)

    def test_conflicting_declarations(self) -> None:
        a = Set("{[i]: f(i) < 3}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")})
        b = Set("{[i]: f(i) >= 0}", {"f": UF("f")})
        with pytest.raises(SpfError, match="'f'"):
            a.intersect(b)

    def test_declarations_merge(self) -> None:
        a = Set("{[i]: f(i) < 3}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")})
        b = Set("{[i]: g(i) < 3}", {"g": UF("g")})
        assert set(a.intersect(b).ufs) == {"f", "g"}
        # text operands are parsed with the receiver's declarations
        assert a.intersect("{[i]: f(i) > 7}").is_empty()


# ============================================================================== emptiness
EMPTY_CASES: list[tuple[str, dict[str, UF] | None]] = [
    ("{[i]: false}", None),
    ("{[]: false}", None),
    ("{[i]: 0 <= i < N && N <= 0}", None),
    ("{[i,j]: i = j && f(i) < f(j)}", None),
    ("{[i,j]: i = j + 1 && f(i) < f(j + 1)}", None),
    ("{[i]: f(i) != f(i)}", None),
    ("{[i,j]: i = j && g(i, 0) < g(j, 0)}", None),
    ("{[i,j]: i = j && g(i, j) < g(j, i)}", None),
    ("{[i,j]: i = j && f(g(i)) < f(g(j))}", None),
    ("{[i,j]: g(i) = g(j) && f(g(i)) < f(g(j))}", None),
    ("{[i,j,k]: i = j && j = k && f(i) < f(j) + 1 && f(j) < f(k)}", None),
    ("{[i,j]: f(i) < f(j) && i = j} union {[i,j]: f(i) > f(j) && i = j}", None),
    (TWO_ROWS, NONDECREASING),
    ("{[i,j]: 0 <= i < j < 10 && f(j) < f(i)}", {"f": UF("f", monotonic="nondecreasing")}),
    ("{[i]: 0 <= i < N && rowptr(i+1) < rowptr(i)}", NONDECREASING),
    ("{[a,b]: a < b && f(b) < f(a) + (b - a)}", {"f": UF("f", monotonic="increasing")}),
    ("{[a,b]: a < b && f(a) = f(b)}", {"f": UF("f", monotonic="increasing")}),
    ("{[i]: f(i) > 10}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")}),
    ("{[i]: f(i) > N}", {"f": UF("f", range="{[v]: 0 <= v <= N}")}),
    ("{[i]: f(i) < 0} union {[i]: f(i) > 5}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")}),
    ("{[i]: f(i) > 0 && i < 0}", {"f": UF("f", domain="{[i]: 0 <= i < N}")}),
    ("{[i]: i >= N && f(i) = 0}", {"f": UF("f", domain="{[i]: 0 <= i < N}")}),
    ("{[i,j]: g(i, j) = 0 && i > j}", {"g": UF("g", arity=2, domain="{[i,j]: i <= j}")}),
    ("{[k]: 0 <= k < NNZ && col(k) >= M}", {"col": UF("col", range="{[v]: 0 <= v < M}")}),
]

NON_EMPTY_CASES: list[tuple[str, dict[str, UF] | None]] = [
    ("{[]}", None),
    ("{[i]: 0 <= i < N}", None),
    (SPMV, None),
    (TWO_ROWS, None),
    ("{[i,j]: f(i) < f(j)}", None),
    ("{[i,j]: i = j && g(i, 1) < g(j, 2)}", None),
    ("{[i,j]: 0 <= i < j < 10 && f(j) < f(i)}", None),
    ("{[a,b]: a < b && f(b) < f(a) + (b - a)}", {"f": UF("f", monotonic="nondecreasing")}),
    ("{[a,b]: a < b && f(a) = f(b)}", {"f": UF("f", monotonic="nondecreasing")}),
    ("{[a,b]: a < b && f(b) = f(a) + (b - a)}", {"f": UF("f", monotonic="increasing")}),
    ("{[i]: f(i) > 10}", None),
    ("{[i]: f(i) = 5}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")}),
    ("{[i]: f(i) > 0 && i < 0}", None),
    ("{[i]: f(i) > 0 && i < 0}", {"f": UF("f", domain="{[i]: i <= 0}")}),
    ("{[i,j]: f(i) = j && f(j) = i && i < j}", None),
]


@pytest.mark.parametrize(("text", "ufs"), EMPTY_CASES)
def test_provably_empty(text: str, ufs: dict[str, UF] | None) -> None:
    assert Set(text, ufs).is_empty() is True


@pytest.mark.parametrize(("text", "ufs"), NON_EMPTY_CASES)
def test_not_provably_empty(text: str, ufs: dict[str, UF] | None) -> None:
    assert Set(text, ufs).is_empty() is False


def test_relation_is_empty() -> None:
    assert Relation("{[i] -> [j]: false}").is_empty()
    assert not Relation(SCHEDULE).is_empty()
    assert Relation("{[i] -> [j]: i = j && f(i) < f(j)}").is_empty()


def test_declarations_are_needed_for_monotonic_emptiness() -> None:
    assert not Set(TWO_ROWS).is_empty()
    assert Set(TWO_ROWS, NONDECREASING).is_empty()
    assert Set(TWO_ROWS, [UF("rowptr", monotonic="increasing")]).is_empty()


def test_declarations_survive_operations() -> None:
    """A dependence-style set built with operations still uses the declarations."""
    s = Set(CSR2, NONDECREASING)
    pair = (
        Relation("{[i,k] -> [ip,k]: i < ip}")
        .apply(s)
        .intersect(Set("{[ip,k]: 0 <= ip < N && rowptr(ip) <= k < rowptr(ip+1)}"))
    )
    assert pair.is_empty()


# ================================================================================ subsets
SUBSET_CASES: list[tuple[str, str, dict[str, UF] | None, bool]] = [
    ("{[i]: 0 <= i < 3}", "{[i]: 0 <= i < 5}", None, True),
    ("{[i]: 0 <= i < 5}", "{[i]: 0 <= i < 3}", None, False),
    ("{[i]: false}", "{[i]: 0 <= i < 3}", None, True),
    ("{[i]: 0 <= i < N}", "{[i]: 0 <= i < N + 1}", None, True),
    ("{[i]: 0 <= i < N + 1}", "{[i]: 0 <= i < N}", None, False),
    (CSR2, "{[i,k]: 0 <= i < N}", None, True),
    (CSR2, "{[i,k]: rowptr(i) <= k}", None, True),
    (CSR2, "{[i,k]: rowptr(i) < k}", None, False),
    (CSR2, "{[i,k]: k < rowptr(i + 1)}", None, True),
    (CSR2, "{[i,k]: k < rowptr(i)}", None, False),
    (SPMV, "{[i,k,j]: j = col(k)}", None, True),
    (SPMV, "{[i,k,j]: j = col(i)}", None, False),
    ("{[i,j]: i = j && 0 <= f(i)}", "{[i,j]: 0 <= f(j)}", None, True),
    ("{[i,j]: i = j + 1 && 0 <= f(i)}", "{[i,j]: 0 <= f(j + 1)}", None, True),
    ("{[i,j]: 0 <= f(i)}", "{[i,j]: 0 <= f(j)}", None, False),
    (CSR2, "{[i,k]: rowptr(0) <= k}", NONDECREASING, True),
    (CSR2, "{[i,k]: rowptr(0) <= k}", None, False),
    (CSR2, "{[i,k]: k < rowptr(N)}", NONDECREASING, True),
    ("{[i]: 0 <= i <= 3}", "{[i]: f(i) >= 0}", {"f": UF("f", range="{[v]: 0 <= v <= 5}")}, True),
    ("{[i]: 0 <= i <= 3}", "{[i]: f(i) >= 0}", None, False),
    ("{[i,j]: j = f(i)}", "{[i,j]: f(i) <= j <= f(i)}", None, True),
    ("{[i,j]: j = f(i)}", "{[i,j]: j = g(i)}", None, False),
    ("{[i,j]: 0 <= i < 2 && j = 2i}", "{[i,j]: j = 0} union {[i,j]: j = 2}", None, True),
]


@pytest.mark.parametrize(("a", "b", "ufs", "expected"), SUBSET_CASES)
def test_is_subset(a: str, b: str, ufs: dict[str, UF] | None, expected: bool) -> None:
    assert Set(a, ufs).is_subset(Set(b, ufs)) is expected
    assert Set(a, ufs).is_subset(b) is expected  # text accepted


@pytest.mark.parametrize("text", [SPMV, CSR2, TWO_ROWS, "{[i,j]: f(g(i)) = j}", "{[]}"])
def test_subset_of_itself_and_of_union(text: str) -> None:
    s = Set(text)
    assert s.is_subset(s)
    assert s.is_equal(s)
    assert s.intersect(s).is_subset(s)
    assert s.is_subset(s.union(s))


def test_intersection_is_subset() -> None:
    s = Set(SPMV)
    assert s.intersect("{[i,k,j]: col(k) < 3}").is_subset(s)
    assert not s.is_subset(s.intersect("{[i,k,j]: col(k) < 3}"))


def test_relation_subset() -> None:
    r = Relation("{[i] -> [j]: 0 <= i < 5 && j = 2i}")
    assert r.intersect_domain("{[i]: i < 2}").is_subset(r)
    assert not r.is_subset(r.intersect_domain("{[i]: i < 2}"))


def test_is_equal() -> None:
    assert Set("{[i]: 0 <= i < 3}").is_equal("{[i]: 0 <= i <= 2}")
    assert Set("{[i]: 0 <= i < 3}").is_equal(Set("{[j]: 0 <= j <= 2}"))  # positional
    assert not Set("{[i]: 0 <= i < 3}").is_equal("{[i]: 0 <= i < 4}")
    assert Set("{[i,j]: j = f(i)}").is_equal("{[i,j]: f(i) <= j <= f(i)}")
    assert not Set("{[i,j]: j = f(i)}").is_equal("{[i,j]: j = g(i)}")
    assert Set(CSR2, NONDECREASING).is_equal(
        Set(CSR2 + " union {[i,k]: 0 <= i < N && rowptr(i+1) <= k < rowptr(i)}", NONDECREASING)
    )


# ========================================================================= points/contains
class TestPointsAndContains:
    def test_spmv_points(self) -> None:
        assert Set(SPMV).points(CSR_PARAMS, CSR_UFS) == SPMV_POINTS

    def test_points_are_sorted_tuples_of_int(self) -> None:
        pts = Set("{[i,j]: 0 <= i < 3 && 0 <= j < 3 && i + j = 2}").points()
        assert pts == [(0, 2), (1, 1), (2, 0)]
        assert all(type(v) is int for p in pts for v in p)

    def test_contains(self) -> None:
        s = Set(SPMV)
        for p in SPMV_POINTS:
            assert s.contains(p, CSR_PARAMS, CSR_UFS)
        assert not s.contains((0, 1, 1), CSR_PARAMS, CSR_UFS)
        assert not s.contains((1, 2, 2), CSR_PARAMS, CSR_UFS)  # row 1 is empty
        assert s.contains([2, 4, 1], params=CSR_PARAMS, ufs=CSR_UFS)
        assert s.contains(np.array([2, 4, 1]), params=CSR_PARAMS, ufs=CSR_UFS)

    def test_callables(self) -> None:
        ufs = {"rowptr": lambda i: int(ROWPTR[i]), "col": lambda k: int(COL[k])}
        assert Set(SPMV).points(CSR_PARAMS, ufs) == SPMV_POINTS
        assert Set(SPMV).contains((2, 3, 2), CSR_PARAMS, ufs)

    def test_list_values(self) -> None:
        ufs = {"rowptr": ROWPTR.tolist(), "col": COL.tolist()}
        assert Set(SPMV).points(CSR_PARAMS, ufs) == SPMV_POINTS

    def test_out_of_bounds_calls_are_not_members(self) -> None:
        s = Set("{[i]: 0 <= i < 4 && f(i) = 2}")
        assert s.points(ufs={"f": np.array([2, 1, 2])}) == [(0,), (2,)]
        assert not Set("{[i]: f(i) = 0}").contains((10,), ufs={"f": np.zeros(3, dtype=int)})
        assert not Set("{[i]: f(i) = 0}").contains((-1,), ufs={"f": np.zeros(3, dtype=int)})

    def test_two_dimensional_uf(self) -> None:
        s = Set("{[i,j]: 0 <= i < 4 && 0 <= j < 4 && g(i,j) = 1}")
        assert s.points(ufs={"g": np.eye(3, dtype=np.int64)}) == [(0, 0), (1, 1), (2, 2)]

    def test_wrong_dimension_of_values(self) -> None:
        s = Set("{[i,j]: 0 <= i < 4 && 0 <= j < 4 && g(i,j) = 1}")
        with pytest.raises(SpfError):
            s.points(ufs={"g": np.arange(3)})

    def test_non_integer_values(self) -> None:
        with pytest.raises(SpfError):
            Set("{[i]: 0 <= i < 3 && f(i) = 2}").points(ufs={"f": np.array([2.0, 1.0, 2.0])})

    def test_nested_uf(self) -> None:
        s = Set("{[k,p]: 0 <= k < NNZ && p = perm(col(k))}")
        perm = np.array([2, 0, 1])
        assert s.points({"NNZ": 5}, {"col": COL, "perm": perm}) == [
            (k, int(perm[COL[k]])) for k in range(5)
        ]

    def test_empty_tuple(self) -> None:
        assert Set("{[]}").points() == [()]
        assert Set("{[]}").contains(())
        assert Set("{[]: false}").points() == []
        assert Set("{[]: N > 0}").points({"N": 0}) == []
        assert Set("{[]: N > 0}").points({"N": 1}) == [()]

    def test_floor_mod_ne(self) -> None:
        assert Set("{[i]: 0 <= i < 10 && i != 4}").points() == [(i,) for i in range(10) if i != 4]
        assert Set("{[i]: 0 <= i < 10 && i % 3 = 1}").points() == [(1,), (4,), (7,)]
        assert Set("{[i,j]: 0 <= i < 10 && j = floor(i/3)}").points() == [
            (i, i // 3) for i in range(10)
        ]
        assert Set("{[i]: exists(a: i = 3a && 0 <= i < N)}").points({"N": 7}) == [(0,), (3,), (6,)]

    def test_tuple_var_defined_through_hidden_uf_argument(self) -> None:
        s = Set("{[i]: exists(a: i = f(a) && 0 <= a < 3)}")
        assert s.points(ufs={"f": np.array([1, 4, 7])}) == [(1,), (4,), (7,)]
        assert s.contains((4,), ufs={"f": np.array([1, 4, 7])})

    def test_contains_on_unbounded_set(self) -> None:
        assert Set("{[i]: 0 <= i}").contains((5,))
        assert not Set("{[i]: 0 <= i}").contains((-5,))

    def test_unbounded(self) -> None:
        with pytest.raises(SpfError):
            Set("{[i]: 0 <= i}").points()
        with pytest.raises(SpfError):
            Set("{[i]}").points()
        with pytest.raises(SpfError):
            Set("{[i,j]: 0 <= i < 3 && j >= f(i)}").points(ufs={"f": np.arange(3)})

    def test_missing_param(self) -> None:
        with pytest.raises(SpfError, match="N"):
            Set(SPMV).points({}, CSR_UFS)
        with pytest.raises(SpfError, match="N"):
            Set(SPMV).contains((0, 0, 1), {}, CSR_UFS)

    def test_missing_uf_values(self) -> None:
        with pytest.raises(SpfError, match="col"):
            Set(SPMV).points(CSR_PARAMS, {"rowptr": ROWPTR})

    def test_contains_arity(self) -> None:
        with pytest.raises(ArityError):
            Set(SPMV).contains((0, 1), CSR_PARAMS, CSR_UFS)

    def test_relation_points_and_contains(self) -> None:
        r = Relation("{[i,k] -> [i,k,j]: j = col(k)}").intersect_domain(Set(CSR2))
        pairs = r.points(CSR_PARAMS, CSR_UFS)
        assert pairs == [((i, k), (i, k, j)) for (i, k, j) in SPMV_POINTS]
        assert r.contains(((0, 1), (0, 1, 0)), CSR_PARAMS, CSR_UFS)
        assert r.contains((0, 1, 0, 1, 0), CSR_PARAMS, CSR_UFS)
        assert r.contains([[0, 1], [0, 1, 0]], CSR_PARAMS, CSR_UFS)
        assert not r.contains(((0, 1), (0, 1, 1)), CSR_PARAMS, CSR_UFS)
        with pytest.raises(ArityError):
            r.contains(((0, 1), (0, 1)), CSR_PARAMS, CSR_UFS)

    def test_relation_empty_tuples(self) -> None:
        assert Relation("{[i]->[]: 0 <= i < 2}").points() == [((0,), ()), ((1,), ())]
        assert Relation("{[]->[i]: 0 <= i < 2}").points() == [((), (0,)), ((), (1,))]
        assert Relation("{[i]->[]: 0 <= i < 2}").contains(((1,), ()))

    def test_reversal_points(self) -> None:
        r = Relation("{[i] -> [r]: r = N - 1 - i && 0 <= i < N}")
        assert r.points({"N": 3}) == [((0,), (2,)), ((1,), (1,)), ((2,), (0,))]


# ================================================================================= errors
def test_error_hierarchy() -> None:
    assert issubclass(ParseError, SpfError)
    assert issubclass(ParseError, ValueError)
    assert issubclass(ArityError, SpfError)
    assert issubclass(ArityError, ValueError)
    assert issubclass(UndeclaredError, SpfError)
    assert issubclass(UndeclaredError, KeyError)
    assert spf.errors.SpfError is SpfError
    assert issubclass(SpfError, Exception)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("{[i]: i*i < 3}", None),
        ("{[i,j]: 0 <= i*j}", None),
        ("{[i]: i/2 < 3}", None),
        ("{[i]: 0 <= i < ", None),
        ("{[i]: 0 <= i <= 3 &&& i > 1}", None),
        ("{[i] 0 <= i}", None),
        ("{[i]: 0 <= i", None),
        ("[i]: 0 <= i}", None),
        ("", None),
        ("{[i]: f(i}", None),
        ("{[i]: 3 <}", None),
        ("{[i,]: i > 0}", None),
    ],
)
def test_parse_errors_show_a_caret(text: str, offset: int | None) -> None:
    with pytest.raises(ParseError) as info:
        Set(text)
    message = str(info.value)
    if text:
        assert text.strip() in message
        assert "^" in message
    assert "expected" in message or "not affine" in message or "division" in message


def test_non_affine_caret_position() -> None:
    text = "{[i]: 0 <= i*i < 3}"
    with pytest.raises(ParseError, match="affine") as info:
        Set(text)
    col = caret_column(str(info.value), text)
    assert text[col] in "i*"
    assert 11 <= col <= 13


def test_division_outside_floor() -> None:
    with pytest.raises(ParseError, match="floor") as info:
        Set("{[i]: i/2 < 3}")
    assert caret_column(str(info.value), "{[i]: i/2 < 3}") in (6, 7, 8)
    assert Set("{[i]: floor(i/2) < 3}").arity == 1  # allowed inside floor


def test_unknown_uf_names_it_and_the_known_ones() -> None:
    text = "{[i]: f(i) > 0}"
    with pytest.raises(UndeclaredError) as info:
        Set(text, {"g": UF("g"), "h": UF("h")})
    message = str(info.value)
    assert "'f'" in message
    assert "g" in message
    assert "h" in message
    assert caret_column(message, text) == text.index("f(")
    assert isinstance(info.value, KeyError)


def test_unknown_uf_in_relation() -> None:
    with pytest.raises(UndeclaredError, match="col"):
        Relation("{[i,k] -> [i,k,j]: j = col(k)}", ufs={"rowptr": UF("rowptr")})


def test_uf_arity_error_names_the_uf() -> None:
    text = "{[i]: f(i) < f(i, i)}"
    with pytest.raises(ArityError, match="'f'") as info:
        Set(text)
    assert caret_column(str(info.value), text) == text.index("f(i, i)")


def test_declared_uf_arity_error() -> None:
    text = "{[i]: g(i) < 3}"
    with pytest.raises(ArityError, match="'g'") as info:
        Set(text, {"g": UF("g", arity=2)})
    assert caret_column(str(info.value), text) == text.index("g(")
    with pytest.raises(ArityError, match="'f'"):
        Set("{[i]: f(i, i) < 3}", {"f": UF("f")})


def test_undeclared_uf_is_inferred_without_ufs() -> None:
    s = Set("{[i]: f(i) > 0 && g(i, i) > 0}")
    assert sorted(s.uf_calls) == ["f(i)", "g(i, i)"]


def test_declared_and_unused_uf_is_fine() -> None:
    assert Set("{[i]: 0 <= i < 3}", {"f": UF("f")}).uf_calls == ()


def test_set_relation_kind_mismatch() -> None:
    with pytest.raises(SpfError):
        Set("{[i] -> [j]}")
    with pytest.raises(SpfError):
        Relation("{[i]}")


def test_non_string_text() -> None:
    with pytest.raises(SpfError):
        Set(3)  # type: ignore[arg-type]
    with pytest.raises(SpfError):
        Relation(None)  # type: ignore[arg-type]


def test_bad_ufs_argument() -> None:
    with pytest.raises(SpfError, match="'g'"):
        Set("{[i]: f(i) > 0}", {"g": UF("f")})
    with pytest.raises(SpfError):
        Set("{[i]: f(i) > 0}", {"f": 3})  # type: ignore[dict-item]


def test_errors_from_mixing_sets_and_relations_are_spf_errors() -> None:
    with pytest.raises(SpfError):
        Set("{[i]}").intersect(Relation("{[i] -> [j]}"))  # type: ignore[arg-type]


# =============================================================================== doctests
@pytest.mark.parametrize("module", ["spf.sets.set_like", "spf.sets.uf"])
def test_docstring_examples(module: str) -> None:
    mod = __import__(module, fromlist=["_"])
    result = doctest.testmod(mod, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} doctest(s) in {module} failed"


@pytest.mark.parametrize("text", ["{[i]: f < i && f(i) > 0}", "{[i]: f(i) > 0 && f < i}"])
def test_a_name_is_a_parameter_or_a_uf_not_both(text: str) -> None:
    # found by the fuzzer: ``f<(i) > 0 && f(i, i) > 0`` parsed, then printed text that does not
    with pytest.raises(ParseError, match="uninterpreted function") as info:
        Set(text)
    assert "^" in str(info.value)


def test_points_of_a_set_bounded_through_the_floor_of_a_uf_value() -> None:
    """``9*floor(h(i)/3) >= 14 - 5i + 3h(i) + 6*floor((i - 1)/3)`` bounds ``i`` below
    (``i >= 3``) only through the floor of the UF value; isl's ``is_bounded`` of the
    projection onto ``i`` asks that floor to be bounded too, so ``points`` refused the set
    as unbounded when the UF's values came as a callable."""
    s = Set("{[i]: i <= 4 && 9*floor(h(i)/3) >= 14 - 5i + 3*h(i) + 6*floor((i - 1)/3)}")
    want = [
        (i,)
        for i in range(-30, 5)
        if 9 * ((i % 3) // 3) >= 14 - 5 * i + 3 * (i % 3) + 6 * ((i - 1) // 3)
    ]
    assert want == [(3,)]
    assert s.points(ufs={"h": lambda x: x % 3}) == want


def test_bounds_of_a_set_bounded_through_the_floor_of_a_uf_value() -> None:
    """``bounds`` asked isl's ``is_bounded`` too and called ``i`` unbounded; with the UF
    value free, ``i`` is 3 (any value) or 4 (a multiple of 3)."""
    s = Set("{[i]: i <= 4 && 9*floor(h(i)/3) >= 14 - 5i + 3*h(i) + 6*floor((i - 1)/3)}")
    assert s.bounds() == [(3, 4)]
