"""A buffer allocated inside a loop (``buffer.allocate_at(stmt, level)``) gets a fresh copy
per iteration of that loop: the Alloc wraps the body of each loop the scanner built at the
loop's schedule position (:func:`spf.codegen.program._place_allocations`). The scanner may
build several loops there (full and partial tiles: one loop runs the copy of a
``cache_read`` for every tile, another the reader's partial last tile), and two of them may
run the *same* iteration. Each then allocates its own copy, and what one leaves in the buffer
for the other is lost: the reader of the partial tile read an uninitialized buffer.

:func:`check_split_iterations` proves that no two such loops run users of the buffer in one
iteration (the values of the loops at and around the allocation's position), with the sets
of :mod:`spf.codegen.verify`; a buffer it cannot prove this for is refused with a
``CodegenError`` that says where to allocate it instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from spf.codegen.loop_ast import Alloc, Bind, Block, For, If, Node
from spf.codegen.verify import _conj, _Guard, _render, _Site, _sites, _Step
from spf.errors import CodegenError
from spf.sets import Set

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.sets import UF


def check_split_iterations(
    ir: ComputationIR, body: Node, pos: int, users: set[str], what: str
) -> None:
    """Raise ``CodegenError`` (``what`` names the buffer and where it is allocated) unless
    the loops at schedule position ``pos`` in ``body`` that hold a statement of ``users``
    run those statements in pairwise different iterations (of the loops at positions up to
    ``pos``)."""
    from spf.analysis.bounds import call_context
    from spf.analysis.preconditions import parameter_text

    pieces = list(_pieces(body, (), pos, users))
    context = call_context(ir)
    given = () if context is None else (parameter_text(context),)
    ufs = ir.uf_decls
    dims = [f"_p{p}" for p in range(1, pos + 1, 2)]
    runs: list[Set] = []
    for prefix, loop in pieces:
        run: Set | None = None
        for site in _sites(loop, prefix):
            if site.stmt not in users:
                continue
            one = _iterations(site, pos, dims, ufs, given)
            run = one if run is None else run.union(one)
        if run is not None:
            runs.append(run)
    for a in range(len(runs)):
        for b in range(a + 1, len(runs)):
            if not runs[a].intersect(runs[b]).is_empty():
                raise CodegenError(
                    f"{what}, but the generated code splits that loop into several loops "
                    "(e.g. full and partial tiles) that run parts of one iteration each: a "
                    "copy allocated in each would lose the values one leaves for the other "
                    f"(both use it at {runs[a].intersect(runs[b])}); allocate it at an outer "
                    "loop or at spf.ROOT, or split or tile the statements that use it alike"
                )


def _pieces(
    n: Node, steps: tuple[_Step, ...], pos: int, users: set[str]
) -> Iterator[tuple[tuple[_Step, ...], For]]:
    """The loops at position ``pos`` under ``n`` holding a statement of ``users``, each
    with the steps of the path to it."""
    if isinstance(n, Block):
        for item in n.items:
            yield from _pieces(item, steps, pos, users)
    elif isinstance(n, For):
        if n.position == pos:
            if any(site.stmt in users for site in _sites(n, steps)):
                yield steps, n
            return
        yield from _pieces(n.body, (*steps, n), pos, users)
    elif isinstance(n, Bind):
        yield from _pieces(n.body, (*steps, n), pos, users)
    elif isinstance(n, Alloc):
        yield from _pieces(n.body, steps, pos, users)
    elif isinstance(n, If):
        yield from _pieces(n.then, (*steps, _Guard(n.cond, False)), pos, users)
        if n.orelse is not None:
            yield from _pieces(n.orelse, (*steps, _Guard(n.cond, True)), pos, users)


def _iterations(
    site: _Site, pos: int, dims: list[str], ufs: Mapping[str, UF], given: tuple[str, ...]
) -> Set:
    """The values of the loops at positions up to ``pos`` (``dims``, one per odd position;
    a position the path has no loop at is unconstrained) where ``site`` runs."""
    path = _render(_Site(site.stmt, site.steps, ()), ufs)
    conds = [*path.conds, *given]
    for loop in site.loops:
        if loop.position <= pos:
            conds.append(f"_p{loop.position} = {loop.var}")
    hidden = [*path.names, *path.aux]
    body = _conj(conds)
    if hidden:
        body = f"exists({', '.join(hidden)}: {body})"
    return Set(f"{{[{', '.join(dims)}] : {body}}}", ufs)
