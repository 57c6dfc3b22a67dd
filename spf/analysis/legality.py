"""The legality verdict of a schedule, remembered by the value of its IR.

:func:`check` is what ``comp.check_legality()`` and ``codegen(check=True)`` ask: the
reduction loops are checked (:func:`~spf.analysis.reductions.check_reduction_loops`), then
every dependence against the schedule (:func:`~spf.analysis.dependences.check_legality`);
the verdict is remembered under ``ir.fingerprint`` (:mod:`spf.analysis.memo`), so equal
computations are judged once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import IllegalScheduleError

if TYPE_CHECKING:
    from spf.ir import ComputationIR

__all__ = ["check"]


def check(ir: ComputationIR) -> None:
    """Raise ``IllegalScheduleError`` for the first dependence the schedule of ``ir``
    violates (or the first reduction loop it cannot run)."""
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
