"""A statement's body as a C tree (:mod:`spf.cexpr`), built once from its parsed source.

The statement's domain iterators become macro parameters (:class:`~spf.cexpr.Param`), its
data-space reads and writes :class:`~spf.cexpr.Access` nodes (through ``spf_ds_<name>`` for
a run-time index array, whose ``<name>(...)`` reads it as a UF), UF reads calls of the UF's
macro, ``min``/``max`` the generated code's own ``spf_min``/``spf_max``, ``abs``/``labs``/
``llabs`` with their argument cast to the function's integer type (:data:`INTEGER_ARGUMENT`),
and an index
``floor(e/c)``/``ceil(e/c)`` an exact integer division (the builder of
:mod:`spf.ir.source.render_c`, which also prints rewritten statement sources).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.cexpr import Access
from spf.ir.source.render_c import CTreeBuilder
from spf.ir.source.tree import _Call

if TYPE_CHECKING:
    from spf.ir.source.tree import _Expr, _Ref

INTEGER_ARGUMENT = {"abs": "int", "labs": "long", "llabs": "long long"}
"""stdlib.h's integer functions and the type C converts their argument to. The C targets
(C, MPI) convert a double passed to ``abs`` to ``int`` (``abs(1.7)`` is 1, as the
interpreter computes it), where C++ (CUDA, HLS) has an ``abs(double)`` overload and gave 1.7:
the cast makes every target compute what C does."""


class BodyBuilder(CTreeBuilder):
    """Converts a parsed statement's nodes; ``params`` are the macro's parameters,
    ``index`` the run-time index arrays, ``calls`` the renamed functions."""

    def __init__(
        self, params: Collection[str], index: Collection[str], calls: Mapping[str, str]
    ) -> None:
        super().__init__(params=params, calls=calls)
        self.index = frozenset(index)

    def expr(self, e: _Expr) -> cx.Expr:
        if isinstance(e, _Call) and e.func in INTEGER_ARGUMENT and len(e.args) == 1:
            arg = cx.Cast(INTEGER_ARGUMENT[e.func], self.expr(e.args[0]))
            return cx.Call(self.calls.get(e.func, e.func), (arg,))
        return super().expr(e)

    def access(self, e: _Ref) -> Access:
        macro = f"spf_ds_{e.ds}" if e.ds in self.index else ""
        return Access(e.ds, tuple(self.expr(i) for i in e.indices), macro)
