"""A statement's body as a C tree (:mod:`spf.cexpr`), built once from its parsed source.

The statement's domain iterators become macro parameters (:class:`~spf.cexpr.Param`), its
data-space reads and writes :class:`~spf.cexpr.Access` nodes (through ``spf_ds_<name>`` for
a run-time index array, whose ``<name>(...)`` reads it as a UF), UF reads calls of the UF's
macro, ``min``/``max`` the generated code's own ``spf_min``/``spf_max``, and an index
``floor(e/c)``/``ceil(e/c)`` an exact integer division (the builder of
:mod:`spf.ir.source.render_c`, which also prints rewritten statement sources).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from spf.cexpr import Access
from spf.ir.source.render_c import CTreeBuilder

if TYPE_CHECKING:
    from spf.ir.source.tree import _Ref


class BodyBuilder(CTreeBuilder):
    """Converts a parsed statement's nodes; ``params`` are the macro's parameters,
    ``index`` the run-time index arrays, ``calls`` the renamed functions."""

    def __init__(
        self, params: Collection[str], index: Collection[str], calls: Mapping[str, str]
    ) -> None:
        super().__init__(params=params, calls=calls)
        self.index = frozenset(index)

    def access(self, e: _Ref) -> Access:
        macro = f"spf_ds_{e.ds}" if e.ds in self.index else ""
        return Access(e.ds, tuple(self.expr(i) for i in e.indices), macro)
