"""Accesses that never meet: a statement's write and read of one data space at indices that
differ wherever the statement runs.

A row scalar (:mod:`spf.codegen.row_scalar`) keeps ``x(i)`` in a local while a row updates
it, and reads ``x`` at another index ``J`` as ``J == i ? spf_row : x(J)``, in case ``J``
is ``i`` at run time. A lower solve's ``u(i) -= L(k) *
u(col(k))`` reads ``u`` at ``col(k)``, which its strictly-lower fact (``col(k) < i`` for
every entry before the diagonal) keeps away from ``i``: the compare and branch per entry
buy nothing (on 2-D Poisson's lower triangle they were ~1.5% of the serial solve's CPU
time, docs/inspection.md). :func:`apart_pairs` proves such pairs once per statement: the
statement's domain with the two indices equal is empty under the computation's facts
(:func:`spf.sets.facts.is_empty_under`, the same proof the dependence analysis makes). A
kernel checks its facts (``check=True``), so a pair is apart in every run that passes the
checks, as the dependences the facts remove are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.analysis.apart import indices_apart

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.sets.facts import Fact

Pair = tuple[str, tuple[cx.Expr, ...], tuple[cx.Expr, ...]]
"""(data space, the index written, the index read): over the statement's macro parameters."""

_SIMPLE = (cx.Param, cx.Num, cx.Name)


def apart_pairs(stmt: ParsedStmt, ir: ComputationIR, body: tuple[cx.Stmt, ...]) -> tuple[Pair, ...]:
    """The pairs of ``body`` (``stmt``'s body as a C tree) that the facts of ``ir`` keep
    apart: an assignment's target ``D(W)`` and a read ``D(R)`` in its value or indices,
    ``R`` not ``W``, whose equality leaves ``stmt``'s domain empty. Only indices of
    parameters, integers, UF calls and ``+ - *`` are tried (their C text is set syntax);
    a pair the proof does not settle is left out."""
    facts = ir.facts
    if not facts:
        return ()
    ufs = {u.name for u in ir.ufs}
    out: list[Pair] = []
    for s in body:
        if not isinstance(s, cx.Assign) or not isinstance(s.target, cx.Access):
            continue
        w = s.target
        reads = [*_reads(s.value), *(a for i in w.indices for a in _reads(i))]
        for r in dict.fromkeys(a.indices for a in reads if a.space == w.space):
            pair = (w.space, w.indices, r)
            if r != w.indices and pair not in out and _proved(stmt, pair, ufs, facts):
                out.append(pair)
    return tuple(out)


def _reads(e: cx.Expr) -> list[cx.Access]:
    return [n for n in cx.nodes(e) if isinstance(n, cx.Access)]


def _proved(stmt: ParsedStmt, pair: Pair, ufs: set[str], facts: tuple[Fact, ...]) -> bool:
    _, w, r = pair
    if len(w) != len(r) or not all(_plain(e, ufs) for e in (*w, *r)):
        return False
    return indices_apart(stmt, [cx.to_c(a) for a in w], [cx.to_c(b) for b in r], facts)


def _plain(e: cx.Expr, ufs: set[str]) -> bool:
    """Whether ``e`` reads as the same expression in spf's set syntax."""
    if isinstance(e, _SIMPLE):
        return True
    if isinstance(e, cx.Binary):
        return e.op in ("+", "-", "*") and _plain(e.left, ufs) and _plain(e.right, ufs)
    if isinstance(e, cx.Unary):
        return e.op == "-" and _plain(e.operand, ufs)
    if isinstance(e, cx.Call):
        return e.func in ufs and all(_plain(a, ufs) for a in e.args)
    return False
