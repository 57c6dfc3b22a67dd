"""Unit tests of ``spf.ir.source``: parsing statement C, C rendering, Python execution."""

from __future__ import annotations

import math
import pickle
import shutil
import subprocess
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spf import cexpr as cx
from spf.errors import ArityError, ParseError, SpfError, UndeclaredError
from spf.ir.source import Access, ParsedSource, parse_source
from spf.ir.source.render_c import source_access
from spf.sets import Relation

if TYPE_CHECKING:
    from pathlib import Path

SPMV = {"y": 1, "A": 1, "x": 1}
CSR_UFS = {"rowptr": 1, "col": 1}


def parse(
    text: str, data: Mapping[str, int | None], ufs: Mapping[str, int] | None = None
) -> ParsedSource:
    return parse_source(text, data_spaces=data, ufs=ufs or {}, stmt="s0")


def keys(accesses: tuple[Access, ...]) -> list[tuple[str, tuple[str, ...]]]:
    return [(a.data_space, a.indices) for a in accesses]


def run(
    p: ParsedSource, env: dict[str, int], arrays: dict[str, Any], ufs: dict[str, Any] | None = None
) -> None:
    p.to_python()(env, arrays, ufs or {})


# ================================================================================ parsing
def test_spmv_accesses() -> None:
    p = parse("$y$(i) += $A$(k) * $x$(j);", SPMV)
    assert keys(p.reads) == [("y", ("i",)), ("A", ("k",)), ("x", ("j",))]
    assert keys(p.writes) == [("y", ("i",))]
    assert keys(p.reductions) == [("y", ("i",))]
    assert p.names == frozenset({"i", "k", "j"})
    assert p.uf_calls == ()
    assert p.locals == ()
    assert p.text == "$y$(i) += $A$(k) * $x$(j);"
    assert [p.text[slice(*a.span)] for a in p.reads] == ["$y$(i)", "$A$(k)", "$x$(j)"]


def test_uf_call_in_index() -> None:
    p = parse("$y$(i) += $A$(k) * $x$(col(k));", SPMV, CSR_UFS)
    assert keys(p.reads)[2] == ("x", ("col(k)",))
    assert p.uf_calls == (("col", ("k",)),)
    assert p.names == frozenset({"i", "k"})
    assert p.text[slice(*p.reads[2].span)] == "$x$(col(k))"


def test_nested_and_undeclared_ufs_in_source_order() -> None:
    p = parse("$y$(i) = $x$(perm(col(k))) + rowptr(i+1) - rowptr(i);", SPMV, CSR_UFS)
    assert keys(p.reads) == [("x", ("perm(col(k))",))]
    assert p.uf_calls == (
        ("perm", ("col(k)",)),
        ("col", ("k",)),
        ("rowptr", ("i + 1",)),
        ("rowptr", ("i",)),
    )


def test_bracket_form_equals_call_form() -> None:
    data = {"C": 2, "A": 2, "B": 2}
    a = parse("$C$[i][j] += $A$[i][k] * $B$[k][j];", data)
    b = parse("$C$(i, j) += $A$(i, k) * $B$(k, j);", data)
    assert (
        keys(a.reads) == keys(b.reads) == [("C", ("i", "j")), ("A", ("i", "k")), ("B", ("k", "j"))]
    )
    assert keys(a.writes) == keys(b.writes) == [("C", ("i", "j"))]
    assert a.text[slice(*a.reads[1].span)] == "$A$[i][k]"


def test_undelimited_forms() -> None:
    delimited = parse("$y$(i) += $A$(k) * $x$(j);", SPMV)
    plain = parse("y(i) += A(k) * x(j);", SPMV)
    assert keys(plain.reads) == keys(delimited.reads)
    assert keys(plain.writes) == keys(delimited.writes)
    assert keys(plain.reductions) == keys(delimited.reductions)
    assert plain.names == delimited.names
    brackets = parse("C[i][j] = A[i][j] + 1;", {"C": 2, "A": 2})
    assert keys(brackets.reads) == [("A", ("i", "j"))]


def test_scalar_data_space() -> None:
    for text in ("$t$ = $t$ + 1;", "t = t + 1;", "$t$() = $t$() + 1;"):
        p = parse(text, {"t": 0})
        assert keys(p.reads) == [("t", ())]
        assert keys(p.writes) == [("t", ())]
        assert keys(p.reductions) == [("t", ())]  # the spelled-out form of t += 1
        assert p.names == frozenset()


@pytest.mark.parametrize(
    "text",
    [
        "$m$ = max($m$, $x$(i));",
        "$m$ = max($x$(i), $m$);",
        "m = min(m, x(i));",
        "m = fmax(m, x(i) * 2);",
    ],
)
def test_max_min_reductions(text: str) -> None:
    p = parse(text, {"m": 0, "x": 1})
    assert keys(p.reductions) == [("m", ())]
    assert ("m", ()) in keys(p.reads)


@pytest.mark.parametrize(
    ("text", "reduced"),
    [
        ("y(i) -= x(i);", ["y"]),
        ("y(i) *= x(i); y(i) /= 2;", ["y"]),
        ("y(i)++;", ["y"]),
        ("if (x(i) > 0) y(i) += x(i);", ["y"]),
        ("y(i) += x(i); y(i) *= 2;", []),  # two kinds of operators
        ("y(i) += y(i);", []),  # the element is read in the value
        ("y(i) += x(i); x(i) = y(i);", []),  # and read elsewhere
        ("y(i) = x(i) + 1;", []),
        ("m = max(m, x(i)) + 1;", []),
    ],
)
def test_reduction_rules(text: str, reduced: list[str]) -> None:
    p = parse(text, {"y": 1, "x": 1, "m": 0})
    assert [a.data_space for a in p.reductions] == reduced


def test_locals() -> None:
    p = parse("double t = $A$(i) * 2; const int n = 3; $B$(i) = t + t + n;", {"A": 1, "B": 1})
    assert p.locals == (("t", "double"), ("n", "const int"))
    assert p.names == frozenset({"i"})
    assert keys(p.reads) == [("A", ("i",))]
    assert keys(p.writes) == [("B", ("i",))]
    A = np.array([1.5, -2.0])
    B = np.zeros(2)
    for i in range(2):
        run(p, {"i": i}, {"A": A, "B": B})
    np.testing.assert_array_equal(B, 4 * A + 3)


def test_if_else() -> None:
    text = "if ($x$(i) > 0) { $y$(i) = $x$(i); } else if ($x$(i) < -1) $y$(i) = -1; else { $y$(i) = 0; }"
    p = parse(text, {"x": 1, "y": 1})
    assert keys(p.reads) == [("x", ("i",))]
    assert keys(p.writes) == [("y", ("i",))]
    x = np.array([2.0, -0.5, -3.0, 0.0])
    y = np.full(4, 7.0)
    for i in range(4):
        run(p, {"i": i}, {"x": x, "y": y})
    np.testing.assert_array_equal(y, np.where(x > 0, x, np.where(x < -1, -1.0, 0.0)))


JACOBI = (
    "$B$(i, j) = 0.2 * ($A$(i, j) + $A$(i - 1, j) + $A$(i + 1, j) + $A$(i, j - 1) + $A$(i, j + 1));"
)


def test_jacobi_stencil() -> None:
    p = parse(JACOBI, {"A": 2, "B": 2})
    assert keys(p.reads) == [
        ("A", ("i", "j")),
        ("A", ("i - 1", "j")),
        ("A", ("i + 1", "j")),
        ("A", ("i", "j - 1")),
        ("A", ("i", "j + 1")),
    ]
    assert keys(p.writes) == [("B", ("i", "j"))]
    assert p.reductions == ()
    rng = np.random.default_rng(0)
    n = 6
    A = rng.random((n, n))
    B = np.zeros((n, n))
    fn = p.to_python()
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            fn({"i": i, "j": j, "N": n}, {"A": A, "B": B}, {})
    expect = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
    np.testing.assert_allclose(B[1:-1, 1:-1], expect, rtol=1e-15)


def test_duplicate_reads_are_merged() -> None:
    p = parse("$y$(i) = $x$(i) * $x$(i) + $x$(i+1);", {"x": 1, "y": 1})
    assert keys(p.reads) == [("x", ("i",)), ("x", ("i + 1",))]
    assert p.reads[0].span == (9, 15)


@pytest.mark.parametrize(
    ("index", "text"),
    [
        ("i+1", "i + 1"),
        ("2*i", "2*i"),
        ("2 * (i + 1)", "2*(i + 1)"),
        ("floor(i/2)", "floor(i/2)"),
        ("floor((i + 1) / 2)", "floor((i + 1)/2)"),
        ("ceil(i/3)", "ceil(i/3)"),
        ("i / 2", "floor(i/2)"),
        ("i % 2", "i % 2"),
        ("min(i+1, N-1)", "min(i + 1, N - 1)"),
        ("max(0, i - 1)", "max(0, i - 1)"),
        ("-i + N", "-i + N"),
        ("i - (j - 1)", "i - (j - 1)"),
        ("rowptr(i + 1) - 1", "rowptr(i + 1) - 1"),
        ("0x10", "16"),
    ],
)
def test_index_text(index: str, text: str) -> None:
    p = parse(f"$y$(0) = $x$({index});", {"x": 1, "y": 1}, CSR_UFS)
    assert keys(p.reads) == [("x", (text,))]


def test_index_texts_are_set_syntax() -> None:
    """The reported index texts parse as spf relations (min/max are split by the access layer)."""
    for index in ("i + 1", "2*i", "floor((i + 1)/2)", "i % 2", "rowptr(i + 1) - 1", "ceil(i/3)"):
        Relation(f"{{[i] -> [{index}]}}")


def test_forward_solve_statements() -> None:
    data = {"u": 1, "f": 1, "L": 1}
    s0 = parse("$u$(i) = $f$(i);", data, CSR_UFS)
    s1 = parse("$u$(i) -= $L$(k) * $u$(col(k));", data, CSR_UFS)
    s2 = parse("$u$(i) /= $L$(rowptr(i + 1) - 1);", data, CSR_UFS)
    assert keys(s0.reads) == [("f", ("i",))]
    assert keys(s1.reads) == [("u", ("i",)), ("L", ("k",)), ("u", ("col(k)",))]
    assert keys(s1.reductions) == [("u", ("i",))]
    assert keys(s2.reads) == [("u", ("i",)), ("L", ("rowptr(i + 1) - 1",))]
    assert s2.uf_calls == (("rowptr", ("i + 1",)),)
    # run the solve on a small lower-triangular CSR matrix (diagonal last in each row)
    dense = np.array([[2.0, 0, 0], [1.0, 4.0, 0], [0, -1.0, 5.0]])
    rowptr = np.array([0, 1, 3, 5], dtype=np.int32)
    col = np.array([0, 0, 1, 1, 2], dtype=np.int32)
    L = np.array([2.0, 1.0, 4.0, -1.0, 5.0])
    f = np.array([2.0, 5.0, 9.0])
    u = np.zeros(3)
    arrays = {"u": u, "f": f, "L": L}
    ufs = {"rowptr": rowptr, "col": col}
    r0, r1, r2 = s0.to_python(), s1.to_python(), s2.to_python()
    for i in range(3):
        r0({"i": i}, arrays, ufs)
        for k in range(int(rowptr[i]), int(rowptr[i + 1]) - 1):
            r1({"i": i, "k": k}, arrays, ufs)
        r2({"i": i}, arrays, ufs)
    np.testing.assert_allclose(u, np.linalg.solve(dense, f))


def test_comments_and_whitespace() -> None:
    p = parse("/* scale */ $y$(i) =\n\t2.0 * $x$(i); // done", {"x": 1, "y": 1})
    assert keys(p.reads) == [("x", ("i",))]
    assert p.text[slice(*p.reads[0].span)] == "$x$(i)"


def test_unknown_rank_is_taken_from_use() -> None:
    p = parse("$y$(i) = $P$(i, j);", {"y": 1, "P": None})
    assert keys(p.reads) == [("P", ("i", "j"))]
    with pytest.raises(ArityError, match="'P'"):
        parse("$y$(i) = $P$(i, j) + $P$(i);", {"y": 1, "P": None})


def test_values_may_use_math_casts_ternary_and_literals() -> None:
    text = (
        "$y$(i) = sqrt(fabs($x$(i))) + pow($x$(i), 2) + fmin(1e-3, 2.0f) + (int) $x$(i)"
        " + ($x$(i) > 0 ? 1 : -1) + min(i, N) + floor($x$(i) / 3) + INFINITY * 0.0;"
    )
    p = parse(text, {"x": 1, "y": 1})
    assert p.names == frozenset({"i", "N"})


# ================================================================================= errors
def test_malformed_c_has_caret() -> None:
    with pytest.raises(ParseError) as err:
        parse("$y$(i) = $x$(i) +;", SPMV)
    assert err.value.span is not None
    assert err.value.text == "$y$(i) = $x$(i) +;"
    assert "s0" in str(err.value)
    assert "\n" in str(err.value)
    assert "^" in str(err.value)


def test_missing_semicolon() -> None:
    with pytest.raises(ParseError, match="missing ';'") as err:
        parse("$y$(i) = 1", SPMV)
    assert err.value.span == (10, 11)


def test_unexpected_token_position() -> None:
    with pytest.raises(ParseError, match="unexpected") as err:
        parse("$y$(i) = 1\n$x$(i) = 2;", SPMV)
    assert err.value.span is not None
    assert err.value.span[0] == 11  # the '$' of $x$ on the second line


@pytest.mark.parametrize(
    ("text", "span"),
    [("$y$(i) = $3$;", (9, 12)), ("$y$(i) = $x(i);", (9, 10)), ("$y$(i) = x$;", (10, 11))],
)
def test_bad_delimiters(text: str, span: tuple[int, int]) -> None:
    with pytest.raises(ParseError) as err:
        parse(text, SPMV)
    assert err.value.span == span
    assert "$" in err.value.message


def test_unbalanced_brackets() -> None:
    with pytest.raises(ParseError, match="never closed"):
        parse("$y$(i) = ($x$(i);", SPMV)
    with pytest.raises(ParseError, match=r"unmatched '\)'"):
        parse("$y$(i) = $x$(i));", SPMV)
    with pytest.raises(ParseError, match=r"unmatched '}'"):
        parse("$y$(i) = 1; } void g(void) {", SPMV)


def test_undeclared_data_space() -> None:
    with pytest.raises(UndeclaredError, match="'B'") as err:
        parse("$y$(i) = $B$(i);", SPMV)
    assert err.value.kind == "data space"
    assert err.value.known == ("A", "x", "y")
    assert "s0" in str(err.value)
    with pytest.raises(UndeclaredError, match="is a UF"):
        parse("$y$(i) = $col$(k);", SPMV, CSR_UFS)
    with pytest.raises(UndeclaredError, match="'z'"):
        parse("$y$(i) = z[i];", SPMV)


def test_data_space_arity() -> None:
    with pytest.raises(ArityError, match=r"'y' has rank 1 but is accessed with 2") as err:
        parse("$y$(i, j) = 1;", SPMV)
    assert "s0" in str(err.value)
    with pytest.raises(ArityError, match="'A' has rank 2"):
        parse("$y$(i) = $A$[i];", {"y": 1, "A": 2})
    with pytest.raises(ArityError, match="'x' has rank 1 but is accessed with 0"):
        parse("$y$(i) = $x$;", SPMV)


def test_write_to_uf() -> None:
    with pytest.raises(SpfError, match="cannot write to UF 'rowptr'") as err:
        parse("rowptr(i) = 3;", SPMV, CSR_UFS)
    assert "s0" in str(err.value)


def test_uf_arity() -> None:
    with pytest.raises(ArityError, match="UF 'col' takes 1 argument"):
        parse("$y$(i) = $x$(col(i, j));", SPMV, CSR_UFS)
    with pytest.raises(ArityError, match="'rowptr'"):
        parse("$y$(i) = rowptr;", SPMV, CSR_UFS)
    with pytest.raises(ArityError, match="'pow' takes 2"):
        parse("$y$(i) = pow($x$(i));", SPMV)


@pytest.mark.parametrize(
    ("text", "offender"),
    [
        ("$y$(i) = $x$(i*j);", "i*j"),
        ("$y$(i) = $x$(N * i);", "N * i"),
        ("$y$(i) = $x$(i / N);", "i / N"),
        ("$y$(i) = $x$(i % 0);", "i % 0"),
        ("$y$(i) = $x$($A$(i));", "$A$(i)"),
        ("$y$(i) = $x$(A[i]);", "A[i]"),
        ("double t = 1; $y$(i) = $x$(t);", "t"),
        ("$y$(i) = $x$(sqrt(i));", "sqrt(i)"),
        ("$y$(i) = $x$(i > 0 ? i : 0);", "i > 0 ? i : 0"),
        ("$y$(i) = $x$(1.5);", "1.5"),
        ("$y$(i) = sqr($x$(i));", "$x$(i)"),
    ],
)
def test_non_affine_index(text: str, offender: str) -> None:
    with pytest.raises(ParseError) as err:
        parse(text, {"y": 1, "x": 1, "A": 1})
    assert err.value.span is not None
    shown = text[slice(*err.value.span)]
    assert offender in shown or shown in offender


@pytest.mark.parametrize(
    "text", ["$y$(i) = $A$[i](j);", "$y$(i) = $A$(i)[j];", "$y$(i) = $A$(i)(j);", "$y$(i)[0] = 1;"]
)
def test_mixed_access_forms(text: str) -> None:
    with pytest.raises(ParseError, match="malformed access"):
        parse(text, {"y": 1, "A": 2})


def test_local_named_like_data_space() -> None:
    with pytest.raises(SpfError, match="local 'y' has the name of a data space"):
        parse("double y = 1; $x$(i) = y;", SPMV)
    with pytest.raises(SpfError, match="local 'col' has the name of a UF"):
        parse("int col = 1;", SPMV, CSR_UFS)


@pytest.mark.parametrize(
    "text",
    [
        "for (int q = 0; q < 3; q++) $y$(i) += 1;",
        "while (1) { $y$(i) = 2; }",
        "do { $y$(i) = 2; } while (0);",
        "$y$(i) = 1; return;",
        "goto done; done: $y$(i) = 1;",
        "switch (i) { case 0: $y$(i) = 1; }",
        "if (i) { for (;;) {} }",
        "void f(void) { $y$(i) = 1; }",
        "int f(int a) { return a; }",
    ],
)
def test_not_a_basic_block(text: str) -> None:
    with pytest.raises(ParseError, match="a statement is one basic block: no loops/returns"):
        parse(text, SPMV)


@pytest.mark.parametrize(
    ("text", "error", "pattern"),
    [
        ("i = 3;", SpfError, "cannot assign to 'i'"),
        ('$y$(i) = "s";', ParseError, "string literals"),
        ("$y$(i) = $x$(i) + (t = 3);", ParseError, "assignment inside an expression"),
        ("$y$(i) = 1, $x$(i) = 2;", ParseError, "comma operator"),
        ("$y$(i) = &i;", ParseError, "no pointers"),
        ("foo(i);", ParseError, "no effect"),
        ("double *p;", ParseError, "arithmetic type"),
        ("double t[3];", ParseError, "arithmetic type"),
        ("double t = 1; double t = 2;", SpfError, "declared twice"),
        ("{ double u = 1; } $y$(i) = u;", ParseError, "outside the block"),
        ("$y$(i) = u; double u = 2;", SpfError, "before its declaration"),
        ("double __spf_x = 1;", ParseError, "reserved"),
        ("$y$(i) = 1; /* open", ParseError, "unterminated comment"),
        ("#pragma omp simd\n$y$(i) = 1;", ParseError, "preprocessor"),
        ("$y$(i) = $x$(i)++;", ParseError, r"\+\+/--"),
        ("double sqrt = 2;", SpfError, "hides a C function"),
        # the HLS and CUDA targets compile statements as C++, where these are no names
        ("double new = 2; $y$(i) = new;", SpfError, "local 'new' is a C\\+\\+ keyword"),
        ("double true = 2; $y$(i) = true;", SpfError, "local 'true' is a C keyword"),
        ("double M_PI = 2; $y$(i) = M_PI;", SpfError, "local 'M_PI' is a macro of the C head"),
        ("double HUGE_VAL = 2;", SpfError, "local 'HUGE_VAL' is a macro of the C headers"),
        ("N(i) = 1;", UndeclaredError, "'N'"),
    ],
)
def test_other_errors(text: str, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern) as err:
        parse(text, SPMV)
    assert "s0" in str(err.value)


def test_source_must_be_text() -> None:
    with pytest.raises(SpfError, match="must be C text"):
        parse_source(3, data_spaces={}, ufs={})  # type: ignore[arg-type]


# ============================================================================== render_c
def macro_access(name: str, idx: tuple[cx.Expr, ...]) -> cx.Expr:
    return cx.Access(name, idx, f"ds_{name}")


def macro_uf(name: str, args: tuple[cx.Expr, ...]) -> cx.Expr:
    return cx.Call(f"uf_{name}", args)


def test_render_c_spmv() -> None:
    p = parse("$y$(i) += $A$(k) * $x$(col(k));", SPMV, CSR_UFS)
    assert p.render_c(macro_access, macro_uf) == "ds_y(i) += ds_A(k) * ds_x(uf_col(k));"
    renamed = p.render_c(macro_access, macro_uf, rename={"i": "c1", "k": "c3"})
    assert renamed == "ds_y(c1) += ds_A(c3) * ds_x(uf_col(c3));"


def test_render_c_layout() -> None:
    text = "double t = $x$(i) * 2; if (t > 1) { $y$(i) = t; } else $y$(i) = -t;"
    p = parse(text, SPMV)
    rendered = p.render_c(macro_access, macro_uf, rename={"t": "s0_t"})
    assert rendered.splitlines() == [
        "double s0_t = ds_x(i) * 2;",
        "if (s0_t > 1)",
        "{",
        "  ds_y(i) = s0_t;",
        "}",
        "else",
        "{",
        "  ds_y(i) = -s0_t;",
        "}",
    ]


def test_render_c_keeps_precedence() -> None:
    p = parse("$y$(i) = ($x$(i) + 1) * -(-$x$(i)) - ($x$(i) - 2) / (i % 3);", SPMV)
    assert p.render_c(macro_access, macro_uf) == (
        "ds_y(i) = (ds_x(i) + 1) * -(-ds_x(i)) - (ds_x(i) - 2) / (i % 3);"
    )


def test_render_c_parenthesizes_callback_trees_by_precedence() -> None:
    p = parse("$y$(i) = 2 * $t$ + $t$;", {"y": 1, "t": 0})

    def access(n: str, ix: tuple[cx.Expr, ...]) -> cx.Expr:
        if ix:
            return cx.Index(cx.Name(n), ix[0])
        return cx.Binary("+", cx.Name("base"), cx.Name("off"))

    assert p.render_c(access, macro_uf) == "y[i] = 2 * (base + off) + (base + off);"


GCC_CASES: list[tuple[str, dict[str, int]]] = [
    ("$y$(i) += $A$(k) * $x$(col(k));", SPMV),
    (JACOBI, {"A": 2, "B": 2}),
    ("$m$ = max($m$, fabs($x$(i)));", {"m": 0, "x": 1}),
    ("$t$ = $t$ + 1;", {"t": 0}),
    ("$u$(i) /= $L$(rowptr(i + 1) - 1);", {"u": 1, "L": 1}),
    (
        "double t = $x$(i) * 2; int n = (int) t; if (t > 1 && n % 2 == 0 || t < -1) { $y$(i) = t; } else $y$(i) = -t;",
        SPMV,
    ),
    (
        "$y$(i) = $x$(min(i + 1, N - 1)) + $x$(max(i - 1, 0)) + $x$(floor((i - 3)/2) + 2) + $x$(ceil(i/2)) + $x$(i % 2);",
        SPMV,
    ),
    (
        "$y$(i) = ($x$(i) > 0 ? sqrt($x$(i)) : pow($x$(i), 2)) + (double) i / 2 + 1e-3 + 2.0f + labs(i - 3) + (i & 1) + (i << 2 + 1);",
        SPMV,
    ),
    ("$y$(i)++; --$y$(i); $y$(i) *= !(i > 2) + ~i;", SPMV),
]


def compile_c(p: ParsedSource, data: Mapping[str, int], ufs: Mapping[str, int], tmp: Path) -> None:
    lines = [
        "#include <math.h>",
        "#include <stdint.h>",
        "#include <stdlib.h>",
        "#define min(a, b) ((a) < (b) ? (a) : (b))",
        "#define max(a, b) ((a) > (b) ? (a) : (b))",
    ]
    params = [f"int64_t {n}" for n in sorted(p.names)]
    for name, rank in data.items():
        dims = [f"t{k}" for k in range(rank)]
        flat = " + ".join(f"({d}) * {16 ** (rank - 1 - k)}" for k, d in enumerate(dims)) or "0"
        lines.append(f"#define ds_{name}({', '.join(dims)}) {name}[{flat}]")
        params.append(f"double *restrict {name}")
    for name, arity in ufs.items():
        dims = [f"t{k}" for k in range(arity)]
        lines.append(f"#define uf_{name}({', '.join(dims)}) {name}[{dims[0]}]")
        params.append(f"const int32_t *restrict {name}")
    body = p.render_c(macro_access, macro_uf)
    voids = "".join(f"  (void) {prm.split()[-1]};\n" for prm in params)
    lines.append(f"void stmt({', '.join(params)})\n{{\n{voids}{body}\n}}")
    path = tmp / "stmt.c"
    path.write_text("\n".join(lines) + "\n")
    cmd = [
        "gcc",
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-c",
        str(path),
        "-o",
        str(tmp / "stmt.o"),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{path.read_text()}\n{result.stderr}"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize(("text", "data"), GCC_CASES)
def test_render_c_compiles(text: str, data: dict[str, int], tmp_path: Path) -> None:
    p = parse(text, data, CSR_UFS)
    compile_c(p, data, {name: 1 for name, _ in p.uf_calls}, tmp_path)


# ============================================================================= to_python
def test_spmv_csr_executes() -> None:
    rng = np.random.default_rng(1)
    dense = rng.random((5, 4)) * (rng.random((5, 4)) < 0.5)
    rows, cols = np.nonzero(dense)
    rowptr = np.searchsorted(rows, np.arange(6)).astype(np.int32)
    col = cols.astype(np.int32)
    A = dense[rows, cols]
    x = rng.random(4)
    y = np.zeros(5)
    p = parse("$y$(i) += $A$(k) * $x$(col(k));", SPMV, CSR_UFS)
    fn = p.to_python()
    for i in range(5):
        for k in range(int(rowptr[i]), int(rowptr[i + 1])):
            fn({"i": i, "k": k}, {"y": y, "A": A, "x": x}, {"col": col, "rowptr": rowptr})
    np.testing.assert_allclose(y, dense @ x)


def test_scalar_and_max_reduction_execute() -> None:
    x = np.array([3.0, -7.0, 5.5, 1.0])
    t = np.zeros((), dtype=np.int64)
    m = np.array(-np.inf)
    inc = parse("$t$ = $t$ + 1;", {"t": 0}).to_python()
    mx = parse("$m$ = max($m$, fabs($x$(i)));", {"m": 0, "x": 1}).to_python()
    for i in range(4):
        inc({}, {"t": t}, {})
        mx({"i": i}, {"m": m, "x": x}, {})
    assert t[()] == 4
    assert m[()] == 7.0


def test_c_integer_division_and_remainder() -> None:
    p = parse(
        "$q$(i) = $a$(i) / $b$(i); $r$(i) = $a$(i) % $b$(i); $d$(i) = $a$(i) / 2.0;",
        {"a": 1, "b": 1, "q": 1, "r": 1, "d": 1},
    )
    a = np.array([-7, 7, -7, 7, 0], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3], dtype=np.int32)
    q = np.zeros(5, dtype=np.int32)
    r = np.zeros(5, dtype=np.int64)
    d = np.zeros(5)
    for i in range(5):
        run(p, {"i": i}, {"a": a, "b": b, "q": q, "r": r, "d": d})
    np.testing.assert_array_equal(q, [-3, 3, 3, -3, 0])  # truncation toward zero
    np.testing.assert_array_equal(r, [-1, 1, -1, 1, 0])  # sign of the dividend
    np.testing.assert_array_equal(d, a / 2.0)
    with pytest.raises(SpfError, match="division by zero"):
        run(parse("$q$(i) = $a$(i) / 0;", {"a": 1, "q": 1}), {"i": 0}, {"a": a, "q": q})


def test_float_division_by_zero_is_ieee() -> None:
    y = np.zeros(3)
    x = np.array([1.0, -1.0, 0.0])
    p = parse("$y$(i) = $x$(i) / 0.0;", SPMV)
    for i in range(3):
        run(p, {"i": i}, {"x": x, "y": y})
    assert y[0] == math.inf
    assert y[1] == -math.inf
    assert math.isnan(y[2])


def test_index_division_semantics() -> None:
    """``floor(e/c)`` in an index is the mathematical floor; C's ``e / c`` truncates."""
    x = np.arange(5.0)
    y = np.zeros(1)
    run(parse("$y$(0) = $x$(floor((i - 3)/2) + 2);", SPMV), {"i": 0}, {"x": x, "y": y})
    assert y[0] == 0.0  # floor(-1.5) = -2
    run(parse("$y$(0) = $x$((i - 3)/2 + 2);", SPMV), {"i": 0}, {"x": x, "y": y})
    assert y[0] == 1.0  # -3/2 = -1 in C
    run(parse("$y$(0) = $x$(ceil((i + 1)/2));", SPMV), {"i": 2}, {"x": x, "y": y})
    assert y[0] == 2.0
    run(
        parse("$y$(0) = $x$(min(i + 1, N - 1)) + $x$(i % 2);", SPMV),
        {"i": 4, "N": 5},
        {"x": x, "y": y},
    )
    assert y[0] == 4.0


def test_casts_locals_and_stores_convert_like_c() -> None:
    text = "int t = $x$(i); double h = (double) 7 / 2; $n$(i) = $x$(i) * 3; $y$(i) = t + h + (int) -2.7 + (float) 0.1;"
    p = parse(text, {"x": 1, "y": 1, "n": 1})
    x = np.array([-3.7, 2.9])
    y = np.zeros(2)
    n = np.zeros(2, dtype=np.int32)
    for i in range(2):
        run(p, {"i": i}, {"x": x, "y": y, "n": n})
    f32 = float(np.float32(0.1))
    np.testing.assert_array_equal(y, [-3 + 3.5 - 2 + f32, 2 + 3.5 - 2 + f32])
    np.testing.assert_array_equal(n, [-11, 8])  # stored with truncation, as C converts


def test_logic_ternary_and_math_execute() -> None:
    text = (
        "$y$(i) = ($x$(i) > 0 && $x$(i) < 2 || i == 3) + ($x$(i) >= 0 ? sqrt($x$(i)) : -1)"
        " + fmin($x$(i), 0.5) + pow(2, 3) + floor($x$(i)) + !i + abs(i - 5) + (i << 1) + 1e-3;"
    )
    p = parse(text, SPMV)
    x = np.array([1.0, -2.0, 4.0, 9.0])
    y = np.zeros(4)
    for i in range(4):
        run(p, {"i": i}, {"x": x, "y": y})
    for i, v in enumerate(x):
        logic = int((0 < v < 2) or i == 3)
        expect = logic + (math.sqrt(v) if v >= 0 else -1) + min(v, 0.5) + 8.0 + math.floor(v)
        expect += int(not i) + abs(i - 5) + (i << 1) + 1e-3
        assert y[i] == pytest.approx(expect, rel=1e-15)


def test_conditional_and_min_max_use_the_common_type() -> None:
    y = np.zeros(2)
    p = parse("$y$(i) = (i > 0 ? 1 : 2.5) / 2 + max(i, 0.5) / 2;", SPMV)
    for i in range(2):
        run(p, {"i": i}, {"y": y})
    np.testing.assert_array_equal(y, [2.5 / 2 + 0.25, 0.5 + 0.5])


def test_invalid_operations_raise_spf_error() -> None:
    p = parse("$y$(i) = ~$x$(i);", SPMV)
    with pytest.raises(SpfError, match="s0: cannot evaluate"):
        run(p, {"i": 0}, {"x": np.ones(1), "y": np.zeros(1)})


def test_math_domain_errors_give_c_results() -> None:
    y = np.zeros(3)
    p = parse("$y$(0) = sqrt(-1.0); $y$(1) = log(0.0); $y$(2) = pow(-36, 4064);", SPMV)
    run(p, {}, {"y": y})
    assert math.isnan(y[0])
    assert y[1] == -math.inf
    assert y[2] == math.inf


def test_float_to_int_out_of_range_raises() -> None:
    p = parse("long q = (long) exp(1000.0); $y$(0) = q;", SPMV)
    with pytest.raises(SpfError, match="cannot convert inf"):
        run(p, {}, {"y": np.zeros(1)})


@pytest.mark.parametrize(("i", "shown"), [(4, "x(4)"), (-1, "x(-1)")])
def test_out_of_range_raises(i: int, shown: str) -> None:
    p = parse("$y$(0) = $x$(i);", SPMV)
    with pytest.raises(SpfError, match="out of range") as err:
        run(p, {"i": i}, {"x": np.zeros(4), "y": np.zeros(1)})
    assert "'x'" in str(err.value)
    assert shown in str(err.value)


def test_negative_write_index_does_not_wrap() -> None:
    y = np.zeros(3)
    with pytest.raises(SpfError, match=r"y\(-1\)"):
        run(parse("$y$(i - 1) = 1;", SPMV), {"i": 0}, {"y": y})
    assert not y.any()


def test_uf_out_of_range_raises() -> None:
    p = parse("$y$(0) = $x$(col(k));", SPMV, CSR_UFS)
    with pytest.raises(SpfError, match="UF 'col'"):
        run(p, {"k": 3}, {"x": np.zeros(4), "y": np.zeros(1)}, {"col": np.zeros(3, dtype=np.int32)})


def test_missing_values_raise() -> None:
    p = parse("$y$(i) = $x$(i);", SPMV)
    with pytest.raises(SpfError, match="iterator or parameter 'i'"):
        run(p, {}, {"x": np.zeros(1), "y": np.zeros(1)})
    with pytest.raises(SpfError, match="data space 'x'"):
        run(p, {"i": 0}, {"y": np.zeros(1)})


def test_pickle_round_trip() -> None:
    p = parse("double t = $x$(col(k)); if (t > 0) $y$(i) += t;", SPMV, CSR_UFS)
    q = pickle.loads(pickle.dumps(p))
    assert q == p
    assert q.render_c(macro_access, macro_uf) == p.render_c(macro_access, macro_uf)
    assert hash(q) == hash(p)


def test_to_python_is_cached() -> None:
    p = parse("$y$(i) = $x$(i);", SPMV)
    assert p.to_python() is p.to_python()
    assert parse("$y$(i) = $x$(i);", SPMV).to_python() is p.to_python()


# ============================================================================ hypothesis
Tree = tuple[Any, ...]

_leaf = st.one_of(
    st.just(("a",)),
    st.just(("b",)),
    st.floats(-100, 100, allow_nan=False).map(lambda v: ("num", v)),
)


def _extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    divisor = st.floats(0.5, 50).flatmap(lambda v: st.sampled_from([("num", v), ("num", -v)]))
    return st.one_of(
        st.tuples(st.sampled_from(["+", "-", "*"]), children, children),
        st.tuples(st.just("/"), children, divisor),
        st.tuples(st.just("neg"), children),
        st.tuples(st.sampled_from(["fabs", "max", "min"]), children, children).map(
            lambda t: t if t[0] != "fabs" else t[:2]
        ),
    )


trees = st.recursive(_leaf, _extend, max_leaves=12)
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2}


def to_c(t: Tree) -> tuple[str, int]:
    """Minimal-parenthesis C text (precedence 3: atoms and unary)."""
    kind = t[0]
    if kind in ("a", "b"):
        return f"${kind}$(i)", 3
    if kind == "num":
        text = repr(abs(t[1]))
        return (f"(-{text})" if math.copysign(1, t[1]) < 0 else text), 3
    if kind == "neg":
        inner, prec = to_c(t[1])
        return f"-{inner if prec >= 3 and not inner.startswith('-') else f'({inner})'}", 3
    if kind in ("fabs", "max", "min"):
        return f"{kind}({', '.join(to_c(c)[0] for c in t[1:])})", 3
    p = _PREC[kind]
    left, lp = to_c(t[1])
    right, rp = to_c(t[2])
    left = left if lp >= p else f"({left})"
    right = right if rp > p else f"({right})"
    return f"{left} {kind} {right}", p


def evaluate(t: Tree, a: float, b: float) -> float:
    ops: dict[str, Callable[[float, float], float]] = {
        "+": lambda x, y: x + y,
        "-": lambda x, y: x - y,
        "*": lambda x, y: x * y,
        "/": lambda x, y: x / y,
        "max": lambda x, y: x if x > y else y,
        "min": lambda x, y: x if x < y else y,
    }
    kind = t[0]
    if kind == "a":
        return a
    if kind == "b":
        return b
    if kind == "num":
        return float(t[1])
    if kind == "neg":
        return -evaluate(t[1], a, b)
    if kind == "fabs":
        return abs(evaluate(t[1], a, b))
    return ops[kind](evaluate(t[1], a, b), evaluate(t[2], a, b))


@given(
    trees,
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=2),
    st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=2),
)
def test_random_expressions_execute_like_python(tree: Tree, a: list[float], b: list[float]) -> None:
    source = f"$out$(i) = {to_c(tree)[0]};"
    data = {"a": 1, "b": 1, "out": 1}
    p = parse(source, data)
    arrays = {"a": np.array(a), "b": np.array(b), "out": np.zeros(2)}
    fn = p.to_python()
    for i in range(2):
        fn({"i": i}, arrays, {})
        assert arrays["out"][i] == evaluate(tree, a[i], b[i]), source
    # and the C rendering, read back with $..$ accesses, computes the same
    again = parse(p.render_c(source_access, macro_uf), data)
    out2 = np.zeros(2)
    for i in range(2):
        again.to_python()({"i": i}, {**arrays, "out": out2}, {})
    np.testing.assert_array_equal(out2, arrays["out"])
