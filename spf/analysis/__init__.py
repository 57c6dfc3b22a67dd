"""Analyses over a Computation that code generation relies on (above the model,
below codegen): bounds proofs of every access (:mod:`spf.analysis.bounds`)."""

from __future__ import annotations

from spf.analysis.bounds import (
    AccessBounds,
    BoundsReport,
    Obligation,
    Violation,
    analyze_bounds,
    check_bounds,
)

__all__ = [
    "AccessBounds",
    "BoundsReport",
    "Obligation",
    "Violation",
    "analyze_bounds",
    "check_bounds",
]
