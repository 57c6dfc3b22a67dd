"""spf's quasi-affine expressions (:mod:`spf.sets.affine`) as loop-AST expressions.

A sum is written term by term in sympy's ``Add.args`` order (:func:`~spf.sets.affine.term_list`,
the order generated code had when the expressions were sympy's), optionally with the
constant last (``k + 1``); ``-x`` is ``neg``, ``c*x`` is ``*``, ``floor(e/d)`` is
``floord(e, d)`` and a UF call is a :class:`~spf.codegen.loop_ast.UFRead` of its array (a
tuple-valued UF's component is the last index).
"""

from __future__ import annotations

from collections.abc import Callable

from spf.codegen.loop_ast import Expr, Int, Op, UFRead
from spf.errors import CodegenError
from spf.sets.affine import Aff, Call, Floor, Sym, term_list
from spf.sets.linear import integral


def loop_expr(e: Aff, name: Callable[[str], Expr], *, constant_last: bool, what: str) -> Expr:
    """``e`` as a loop-AST expression; ``name`` gives each symbol's expression, ``what``
    names the expression in the error for one that has no C form."""
    if e.is_integer():
        return Int(int(e))
    if len(e.coeffs) + bool(e.const) > 1:
        terms = term_list(e)
        if constant_last:
            terms.sort(key=lambda t: t.is_constant())
        out = loop_expr(terms[0], name, constant_last=constant_last, what=what)
        for t in terms[1:]:
            out = Op("+", (out, loop_expr(t, name, constant_last=constant_last, what=what)))
        return out
    if e.coeffs:
        ((atom, coeff),) = e.coeffs.items()
        if coeff != 1:
            inner = loop_expr(Aff.atom(atom), name, constant_last=constant_last, what=what)
            if coeff == -1:
                return Op("neg", (inner,))
            factor = loop_expr(Aff({}, coeff), name, constant_last=constant_last, what=what)
            return Op("*", (factor, inner))
        if isinstance(atom, Sym):
            return name(atom.name)
        if isinstance(atom, Floor):
            num, den = integral(atom.arg)
            top = loop_expr(num, name, constant_last=constant_last, what=what)
            return Op("floord", (top, Int(den)))
        if isinstance(atom, Call):
            args = (loop_expr(a, name, constant_last=constant_last, what=what) for a in atom.args)
            return UFRead(atom.base, tuple(args))
    raise CodegenError(f"spf bug: cannot generate code for the {what} {e}")
