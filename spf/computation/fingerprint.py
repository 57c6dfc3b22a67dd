"""A cheap, complete fingerprint of a :class:`~spf.computation.computation.Computation`.

``Computation.version`` compares the fingerprint with the one it saw last and counts the
changes, so every mutation path (a scheduling command, an effect, a PDFG operation, a tag
set directly, ``from_json``, ...) bumps the version without having to call anything: the
fingerprint walks every attribute of the computation, its statements, buffers and layout,
and the result caches (:mod:`spf.analysis.cache`) key on it. Sets and relations are
immutable and keyed by their cached text; other values by their structure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.ir.keys import value_key as value_key

if TYPE_CHECKING:
    from spf.computation.computation import Computation


def state_key(comp: Computation) -> object:
    """The fingerprint of ``comp``: every attribute, its statements, buffers and trace length."""
    from spf.schedule.trace import trace_of

    trace = trace_of(comp)
    return (value_key(comp), id(trace), len(trace._entries))


class Memo:
    """The results remembered for one computation.

    ``results`` holds whole-computation results (the legality verdict, generated sources,
    the IR snapshot) of the current ``version`` and is emptied when it changes. The
    dependences are remembered by value, across computations (:mod:`spf.analysis.memo`,
    keyed by the IR's fingerprint), and so is the work of statement pairs
    (:mod:`spf.analysis.dependences`): it survives changes that leave its inputs alone (a
    schedule change re-checks only the pairs of the statements it moved)."""

    def __init__(self) -> None:
        self.key: object = None
        self.version = 0
        self.results: dict[object, Any] = {}

    def refresh(self, comp: Computation) -> int:
        """Compare ``comp``'s fingerprint with the last one seen; a change bumps the version
        and forgets the whole-computation results."""
        key = state_key(comp)
        if key != self.key:
            self.key = key
            self.version += 1
            self.results.clear()
        return self.version
