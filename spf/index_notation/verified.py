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
:data:`~spf.runtime.known.REMEMBERED` contents, and stops hashing after
:data:`~spf.runtime.known.MISSES` checked calls in a row on new inputs (calls that never
repeat them).

Why not test the facts inside the merge instead: a checked call's tests inside the loops
cost the 2-D Poisson SpAdd (1M rows) about 1.4x its unchecked call, a separate pass over
the index arrays compiled at ``-O2`` (``spf.runtime.compile.optimisation_flags``) about
as much for the products; the hashes read the same bytes once (measured: ``docs/einsum.md``,
"Checked calls").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from spf.runtime.known import MISSES, Key, VerifiedHashes, hasher

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["Key", "PathKey", "VerifiedInputs"]

PathKey = tuple[str, Key]
"""A path (``"single"``, ``"two"``) and the key of a call's inputs."""


class VerifiedInputs:
    """The inputs checked calls of one sparse einsum kernel verified, per path:
    :meth:`look` at a call's, :meth:`add` once it passed."""

    def __init__(self) -> None:
        self._seen = VerifiedHashes()
        self._misses = 0
        """Checked calls in a row that passed on inputs not verified before (:data:`MISSES`;
        a refused call is no miss, as in :mod:`spf.runtime.known`)."""

    def look(
        self,
        path: str,
        given: Mapping[str, Any],
        index: Iterable[str],
        hashed: dict[tuple[str, ...], Key | None] | None = None,
    ) -> tuple[PathKey | None, bool]:
        """``(key, verified)`` for a checked call on ``path`` with arguments ``given``
        (``index``: the index arrays among them): ``verified`` when a checked call on that
        path passed the same inputs; the key is None where they are not remembered
        (:meth:`key`), and once :data:`~spf.runtime.known.MISSES` checked calls in a row
        brought new inputs: calls that never repeat their inputs would pay the hashes for
        nothing, so that kernel checks every call from then on. ``hashed``: the keys one
        call worked out before, by its index arrays' names (filled in here): a single pass
        that falls back to the two phases looks again with the same arguments, and would
        hash the same arrays twice."""
        if self._misses >= MISSES:
            return None, False
        names = tuple(index)
        if hashed is not None and names in hashed:
            key = hashed[names]
        else:
            key = self.key(given, names)
            if hashed is not None:
                hashed[names] = key
        if key is None:
            return None, False
        path_key = (path, key)
        if path_key in self._seen:
            self._misses = 0
            return path_key, True
        return path_key, False  # a miss once the call passed (:meth:`add`), as known counts

    @staticmethod
    def key(given: Mapping[str, Any], index: Iterable[str]) -> Key | None:
        """What a call's checks depend on: its parameter values (every argument that is
        not an array), every array's dtype and shape (the binder takes sizes not passed
        from them), and the hash of each index array named in ``index``; None
        when one of them is missing or not a C-contiguous numpy array, or a parameter is
        not an int (the call is then checked)."""
        params: list[Any] = []
        for k, v in given.items():
            kind = type(v)
            if kind is np.ndarray:
                # a size the binder takes from an array's shape (an operand's NNZ from
                # its values' length, when not passed) bounds what the checks accept
                params.append((k, v.dtype, v.shape))
            elif kind is int:
                params.append((k, v))
            elif kind is bool or not isinstance(v, np.integer):
                return None  # the binding says what it takes
            else:
                params.append((k, int(v)))
        for name in index:
            a = given.get(name)
            if type(a) is not np.ndarray or not a.flags.c_contiguous:
                return None
            params.append(hasher(a.nbytes)(a))
        # in the caller's order of arguments: the same call in a loop gives the same key
        # (another order is another key: checked in full once more)
        return tuple(params)

    def add(self, path_key: PathKey) -> None:
        """Remember a call's inputs as verified on its path (a call that failed never gets
        here); the oldest are forgotten beyond :data:`~spf.runtime.known.REMEMBERED`."""
        self._misses += 1
        self._seen.add(path_key)
