"""Small rewrites of the pycparser tree shared by the passes that run before the survey:
renaming variables (callee names get a prefix when inlined, locals named like spf's own
names get a suffix), fresh names, and locating new nodes at an old node's coordinates."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from spf.clang import isl_reserved, reserved_reason
from spf.frontend.cparse import c_ast, nodes


def clone(node: Any) -> Any:
    """A deep copy of ``node`` (its coordinates kept, for errors)."""
    return copy.deepcopy(node)


def rename(node: Any, mapping: Mapping[str, str]) -> None:
    """Rename, in place, the variables of ``mapping`` under ``node``: identifiers (not the
    names of called functions) and declarations."""
    if not mapping:
        return
    called = {id(n.name) for n in nodes(node) if isinstance(n, c_ast.FuncCall)}
    for n in nodes(node):
        if isinstance(n, c_ast.ID) and n.name in mapping and id(n) not in called:
            n.name = mapping[n.name]
        elif isinstance(n, c_ast.Decl) and n.name in mapping:
            n.name = mapping[n.name]
            t = n.type
            while not isinstance(t, c_ast.TypeDecl) and getattr(t, "type", None) is not None:
                t = t.type
            if isinstance(t, c_ast.TypeDecl):
                t.declname = n.name


def c_name(name: str) -> str:
    """The name as the C source spells it: an inlined callee's local without its ``_i<N>_``
    prefix (for messages)."""
    return re.sub(r"^_i[0-9]+_", "", name)


def fresh(base: str, taken: set[str]) -> str:
    """``base`` followed by as many ``_`` as make it new; the result joins ``taken``."""
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def identifiers(node: Any) -> set[str]:
    """Every name declared or used under ``node``."""
    out: set[str] = set()
    for n in nodes(node):
        if isinstance(n, c_ast.ID) or (isinstance(n, c_ast.Decl) and n.name):
            out.add(n.name)
    return out


def declared(body: Any) -> list[Any]:
    """The declarations under ``body`` (locals, and loop variables declared in headers)."""
    return [n for n in nodes(body) if isinstance(n, c_ast.Decl) and n.name]


def loop_variables(body: Any) -> set[str]:
    out: set[str] = set()
    for n in nodes(body):
        if not isinstance(n, c_ast.For):
            continue
        if isinstance(n.init, c_ast.DeclList):
            out.update(d.name for d in n.init.decls)
        elif isinstance(n.init, c_ast.Assignment) and isinstance(n.init.lvalue, c_ast.ID):
            out.add(n.init.lvalue.name)
    return out


def usable(name: str, *, in_sets: bool) -> bool:
    """``name`` can name a local data space (``in_sets``: a loop, which sets also name)."""
    if reserved_reason(name) is not None or re.fullmatch(r"t[0-9]+", name):
        return False
    return not (in_sets and isl_reserved(name))


def rename_reserved_locals(fn: Any, taken: Iterable[str]) -> dict[str, str]:
    """Give the locals of ``fn`` whose C names spf's generated code cannot use (``t0``,
    ``new``, ``exp``, ``spf_x``...; also ``min``/``max`` for a loop) a trailing ``_``;
    returns the renaming."""
    loops = loop_variables(fn.body)
    local = {d.name for d in declared(fn.body)} | loops
    bad = sorted(n for n in local if not usable(n, in_sets=n in loops))
    names = set(taken) | identifiers(fn)
    mapping: dict[str, str] = {}
    for n in bad:
        sets = n in loops
        new = n + "_" if usable(n + "_", in_sets=sets) else "v" + n.lstrip("_")
        while new in names or not usable(new, in_sets=sets):
            new += "_"
        names.add(new)
        mapping[n] = new
    rename(fn.body, mapping)
    return mapping


_SLOTS = {
    "If": ("iftrue", "iffalse"),
    "For": ("stmt",),
    "While": ("stmt",),
    "DoWhile": ("stmt",),
    "Switch": ("stmt",),
    "Label": ("stmt",),
}
_LISTS = {"Compound": "block_items", "Case": "stmts", "Default": "stmts"}


def map_statements(node: Any, fn: Callable[[Any], list[Any] | None]) -> None:
    """Replace, in place and innermost first, every statement ``s`` under ``node`` for which
    ``fn(s)`` gives a list of statements by that list (several statements in the place of one,
    an ``if`` arm or a loop body, become a block)."""
    kind = type(node).__name__
    for attr in _SLOTS.get(kind, ()):
        child = getattr(node, attr)
        if child is None:
            continue
        map_statements(child, fn)
        new = fn(child)
        if new is not None:
            setattr(node, attr, new[0] if len(new) == 1 else located(c_ast.Compound(new), child))
    if kind in _LISTS:
        items: list[Any] = []
        for child in getattr(node, _LISTS[kind]) or []:
            map_statements(child, fn)
            new = fn(child)
            items.extend([child] if new is None else new)
        setattr(node, _LISTS[kind], items)


def map_nodes(node: Any, fn: Callable[[Any], Any | None]) -> None:
    """Replace, in place and outermost first, every node ``n`` strictly under ``node`` for
    which ``fn(n)`` is not None by ``fn(n)`` (whose own children are then visited)."""
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr)
        if isinstance(value, c_ast.Node):
            new = fn(value)
            if new is not None:
                setattr(node, attr, value := new)
            map_nodes(value, fn)
        elif isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, c_ast.Node):
                    new = fn(item)
                    if new is not None:
                        value[k] = item = new
                    map_nodes(item, fn)


def located(new: Any, old: Any) -> Any:
    """``new`` and every node under it without coordinates take ``old``'s."""
    coord = getattr(old, "coord", None)
    for n in nodes(new):
        if getattr(n, "coord", None) is None:
            n.coord = coord
    return new


__all__ = [
    "c_name",
    "clone",
    "declared",
    "fresh",
    "identifiers",
    "located",
    "loop_variables",
    "map_nodes",
    "map_statements",
    "rename",
    "rename_reserved_locals",
    "usable",
]
