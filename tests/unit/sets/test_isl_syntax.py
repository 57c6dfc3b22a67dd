"""Set text as isl prints it: ``;`` between the parts of a union inside one pair of braces,
a shared ``[N] ->`` prefix, ``mod``, fixed tuple entries ``[i = 100]``, existentials with
definitions ``exists (e0 = floor((i)/2): ...)`` and the tuple-less ``{ : N > 0 }``."""

from __future__ import annotations

import islpy as isl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import ParseError, Relation, Set


def test_semicolon_separates_the_parts_of_a_union() -> None:
    s = Set("{[i]: 0 <= i < 3; [i]: 5 <= i < 7}")
    assert s == Set("{[i]: 0 <= i < 3} union {[i]: 5 <= i < 7}")
    assert s.points() == [(0,), (1,), (2,), (5,), (6,)]


def test_parameters_prefix_is_shared_by_every_part() -> None:
    s = Set("[N] -> { [i] : 0 <= i < N; [i] : i = N + 3 }")
    assert s.params == {"N"}
    assert s.points({"N": 2}) == [(0,), (1,), (5,)]
    assert s == Set("[N] -> {[i]: 0 <= i < N} union [N] -> {[i]: i = N + 3}")


def test_isl_printed_union_with_mod_and_fixed_entry() -> None:
    s = Set("[N] -> { [i] : (-1 + i) mod 3 = 0 and 0 < i <= 10; [i = 100] }")
    assert s.points({"N": 0}) == [(1,), (4,), (7,), (10,), (100,)]


def test_isl_printed_relation_with_fixed_output() -> None:
    r = Relation("{ [i, j] -> [k] : (-i + k) mod 3 = 0 and 0 <= k <= 2; [i, j] -> [k = j] }")
    assert r == Relation("{[i, j] -> [k]: k = i % 3} union {[i, j] -> [j]}")


def test_exists_with_definitions_as_isl_prints_them() -> None:
    s = Set("{ [i] : exists (e0 = floor((i)/2), e1: i = 2e0 + e1 and 0 <= e1 <= 0) }")
    assert s == Set("{[i]: i % 2 = 0}")


def test_tupleless_piece_is_a_set_of_zero_tuples() -> None:
    s = Set("[N] -> { : N > 0 }")
    assert s.arity == 0
    assert s == Set("{[]: N > 0}")
    assert s.contains((), {"N": 1})
    assert not s.contains((), {"N": 0})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{[i < 3]}", "must fix a name"),
        ("{[i + 1 = 3]}", "must fix a name"),
        ("{[i]: exists (e0 < 3: i = e0)}", "defined with '='"),
        ("{[i]: 0 <= i; }", "unexpected '}'"),
        ("{[i]: i mod = 2}", "expected"),
        ("{[mod]}", "reserved word"),
        ("{[i]; [i, j]}", "same tuple arities"),
    ],
)
def test_bad_isl_syntax_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(Exception, match=message) as info:
        Set(text)
    assert isinstance(info.value, (ParseError, ValueError))


coeffs = st.integers(-3, 3)
consts = st.integers(-6, 6)


@st.composite
def affine_sets(draw: st.DrawFn) -> str:
    """A random UF-free set in the syntax isl and spf share: unions, mod, floor, exists."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        conds = ["-8 <= i <= 8", "-8 <= j <= 8"]
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["lin", "mod", "floor", "exists"]))
            a, b, c = draw(coeffs), draw(coeffs), draw(consts)
            if kind == "lin":
                conds.append(f"{a}i + {b}j + {c} >= 0")
            elif kind == "mod":
                m = draw(st.integers(2, 4))
                conds.append(f"({a}i + {b}j) mod {m} = {draw(st.integers(0, m - 1))}")
            elif kind == "floor":
                conds.append(f"floor(({a}i + {c})/{draw(st.integers(2, 4))}) <= j")
            else:
                conds.append(f"exists (e: i = {draw(st.integers(2, 3))}e + {c} and e >= {b})")
        parts.append(" and ".join(conds))
    return "{ [i, j] : " + " or ".join(f"({p})" for p in parts) + " }"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(affine_sets())
def test_text_isl_prints_reads_back_as_the_same_set(text: str) -> None:
    printed = str(isl.Set(text))
    assert Set(printed) == Set(text), printed
