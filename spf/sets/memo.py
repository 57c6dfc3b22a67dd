"""The set layer's memo tables (bounded), and one call that empties them all.

Sets, relations and their isl parts and expressions are immutable values, so a result
computed from equal inputs can be reused: parse results by (text, UF declarations), isl
objects by their text, conversions of isl constraints to expressions, solved tuple
positions. Every table here is bounded (emptied when full) and registered, so
:func:`clear_all` restores a cold start (the set-layer benchmark uses it to time
operations on inputs never seen before).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R")

_CLEARERS: list[Callable[[], None]] = []
_SHAPE_CLEARERS: list[Callable[[], None]] = []


def memo(
    maxsize: int, *, shape: bool = False
) -> Callable[[Callable[..., R]], functools._lru_cache_wrapper[R]]:
    """``functools.lru_cache(maxsize)``, registered with :func:`clear_all`.

    ``shape``: the table is keyed by dimension counts only (the same for every set of that
    width, not by any set's contents); ``clear_all(shapes=False)`` keeps it."""

    def wrap(fn: Callable[..., R]) -> functools._lru_cache_wrapper[R]:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        (_SHAPE_CLEARERS if shape else _CLEARERS).append(cached.cache_clear)
        return cached

    return wrap


class Table(Generic[K, V]):
    """A bounded dictionary registered with :func:`clear_all` (emptied when full)."""

    def __init__(self, maxsize: int) -> None:
        self._data: dict[K, V] = {}
        self._maxsize = maxsize
        _CLEARERS.append(self._data.clear)

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V) -> V:
        if len(self._data) >= self._maxsize:
            self._data.clear()
        self._data[key] = value
        return value

    def clear(self) -> None:
        self._data.clear()


def clear_all(*, shapes: bool = True) -> None:
    """Empty every memo table of the set layer (objects already built keep their own);
    ``shapes=False`` keeps the tables keyed by dimension counts only."""
    for clear in _CLEARERS + (_SHAPE_CLEARERS if shapes else []):
        clear()
