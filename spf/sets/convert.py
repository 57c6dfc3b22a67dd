"""Syntax tree -> :class:`~spf.sets.body.Body`: names resolved, UF calls abstracted.

Tuple entries that are fresh names become named positions; any other entry (a constant, an
expression, a repeated name) becomes an unnamed position plus an equality. Names bound by
``exists`` become hidden variables, other free names symbolic constants, and every distinct
UF call one value dimension. Affinity is checked here, with carets into the source text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import islpy as isl

from spf.clang import isl_reserved
from spf.errors import ArityError, InternalError, ParseError, UndeclaredError
from spf.sets import affine
from spf.sets import syntax as ast
from spf.sets.body import Body, Term, canonical, lift_all
from spf.sets.calls import component_name
from spf.sets.linear import esym, sym, to_isl, tsym, usym

if TYPE_CHECKING:
    from spf.sets.affine import Aff, Sym
    from spf.sets.uf import UF


def caret(text: str, span: tuple[int, int]) -> str:
    """``text`` with a caret line under ``span`` (for errors that are not ParseErrors)."""
    return str(ParseError("", text=text, span=span)).lstrip("\n")


@dataclass
class _Piece:
    """Mutable state while converting one braced piece."""

    text: str
    ufs: Mapping[str, UF] | None
    arities: dict[str, int]
    scope: list[dict[str, Sym]] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    terms: dict[Term, int] = field(default_factory=dict)
    params: set[str] = field(default_factory=set)

    def error(self, message: str, span: tuple[int, int]) -> ParseError:
        return ParseError(message, text=self.text, span=span)

    # --- names
    def lookup(self, node: ast.Name) -> Aff:
        for frame in reversed(self.scope):
            if node.name in frame:
                return frame[node.name].aff()
        self.check_param(node.name, node.span)
        self.params.add(node.name)
        return sym(node.name).aff()

    def check_param(self, name: str, span: tuple[int, int]) -> None:
        if isl_reserved(name):
            raise self.error(f"{name!r} is a reserved word and cannot be used as a name", span)
        if name.startswith("__"):
            raise self.error(f"names starting with '__' are reserved for spf ({name!r})", span)
        if self.is_uf(name):
            raise self.error(
                f"{name!r} is an uninterpreted function; call it with arguments: {name}(...)",
                span,
            )

    def is_uf(self, name: str) -> bool:
        return (
            (self.ufs is not None and name in self.ufs)
            or name in self.arities
            or component_name(name) in self.arities
        )

    # --- expressions
    def expr(self, node: ast.Expr, in_floor: bool = False) -> Aff:
        if isinstance(node, ast.Num):
            return affine.const(node.value)
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, ast.Neg):
            return -self.expr(node.operand, in_floor)
        if isinstance(node, ast.Floor):
            inner = self.expr(node.operand, True)
            return affine.ceil(inner) if node.ceil else affine.floor(inner)
        if isinstance(node, ast.Call):
            return self.call(node)
        return self.binop(node, in_floor)

    def binop(self, node: ast.BinOp, in_floor: bool) -> Aff:
        left = self.expr(node.left, in_floor)
        right = self.expr(node.right, in_floor)
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            if left.coeffs and right.coeffs:
                raise self.error(
                    "not affine: a product of two non-constant expressions "
                    f"({_src(self.text, node.left)} and {_src(self.text, node.right)})",
                    node.op_span,
                )
            return left * right
        divisor = self.divisor(node, right)
        if node.op == "/":
            if not in_floor:
                raise self.error(
                    "division is only allowed inside floor(e / c) or ceil(e / c)", node.op_span
                )
            return left / divisor
        return left - affine.floor(left / divisor) * divisor  # e % c

    def divisor(self, node: ast.BinOp, right: Aff) -> int:
        if not right.is_integer() or int(right) <= 0:
            raise self.error(
                f"the right side of {node.op!r} must be a positive integer constant, "
                f"got {_src(self.text, node.right)}",
                node.right.span,
            )
        return int(right)

    def call(self, node: ast.Call) -> Aff:
        self.check_uf(node)
        args = tuple(self.expr(a) for a in node.args)
        for a, arg_node in zip(args, node.args, strict=True):
            if a.const.denominator != 1:
                raise self.error("UF arguments must be integer expressions", arg_node.span)
        key: Term = (node.name, args)
        if node.component is not None:  # tuple-valued: the component is the last argument
            key = (component_name(node.name), (*args, affine.const(node.component)))
        if key not in self.terms:
            self.terms[key] = len(self.terms)
        return usym(self.terms[key]).aff()

    def check_uf(self, node: ast.Call) -> None:
        name, n = node.name, len(node.args)
        if isl_reserved(name) or name.startswith("__"):
            raise self.error(f"{name!r} cannot be used as a function name", node.name_span)
        if name in self.params:
            raise self.error(
                f"{name!r} is used both as a parameter and as an uninterpreted function; "
                "rename one of them",
                node.name_span,
            )
        if self.ufs is not None:
            if name not in self.ufs:
                raise UndeclaredError(
                    "UF",
                    name,
                    self.ufs,
                    hint="declare it in ufs=...\n" + caret(self.text, node.name_span),
                )
            want = self.ufs[name].arity
            self.check_component(node, self.ufs[name].out_arity)
        else:
            key = name if node.component is None else component_name(name)
            other = component_name(name) if node.component is None else name
            if other in self.arities:
                raise ArityError(
                    f"UF {name!r} is called both with a component (f(...)[0], a UF that "
                    f"returns a tuple) and without one\n{caret(self.text, node.span)}"
                )
            want = self.arities.setdefault(key, n)
        if n != want:
            raise ArityError(
                f"UF {name!r} takes {want} argument{'s' if want != 1 else ''}, "
                f"called with {n}\n{caret(self.text, node.span)}"
            )

    def check_component(self, node: ast.Call, width: int) -> None:
        """A declared UF returning ``width`` values is called with a component below
        ``width`` when it returns a tuple, without one otherwise."""
        name, c = node.name, node.component
        if c is None and width > 1:
            raise ArityError(
                f"UF {name!r} returns a {width}-tuple; call one component of it, "
                f"{name}(...)[0] to {name}(...)[{width - 1}]\n{caret(self.text, node.span)}"
            )
        if c is not None and width == 1:
            raise ArityError(
                f"UF {name!r} returns one value, not a tuple; call it without [{c}] (or "
                f"declare it with out_arity=...)\n{caret(self.text, node.span)}"
            )
        if c is not None and c >= width:
            raise ArityError(
                f"UF {name!r} returns a {width}-tuple: component {c} does not exist "
                f"(0 to {width - 1})\n{caret(self.text, node.span)}"
            )

    # --- formulas -> isl text
    def formula(self, node: ast.Formula) -> str:
        if isinstance(node, ast.Bool):
            return "1 = 1" if node.value else "1 = 0"
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.And):
            return " and ".join(f"({self.formula(f)})" for f in node.items) or "1 = 1"
        if isinstance(node, ast.Or):
            return " or ".join(f"({self.formula(f)})" for f in node.items) or "1 = 0"
        frame: dict[str, Sym] = {}
        for nm in node.names:
            self.check_param(nm.name, nm.span)
            frame[nm.name] = esym(len(self.hidden))
            self.hidden.append(nm.name)
        self.scope.append(frame)
        try:
            return self.formula(node.body)
        finally:
            self.scope.pop()

    def compare(self, node: ast.Compare) -> str:
        left, right = to_isl(self.expr(node.left)), to_isl(self.expr(node.right))
        if node.op == "!=":
            return f"{left} < {right} or {left} > {right}"
        return f"{left} {node.op} {right}"


def _src(text: str, node: ast.Expr) -> str:
    return text[node.span[0] : node.span[1]] or "?"


def convert(doc: ast.Document, ufs: Mapping[str, UF] | None, arities: dict[str, int]) -> Body:
    """The canonical body of a parsed document; ``arities`` collects inferred UF arities."""
    bodies = [convert_piece(doc.text, p, ufs, arities) for p in doc.pieces]
    first = bodies[0]
    for piece, body in zip(doc.pieces[1:], bodies[1:], strict=True):
        if (body.n_in, body.n_tuple) != (first.n_in, first.n_tuple):
            raise ArityError(
                "the parts of a union must have the same tuple arities\n"
                + caret(doc.text, piece.span)
            )
    return union_many(bodies)


def union_many(bodies: Sequence[Body]) -> Body:
    """The union of ``bodies`` (same arities, at least one), made canonical once (one at a
    time, each union's canonical form merged the calls of every body before it again:
    quadratic in the parts); a position is named as in the first body naming it with a name
    no body before it used."""
    if len(bodies) == 1:
        return bodies[0]
    lifted = lift_all(bodies)
    names = list(bodies[0].names)
    for b in bodies[1:]:
        taken = {n for n in names if n is not None}
        names = [
            na if na is not None else (nb if nb is not None and nb not in taken else None)
            for na, nb in zip(names, b.names, strict=True)
        ]
    iset = lifted[0].iset
    for lb in lifted[1:]:
        iset = iset.union(lb.iset)
    a = lifted[0]
    return canonical(Body(tuple(names), a.n_in, a.hidden, a.terms, iset))


def convert_piece(
    text: str, piece: ast.Piece, ufs: Mapping[str, UF] | None, arities: dict[str, int]
) -> Body:
    st = _Piece(text=text, ufs=ufs, arities=arities)
    for p in piece.params or ():
        st.check_param(p.name, p.span)
        st.params.add(p.name)
    items = list(piece.in_tuple) + list(piece.out_tuple or ())
    n_in = len(piece.in_tuple) if piece.out_tuple is not None else None
    names: list[str | None] = []
    frame: dict[str, Sym] = {}
    for k, item in enumerate(items):
        side_start = 0 if n_in is None or k < n_in else n_in
        fresh = isinstance(item, ast.Name) and item.name not in frame and not st.is_uf(item.name)
        if isinstance(item, ast.Name) and (isl_reserved(item.name) or item.name.startswith("__")):
            st.check_param(item.name, item.span)
        del side_start
        if fresh and isinstance(item, ast.Name):
            frame[item.name] = tsym(k)
            names.append(item.name)
        else:
            names.append(None)
    st.scope.append(frame)
    conds = [
        f"__t{k} = {to_isl(st.expr(item))}" for k, item in enumerate(items) if names[k] is None
    ]
    if piece.formula is not None:
        conds.append(st.formula(piece.formula))
    terms = sorted(st.terms, key=st.terms.__getitem__)
    dims = (
        [f"__t{k}" for k in range(len(items))]
        + [f"__e{k}" for k in range(len(st.hidden))]
        + [f"__u{k}" for k in range(len(terms))]
    )
    body_text = " and ".join(f"({c})" for c in conds) or "1 = 1"
    try:
        iset = isl.Set(
            f"[{', '.join(sorted(st.params))}] -> {{ [{', '.join(dims)}] : {body_text} }}"
        )
    except isl.Error as err:  # pragma: no cover - the converter only emits valid isl
        raise InternalError(f"spf bug: isl rejected the converted text of {text!r}: {err}") from err
    hidden = _dedupe_hidden(st.hidden, {n for n in names if n is not None} | st.params)
    return canonical(Body(tuple(names), n_in, tuple(hidden), tuple(terms), iset))


def _dedupe_hidden(hidden: list[str], taken: set[str]) -> list[str]:
    out: list[str] = []
    used = set(taken)
    for name in hidden:
        new, n = name, 0
        while new in used:
            n += 1
            new = f"{name}_{n}"
        used.add(new)
        out.append(new)
    return out
