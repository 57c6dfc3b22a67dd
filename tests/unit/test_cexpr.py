"""The C expression printer (spf.cexpr): its text parses back (pycparser) to the same tree,
so it keeps the operation order, and it prints only the parentheses C needs."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycparser import c_ast, c_parser  # type: ignore[import-untyped]

from spf.cexpr import (
    Access,
    Assign,
    Binary,
    Call,
    Cast,
    Decl,
    Expr,
    IfStmt,
    Index,
    Name,
    Num,
    Param,
    Ternary,
    Unary,
    nodes,
    stmt_lines,
    substitute,
    to_c,
)
from spf.clang import C_PREC

_NAMES = st.sampled_from(["i", "j", "N", "x", "acc"])
_LEAVES: st.SearchStrategy[Expr] = st.one_of(
    st.builds(Name, _NAMES),
    st.builds(Param, st.sampled_from(["p", "q"])),
    st.builds(Num, st.sampled_from(["0", "1", "7", "2.5", "1e-3"])),
)


def _grow(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    args = st.lists(inner, min_size=1, max_size=3).map(tuple)
    return st.one_of(
        st.builds(Binary, st.sampled_from(sorted(C_PREC)), inner, inner),
        st.builds(Unary, st.sampled_from(["-", "+", "!", "~"]), inner),
        st.builds(Ternary, inner, inner, inner),
        st.builds(Cast, st.sampled_from(["double", "int64_t"]), inner),
        st.builds(Call, st.sampled_from(["sqrt", "spf_min", "col"]), args),
        st.builds(Access, st.sampled_from(["A", "y"]), args),
        st.builds(Index, st.builds(Name, st.sampled_from(["a", "b"])), inner),
        st.builds(Index, st.builds(Index, st.builds(Name, st.just("m")), inner), inner),
    )


TREES = st.recursive(_LEAVES, _grow, max_leaves=12)


def _parse(text: str) -> Any:
    unit = c_parser.CParser().parse(f"typedef long int64_t; long f(void) {{ return {text}; }}")
    return unit.ext[-1].body.block_items[0].expr


def _from_c(node: Any) -> Expr:
    """The tree pycparser's AST of a printed expression stands for (calls of data-space
    macros read back as calls, macro parameters as names)."""
    if isinstance(node, c_ast.Constant):
        return Num(node.value)
    if isinstance(node, c_ast.ID):
        return Name(node.name)
    if isinstance(node, c_ast.BinaryOp):
        return Binary(node.op, _from_c(node.left), _from_c(node.right))
    if isinstance(node, c_ast.UnaryOp):
        return Unary(node.op, _from_c(node.expr))
    if isinstance(node, c_ast.TernaryOp):
        return Ternary(_from_c(node.cond), _from_c(node.iftrue), _from_c(node.iffalse))
    if isinstance(node, c_ast.Cast):
        return Cast(" ".join(node.to_type.type.type.names), _from_c(node.expr))
    if isinstance(node, c_ast.ArrayRef):
        return Index(_from_c(node.name), _from_c(node.subscript))
    assert isinstance(node, c_ast.FuncCall), node
    return Call(node.name.name, tuple(_from_c(a) for a in node.args.exprs))


def _as_read(e: Expr) -> Expr:
    """``e`` as pycparser reads its text back."""
    if isinstance(e, Param):
        return Name(e.name)
    if isinstance(e, Access):
        return Call(e.space, tuple(_as_read(i) for i in e.indices))
    if isinstance(e, Call):
        return Call(e.func, tuple(_as_read(a) for a in e.args))
    if isinstance(e, Index):
        return Index(_as_read(e.base), _as_read(e.index))
    if isinstance(e, Unary):
        return Unary(e.op, _as_read(e.operand))
    if isinstance(e, Cast):
        return Cast(e.ctype, _as_read(e.operand))
    if isinstance(e, Binary):
        return Binary(e.op, _as_read(e.left), _as_read(e.right))
    if isinstance(e, Ternary):
        return Ternary(_as_read(e.cond), _as_read(e.then), _as_read(e.other))
    return e


@settings(max_examples=300, deadline=None)
@given(TREES)
def test_printed_expression_parses_back_to_the_same_tree(tree: Expr) -> None:
    assert _from_c(_parse(to_c(tree))) == _as_read(tree)


@settings(max_examples=200, deadline=None)
@given(TREES)
def test_macro_parameter_keeps_its_argument_whole(tree: Expr) -> None:
    """The preprocessor pastes a macro's argument as text: pasting ``a ? b : c`` (the
    loosest argument code generation passes) for every parameter of the printed text
    parses to the tree with that value in the parameter's place."""
    value = Ternary(Name("a"), Name("b"), Name("c"))
    pasted = re.sub(r"\b(?:p|q)\b", "a ? b : c", to_c(tree))
    params = {e.name for e in nodes(tree) if isinstance(e, Param)}
    assert _from_c(_parse(pasted)) == _as_read(substitute(tree, dict.fromkeys(params, value)))


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (Binary("+", Name("a"), Binary("*", Name("b"), Name("c"))), "a + b * c"),
        (Binary("*", Binary("+", Name("a"), Name("b")), Name("c")), "(a + b) * c"),
        (Binary("-", Name("a"), Binary("-", Name("b"), Name("c"))), "a - (b - c)"),
        (Binary("+", Name("a"), Binary("+", Name("b"), Name("c"))), "a + (b + c)"),
        (Binary("&&", Binary(">=", Name("M"), Num("1")), Name("p")), "M >= 1 && p"),
        (Binary("||", Binary("&&", Name("a"), Name("b")), Name("c")), "(a && b) || c"),
        (Binary("&", Binary("+", Name("a"), Name("b")), Name("c")), "(a + b) & c"),
        (Unary("-", Unary("-", Name("x"))), "-(-x)"),
        (Unary("-", Num("-3")), "-(-3)"),
        (Binary("*", Param("i"), Num("2")), "(i) * 2"),
        (Access("y", (Param("i"),)), "y(i)"),
        (
            Index(Name("A"), Binary("+", Binary("*", Param("t0"), Name("M")), Param("t1"))),
            "A[(t0) * M + (t1)]",
        ),
        (Cast("double", Binary("+", Name("a"), Name("b"))), "(double) (a + b)"),
        (
            Ternary(Name("c"), Name("a"), Ternary(Name("d"), Name("e"), Name("f"))),
            "c ? a : d ? e : f",
        ),
    ],
)
def test_printer_emits_only_needed_parentheses(tree: Expr, text: str) -> None:
    assert to_c(tree) == text


def test_statements_print_one_per_line_with_blocks() -> None:
    body = (
        Decl("double", "t", Num("0.0")),
        IfStmt(
            Binary("<", Param("i"), Name("N")),
            (Assign(Access("y", (Param("i"),)), "+=", Name("t")),),
            (Assign(Name("t"), "=", Num("1")),),
        ),
    )
    assert stmt_lines(body) == [
        "double t = 0.0;",
        "if ((i) < N)",
        "{",
        "  y(i) += t;",
        "}",
        "else",
        "{",
        "  t = 1;",
        "}",
    ]
