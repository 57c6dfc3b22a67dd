"""The set layer's memos (parse cache, per-body memo, constraint and slot memos) never change
an answer: the same text under other declarations is another set, errors are raised every
time, and results print as they did before any memo was warm."""

from __future__ import annotations

import pytest

import spf
from spf.errors import ArityError, ParseError

TWO_ROWS = (
    "{[i,ip,k]: 0 <= i < ip < N && rowptr(i) <= k < rowptr(i+1) && rowptr(ip) <= k < rowptr(ip+1)}"
)


def test_same_text_gives_equal_objects_and_text() -> None:
    text = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"
    a, b = spf.Set(text), spf.Set(text)
    assert a == b
    assert hash(a) == hash(b)
    assert str(a) == str(b)
    assert (
        str(a)
        == "{[i, k, j] : 0 <= i && i < N && j = col(k) && k < rowptr(i + 1) && rowptr(i) <= k}"
    )


def test_declarations_are_part_of_the_parse_key() -> None:
    mono = spf.UF("rowptr", monotonic="nondecreasing")
    plain = spf.UF("rowptr")
    assert spf.Set(TWO_ROWS, ufs={"rowptr": mono}).is_empty()
    assert not spf.Set(TWO_ROWS, ufs={"rowptr": plain}).is_empty()
    assert spf.Set(TWO_ROWS, ufs={"rowptr": mono}).is_empty()
    assert not spf.Set(TWO_ROWS).is_empty()
    assert spf.Set(TWO_ROWS, ufs={"rowptr": mono}).ufs == {"rowptr": mono}
    assert spf.Set(TWO_ROWS).ufs == {}


def test_declarations_the_text_cannot_read_share_one_parse() -> None:
    """A text converted under declarations of UFs it never names is converted once (a
    wavefront's programs declare different UFs); the declarations it names, the inverses
    they declare, and names that become UFs still give other sets."""
    text = "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && f(f_inv(k)) >= 0}"
    rowptr = spf.UF("rowptr", monotonic="nondecreasing")
    f, f_inv = spf.UF("f"), spf.UF("f_inv")
    f_pair = spf.UF("f", inverse="f_inv")
    base = spf.Set(text, ufs=[rowptr, f, f_inv])
    more = spf.Set(text, ufs=[rowptr, f, f_inv, spf.UF("col"), spf.UF("diag", dtype="int64")])
    assert more._body is base._body
    assert more == base
    assert set(more.ufs) == {"rowptr", "f", "f_inv", "col", "diag"}
    # the inverse pair (declared on f only) collapses f(f_inv(k)): another set
    collapsed = spf.Set(text, ufs=[rowptr, f_pair])
    assert collapsed != base
    assert "f_inv" not in str(collapsed)
    assert "f_inv" in str(base)
    assert spf.Set(text, ufs=[rowptr, f_pair, spf.UF("col")])._body is collapsed._body
    # a tuple name that another program declares as a UF is then a call: refused here
    spf.Set("{[k]: 0 <= k < N}", ufs=[rowptr])
    with pytest.raises(spf.errors.SpfError):
        spf.Set("{[k]: 0 <= k < N}", ufs=[rowptr, spf.UF("k")])
    assert spf.Set("{[k]: 0 <= k < N}", ufs=[rowptr, spf.UF("kk")]) == spf.Set(
        "{[k]: 0 <= k < N}", ufs=[rowptr]
    )


def test_errors_are_raised_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ParseError):
            spf.Set("{[i]: i < }")
        with pytest.raises(ArityError):
            spf.Set("{[i]: f(i) < f(i, i)}")
        with pytest.raises(spf.errors.SpfError, match="expects a set"):
            spf.Set("{[i] -> [j]}")


def test_repeated_operations_give_the_same_results() -> None:
    s = spf.Set("{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
    r = spf.Relation("{[i,k] -> [ii,k]: ii = i+1}")
    first = [str(r.apply(s)), str(r.compose(r.inverse())), str(r.inverse().apply(r.apply(s)))]
    again = [str(r.apply(s)), str(r.compose(r.inverse())), str(r.inverse().apply(r.apply(s)))]
    assert first == again
    assert first[0] == "{[ii, k] : 1 <= ii && ii <= N && k < rowptr(ii) && rowptr(ii - 1) <= k}"
    assert r.inverse().apply(r.apply(s)) == s


def test_cold_start_gives_the_same_results() -> None:
    from spf.sets.memo import clear_all

    s = spf.Set("{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}")
    r = spf.Relation("{[i,k,j] -> [i0,i1,k,j]: i = 4*i0 + i1 && 0 <= i1 < 4}")
    warm = str(r.apply(s))
    clear_all()
    s2 = spf.Set("{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}")
    r2 = spf.Relation("{[i,k,j] -> [i0,i1,k,j]: i = 4*i0 + i1 && 0 <= i1 < 4}")
    assert s2 is not s
    assert s2._body is not s._body
    assert str(r2.apply(s2)) == warm
    assert r2.apply(s2) == r.apply(s)


def test_equal_operands_built_apart_share_one_result() -> None:
    """Set operations are remembered by the operands' values, not their identity: two
    texts of one set, parsed apart, give one body, and an operation on either gives one
    result, the same as from a cold start."""
    from spf.sets.memo import clear_all

    s1 = spf.Set("{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
    s2 = spf.Set("{[i,k]: rowptr(i) <= k && k < rowptr(i+1) && i >= 0 && N > i}")
    r = spf.Relation("{[i,k] -> [ii,k]: ii = i+1}")
    assert s1._body is s2._body
    assert r.apply(s1)._body is r.apply(s2)._body
    warm = [str(r.apply(s1)), str(r.inverse()), str(s1.intersect(r.domain()))]
    clear_all()
    s3 = spf.Set("{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
    r3 = spf.Relation("{[i,k] -> [ii,k]: ii = i+1}")
    assert s3._body is not s1._body
    assert [str(r3.apply(s3)), str(r3.inverse()), str(s3.intersect(r3.domain()))] == warm
