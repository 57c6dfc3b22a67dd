"""Access relations for the model: :mod:`spf.ir.access` derives them."""

from __future__ import annotations

from spf.ir.access import access_relation as access_relation
from spf.ir.reading import iterator_names as iterator_names

__all__ = ["access_relation", "iterator_names"]
