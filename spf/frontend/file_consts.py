"""File-scope constants with a value, ``static const int N = 64;`` or ``const double c =
0.5;``: the C compiler uses that value wherever the name is visible, so the import
substitutes it there, in the type the declaration gives it: an integer as a literal of its
type after C's conversion (``64``, ``64L`` for a ``long``, ``64U`` for an ``unsigned``; a
``char`` or ``short`` one as an ``int``, as C promotes it), so extents, bounds and subscripts
read it as a number; a floating one as its initializer cast to its type (``(float)0.1``), so
statements compute with the value C stores. A function whose parameter or local has the
same name keeps its own variable.

The enumerators of an ``enum`` (``enum { N = 64, H = N / 2 };``) are such constants too, of
type ``int``, each one its value or one more than the one before; those a function declares
in its body are substituted in that body.

A constant whose initializer is not an integer constant expression spf folds (``sizeof``, a
cast, a call) or a constant array (``const double w[3] = {...}``) is left as any other
file-scope variable: a kernel argument (docs/import_c.md)."""

from __future__ import annotations

from typing import Any

from spf.errors import ParseError
from spf.frontend.c_ints import c_div
from spf.frontend.cparse import INT_LITERALS, Source, c_ast, c_integer, nodes
from spf.frontend.decls import FLOATING, Types
from spf.frontend.rewrite import clone, located, map_nodes

_WIDTH = {"int8_t": 8, "uint8_t": 8, "int16_t": 16, "uint16_t": 16}
_LITERAL = {  # C type -> (suffix, pycparser constant type, bits, signed)
    "int32_t": ("", "int", 32, True),
    "int64_t": ("L", "long int", 64, True),
    "uint32_t": ("U", "unsigned int", 32, False),
    "uint64_t": ("UL", "unsigned long int", 64, False),
}


def substitute_file_constants(src: Source) -> None:
    """Replace, in place, every use of each file-scope ``const`` scalar with a value by that
    value (see the module docstring), and drop its declaration."""
    types = Types(src)
    values: dict[str, Any] = {}
    kept: list[Any] = []
    for ext in src.ast.ext:
        _enumerators(ext, values)
        if _is_constant(ext):
            _substitute(ext, values, set())
            value = _value(src, types, ext, values)
            if value is not None:
                values[ext.name] = value
                continue
        if values:
            _substitute(ext, values, _own_names(ext) if isinstance(ext, c_ast.FuncDef) else set())
        if isinstance(ext, c_ast.FuncDef):
            _function_enumerators(ext)
        kept.append(ext)
    src.ast.ext = kept


def _enumerators(ext: Any, values: dict[str, Any]) -> None:
    """Add the enumerators ``ext`` declares (an ``enum`` declaration, a variable or a
    typedef of an ``enum`` type) whose values fold to ``values``, as ``int`` literals."""
    if not isinstance(ext, (c_ast.Decl, c_ast.Typedef)):
        return
    for enum in nodes(ext.type):
        if not isinstance(enum, c_ast.Enum) or enum.values is None:
            continue
        number: int | None = -1
        for item in enum.values.enumerators:
            if item.value is not None:
                _substitute(item, values, set())
                number = _fold(item.value)
            elif number is not None:
                number += 1
            if number is None:
                return  # not folded: this one and the next stay undeclared names
            values[item.name] = _literal(number, "", "int", 32, item)


def _function_enumerators(fn: Any) -> None:
    """The enumerators a function declares (``enum { K = 2 };`` in its body) substituted in
    its body as file-scope ones are, and their declarations dropped."""
    values: dict[str, Any] = {}
    for block in nodes(fn.body):
        if not isinstance(block, c_ast.Compound) or not block.block_items:
            continue
        for item in block.block_items:
            _enumerators(item, values)
        block.block_items = [
            item
            for item in block.block_items
            if not (isinstance(item, c_ast.Decl) and item.name is None)
            or not isinstance(item.type, c_ast.Enum)
        ]
    if values:
        _substitute(fn.body, values, set())


def _is_constant(ext: Any) -> bool:
    return (
        isinstance(ext, c_ast.Decl)
        and bool(ext.name)
        and "const" in (ext.quals or [])
        and ext.init is not None
        and isinstance(ext.type, c_ast.TypeDecl)
        and "extern" not in (ext.storage or [])
    )


def _value(src: Source, types: Types, decl: Any, values: dict[str, Any]) -> Any | None:
    """The node that stands for the constant ``decl`` (None: left as a variable)."""
    try:
        base = types.var(decl, "global").base
    except ParseError:
        return None
    if base in FLOATING:
        to = c_ast.Typename(
            None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType([base]))
        )
        return located(c_ast.Cast(to, decl.init), decl.init)
    number = _fold(decl.init)
    if number is None:
        return None
    if base in _WIDTH:  # C converts it to its type, and promotes it to int where it is read
        bits = _WIDTH[base]
        number %= 1 << bits
        if not base.startswith("u") and number >= 1 << (bits - 1):
            number -= 1 << bits
        return _literal(number, "", "int", 32, decl.init)
    suffix, kind, bits, signed = _LITERAL.get(base, _LITERAL["int64_t"])
    number %= 1 << bits
    if signed and number >= 1 << (bits - 1):
        number -= 1 << bits
    return _literal(number, suffix, kind, bits, decl.init)


def _literal(number: int, suffix: str, kind: str, bits: int, where: Any) -> Any:
    if number == -(1 << (bits - 1)):  # INT_MIN is -2147483647 - 1: 2147483648 is a long
        inner = c_ast.Constant(kind, f"{-number - 1}{suffix}")
        one = c_ast.Constant(kind, f"1{suffix}")
        return located(c_ast.BinaryOp("-", c_ast.UnaryOp("-", inner), one), where)
    if number < 0:
        return located(c_ast.UnaryOp("-", c_ast.Constant(kind, f"{-number}{suffix}")), where)
    return located(c_ast.Constant(kind, f"{number}{suffix}"), where)


def _fold(node: Any) -> int | None:
    """The value of an integer constant expression of literals and ``+ - * / % << >>`` (C's
    truncating division), or None."""
    if isinstance(node, c_ast.Constant) and node.type in INT_LITERALS:
        return c_integer(node.value)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        inner = _fold(node.expr)
        return None if inner is None else (-inner if node.op == "-" else inner)
    if isinstance(node, c_ast.BinaryOp):
        a, b = _fold(node.left), _fold(node.right)
        if a is None or b is None:
            return None
        if node.op in ("/", "%"):
            if b == 0:
                return None
            q, r = c_div(a, b)
            return q if node.op == "/" else r
        ops = {"+": a + b, "-": a - b, "*": a * b}
        if node.op in ("<<", ">>") and 0 <= b < 64:
            return a << b if node.op == "<<" else a >> b
        return ops.get(node.op)
    return None


def _own_names(fn: Any) -> set[str]:
    """The names a function declares itself (parameters, locals): they hide a constant."""
    out = {d.name for d in nodes(fn.body) if isinstance(d, c_ast.Decl) and d.name}
    args = fn.decl.type.args
    for p in args.params if args is not None else []:
        if getattr(p, "name", None):
            out.add(p.name)
    return out


def _substitute(node: Any, values: dict[str, Any], hidden: set[str]) -> None:
    def one(n: Any) -> Any | None:
        if isinstance(n, c_ast.ID) and n.name in values and n.name not in hidden:
            return located(clone(values[n.name]), n)
        return None

    map_nodes(node, one)


__all__ = ["substitute_file_constants"]
