"""The declared UF facts checked with ``check=True``: domain length, range, monotonicity.

An index array is checked only on the part its UF's declared domain covers (a longer array is
fine); a fact whose set uses something other than the kernel's parameters is not checked. A
compiled C kernel checks the range and (where its reads allow) the monotonicity inside its
loops instead (:mod:`spf.codegen.arg_checks`); :meth:`UFCheck.loop_bounds` gives those loops
their bounds and :meth:`UFCheck.range_error` / :meth:`UFCheck.order_error` word what they find.
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
        self._shapes: dict[tuple[int, ...], tuple[int, ...] | None] = {}
        self.zero_based = False
        """The kernel's loops test the values against ``[0, hi]`` (spf.codegen.arg_checks)."""

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

    def check(
        self, arr: Array, params: dict[str, int], *, values: bool = True, order: bool = True
    ) -> None:
        """Raise :class:`~spf.errors.ArgumentError` for the first declared fact ``arr`` breaks.

        The length (domain) is always checked; ``values=False`` leaves the range and
        ``order=False`` the monotonicity to the kernel's in-loop checks
        (:mod:`spf.codegen.arg_checks`), except that an empty declared range is refused here.
        """
        used, offset = self._used(arr, params)
        if used.size == 0:
            return
        if self.range is not None:
            rb = self._bounds(False, self.range, params)
            lo, hi = rb[0] if rb is not None else (1, 0)
            if (values or lo > hi) and (used.min() < lo or used.max() > hi):
                k = int(np.flatnonzero((used < lo) | (used > hi))[0])
                at = tuple(
                    int(i) + o for i, o in zip(np.unravel_index(k, used.shape), offset, strict=True)
                )
                raise self.range_error(at, int(used.flat[k]), params)
        if order and self.uf.monotonic is not None and used.ndim == 1 and used.size > 1:
            strict = self.uf.monotonic == "increasing"
            bad = used[1:] <= used[:-1] if strict else used[1:] < used[:-1]
            if bad.any():
                raise self.order_error(arr, int(np.argmax(bad)) + offset[0] + 1, params)

    def min_shape(self, params: dict[str, int], key: tuple[int, ...]) -> tuple[int, ...] | None:
        """The least extent per axis an array needs for the declared domain, remembered per
        ``key`` (the call's parameter values); None when the values must be checked here: an
        empty declared range (every value the kernel would read breaks it), or a lowest value
        above 0 for a UF the loops test against ``[0, hi]`` (:attr:`zero_based`)."""
        if key in self._shapes:
            return self._shapes[key]
        need: tuple[int, ...] | None = None
        rb = self._bounds(False, self.range, params) if self.range is not None else [(0, 0)]
        if rb is not None and rb[0][0] <= rb[0][1] and (rb[0][0] == 0 or not self.zero_based):
            box = self._bounds(True, self.domain, params) if self.domain is not None else None
            if self.domain is None or box is None:
                need = ()
            else:
                need = tuple(0 if hi >= _BIG else hi + 1 for _, hi in box)
        if len(self._shapes) > 256:
            self._shapes.clear()
        self._shapes[key] = need
        return need

    def loop_bounds(self, params: dict[str, int]) -> tuple[int, int, int, int]:
        """``(lowest value, highest value, lowest domain index, entries read)`` for the
        in-loop checks (the last: the entries from index 0 the declared domain covers, -1
        when it does not say; what the no-overlap test compares)."""
        lo, hi = -(2**63), 2**63 - 1
        if self.range is not None:
            rb = self._bounds(False, self.range, params)
            lo, hi = rb[0] if rb is not None else (1, 0)
        first, entries = 0, -1
        if self.domain is not None:
            box = self._bounds(True, self.domain, params)
            first = max(box[0][0], 0) if box else 0
            if box is None:
                entries = 0
            elif all(h < _BIG for _, h in box):
                entries = int(np.prod([h + 1 for _, h in box]))
        return lo, hi, first, entries

    def range_error(
        self, at: tuple[int, ...], value: int, params: dict[str, int], *, in_loop: bool = False
    ) -> ArgumentError:
        """``name[at] = value`` is outside the declared range."""
        name = self.uf.name
        where = ", ".join(map(str, at))
        return ArgumentError(
            f"{self.label}: {name}[{where}] = {value} is outside the declared range "
            f"{self.uf.range} of UF {name!r}{with_params(params)}; fix the index array or its "
            f"declaration{IN_LOOP if in_loop else ''}"
        )

    def order_error(
        self, arr: Array, i: int, params: dict[str, int], *, in_loop: bool = False
    ) -> ArgumentError:
        """``arr[i - 1]`` and ``arr[i]`` break the declared monotonicity."""
        name = self.uf.name
        return ArgumentError(
            f"{self.label}: UF {name!r} is declared {self.uf.monotonic}, but "
            f"{name}[{i - 1}] = {arr[i - 1]} and {name}[{i}] = {arr[i]}; "
            f"fix the index array (e.g. sort it) or its declaration"
            f"{IN_LOOP if in_loop else ''}"
        )


IN_LOOP = (
    " (found inside the kernel's loops where the value was read: the call's outputs may be "
    "partially written and hold no valid result; nothing was accessed out of bounds)"
)
"""How a message says that the in-loop checks (spf.codegen.arg_checks) found the fault."""


def with_params(params: dict[str, int]) -> str:
    """`` (with M=3, N=4)`` for a message (empty without parameters)."""
    text = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f" (with {text})" if text else ""
