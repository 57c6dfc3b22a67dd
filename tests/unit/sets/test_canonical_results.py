"""Results of apply / compose / inverse / intersect / range print as the inputs were written:
constants in the tuple (no ``c0 = 0`` for a tuple constant) and text that reads back equal."""

from __future__ import annotations

import re

import pytest

from spf import Relation, Set

SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
CSR2 = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}"
S2 = Relation("{[i,j] -> [0,i,0,j,0]}")
S3 = Relation("{[i,k,j] -> [0,i,0,k,0,j,0]}")
PAD = Relation("{[c0,c1,c2,c3,c4] -> [c0,c1,c2,c3,c4,0,0]}")
SHIFT = Relation("{[a,b,c,d,e] -> [a,b+1,c,d,e]}")
SWAP = Relation("{[a,b] -> [b,a]}")
PIECES = Relation("{[i] -> [0, i] : i < 3} union {[i] -> [1, i] : i >= 3}")

#: ``name = constant`` in the printed constraints: a tuple constant shown as a constraint.
CONST_EQ = re.compile(r"(?<![\w(+*-])([A-Za-z_]\w*) = -?\d+\b(?! *[+*])")


def _results() -> list[tuple[str, Set | Relation]]:
    return [
        ("apply 2d+1 to CSR", S2.apply(Set(CSR2))),
        ("apply 2d+1 to SpMV", S3.apply(Set(SPMV))),
        ("compose pad . 2d+1", PAD.compose(S2)),
        ("compose shift . 2d+1", SHIFT.compose(S2)),
        ("compose 2d+1 . swap", S2.compose(Relation("{[i,j] -> [j,i]}"))),
        ("compose SpMV schedule", S3.compose(Relation("{[i,k] -> [i,k,j]: j = col(k)}"))),
        ("compose swap . pieces", SWAP.compose(PIECES)),
        ("inverse", S2.inverse()),
        ("inverse . inverse", S2.inverse().inverse()),
        ("intersect", S2.intersect("{[a,b] -> [0,a,0,b,0]: a < 10}")),
        ("range", PAD.compose(S2).intersect_domain(CSR2).range()),
        ("apply pad to a schedule image", PAD.apply(S2.apply(Set(CSR2)))),
    ]


@pytest.mark.parametrize(("what", "result"), _results(), ids=[w for w, _ in _results()])
def test_result_reads_back_equal(what: str, result: Set | Relation) -> None:
    text = str(result)
    assert type(result)(text) == result, what


@pytest.mark.parametrize(("what", "result"), _results(), ids=[w for w, _ in _results()])
def test_no_constraint_fixes_a_tuple_entry_to_a_constant(what: str, result: Set | Relation) -> None:
    assert not CONST_EQ.search(str(result)), f"{what}: {result}"


@pytest.mark.parametrize(
    ("result", "text"),
    [
        (PAD.compose(S2), "{[i, j] -> [0, i, 0, j, 0, 0, 0]}"),
        (SHIFT.compose(S2), "{[i, j] -> [0, i + 1, 0, j, 0]}"),
        (SWAP.compose(PIECES), "{[i] -> [i, 1] : 3 <= i} union {[i] -> [i, 0] : i <= 2}"),
        (
            S3.compose(Relation("{[i,k] -> [i,k,j]: j = col(k)}")),
            "{[i, k] -> [0, i, 0, k, 0, j, 0] : j = col(k)}",
        ),
        (
            PAD.apply(S2.apply(Set(CSR2))),
            "{[0, c1, 0, c3, 0, 0, 0] : "
            "0 <= c1 && c1 < N && c3 < rowptr(c1 + 1) && rowptr(c1) <= c3}",
        ),
    ],
)
def test_printed_forms(result: Set | Relation, text: str) -> None:
    assert str(result) == text
    assert result == type(result)(text)


def test_own_output_names_are_kept() -> None:
    """A name the relation gave its output stays (as written), even when fixed."""
    r = Relation("{[x] -> [y]: y = x}").compose(Relation("{[i] -> [0]}"))
    assert r.out_vars == ("y",)
    assert Relation(str(r)) == r


def test_fixed_entry_used_by_a_uf_argument_keeps_its_name() -> None:
    r = Relation("{[a,b] -> [a,b]: f(b) > 0}").compose(Relation("{[i] -> [i, 0]}"))
    assert Relation(str(r)) == r
    assert r.is_equal("{[i] -> [i, 0] : f(0) > 0}")


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("{[i] -> [0]} union {[i] -> [j]: j < i}", "{[i] -> [j] : j < i} union {[i] -> [0]}"),
        (
            "{[i,j]: j = 0 && i < 5} union {[i,j]: 0 <= j < i}",
            "{[i, j] : 0 <= j && j < i} union {[i, 0] : i <= 4}",
        ),
        (
            "{[i] -> [j,k]: j = 0 && k = j + 1 && i < 0} union {[i] -> [j,k]: k = i && 0 < j < i}",
            "{[i] -> [j, k] : 1 <= j && i = k && j < i} union {[i] -> [0, 1] : i <= -1}",
        ),
        # every part fixes j: the name stays (as written)
        (
            "{[i] -> [j]: j = 0 && i < 0} union {[i] -> [j]: j = 1 && i > 5}",
            "{[i] -> [j] : 6 <= i && j = 1} union {[i] -> [j] : i <= -1 && j = 0}",
        ),
    ],
)
def test_union_parts_show_their_tuple_constants(text: str, printed: str) -> None:
    r = Relation(text) if "->" in text else Set(text)
    assert str(r) == printed
    assert type(r)(printed) == r


def test_union_part_constant_used_by_a_uf_keeps_the_name() -> None:
    s = Set("{[i,j]: j = 0 && f(j) > i} union {[i,j]: 0 <= j < i}")
    assert Set(str(s)) == s
    assert "[i, j]" in str(s).split(" union ")[0]
    assert "[i, j]" in str(s).split(" union ")[1]


def test_calls_are_sorted_again_after_names_move() -> None:
    """Inverting ILU(0)'s reversed schedule moves names onto earlier positions, which changes
    the text of the calls' arguments (``col(__t3)`` and ``col(__t11)``): the calls are sorted
    again, so the result reads back equal from its text."""
    from spf import kernels

    comp = kernels.ilu0_csr()
    stmt = comp.stmt("s1")
    stmt.reverse("j1")
    inverse = stmt.schedule.intersect_domain(stmt.domain).inverse()
    assert Relation(str(inverse), inverse.ufs) == inverse
