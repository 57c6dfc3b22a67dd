"""The syntax side of induction variables (docs/import_c.md, :mod:`spf.frontend.induction`):
``y[k++] = e;`` split into ``y[k] = e; k += 1;``, the increment statements (``k++``,
``k += c``, ``k = k + c``), and which integer locals are induction variables: incremented and
read in a subscript or a loop header, and updated in no other way (else ``ParseError``
naming the variable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.frontend.cparse import Source, c_ast, nodes
from spf.frontend.decls import is_integer
from spf.frontend.rewrite import located, map_nodes, map_statements

if TYPE_CHECKING:
    from spf.frontend.exprs import Scope

_INCREMENTS = ("p++", "++", "p--", "--")


# ----------------------------------------------------------------------------- k++ in e
def split_increments(src: Source, body: Any, integers: set[str]) -> None:
    """``y[k++] = e;`` -> ``y[k] = e; k += 1;`` (``++k``: the increment first), in place, for
    the integer scalars ``integers``; refused where C leaves the order open."""

    def one(s: Any) -> list[Any] | None:
        if isinstance(s, c_ast.Decl) and s.init is not None:
            root, holder, attr = s.init, s, "init"
        elif isinstance(s, c_ast.Assignment):
            root, holder, attr = s, None, ""
        else:
            return None
        found = [
            n
            for n in nodes(root)
            if isinstance(n, c_ast.UnaryOp)
            and n.op in _INCREMENTS
            and isinstance(n.expr, c_ast.ID)
            and n.expr.name in integers
        ]
        if not found:
            return None
        before: list[Any] = []
        after: list[Any] = []
        for inc in found:
            name = inc.expr.name
            uses = [n for n in nodes(s) if isinstance(n, c_ast.ID) and n.name == name]
            if len(uses) > 1:
                raise src.error(
                    inc,
                    f"{name!r} is incremented and used again in the same statement (C leaves "
                    "their order open)",
                    "increment it in a statement of its own",
                )
            step = c_ast.Assignment(
                "+=" if "+" in inc.op else "-=", c_ast.ID(name), c_ast.Constant("int", "1")
            )
            (after if inc.op.startswith("p") else before).append(located(step, inc))
        _replace(root, holder, attr, {id(n): n.expr for n in found})
        return [*before, s, *after]

    map_statements(body, one)


def _replace(root: Any, holder: Any, attr: str, table: dict[int, Any]) -> None:
    if holder is not None and id(getattr(holder, attr)) in table:
        setattr(holder, attr, table[id(getattr(holder, attr))])
        return
    map_nodes(root, lambda n: table.get(id(n)))


# ----------------------------------------------------------------------------- which names
def increment(node: Any, name: str | None = None) -> Any | None:
    """The amount (AST, negated for ``-=``) when ``node`` is an increment statement of
    ``name`` (any name when None): ``v++``, ``v += c``, ``v = v + c``..."""
    if isinstance(node, c_ast.UnaryOp) and node.op in _INCREMENTS:
        if isinstance(node.expr, c_ast.ID) and name in (None, node.expr.name):
            one = located(c_ast.Constant("int", "1"), node)
            return one if "+" in node.op else located(c_ast.UnaryOp("-", one), node)
        return None
    if not isinstance(node, c_ast.Assignment) or not isinstance(node.lvalue, c_ast.ID):
        return None
    v = node.lvalue.name
    if name not in (None, v):
        return None
    if node.op in ("+=", "-="):
        return node.rvalue if node.op == "+=" else located(c_ast.UnaryOp("-", node.rvalue), node)
    rv = node.rvalue
    if node.op == "=" and isinstance(rv, c_ast.BinaryOp) and rv.op in ("+", "-"):
        if isinstance(rv.left, c_ast.ID) and rv.left.name == v:
            return rv.right if rv.op == "+" else located(c_ast.UnaryOp("-", rv.right), node)
        if rv.op == "+" and isinstance(rv.right, c_ast.ID) and rv.right.name == v:
            return rv.left
    return None


def candidates(src: Source, body: Any, scope: Scope) -> set[str]:
    """The integer locals that are induction variables: incremented, and read in a
    subscript or a loop header; any other update of one is refused, naming it."""
    incremented: set[str] = set()
    for n in nodes(body):
        amount = increment(n)
        if amount is not None:
            incremented.add(n.expr.name if isinstance(n, c_ast.UnaryOp) else n.lvalue.name)
    out: set[str] = set()
    for name in sorted(incremented):
        var = scope.vars.get(name)
        if var is None or var.rank or var.role != "local" or not is_integer(var.base):
            continue
        if name in scope.iterators or not _indexes(body, name):
            continue
        _check_updates(src, body, scope, name)
        out.add(name)
    return out


def _indexes(body: Any, name: str) -> bool:
    """``name`` is read in a subscript or a loop header under ``body``."""
    for n in nodes(body):
        parts = [n.subscript] if isinstance(n, c_ast.ArrayRef) else []
        if isinstance(n, c_ast.For):
            parts = [n.init, n.cond, n.next]
        if any(isinstance(m, c_ast.ID) and m.name == name for p in parts for m in nodes(p)):
            return True
    return False


def _check_updates(src: Source, body: Any, scope: Scope, name: str) -> None:
    for n in nodes(body):
        target = None
        if isinstance(n, c_ast.Assignment):
            target = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in _INCREMENTS:
            target = n.expr
        if not (isinstance(target, c_ast.ID) and target.name == name):
            continue
        amount = increment(n, name)
        if amount is None and not (isinstance(n, c_ast.Assignment) and n.op == "="):
            raise src.error(
                n,
                f"{name!r} is read in a subscript or a loop bound and updated by '{n.op}', "
                "which has no closed form",
                f"update it only by {name} = e, {name} += c, {name}++ (c a constant or a "
                "parameter)",
            )
        if amount is not None and any(
            isinstance(m, c_ast.ID) and m.name not in scope.consts for m in nodes(amount)
        ):
            raise src.error(
                n,
                f"{name!r} is read in a subscript or a loop bound and incremented by an "
                "amount that is not a constant or an integer parameter",
                "increment it by a constant (or compute the index from the loop counters)",
            )


def writes(node: Any, name: str) -> bool:
    """``node`` assigns or increments the variable ``name``."""
    target = None
    if isinstance(node, c_ast.Assignment):
        target = node.lvalue
    elif isinstance(node, c_ast.UnaryOp) and node.op in _INCREMENTS:
        target = node.expr
    return isinstance(target, c_ast.ID) and target.name == name
