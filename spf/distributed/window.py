"""Windows of vectors read at the loop variable plus an index array (API.md §19).

DIA reads ``x(p + offsets(d))`` and BDIA ``x(i + doff(s))``: the index is the row plus a
per-diagonal offset, not a value of an index array, so the executor cannot read it through a
renumbered array as it reads ``x(col(k))``. A rank holds the format of its own rows (local row
``p``, global columns: ``p + offsets(d)`` is a global column), and the executor reads a
*window* of ``x``: the global entries ``base .. base + size - 1`` (``base`` the least of the
rank's own entries and its ghosts), the rank's own entries from slot ``own``, each ghost at
its global index minus ``base`` (slots no iteration reads stay unset). The offsets are
shifted by ``-base`` (``p + offsets'(d)`` is the window slot of the column) and the extent
``M`` too (so ``0 <= j < M`` keeps exactly the iterations it kept).
The exchange itself is the one of any ghost read: the ghosts are exactly the image of the
rank's rows minus its own entries, received apart (``stage``) and placed after the wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from spf.distributed.plan import ExchangePlan
    from spf.mpi import Partition


@dataclass
class Window:
    base: int
    """The global index of slot 0."""
    size: int
    own: np.ndarray
    """Triples ``(slot, lo, hi)``: the rank's own entries ``lo .. hi - 1`` (local indices)
    go to the window from ``slot`` (one run for contiguous blocks; an owner array's
    entries in runs of consecutive global indices)."""
    gpos: np.ndarray
    """The slot of each ghost, in the order they are received."""
    stage: np.ndarray
    """The received ghosts (placed at ``gpos`` after the wait)."""


def window(plan: ExchangePlan, part: Partition, rank: int, dtype: np.dtype) -> Window:
    """The window of one vector on this rank (module docstring)."""
    own = part.owned(rank)
    ends = [own[[0, -1]]] if own.size else []
    if plan.ghosts.size:
        ends.append(np.array([plan.ghosts.min(), plan.ghosts.max()]))
    if not ends:
        empty = np.zeros(0, dtype=np.int64)
        return Window(0, 0, empty, empty, np.zeros(1, dtype=dtype))
    every = np.concatenate(ends)
    base, top = int(every.min()), int(every.max()) + 1
    starts = np.flatnonzero(np.diff(own, prepend=-2) != 1)
    ends_at = np.append(starts[1:], own.size)
    runs = np.stack([own[starts] - base, starts, ends_at], axis=1) if own.size else np.zeros(0)
    return Window(
        base=base,
        size=top - base,
        own=np.ascontiguousarray(runs, dtype=np.int64).ravel(),
        gpos=(plan.ghosts - base).astype(np.int64),
        stage=np.zeros(max(1, plan.ghosts.size), dtype=dtype),
    )


def shifted(values: np.ndarray, by: int) -> np.ndarray:
    """An index array's values plus ``by``, in its own dtype."""
    out: np.ndarray = (values.astype(np.int64) + by).astype(values.dtype)
    return out


__all__ = ["Window", "shifted", "window"]
