"""``do { ... } while (0)``, the idiom that makes a macro of several statements one statement,
read as its block: it runs once. A ``break`` or ``continue`` of that do-while itself would
leave it early, so such a one stays a do-while (which the walker refuses)."""

from __future__ import annotations

from typing import Any

from spf.frontend.cparse import Source, c_ast, c_integer
from spf.frontend.rewrite import map_statements


def lower_do_once(src: Source) -> None:
    """Replace, in every function of ``src``, each ``do S while (0);`` by ``S``."""
    for ext in src.ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            map_statements(ext.body, _once)


def _once(node: Any) -> list[Any] | None:
    if not isinstance(node, c_ast.DoWhile) or not _is_zero(node.cond):
        return None
    if _exits(node.stmt, in_switch=False):
        return None
    return [node.stmt]


def _is_zero(node: Any) -> bool:
    return isinstance(node, c_ast.Constant) and node.type == "int" and c_integer(node.value) == 0


def _exits(node: Any, *, in_switch: bool) -> bool:
    """Whether ``node`` holds a ``break`` or ``continue`` of the enclosing do-while (not of a
    loop or, for ``break``, a ``switch`` inside it)."""
    if node is None or isinstance(node, c_ast.For | c_ast.While | c_ast.DoWhile):
        return False
    if isinstance(node, c_ast.Continue):
        return True
    if isinstance(node, c_ast.Break):
        return not in_switch
    inside = in_switch or isinstance(node, c_ast.Switch)
    return any(_exits(child, in_switch=inside) for _, child in node.children())
