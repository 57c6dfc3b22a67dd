"""Fuzzing the whole text -> object path (parser and converter): any text gives a value or an
``SpfError`` (``ParseError`` for bad text; ``ArityError``/``UndeclaredError`` for wrong UF
use), never another exception; a value prints to text that parses back equal."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import UF, ParseError, Relation, Set, SpfError

pytestmark = pytest.mark.slow  # hundreds of examples a test

# SPF_FUZZ_EXAMPLES=5000 for a longer local run
EXAMPLES = int(os.environ.get("SPF_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SEEDS = [
    "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
    "{[i,k,j] -> [0,i,0,k,0,j,0]}",
    "{[i,k] -> [ii,k]: ii = i+1}",
    "{[i]: 0 <= i < N and i != 3 or i = 7}",
    "{[i]: 2i + 3*i >= 4 && floor(i/4) = 2 && i % 3 = 1}",
    "{[i]: exists(a: i = 2a && f(a) > 0)}",
    "{[k,p]: 0 <= k < NNZ && p = perm(col(k))}",
    "{[i,j]: f(i, j) < g(i) * 2}",
    "{[i]: i * j > 0}",
    "{[i]: i / 2 > 0}",
    "{[i]: f(i) > 0 && f(i, i) > 0}",
    "{[]} union {[]}",
    "{[i]} union {[i, j]}",
]
ALPHABET = [*"{}[](),:<>=!+-*/%&|ijkNf0123 ", "->", "&&", "||", "exists", "floor"]


def build(text: str) -> Set | Relation | None:
    for cls in (Set, Relation):
        try:
            value = cls(text)
        except SpfError as err:
            failure: SpfError = err
        else:
            assert cls(str(value)) == value, f"{text!r} printed as {value} does not parse back"
            return value
        assert str(failure)  # rendering never fails
        assert not isinstance(failure, ParseError) or failure.text == text
    return None


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        piece = draw(st.sampled_from(ALPHABET))
        if action == "insert":
            text = text[:pos] + piece + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + 1 :]
        else:
            text = text[:pos] + piece + text[pos + 1 :]
    return text


@FUZZ
@given(mutated())
def test_mutated_texts_give_values_or_spf_errors(text: str) -> None:
    build(text)


@FUZZ
@given(st.lists(st.sampled_from(ALPHABET), max_size=30).map("".join))
def test_token_soup_gives_values_or_spf_errors(text: str) -> None:
    build(text)


@settings(max_examples=60, deadline=None)
@given(mutated())
def test_with_declared_ufs(text: str) -> None:
    ufs = {"f": UF("f"), "rowptr": UF("rowptr", monotonic="nondecreasing"), "col": UF("col")}
    for cls in (Set, Relation):
        try:
            value = cls(text, ufs=ufs)
        except SpfError:
            continue
        value.is_empty()  # the UF facts never make the decision crash
