"""Property tests of the set/relation parser: it never fails with anything but ParseError, and
text printed from random syntax trees parses back into the same tree."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TypeAlias

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spf.errors import ParseError
from spf.sets import syntax
from spf.sets.parse import parse_document

pytestmark = pytest.mark.slow  # hundreds of examples a test

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DOCUMENTS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
"""The generated-document tests: drawing one whole document (up to 3 pieces of 3 parts, each
with a formula of up to 8 leaves) is ~500 hypothesis draws, almost all of their time (the
parse is a few percent); as many documents a test as the loaded profile gives every test
(``ci``: 50, the two tests were the file's largest share of ``make test`` at the 100 the
profile gave before; ``explore``, tests/conftest.py: 300, new ones each run)."""

VALID = [
    "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
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
    "[N] -> { [i] : (-1 + i) mod 3 = 0 and 0 < i <= 10; [i = 100] }",
    "{ [i, j] -> [k] : 0 <= k <= 2; [i, j] -> [k = j] }",
    "{ [i] : exists (e0 = floor((i)/2), e1: i = 2e0 + e1 and 0 <= e1 <= 0) }",
    "{[k]: 0 <= tau_inv(k)[0] < nr && ptr(tau_inv(k)[0]) <= tau_inv(k)[1]}",
]

TOKENS = [
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ",",
    ":",
    "->",
    "<",
    "<=",
    ">",
    ">=",
    "=",
    "==",
    "!=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "and",
    "or",
    "union",
    "exists",
    "true",
    "false",
    "floor",
    "ceil",
    "mod",
    ";",
    "[0]",
    "i",
    "j",
    "N",
    "f",
    "0",
    "2",
    "17",
    " ",
    "\n",
    "~",
    "é",
    "\x00",
    "2i",
]


def parse_or_error(text: str) -> syntax.Document | None:
    """Parse ``text``; None when it raised ParseError (anything else propagates and fails)."""
    try:
        document = parse_document(text)
    except ParseError as caught:
        error = caught
    else:
        check_spans(document)
        return document
    assert error.text == text
    assert error.span is not None
    assert 0 <= error.span[0] <= error.span[1] <= len(text) + 1
    assert str(error).startswith(error.message)  # the rendering never fails
    return None


# ----------------------------------------------------------------------------- tree helpers
def nodes(node: object) -> Iterator[object]:
    """Every syntax node under ``node`` (itself included)."""
    if isinstance(node, tuple):
        for item in node:
            yield from nodes(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        yield node
        for field in dataclasses.fields(node):
            yield from nodes(getattr(node, field.name))


def check_spans(document: syntax.Document) -> None:
    """Spans lie inside the text, and leaves' spans cover exactly their own text."""
    text = document.text
    for node in nodes(document.pieces):
        span = getattr(node, "span", (0, 0))
        assert 0 <= span[0] < span[1] <= len(text), (node, span)
        if isinstance(node, syntax.Name):
            assert text[span[0] : span[1]] == node.name
        elif isinstance(node, syntax.Num):
            assert int(text[span[0] : span[1]]) == node.value
        elif isinstance(node, syntax.Call):
            assert text[node.name_span[0] : node.name_span[1]] == node.name


def shape(node: object) -> object:
    """The tree without spans, as nested tuples (the form the generators below build)."""
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


# ----------------------------------------------------------------------------- 1: any text
@FUZZ
@given(st.text())
def test_arbitrary_text(text: str) -> None:
    parse_or_error(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))
def test_token_soup(text: str) -> None:
    parse_or_error(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join))
def test_spaced_token_soup(text: str) -> None:
    parse_or_error(text)


# ----------------------------------------------------------------------------- 2: mutations
@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A valid example with a few characters or tokens deleted, inserted or replaced."""
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "token", "duplicate"]))
        if kind == "delete":
            end = draw(st.integers(position, min(len(text), position + 5)))
            text = text[:position] + text[end:]
        elif kind == "insert":
            text = text[:position] + draw(st.characters()) + text[position:]
        elif kind == "replace":
            text = text[:position] + draw(st.characters()) + text[position + 1 :]
        elif kind == "token":
            text = text[:position] + draw(st.sampled_from(TOKENS)) + text[position:]
        else:
            end = draw(st.integers(position, len(text)))
            text = text[:end] + text[position:end] + text[end:]
    return text


@FUZZ
@given(mutated())
def test_mutated_valid_texts(text: str) -> None:
    parse_or_error(text)


# ----------------------------------------------------------------------------- 3: generated
Printed: TypeAlias = tuple[object, str, int]  # (expected shape, text, precedence)

ATOM, UNARY, MUL, ADD = 4, 3, 2, 1  # expression precedences (higher binds tighter)
UNIT, AND, OR, OPEN = 3, 2, 1, 0  # formula precedences (OPEN: bare exists, ends late)

NAMES = st.sampled_from(
    ["i", "j", "k", "N", "M", "x_1", "andy", "order", "floors", "ii", "model", "modulo"]
)
FUNCS = st.sampled_from(["f", "g", "rowptr", "col", "perm"])
SPACE = st.sampled_from(["", " ", "  ", "\n", "\t"])
GAP = st.sampled_from([" ", "  ", "\n", " \t "])


def wrap(item: Printed, minimum: int) -> str:
    """``item``'s text, parenthesised when it binds looser than ``minimum``."""
    _, text, prec = item
    return f"({text})" if prec < minimum else text


@st.composite
def leaf(draw: st.DrawFn) -> Printed:
    if draw(st.booleans()):
        name = draw(NAMES)
        return (("Name", name), name, ATOM)
    value = draw(st.integers(0, 10**6))
    return (("Num", value), str(value), ATOM)


@st.composite
def compound(draw: st.DrawFn, inner: st.SearchStrategy[Printed]) -> Printed:
    kind = draw(st.sampled_from(["binop", "binop", "neg", "call", "floor", "coef"]))
    sp = draw(SPACE)
    if kind == "binop":
        op = draw(st.sampled_from(["+", "-", "*", "/", "%", "mod"]))
        prec = ADD if op in "+-" else MUL
        left, right = draw(inner), draw(inner)
        gap = draw(GAP) if op == "mod" else sp  # isl's 'a mod b' needs the spaces
        text = f"{wrap(left, prec)}{gap}{op}{gap}{wrap(right, prec + 1)}"
        return (("BinOp", "%" if op == "mod" else op, left[0], right[0]), text, prec)
    if kind == "neg":
        operand = draw(inner)
        return (("Neg", operand[0]), f"-{sp}{wrap(operand, UNARY)}", UNARY)
    if kind == "call":
        args = draw(st.lists(inner, min_size=1, max_size=3))
        text = f"{draw(FUNCS)}({','.join(sp + a[1] for a in args)})"
        name = text[: text.index("(")]
        shape = ("Call", name, tuple(a[0] for a in args))
        component = draw(st.none() | st.integers(0, 3))
        if component is not None:  # a tuple-valued UF's component: f(i)[1]
            return (*shape, component), f"{text}[{component}]", ATOM
        return shape, text, ATOM
    if kind == "floor":
        operand, ceil = draw(inner), draw(st.booleans())
        text = f"{'ceil' if ceil else 'floor'}{sp}({operand[1]})"
        return (("Floor", operand[0], ceil), text, ATOM)
    # implicit coefficient: number then a name, call, floor or parenthesis
    value = draw(st.integers(0, 99))
    target = draw(inner)
    target_text = target[1] if target[2] == ATOM and not target[1][0].isdigit() else None
    if target_text is None:
        target_text = f"({target[1]})"
    gap = sp if target_text[0] == "(" else draw(st.sampled_from(["", " "]))
    return (("BinOp", "*", ("Num", value), target[0]), f"{value}{gap}{target_text}", UNARY)


EXPRS: st.SearchStrategy[Printed] = st.recursive(leaf(), compound, max_leaves=12)


@st.composite
def comparison(draw: st.DrawFn) -> Printed:
    """``a op b`` or a chain ``a op b op c ...`` (And of the pairs)."""
    exprs = draw(st.lists(EXPRS, min_size=2, max_size=4))
    ops = [draw(st.sampled_from(["=", "==", "!=", "<", "<=", ">", ">="])) for _ in exprs[1:]]
    text = exprs[0][1]
    for op, item in zip(ops, exprs[1:], strict=True):
        text += f"{draw(SPACE)}{op}{draw(SPACE)}{item[1]}"
    compares = tuple(
        ("Compare", "=" if op == "==" else op, left[0], right[0])
        for op, left, right in zip(ops, exprs, exprs[1:], strict=False)
    )
    expected = compares[0] if len(compares) == 1 else ("And", compares)
    return (expected, text, UNIT)


@st.composite
def formula_leaf(draw: st.DrawFn) -> Printed:
    if draw(st.integers(0, 9)) == 0:
        value = draw(st.booleans())
        return (("Bool", value), "true" if value else "false", UNIT)
    return draw(comparison())


@st.composite
def formula_compound(draw: st.DrawFn, inner: st.SearchStrategy[Printed]) -> Printed:
    kind = draw(st.sampled_from(["and", "or", "exists"]))
    if kind == "exists":
        names = draw(st.lists(NAMES, min_size=1, max_size=3))
        body = draw(inner)
        expected = ("Exists", tuple(("Name", n) for n in names), body[0])
        listed = ", ".join(names)
        if draw(st.booleans()):
            return (expected, f"exists({listed}:{draw(SPACE)}{body[1]})", UNIT)
        return (expected, f"exists{draw(GAP)}{listed}{draw(SPACE)}:{draw(SPACE)}{body[1]}", OPEN)
    items = draw(st.lists(inner, min_size=2, max_size=4))
    prec = AND if kind == "and" else OR
    words = ["&&", "and"] if kind == "and" else ["||", "or"]
    text = wrap(items[0], prec + 1)
    for item in items[1:]:
        text += f"{draw(GAP)}{draw(st.sampled_from(words))}{draw(GAP)}{wrap(item, prec + 1)}"
    return (("And" if kind == "and" else "Or", tuple(i[0] for i in items)), text, prec)


FORMULAS: st.SearchStrategy[Printed] = st.recursive(formula_leaf(), formula_compound, max_leaves=8)


@st.composite
def part_text(draw: st.DrawFn) -> tuple[tuple[object, ...], str]:
    """One ``[in] -> [out] : formula`` part: its shape (without params) and text."""
    in_tuple = draw(st.lists(EXPRS, max_size=3))
    out_tuple = draw(st.none() | st.lists(EXPRS, max_size=3))
    body = draw(st.none() | FORMULAS)
    text = "[" + ",".join(e[1] for e in in_tuple) + "]"
    if out_tuple is not None:
        text += f"{draw(SPACE)}->{draw(SPACE)}[" + ", ".join(e[1] for e in out_tuple) + "]"
    if body is not None:
        text += f"{draw(SPACE)}:{draw(SPACE)}{body[1]}"
    expected = (
        tuple(e[0] for e in in_tuple),
        None if out_tuple is None else tuple(e[0] for e in out_tuple),
        None if body is None else body[0],
    )
    return expected, text


@st.composite
def piece_text(draw: st.DrawFn) -> tuple[list[object], str]:
    """A braced piece's expected shapes (one per ``;`` part, as isl prints unions) and
    text."""
    params = draw(st.none() | st.lists(NAMES, max_size=3))
    parts = draw(st.lists(part_text(), min_size=1, max_size=3))
    text = "" if params is None else f"[{', '.join(params)}]{draw(SPACE)}->{draw(SPACE)}"
    text += "{" + f"{draw(SPACE)};{draw(SPACE)}".join(p[1] for p in parts) + draw(SPACE) + "}"
    shown = None if params is None else tuple(("Name", p) for p in params)
    return [("Piece", shown, *p[0]) for p in parts], text


@st.composite
def document_text(draw: st.DrawFn) -> tuple[tuple[object, ...], str]:
    pieces = draw(st.lists(piece_text(), min_size=1, max_size=3))
    text = pieces[0][1]
    for _, more in pieces[1:]:
        text += f"{draw(GAP)}{draw(st.sampled_from(['union', '||', 'or']))}{draw(GAP)}{more}"
    return tuple(shape for p in pieces for shape in p[0]), text


def count(tree: object, kind: str) -> int:
    """How many ``kind`` nodes an expected shape holds."""
    if isinstance(tree, tuple):
        own = 1 if tree and tree[0] == kind else 0
        return own + sum(count(item, kind) for item in tree)
    return 0


@DOCUMENTS
@given(document_text())
def test_generated_texts_parse_to_their_trees(case: tuple[tuple[object, ...], str]) -> None:
    expected, text = case
    document = parse_document(text)
    check_spans(document)
    assert shape(document.pieces) == expected
    compares = [n for n in nodes(document.pieces) if isinstance(n, syntax.Compare)]
    assert len(compares) == count(expected, "Compare")
    names = sorted(n.name for n in nodes(document.pieces) if isinstance(n, syntax.Name))
    assert len(names) == count(expected, "Name")


@settings(max_examples=200, deadline=None)
@given(EXPRS)
def test_generated_expressions_round_trip(case: Printed) -> None:
    expected, text, _ = case
    (entry,) = parse_document("{[" + text + "]}").pieces[0].in_tuple
    assert shape(entry) == expected


@DOCUMENTS
@given(document_text(), st.data())
def test_truncated_generated_texts_fail_cleanly(
    case: tuple[tuple[object, ...], str], data: st.DataObject
) -> None:
    _, text = case
    cut = data.draw(st.integers(0, len(text) - 1))
    assume(text[cut:].strip())
    parse_or_error(text[:cut])
