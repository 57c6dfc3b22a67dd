"""Locals private to a loop (``add_local(..., private="i")``) in the loop tree: each is
declared at the start of the body of its loop (:func:`spf.analysis.private.private_position`),
so every iteration, and every thread of a parallel loop, has its own zeroed copy. Code
that isl took out of the loops (the remainder of a split or vectorized loop, scanned as
straight-line code) gets one copy per iteration it runs."""

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
    from spf.ir.reading import iterator_names

    decls = []
    for ds in ir.data_spaces:
        if ds.private is None:
            continue
        name = ds.name
        pos = private_position(ir, name)
        if pos is None:
            continue  # no statement uses it
        found = users(ir, name)
        stmts = frozenset(s.name for s in found)
        at = {
            s.name: iterator_names(s.domain).index(ds.private)
            for s in found
            if ds.private in iterator_names(s.domain)
        }
        body = _wrap(body, pos, stmts, name, at)
        _check_declared(body, pos, at, name, ds.private)
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


def _check_declared(n: Node, pos: int, at: dict[str, int], local: str, loop: str) -> None:
    """Every statement of ``local`` runs where a copy of it is declared, and a piece that
    isl took out of the loops at ``pos`` (the last iteration of a loop whose bound is a
    ``max``, scanned apart) is whole iterations: its calls run at one value of ``loop``
    and include every statement the loops run, so no instance of that iteration is left in
    a loop with another copy. Else (``if (n >= 1) s1(0);`` before ``for (i ...)`` whose
    ``s2(0)`` reads what ``s1(0)`` wrote) a ``CodegenError`` names the statements."""
    in_loops = {c.stmt for c in _under_loops(n, pos) if c.stmt in at}
    bad = {c.stmt for c in _outside(n, frozenset(at), local)}
    for piece in _pieces(n, pos, local) if in_loops else []:  # no loop: one copy, as before
        calls = [c for c in walk(piece) if isinstance(c, Call) and c.stmt in at]
        values = {c.args[: at[c.stmt] + 1] for c in calls}
        kinds = {c.stmt for c in calls}
        if len(values) > 1 or not kinds >= in_loops:
            bad |= kinds
    if bad:
        raise CodegenError(
            f"private local {local!r}: statement(s) {', '.join(sorted(bad))} run outside loop "
            f"{loop!r} in the generated code (isl took their iteration of {loop!r} out of the "
            "loop apart from the other statements of that iteration), so they cannot share "
            f"the copy of that iteration; declare {local!r} without private= (one copy for the "
            f"whole loop), or give those statements a range of {loop!r} rather than a single "
            "value"
        )


def _under_loops(n: Node, pos: int) -> list[Call]:
    return [
        c
        for f in walk(n)
        if isinstance(f, For) and f.position <= pos
        for c in walk(f)
        if isinstance(c, Call)
    ]


def _pieces(n: Node, pos: int, local: str) -> list[Alloc]:
    """The copies of ``local`` declared around code without a loop at ``pos`` or outside."""
    return [
        a
        for a in walk(n)
        if isinstance(a, Alloc)
        and a.buffer == local
        and not any(isinstance(f, For) and f.position <= pos for f in walk(a.body))
    ]


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


def _wrap(n: Node, pos: int, stmts: frozenset[str], local: str, at: dict[str, int]) -> Node:
    """Declare ``local`` in the body of each innermost loop at position ``pos`` or outside it
    that holds its statements (a loop the scanner left out runs once per iteration of the
    loop around it: the copy per iteration is the same); at the top when there is none."""
    if not _loop_within(n, pos, stmts):
        return _per_iteration(n, stmts, local, at) if _has(n, stmts) else n
    return _descend(n, pos, stmts, local, at)


def _descend(n: Node, pos: int, stmts: frozenset[str], local: str, at: dict[str, int]) -> Node:
    if isinstance(n, Block):
        return _block(n, pos, stmts, local, at)
    if isinstance(n, For):
        if n.position > pos or not _has(n, stmts):
            return n
        if _loop_within(n.body, pos, stmts):
            return replace(n, body=_descend(n.body, pos, stmts, local, at))
        return replace(n, body=Alloc(local, n.body))
    if isinstance(n, If):
        orelse = None if n.orelse is None else _item(n.orelse, pos, stmts, local, at)
        return If(n.cond, _item(n.then, pos, stmts, local, at), orelse)
    if isinstance(n, (Bind, Alloc)):
        return replace(n, body=_descend(n.body, pos, stmts, local, at))
    return n


def _item(n: Node, pos: int, stmts: frozenset[str], local: str, at: dict[str, int]) -> Node:
    """``n`` placed as :func:`_descend` does; statements of ``local`` that isl took out of its
    loops (a piece without the loop) get a copy of their own (checked whole iterations)."""
    if _has(n, stmts) and not _loop_within(n, pos, stmts):
        return _per_iteration(n, stmts, local, at)
    return _descend(n, pos, stmts, local, at)


def _block(n: Block, pos: int, stmts: frozenset[str], local: str, at: dict[str, int]) -> Block:
    """:func:`_descend` of a block: consecutive items that isl took out of the loops
    (``{ s0(4 + 5 * i0); }`` then ``{ s1(4 + 5 * i0); }``, one iteration scanned as two
    pieces, maybe in nested blocks) are placed together, so that one iteration's statements
    share one copy."""
    items: list[Node] = []
    pending: list[Node] = []
    for item in _flat(n):
        if _has(item, stmts) and not _loop_within(item, pos, stmts):
            pending.append(item)
            continue
        if pending and not _has(item, stmts):
            pending.append(item)
            continue
        if pending:
            items.append(_per_iteration(Block(tuple(pending)), stmts, local, at))
            pending = []
        items.append(_descend(item, pos, stmts, local, at))
    if pending:
        items.append(_per_iteration(Block(tuple(pending)), stmts, local, at))
    return Block(tuple(items))


def _flat(n: Block) -> list[Node]:
    """The items of ``n`` with nested blocks spliced in (a block only sequences its items)."""
    return [x for item in n.items for x in (_flat(item) if isinstance(item, Block) else [item])]


def _iterations(n: Node, at: dict[str, int]) -> set[tuple[object, ...]]:
    """The iterations of the private loop (values of the iterators up to it) ``n`` runs."""
    return {c.args[: at[c.stmt] + 1] for c in walk(n) if isinstance(c, Call) and c.stmt in at}


def _per_iteration(n: Node, stmts: frozenset[str], local: str, at: dict[str, int]) -> Node:
    """``n``, code without a loop at the private position, with a copy of ``local`` around
    each run of it that belongs to one iteration: a split loop's remainder scanned as
    straight-line code (``if (i0 == 0) { s0(1); s1(1); } s0(2 + 3 * i0); s1(2 + 3 *
    i0);``) holds two iterations, which must not share a copy. A node that mixes
    iterations otherwise keeps one copy, which :func:`_check_declared` refuses."""
    if len(_iterations(n, at)) <= 1:
        return Alloc(local, n)
    if isinstance(n, If):
        orelse = None if n.orelse is None else _per_iteration(n.orelse, stmts, local, at)
        return If(n.cond, _per_iteration(n.then, stmts, local, at), orelse)
    if not isinstance(n, Block):
        return Alloc(local, n)
    items: list[Node] = []
    run: list[Node] = []
    key: set[tuple[object, ...]] = set()

    def flush() -> None:
        if run:
            block = Block(tuple(run))
            items.append(Alloc(local, block) if _has(block, stmts) else block)
            run.clear()

    for item in _flat(n):
        found = _iterations(item, at)
        if len(found) > 1:
            flush()
            items.append(_per_iteration(item, stmts, local, at))
            continue
        if found and key and found != key:
            flush()
        run.append(item)
        key = found or key
    flush()
    return Block(tuple(items))
