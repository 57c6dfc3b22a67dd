"""Analyses over a Computation that code generation relies on (above the model,
below codegen): dependences and schedule legality (:mod:`spf.analysis.dependences`), the
conflicts a data layout adds (:mod:`spf.analysis.storage`), what ``compute_at`` may
recompute (:mod:`spf.analysis.recompute`), bounds proofs of every access
(:mod:`spf.analysis.bounds`) and the parameter conditions that keep them in bounds
(:mod:`spf.analysis.preconditions`). ``Computation.dependences``, ``check_legality`` and
``is_parallel_legal`` call them."""

from __future__ import annotations

from spf.analysis.bounds import (
    AccessBounds,
    BoundsReport,
    Obligation,
    Violation,
    analyze_bounds,
    check_bounds,
)
from spf.analysis.preconditions import Precondition

__all__ = [
    "AccessBounds",
    "BoundsReport",
    "Obligation",
    "Precondition",
    "Violation",
    "analyze_bounds",
    "check_bounds",
]
