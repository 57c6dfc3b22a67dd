"""Computations: ``Computation``, ``Stmt``, data spaces; dependences, legality, interpreter."""

from __future__ import annotations

from spf.computation.computation import Computation
from spf.computation.data_space import DataSpace
from spf.computation.dependence import Dependence
from spf.computation.layers import Layers
from spf.computation.layout import Buffer
from spf.computation.operations import OperationStmt
from spf.computation.statement import Stmt

__all__ = ["Buffer", "Computation", "DataSpace", "Dependence", "Layers", "OperationStmt", "Stmt"]
