"""``Dependence``: the record of one dependence between two statements.

The type of what :mod:`spf.analysis.dependences` finds (``Computation.dependences()``);
it lives with the IR, below both the analysis and the model, so that either can name it
(``spf.computation.dependence`` re-exports it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.sets import Relation

__all__ = ["Dependence"]


@dataclass(frozen=True)
class Dependence:
    """Instances of ``sink`` that must run after instances of ``source``
    (docs/getting_started.md)."""

    kind: str
    source: str
    sink: str
    data_space: str
    relation: Relation
    carried_by: tuple[str, ...]
    levels: tuple[int, ...] = ()
    """Positions of the current (padded) schedule at which source and sink are ordered."""
    original_carried_by: tuple[str, ...] = ()
    """The loops that carry it in the schedules the statements were added with."""
    storage: bool = False
    """A conflict the data layout adds (two elements at one buffer location, ``data_space``
    is then the buffer), ordered by the current schedule."""

    def __str__(self) -> str:
        by = ", ".join(self.carried_by) if self.carried_by else "loop-independent"
        return (
            f"{self.kind} dependence on {self.data_space!r} from {self.source} to {self.sink} "
            f"(carried by {by}): {self.relation}"
        )
