"""Property tests of the canonical form: renamed ``exists`` variables (also inside UF
arguments) give equal, equal-hashing, mutually-subset sets; ``is_subset`` is reflexive and
consistent with ``==``; printed text reads back equal; integers beyond int64 round-trip."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import Relation, Set

SOME = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

#: A borrowed name fixed to a constant (``c0 = 0``), which the tuple should show instead.
TUPLE_CONSTANT = re.compile(r"\bc\d = -?\d+\b(?! *[*+])")
HIDDEN_NAMES = ("a", "b", "z", "x1", "w_")
coeffs = st.integers(-3, 3)
small = st.integers(-6, 6)


def _affine(draw: st.DrawFn, names: list[str]) -> str:
    """A random affine expression over ``names`` (at least a constant)."""
    parts = [f"{draw(coeffs)}*{n}" for n in names if draw(st.booleans())]
    parts.append(str(draw(small)))
    return " + ".join(parts)


@st.composite
def hidden_sets(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Set text with a placeholder ``@<k>`` for each existential, and the placeholders."""
    n_hidden = draw(st.integers(1, 2))
    ev = [f"@{k}" for k in range(n_hidden)]
    conds = ["0 <= i < N"]
    for e in ev:
        # the existential is tied to i (determined or only bounded) and used by a UF
        if draw(st.booleans()):
            conds.append(f"i = {draw(st.integers(1, 3))}{e} + {draw(st.integers(0, 2))}")
        else:
            conds.append(f"0 <= {e} < i")
        uf = draw(st.sampled_from(["f", "g"]))
        arg = draw(st.sampled_from([e, f"{e} + 1", f"2{e}", f"{e} - i"]))
        conds.append(f"{uf}({arg}) {draw(st.sampled_from(['>', '>=', '<', '!=']))} {draw(small)}")
    if n_hidden == 2 and draw(st.booleans()):
        conds.append(f"{ev[0]} <= {ev[1]}")
    if draw(st.booleans()):
        conds.append(f"{_affine(draw, ['i'])} <= N")
    text = f"{{[i]: exists({', '.join(ev)}: {' && '.join(conds)})}}"
    return text, ev


def _named(template: str, count: int, names: list[str]) -> str:
    for k in range(count):
        template = template.replace(f"@{k}", names[k])
    return template


@SOME
@given(hidden_sets(), st.permutations(HIDDEN_NAMES), st.permutations(HIDDEN_NAMES))
def test_renamed_existentials_are_equal(
    case: tuple[str, list[str]], first: list[str], second: list[str]
) -> None:
    template, ev = case
    n = len(ev)
    a = Set(_named(template, n, list(first)))
    b = Set(_named(template, n, list(second)))
    assert a == b
    assert hash(a) == hash(b)
    assert a.is_subset(b)
    assert b.is_subset(a)
    assert a.is_equal(b)
    assert Set(str(a)) == a
    assert Set(str(b)) == b


@SOME
@given(hidden_sets(), hidden_sets(), st.permutations(HIDDEN_NAMES))
def test_is_subset_reflexive_and_consistent_with_eq(
    one: tuple[str, list[str]], two: tuple[str, list[str]], names: list[str]
) -> None:
    a = Set(_named(one[0], len(one[1]), list(names)))
    b = Set(_named(two[0], len(two[1]), list(reversed(names))))
    assert a.is_subset(a)
    assert b.is_subset(b)
    assert a.is_equal(a)
    if a == b:
        assert hash(a) == hash(b)
        assert a.is_subset(b)
        assert b.is_subset(a)
    both = a.intersect(b)
    assert both.is_subset(both)
    assert Set(str(both)) == both


@st.composite
def schedules(draw: st.DrawFn) -> str:
    """A 2d+1 schedule of a 2-deep nest, possibly with a shifted or swapped loop."""
    i = draw(st.sampled_from(["i", "i + 1", "j", "2i"]))
    j = "i" if i == "j" else draw(st.sampled_from(["j", "j - 1"]))
    c = [str(draw(st.integers(0, 2))) for _ in range(3)]
    return f"{{[i,j] -> [{c[0]}, {i}, {c[1]}, {j}, {c[2]}]}}"


@SOME
@given(schedules(), schedules(), st.integers(0, 2))
def test_schedule_algebra_reads_back_with_tuple_constants(s1: str, s2: str, pad: int) -> None:
    r1, r2 = Relation(s1), Relation(s2)
    dom = Set("{[i,j]: 0 <= i < N && rowptr(i) <= j < rowptr(i+1)}")
    padder = Relation(
        "{[c0,c1,c2,c3,c4] -> [c0,c1,c2,c3,c4" + ", 0" * pad + "]}"
    )  # borrowed names c0..c4 must not survive as 'c0 = 0'
    results: list[Set | Relation] = [
        r1.apply(dom),
        padder.compose(r1),
        padder.apply(r2.apply(dom)),
        r1.inverse(),
        r1.intersect(r2),
        padder.compose(r1).intersect_domain(dom).range(),
    ]
    for res in results:
        assert type(res)(str(res)) == res
        assert not TUPLE_CONSTANT.search(str(res)), str(res)


bigs = st.one_of(
    st.integers(2**63, 2**80),
    st.integers(-(2**80), -(2**63) - 1),
    st.integers(2**31, 2**63 - 1),
)


@SOME
@given(bigs, st.integers(2**63, 2**80), st.sampled_from(range(6)))
def test_big_integers_round_trip(big: int, positive: int, where: int) -> None:
    text = [
        f"{{[i]: i <= {big}}}",
        f"{{[i]: {big}*i <= N}}",
        f"{{[{big}, i]: 0 <= i < 3}}",
        f"{{[i]: i = floor(N/{positive})}}",
        f"{{[i]: 0 <= i < 4 && i = N % {positive}}}",
        f"{{[i]: f(i + {big}) >= 0}}",
    ][where]
    s = Set(text)
    assert Set(str(s)) == s
    assert str(abs(big) if where != 3 and where != 4 else positive) in str(s)


@SOME
@given(st.integers(-(2**80), 2**80), st.integers(0, 3))
def test_big_points_exact(base: int, width: int) -> None:
    s = Set(f"{{[i]: {base} <= i <= {base + width}}}")
    assert s.points() == [(base + k,) for k in range(width + 1)]
    assert s.bounds() == [(base, base + width)]


def _uf_from(values: np.ndarray) -> Callable[[int], int]:
    """A UF reading ``values`` around index 0 (arguments may be negative)."""
    off = len(values) // 2
    return lambda x: int(values[x + off]) if 0 <= x + off < len(values) else 0


@SOME
@given(hidden_sets(), hidden_sets(), st.integers(0, 2**32 - 1))
def test_subset_with_hidden_variables_is_sound(
    one: tuple[str, list[str]], two: tuple[str, list[str]], seed: int
) -> None:
    """When ``a.is_subset(b)`` says True (``b`` with hidden UF arguments), every point of
    ``a`` is in ``b`` for random UF values."""
    a = Set(_named(one[0], len(one[1]), ["a", "b"]))
    b = Set(_named(two[0], len(two[1]), ["x", "y"]))
    if not a.is_subset(b):
        return
    rng = np.random.default_rng(seed)
    for _ in range(3):
        ufs = {name: _uf_from(rng.integers(-7, 8, size=48)) for name in ("f", "g")}
        n = int(rng.integers(0, 7))
        assert set(a.points({"N": n}, ufs)) <= set(b.points({"N": n}, ufs))


@st.composite
def named_chains(draw: st.DrawFn) -> tuple[str, str]:
    """A chain of nested calls ``f(h(g(i) + 1))`` compared with ``j``, written nested and
    with some inner calls named by existentials (``exists m0: m0 = g(i) && ...``)."""
    ufs = draw(st.lists(st.sampled_from(["f", "g", "h"]), min_size=2, max_size=3))
    nested, named, conds, names = "i", "i", [], []
    for depth, uf in enumerate(ufs):
        a, b = draw(st.integers(1, 2)), draw(st.integers(-1, 1))
        nested = f"{uf}({a}*({nested}) + {b})"
        call = f"{uf}({a}*({named}) + {b})"
        if depth < len(ufs) - 1 and draw(st.booleans()):
            names.append(f"m{depth}")
            conds.append(f"m{depth} = {call}")
            named = f"m{depth}"
        else:
            named = call
    op = draw(st.sampled_from(["=", "<", ">="]))
    domain = "0 <= i < N && 0 <= j < N"
    plain = f"{{[i, j]: {domain} && j {op} {nested}}}"
    body = " && ".join([domain, *conds, f"j {op} {named}"])
    hidden = f"{{[i, j]: exists({', '.join(names)}: {body})}}" if names else plain
    return plain, hidden


@SOME
@given(named_chains(), st.integers(0, 2**32 - 1))
def test_existentials_naming_inner_calls_are_equal_to_nesting(
    case: tuple[str, str], seed: int
) -> None:
    plain, hidden = (Set(text) for text in case)
    assert plain.is_subset(hidden)
    assert hidden.is_subset(plain)
    rng = np.random.default_rng(seed)
    ufs = {name: _uf_from(rng.integers(-4, 5, size=32)) for name in ("f", "g", "h")}
    assert plain.points({"N": 4}, ufs) == hidden.points({"N": 4}, ufs)


@st.composite
def floor_exists_sets(draw: st.DrawFn) -> str:
    """A union of disjuncts under ``exists a, b`` whose hidden variables meet in floors,
    modulos and UF arguments; a disjunct may use one variable only through the other."""
    ev = ["a", "b"]
    disjuncts = []
    for _ in range(draw(st.integers(1, 3))):
        conds = ["0 <= a < 6", "0 <= b < 6"]
        for _ in range(draw(st.integers(1, 3))):
            x, y = draw(st.sampled_from(ev)), draw(st.sampled_from([*ev, "i"]))
            d, c = draw(st.integers(2, 4)), draw(st.integers(-2, 2))
            conds.append(
                draw(
                    st.sampled_from(
                        [
                            f"{x} = floor(({y} + {c})/{d})",
                            f"({x} + {y} + {c}) % {d} = 0",
                            f"floor({x}/{d}) <= {y} + {c}",
                            f"{x} % {d} = {abs(c) % d}",
                        ]
                    )
                )
            )
        uf, e = draw(st.sampled_from(["f", "g"])), draw(st.sampled_from(ev))
        arg = draw(st.sampled_from([e, f"floor({e}/2)", f"{e} % 3", f"{e} + i"]))
        conds.append(f"{uf}({arg}) {draw(st.sampled_from(['>', '<=', '=', '!=']))} i")
        disjuncts.append("(" + " && ".join(conds) + ")")
    return f"{{[i]: 0 <= i < N && exists(a, b: {' || '.join(disjuncts)})}}"


@SOME
@given(floor_exists_sets(), st.integers(0, 2**32 - 1))
def test_floor_and_mod_under_exists_read_back_equal(text: str, seed: int) -> None:
    s = Set(text)
    again = Set(str(s))
    assert again == s, f"{s} reads back as {again}"
    assert hash(again) == hash(s)
    assert str(Set(str(again))) == str(again)
    rng = np.random.default_rng(seed)
    ufs = {name: _uf_from(rng.integers(-2, 6, size=32)) for name in ("f", "g")}
    assert s.points({"N": 5}, ufs) == again.points({"N": 5}, ufs)


def test_disjunct_using_a_variable_only_through_another_reads_back_equal() -> None:
    """The harness's case: each disjunct constrains the other disjunct's variable inside a
    floor but calls no UF on it; printed per disjunct, that variable reads back as a plain
    existential, so the canonical form frees it there and shares one variable."""
    s = Set(
        "{[i]: exists a, b: (f(a) > i && a = floor(b/2) && 0 <= b < i)"
        " || (g(b) > i && b = floor(a/3) && 0 <= a < i)}"
    )
    assert Set(str(s)) == s
    assert str(s) == (
        "{[i] : exists a : 0 <= a && 3*a < i && i < g(a)} union "
        "{[i] : exists a : 0 <= a && 2*a < i && i < f(a)}"
    )
