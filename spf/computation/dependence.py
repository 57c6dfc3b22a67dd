"""``Dependence`` for the model: the record lives in :mod:`spf.ir.dependence`."""

from __future__ import annotations

from spf.ir.dependence import Dependence

__all__ = ["Dependence"]
