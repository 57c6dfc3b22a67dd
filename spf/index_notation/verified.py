"""Checked calls of a sparse einsum output remembered by the contents of their inputs.

A sparse output's kernels (:mod:`spf.index_notation.sparse_output`: the two phases, or the
single pass and its bound) only read the operands and write arrays the call allocates
itself. So everything a ``check=True`` call verifies (each index value read in its declared
range, the row pointers in order and in range, the formats' ordering facts, the index
arrays' lengths) depends on the operands' index arrays and the parameter values alone: the
outputs are fresh arrays, which overlap nothing, and the row pointers the filling phase
reads are the sizing phase's, computed from the same inputs. A call whose index arrays hash
the same as those of a checked call that passed (with the same parameter values, on the
same path) runs the kernels unchecked, as :mod:`spf.runtime.known` does for a kernel's own
index arrays and a :class:`~spf.runtime.plan.Plan` for its inspection. Contents changed in
place, one entry or many, hash apart and are checked in full; a call that fails is not
remembered.

The hash of each index array is :func:`spf.runtime.known.hasher`'s (XXH3, XXH64 below 16
KiB; it covers the length), with its dtype; the key also holds the parameter values (the
extents, the operands' sizes) and the path (``"single"`` or ``"two"``: each path's checks
are its own). Only C-contiguous numpy arrays are hashed: a call passing anything else is
checked every time (the binding then says what it takes). The kernel keeps the last
:data:`~spf.runtime.known.REMEMBERED` contents.

Why not test the facts inside the merge instead: a checked call's tests inside the loops
cost the 2-D Poisson SpAdd (1M rows) about 1.4x its unchecked call, a separate pass over
the index arrays compiled at ``-O2`` (``spf.runtime.compile.optimisation_flags``) about
as much for the products; the hashes read the same bytes once (measured: ``docs/einsum.md``,
"Checked calls").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spf.runtime.known import REMEMBERED, hasher

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["Key", "VerifiedInputs"]

Key = tuple[Any, ...]


class VerifiedInputs:
    """The inputs checked calls of one sparse einsum kernel verified, per path:
    :meth:`key` of a call's arguments, ``(path, key) in verified``, :meth:`add`."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, Key], None] = {}

    @staticmethod
    def key(given: Mapping[str, Any], index: Iterable[str]) -> Key | None:
        """What a call's checks depend on: its parameter values (every argument that is
        not an array) and the dtype and hash of each index array named in ``index``; None
        when one of them is missing or not a C-contiguous numpy array, or a parameter is
        not an int (the call is then checked)."""
        hashes: list[Any] = []
        for name in index:
            a = given.get(name)
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous:
                return None
            hashes += (name, a.dtype.str, hasher(a.nbytes)(a))
        params = []
        for k, v in given.items():
            if isinstance(v, np.ndarray):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                return None  # the binding says what it takes
            params.append((k, int(v)))
        return (tuple(sorted(params)), *hashes)

    def __contains__(self, path_key: object) -> bool:
        return path_key in self._seen

    def add(self, path_key: tuple[str, Key]) -> None:
        """Remember a call's inputs as verified on its path (a call that failed never gets
        here); the oldest are forgotten beyond :data:`~spf.runtime.known.REMEMBERED`."""
        seen = self._seen
        seen[path_key] = None
        while len(seen) > REMEMBERED:
            try:
                del seen[next(iter(seen))]
            except (KeyError, RuntimeError, StopIteration):  # another thread's change
                break
