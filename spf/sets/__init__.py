"""Sets and relations with uninterpreted functions (docs/api.md)."""

from __future__ import annotations

from spf.sets.set_like import Relation, Set
from spf.sets.uf import UF

__all__ = ["UF", "Relation", "Set"]
