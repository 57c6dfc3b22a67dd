"""A plan's arrays in the width the executor reads them (:data:`spf.analysis.executor.PLAN_DTYPE`).

A :class:`~spf.runtime.plan.Plan` keeps its public arrays (``order``, the level, group and
part pointers, the group flags) in 64 bits. The executor declares them 32-bit, which halves
the stream of positions each row reads; so each plan's arrays are narrowed once, on the
plan's first call that runs the executor (O(iterations), like the copies of
:mod:`spf.runtime.copies`), and kept with the plan while it lives. A plan whose positions do
not fit 32 bits (:data:`spf.runtime.copies.NARROW_LIMIT`) is not narrowed: its kernel runs
it on the executor compiled with 64-bit plan arrays.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Mapping

import numpy as np

from spf.runtime.copies import NARROW_LIMIT

_Kept = dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]
_NARROWED: weakref.WeakKeyDictionary[object, _Kept] = weakref.WeakKeyDictionary()
"""Per plan, per executor name and array of the plan: (the array, its 32-bit copy)."""
_LOCK = threading.Lock()
KEPT_PER_NAME = 3
"""Copies kept per executor name and plan: the levels and p2p executors' arrays and a fused
loop in order's (an array the plan does not hold would otherwise be kept per call)."""


def fits(positions: int) -> bool:
    """Whether a plan of ``positions`` iterations runs on 32-bit plan arrays (every entry
    of its arrays is a position, a count of positions or parts, or a 0/1 flag)."""
    return positions < NARROW_LIMIT


def narrowed(
    plan: object, extra: Mapping[str, object], names: Collection[str]
) -> dict[str, object]:
    """``extra`` (a call's plan arguments, by the executor's names) with the arrays named in
    ``names`` as read-only 32-bit arrays, narrowed on ``plan``'s first call and kept with it
    (call only for a plan that :func:`fits`). A copy is kept per name and reused while the
    name stands for the same array of the plan (the levels and p2p kernels of one
    computation pass different arrays of one plan as ``levelptr``, and a fused plan's loop in
    order passes its own: each is kept, so calls that alternate between them narrow nothing
    again)."""
    out = dict(extra)
    with _LOCK:
        kept = _NARROWED.get(plan)
        if kept is None:
            kept = _NARROWED[plan] = {}
        for name in names:
            a = extra.get(name)
            if not isinstance(a, np.ndarray):
                continue
            if a.dtype == np.int32 and not a.flags.writeable:
                continue  # already narrow (a coarse plan's order from the fill: NARROW_ORDER)
            got = kept.get((name, id(a)))  # the entry holds ``a``: its id stays its own
            if got is None:
                mine = [key for key in kept if key[0] == name]
                for key in mine[: max(len(mine) - KEPT_PER_NAME + 1, 0)]:
                    del kept[key]  # the oldest (dicts keep insertion order)
                small = a.astype(np.int32)
                small.setflags(write=False)
                got = kept[(name, id(a))] = (a, small)
            out[name] = got[1]
    return out
