"""Computations (the model): ``Computation``, ``Stmt``, data spaces, buffers, operations and
the commands that change them (:mod:`spf.computation.scheduling`); dependences and legality
are :mod:`spf.analysis`, the reference interpreter :mod:`spf.runtime.interpret`."""

from __future__ import annotations

from spf.computation.coiterate import Coiterate  # registers stmt.coiterate for traces/JSON
from spf.computation.computation import Computation
from spf.computation.data_space import DataSpace
from spf.computation.dependence import Dependence
from spf.computation.layers import Layers
from spf.computation.layout import Buffer
from spf.computation.operations import OperationStmt
from spf.computation.packing import CacheRead  # registers stmt.cache_read for traces/JSON
from spf.computation.snapshot import snapshot  # registers the builder of spf.ir.apply
from spf.computation.statement import Stmt
from spf.computation.workspace import Workspace  # registers stmt.workspace for traces/JSON

__all__ = [
    "Buffer",
    "CacheRead",
    "Coiterate",
    "Computation",
    "DataSpace",
    "Dependence",
    "Layers",
    "OperationStmt",
    "Stmt",
    "Workspace",
    "snapshot",
]
