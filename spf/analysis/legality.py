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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import IllegalScheduleError

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.model import Tags

__all__ = ["check", "shared_memory"]


def check(ir: ComputationIR, target: str = "mpi") -> None:
    """Raise ``IllegalScheduleError`` for the first dependence the schedule of ``ir``
    violates (or the first reduction loop it cannot run), for code generated for ``target``
    (any but ``"mpi"`` runs distributed loops as ordinary ones: module docstring)."""
    if target != "mpi":
        ir = shared_memory(ir)
    from spf.analysis.dependences import check_legality
    from spf.analysis.memo import remembered
    from spf.analysis.reductions import check_reduction_loops

    def verdict() -> IllegalScheduleError | None:
        try:
            check_reduction_loops(ir)
            check_legality(ir)
        except IllegalScheduleError as err:
            return err
        return None

    found = remembered(ir, ("legality",), verdict)
    if found is not None:
        raise found.with_traceback(None)


def shared_memory(ir: ComputationIR) -> ComputationIR:
    """``ir`` with its ``distribute`` tags left out (itself when it has none): the
    computation a target without ranks runs."""
    import dataclasses

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
