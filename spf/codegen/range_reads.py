"""Where a checked function's index reads stand, for :mod:`spf.codegen.range_pass`.

A range test where the value is read costs a compare and a rarely taken branch (with a call
to the fault recorder behind it). In the innermost loop of a sparse row (a gather or a
scatter: CSR, CSC, COO; SELL's lanes) that is about free next to the read's own latency,
while a pass over the whole array before the loops reads every entry once more: measured,
the pass made ``spmv_coo`` 1.18-1.32x its unchecked call where the in-loop test cost 1.06x,
and int64 SELL(8, 1) 1.30x instead of 1.14x. Where the read feeds more loops (a BCSR
block's column, read once per block; a DIA diagonal's offset), the branch and the call keep
those loops from being optimized as in the unchecked function, and the pass wins
(``spmv_bcsr(2, 2)`` about 1.33x to 1.13x). :func:`pass_pays` says which is which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Merge,
    Node,
    Op,
    UFRead,
    cursor_exprs,
    walk,
)

if TYPE_CHECKING:
    from spf.codegen.program import Program


def pass_pays(program: Program, names: frozenset[str]) -> frozenset[str]:
    """The UFs of ``names`` every read of which is bound (``Bind``) where further loops (or
    a merge) run below the read; a UF read anywhere else (a statement's text, a loop bound,
    a condition) is not among them."""
    good: dict[str, bool] = dict.fromkeys(names, True)
    _visit(program.body, good)
    for s in program.stmts:
        for u in names & s.calls:  # a read in the statement's own text
            good[u] = False
    return frozenset(u for u, ok in good.items() if ok)


def _visit(n: Node, good: dict[str, bool]) -> None:
    if isinstance(n, Block):
        for item in n.items:
            _visit(item, good)
    elif isinstance(n, For):
        _exprs((n.init, n.cond), good)
        _visit(n.body, good)
    elif isinstance(n, If):
        _exprs((n.cond,), good)
        _visit(n.then, good)
        if n.orelse is not None:
            _visit(n.orelse, good)
    elif isinstance(n, Bind):
        _exprs(n.args, good)
        if n.uf in good and not _feeds_loops(n.body):
            good[n.uf] = False
        _visit(n.body, good)
    elif isinstance(n, Call):
        _exprs(n.args, good)
    elif isinstance(n, Merge):
        _exprs((*cursor_exprs(n.left), *cursor_exprs(n.right)), good)
        for body in n.bodies():
            _visit(body, good)
    elif isinstance(n, Alloc):
        _visit(n.body, good)


def _feeds_loops(body: Node) -> bool:
    return any(isinstance(m, (For, Merge)) for m in walk(body))


def _exprs(es: tuple[Expr, ...], good: dict[str, bool]) -> None:
    """A read inside an expression: not a bound read."""
    for e in es:
        if isinstance(e, UFRead):
            if e.uf in good:
                good[e.uf] = False
            _exprs(e.args, good)
        elif isinstance(e, Op):
            _exprs(e.args, good)
