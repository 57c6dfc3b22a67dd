"""A kernel call with most of its arguments bound once (docs/backends/c.md, "Prepared calls").

``call = kernel.prepare(["y", "x"], A=A, col=col, rowptr=rowptr, N=n, M=m, NNZ=nnz)`` binds
the parameters and every array but the *free* data spaces named first: their dtypes, shapes
and flags are checked, and ``check=True`` (the default) runs the checked function once on
them with zero-filled free arrays, so the index arrays' facts are verified (an
:class:`~spf.errors.ArgumentError` says which, as a checked call does) before anything is
returned. ``call(y, x)`` (positions in the order named, or ``call(y=y, x=x)``) then checks
only the free arrays' look (exact dtype, declared shape, contiguity, alignment,
writeability where written) and makes the one C call, as MKL's inspector-executor handle
does: the bound arrays' cffi buffers were made once (the free arrays' are remembered for the
same array objects), nothing is bound by name.

A prepared call is an unchecked call on the bound arrays: they are kept by reference, so
arrays changed in place after :meth:`~spf.runtime.kernel.Kernel.prepare` are not verified
again, and no overlap between the free arrays is tested (``kernel(..., check=True)`` does
both). OpenMP kernels run under spf's thread governor as every call does.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError

if TYPE_CHECKING:
    from spf.runtime.binding import _Data
    from spf.runtime.kernel import Kernel

__all__ = ["PreparedCall"]

_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x100, 0x400
"""numpy's ``flags.num`` bits."""
_LOOK = operator.attrgetter("dtype", "shape", "flags.num")


class _Free:
    """One free data space: where it goes in the C call and what it must look like."""

    def __init__(self, data: _Data, slot: int, ctype: Any, params: dict[str, int]) -> None:
        self.data, self.slot, self.ctype, self.params = data, slot, ctype, params
        assert data.shape_of is not None  # prepare() refuses a free array without a shape
        self.dtype, self.shape = data.dtype, data.shape_of(params)
        self.mask = _C_CONTIGUOUS | _ALIGNED | (_WRITEABLE if data.writes else 0)
        self.last: Any = None
        self.buffer: Any = None

    def fits(self, dtype: np.dtype[Any], shape: tuple[int, ...], flags: int) -> bool:
        """Whether an array of this look is passed as it is (the common call)."""
        return dtype is self.dtype and shape == self.shape and flags & self.mask == self.mask

    def array(self, value: object) -> Any:
        """``value`` read in the declared shape (a blocked data space passed flat), or the
        :class:`ArgumentError` for it."""
        d = self.data
        if d.ok(value, self.params):
            return value
        flat = d.unflatten(value, self.params)
        if d.ok(flat, self.params):
            return flat
        raise d.explain(value, self.params)


class PreparedCall:
    """``kernel.prepare(free, **bound)``: call it with the free data spaces only."""

    def __init__(
        self, kernel: Kernel, free: Sequence[str], bound: Mapping[str, object], check: bool
    ) -> None:
        self.kernel = kernel
        where = f"kernel {kernel.name}: prepare"
        binder = kernel._binder
        data = {d.name: d for d in binder.data}
        names = _free_names(free, where)
        for name in names:
            _check_free(kernel, data.get(name), name, bound, where)
        params = _params(binder, bound, where)
        zeros = {n: np.zeros(_shape(data[n], params), data[n].dtype) for n in names}
        given = {**bound, **params, **zeros}
        values_of, arrays = binder.bind(given, check=False)
        if check:  # one checked run: the bound arrays' facts; written ones on copies
            trial = {n: np.copy(a) if data[n].writes and n in bound else a
                     for n, a in zip(data, arrays, strict=True)}  # fmt: skip
            kernel(**{**params, **trial}, check=True)
        self.names = names
        """The free data spaces, in the order :meth:`__call__` takes them."""
        self.params = dict(values_of)
        self._values = tuple(values_of[n] for n in binder.param_order)
        self._arrays = list(arrays)
        slots = {d.name: i for i, d in enumerate(binder.data)}
        hole: list[Any] = [object() for _ in binder.data]
        buffers = [
            hole[i] if d.name in names else kernel._from_buffer(kernel._ctypes[i], arrays[i])
            for i, d in enumerate(binder.data)
        ]
        template = kernel._cargs(self.params, buffers)
        at = {id(h): k for k, h in enumerate(template)}
        self._free = tuple(
            _Free(data[n], at[id(hole[slots[n]])], kernel._ctypes[slots[n]], self.params)
            for n in names
        )
        self._index = tuple(slots[n] for n in names)
        self._template = template
        self._direct = kernel._direct

    def __repr__(self) -> str:
        return f"<PreparedCall {self.kernel.name}({', '.join(self.names)})>"

    def __call__(self, *arrays: object, **named: object) -> None:
        """Run the kernel on the free data spaces (by position in :attr:`names` order, or
        by name); outputs are written in place."""
        arrays = self._free_arrays(arrays, named)
        cargs = self._template.copy()
        for f, value in zip(self._free, arrays, strict=True):
            if type(value) is not np.ndarray or not f.fits(*_LOOK(value)):
                value = f.array(value)  # the declared shape flat, or the error
            if value is not f.last:  # a new array: its buffer (kept while it is the last)
                f.buffer = self.kernel._from_buffer(f.ctype, value)
                f.last = value
            cargs[f.slot] = f.buffer
        kernel = self.kernel
        if self._direct:
            kernel._last_threads = 1
            kernel._fn(*cargs)
            return
        full = list(self._arrays)
        for i, f in zip(self._index, self._free, strict=True):
            full[i] = f.last
        fn, fault = kernel._fn, None
        if kernel._fault is not None:
            fn, fault = kernel._fault, kernel._record()
            cargs.append(fault)
        kernel._run(fn, cargs, fault, full, self._values)

    def _free_arrays(
        self, arrays: tuple[object, ...], named: dict[str, object]
    ) -> tuple[object, ...]:
        """The free arrays of a call, by position in :attr:`names` order (those given by
        name put in it), or the error for too many or too few."""
        if named:
            arrays = self._by_name(arrays, named)
        if len(arrays) != len(self.names):
            raise ArgumentError(
                f"prepared call of {self.kernel.name}: expected {len(self.names)} array(s) "
                f"({', '.join(self.names)}), got {len(arrays)}"
            )
        return arrays

    def _by_name(self, arrays: tuple[object, ...], named: dict[str, object]) -> tuple[object, ...]:
        if arrays or set(named) != set(self.names):
            raise ArgumentError(
                f"prepared call of {self.kernel.name}: pass the free arrays "
                f"({', '.join(self.names)}) all by position or all by name, got "
                f"{len(arrays)} by position and {', '.join(named) or 'none'} by name"
            )
        return tuple(named[n] for n in self.names)


def _free_names(free: object, where: str) -> tuple[str, ...]:
    if isinstance(free, str) or not isinstance(free, Sequence):
        raise ArgumentError(
            f"{where}: the free data spaces are a list of names (['y', 'x']), got {free!r}"
        )
    names = tuple(free)
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ArgumentError(
            f"{where}: the free data spaces must be distinct names, at least one, got {free!r}"
        )
    return names


def _check_free(
    kernel: Kernel, d: _Data | None, name: str, bound: Mapping[str, object], where: str
) -> None:
    """Refuse a free argument ``name`` that is no data space with a declared shape, or that
    is bound too."""
    if d is None or d.is_uf:
        kinds = ", ".join(d.name for d in kernel._binder.data if not d.is_uf)
        raise ArgumentError(
            f"{where}: {name!r} is not a data space of {kernel.signature}; the free "
            f"arguments of a prepared call are data spaces ({kinds})"
        )
    if name in bound:
        raise ArgumentError(
            f"{where}: {name!r} is named free and also bound; pass it to the prepared call only"
        )
    if d.shape_of is None:
        raise ArgumentError(
            f"{where}: data space {name!r} has no declared shape, so a prepared call cannot "
            "check the arrays passed for it; bind it too or declare its shape"
        )


def _shape(d: _Data, params: dict[str, Any]) -> tuple[int, ...]:
    assert d.shape_of is not None  # _check_free refused a free array without one
    return d.shape_of(params)


def _params(binder: Any, bound: Mapping[str, object], where: str) -> dict[str, Any]:
    """The parameters given, and those that follow from the bound arrays' shapes."""
    params: dict[str, Any] = {p: bound[p] for p in binder.param_order if p in bound}
    for p in binder.param_order:
        if p not in params and (origin := binder._origin(p, bound)) is not None:
            params[p] = origin[2]
    missing = [p for p in binder.param_order if p not in params]
    if missing:
        raise ArgumentError(
            f"{where}: parameter(s) {', '.join(missing)} do not follow from the bound arrays' "
            f"shapes (only from a free one's); pass them, e.g. {missing[0]}=..."
        )
    return params
