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

    ``label`` names the argument at the start of a message (default: the UF's name). The
    array of a UF that returns a tuple has one more axis, its components (``f[i][c]``),
    each checked against its part of the range here (the in-loop checks know only the
    union of the parts).
    """

    def __init__(self, uf: UF, params: frozenset[str], *, label: str | None = None) -> None:
        self.uf = uf
        self.label = uf.name if label is None else label
        self.domain: Set | None = None
        self.range: Set | None = None
        array = uf.array_uf()
        # clamp to a box so that one-sided declarations still give (huge) finite bounds
        if array.domain is not None and array.domain.params <= params:
            names = [f"d{k}" for k in range(array.arity)]
            box = " and ".join(f"-{_BIG} <= {v} <= {_BIG}" for v in names)
            self.domain = array.domain.intersect(Set(f"{{[{', '.join(names)}]: {box}}}"))
        info = np.iinfo(uf.dtype)
        values = Set(f"{{[v]: {info.min} <= v <= {info.max}}}")
        if array.range is not None and array.range.params <= params:
            self.range = array.range.intersect(values)
        self.components: tuple[Set, ...] = ()
        """Per component of a tuple-valued UF: the values it may take."""
        if uf.out_arity > 1 and self.range is not None:
            parts = [uf.component_range(c) for c in range(uf.out_arity)]
            self.components = tuple(p.intersect(values) for p in parts if p is not None)
        self._cache: dict[tuple[int, tuple[int, ...]], Bounds] = {}
        self._shapes: dict[tuple[int, ...], tuple[int, ...] | None] = {}
        self.zero_based = False
        """The kernel's loops test the values against ``[0, hi]`` (spf.codegen.arg_checks)."""

    def _bounds(self, which: int, s: Set, params: dict[str, int]) -> Bounds:
        """Bounds of the domain (``which = 1``), the range (0) or component ``c`` (``-1 -
        c``)."""
        key = (which, tuple(params[p] for p in sorted(s.params)))  # a few params at most
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
            if -_BIG < lo < 0:  # (a domain without a lower bound: from 0, as before)
                raise self.negative_domain(axis, lo, params)
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
        if self.components:
            self._check_components(used, offset, params)
        elif self.range is not None:
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

    def _check_components(
        self, used: Array, offset: tuple[int, ...], params: dict[str, int]
    ) -> None:
        """Each component of a tuple-valued UF's array within its part of the range."""
        first = offset[-1]
        for k in range(used.shape[-1]):
            c = first + k
            rb = self._bounds(-1 - c, self.components[c], params)
            lo, hi = rb[0] if rb is not None else (1, 0)
            column = used[..., k]
            bad = np.flatnonzero(((column < lo) | (column > hi)).ravel())
            if bad.size:
                at = np.unravel_index(int(bad[0]), column.shape)
                index = (*(int(i) + o for i, o in zip(at, offset, strict=False)), c)
                raise self.range_error(index, int(column[at]), params)

    def negative_domain(self, axis: int, lo: int, params: dict[str, int]) -> ArgumentError:
        """The error for a declared domain that reaches index ``lo < 0`` along ``axis``: an
        index array holds the indices from 0 on, so a read there would be before its start
        (the kernel's loops read ``f(i)`` as ``f[i]``)."""
        where = f" along axis {axis}" if self.uf.array_uf().arity > 1 else ""
        return ArgumentError(
            f"{self.label}: UF {self.uf.name!r} has the declared domain {self.uf.domain}, "
            f"which reaches index {lo}{where}{with_params(params)}, but an index array holds "
            f"the indices from 0 on; declare the domain from 0 (shift the UF's arguments)"
        )

    def min_shape(self, params: dict[str, int], key: tuple[int, ...]) -> tuple[int, ...] | None:
        """The least extent per axis an array needs for the declared domain, remembered per
        ``key`` (the call's parameter values); None when the values must be checked here: an
        empty declared range (every value the kernel would read breaks it), or a lowest value
        above 0 for a UF the loops test against ``[0, hi]`` (:attr:`zero_based`)."""
        if key in self._shapes:
            return self._shapes[key]
        if self.components:  # a tuple-valued UF's components are checked here
            return None
        need: tuple[int, ...] | None = None
        rb = self._bounds(False, self.range, params) if self.range is not None else [(0, 0)]
        if rb is not None and rb[0][0] <= rb[0][1] and (rb[0][0] == 0 or not self.zero_based):
            box = self._bounds(True, self.domain, params) if self.domain is not None else None
            if self.domain is None or box is None:
                need = ()
            elif not any(-_BIG < lo < 0 for lo, _ in box):  # else check() refuses it
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
        part = ""
        if self.components and 0 <= at[-1] < len(self.components):
            part = f" (component {at[-1]}: {self.uf.component_range(at[-1])})"
        return ArgumentError(
            f"{self.label}: {name}[{where}] = {value} is outside the declared range "
            f"{self.uf.range} of UF {name!r}{part}{with_params(params)}; fix the index array "
            f"or its declaration{IN_LOOP if in_loop else ''}"
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
            f"{ORDER_IN_LOOP if in_loop else ''}"
        )


IN_LOOP = (
    " (found inside the kernel's loops where the value was read: the call's outputs may be "
    "partially written and hold no valid result; the loops used the nearest bound of the "
    "range in its place, so no access went out of bounds through it)"
)
"""How a message says that the in-loop checks (spf.codegen.arg_checks) found a value out of
its declared range."""

ORDER_IN_LOOP = (
    " (found inside the kernel's loops where the values were read: the call's outputs may "
    "be partially written and hold no valid result)"
)
"""How a message says that the in-loop checks found a declared monotonicity broken (the
values themselves are in range: nothing was replaced)."""

FACT_IN_LOOP = (
    " (found inside the kernel's loops where it was tested: the call's outputs may be "
    "partially written and hold no valid result; no access relies on this fact to stay in "
    "bounds, as spf tests a fact an access relies on before the loops)"
)
"""How a message says that the in-loop checks found a broken fact: only a fact no bounds
proof uses is tested there (:func:`spf.analysis.in_loop_safety.safe_in_loop`)."""


def with_params(params: dict[str, int]) -> str:
    """`` (with M=3, N=4)`` for a message (empty without parameters)."""
    text = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f" (with {text})" if text else ""


def real_constant(label: str, name: str, value: object) -> float:
    """``value`` bound to the floating constant ``name`` (a C double), or an
    :class:`~spf.errors.ArgumentError` starting with ``label``: a real number (a 0-d array
    holds one), not a bool or a complex (which would lose its imaginary part), within the
    doubles. Shared by the kernels' binding and the MPI runtime's."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool | np.bool_ | np.complexfloating) or not isinstance(
        value, int | float | np.number
    ):
        raise ArgumentError(
            f"{label}: constant {name!r} must be a number (real: it is a double), got "
            f"{type(value).__name__} {value!r}"
        )
    try:
        return float(value)
    except OverflowError:  # an int beyond the doubles
        raise ArgumentError(f"{label}: constant {name!r} = {value} does not fit a double") from None
