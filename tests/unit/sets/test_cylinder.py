"""``spf.sets.body._is_cylinder``: its fast answer (one basic set without existential
variables that is not empty constrains every dim its constraints involve) against the set
compared with its projection, on chosen and on random sets."""

from __future__ import annotations

import random

import islpy as isl
import pytest

from spf.sets.body import DT, _constrains, _is_cylinder


def _by_projection(iset: isl.Set, pos: int) -> bool:
    """The definition: the set equals its projection along ``pos`` extended back."""
    cyl = iset.project_out(DT.set, pos, 1).insert_dims(DT.set, pos, 1)
    return bool(cyl.is_equal(iset))


CASES = [
    "{ [x, d] : 0 <= x <= 5 and d = x }",
    "{ [x, d] : 0 <= x <= 5 }",
    "{ [x, d] : d >= 0 or d < 0 }",
    "{ [x, d] : d >= 0 or x < 0 }",
    "{ [x, d] : exists e : d = 2e }",
    "{ [x, d] : exists e : d = e and 0 <= x }",
    "{ [x, d] : exists e : x = 2e and 0 <= d }",
    "[N] -> { [x, d] : 0 <= d < N and x = 1 }",
    "[N] -> { [x, d] : 0 <= d < N and N < 0 }",
    "{ [x, d] : x <= d and d <= x - 1 }",
    "{ [x, d] : 2d <= x and x <= 2d + 1 }",
    # empty, though its one basic set involves d (isl finds it only when asked)
    "{ [x, d, y] : x = 2y + 1 and x = 2d }",
    # existential variables: a union that is a cylinder, one basic set that is not
    "{ [x, d] : exists e : d = 2e or exists f : d = 2f + 1 }",
    "{ [x, d] : exists e, f : d = 4e + 6f + x and 0 <= x <= 1 }",
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("pos", [0, 1])
def test_cylinder_matches_the_projection(text: str, pos: int) -> None:
    # each question on a set of its own: asking isl whether a set is empty may simplify
    # that set's constraints (the empty case's then involve no dim)
    want = _by_projection(isl.Set(text), pos)
    assert _is_cylinder(isl.Set(text), pos) == want
    iset = isl.Set(text)
    if iset.involves_dims(DT.set, pos, 1):
        assert (not _constrains(iset, pos)) == want


def test_a_constrained_dim_and_a_free_one() -> None:
    iset = isl.Set("{ [x, d, y] : 0 <= x <= 5 and d = x }")
    assert not _is_cylinder(iset, 1)
    assert _is_cylinder(iset, 2)


def _random_set(rng: random.Random) -> str:
    """A union of one or two conjunctions of 1-3 random constraints over x, d, y and N,
    some with an existential variable."""
    pieces = []
    for _ in range(rng.choice([1, 1, 2])):
        exists = rng.random() < 0.3
        names = ["x", "d", "y", "N"] + (["e"] * exists)
        cons = []
        for _ in range(rng.randint(1, 3)):
            terms = " + ".join(f"{rng.randint(-2, 2)}{n}" for n in names)
            cons.append(f"{terms} {rng.choice(['>=', '='])} {rng.randint(-3, 3)}")
        body = " and ".join(cons)
        pieces.append(f"exists e : {body}" if exists else body)
    return "[N] -> { [x, d, y] : " + " or ".join(f"({p})" for p in pieces) + " }"


def test_cylinder_matches_the_projection_on_random_sets() -> None:
    rng = random.Random(28)
    fast = 0
    for _ in range(400):
        text = _random_set(rng)
        for pos in range(3):
            iset = isl.Set(text)
            if not iset.involves_dims(DT.set, pos, 1):
                continue
            fast += iset.n_basic_set() == 1
            assert (not _constrains(iset, pos)) == _by_projection(isl.Set(text), pos), (text, pos)
    assert fast > 100  # the fast answer was exercised, not only the projection
