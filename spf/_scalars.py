"""numpy scalars as the Python numbers they hold, for the checks of numeric arguments
(``budget=np.int64(5)`` is a budget as ``5`` is; ``isinstance(np.int64(5), int)`` is False)."""

from __future__ import annotations

from typing import TypeVar, cast

import numpy as np

T = TypeVar("T")


def plain(value: T) -> T:
    """``value.item()`` for a numpy integer or floating scalar, else ``value`` unchanged (a
    numpy bool stays a bool: the checks refuse it as they refuse ``True``)."""
    if isinstance(value, (np.integer, np.floating)):
        return cast("T", value.item())
    return value
