"""The row permutation of a format that reads its rows through one (SELL's ``i =
perm(C*ch + r)``, ``Format.window``), checked as a permutation by checked conversions.

A declared UF range (``0 <= perm(t) < N``) lets a repeated row through: the rows it
repeats are converted twice and the missing one not at all, silently. :func:`check_rows`
finds that in O(N) (a count per row) and names ``perm``, the two positions holding the
same row and a missing row.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["check_rows", "row_permutation"]


def row_permutation(fmt: Format) -> str | None:
    """The UF ``fmt``'s rows are read through (``perm`` of ``i = perm(C*ch + r)``) when
    the format declares a sorting window, else None."""
    if fmt.window is None:
        return None
    found = re.fullmatch(r"\s*(\w+)\(.*\)\s*", fmt._defined.get(fmt.coords[0], ""))
    return found.group(1) if found and found.group(1) in fmt.ufs else None


def check_rows(label: str, name: str, perm: Any, n: int) -> None:
    """``ArgumentError`` unless the first ``n`` entries of ``perm`` are a permutation of
    ``0 .. n-1``; values out of that range are left to the kernel's range checks (which
    word them as for any index array)."""
    used = np.asarray(perm)[:n]
    if used.size < n or (used.size and (int(used.min()) < 0 or int(used.max()) >= n)):
        return
    counts = np.bincount(used.astype(np.int64, copy=False), minlength=n)
    if used.size == 0 or int(counts.max()) <= 1:
        return
    first = int(np.flatnonzero(counts[used] > 1)[0])
    row = int(used[first])
    second = int(np.flatnonzero(used == row)[1])
    missing = int(np.flatnonzero(counts == 0)[0])
    raise ArgumentError(
        f"{label}: {name} must be a permutation of the N = {n} rows, but {name}[{first}] = "
        f"{name}[{second}] = {row} and row {missing} is in no position (each row is read "
        f"once through {name}); pass the {name} the format's packer built "
        f"(Format.args, spf.sparse.sell_args), or call with check=False to skip the checks"
    )
