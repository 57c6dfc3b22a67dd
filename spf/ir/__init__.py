"""The frozen IR: a computation as an immutable, hashable value (docs/ir.md).

``comp.ir`` snapshots a :class:`spf.Computation` as a :class:`ComputationIR` (tuples and
frozen records of strings and numbers; sets and relations as text), and
``spf.Computation.from_ir(ir)`` rebuilds an equal computation. :func:`apply` applies one
scheduling command to an IR and returns the new IR; the argument is left as it was.
"""

from __future__ import annotations

from spf.ir.apply import apply, set_runner
from spf.ir.data import from_data, to_data
from spf.ir.model import (
    UFIR,
    BufferIR,
    ComputationIR,
    DataSpaceIR,
    OperationIR,
    PlacementIR,
    StmtIR,
    WorkspaceIR,
)

__all__ = [
    "UFIR",
    "BufferIR",
    "ComputationIR",
    "DataSpaceIR",
    "OperationIR",
    "PlacementIR",
    "StmtIR",
    "WorkspaceIR",
    "apply",
    "from_data",
    "set_runner",
    "to_data",
]
