"""What the PDFG reads of the computation it shows, and asks it to do (structural types).

``spf.pdfg`` sits below the user-facing ``spf.Computation`` in the package order
(docs/ir.md, "Where the packages stand"): it never imports it. A :class:`~spf.pdfg.PDFG`
holds a :class:`GraphSubject`, which every ``spf.Computation`` is: the graph is built from
its statements, data spaces, buffers, IR and dependences, and the graph operations
(``fuse``, ``reschedule``, ``inline``) and the trial operations that price a temporary
(``removable_by``) are the computation's own (:mod:`spf.computation.graph_ops`,
:mod:`spf.computation.temporaries`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from spf.ir.reading import StmtReading

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.dependence import Dependence
    from spf.sets import Relation

__all__ = ["BufferView", "DataSpaceView", "GraphSubject", "StmtView"]


class StmtView(StmtReading, Protocol):
    """A statement as the graph shows it (an ``spf.Stmt``): what the analysis reads of
    it, and its source."""

    @property
    def source(self) -> str: ...


class DataSpaceView(Protocol):
    """A data space as the graph shows it (``comp.data_spaces[name]``)."""

    @property
    def type_text(self) -> str: ...

    @property
    def private(self) -> str | None: ...

    def shape_text(self) -> str: ...


class BufferView(Protocol):
    """A Layer III buffer as the graph shows it (``comp.buffers[name]``)."""

    @property
    def shape(self) -> tuple[int | str, ...]: ...

    @property
    def dtype(self) -> str: ...

    @property
    def scope(self) -> str: ...


class GraphSubject(Protocol):
    """The computation a PDFG shows (an ``spf.Computation``)."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> frozenset[str]: ...

    @property
    def ir(self) -> ComputationIR: ...

    @property
    def stmts(self) -> Sequence[StmtView]: ...

    @property
    def data_spaces(self) -> Mapping[str, DataSpaceView]: ...

    @property
    def buffers(self) -> Mapping[str, BufferView]: ...

    def stmt(self, key: str) -> StmtView: ...

    def schedule_width(self) -> int: ...

    def dependences(self) -> Sequence[Dependence]: ...

    def fuse(self, s1: str, s2: str, level: str | int | object) -> list[Relation]: ...

    def reschedule(self, s1: str, s2: str) -> list[Relation]: ...

    def _inline_temporary(self, data_space: str) -> list[str]:
        """``PDFG.inline``: producer-consumer inlining of ``data_space``, recorded in the
        trace (:func:`spf.computation.graph_ops.inline`)."""

    def _removable_temporaries(self) -> dict[str, tuple[str, ...]]:
        """``{data space: operations that would remove it}``
        (:func:`spf.computation.temporaries.removable_temporaries`)."""
