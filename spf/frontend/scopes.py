"""C's block scopes, which the import's flat name table does not have: a local declared in an
inner block with the name of a local still in scope (``double t = 1.0; for (...) { double
t = x[i]; ... } y[0] = t;``) is another variable, so it gets a fresh name (``t_``) here,
before the survey; otherwise both would be one data space and the outer ``t`` would read the
inner one's last value. Declarations in sibling blocks do not overlap and keep their name,
unless their types differ (``for (int i ...)`` then ``for (long i ...)``, ``double t`` in one
loop and ``float t`` in the next): one name is one data space of one type, so the later one
is renamed too."""

from __future__ import annotations

from typing import Any

from spf.frontend.cparse import c_ast
from spf.frontend.rewrite import fresh, identifiers


def rename_shadowing_locals(src_ast: Any, fn: Any) -> dict[str, str]:
    """Rename, in place, each local of ``fn`` declared where a local of the same name is in
    scope, and the uses its declaration reaches; returns ``{new name: C name}``."""
    taken = identifiers(src_ast)
    renamed: dict[str, str] = {}
    _Scopes(taken, renamed).block(list(fn.body.block_items or []), [{}])
    return renamed


class _Scopes:
    def __init__(self, taken: set[str], renamed: dict[str, str]) -> None:
        self.taken = taken
        self.renamed = renamed
        self.types: dict[str, str] = {}  # the type of each name's first declaration

    def block(self, items: list[Any], env: list[dict[str, str]]) -> None:
        env = [*env, {}]
        for item in items:
            self.visit(item, env)

    def visit(self, node: Any, env: list[dict[str, str]]) -> None:
        if node is None:
            return
        if isinstance(node, c_ast.Compound):
            self.block(list(node.block_items or []), env)
        elif isinstance(node, c_ast.For):
            inner = [*env, {}]  # the header's declarations are in scope in the body
            for part in (node.init, node.cond, node.next, node.stmt):
                self.visit(part, inner)
        elif (
            isinstance(node, c_ast.Decl) and node.name and not isinstance(node.type, c_ast.FuncDecl)
        ):
            self.visit(node.type, env)  # extents (double z[n]) are read where declared
            self.declare(node, env)
            self.visit(node.init, env)
        elif isinstance(node, c_ast.ID):
            for scope in reversed(env):
                if node.name in scope:
                    node.name = scope[node.name]
                    break
        elif isinstance(node, c_ast.FuncCall):
            self.visit(node.args, env)  # not the called function's name
        elif isinstance(node, c_ast.StructRef):
            self.visit(node.name, env)  # not the field's name
        else:
            for _, child in node.children():
                self.visit(child, env)

    def declare(self, node: Any, env: list[dict[str, str]]) -> None:
        name = node.name
        kind = _type_text(node.type)
        first = self.types.setdefault(name, kind)
        if any(name in scope for scope in env[:-1]) or first != kind:
            new = fresh(name, self.taken)
            self.renamed[new] = name
            node.name = new
            t = node.type
            while not isinstance(t, c_ast.TypeDecl) and getattr(t, "type", None) is not None:
                t = t.type
            if isinstance(t, c_ast.TypeDecl):
                t.declname = new
        env[-1][name] = node.name


def _type_text(t: Any) -> str:
    """A declaration's type without its name: ``*``/``[]`` for each level and the words of
    the element type (extents and qualifiers aside: they make no other data space)."""
    out = []
    while not isinstance(t, c_ast.TypeDecl) and getattr(t, "type", None) is not None:
        out.append("[]" if isinstance(t, c_ast.ArrayDecl) else "*")
        t = t.type
    words = getattr(getattr(t, "type", None), "names", None)
    return " ".join([*(words or ["?"]), *out])


__all__ = ["rename_shadowing_locals"]
