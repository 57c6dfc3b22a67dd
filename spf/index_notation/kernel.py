"""Calling an einsum kernel: operands by name, extents from wherever they are known.

A dense operand ``x`` is the array ``x``; a sparse operand ``A`` passes its format's arrays
prefixed with its name (``A_rowptr``, ``A_col``, ``A``) and its sizes (``A_NNZ``). Each
index's extent (``I``) may be given by name, follows from a dense operand's shape, or from a
sparse operand's prefixed size (``A_N``, as ``spf.sparse.csr_args(A, prefix="A_")`` passes
it); every source must agree, otherwise :class:`~spf.errors.ArgumentError` names the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError
from spf.index_notation.build import sparse_aliases

if TYPE_CHECKING:
    from spf.computation.products import CompiledKernel
    from spf.index_notation.formula import Formula

__all__ = ["EinsumKernel", "ExtentPlan", "resolve_extents"]


def _int(value: object, what: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ArgumentError(f"{where}: {what} must be a non-negative int, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ExtentPlan:
    """What :func:`resolve_extents` reads of a formula, taken once per kernel: a call then
    binds its extents without walking the formula again (about 25 us a call on SpMV's,
    five times what the compiled kernel's own binding takes)."""

    where: str
    extents: frozenset[str]
    """The extents' names (``I``, ``J``)."""
    aliases: tuple[tuple[str, str], ...]
    """:func:`~spf.index_notation.build.sparse_aliases`: ``(A_N, I)``."""
    dense: tuple[tuple[str, int, tuple[str, ...], tuple[str, ...]], ...]
    """Each operand without a format: its name, order, indices and their extents."""

    @classmethod
    def of(cls, f: Formula) -> ExtentPlan:
        accesses = (f.output, *_rhs(f))
        dense = []
        for name in f.tensors:
            if name in f.formats:
                continue
            for indices in dict.fromkeys(tuple(a.indices) for a in accesses if a.name == name):
                extents = tuple(f.extents[v] for v in indices)  # every access: D(i,j) D(j,k)
                dense.append((name, f.orders[name], indices, extents))
        return cls(f.where(), frozenset(f.extents.values()),
                   sparse_aliases(f), tuple(dense))  # fmt: skip


def resolve_extents(
    f: Formula, args: dict[str, Any], plan: ExtentPlan | None = None
) -> dict[str, Any]:
    """``args`` with the aliases (``A_N``) replaced by the extents they give (``I``), and
    the extents known from dense operands' shapes filled in; conflicts raise. ``plan``:
    ``ExtentPlan.of(f)``, kept by a kernel that resolves many calls."""
    p = ExtentPlan.of(f) if plan is None else plan
    where = p.where
    out = dict(args)
    known: dict[str, tuple[int, str]] = {}

    def learn(extent: str, value: int, source: str) -> None:
        if extent in known and known[extent][0] != value:
            old, by = known[extent]
            raise ArgumentError(
                f"{where}: the extent {extent} is {old} from {by} but {value} from {source}; "
                "the operands' shapes must agree"
            )
        known.setdefault(extent, (value, source))

    for extent in p.extents & set(args):
        learn(extent, _int(args[extent], extent, where), extent)
    for alias, extent in p.aliases:
        if alias in args:
            learn(extent, _int(args[alias], alias, where), alias)
            out.pop(alias, None)
    for name, order, indices, extents in p.dense:
        arr = args.get(name)
        if not isinstance(arr, np.ndarray):
            continue
        if arr.ndim != order:
            raise ArgumentError(
                f"{where}: {name} is indexed {name}({','.join(indices)}) but is a "
                f"{arr.ndim}-d array of shape {arr.shape}"
            )
        for d, extent in enumerate(extents):
            learn(extent, int(arr.shape[d]), f"{name}.shape[{d}]")
    for extent, (value, _) in known.items():
        out[extent] = value
    return out


def _rhs(f: Formula) -> list[Any]:
    from spf.index_notation.formula import _accesses

    return _accesses(f.assignment.rhs)


class EinsumKernel:
    """``kernel(**operands)``: runs the formula, writing the (dense) output in place."""

    def __init__(self, formula: Formula, kernel: CompiledKernel) -> None:
        self.formula = formula
        self.kernel = kernel
        self._plan = ExtentPlan.of(formula)

    @property
    def source(self) -> str:
        return self.kernel.source

    @property
    def signature(self) -> str:
        return self.kernel.signature

    def __call__(self, *positional: object, check: bool = True, **args: Any) -> None:
        if positional:
            names = (a.name for a in self.kernel.arguments)
            where = f"{self.formula.where()} kernel"
            raise ArgumentError.positional(where, len(positional), "kernel", names)
        self.kernel(check=check, **resolve_extents(self.formula, args, self._plan))

    def __repr__(self) -> str:
        return f"EinsumKernel({self.formula.text!r})"
