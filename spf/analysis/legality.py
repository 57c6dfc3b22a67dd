"""The legality verdict of a schedule, remembered by the value of its IR.

:func:`check` is what ``comp.check_legality()`` and ``codegen(check=True)`` ask: the
reduction loops are checked (:func:`~spf.analysis.reductions.check_reduction_loops`), then
every dependence against the schedule (:func:`~spf.analysis.dependences.check_legality`);
the verdict is remembered under ``ir.fingerprint`` (:mod:`spf.analysis.memo`), so equal
computations are judged once.

A loop tagged ``distribute`` spreads its iterations over MPI ranks, each with its own
arrays, so the dependence analysis keeps only the pairs of instances on one rank (data moves
between ranks by ``send``/``receive``: :func:`~spf.analysis.dependences.same_rank`). That
holds for ``target="mpi"`` only: every other target runs the loop as an ordinary loop over
one array, so ``check(ir, target=...)`` for them judges the computation with its
``distribute`` tags left out (a prefix sum distributed and then reversed is refused for C).

A ``stack`` buffer is one array of the function on every target but CUDA, whose kernels
declare one copy per thread, as of a ``local`` buffer (:mod:`spf.codegen.cuda`), so
``check(ir, "cuda")`` judges stack buffers as local ones (a kernel reading a stack element
another thread or an earlier kernel wrote is refused, as it would read its own copy).
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from spf.errors import IllegalScheduleError

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.model import Tags

__all__ = ["check", "shared_memory", "stack_per_thread"]


def check(ir: ComputationIR, target: str = "mpi") -> None:
    """Raise ``IllegalScheduleError`` for the first dependence the schedule of ``ir``
    violates (or the first reduction loop it cannot run), for code generated for ``target``
    (any but ``"mpi"`` runs distributed loops as ordinary ones: module docstring)."""
    if target != "mpi":
        ir = shared_memory(ir)
    if target == "cuda":
        ir = stack_per_thread(ir)
    from spf.analysis.dependences import check_legality
    from spf.analysis.memo import remembered
    from spf.analysis.reductions import check_reduction_loops

    def verdict() -> IllegalScheduleError | None:
        try:
            check_reduction_loops(ir)
            check_legality(ir)
            check_ordered_reads(ir)
        except IllegalScheduleError as err:
            return err
        return None

    found = remembered(ir, ("legality",), verdict)
    if found is not None:
        raise found.with_traceback(None)


def shared_memory(ir: ComputationIR) -> ComputationIR:
    """``ir`` with its ``distribute`` tags left out (itself when it has none): the
    computation a target without ranks runs."""

    def strip(tags: Tags) -> Tags:
        kept = ((loop, tuple(t for t in ts if t != "distribute")) for loop, ts in tags)
        return tuple((loop, ts) for loop, ts in kept if ts)

    tagged = [s.tags for s in ir.stmts] + [o.tags for o in ir.operations]
    if not any("distribute" in ts for tags in tagged for _, ts in tags):
        return ir
    return dataclasses.replace(
        ir,
        stmts=tuple(dataclasses.replace(s, tags=strip(s.tags)) for s in ir.stmts),
        operations=tuple(dataclasses.replace(o, tags=strip(o.tags)) for o in ir.operations),
    )


def stack_per_thread(ir: ComputationIR) -> ComputationIR:
    """``ir`` with its ``stack`` buffers made ``local`` (itself when it has none): the memory
    CUDA gives them, one copy per thread in a kernel (module docstring)."""
    if not any(b.scope == "stack" for b in ir.buffers):
        return ir
    local = tuple(
        dataclasses.replace(b, scope="local") if b.scope == "stack" else b for b in ir.buffers
    )
    return dataclasses.replace(ir, buffers=local)


def check_ordered_reads(ir: ComputationIR) -> None:
    """``IllegalScheduleError`` when a scheduled computation reads a run-time index array
    whose UF declares an order (``monotonic=``) as a UF before a statement writes it again.

    The analysis trusts the declared order at every read (disjoint rows, races), but the
    kernel checks it once, on the array's final contents (:func:`spf.codegen.faults.
    order_check`). That covers every read that sees final contents, which each read does
    unless a write of the same element follows it: an anti dependence from a statement
    reading the array as a UF to one writing it. In program order nothing relies on the
    order, so only a computation with a schedule or tags of its own is refused (reversing
    ``y(p(i)) = x(i)`` between ``p(i) = 0`` and ``p(i) = i`` ran with both writes of ``y``
    at one element)."""
    from spf.analysis.dependences import compute_dependences

    if not any(s.tags or s.current_schedule != s.schedule for s in ir.stmts):
        return
    decls = ir.uf_decls
    ordered = {
        ds.name: decls[ds.name].monotonic
        for ds in ir.data_spaces
        if ds.index and ds.name in decls and decls[ds.name].monotonic is not None
    }
    if not ordered:
        return
    written = {ds for s in ir.stmts for ds, _ in s.writes if ds in ordered}
    readers: dict[str, set[str]] = {}
    for s in ir.stmts:
        texts = [s.domain, *(rel for _, rel in (*s.reads, *s.writes))]
        for name in written:
            call = re.compile(rf"(?<![\w$]){re.escape(name)}\s*\(")
            if any(call.search(t) for t in texts):
                readers.setdefault(s.name, set()).add(name)
    if not readers:
        return
    for d in compute_dependences(ir):
        if d.kind == "anti" and d.data_space in readers.get(d.source, ()):
            raise IllegalScheduleError(
                f"illegal schedule: index array {d.data_space!r} is declared "
                f"{ordered[d.data_space]} and {d.source} reads it as a UF before {d.sink} "
                f"writes it again ({d}); the order is checked on its final contents only, "
                "so a schedule relying on it is not proved: compute the array in a loop or "
                "computation that ends before it is read as a UF, or declare it without "
                "monotonic="
            )
