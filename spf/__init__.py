"""spf: sparse and dense loop computations as objects, scheduled and compiled from Python.

See the documentation in ``docs/`` (``docs/api.md``: the reference). This package
exposes the public names only.
"""

from __future__ import annotations

from spf import formats, kernels, sparse
from spf._version import __version__
from spf.computation import (
    Buffer,
    Computation,
    DataSpace,
    Dependence,
    Layers,
    OperationStmt,
    Stmt,
)
from spf.errors import (
    ArgumentError,
    ArityError,
    CodegenError,
    CompileError,
    FormatError,
    IllegalScheduleError,
    ParseError,
    PreconditionWarning,
    ScheduleError,
    SpfError,
    ToolchainError,
    UndeclaredError,
    VerifyError,
)
from spf.formats import Format
from spf.frontend import from_c
from spf.index_notation import einsum
from spf.schedule import ROOT
from spf.sets import UF, Relation, Set
from spf.tuning import TuneResult, tune

__all__ = [
    "ROOT",
    "UF",
    "ArgumentError",
    "ArityError",
    "Buffer",
    "CodegenError",
    "CompileError",
    "Computation",
    "DataSpace",
    "Dependence",
    "Format",
    "FormatError",
    "IllegalScheduleError",
    "Layers",
    "OperationStmt",
    "ParseError",
    "PreconditionWarning",
    "Relation",
    "ScheduleError",
    "Set",
    "SpfError",
    "Stmt",
    "ToolchainError",
    "TuneResult",
    "UndeclaredError",
    "VerifyError",
    "__version__",
    "einsum",
    "formats",
    "from_c",
    "kernels",
    "sparse",
    "tune",
]
