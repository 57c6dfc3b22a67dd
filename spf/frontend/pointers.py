"""Pointer aliases of arrays (docs/import_c.md): ``double *p = &a[off];``, ``p = a + off;``,
``double *row = A[i];`` or ``double *s = &t;`` (a scalar) bind ``p`` to a place in an array,
and ``p[i]`` then reads ``a[off + i]`` (``row[j]``: ``A[i][j]``, ``*s``/``s[0]``: ``t``). The
offset and fixed subscripts must be affine where the pointer is bound (iterators, integer
parameters, index arrays), so they mean the same wherever the pointer is used. A pointer that
moves (``p++``, a second assignment) is pointer arithmetic and refused."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.frontend.cparse import c_ast, nodes
from spf.frontend.rewrite import located, map_nodes

if TYPE_CHECKING:
    from spf.frontend.exprs import Scope


@dataclass(frozen=True)
class PointerAlias:
    """Where a pointer points: into ``base`` at the fixed leading subscripts ``lead`` (AST),
    plus ``offset`` (AST or None) on the first subscript taken through the pointer; a
    ``scalar`` alias points at the 0-d ``base`` itself."""

    base: str
    lead: tuple[Any, ...] = ()
    offset: Any = None
    scalar: bool = False

    def shifted(self, by: Any) -> PointerAlias:
        offset = by if self.offset is None else c_ast.BinaryOp("+", self.offset, by)
        return PointerAlias(self.base, self.lead, located(offset, by), self.scalar)


def lower_derefs(body: Any) -> None:
    """``*p`` (``p`` a name) reads ``p[0]``: rewritten so, in place, before the survey."""

    def one(node: Any) -> Any | None:
        if isinstance(node, c_ast.UnaryOp) and node.op == "*" and isinstance(node.expr, c_ast.ID):
            return located(c_ast.ArrayRef(node.expr, c_ast.Constant("int", "0")), node)
        return None

    map_nodes(body, one)


def root(node: Any, is_pointer: Callable[[str], bool]) -> str | None:
    """The variable a pointer expression points into (``&a[k]``, ``a + k``, ``A[i]``,
    ``&t``: ``a``, ``A``, ``t``), found syntactically; None when there is none."""
    while True:
        if isinstance(node, c_ast.Cast) or (isinstance(node, c_ast.UnaryOp) and node.op == "&"):
            node = node.expr
        elif isinstance(node, c_ast.ArrayRef):
            node = node.name
        elif isinstance(node, c_ast.BinaryOp) and node.op in "+-":
            left = root(node.left, is_pointer)
            if left is not None and is_pointer(left):
                return left
            return root(node.right, is_pointer) if node.op == "+" else None
        elif isinstance(node, c_ast.ID):
            return str(node.name)
        else:
            return None


def bind(scope: Scope, name: str, rank: int, value: Any) -> PointerAlias:
    """The alias that ``T *name = value;`` (``name`` of ``rank`` dimensions) binds."""
    alias = _pointee(scope, value, name)
    mine, theirs = scope.vars[name].base, scope.vars[alias.base].base
    if mine != theirs:
        raise scope.fail(
            value,
            f"pointer {name!r} to {mine} points into {alias.base!r} of element type {theirs}",
            "declare the pointer with the element type of the array it points into",
        )
    width = 1 if alias.scalar else scope.vars[alias.base].rank - len(alias.lead)
    if width != rank:
        raise scope.fail(
            value,
            f"{name!r} has {rank} dimension(s) but points into {alias.base!r} with {width}",
            "point at an element (&a[i]), a row (A[i]) or a whole array of the same shape",
        )
    from spf.frontend.exprs import NotAffineError

    for part in (*alias.lead, *([alias.offset] if alias.offset is not None else [])):
        moving = [n for n in nodes(part) if isinstance(n, c_ast.ID) and n.name in scope.ivs]
        if moving:  # read where p is used, it would have that later value
            raise scope.fail(
                moving[0],
                f"pointer {name!r} points at an offset that reads {moving[0].name!r}, which "
                "changes (an induction variable): the place would move with it",
                f"subscript {alias.base!r} itself where the pointer is used, before the "
                f"variable changes ({alias.base}[{moving[0].name} + ...])",
            )
        try:
            scope.affine(part)
        except NotAffineError as err:
            raise scope.fail(
                err.node,
                f"pointer {name!r} points at a place that is not affine ({err.why})",
                "offsets may use loop variables, integer parameters and index arrays",
            ) from None
    return alias


def _pointee(scope: Scope, node: Any, name: str) -> PointerAlias:
    if isinstance(node, c_ast.Cast):
        return _pointee(scope, node.expr, name)
    found: PointerAlias | None = None
    if isinstance(node, c_ast.ID):
        var = scope.vars.get(node.name)
        found = scope.pointers.get(node.name)
        if found is None and var is not None and var.rank:
            found = PointerAlias(node.name)
    elif isinstance(node, c_ast.BinaryOp) and node.op in "+-":
        found = _moved(scope, node, name)
    elif isinstance(node, c_ast.UnaryOp) and node.op == "&":
        found = _address(scope, node.expr)
    elif isinstance(node, c_ast.ArrayRef):
        base, subs = resolve_partial(scope, node)
        if base is not None and len(subs) < scope.vars[base].rank:
            found = PointerAlias(base, tuple(subs))
    if found is None:
        raise scope.fail(
            node,
            f"pointer {name!r} must point into an array: &a[off], a + off, A[i] or &t",
            "spf reads pointers that alias a place of an array (pointer arithmetic is refused)",
        )
    return found


def _moved(scope: Scope, node: Any, name: str) -> PointerAlias | None:
    """``p + k``, ``k + p``, ``p - k``."""
    if _points(scope, node.left):
        by = node.right if node.op == "+" else located(c_ast.UnaryOp("-", node.right), node)
        return _flat(scope, _pointee(scope, node.left, name), node).shifted(by)
    if node.op == "+" and _points(scope, node.right):
        return _flat(scope, _pointee(scope, node.right, name), node).shifted(node.left)
    return None


def _address(scope: Scope, inner: Any) -> PointerAlias | None:
    """``&t`` (a scalar) or ``&a[i][k]`` (an element)."""
    if isinstance(inner, c_ast.ID) and inner.name in scope.vars:
        return PointerAlias(inner.name, scalar=True) if not scope.vars[inner.name].rank else None
    if isinstance(inner, c_ast.ArrayRef):
        base, subs = resolve_partial(scope, inner)
        if base is not None and not subs:
            return PointerAlias(base, scalar=True)
        if base is not None and len(subs) == scope.vars[base].rank:
            return PointerAlias(base, tuple(subs[:-1]), subs[-1])
    return None


def _is_pointer(scope: Scope, name: str) -> bool:
    var = scope.vars.get(name)
    return name in scope.pointers or (var is not None and var.rank > 0)


def _points(scope: Scope, node: Any) -> bool:
    """``node`` is an expression of pointer type (an array name, alias, row or address)."""
    if isinstance(node, c_ast.Cast):
        return _points(scope, node.expr)
    if isinstance(node, c_ast.ID):
        return _is_pointer(scope, node.name)
    if isinstance(node, c_ast.UnaryOp) and node.op == "&":
        return True
    if isinstance(node, c_ast.ArrayRef):
        base, subs = resolve_partial(scope, node)
        return base is not None and len(subs) < scope.vars[base].rank
    if isinstance(node, c_ast.BinaryOp) and node.op in "+-":
        return _points(scope, node.left) or (node.op == "+" and _points(scope, node.right))
    return False


def _flat(scope: Scope, alias: PointerAlias, node: Any) -> PointerAlias:
    """``alias`` if adding an offset moves along one dimension (a 1-d view), else an error."""
    if alias.scalar or scope.vars[alias.base].rank - len(alias.lead) != 1:
        raise scope.fail(
            node,
            f"pointer arithmetic on {alias.base!r} across its dimensions",
            "add offsets only to pointers into one row (&A[i][0] + j) or a 1-d array",
        )
    return alias


def resolve_partial(scope: Scope, node: Any) -> tuple[str | None, list[Any]]:
    """``A[i][j]`` (some subscripts) -> ``("A", [i, j])`` through pointer aliases; the base
    is None when ``node`` does not subscript a named variable."""
    subs: list[Any] = []
    base = node
    while isinstance(base, c_ast.ArrayRef):
        subs.insert(0, base.subscript)
        base = base.name
    if not isinstance(base, c_ast.ID):
        return None, subs
    alias = scope.pointers.get(base.name)
    if alias is None:
        return (base.name if base.name in scope.vars else None), subs
    if not subs:
        return alias.base, list(alias.lead)
    if alias.scalar:
        if not _zero(subs[0]) or len(subs) > 1:
            raise scope.fail(node, f"{base.name!r} points at the scalar {alias.base!r}; use [0]")
        return alias.base, []
    first = subs[0]
    if alias.offset is not None and not _zero(alias.offset):
        add = c_ast.BinaryOp("+", alias.offset, first)
        first = alias.offset if _zero(first) else located(add, first)
    return alias.base, [*alias.lead, first, *subs[1:]]


def _zero(node: Any) -> bool:
    return isinstance(node, c_ast.Constant) and node.value == "0"


def roots(pointers: Mapping[str, str]) -> dict[str, str]:
    """Each pointer's final target through chains of pointers (``q = p + 1; p = a``)."""
    out: dict[str, str] = {}
    for name in pointers:
        seen = {name}
        target = pointers[name]
        while target in pointers and target not in seen:
            seen.add(target)
            target = pointers[target]
        out[name] = target
    return out
