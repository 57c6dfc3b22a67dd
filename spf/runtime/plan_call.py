"""Repeated unchecked calls of a kernel with a plan, replayed as one C call
(:class:`~spf.runtime.plan.WavefrontKernel`, docs/inspection.md "Calls with a plan").

A call ``kernel(..., plan=plan, check=False)`` first validates the plan against its
arguments (the loop, the inspector, the sizes, dtypes and parameter values it inspected),
picks how to run it (the serial kernel, the executor in the fused loop's order on one
thread, or the executor on the plan's arrays, by the plan's strategy and the thread
governor's team) and binds the plan's arrays, narrowed to 32 bits, to the executor's
arguments. On a small matrix that Python costs several times the arithmetic. So each
kernel keeps, per plan, a :class:`Quick`: the *look* of the last validated call's
arguments (their names, each parameter's type and value, each array's exact type, dtype,
shape and flags: all that the checks of an unchecked call read) and, per way of running
it, a :class:`Replay` of the C call that call made (the function, the parameter values,
the plan's arrays bound once, and where the call's own arrays go).

The rule: a later ``check=False`` call with the same plan whose arguments have that look
would pass every check again with the same outcome and bind the same way, so it runs the
replay (the governor still decides the team per call). The look of the arrays is read
on every call (an array reshaped, retyped or made read-only in place is seen); when the
call passes the very objects of the replay's last call (``is``), their cffi buffers are
reused too, after one C function (:mod:`spf.runtime.plan_look`) has read the call's
keyword dictionary whole: every argument the recorded object (an int: of its value),
every array still of its type, buffer address, dtype, flags, shape and strides (an array
resized in place and back to its shape is bound anew; where the helper cannot be built
the look is read in Python, without the buffer address). A ``"serial"`` plan's call on
those very arguments then runs its C call straight from the kernel's ``__call__``
(:data:`Hot`: no frame of this module's in between), where it can in one call of the
helper's ``hot_call``, which reads the look and makes the C call
(:data:`~spf.runtime.plan_look.HOT_CALL`); once such a call's record is made, the
helper's method stands for the class's ``__call__`` and makes it from the caller's keyword
dictionary with no Python frame at all (:mod:`spf.runtime.plan_method`). Anything else
(another array size or dtype, a read-only output, another ``N``, an extra or missing
argument, ``check=True``) takes the full path, with its errors, and the full path records
the new look. So a plan over a changed pattern stays an :class:`~spf.errors.ArgumentError`
exactly where it was one: ``check=False`` compares sizes and parameters (a pattern of
other sizes is refused), ``check=True`` the contents (a checksum of every index array,
every call). A record keeps its last call's arguments alive until its plan dies or a call
with other arguments replaces them, and its replays the buffers of the last two sets of
arguments they ran on (:attr:`Replay.before`: a keyword call and a prepared call of one plan
that alternate each find their own bound).
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.runtime.plan_look import LOOK_SAME, address, fire_record, looker
from spf.runtime.threads import _OMP, GOVERNOR

if TYPE_CHECKING:
    from spf.runtime.kernel import Kernel

LOOK = operator.attrgetter("dtype", "shape", "flags.num")
"""What the checks of an unchecked call read of an array (the flags hold contiguity,
alignment and writeability)."""

TYPED_LOOK = operator.attrgetter("__class__", "dtype", "shape", "flags.num")
""":data:`LOOK` with the object's exact type, in one read (an object without an array's
attributes raises ``AttributeError``)."""

KEPT = 64
"""Plans whose last call a kernel remembers (the oldest is dropped first). Calls that go
round more plans of one kernel than this all take the full path (at 8, the benchmark's
rotation over its 9 SuiteSparse matrices' plans of one fused kernel did); a record holds
its last call's arrays while its plan lives."""

SERIAL, ONE, TEAM = 0, 1, 2
"""How a :class:`Replay` runs: the serial kernel (no OpenMP region), the executor on one
OpenMP thread (the fused loop in order), the executor on the governor's team."""

ORDER, PARALLEL = "order", "parallel"
"""The ways a plan's call runs: in order on one thread, or by the plan's parts or levels."""

SAME = operator.is_

State = tuple[tuple[Any, ...], tuple[Any, ...], Any, int]
"""A :class:`Quick`'s :attr:`~Quick.last`: the arguments, their arrays, the C helper's
record of their look (None without it) and its address (0 without it)."""

Hot = tuple[Any, Any, tuple[Any, ...], "Kernel", tuple[Any, ...], int | None, Any]
"""A replayed call that is one C call (:meth:`Replay.hot`): the record of its arguments
(:mod:`spf.runtime.plan_look`), the C function, its bound arguments, the kernel whose
function it is, the arguments the record names (kept alive), and the address of the
record :data:`~spf.runtime.plan_look.HOT_CALL` takes with the array that holds it (None
until its first run, :func:`fired`; 0 where it can have none). A call whose
arguments the record reads as the recorded ones, unchanged, runs ``fn(*cargs)`` (in
``HOT_CALL``, the look and the call in one call from Python) and sets the kernels'
``last_threads`` to 1, and nothing else: on the benchmark's small matrices, timed cold in
a rotation, each Python frame and each cffi call between the call and C costs
microseconds. The look helper's C method (:mod:`spf.runtime.plan_method`) reads this
tuple too: its length (7), the kernel at 3 and the record's address at 5 (an ``int``), and
a :class:`Quick`'s ``plan`` and ``hot`` slots; change them there as well."""


class Replay:
    """One recorded C call: ``kernel``'s function on fixed parameter values, the plan's
    arrays (bound once) and the call's own arrays (bound per new array object)."""

    __slots__ = (
        "before",
        "bound",
        "fault",
        "fixed",
        "fn",
        "kernel",
        "mode",
        "order",
        "pick",
        "uctypes",
        "use",
    )

    def __init__(
        self, kernel: Kernel, values: tuple[Any, ...], ordered: tuple[Any, ...],
        given: tuple[Any, ...], names: tuple[str, ...], mode: int,
    ) -> None:  # fmt: skip
        """The replay of ``kernel``'s C call on parameter ``values`` and ``ordered``
        (its arrays, in its order), of which those named in ``names`` (the names of the
        call's arguments ``given``) are the call's own; the others are the plan's. By
        name, not by object: a call that passed one array for two arguments (``b`` as
        ``x``) must not leave a replay that reads both from one argument of later calls."""
        at = {name: n for n, name in enumerate(names) if type(given[n]) is np.ndarray}
        mine = [at.get(d.name) for d in kernel._binder.data]
        fb, ctypes = kernel._from_buffer, kernel._ctypes
        use: list[int] = []  # each own array of the C call as its position in ``given``
        uctypes: list[Any] = []
        fixed: list[Any] = list(values)
        plan_arrays: list[Any] = []
        where: list[int] = []  # each C array argument: own buffer n, or -1 - its fixed slot
        order: list[int] = []  # each array as its position in (given, plan arrays)
        for k, a in enumerate(ordered):
            n = mine[k]
            if n is None:  # the plan's array: bound once, the same object every call
                where.append(-1 - len(fixed))
                fixed.append(fb(ctypes[k], a))
                order.append(len(given) + len(plan_arrays))
                plan_arrays.append(a)
            else:
                where.append(len(use))
                use.append(n)
                uctypes.append(ctypes[k])
                order.append(n)
        own = len(use)
        places = [own + p for p in range(len(values))]
        places += [own - 1 - w if w < 0 else w for w in where]
        self.kernel = kernel
        self.fixed = tuple(fixed)
        self.use = getter(use)
        """The call's arguments -> the own arrays of the C call, in its order."""
        self.uctypes = tuple(uctypes)
        self.pick = getter(places)
        """(own buffers, then :attr:`fixed`) -> the C arguments."""
        self.order = (getter(order), tuple(plan_arrays), len(values))
        """What rebuilds the arrays in the kernel's order (for a fault's error)."""
        self.fault = kernel._fault is not None
        self.fn = kernel._fault if self.fault else kernel._fn
        self.mode = mode
        self.bound: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
        """(the arguments of the last call, its C arguments)."""
        self.before: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
        """:attr:`bound` of the call before it on other arguments: calls that alternate two
        sets of arguments of one plan (a keyword call and a prepared call, as the
        benchmark's rotation makes them, or two prepared calls on other free arrays) each
        find their buffers bound. With one set kept, each such call bound every array of
        the call anew (a cffi buffer each, 7 for the fused pair): about 2 us a call on a
        cold cache, as the benchmark times it. Tuples of arguments are known by identity:
        a record whose arrays changed in place gives a new tuple (:meth:`Quick.same`)."""

    @classmethod
    def of(
        cls, kernel: Kernel, merged: Mapping[str, object], given: tuple[Any, ...],
        names: tuple[str, ...], mode: int,
    ) -> Replay | None:  # fmt: skip
        """The replay of ``kernel(**merged, check=False)``, whose own arguments are
        ``given``, named ``names`` (the rest of ``merged``'s arrays come from the plan), or
        None when that call does not take the binding's fast path."""
        if not kernel._params_first:
            return None
        bound = kernel._fast(merged)
        if bound is None:
            return None
        return cls(kernel, tuple(bound[0]), tuple(bound[1]), given, names, mode)

    def hot(self, given: tuple[Any, ...], want: Any) -> Hot | None:
        """The :data:`Hot` call of this replay on arguments ``given``, whose record is
        ``want``, once it has bound them, when it runs nothing but its C function (the
        serial kernel, no fault record); else None."""
        last, cargs = self.bound
        if self.mode != SERIAL or self.fault or want is None or last is not given:
            return None
        return want, self.fn, cargs, self.kernel, given, None, None  # given: the objects kept

    def run(self, owner: Kernel, given: tuple[Any, ...], team: int) -> None:
        """The C call on the call's arguments ``given`` (the owner's and the kernel's
        ``last_threads`` become ``team``; one for the in-order runs). The common calls (no
        fault record, no team to lower) run in this one Python frame: on the benchmark's
        small matrices, timed one call at a time between other matrices' calls, each frame
        and attribute read of the call's Python costs several times its warm time."""
        kernel = self.kernel
        bound = self.bound
        last, cargs = bound
        if last is not given:
            before = self.before
            if before[0] is given:  # the other of two alternating sets: bound already
                cargs = before[1]
            else:
                fb = kernel._from_buffer
                cargs = self.pick((*map(fb, self.uctypes, self.use(given)), *self.fixed))
            self.before = bound
            self.bound = (given, cargs)
        mode = self.mode
        if mode != ONE:
            kernel._last_threads = owner._last_threads = team if mode == TEAM else 1
            if self.fault:
                self._fire(cargs, given)
            else:
                self.fn(*cargs)
            return
        kernel._last_threads = owner._last_threads = 1
        get, put = _OMP[0]  # the fused loop in order: a second thread would only wait
        previous = get()
        if previous == 1:
            self._fire(cargs, given)
            return
        put(1)
        try:
            self._fire(cargs, given)
        finally:
            put(previous)

    def _fire(self, cargs: tuple[Any, ...], given: tuple[Any, ...]) -> None:
        if not self.fault:
            self.fn(*cargs)
            return
        kernel = self.kernel
        fault = kernel._record()
        self.fn(*cargs, fault)
        if fault[0]:
            order, plan_arrays, values = self.order
            arrays = order((*given, *plan_arrays))
            kernel._raise_fault(fault, arrays, self.fixed[:values])


class Quick:
    """The look of a plan's last validated unchecked call and the replays of its C calls
    (:data:`ORDER`, :data:`PARALLEL`), recorded as the full path ran them."""

    __slots__ = (
        "count", "direct", "get", "hot", "last", "looks", "names", "params", "plan",
        "replays", "serial", "types",
    )  # fmt: skip

    def __init__(self, plan: weakref.ref[Any], args: Mapping[str, object], serial: bool) -> None:
        self.plan = plan
        names = sorted(args, key=lambda k: (type(args[k]) is np.ndarray, k))
        given = tuple(args[k] for k in names)
        self.names = tuple(names)
        """The arguments' names, in the record's order (parameters first)."""
        self.count = len(names)
        self.get = getter(names)
        self.types = tuple(map(type, given))
        self.params = sum(1 for t in self.types if t is not np.ndarray)
        self.looks = tuple(map(LOOK, given[self.params :]))
        self.last = self._state(given)
        """The arguments of the last call that matched (their values are the look's), its
        arrays, their look as the C helper reads it (:mod:`spf.runtime.plan_look`; None
        without it) and that record's address (0 without it), one tuple (replaced whole:
        calls from several threads never pair one call's arguments with another's arrays).
        The helper's method reads it (its length, 4, the arguments at 0 and the address at
        3) to fire a keyword call of a plan with no :attr:`direct` replay from C
        (:mod:`spf.runtime.plan_method`); change it there as well."""
        self.serial = serial
        """The plan's strategy is ``"serial"``: it runs in order whatever the team."""
        self.replays: dict[str, Replay | None] = {}
        self.direct: Replay | None = None
        """The :data:`ORDER` replay of a ``"serial"`` plan (it runs whatever the team): what
        :meth:`run` and a prepared call run without :meth:`fire`."""
        self.hot: Hot | None = None
        """:attr:`direct`'s call on the arguments of :attr:`last` (:meth:`Replay.hot`):
        what a keyword call of those very arguments, unchanged, runs straight from
        :meth:`~spf.runtime.plan.WavefrontKernel.__call__`."""

    def matches(self, args: Mapping[str, object]) -> tuple[Any, ...] | None:
        """``args``'s values in the record's order when they have the recorded look, else
        None (:meth:`same`)."""
        if len(args) != self.count:
            return None
        try:
            given = self.get(args)
        except KeyError:
            return None
        return self.same(given)

    def same(self, given: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """``given`` (arguments in the record's order) when they have the recorded look: the
        same objects as the last call's, unchanged in place (then that call's tuple, whose
        buffers the replays kept), or objects of the same types and parameter values with
        arrays of the recorded looks (then ``given``, which the replays bind anew). Else
        None."""
        state = self.last
        last = state[0]
        if all(map(SAME, given, last)) and self._unchanged(state):
            return last
        split = self.params
        if tuple(map(type, given)) != self.types or given[:split] != last[:split]:
            return None
        if tuple(map(LOOK, given[split:])) != self.looks:
            return None
        self.last = self._state(given)
        return given

    def _state(self, given: tuple[Any, ...]) -> State:
        """:attr:`last` for arguments ``given`` of the recorded look: with the C helper's
        record of every argument, by its name (:attr:`names`: the record holds neither the
        objects nor the names; this Quick keeps the names alive, :attr:`last` the objects)."""
        helper = looker()
        want = None if helper is None else helper[1](given, self.names)
        return given, given[self.params :], want, address(want)

    def _unchanged(self, state: State) -> bool:
        """Whether the arrays of :attr:`last` (``state``) still have the recorded look: read
        in C (their type, buffer, dtype, flags, shape and strides) when the helper was
        built, else in Python (their dtype, shape and flags). Once the helper is built, a
        state it did not record is not taken as unchanged: the caller binds the arguments
        anew and records their look in C (an array moved in place while the helper built
        has another buffer than the one the replays kept)."""
        given, arrays, want, _ = state
        if want is not None:
            return bool(LOOK_SAME[0](id(given), 0, want))
        if looker() is not None:
            return False
        return tuple(map(LOOK, arrays)) == self.looks

    def keep(
        self, way: str, kernel: Kernel, merged: Mapping[str, object],
        args: Mapping[str, object], mode: int,
    ) -> None:  # fmt: skip
        """Record the replay of the way ``way`` ran: ``kernel(**merged, check=False)``."""
        replay = self.replays[way] = Replay.of(kernel, merged, self.get(args), self.names, mode)
        if self.serial and way == ORDER:
            self.direct = replay
            self.hot = None

    def run(self, owner: Kernel, args: dict[str, object]) -> bool:
        """Replay the call on ``args`` (True), or False when the full path must run it
        (:meth:`matches`, then :meth:`fire`). The last call's very objects, unchanged,
        are read in one C call on the keyword dictionary itself (no tuple of them is
        built in Python)."""
        state = self.last
        want = state[2]
        if want is not None and LOOK_SAME[0](id(args), 1, want):
            same = state[0]
        else:
            found = self.matches(args)
            if found is None:
                return False
            same = found
        direct = self.direct
        if direct is None:
            return self.fire(owner, same)
        direct.run(owner, same, 1)
        state = self.last
        if state[0] is same:
            self.hot = direct.hot(same, state[2])
        return True

    def fire(self, owner: Kernel, same: tuple[Any, ...]) -> bool:
        """Replay the call on arguments :meth:`same` accepted (True), or False when the way
        the governor's team asks for has no replay yet."""
        if not self.replays:  # a plan whose calls are never replayed (p2p, copies)
            return False
        if self.serial:  # its replay, once recorded, runs as :attr:`direct`, not here
            return False
        previous, team = GOVERNOR.enter()
        try:
            replay = self.replays.get(ORDER if team == 1 else PARALLEL)
            if replay is None:
                return False
            replay.run(owner, same, team)
        finally:
            if previous:
                GOVERNOR.restore(previous)
        return True


def fired(hot: Hot) -> Hot:
    """``hot`` with its record for :data:`~spf.runtime.plan_look.HOT_CALL`
    (:func:`~spf.runtime.plan_look.fire_record`), or 0 in its place where it can have none:
    made once a hot call has run through cffi, so that a call on other arrays each time
    (which never runs hot) does not pay for it."""
    try:
        fire = fire_record(hot[1], hot[2], hot[0])
    except Exception:  # the C call ran already: a record it cannot have leaves cffi's way
        fire = None
    return (*hot[:5], *(fire or (0, None)))


def remember(
    kept: dict[int, Quick], plan: object, args: Mapping[str, object], serial: bool
) -> Quick | None:
    """The record in ``kept`` (a kernel's, by plan id) of ``plan``'s unchecked calls that
    look like ``args``, a call the full path validated: the one kept when it has that look,
    else a new one in its place; None when an argument is neither an ``int`` nor an
    ``ndarray`` (exact types, as the binding's fast path takes them: such calls always take
    the full path). A record leaves ``kept`` when its plan dies, or when :data:`KEPT` newer
    plans' records came after it. ``serial``: the plan's strategy is ``"serial"``."""
    key = id(plan)
    quick = kept.get(key)
    if quick is not None and quick.plan() is plan and quick.matches(args) is not None:
        return quick
    kept.pop(key, None)
    if not all(type(v) in _RECORDED for v in args.values()):
        return None

    def drop(ref: weakref.ref[Any]) -> None:  # the plan died: its record goes
        mine = kept.get(key)
        if mine is not None and mine.plan is ref:
            kept.pop(key, None)

    if len(kept) >= KEPT:
        kept.pop(next(iter(kept.copy())), None)  # the oldest
    quick = kept[key] = Quick(weakref.ref(plan, drop), args, serial)
    return quick


_RECORDED = (int, np.ndarray)
"""The exact types of the arguments a record takes (an ``ndarray`` subclass compared as a
parameter would compare elementwise)."""


def getter(items: tuple[Any, ...] | list[Any]) -> Callable[[Any], tuple[Any, ...]]:
    """``x -> tuple(x[i] for i in items)`` in one C call."""
    if len(items) > 1:
        return operator.itemgetter(*items)
    if items:
        item = items[0]
        return lambda x: (x[item],)
    return lambda x: ()
