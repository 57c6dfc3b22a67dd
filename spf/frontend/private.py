"""Which locals of the imported function are private to a loop (API.md section 15).

- A variable declared inside a loop body (``for (i ...) { double sum = b[i]; ... }``) is a
  new variable in each iteration: private to the innermost loop around its declaration.
- A function-level scalar declared without a value and used only inside a loop, that each
  iteration of the loop writes before it reads it (``sum = b[i];`` first), is privatized the
  same way, to the innermost such loop. Otherwise it stays shared.

The result names the loop by its variable (``add_local(..., private="i")``); a variable
declared in several loops of different names stays shared (sound: it then only carries more
dependences).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from spf.frontend.cparse import c_ast, nodes

if TYPE_CHECKING:
    from spf.frontend.decls import Var


def private_loops(body: Any, variables: dict[str, Var], iterators: Iterable[str]) -> dict[str, str]:
    """``{local: loop variable}`` for the locals of the function body ``body`` that are
    private to a loop (see the module docstring)."""
    skip = set(iterators)
    declared: dict[str, set[str | None]] = {}
    uses: dict[str, list[tuple[Any, ...]]] = {}
    _scan(body, (), declared, uses)
    out: dict[str, str] = {}
    for name, where in declared.items():
        var = variables.get(name)
        if var is None or var.role != "local" or name in skip:
            continue
        if None not in where:
            if len(where) == 1 and (var.rank == 0 or _constant_extents(var)):
                out[name] = next(iter(where)) or ""
            continue
        if var.rank or getattr(var.node, "init", None) is not None:
            continue  # a value given outside the loops: not privatizable
        loop = _written_first(name, uses.get(name, []))
        if loop is not None:
            out[name] = loop
    return {n: loop for n, loop in out.items() if loop}


def _constant_extents(var: Var) -> bool:
    return all(isinstance(d, c_ast.Constant) and d.type == "int" for d in var.dims)


def _scan(
    node: Any,
    loops: tuple[Any, ...],
    declared: dict[str, set[str | None]],
    uses: dict[str, list[tuple[Any, ...]]],
) -> None:
    """Record the innermost loop around each declaration and the loops around each use."""
    if node is None:
        return
    if isinstance(node, c_ast.Decl) and node.name:
        declared.setdefault(node.name, set()).add(_loop_var(loops[-1]) if loops else None)
    elif isinstance(node, c_ast.ID):
        uses.setdefault(node.name, []).append(loops)
    if isinstance(node, c_ast.For):
        for part in (node.init, node.cond, node.next):
            _scan(part, loops, declared, uses)
        _scan(node.stmt, (*loops, node), declared, uses)
        return
    for _, child in node.children():
        _scan(child, loops, declared, uses)


def _loop_var(loop: Any) -> str | None:
    init = loop.init
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1:
        return str(init.decls[0].name)
    if isinstance(init, c_ast.Assignment) and isinstance(init.lvalue, c_ast.ID):
        return str(init.lvalue.name)
    return None


def _written_first(name: str, uses: list[tuple[Any, ...]]) -> str | None:
    """The innermost loop around every use of ``name`` in each iteration of which ``name``
    is written before it is read; None when there is none."""
    if not uses:
        return None
    common = list(uses[0])
    for loops in uses[1:]:
        k = 0
        while k < min(len(common), len(loops)) and common[k] is loops[k]:
            k += 1
        del common[k:]
    for loop in reversed(common):
        ok, _ = _defined(loop.stmt, name, False)
        if ok:
            return _loop_var(loop)
    return None


def _reads(node: Any, name: str) -> bool:
    return any(isinstance(n, c_ast.ID) and n.name == name for n in nodes(node))


def _defined(node: Any, name: str, defined: bool) -> tuple[bool, bool]:
    """Run through ``node`` in program order: ``(no read of name before it is surely
    written, whether it is surely written afterwards)``, starting from ``defined``."""
    if node is None:
        return True, defined
    if isinstance(node, c_ast.Compound):
        for item in node.block_items or []:
            ok, defined = _defined(item, name, defined)
            if not ok:
                return False, defined
        return True, defined
    if isinstance(node, c_ast.Assignment):
        return _assignment(node, name, defined)
    if isinstance(node, c_ast.Decl):
        if node.init is None:
            return True, defined
        ok, defined = _defined(node.init, name, defined)
        return ok, defined or node.name == name
    if isinstance(node, c_ast.If | c_ast.For):
        return _control(node, name, defined)
    return defined or not _reads(node, name), defined


def _control(node: Any, name: str, defined: bool) -> tuple[bool, bool]:
    """``if``: surely written after it when both branches write it; ``for``: the body may
    run no iteration."""
    heads = (node.cond,) if isinstance(node, c_ast.If) else (node.init, node.cond, node.next)
    if not defined and any(_reads(part, name) for part in heads):
        return False, defined
    if isinstance(node, c_ast.For):
        return _defined(node.stmt, name, defined)[0], defined
    ok1, d1 = _defined(node.iftrue, name, defined)
    ok2, d2 = _defined(node.iffalse, name, defined)
    return ok1 and ok2, d1 and d2


def _assignment(node: Any, name: str, defined: bool) -> tuple[bool, bool]:
    """``a = e`` (``e`` run first; a chain ``a = b = e`` from the inside out)."""
    ok, defined = _defined(node.rvalue, name, defined)
    if not ok:
        return False, defined
    target = node.lvalue
    if isinstance(target, c_ast.ID) and target.name == name:
        if node.op != "=" and not defined:
            return False, defined  # a compound assignment reads it first
        return True, True
    return defined or not _reads(target, name), defined
