"""Polyhedral dataflow graph: a networkx view of a ``Computation``, DOT output, graph
operations that become schedule relations (docs/pdfg.md)."""

from __future__ import annotations

from spf.pdfg.history import PDFGHistory
from spf.pdfg.pdfg import PDFG

__all__ = ["PDFG", "PDFGHistory"]
