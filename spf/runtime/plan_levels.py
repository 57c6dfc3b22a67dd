"""A coarse plan's ``level_of``: the coarse pass's 32-bit levels, widened to the plan's
64-bit array only when someone reads it.

A plan of the ``"coarse"`` or ``"serial"`` strategy runs without its levels (the executor
reads the parts, the serial kernel nothing of the plan), so :class:`NarrowLevels` keeps the
pass's 32-bit levels and widens them in place (:func:`widen`) on the first read of
``plan.level_of`` (or of the level order, which sorts them). The plan's level seal is a
checksum of the 32-bit values, taken before any widening: 4 bytes a row hashed instead of
8, and no 64-bit array written during the inspection.
"""

from __future__ import annotations

import threading

import numpy as np

from spf.runtime.checksum import checksums

LEVELS_SEAL = "<level_of>"
"""The entry of :attr:`spf.runtime.plan.Plan.inspected` holding a checksum of the levels the
inspector computed: a call with ``check=True`` refuses a plan whose ``level_of`` differs (a
plan rebuilt from edited arrays, which the structural checks of the plan cannot tell from
one that respects the dependences)."""

_INT32_MAX = 2**31 - 1

SealEntry = tuple[str, str, tuple[int, ...], int]


def widen(level: np.ndarray) -> np.ndarray:
    """The coarse pass's 32-bit levels as a plan's ``level_of`` (64-bit), written over the
    buffer whose first half ``level`` is (its second half, the coarse levels, is read no
    more): no fresh memory (on a machine that gives freed memory back, each fresh page
    costs a page fault, ~2 ms per 8 MB). Widened from the end in chunks ``[a, b)``,
    ``b <= 2a``: a chunk's 64-bit entries cover the 32-bit ones from ``2a`` on, which
    were read before. ``level`` itself holds other values afterwards."""
    buf, n = level.base, len(level)
    whole = (
        isinstance(buf, np.ndarray)
        and buf.dtype == np.int32
        and buf.shape == (2 * n,)
        and buf.flags.c_contiguous
        and buf.flags.writeable
        and level.ctypes.data == buf.ctypes.data
    )
    if not whole or buf is None:
        return level.astype(np.int64)
    out: np.ndarray = buf.view(np.int64)
    b = n
    while b > 1:
        a = (b + 1) // 2
        out[a:b] = level[a:b]
        b = a
    if n:
        out[0] = int(level[0])
    return out


def seal(levels: np.ndarray) -> SealEntry:
    """The :data:`LEVELS_SEAL` entry of ``levels`` (1-d, int32 or int64): a checksum of their
    bytes, with the dtype it was taken in."""
    data = np.ascontiguousarray(levels)
    return (LEVELS_SEAL, str(data.dtype), tuple(data.shape), checksums([data])[0])


def seal_of(level_of: np.ndarray, entry: SealEntry) -> SealEntry | None:
    """The seal of ``level_of`` in the dtype ``entry`` was taken in (None when the values do
    not fit it: then they are not the sealed ones)."""
    if entry[1] == "int32" and level_of.dtype != np.int32:
        if len(level_of) and (int(level_of.min()) < 0 or int(level_of.max()) > _INT32_MAX):
            return None
        return seal(level_of.astype(np.int32))
    if entry[1] == "int64":
        return seal(np.asarray(level_of, dtype=np.int64))
    return seal(level_of)


class NarrowLevels:
    """The 32-bit levels of one plan until :meth:`wide` widens them (once, in place); reads
    of the 32-bit values (:meth:`sealed`) and the widening exclude each other."""

    def __init__(self, level: np.ndarray) -> None:
        self._levels = level
        self._widened = False
        self._lock = threading.Lock()

    def wide(self) -> np.ndarray:
        """The 64-bit levels (read-only), widened on the first call."""
        with self._lock:
            if not self._widened:
                self._levels = widen(self._levels)
                self._levels.setflags(write=False)
                self._widened = True
            return self._levels

    def sealed(self, entry: SealEntry) -> bool:
        """Whether the levels have the seal ``entry`` (hashing the 32-bit values while they
        are still there)."""
        with self._lock:
            if not self._widened and entry[1] == "int32":
                return seal(self._levels) == entry
        return seal_of(self.wide(), entry) == entry
