"""spf: sparse and dense loop computations as objects, scheduled and compiled from Python.

See the documentation in ``docs/`` (``docs/api.md``: the reference). This package
exposes the public names only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf._gc import fewer_collections as _fewer_collections

# Importing builds long-lived objects only: collecting garbage meanwhile finds none (~8% of
# the import's time with Python's default threshold; spf._gc). The exit's pass walks what
# the young passes inside left in the middle generation, as the next middle pass would.
with _fewer_collections():
    # Statements' C is parsed with pycparser (which cffi needs too, to load any kernel): loaded
    # with spf, since every program needs it, rather than by a warm first call (issue 33).
    import spf.ir.source  # noqa: F401
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
        CostWarning,
        DroppedTagWarning,
        FormatError,
        IllegalScheduleError,
        InternalError,
        ParseError,
        PreconditionWarning,
        ScheduleError,
        SpfError,
        ToolchainError,
        UndeclaredError,
        VerifyError,
    )
    from spf.formats import Format
    from spf.schedule import ROOT
    from spf.sets import UF, Relation, Set

if TYPE_CHECKING:
    from spf.frontend import from_c
    from spf.index_notation import einsum
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
    "CostWarning",
    "DataSpace",
    "Dependence",
    "DroppedTagWarning",
    "Format",
    "FormatError",
    "IllegalScheduleError",
    "InternalError",
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

_ON_FIRST_USE = {
    "from_c": "spf.frontend",
    "einsum": "spf.index_notation",
    "TuneResult": "spf.tuning",
    "tune": "spf.tuning",
}
"""Public names whose modules load on first use: the C front end, index notation and the
tuner cost ~0.1 s of ``import spf`` that a program not using them never needs
(``spf.kernels`` loads index notation when ``SpGEMM`` is first asked for)."""


def __getattr__(name: str) -> Any:
    """``spf.from_c``, ``spf.einsum``, ``spf.tune`` and ``spf.TuneResult``, and spf's
    submodules (``spf.errors``, ``spf.tuning``), imported on first use (then kept in the
    module like any other name)."""
    import importlib
    import importlib.util

    module = _ON_FIRST_USE.get(name)
    if module is None:
        if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value: Any = importlib.import_module(f"{__name__}.{name}")  # spf.errors, spf.tuning
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
