"""Locals private to a loop (``add_local(..., private="i")``) in the loop tree: each is
declared at the start of the body of its loop (:func:`spf.analysis.private.private_position`),
so every iteration, and every thread of a parallel loop, has its own zeroed copy."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from spf.codegen.loop_ast import Alloc, Bind, Block, Call, For, If, Node, walk
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import BufferDecl
    from spf.ir import ComputationIR


def place_private_locals(ir: ComputationIR, body: Node) -> tuple[Node, tuple[BufferDecl, ...]]:
    """``body`` with an :class:`Alloc` of each private local around the body of its loop,
    and the declarations of those locals (printed as zeroed stack arrays)."""
    from spf.analysis.private import private_position, users
    from spf.codegen.program import BufferDecl

    decls = []
    for ds in ir.data_spaces:
        if ds.private is None:
            continue
        name = ds.name
        pos = private_position(ir, name)
        if pos is None:
            continue  # no statement uses it
        stmts = frozenset(s.name for s in users(ir, name))
        body = _wrap(body, pos, stmts, name)
        _check_declared(body, stmts, name, ds.private)
        decls.append(
            BufferDecl(
                name=name,
                ctype=ds.type,  # a private local is an array, never the pointer form
                extents=tuple(str(d) for d in ds.shape or ()),
                scope="stack",
                argument=False,
                allocated_at=True,
                private=True,
            )
        )
    return body, tuple(decls)


def _check_declared(n: Node, stmts: frozenset[str], local: str, loop: str) -> None:
    """Every statement of ``stmts`` runs where ``local`` is declared: isl takes an instance
    at a single value of the loop out of it (``if (n >= 1) s1(0);`` before ``for (i ...)``
    when ``s1`` runs at ``i = 0`` only), and that instance would use no copy (the C did
    not compile) or another one than the loop's iteration 0."""
    outside = sorted({c.stmt for c in _outside(n, stmts, local)})
    if outside:
        raise CodegenError(
            f"private local {local!r}: statement(s) {', '.join(outside)} run outside loop "
            f"{loop!r} in the generated code (isl took their only iteration of {loop!r} out "
            f"of the loop), so they cannot share the copy of that iteration; declare {local!r} "
            f"without private= (one copy for the whole loop), or give those statements a range "
            f"of {loop!r} rather than a single value"
        )


def _outside(n: Node, stmts: frozenset[str], local: str) -> list[Call]:
    if isinstance(n, Alloc) and n.buffer == local:
        return []
    if isinstance(n, Call):
        return [n] if n.stmt in stmts else []
    if isinstance(n, Block):
        return [c for item in n.items for c in _outside(item, stmts, local)]
    if isinstance(n, (For, Bind, Alloc)):
        return _outside(n.body, stmts, local)
    if isinstance(n, If):
        other = [] if n.orelse is None else _outside(n.orelse, stmts, local)
        return _outside(n.then, stmts, local) + other
    return [c for c in walk(n) if isinstance(c, Call) and c.stmt in stmts]  # a Merge


def _has(n: Node, stmts: frozenset[str]) -> bool:
    return any(isinstance(c, Call) and c.stmt in stmts for c in walk(n))


def _loop_within(n: Node, pos: int, stmts: frozenset[str]) -> bool:
    """Whether a loop at position ``pos`` or outside it holds a statement of ``stmts``
    somewhere under ``n`` (``n`` included)."""
    return any(isinstance(c, For) and c.position <= pos and _has(c, stmts) for c in walk(n))


def _wrap(n: Node, pos: int, stmts: frozenset[str], local: str) -> Node:
    """Declare ``local`` in the body of each innermost loop at position ``pos`` or outside it
    that holds its statements (a loop the scanner left out runs once per iteration of the
    loop around it: the copy per iteration is the same); at the top when there is none."""
    if not _loop_within(n, pos, stmts):
        return Alloc(local, n) if _has(n, stmts) else n
    return _descend(n, pos, stmts, local)


def _descend(n: Node, pos: int, stmts: frozenset[str], local: str) -> Node:
    if isinstance(n, Block):
        return Block(tuple(_descend(item, pos, stmts, local) for item in n.items))
    if isinstance(n, For):
        if n.position > pos or not _has(n, stmts):
            return n
        if _loop_within(n.body, pos, stmts):
            return replace(n, body=_descend(n.body, pos, stmts, local))
        return replace(n, body=Alloc(local, n.body))
    if isinstance(n, If):
        orelse = None if n.orelse is None else _descend(n.orelse, pos, stmts, local)
        return If(n.cond, _descend(n.then, pos, stmts, local), orelse)
    if isinstance(n, (Bind, Alloc)):
        return replace(n, body=_descend(n.body, pos, stmts, local))
    return n
