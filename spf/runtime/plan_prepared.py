"""A wavefront kernel's call with its plan and most arguments bound once:
``kernel.prepare(free, plan=plan, **bound)`` (docs/inspection.md, "Calls with a plan").

The plan's counterpart of :class:`~spf.runtime.prepared.PreparedCall`, and of MKL's
inspector-executor handle: ``call = fused.prepare(["x", "y", "b"], plan=plan, **csr)`` binds
the plan, the index arrays and the values; ``check=True`` (the default) runs the kernel
once, checked, on zero-filled free arrays (and copies of the bound arrays it writes), so a
plan over other index arrays or a bad index array is an
:class:`~spf.errors.ArgumentError` raised by ``prepare``. ``call(x, y, b)`` is then an
unchecked call with the plan: its first call runs the full path (which records it,
:mod:`spf.runtime.plan_call`), later ones replay its C call after reading the look of
the free arrays, without building or reading a keyword dictionary; the thread governor
still picks each call's team. As with a prepared call of a plain kernel, the bound arrays
are held by reference: changed in place, they are not checked again (``check=True`` calls
of the kernel do that).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError
from spf.runtime.plan_call import SAME, TYPED_LOOK, Hot, Quick, fired, getter, remember
from spf.runtime.plan_look import HOT_CALL, LOOK_SAME, looker
from spf.runtime.prepared import PreparedCall, _check_free, _free_names

if TYPE_CHECKING:
    from spf.runtime.plan import Plan, WavefrontKernel

__all__ = ["PreparedPlanCall"]


class PreparedPlanCall(PreparedCall):
    """``kernel.prepare(free, plan=plan, **bound)``: call it with the free data spaces."""

    def __init__(  # the plain kernel's binding is not made: the plan's call binds
        self,
        kernel: WavefrontKernel,
        free: Sequence[str],
        plan: Plan,
        bound: Mapping[str, object],
        check: bool,
    ) -> None:
        self.kernel: WavefrontKernel = kernel
        where = f"kernel {kernel.name}: prepare"
        binder = kernel._binder
        data = {d.name: d for d in binder.data}
        self.names = names = _free_names(free, where)
        """The free data spaces, in the order :meth:`__call__` takes them."""
        for name in names:
            _check_free(kernel, data.get(name), name, bound, where)
        if check:
            params: dict[str, Any] = {p: v for p, v in bound.items() if p in binder.param_order}
            for p in binder.param_order:
                if p not in params and (origin := binder._origin(p, bound)) is not None:
                    params[p] = origin[2]
            zeros = {}
            for n in names:
                shape_of = data[n].shape_of
                assert shape_of is not None  # _check_free refused a free array without one
                try:
                    zeros[n] = np.zeros(shape_of(params), data[n].dtype)
                except KeyError as err:
                    raise ArgumentError(
                        f"{where}: parameter {err.args[0]} does not follow from the bound "
                        f"arrays' shapes (only from a free one's); pass it, e.g. "
                        f"{err.args[0]}=..."
                    ) from None
            trial = {k: np.array(v, copy=True) if k in data and data[k].writes else v
                     for k, v in bound.items()}  # fmt: skip
            kernel(**trial, **zeros, plan=plan, check=True)
        self.plan = plan
        self.bound = dict(bound)
        self._serial = plan.strategy == "serial"
        self._quick: Quick | None = None
        self._values: tuple[Any, ...] = ()
        self._order: Any = None
        """(bound values, then the free arrays) -> the arguments in the record's order."""
        self._state: tuple[tuple[object, ...], tuple[Any, ...], Any] = ((), (), None)
        """The last call's free arrays, its arguments in the record's order and the free
        arrays' look as the C helper recorded it (None without it), one tuple (replaced
        whole, so that calls from several threads never mix two calls' arrays)."""
        self._hot: Hot | None = None
        """The last call's C call (:meth:`~spf.runtime.plan_call.Replay.hot`, the record of
        its free arrays): what a call of those very arrays, unchanged, runs."""
        self._looks: list[tuple[Any, ...]] = []
        """The free arrays' types and looks (:data:`~spf.runtime.plan_call.TYPED_LOOK`) the
        record accepted."""

    def __call__(self, *arrays: object, **named: object) -> None:
        """Run the kernel with its plan on the free data spaces (by position in
        :attr:`names` order, or by name); outputs are written in place."""
        # the last call's very arrays, unchanged: its C call (inline, as in
        # plan.WavefrontKernel.__call__: a helper's call costs per call)
        hot = self._hot
        if hot is not None and not named:
            fire = hot[5]
            if fire:
                if HOT_CALL[0](arrays, False, fire):
                    self.kernel._last_threads = hot[3]._last_threads = 1
                    return
            elif LOOK_SAME[0](id(arrays), 0, hot[0]):
                self.kernel._last_threads = hot[3]._last_threads = 1
                hot[1](*hot[2])
                if fire is None:
                    self._hot = fired(hot)
                return
        if named or len(arrays) != len(self.names):  # else :meth:`_free_arrays` keeps them
            arrays = self._free_arrays(arrays, named)
        quick = self._quick
        if quick is not None:
            given = self._given(arrays)
            if given is not None:
                direct = quick.direct
                if direct is not None:
                    direct.run(self.kernel, given, 1)
                    state = self._state
                    self._hot = direct.hot(given, state[2]) if state[1] is given else None
                    return
                if quick.fire(self.kernel, given):
                    return
        args = {**self.bound, **dict(zip(self.names, arrays, strict=True))}
        self.kernel(**args, plan=self.plan, check=False)  # the full path, which records it
        self._record(args, arrays)

    def _given(self, arrays: tuple[object, ...]) -> tuple[Any, ...] | None:
        """The arguments in the record's order when the free ``arrays`` have the recorded
        look, else None. The last call's very objects, unchanged in place as the C helper
        reads them (:mod:`spf.runtime.plan_look`: type, buffer, dtype, flags, shape,
        strides), give that call's tuple, whose buffers the replays kept; others of the
        recorded look (read in Python) a new tuple, which the replays bind anew."""
        last, given, want = self._state
        if want is not None and LOOK_SAME[0](id(arrays), 0, want):
            return given
        same = all(map(SAME, arrays, last))
        try:
            if list(map(TYPED_LOOK, arrays)) != self._looks:
                return None
        except AttributeError:  # not an array: the full path says what it is
            return None
        looks = zip(arrays, self._looks, strict=True)  # as many as TYPED_LOOK compared
        if not same and any(type(a) is not look[0] for a, look in looks):
            return None  # e.g. a weakref.proxy, whose __class__ is its referent's
        if same and want is None and looker() is None:  # the same objects, read in Python
            return given
        # other objects, these changed in place, or a look the helper (built since) did not
        # record: bound anew (the replays' kept buffers may be stale)
        anew: tuple[Any, ...] = self._order((*self._values, *arrays))
        self._state = (arrays, anew, _want(arrays))
        return anew

    def _record(self, args: dict[str, object], arrays: tuple[object, ...]) -> None:
        """The record of the call just validated on ``args`` (whose free ``arrays`` are
        ``arrays``): where each argument goes in its order, and the free arrays' look."""
        quick = self._quick = remember(self.kernel._quick, self.plan, args, self._serial)
        if quick is None:  # arguments a record does not take: every call the full path
            return
        self._values = tuple(self.bound.values())
        at = {name: n for n, name in enumerate((*self.bound, *self.names))}
        self._order = getter([at[name] for name in quick.names])
        self._state = (arrays, self._order((*self._values, *arrays)), _want(arrays))
        self._looks = [TYPED_LOOK(a) for a in arrays]


def _want(arrays: tuple[object, ...]) -> Any:
    """The C helper's record of ``arrays``'s look (None while it is not built, or when one
    of them is not exactly an ``ndarray``)."""
    helper = looker()
    if helper is None or not all(type(a) is np.ndarray for a in arrays):
        return None
    return helper[1](arrays, None)
