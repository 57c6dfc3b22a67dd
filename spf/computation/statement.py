"""Statements: C source, iteration domain, scattering schedule and accesses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.errors import ArgumentError, ScheduleError, VerifyError
from spf.ir.reading import is_constant as is_constant
from spf.schedule.commands import (
    After,
    Command,
    Distribute,
    Gpu,
    Interchange,
    Level,
    Loop,
    Parallelize,
    PartialSums,
    Pipeline,
    Reverse,
    SetSchedule,
    Shift,
    Skew,
    Split,
    Tile,
    TileGpu,
    Unroll,
    Vectorize,
    Wavefront,
)
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.ir.source import ParsedSource

AccessList = tuple[tuple[str, Relation], ...]
AccessSpec = Sequence[tuple[str, "Relation | str"]]


class Stmt:
    """One statement of a computation (docs/getting_started.md).

    >>> s = Stmt("$y$(i) += $A$(i, j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}",
    ...          "{[i,j] -> [0,i,0,j,0]}")
    >>> s.loops
    ('i', 'j')
    """

    def __init__(
        self,
        source: str,
        domain: str | Set,
        schedule: str | Relation | None = None,
        reads: AccessSpec | None = None,
        writes: AccessSpec | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(source, str):
            raise ArgumentError(f"Stmt source must be C text, got {type(source).__name__}")
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise VerifyError(f"statement name {name!r} is not a valid identifier")
        self._source = source
        self._name = name
        self._domain = domain if isinstance(domain, Set) else _parse_set(domain, "domain")
        self._given_schedule = (
            None
            if schedule is None
            else schedule
            if isinstance(schedule, Relation)
            else _parse_rel(schedule, "schedule")
        )
        self._given_reads = _access_spec(reads, "reads")
        self._given_writes = _access_spec(writes, "writes")
        self._schedule: Relation | None = self._given_schedule
        self._original: Relation | None = None
        self._reads: AccessList = ()
        self._writes: AccessList = ()
        self._parsed: ParsedSource | None = None
        self._comp: Computation | None = None
        self._tags: dict[str, tuple[str, ...]] = {}

    # --- API attributes
    @property
    def name(self) -> str:
        """``s<k>`` unless named; ``"?"`` before the statement is added."""
        return self._name or "?"

    @property
    def source(self) -> str:
        return self._source

    @property
    def domain(self) -> Set:
        return self._domain

    @property
    def schedule(self) -> Relation:
        """The current scattering relation."""
        if self._schedule is None:
            raise VerifyError(
                f"statement {self.name}: no schedule until it is added to a Computation"
            )
        return self._schedule

    @property
    def original_schedule(self) -> Relation:
        """The schedule given when the statement was added (program order)."""
        return self._original if self._original is not None else self.schedule

    @property
    def reads(self) -> AccessList:
        return self._reads

    @property
    def writes(self) -> AccessList:
        return self._writes

    @property
    def loops(self) -> tuple[str, ...]:
        """Current loop names, outer first (schedule entries that are not constants)."""
        if self._schedule is None:
            return ()
        return tuple(v for v in self._schedule.out_vars if not is_constant(v))

    @property
    def computation(self) -> Computation | None:
        return self._comp

    @property
    def parsed(self) -> ParsedSource:
        """The parsed source (after ``add_stmt``)."""
        if self._parsed is None:
            raise VerifyError(f"statement {self.name}: not yet added to a Computation")
        return self._parsed

    # --- scheduling commands (Tiramisu Layer II): see spf.schedule
    @property
    def tags(self) -> dict[str, tuple[str, ...]]:
        """Tags by loop name (``{"i": ("parallel",)}``)."""
        return dict(self._tags)

    def _run(self, command: Command) -> Stmt:
        from spf.computation.scheduling import run

        run(self, command)
        return self

    def tile(self, i: Loop, j: Loop, ti: int, tj: int, i0: str, j0: str, i1: str, j1: str) -> Stmt:
        """Tile consecutive loops ``i``, ``j`` by ``ti x tj``: ``[.., i0, 0, j0, 0, i1, c, j1,
        ..]`` with ``i = ti*i0 + i1``, ``0 <= i1 < ti`` (same for ``j``)."""
        return self._run(Tile(i=i, j=j, ti=ti, tj=tj, i0=i0, j0=j0, i1=i1, j1=j1))

    def split(self, i: Loop, factor: int, outer: str, inner: str) -> Stmt:
        """``i = factor*outer + inner``, ``0 <= inner < factor``."""
        return self._run(Split(loop=i, factor=factor, outer=outer, inner=inner))

    def interchange(self, i: Loop, j: Loop) -> Stmt:
        """Swap loops ``i`` and ``j``."""
        return self._run(Interchange(i=i, j=j))

    def shift(self, i: Loop, amount: int) -> Stmt:
        """``i' = i + amount`` (the name is kept)."""
        return self._run(Shift(loop=i, amount=amount))

    def skew(
        self, i: Loop, j: Loop, factor: int, new_i: str | None = None, new_j: str | None = None
    ) -> Stmt:
        """``j' = j + factor*i`` (loops renamed ``new_i`` / ``new_j`` when given)."""
        return self._run(Skew(i=i, j=j, factor=factor, new_i=new_i, new_j=new_j))

    def reverse(self, i: Loop) -> Stmt:
        """``i' = -i`` (the name is kept)."""
        return self._run(Reverse(loop=i))

    def unroll(self, i: Loop, factor: int) -> Stmt:
        """Tag ``i`` ``unroll(factor)`` (``#pragma GCC unroll`` in C)."""
        return self._run(Unroll(loop=i, factor=factor))

    def vectorize(
        self, i: Loop, width: int, outer: str | None = None, inner: str | None = None
    ) -> Stmt:
        """Split ``i`` by ``width`` (into ``<i>0``, ``<i>1`` unless named) and tag the inner
        loop ``vector(width)`` (``#pragma omp simd`` in C)."""
        return self._run(Vectorize(loop=i, width=width, outer=outer, inner=inner))

    def parallelize(self, i: Loop, reduction: str | None = None) -> Stmt:
        """Run ``i`` in parallel (OpenMP ``parallel for`` in C); checked against the
        dependences by ``check_legality`` and ``codegen``. ``reduction="atomic"`` or
        ``"privatize"``: every dependence ``i`` carries is a reduction (``y(col(k)) += e``);
        the updates are atomic, or go to per-thread copies of the reduced data spaces that
        are combined after the loop (docs/scheduling.md)."""
        return self._run(Parallelize(loop=i, reduction=reduction))

    def partial_sums(self, i: Loop, count: int = 4, min_trip: int = 16) -> Stmt:
        """Accumulate loop ``i`` into ``count`` (2, 4 or 8) partial sums: iteration ``t`` of
        an instance of ``i`` into sum ``t mod count``, the sums added pairwise at its end,
        in every instance of at least ``min_trip`` iterations (shorter ones keep the
        in-order sum). Loads of several rows' worth of products then overlap instead of
        waiting on one chain of additions (long sparse rows). It reassociates the
        floating-point sum: results differ from the in-order loop's by rounding, and are
        the same in every executor, plan and thread count of the kernel. Checked like
        ``parallelize(i, reduction=...)``: every dependence ``i`` carries is an
        accumulation into one element (docs/scheduling.md)."""
        return self._run(PartialSums(loop=i, count=count, min_trip=min_trip))

    def distribute(self, i: Loop) -> Stmt:
        """Spread the iterations of ``i`` over MPI ranks (rank ``r`` runs ``i = r``, on its
        own arrays: only instances on one rank depend on each other, data moves between
        ranks by ``send``/``receive``); other targets run ``i`` as an ordinary loop, and
        their ``codegen``/``compile`` check it as one (spf.analysis.legality)."""
        return self._run(Distribute(loop=i))

    def wavefront(self, i: Loop, method: str = "auto") -> Stmt:
        """Run loop ``i`` by dependence levels computed at run time (``Computation.wavefront``
        for this statement alone; every statement sharing the loop must be in it)."""
        comp = self.computation
        if comp is None:
            return self._run(Wavefront(loop=i, how=method))
        Wavefront(loop=i, how=method)
        loop = self.loops[i] if isinstance(i, int) and 0 <= i < len(self.loops) else i
        comp._wavefront([self], str(loop), method)
        return self

    def gpu(self, blocks: Sequence[Loop] | Loop, threads: Sequence[Loop] | Loop) -> Stmt:
        """Map loops to a CUDA grid: ``blocks`` (outer first, up to 3) to block indices,
        ``threads`` to thread indices; the block loops and then the thread loops must be
        consecutive. Checked like ``parallelize``."""
        return self._run(Gpu(blocks=_loops(blocks), threads=_loops(threads)))

    def tile_gpu(
        self,
        i: Loop,
        j: Loop,
        ti: int,
        tj: int,
        i0: str | None = None,
        j0: str | None = None,
        i1: str | None = None,
        j1: str | None = None,
    ) -> Stmt:
        """``tile(i, j, ti, tj, ...)`` then ``gpu((i0, j0), (i1, j1))``: ``ti x tj`` threads
        per block (new loops ``<i>0, <j>0, <i>1, <j>1`` unless named)."""
        return self._run(TileGpu(i=i, j=j, ti=ti, tj=tj, i0=i0, j0=j0, i1=i1, j1=j1))

    def pipeline(self, i: Loop, ii: int = 1) -> Stmt:
        """Tag ``i`` for HLS pipelining with initiation interval ``ii``
        (``#pragma HLS PIPELINE II=<ii>``); other targets ignore it."""
        return self._run(Pipeline(loop=i, ii=ii))

    def coiterate(
        self,
        i: Loop,
        j: Loop,
        left: Stmt | str | None = None,
        right: Stmt | str | None = None,
    ) -> Stmt:
        """Run loops ``i`` and ``j`` (the two innermost, the domain equating ``c1(i) =
        c2(j)``) as one merge of two sorted coordinate lists, in O(len_i + len_j) instead of
        a nested loop with a guard; refused, naming the missing fact, unless the facts prove
        both lists sorted. ``left`` / ``right``: statements over ``[outer, i]`` /
        ``[outer, j]`` run where only one list has the coordinate (a union, as sparse
        ``+`` needs). Code generation merges such loops by itself where it can prove
        them sorted; the command insists (docs/coiteration.md)."""
        from spf.computation.coiterate import Coiterate

        names = [None if s is None else self._peer(s).name for s in (left, right)]
        return self._run(Coiterate(i=i, j=j, left=names[0], right=names[1]))

    def set_schedule(self, relation: str | Relation) -> Stmt:
        """Replace the scattering relation (its input arity must be the domain's)."""
        if not isinstance(relation, (str, Relation)):
            raise ArgumentError(
                f"set_schedule: expected relation text or spf.Relation, got {relation!r}"
            )
        return self._run(SetSchedule(relation=str(relation)))

    def after(self, other: Stmt | str, level: Level) -> Stmt:
        """Run right after ``other``, sharing its loops up to and including ``level``
        (none for ``spf.ROOT``)."""
        return self._run(After(other=self._peer(other).name, level=level))

    def before(self, other: Stmt | str, level: Level) -> Stmt:
        """Run right before ``other`` (``other.after(self, level)``); returns this statement."""
        self._peer(other)._run(After(other=self.name, level=level))
        return self

    def then(self, other: Stmt | str, level: Level) -> Stmt:
        """``other.after(self, level)``; returns ``other`` (for chaining)."""
        return self._peer(other)._run(After(other=self.name, level=level))

    def compute_at(self, consumer: Stmt | str, level: Level) -> Stmt:
        """Compute this statement (a producer) inside ``consumer``'s loops up to and
        including ``level``, right before the consumer, on exactly the region the consumer
        iterations under those loops read (overlapping halos are recomputed); the domain
        gains those loops as leading dimensions (Tiramisu's ``compute_at``)."""
        from spf.computation.effects import ComputeAt

        return self._run(ComputeAt(consumer=self._peer(consumer).name, level=level))

    def inline(self) -> Stmt:
        """Substitute this statement's value into the statements that read it; the
        statement and the data space it writes leave the computation (no loop or buffer
        remains). Returns this (now detached) statement."""
        from spf.computation.effects import Inline

        self._run(Inline())
        return self

    # --- data layout (Tiramisu Layer III): see spf.computation.layout
    def workspace(self, name: str, loop: Loop, fill: int | float = 0) -> Stmt:
        """Make the local data space ``name`` (``comp.add_local``) a dense workspace private
        to each iteration of ``loop`` (a row loop): one copy per thread, filled with
        ``fill`` before the thread's first iteration; each iteration must not depend on
        what earlier ones left in it (reset what it touched, or mark with the row number).
        Dependences on it between iterations of ``loop`` are dropped, so
        ``parallelize(loop)`` is legal (docs/formats.md, "Sparse outputs")."""
        from spf.computation.workspace import Workspace

        self._run(Workspace(data_space=name, loop=loop, fill=fill))
        return self

    def store_in(self, buffer: object, index: object) -> Stmt:
        """Store the data space this statement writes in ``buffer`` (a ``Buffer`` or its
        name) at ``index``: a list of index expressions (``["i % 2", "j"]``) or a relation."""
        from spf.computation.layout import store_in

        store_in(self, buffer, index)
        return self

    def storage_fold(self, loop: Loop, size: int) -> Stmt:
        """Fold the storage of what this statement writes along ``loop`` modulo ``size``."""
        from spf.computation.layout import storage_fold

        storage_fold(self, loop, size)
        return self

    def cache_read(
        self,
        data_space: str,
        loop: Loop,
        layout: Sequence[str] | None = None,
        scope: str = "local",
        name: str | None = None,
    ) -> Stmt:
        """Pack the elements of ``data_space`` this statement reads in one iteration of
        ``loop`` into a buffer (a copy statement run right before it inside ``loop``) and read
        them from there; ``layout`` lists the loops inside ``loop`` that index the copy, outer
        dimension first (default: those the element depends on). ``scope``: ``"local"``
        (heap, 64-byte aligned) or ``"stack"``; ``name``: the packed data space (default
        ``<data_space>_pack``). Returns the copy statement (docs/scheduling.md, "Packing")."""
        from spf.computation.packing import cache_read_stmt

        return cache_read_stmt(self, data_space, loop, layout, scope, name)

    def _peer(self, other: Stmt | str) -> Stmt:
        if self._comp is None:
            raise ScheduleError(
                f"statement {self.name}: add it to a Computation before ordering it"
            )
        if not isinstance(other, (Stmt, str)):
            raise ArgumentError(f"expected a statement or its name, got {other!r}")
        return self._comp.stmt(other)

    def __repr__(self) -> str:
        return f"Stmt(name={self.name!r}, source={self._source!r})"


def _loops(value: object) -> tuple[Loop, ...]:
    """A loop or a sequence of loops as a tuple (validated by the command)."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)  # type: ignore[return-value]  # validated by the command


def _parse_set(text: object, what: str) -> Set:
    if not isinstance(text, str):
        raise ArgumentError(f"Stmt {what} must be set text or spf.Set, got {type(text).__name__}")
    return Set(text)


def _parse_rel(text: object, what: str) -> Relation:
    if not isinstance(text, str):
        raise ArgumentError(f"Stmt {what} must be relation text or spf.Relation, got {text!r}")
    return Relation(text)


def _access_spec(spec: AccessSpec | None, what: str) -> AccessList | None:
    if spec is None:
        return None
    out: list[tuple[str, Relation]] = []
    for item in spec:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise ArgumentError(f"Stmt {what}: expected (data space, relation) pairs, got {item!r}")
        ds, rel = item
        if not isinstance(ds, str):
            raise ArgumentError(f"Stmt {what}: data space name must be a string, got {ds!r}")
        out.append((ds, rel if isinstance(rel, Relation) else _parse_rel(rel, what)))
    return tuple(out)
