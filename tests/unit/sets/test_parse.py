"""Unit tests of the set/relation text parser (``spf.sets.parse``)."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from lark import Lark

from spf.errors import ParseError, SpfError
from spf.sets import syntax
from spf.sets.parse import _GRAMMAR, MAX_DEPTH, caret_error, parse_document

SPMV = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}"


# ----------------------------------------------------------------------------- helpers
def shape(node: object) -> object:
    """The tree without spans: ``("Compare", "<", ("Name", "i"), ("Num", 3))`` and so on."""
    if isinstance(node, tuple):
        return tuple(shape(item) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        values = (
            shape(getattr(node, field.name))
            for field in dataclasses.fields(node)
            if "span" not in field.name
            and field.name != "text"
            and not (field.name == "component" and getattr(node, field.name) is None)
        )
        return (type(node).__name__, *values)
    return node


def part(tree: object, index: int) -> object:
    """Item ``index`` of a shape tuple."""
    assert isinstance(tree, tuple)
    return tree[index]


def kind(tree: object) -> object:
    """The node kind a shape tuple starts with (``"Compare"``, ``"Or"``, ...)."""
    return part(tree, 0)


def piece(text: str) -> syntax.Piece:
    """The only piece of ``text``."""
    document = parse_document(text)
    assert len(document.pieces) == 1
    return document.pieces[0]


def formula(text: str) -> syntax.Formula:
    """The formula of the only piece of ``text``."""
    result = piece(text).formula
    assert result is not None
    return result


def formula_shape(body: str) -> object:
    """The shape of ``{[i]: body}``'s formula."""
    return shape(formula("{[i]: " + body + "}"))


def expr_shape(expression: str) -> object:
    """The shape of ``expression`` parsed as the single tuple entry of ``{[expression]}``."""
    (entry,) = piece("{[" + expression + "]}").in_tuple
    return shape(entry)


def at(text: str, span: tuple[int, int]) -> str:
    """The text a span covers."""
    return text[span[0] : span[1]]


def parse_error(text: str) -> ParseError:
    """The ParseError that parsing ``text`` raises."""
    with pytest.raises(ParseError) as info:
        parse_document(text)
    return info.value


def caret_column(error: ParseError) -> int:
    """Column of the first caret in the rendered error (the quoted line is indented by 2)."""
    lines = str(error).splitlines()
    return lines[-1].index("^") - 2


def N(name: str) -> tuple[str, str]:
    return ("Name", name)


def C(value: int) -> tuple[str, int]:
    return ("Num", value)


def cmp(op: str, left: object, right: object) -> tuple[object, ...]:
    return ("Compare", op, left, right)


def binop(op: str, left: object, right: object) -> tuple[object, ...]:
    return ("BinOp", op, left, right)


# ----------------------------------------------------------------------------- valid texts
VALID = [
    SPMV,
    "{[i,k,j] -> [0,i,0,k,0,j,0]}",
    "{[i] -> [i + 1]}",
    "{[]}",
    "{[i]->[]}",
    "{[]: 0 < N}",
    "[N] -> {[i]: 0 <= i < N}",
    "{[i,k] -> [ii,k]: ii = i+1}",
    "{[i]: 0 <= i < N and i != 3 or i = 7}",
    "{[i]: 0 <= i < N} union {[i]: i = 100}",
    "{[i]: 2i + 3*i >= 4 && floor(i/4) = 2 && i % 3 = 1 && ceil(i/2) < 9}",
    "{[i]: exists(a, b: i = 2a + 3b && a >= 0)}",
    "{[i]: exists a : i = 2a}",
    "{[i]: 0 <= i && exists(a: i = 4a)}",
    "{[k,p]: 0 <= k < NNZ && p = perm(col(k)) && f(i, j+1, 2) > 0}",
    "{[i]: (0 <= i && i < N) || (i > 10)}",
    "{[i]: (i+1)*2 <= N}",
    "{[i]: true}",
    "{[i]: false}",
    "[] -> {[i]}",
    " \n\t{ [ i ] -> [ i ] : i >= 0 }\n ",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_texts_parse(text: str) -> None:
    document = parse_document(text)
    assert isinstance(document, syntax.Document)
    assert document.text == text
    assert document.pieces


def test_spmv_domain_shape() -> None:
    i, k, j = N("i"), N("k"), N("j")
    row_i = ("Call", "rowptr", (i,))
    row_i1 = ("Call", "rowptr", (binop("+", i, C(1)),))
    assert shape(formula(SPMV)) == (
        "And",
        (
            ("And", (cmp("<=", C(0), i), cmp("<", i, N("N")))),
            ("And", (cmp("<=", row_i, k), cmp("<", k, row_i1))),
            cmp("=", j, ("Call", "col", (k,))),
        ),
    )
    assert shape(piece(SPMV).in_tuple) == (i, k, j)


def test_spmv_domain_spans() -> None:
    p = piece(SPMV)
    assert p.span == (0, len(SPMV))
    assert at(SPMV, p.in_span) == "[i,k,j]"
    assert p.out_span is None
    assert p.out_tuple is None
    assert p.params is None
    top = p.formula
    assert isinstance(top, syntax.And)
    assert at(SPMV, top.span) == SPMV[10:-1]
    chain = top.items[1]
    assert isinstance(chain, syntax.And)
    assert at(SPMV, chain.span) == "rowptr(i) <= k < rowptr(i+1)"
    first, second = chain.items
    assert isinstance(first, syntax.Compare)
    assert isinstance(second, syntax.Compare)
    assert at(SPMV, first.span) == "rowptr(i) <= k"
    assert at(SPMV, second.span) == "k < rowptr(i+1)"
    call = second.right
    assert isinstance(call, syntax.Call)
    assert at(SPMV, call.span) == "rowptr(i+1)"
    assert at(SPMV, call.name_span) == "rowptr"
    (arg,) = call.args
    assert isinstance(arg, syntax.BinOp)
    assert at(SPMV, arg.span) == "i+1"
    assert at(SPMV, arg.op_span) == "+"


def test_relation_tuples() -> None:
    text = "{[i,k,j] -> [0,i,0,k,0,j,0]}"
    p = piece(text)
    assert shape(p.in_tuple) == (N("i"), N("k"), N("j"))
    assert shape(p.out_tuple) == (C(0), N("i"), C(0), N("k"), C(0), N("j"), C(0))
    assert p.formula is None
    assert p.out_span is not None
    assert at(text, p.out_span) == "[0,i,0,k,0,j,0]"


def test_tuple_entries_are_expressions() -> None:
    p = piece("{[i] -> [i + 1, 2i, -k, f(i)]}")
    assert shape(p.out_tuple) == (
        binop("+", N("i"), C(1)),
        binop("*", C(2), N("i")),
        ("Neg", N("k")),
        ("Call", "f", (N("i"),)),
    )


@pytest.mark.parametrize(
    ("text", "in_arity", "out_arity"),
    [("{[]}", 0, None), ("{[i]->[]}", 1, 0), ("{[] -> [i]}", 0, 1), ("{ [ ] -> [ ] }", 0, 0)],
)
def test_empty_tuples(text: str, in_arity: int, out_arity: int | None) -> None:
    p = piece(text)
    assert len(p.in_tuple) == in_arity
    assert (None if p.out_tuple is None else len(p.out_tuple)) == out_arity
    assert p.formula is None


def test_empty_tuple_with_formula() -> None:
    p = piece("{[]: 0 < N}")
    assert p.in_tuple == ()
    assert shape(p.formula) == cmp("<", C(0), N("N"))


def test_params() -> None:
    text = "[N, M] -> {[i]: 0 <= i < N}"
    p = piece(text)
    assert p.params is not None
    assert [name.name for name in p.params] == ["N", "M"]
    assert [at(text, name.span) for name in p.params] == ["N", "M"]
    assert p.span == (0, len(text))
    assert at(text, p.in_span) == "[i]"
    assert piece("[] -> {[i]}").params == ()


def test_relation_with_formula() -> None:
    assert shape(formula("{[i,k] -> [ii,k]: ii = i+1}")) == cmp(
        "=", N("ii"), binop("+", N("i"), C(1))
    )


# ----------------------------------------------------------------------------- formulas
def test_and_binds_tighter_than_or() -> None:
    chain = ("And", (cmp("<=", C(0), N("i")), cmp("<", N("i"), N("N"))))
    assert formula_shape("0 <= i < N and i != 3 or i = 7") == (
        "Or",
        (("And", (chain, cmp("!=", N("i"), C(3)))), cmp("=", N("i"), C(7))),
    )


@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("a = 1 and b = 2 or c = 3", "a = 1 && b = 2 || c = 3"),
        ("a = 1 && (b = 2 or c = 3)", "a = 1 and (b = 2 || c = 3)"),
        ("a == 1", "a = 1"),
    ],
)
def test_operator_spellings(spelled: str, canonical: str) -> None:
    assert formula_shape(spelled) == formula_shape(canonical)


def test_or_and_and_are_flat() -> None:
    assert kind(formula_shape("a = 1 || b = 2 || c = 3")) == "Or"
    result = formula("{[i]: a = 1 && b = 2 && c = 3}")
    assert isinstance(result, syntax.And)
    assert len(result.items) == 3


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_comparison_operators(op: str) -> None:
    assert formula_shape(f"i {op} 3") == cmp(op, N("i"), C(3))


def test_comparison_chain() -> None:
    text = "{[i]: a <= b < c <= d}"
    result = formula(text)
    assert shape(result) == (
        "And",
        (cmp("<=", N("a"), N("b")), cmp("<", N("b"), N("c")), cmp("<=", N("c"), N("d"))),
    )
    assert isinstance(result, syntax.And)
    assert [at(text, item.span) for item in result.items] == ["a <= b", "b < c", "c <= d"]
    assert at(text, result.span) == "a <= b < c <= d"


@pytest.mark.parametrize(("word", "value"), [("true", True), ("false", False)])
def test_true_false(word: str, value: bool) -> None:
    assert formula_shape(word) == ("Bool", value)
    assert formula_shape(f"i > 0 && {word}") == ("And", (cmp(">", N("i"), C(0)), ("Bool", value)))


def test_parenthesised_formulas() -> None:
    text = "{[i]: (0 <= i && i < N) || (i > 10)}"
    result = formula(text)
    assert shape(result) == (
        "Or",
        (("And", (cmp("<=", C(0), N("i")), cmp("<", N("i"), N("N")))), cmp(">", N("i"), C(10))),
    )
    assert isinstance(result, syntax.Or)
    assert at(text, result.span) == "(0 <= i && i < N) || (i > 10)"
    assert at(text, result.items[0].span) == "0 <= i && i < N"


def test_parenthesis_nesting_keeps_groups() -> None:
    assert formula_shape("(a = 1 && b = 2) && c = 3") == (
        "And",
        (("And", (cmp("=", N("a"), C(1)), cmp("=", N("b"), C(2)))), cmp("=", N("c"), C(3))),
    )
    assert formula_shape("((i < N))") == cmp("<", N("i"), N("N"))
    assert formula_shape("((0 <= i)) && ((i)) < N") == (
        "And",
        (cmp("<=", C(0), N("i")), cmp("<", N("i"), N("N"))),
    )


def test_parenthesised_arithmetic_in_formula() -> None:
    text = "{[i]: (i+1)*2 <= N}"
    result = formula(text)
    assert shape(result) == cmp("<=", binop("*", binop("+", N("i"), C(1)), C(2)), N("N"))
    assert isinstance(result, syntax.Compare)
    product = result.left
    assert isinstance(product, syntax.BinOp)
    assert at(text, product.span) == "(i+1)*2"
    assert at(text, product.left.span) == "i+1"
    assert formula_shape("N >= (i)") == cmp(">=", N("N"), N("i"))


def test_exists_forms() -> None:
    assert formula_shape("exists(a, b: i = 2a + 3b && a >= 0)") == (
        "Exists",
        (N("a"), N("b")),
        (
            "And",
            (
                cmp("=", N("i"), binop("+", binop("*", C(2), N("a")), binop("*", C(3), N("b")))),
                cmp(">=", N("a"), C(0)),
            ),
        ),
    )
    assert formula_shape("exists a : i = 2a") == (
        "Exists",
        (N("a"),),
        cmp("=", N("i"), binop("*", C(2), N("a"))),
    )
    assert part(formula_shape("exists a, b: i = a + b"), 1) == (N("a"), N("b"))


def test_exists_inside_and_or() -> None:
    text = "{[i]: 0 <= i && exists(a: i = 4a)}"
    result = formula(text)
    assert isinstance(result, syntax.And)
    exists = result.items[1]
    assert isinstance(exists, syntax.Exists)
    assert at(text, exists.span) == "exists(a: i = 4a)"
    assert at(text, exists.names[0].span) == "a"
    assert kind(formula_shape("i < 0 || exists a: i = 2a")) == "Or"


def test_bare_exists_body_extends_as_far_as_possible() -> None:
    text = "{[i]: i > 0 && exists a: i = 2a || i = 3 && i < 9}"
    result = formula(text)
    assert isinstance(result, syntax.And)
    exists = result.items[1]
    assert isinstance(exists, syntax.Exists)
    assert shape(exists.body) == (
        "Or",
        (
            cmp("=", N("i"), binop("*", C(2), N("a"))),
            ("And", (cmp("=", N("i"), C(3)), cmp("<", N("i"), C(9)))),
        ),
    )
    assert at(text, exists.span) == "exists a: i = 2a || i = 3 && i < 9"
    # parentheses end it early
    assert kind(formula_shape("(exists a: i = 2a) || i = 3")) == "Or"


def test_nested_exists() -> None:
    assert formula_shape("exists a: exists(b: a = b)") == (
        "Exists",
        (N("a"),),
        ("Exists", (N("b"),), cmp("=", N("a"), N("b"))),
    )


# ----------------------------------------------------------------------------- expressions
def test_uf_calls() -> None:
    assert formula_shape("p = perm(col(k)) && f(i, j+1, 2) > 0") == (
        "And",
        (
            cmp("=", N("p"), ("Call", "perm", (("Call", "col", (N("k"),)),))),
            cmp(">", ("Call", "f", (N("i"), binop("+", N("j"), C(1)), C(2))), C(0)),
        ),
    )


def test_floor_ceil_mod() -> None:
    text = "{[i]: 2i + 3*i >= 4 && floor(i/4) = 2 && i % 3 = 1 && ceil(i/2) < 9}"
    assert shape(formula(text)) == (
        "And",
        (
            cmp(">=", binop("+", binop("*", C(2), N("i")), binop("*", C(3), N("i"))), C(4)),
            cmp("=", ("Floor", binop("/", N("i"), C(4)), False), C(2)),
            cmp("=", binop("%", N("i"), C(3)), C(1)),
            cmp("<", ("Floor", binop("/", N("i"), C(2)), True), C(9)),
        ),
    )
    result = formula(text)
    assert isinstance(result, syntax.And)
    floor = result.items[1]
    assert isinstance(floor, syntax.Compare)
    assert at(text, floor.left.span) == "floor(i/4)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2i", binop("*", C(2), N("i"))),
        ("2 i", binop("*", C(2), N("i"))),
        ("2(i+1)", binop("*", C(2), binop("+", N("i"), C(1)))),
        ("3f(k)", binop("*", C(3), ("Call", "f", (N("k"),)))),
        ("2 floor(i/2)", binop("*", C(2), ("Floor", binop("/", N("i"), C(2)), False))),
        ("-2i", ("Neg", binop("*", C(2), N("i")))),
        ("x * 2i", binop("*", N("x"), binop("*", C(2), N("i")))),
        ("2i * x", binop("*", binop("*", C(2), N("i")), N("x"))),
    ],
)
def test_implicit_coefficient(text: str, expected: object) -> None:
    assert expr_shape(text) == expected


def test_implicit_coefficient_spans() -> None:
    text = "{[12 ab]}"
    (entry,) = piece(text).in_tuple
    assert isinstance(entry, syntax.BinOp)
    assert at(text, entry.span) == "12 ab"
    assert at(text, entry.op_span) == "12"
    assert at(text, entry.left.span) == "12"
    assert at(text, entry.right.span) == "ab"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a + b * c", binop("+", N("a"), binop("*", N("b"), N("c")))),
        ("a * b + c", binop("+", binop("*", N("a"), N("b")), N("c"))),
        ("a - b - c", binop("-", binop("-", N("a"), N("b")), N("c"))),
        ("a / 2 % 3", binop("%", binop("/", N("a"), C(2)), C(3))),
        ("(a - b) * c", binop("*", binop("-", N("a"), N("b")), N("c"))),
        ("-a * b", binop("*", ("Neg", N("a")), N("b"))),
        ("a * -b", binop("*", N("a"), ("Neg", N("b")))),
        ("a - -b", binop("-", N("a"), ("Neg", N("b")))),
        ("--a", ("Neg", ("Neg", N("a")))),
        ("-3", ("Neg", C(3))),
        ("-(a + b)", ("Neg", binop("+", N("a"), N("b")))),
    ],
)
def test_precedence(text: str, expected: object) -> None:
    assert expr_shape(text) == expected


def test_expression_spans() -> None:
    text = "{[i]: -(a + b) * c > 0}"
    result = formula(text)
    assert isinstance(result, syntax.Compare)
    product = result.left
    assert isinstance(product, syntax.BinOp)
    assert at(text, product.span) == "-(a + b) * c"
    assert at(text, product.op_span) == "*"
    neg = product.left
    assert isinstance(neg, syntax.Neg)
    assert at(text, neg.span) == "-(a + b)"
    assert at(text, neg.operand.span) == "a + b"


@pytest.mark.parametrize("name", ["andy", "order", "floors", "ceil_", "_x", "union2", "x_1", "T"])
def test_names_that_start_like_keywords(name: str) -> None:
    assert expr_shape(name) == N(name)


def test_large_number() -> None:
    assert expr_shape("123456789012345678901234567890") == C(123456789012345678901234567890)


# ----------------------------------------------------------------------------- documents
@pytest.mark.parametrize("joiner", ["union", "||", "or", "\nunion\n"])
def test_union_of_pieces(joiner: str) -> None:
    text = f"{{[i]: 0 <= i < N}} {joiner} {{[i]: i = 100}}"
    document = parse_document(text)
    assert len(document.pieces) == 2
    first, second = document.pieces
    assert at(text, first.span) == "{[i]: 0 <= i < N}"
    assert at(text, second.span) == "{[i]: i = 100}"
    assert shape(second.formula) == cmp("=", N("i"), C(100))


def test_three_pieces_with_params() -> None:
    document = parse_document("[N] -> {[i]: i < N} union {[j]} union [M] -> {[k] -> [k]}")
    assert [p.params is None for p in document.pieces] == [False, True, False]


# ----------------------------------------------------------------------------- errors
ERRORS = [
    # (text, column of the caret, a piece of the message)
    ("{[i: i < N}", 3, "unexpected ':'; expected"),
    ("{[i]: i <}", 9, "expected a name, a number or '('"),
    ("{[i]: i < N", 11, "unexpected end of text"),
    ("{[i]} junk", 6, "unexpected 'junk'"),
    ("{[i]: and}", 6, "'and' is a reserved word"),
    ("{[i]: 3 ~ 4}", 8, "unexpected character '~'"),
    ("{[i]: exists}", 12, "unexpected '}'; expected a name or '('"),
    ("{[i]: i}", 6, "expected a comparison operator"),
    ("{[i]: (i < 3) + 1 > 0}", 7, "expected an arithmetic expression, found a condition"),
    ("{[i]: (true) + 1 > 0}", 7, "found 'true'"),
    ("{[and]}", 2, "reserved word"),
    ("[or] -> {[i]}", 1, "reserved word"),
    ("{[i]: exists union: i = 0}", 13, "reserved word"),
    ("{[i]: floor > 0}", 12, "expected '('"),
    ("{[i]: f() > 0}", 8, "unexpected ')'"),
    ("{[i]:}", 5, "unexpected '}'"),
    ("{[i]} {[j]}", 6, "unexpected '{'"),
    ("{[i]: i < N}}", 12, "unexpected '}'"),
    ("{[é]}", 2, "unexpected character 'é'"),
    ("{[i]: i < \x00}", 10, "unexpected character '\\x00'"),
    ("{[i]: i <\n 3 <}", 4, "unexpected '}'"),
    ("   ", 0, "unexpected end of text; expected '[' or '{'"),
    ("{[i]: f(i < 3) > 0}", 10, "unexpected '<'"),
    ("{[i]: i < N && }", 15, "unexpected '}'"),
    ("{[i] -> [j] -> [k]}", 12, "unexpected '->'"),
]


@pytest.mark.parametrize(("text", "column", "message"), ERRORS)
def test_errors_point_at_the_problem(text: str, column: int, message: str) -> None:
    error = parse_error(text)
    assert message in error.message
    assert error.text == text
    assert error.span is not None
    line_start = text.rfind("\n", 0, error.span[0]) + 1
    assert error.span[0] - line_start == column
    assert caret_column(error) == column
    assert "RPAR" not in error.message
    assert "__ANON" not in error.message


def test_empty_text() -> None:
    error = parse_error("")
    assert error.message == "unexpected end of text; expected '[' or '{'"
    assert error.span == (0, 0)


def test_end_of_text_caret_follows_last_token() -> None:
    error = parse_error("{[i]: i <  \n\n")
    assert error.span == (9, 9)
    assert caret_column(error) == 9


def test_parse_error_is_a_value_error() -> None:
    error = parse_error("{")
    assert isinstance(error, SpfError)
    assert isinstance(error, ValueError)


def test_expected_lists_are_readable() -> None:
    error = parse_error("{[i]: i < N")
    assert error.message == (
        "unexpected end of text; expected '(', a comparison operator, "
        "an arithmetic operator, '&&', '||' or '}'"
    )
    assert parse_error("{[i]: i <}").message == ("unexpected '}'; expected a name, a number or '('")


def test_number_too_large() -> None:
    error = parse_error("{[i]: i < 1" + "0" * 5000 + "}")
    assert "number too large" in error.message
    assert error.span is not None
    assert error.span[0] == 10


# ----------------------------------------------------------------------------- deep nesting
def test_deep_parentheses() -> None:
    text = "{[i]: " + "(" * 5000 + "i" + ")" * 5000 + " > 0}"
    error = parse_error(text)
    assert "nested too deeply" in error.message
    assert error.span == (6 + MAX_DEPTH, 7 + MAX_DEPTH)
    shown = str(error).splitlines()[-2][2:]  # a window of the long line around the error
    assert len(shown) < len(text)
    assert text.find(shown) + caret_column(error) == 6 + MAX_DEPTH


@pytest.mark.parametrize(
    "text",
    [
        "{[i]: " + "-" * 5000 + "i > 0}",
        "{[i]: " + "+".join(["i"] * 5000) + " > 0}",
        "{[i]: " + "exists a: " * 3000 + "i > 0}",
        "{[" + "f(" * 3000 + "i" + ")" * 3000 + "]}",
        "{[i]: " + "(" * 300 + "i > 0" + ")" * 300 + "}",
        "{[i]: " + "(" * 5000 + "}",
    ],
)
def test_other_deep_nesting(text: str) -> None:
    error = parse_error(text)
    assert "nested too deeply" in error.message or "unexpected" in error.message


def test_moderate_nesting_is_fine() -> None:
    depth = MAX_DEPTH // 2
    result = formula("{[i]: " + "(" * depth + "i" + ")" * depth + " > 0}")
    assert shape(result) == cmp(">", N("i"), C(0))
    assert kind(expr_shape("-" * depth + "i")) == "Neg"


# ----------------------------------------------------------------------------- misc
def test_caret_error_helper() -> None:
    error = caret_error("{[i]: j}", (6, 7), "unknown name 'j'")
    assert isinstance(error, ParseError)
    assert str(error).splitlines() == ["unknown name 'j'", "  {[i]: j}", "        ^"]


def test_grammar_conflicts_are_only_the_exists_body() -> None:
    """The only LALR conflicts are shift/reduce after a bare exists body (resolved as shift)."""
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    logger = logging.getLogger("lark")
    handler = Collect()
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        Lark(_GRAMMAR, parser="lalr", lexer="basic", debug=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    conflicts = {msg.split()[4].rstrip(":") for msg in records if "conflict for terminal" in msg}
    assert conflicts  # the bare exists body does conflict (and lark resolves it as shift)
    assert conflicts <= {"_ANDAND", "_ANDKW", "_OROR", "_ORKW"}
    assert not any("Reduce/Reduce" in msg for msg in records)
