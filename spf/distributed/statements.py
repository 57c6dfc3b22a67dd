"""The statements of a computation being distributed, read from its IR.

The analysis of ``distribute_rows`` (:mod:`spf.distributed.analysis`,
:mod:`spf.distributed.phases`, :mod:`spf.distributed.prefix`) reads each statement's name,
domain, current schedule and C source, parsed as ``add_stmt`` parsed it
(:func:`spf.analysis.sources.source_tree`): a :class:`Statement` of the
:class:`~spf.ir.ComputationIR`, never an ``spf.Stmt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.analysis.sources import source_tree

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import ParsedStmt
    from spf.ir.source import ParsedSource
    from spf.sets import Relation, Set

__all__ = ["Statement", "statement"]


@dataclass(frozen=True, eq=False)
class Statement:
    """A statement of the IR with its parsed C source."""

    record: ParsedStmt
    parsed: ParsedSource

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def source(self) -> str:
        return self.record.source

    @property
    def domain(self) -> Set:
        return self.record.domain

    @property
    def schedule(self) -> Relation:
        """The current schedule."""
        return self.record.schedule

    @property
    def tags(self) -> dict[str, tuple[str, ...]]:
        return self.record.tags


def statement(ir: ComputationIR, stmt: ParsedStmt) -> Statement:
    """``stmt`` of ``ir`` with its source parsed."""
    return Statement(stmt, source_tree(ir, stmt))
