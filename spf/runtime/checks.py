"""The declared UF facts checked with ``check=True``: domain length, range, monotonicity.

An index array is checked only on the part its UF's declared domain covers (a longer array is
fine); a fact whose set uses something other than the kernel's parameters is not checked.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from spf.errors import ArgumentError
from spf.sets import UF, Set

Array = npt.NDArray[Any]
_BIG = 2**62
Bounds = list[tuple[int, int]] | None


class UFCheck:
    """Checks an index array against its UF's declared domain, range and monotonicity.

    ``label`` names the argument at the start of a message (default: the UF's name).
    """

    def __init__(self, uf: UF, params: frozenset[str], *, label: str | None = None) -> None:
        self.uf = uf
        self.label = uf.name if label is None else label
        self.domain: Set | None = None
        self.range: Set | None = None
        # clamp to a box so that one-sided declarations still give (huge) finite bounds
        if uf.domain is not None and uf.domain.params <= params:
            names = [f"d{k}" for k in range(uf.arity)]
            box = " and ".join(f"-{_BIG} <= {v} <= {_BIG}" for v in names)
            self.domain = uf.domain.intersect(Set(f"{{[{', '.join(names)}]: {box}}}"))
        info = np.iinfo(np.dtype(uf.dtype))
        if uf.range is not None and uf.range.params <= params:
            self.range = uf.range.intersect(Set(f"{{[v]: {info.min} <= v <= {info.max}}}"))
        self._cache: dict[tuple[bool, tuple[int, ...]], Bounds] = {}

    def _bounds(self, is_domain: bool, s: Set, params: dict[str, int]) -> Bounds:
        key = (is_domain, tuple(params[p] for p in sorted(s.params)))  # a few params at most
        if key not in self._cache:
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = s.bounds(params)
        return self._cache[key]

    def _used(self, arr: Array, params: dict[str, int]) -> tuple[Array, tuple[int, ...]]:
        """The part of ``arr`` the declared domain covers and its offset."""
        if self.domain is None:
            return arr, (0,) * arr.ndim
        box = self._bounds(True, self.domain, params)
        if box is None:  # empty domain: the function reads nothing
            return arr[(slice(0, 0),) * arr.ndim], (0,) * arr.ndim
        index: list[slice] = []
        for axis, (lo, hi) in enumerate(box):
            start = max(lo, 0)
            if hi >= _BIG:
                index.append(slice(start, None))
                continue
            if arr.shape[axis] <= hi:
                where = f" along axis {axis}" if arr.ndim > 1 else ""
                raise ArgumentError(
                    f"{self.label}: length {arr.shape[axis]}{where} is too short: UF "
                    f"{self.uf.name!r} has the declared domain {self.uf.domain}, which reaches "
                    f"index {hi}{with_params(params)}; pass an array of at least {hi + 1} "
                    f"entries{where}"
                )
            index.append(slice(start, hi + 1))
        return arr[tuple(index)], tuple(s.start for s in index)

    def check(self, arr: Array, params: dict[str, int]) -> None:
        """Raise :class:`~spf.errors.ArgumentError` for the first declared fact ``arr`` breaks."""
        name, label = self.uf.name, self.label
        used, offset = self._used(arr, params)
        if used.size == 0:
            return
        if self.range is not None:
            rb = self._bounds(False, self.range, params)
            lo, hi = rb[0] if rb is not None else (1, 0)
            if used.min() < lo or used.max() > hi:
                k = int(np.flatnonzero((used < lo) | (used > hi))[0])
                at = tuple(
                    int(i) + o for i, o in zip(np.unravel_index(k, used.shape), offset, strict=True)
                )
                where = ", ".join(map(str, at))
                raise ArgumentError(
                    f"{label}: {name}[{where}] = {used.flat[k]} is outside the declared range "
                    f"{self.uf.range} of UF {name!r}{with_params(params)}; fix the index array "
                    f"or its declaration"
                )
        if self.uf.monotonic is not None and used.ndim == 1 and used.size > 1:
            strict = self.uf.monotonic == "increasing"
            bad = used[1:] <= used[:-1] if strict else used[1:] < used[:-1]
            if bad.any():
                k = int(np.argmax(bad))
                i = k + offset[0]
                raise ArgumentError(
                    f"{label}: UF {name!r} is declared {self.uf.monotonic}, but "
                    f"{name}[{i}] = {used[k]} and {name}[{i + 1}] = {used[k + 1]}; "
                    f"fix the index array (e.g. sort it) or its declaration"
                )


def with_params(params: dict[str, int]) -> str:
    """`` (with M=3, N=4)`` for a message (empty without parameters)."""
    text = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f" (with {text})" if text else ""
