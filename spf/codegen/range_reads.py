"""Where a checked function's index reads stand, for :mod:`spf.codegen.range_pass`.

A range test where the value is read costs a compare and a rarely taken branch (with a call
to the fault recorder behind it). In the innermost loop of a sparse row (a gather or a
scatter: CSR, CSC, COO; SELL's lanes) that is about free next to the read's own latency,
while a pass over the whole array before the loops reads every entry once more: measured,
the pass made ``spmv_coo`` 1.18-1.32x its unchecked call where the in-loop test cost 1.06x,
and int64 SELL(8, 1) 1.30x instead of 1.14x. Where the read feeds more loops (a BCSR
block's column, read once per block; a DIA diagonal's offset), the branch and the call keep
those loops from being optimized as in the unchecked function, and the pass wins
(``spmv_bcsr(2, 2)`` about 1.33x to 1.13x). The same holds for a read in a loop over a
row that an index array's value chose (``B_col(B_k)`` for ``B_k`` in row ``A_col(A_k)`` of
``B``, SpGEMM's inner loop): each entry is read once per time its row is chosen, so the
in-loop tests run once per multiply-add while the pass reads each entry once.
:func:`pass_pays` says which is which.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    expr_vars,
    walk,
)

if TYPE_CHECKING:
    from spf.codegen.program import Program


def pass_pays(program: Program, names: frozenset[str]) -> frozenset[str]:
    """The UFs of ``names`` every read of which is bound (``Bind``) where further loops (or
    a merge) run below the read, or inside a loop over a chosen row (:func:`_chosen`); a UF
    read anywhere else (a statement's text, a loop bound, a condition) is not among them."""
    good: dict[str, bool] = dict.fromkeys(names, True)
    _visit(program.body, good, _Scope(frozenset(), frozenset(), False, ()))
    for s in program.stmts:
        for u in names & s.calls:  # a read in the statement's own text
            good[u] = False
    return frozenset(u for u, ok in good.items() if ok)


@dataclass(frozen=True)
class _Scope:
    """What encloses a node: the variables bound from an index array (``Bind``), those
    among them whose index is itself such a value (an entry of a row an index array
    chose), and whether a loop over such a row encloses it."""

    bound: frozenset[str]
    chosen: frozenset[str]
    in_chosen_row: bool
    loops: tuple[str, ...]
    """The variables of the loops around it, the outermost first."""


def _visit(n: Node, good: dict[str, bool], scope: _Scope) -> None:
    if isinstance(n, Block):
        for item in n.items:
            _visit(item, good, scope)
    elif isinstance(n, For):
        _exprs((n.init, n.cond), good)
        row = _chosen(n, scope) or scope.in_chosen_row
        _visit(n.body, good, replace(scope, in_chosen_row=row, loops=(*scope.loops, n.var)))
    elif isinstance(n, If):
        _exprs((n.cond,), good)
        _visit(n.then, good, scope)
        if n.orelse is not None:
            _visit(n.orelse, good, scope)
    elif isinstance(n, Bind):
        _exprs(n.args, good)
        again = _read_again(n, scope.loops)
        if n.uf in good and not (scope.in_chosen_row or again or _feeds_loops(n.body)):
            good[n.uf] = False
        used = {v for a in n.args for v in expr_vars(a)}
        chosen = scope.chosen | {n.var} if used & scope.bound else scope.chosen
        inner = _Scope(scope.bound | {n.var}, chosen, scope.in_chosen_row, scope.loops)
        _visit(n.body, good, inner)
    elif isinstance(n, Call):
        _exprs(n.args, good)
    elif isinstance(n, Merge):
        _exprs((*cursor_exprs(n.left), *cursor_exprs(n.right)), good)
        for body in n.bodies():
            _visit(body, good, scope)
    elif isinstance(n, Alloc):
        _visit(n.body, good, scope)


def _read_again(n: Bind, loops: tuple[str, ...]) -> bool:
    """Whether ``n`` reads the same entry again on every iteration of a loop nested inside
    the outermost loop its index uses, a loop whose variable the index does not use:
    SELL(8, 32)'s ``perm(r + 8 * ch)`` under ``w``, read once per entry of the slice's row,
    where the pass reads each entry once (the checked function 1.21-1.36x its unchecked one
    on ``arrow``, ``bcsstk13``, ``jagmesh7``, ``pushpull`` and a 10k dense row before, 1.10-1.24x
    after: C time, interleaved, on the loaded machine)."""
    used = {v for a in n.args for v in expr_vars(a)}
    first = next((k for k, v in enumerate(loops) if v in used), None)
    return first is not None and any(v not in used for v in loops[first + 1 :])


def _chosen(loop: For, scope: _Scope) -> bool:
    """Whether ``loop``'s bounds use a value read at an index another index array gave
    (``B_rowptr(A_col(A_k))``): it scans a row that an index array's value chose, so the
    reads under it meet the same entries once per time that row is chosen."""
    used = {v for e in (loop.init, loop.cond) for v in expr_vars(e)}
    return bool(used & scope.chosen)


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
