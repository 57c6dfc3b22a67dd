"""Sends and receives of a data space that a Layer III layout moved into a buffer.

A ``send``/``receive`` moves ``count`` elements that are consecutive in memory from the
address of its first element (``&a(i, j)``, as MPI sends them), and the dependence analysis
and the bounds proof read that region as a run of the data space's elements in row-major
order. Once ``store_in`` or ``storage_fold`` puts the data space in a buffer with another
layout (a transpose, a fold, rows of another length), ``&a(i, j)`` is an address in the
buffer and the next ``count - 1`` elements there are not the run of ``a`` that was analysed:
the kernel sent other values (a transposed ``a`` sent its first column's entries as a row),
silently. :func:`check` refuses such an operation; one that names the buffer itself moves
the buffer's own elements and stays allowed, and so does a single element (``count`` 1) or
a buffer of the data space's shape indexed by its own coordinates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.errors import CodegenError
from spf.ir.reading import buffer_of, data_space, placement_of

if TYPE_CHECKING:
    from spf.ir import ComputationIR

__all__ = ["check"]

_MOVES = ("send", "receive")


def check(ir: ComputationIR) -> None:
    """``CodegenError`` for a send or receive of a data space whose layout (``store_in``,
    ``storage_fold``) does not keep its elements' row-major order in memory."""
    for op in ir.operations:
        if op.kind not in _MOVES or op.target is None or op.count.strip() == "1":
            continue
        p = placement_of(ir, op.target)
        if p is None or _same_memory(ir, op.target, p.buffer, p.exprs):
            continue
        index = ", ".join(op.index)
        raise CodegenError(
            f"statement {op.name}: {op.kind}({op.target}({index}), count={op.count}) moves "
            f"{op.count} consecutive elements of {op.target!r}, but {op.target!r} is stored "
            f"in buffer {p.buffer!r} at [{', '.join(p.exprs)}], where they are not "
            f"consecutive: the message would carry other elements of {p.buffer!r}; name the "
            f"buffer {p.buffer!r} in the {op.kind} (its index and count in the buffer's "
            f"layout), or leave {op.target!r} where it is"
        )


def _same_memory(ir: ComputationIR, space: str, buffer: str, exprs: tuple[str, ...]) -> bool:
    """Whether ``space`` lies in ``buffer`` as in its own array: the identity index into a
    buffer of the same extents."""
    ds, b = data_space(ir, space), buffer_of(ir, buffer)
    if ds is None or b is None or ds.shape is None:
        return False
    same_index = tuple(e.replace(" ", "") for e in exprs) == tuple(
        f"t{k}" for k in range(len(exprs))
    )
    return same_index and _extents(ds.shape) == _extents(b.shape)


def _extents(shape: tuple[object, ...]) -> tuple[str, ...]:
    return tuple(str(e).replace(" ", "") for e in shape)
