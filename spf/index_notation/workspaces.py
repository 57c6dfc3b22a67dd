"""A sparse output's dense row workspaces too large to allocate (docs/einsum.md): a kernel
of the phases builds each row of the output in arrays over its inner index (``mark``,
``acc``, ``lst`` ... of ``J`` entries); where ``J`` is so large that one cannot be allocated
(``J = 2**36``), the kernel's ``MemoryError`` becomes an :class:`~spf.errors.ArgumentError`
naming the workspace, its size and the index, and saying what to change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from spf.errors import ArgumentError
from spf.runtime.kernel import AllocationError

if TYPE_CHECKING:
    from spf.index_notation.formula import Formula
    from spf.index_notation.sparse_output import Compressed


def workspace_error(
    f: Formula, c: Compressed, extents: Mapping[str, Any], err: MemoryError
) -> ArgumentError | None:
    """The error for ``err``, raised by a phase of sparse output ``c``: the one the module
    docstring describes where a kernel could not allocate one of its workspaces, else None
    (``extents``: the call's extents)."""
    if not isinstance(err, AllocationError):
        return None
    extent = f.extents[c.inner]
    value = extents.get(extent)
    size = f"{extent} = {value}" if value is not None else extent
    return ArgumentError(
        f"{f.where()}: the sparse output {c.name} is built row by row in dense "
        f"workspaces sized by the extent of its index {c.inner} ({size}), and workspace "
        f"{err.array!r} of {err.elements} entries ({err.elements * err.itemsize} bytes) "
        f"cannot be allocated on this machine. A dense row over {c.inner} needs a "
        f"smaller {extent}: give {c.name} a format compressed along {c.inner} (CSC, "
        f"with operands that iterate {c.inner} first) so that its rows run over "
        f"{c.outer}, compute {c.name} in blocks of {c.inner} (slices of the operands), "
        f"or renumber the {c.inner} values that occur to 0 .. n - 1"
    )
