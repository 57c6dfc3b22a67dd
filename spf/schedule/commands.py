"""Scheduling commands (Tiramisu Layer II) as frozen data: what to do, not how.

Each command is an immutable record of one call of a ``Stmt`` method (``s.tile(...)`` is
:class:`Tile`); :mod:`spf.schedule.apply` gives it its meaning, a new scattering relation
built by composing a transformation relation on the schedule's output space, or new tags.
``__post_init__`` checks what can be checked without the statement (types, positive
factors, valid names); loop names are checked against the statement when applied.

>>> Tile(i="i", j="j", ti=2, tj=2, i0="i0", j0="j0", i1="i1", j1="j1")
Tile(i='i', j='j', ti=2, tj=2, i0='i0', j0='j0', i1='i1', j1='j1')
>>> Split(loop="i", factor=0, outer="i0", inner="i1")
Traceback (most recent call last):
...
spf.errors.ScheduleError: split: factor must be a positive int, got 0
"""

from __future__ import annotations

import enum
import json
import keyword
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Final, Literal

from spf.clang import check_reserved
from spf.errors import InternalError, ScheduleError
from spf.schedule.tags import MAX_UNROLL, REDUCTION_OPTIONS, SUM_COUNTS


class Root(enum.Enum):
    """The level above every loop (``spf.ROOT``): ``s1.after(s0, spf.ROOT)`` shares no loop."""

    ROOT = "ROOT"

    def __repr__(self) -> str:
        return "spf.ROOT"


ROOT: Final = Root.ROOT

Loop = str | int
"""A loop by its current name or its depth (0 = outermost)."""
Level = str | int | Literal[Root.ROOT]
"""A loop, or ``ROOT`` (above every loop)."""

INTERNAL_PREFIX = "_spf_"
"""Names spf uses inside transformation relations; no loop name may start with it."""


def check_loop_ref(cmd: str, what: str, loop: object, *, root_ok: bool = False) -> None:
    """A loop reference is a name (``str``) or a depth (non-negative ``int``)."""
    if root_ok and loop is ROOT:
        return
    if isinstance(loop, bool) or not isinstance(loop, (str, int)):
        also = ", or spf.ROOT" if root_ok else ""
        raise ScheduleError(f"{cmd}: {what} must be a loop name or depth{also}, got {loop!r}")
    if isinstance(loop, int) and loop < 0:
        raise ScheduleError(
            f"{cmd}: {what} depth must be >= 0 (0 is the outermost loop), got {loop}"
        )


#: Largest magnitude of a factor, size or amount of a command: the transformed loop bounds
#: are int64_t arithmetic (``i + amount``, ``j + factor*i``), which a larger one overflows
#: silently at ordinary extents (a shift by ``2**63 - 1`` ran no iteration right).
MAX_AMOUNT = 2**31 - 1


def check_positive(cmd: str, what: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ScheduleError(f"{cmd}: {what} must be a positive int, got {value!r}")
    _check_magnitude(cmd, what, value)


def check_int(cmd: str, what: str, value: object, *, nonzero: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or (nonzero and value == 0):
        kind = "a non-zero int" if nonzero else "an int"
        raise ScheduleError(f"{cmd}: {what} must be {kind}, got {value!r}")
    _check_magnitude(cmd, what, value)


def _check_magnitude(cmd: str, what: str, value: int) -> None:
    if abs(value) > MAX_AMOUNT:
        raise ScheduleError(
            f"{cmd}: {what} {value} is too large: the generated loop arithmetic is int64_t, "
            f"which the transformed bounds would overflow; use at most 2**31 - 1 in magnitude"
        )


def check_name(cmd: str, what: str, name: object) -> None:
    """A new loop name: a C identifier, no keyword, not an spf-internal name."""
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise ScheduleError(f"{cmd}: {what} must be a C identifier, got {name!r}")
    if keyword.iskeyword(name):
        raise ScheduleError(f"{cmd}: {what} {name!r} is a reserved word; pick another loop name")
    check_reserved(f"{cmd}: {what}", name, in_sets=True)


def _distinct(cmd: str, names: list[str | None]) -> None:
    given = [n for n in names if n is not None]
    for n in given:
        if given.count(n) > 1:
            raise ScheduleError(f"{cmd}: the new loop name {n!r} is given twice")


@dataclass(frozen=True, kw_only=True)
class Command:
    """Base of every scheduling command; ``method`` is the ``Stmt`` method that records it."""

    method: ClassVar[str] = ""
    n_required: ClassVar[int] = 0
    """How many leading fields are positional in the ``Stmt`` method (the rest keywords)."""

    def call_args(self) -> tuple[list[object], dict[str, object]]:
        """Positional and keyword arguments of the equivalent ``Stmt`` method call (keyword
        arguments left at their default ``None`` are omitted)."""
        values = [(f.name, getattr(self, f.name)) for f in fields(self)]
        pos = [v for _, v in values[: self.n_required]]
        kw = {k: v for k, v in values[self.n_required :] if v is not None}
        return pos, kw

    def call_text(self) -> str:
        """``tile('i', 'j', 2, 2, 'i0', 'j0', 'i1', 'j1')`` (Python, with ``spf.ROOT``)."""
        pos, kw = self.call_args()
        args = [_py(v) for v in pos] + [f"{k}={_py(v)}" for k, v in kw.items()]
        return f"{self.method}({', '.join(args)})"

    def trace_text(self, stmt: str, var: str = "comp") -> str:
        """The Python line that applies this command to statement ``stmt`` of the
        computation bound to ``var``: ``comp.stmt("s0").tile(...)``."""
        return f"{var}.stmt({_py(stmt)}).{self.call_text()}"

    def orders(self, stmt: str) -> tuple[tuple[str, After], ...]:
        """The program orders this command, applied to ``stmt``, puts in force, as
        ``(statement, After)`` (the statement runs after ``After.other``); none for a
        command that only transforms loops or tags."""
        return ()

    def replaced(self, stmt: str) -> frozenset[frozenset[str]]:
        """The statement pairs whose earlier orders this command, applied to ``stmt``,
        ends (PDFG ``fuse`` moving a statement away from its predecessor)."""
        return frozenset()


@dataclass(frozen=True, kw_only=True)
class Effect(Command):
    """A command that changes more than schedules and tags (a domain, a data layout, the
    statement list): :func:`spf.computation.scheduling.run` calls :meth:`perform` on the
    statement instead of the pure schedule machinery, then records the command in the trace
    like any other. Subclasses live next to what they change (in spf.computation) and
    register with :func:`register_command` so traces and JSON know them."""

    def perform(self, stmt: Any) -> None:
        """Apply to ``stmt`` (an ``spf.Stmt``; this layer knows no statements) and its
        computation; raise before changing anything."""
        raise InternalError(f"spf bug: {type(self).__name__} does not define perform()")


def register_command(cls: type[Command]) -> type[Command]:
    """Make ``cls`` known to traces and JSON by its class name (usable as a decorator)."""
    COMMANDS[cls.__name__] = cls
    return cls


def _py(value: object) -> str:
    """``value`` as Python source; a string in double quotes with its backslashes, quotes
    and control characters (a relation written over several lines) escaped, so a trace line
    is one line of Python that replays (JSON's escapes are Python's)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


# ------------------------------------------------------------------------ loop transforms
@dataclass(frozen=True, kw_only=True)
class Tile(Command):
    """Tile consecutive loops ``i`` and ``j`` by ``ti x tj``: ``i = ti*i0 + i1``,
    ``0 <= i1 < ti`` (same for ``j``); the schedule becomes ``[.., i0, 0, j0, 0, i1, c, j1,
    ..]`` with ``c`` the constant that was between ``i`` and ``j``."""

    method: ClassVar[str] = "tile"
    n_required: ClassVar[int] = 8
    i: Loop
    j: Loop
    ti: int
    tj: int
    i0: str
    j0: str
    i1: str
    j1: str

    def __post_init__(self) -> None:
        check_loop_ref("tile", "i", self.i)
        check_loop_ref("tile", "j", self.j)
        check_positive("tile", "ti", self.ti)
        check_positive("tile", "tj", self.tj)
        for what in ("i0", "j0", "i1", "j1"):
            check_name("tile", what, getattr(self, what))
        _distinct("tile", [self.i0, self.j0, self.i1, self.j1])


@dataclass(frozen=True, kw_only=True)
class Split(Command):
    """``loop = factor*outer + inner``, ``0 <= inner < factor``: ``[.., outer, 0, inner, ..]``."""

    method: ClassVar[str] = "split"
    n_required: ClassVar[int] = 4
    loop: Loop
    factor: int
    outer: str
    inner: str

    def __post_init__(self) -> None:
        check_loop_ref("split", "loop", self.loop)
        check_positive("split", "factor", self.factor)
        check_name("split", "outer", self.outer)
        check_name("split", "inner", self.inner)
        _distinct("split", [self.outer, self.inner])


@dataclass(frozen=True, kw_only=True)
class Interchange(Command):
    """Swap two loops (any depths); names travel with the loops."""

    method: ClassVar[str] = "interchange"
    n_required: ClassVar[int] = 2
    i: Loop
    j: Loop

    def __post_init__(self) -> None:
        check_loop_ref("interchange", "i", self.i)
        check_loop_ref("interchange", "j", self.j)


@dataclass(frozen=True, kw_only=True)
class Shift(Command):
    """``loop' = loop + amount`` (the name is kept)."""

    method: ClassVar[str] = "shift"
    n_required: ClassVar[int] = 2
    loop: Loop
    amount: int

    def __post_init__(self) -> None:
        check_loop_ref("shift", "loop", self.loop)
        check_int("shift", "amount", self.amount)


@dataclass(frozen=True, kw_only=True)
class Skew(Command):
    """``j' = j + factor*i``; ``new_i`` / ``new_j`` rename the loops when given. ``factor``
    is a non-zero int (negative skews are allowed)."""

    method: ClassVar[str] = "skew"
    n_required: ClassVar[int] = 3
    i: Loop
    j: Loop
    factor: int
    new_i: str | None = None
    new_j: str | None = None

    def __post_init__(self) -> None:
        check_loop_ref("skew", "i", self.i)
        check_loop_ref("skew", "j", self.j)
        check_int("skew", "factor", self.factor, nonzero=True)
        for what in ("new_i", "new_j"):
            if getattr(self, what) is not None:
                check_name("skew", what, getattr(self, what))
        _distinct("skew", [self.new_i, self.new_j])


@dataclass(frozen=True, kw_only=True)
class Reverse(Command):
    """``loop' = -loop`` (the name is kept)."""

    method: ClassVar[str] = "reverse"
    n_required: ClassVar[int] = 1
    loop: Loop

    def __post_init__(self) -> None:
        check_loop_ref("reverse", "loop", self.loop)


@dataclass(frozen=True, kw_only=True)
class SetSchedule(Command):
    """Replace the schedule (relation text; its input arity must be the domain's)."""

    method: ClassVar[str] = "set_schedule"
    n_required: ClassVar[int] = 1
    relation: str

    def __post_init__(self) -> None:
        if not isinstance(self.relation, str):
            raise ScheduleError(f"set_schedule: expected relation text, got {self.relation!r}")


# ----------------------------------------------------------------------------------- tags
@dataclass(frozen=True, kw_only=True)
class Unroll(Command):
    """Tag ``loop`` ``unroll(factor)`` (C: ``#pragma GCC unroll factor``); ``factor`` is
    1 to :data:`~spf.schedule.tags.MAX_UNROLL`. Unrolling a loop again replaces the factor."""

    method: ClassVar[str] = "unroll"
    n_required: ClassVar[int] = 2
    loop: Loop
    factor: int

    def __post_init__(self) -> None:
        check_loop_ref("unroll", "loop", self.loop)
        check_positive("unroll", "factor", self.factor)
        if self.factor > MAX_UNROLL:
            raise ScheduleError(
                f"unroll: factor {self.factor} of loop {self.loop!r} is larger than "
                f"{MAX_UNROLL}; split the loop and unroll the inner part by a smaller factor"
            )


@dataclass(frozen=True, kw_only=True)
class Vectorize(Command):
    """Split ``loop`` by ``width`` into ``outer`` and ``inner`` (default ``<loop>0`` and
    ``<loop>1``) and tag ``inner`` ``vector(width)`` (C: ``#pragma omp simd``); the last,
    partial vector is the scalar remainder."""

    method: ClassVar[str] = "vectorize"
    n_required: ClassVar[int] = 2
    loop: Loop
    width: int
    outer: str | None = None
    inner: str | None = None

    def __post_init__(self) -> None:
        check_loop_ref("vectorize", "loop", self.loop)
        check_positive("vectorize", "width", self.width)
        for what in ("outer", "inner"):
            if getattr(self, what) is not None:
                check_name("vectorize", what, getattr(self, what))
        _distinct("vectorize", [self.outer, self.inner])


@dataclass(frozen=True, kw_only=True)
class Parallelize(Command):
    """Tag ``loop`` ``parallel`` (C: ``#pragma omp parallel for``); checked against the
    dependences by ``check_legality`` and ``codegen``, not here. ``reduction`` (``"atomic"``
    or ``"privatize"``) also tags it ``reduction(<option>)``: the dependences it carries are
    all reductions (``y(col(k)) += e``), run with atomic updates or per-thread copies of
    the reduced data spaces (:data:`spf.schedule.tags.REDUCTION_OPTIONS`)."""

    method: ClassVar[str] = "parallelize"
    n_required: ClassVar[int] = 1
    loop: Loop
    reduction: str | None = None

    def __post_init__(self) -> None:
        check_loop_ref("parallelize", "loop", self.loop)
        if self.reduction is not None and self.reduction not in REDUCTION_OPTIONS:
            raise ScheduleError(
                f"parallelize: reduction must be one of "
                f"{', '.join(repr(o) for o in REDUCTION_OPTIONS)} (or None for no reduction), "
                f"got {self.reduction!r}"
            )


@dataclass(frozen=True, kw_only=True)
class PartialSums(Command):
    """Tag ``loop`` ``sums(count,min_trip)``: the loop accumulates into ``count`` partial
    sums, iteration ``t`` of an instance into sum ``t mod count``, added pairwise at its
    end, in every instance of at least ``min_trip`` iterations (shorter ones keep the
    in-order sum). It reassociates a floating-point reduction, so it is never a default:
    checked by ``check_legality`` and ``codegen`` like ``parallelize(loop,
    reduction=...)`` (every dependence the loop carries is an accumulation into one
    element, :data:`~spf.schedule.tags.SUM_COUNTS`, docs/scheduling.md)."""

    method: ClassVar[str] = "partial_sums"
    n_required: ClassVar[int] = 1
    loop: Loop
    count: int = 4
    min_trip: int = 16

    def __post_init__(self) -> None:
        check_loop_ref("partial_sums", "loop", self.loop)
        check_positive("partial_sums", "count", self.count)
        check_positive("partial_sums", "min_trip", self.min_trip)
        if self.count not in SUM_COUNTS:
            raise ScheduleError(
                f"partial_sums: count of loop {self.loop!r} must be one of "
                f"{', '.join(map(str, SUM_COUNTS))} (sums added pairwise), got {self.count}"
            )
        if self.min_trip < self.count:
            raise ScheduleError(
                f"partial_sums: min_trip of loop {self.loop!r} must be at least count "
                f"({self.count}), got {self.min_trip}"
            )


@dataclass(frozen=True, kw_only=True)
class Distribute(Command):
    """Tag ``loop`` ``distribute``: its iterations are spread over MPI ranks (rank ``r`` runs
    the iterations with ``loop = r``). Other targets run it as an ordinary loop."""

    method: ClassVar[str] = "distribute"
    n_required: ClassVar[int] = 1
    loop: Loop

    def __post_init__(self) -> None:
        check_loop_ref("distribute", "loop", self.loop)


WAVEFRONT_METHODS = ("auto", "levels", "p2p", "coarse")
"""How a wavefront loop runs its levels: ``levels`` (one barrier per level), ``p2p`` (each
iteration waits on its own predecessors only), ``coarse`` (levels merged into coarse levels
of balanced independent parts, one barrier per coarse level) or ``auto`` (the coarse
executor; each plan picks serial, levels or coarse from its shape)."""


@dataclass(frozen=True, kw_only=True)
class Wavefront(Command):
    """Tag ``loop`` ``wavefront(<method>)``: its iterations run in dependence levels that an
    inspector computes at run time (:mod:`spf.analysis.inspector`). ``Computation.wavefront``
    and ``Stmt.wavefront`` check the dependences the loop carries before recording it."""

    method: ClassVar[str] = "wavefront"
    n_required: ClassVar[int] = 1
    loop: Loop
    how: str = "auto"
    whole: str | None = None
    """The loop ``comp.wavefront`` named when one call tagged several statements (each
    entry's ``loop`` is the statement's own name for it): the trace prints the run of those
    entries as that one call (``stmt.wavefront`` on one statement of them alone is
    refused)."""

    def __post_init__(self) -> None:
        check_loop_ref("wavefront", "loop", self.loop)
        if self.whole is not None and not isinstance(self.whole, str):
            raise ScheduleError(f"wavefront: whole must be a loop name or None, got {self.whole!r}")
        if self.how not in WAVEFRONT_METHODS:
            raise ScheduleError(
                f"wavefront: unknown method {self.how!r} for loop {self.loop!r}; use one of "
                f"{', '.join(repr(m) for m in WAVEFRONT_METHODS)}"
            )

    def call_text(self) -> str:
        """``wavefront("i", method="levels")`` (the keyword is ``method`` in the API)."""
        return f"wavefront({_py(self.loop)}, method={_py(self.how)})"


def _loop_tuple(cmd: str, what: str, value: object) -> tuple[Loop, ...]:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise ScheduleError(f"{cmd}: {what} must be a tuple of 1 to 3 loops, got {value!r}")
    for k, loop in enumerate(value):
        check_loop_ref(cmd, f"{what}[{k}]", loop)
    return tuple(value)


@dataclass(frozen=True, kw_only=True)
class Gpu(Command):
    """Map loops to a CUDA grid: ``blocks`` (outer first) are tagged ``gpu_block(0..)``,
    ``threads`` ``gpu_thread(0..)``; the block loops and then the thread loops must be
    consecutive loops of the statement."""

    method: ClassVar[str] = "gpu"
    n_required: ClassVar[int] = 2
    blocks: tuple[Loop, ...]
    threads: tuple[Loop, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", _loop_tuple("gpu", "blocks", self.blocks))
        object.__setattr__(self, "threads", _loop_tuple("gpu", "threads", self.threads))


@dataclass(frozen=True, kw_only=True)
class TileGpu(Command):
    """``tile(i, j, ti, tj, i0, j0, i1, j1)`` then ``gpu((i0, j0), (i1, j1))``; the new loops
    are named ``<i>0``, ``<j>0``, ``<i>1``, ``<j>1`` unless given."""

    method: ClassVar[str] = "tile_gpu"
    n_required: ClassVar[int] = 4
    i: Loop
    j: Loop
    ti: int
    tj: int
    i0: str | None = None
    j0: str | None = None
    i1: str | None = None
    j1: str | None = None

    def __post_init__(self) -> None:
        check_loop_ref("tile_gpu", "i", self.i)
        check_loop_ref("tile_gpu", "j", self.j)
        check_positive("tile_gpu", "ti", self.ti)
        check_positive("tile_gpu", "tj", self.tj)
        for what in ("i0", "j0", "i1", "j1"):
            if getattr(self, what) is not None:
                check_name("tile_gpu", what, getattr(self, what))
        _distinct("tile_gpu", [self.i0, self.j0, self.i1, self.j1])


@dataclass(frozen=True, kw_only=True)
class Pipeline(Command):
    """Tag ``loop`` ``pipeline`` (``pipeline(ii)`` when ``ii > 1``): HLS
    ``#pragma HLS PIPELINE II=<ii>``. Other targets ignore it."""

    method: ClassVar[str] = "pipeline"
    n_required: ClassVar[int] = 1
    loop: Loop
    ii: int = 1

    def __post_init__(self) -> None:
        check_loop_ref("pipeline", "loop", self.loop)
        check_positive("pipeline", "ii", self.ii)


# ------------------------------------------------------------------------------- ordering
@dataclass(frozen=True, kw_only=True)
class After(Command):
    """Run right after statement ``other``, sharing its loops up to and including
    ``level`` (none for ``ROOT``). ``before`` and ``then`` are recorded as ``After`` on the
    statement that moves."""

    method: ClassVar[str] = "after"
    n_required: ClassVar[int] = 2
    other: str
    level: Level

    def __post_init__(self) -> None:
        if not isinstance(self.other, str) or not self.other:
            raise ScheduleError(f"after: other must be a statement or its name, got {self.other!r}")
        check_loop_ref("after", "level", self.level, root_ok=True)

    def orders(self, stmt: str) -> tuple[tuple[str, After], ...]:
        return ((stmt, self),)


Follow = tuple[str, str, Level]
"""``(succ, pred, level)``: ``succ`` runs after ``pred`` inside their loops up to ``level``."""


@dataclass(frozen=True, kw_only=True)
class Reschedule(Command):
    """PDFG ``reschedule``: the statement (with the nest fused into it) moves to the slot of
    statement ``other`` inside their loops up to and including ``level`` (none for
    ``ROOT``); ``other`` and the statements after it there move one slot later. ``follows``
    are the orders the move reversed (earlier orders of the statement that gave way), as
    they hold afterwards: with ``other`` running after the statement, the orders it puts in
    force. Recorded by ``comp.reschedule`` and printed as that call, so the trace replays
    to the same schedules."""

    method: ClassVar[str] = "reschedule"
    n_required: ClassVar[int] = 2
    other: str
    level: Level
    follows: tuple[Follow, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.other, str) or not self.other:
            raise ScheduleError(
                f"reschedule: other must be a statement or its name, got {self.other!r}"
            )
        check_loop_ref("reschedule", "level", self.level, root_ok=True)
        if not isinstance(self.follows, (tuple, list)):
            raise ScheduleError(
                f"reschedule: follows must be (succ, pred, level) triples, got {self.follows!r}"
            )
        triples = tuple(_follow(f) for f in self.follows)
        object.__setattr__(self, "follows", triples)  # JSON gives lists and None for ROOT

    def call_args(self) -> tuple[list[object], dict[str, object]]:
        return [self.other, self.level], {}

    def trace_text(self, stmt: str, var: str = "comp") -> str:
        """``comp.reschedule("s2", "s0")`` (which finds the same level and orders again)."""
        return f"{var}.reschedule({_py(stmt)}, {_py(self.other)})"

    def orders(self, stmt: str) -> tuple[tuple[str, After], ...]:
        moved = (self.other, After(other=stmt, level=self.level))
        flipped = tuple((succ, After(other=pred, level=lvl)) for succ, pred, lvl in self.follows)
        return (moved, *flipped)


@dataclass(frozen=True, kw_only=True)
class Fuse(Command):
    """PDFG ``fuse`` when it moves a statement away from an earlier predecessor: the
    statement runs right after ``other`` inside their loops up to and including ``level``
    (as ``after``), and its earlier orders after the statements in ``replaces`` give way
    (they no longer hold once it has moved; ``after`` would refuse them as conflicting
    predecessors). IEGenLib's ``fuse`` keeps no such orders: fusing a statement again,
    deeper, moves it. ``shared`` is the level the user gave ``fuse`` (a count of shared
    loops or a loop name), for printing: recorded by ``comp.fuse`` and printed as that call,
    so the trace replays to the same schedules."""

    method: ClassVar[str] = "fuse"
    n_required: ClassVar[int] = 2
    other: str
    level: Level
    shared: int | str = 0
    replaces: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.other, str) or not self.other:
            raise ScheduleError(f"fuse: other must be a statement or its name, got {self.other!r}")
        check_loop_ref("fuse", "level", self.level, root_ok=True)
        check_loop_ref("fuse", "shared", self.shared)
        if not isinstance(self.replaces, (tuple, list)) or not all(
            isinstance(r, str) and r for r in self.replaces
        ):
            raise ScheduleError(f"fuse: replaces must be statement names, got {self.replaces!r}")
        object.__setattr__(self, "replaces", tuple(self.replaces))  # JSON gives a list

    def call_args(self) -> tuple[list[object], dict[str, object]]:
        return [self.other, self.shared], {}

    def trace_text(self, stmt: str, var: str = "comp") -> str:
        """``comp.fuse("s3", "s1", 1)`` (which finds the same orders to give way again)."""
        return f"{var}.fuse({_py(self.other)}, {_py(stmt)}, {_py(self.shared)})"

    def replaced(self, stmt: str) -> frozenset[frozenset[str]]:
        return frozenset(frozenset((stmt, r)) for r in self.replaces)

    def orders(self, stmt: str) -> tuple[tuple[str, After], ...]:
        return ((stmt, After(other=self.other, level=self.level)),)


def _follow(triple: object) -> Follow:
    """A ``(succ, pred, level)`` triple of :attr:`Reschedule.follows` (from JSON: a list,
    ``None`` for ``ROOT``)."""
    if (
        isinstance(triple, (tuple, list))
        and len(triple) == 3
        and all(isinstance(v, str) and v for v in triple[:2])
    ):
        succ, pred, level = triple
        level = ROOT if level is None else level
        check_loop_ref("reschedule", "follows level", level, root_ok=True)
        return (succ, pred, level)
    raise ScheduleError(f"reschedule: follows must be (succ, pred, level) triples, got {triple!r}")


COMMANDS: dict[str, type[Command]] = {
    c.__name__: c
    for c in (
        Tile,
        Split,
        Interchange,
        Shift,
        Skew,
        Reverse,
        SetSchedule,
        Unroll,
        Vectorize,
        Parallelize,
        PartialSums,
        Distribute,
        Wavefront,
        Gpu,
        TileGpu,
        Pipeline,
        After,
        Reschedule,
        Fuse,
    )
}
"""Command classes by name (for JSON); :func:`register_command` adds :class:`Effect` commands."""
