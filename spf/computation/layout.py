"""Data layout (Tiramisu Layer III): buffers, ``store_in``, ``storage_fold``, ``allocate_at``.

A :class:`Buffer` is an array of the generated function (``comp.add_buffer``). ``stmt.
store_in(buffer, index)`` stores the data space ``stmt`` writes in ``buffer``: ``index`` gives
the buffer element as expressions of the statement's iterators (Tiramisu semantics), so with
the write access ``W`` the data space's element ``e`` lives at ``(index . W^-1)(e)``. That
placement is a function of the element (checked; otherwise refused) and every access to the
data space, by any statement, goes through it: generated code prints it as the data-space
access macro (``#define bx(t0, t1) bx_buf[((t0) % 3) * (M - 2) + (t1)]``), the interpreter
stores through it and the dependence analysis and legality checks see the physical accesses
(:mod:`spf.analysis.dependences`). ``storage_fold`` is ``store_in`` with one index taken
modulo a size. The commands are :class:`~spf.schedule.commands.Effect` records in the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from spf.clang import NUMPY_OF_C
from spf.computation.access import access_relation, iterator_names
from spf.dtypes import c_type
from spf.errors import (
    ArgumentError,
    ArityError,
    ParseError,
    ScheduleError,
    UndeclaredError,
    VerifyError,
)
from spf.ir.model import ARGUMENT_SCOPES as ARGUMENT_SCOPES
from spf.ir.model import SCOPES as SCOPES
from spf.schedule.commands import (
    ROOT,
    Effect,
    Level,
    Loop,
    check_loop_ref,
    check_positive,
    register_command,
)
from spf.sets import Relation, Set
from spf.sets import syntax as ast
from spf.sets.parse import parse_document

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt

PARTITION_KINDS = ("cyclic", "block", "complete")


def coord_names(rank: int) -> tuple[str, ...]:
    """The names of a data space's coordinates in placements (``t0, t1, ...``)."""
    return tuple(f"t{k}" for k in range(rank))


@dataclass(frozen=True)
class PartitionSpec:
    """``buffer.partition(dim, factor, kind)``."""

    dim: int
    factor: int
    kind: str


class Buffer:
    """An array of the generated function (docs/getting_started.md, Layer III).

    >>> from spf import Computation
    >>> comp = Computation("c")
    >>> b = comp.add_buffer("tmp", (3, "M"), "double", scope="stack")
    >>> b, b.rank, b.argument
    (Buffer(name='tmp', shape=(3, 'M'), dtype='double', scope='stack'), 2, False)
    """

    def __init__(
        self, comp: Computation, name: str, shape: tuple[int | str, ...], dtype: str, scope: str
    ) -> None:
        self._comp = comp
        self.name = name
        self.shape = shape
        self.dtype = dtype
        """C element type (``double``)."""
        self.scope = scope
        self.partitions: tuple[PartitionSpec, ...] = ()
        self.allocation: tuple[str, Level] | None = None
        """``(statement, level)`` of ``allocate_at`` (None: the whole function)."""
        self.zeroed = True
        """The function fills it with zeros when it allocates it (False for a packed copy,
        ``cache_read``, which is written before every read)."""
        self.implicit = False
        """Created by ``storage_fold`` for a data space not stored in a buffer (a later fold
        of the same data space resizes it)."""

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def argument(self) -> bool:
        """True for ``global``/``constant`` buffers (kernel arguments)."""
        return self.scope in ARGUMENT_SCOPES

    @property
    def computation(self) -> Computation:
        return self._comp

    @property
    def numpy_dtype(self) -> str:
        return NUMPY_OF_C[self.dtype]

    def data_spaces(self) -> tuple[str, ...]:
        """The data spaces stored in this buffer."""
        return tuple(
            p.data_space for p in layout_of(self._comp).placements.values() if p.buffer == self.name
        )

    def allocate_at(self, stmt: Stmt | str, level: Level) -> Buffer:
        """Allocate the buffer inside loop ``level`` of ``stmt`` (``spf.ROOT``: once for the
        function): it lives for one iteration of that loop, so its extents may use the loop
        names of ``stmt`` up to ``level``."""
        from spf.computation.scheduling import run

        target = self._comp.stmt(stmt)
        run(target, AllocateAt(buffer=self.name, stmt=target.name, level=level))
        return self

    def partition(self, dim: int, factor: int, kind: str) -> Buffer:
        """Partition dimension ``dim`` (0-based) ``cyclic``/``block`` by ``factor`` or
        ``complete`` (HLS ``ARRAY_PARTITION``; other targets ignore it)."""
        if self.rank == 0:
            raise ArgumentError(
                f"partition: buffer {self.name!r} is a scalar (rank 0): it has no dimension to "
                "partition (HLS keeps a scalar in a register already); drop the partition"
            )
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < self.rank:
            raise ArgumentError(
                f"partition: buffer {self.name!r} has {self.rank} dimension(s); dim must be an "
                f"int in [0, {self.rank}), got {dim!r}"
            )
        if kind not in PARTITION_KINDS:
            raise ArgumentError(
                f"partition: kind must be one of {', '.join(PARTITION_KINDS)}, got {kind!r}"
            )
        check_positive("partition", "factor", factor)
        others = tuple(p for p in self.partitions if p.dim != dim)
        self.partitions = (*others, PartitionSpec(dim, factor, kind))
        return self

    def __repr__(self) -> str:
        return (
            f"Buffer(name={self.name!r}, shape={self.shape!r}, dtype={self.dtype!r}, "
            f"scope={self.scope!r})"
        )


@dataclass(frozen=True)
class Placement:
    """Where a data space lives: ``buffer`` at ``exprs`` (expressions of ``t0, t1, ...``, the
    data space's coordinates)."""

    data_space: str
    buffer: str
    exprs: tuple[str, ...]
    stmt: str
    """The statement whose ``store_in`` (or ``storage_fold``) placed it."""
    index: tuple[str, ...] | str
    """The index as given: expressions of the statement's iterators, or relation text."""
    relation: Relation
    """``{[t0, ...] -> [buffer coordinates]}``."""


@dataclass
class Layout:
    """The Layer III state of one computation."""

    buffers: dict[str, Buffer] = field(default_factory=dict)
    placements: dict[str, Placement] = field(default_factory=dict)
    workspaces: dict[str, tuple[str, str | int, int | float]] = field(default_factory=dict)
    """``stmt.workspace(name, loop, fill)``: local data space -> (statement, loop, fill)
    (:mod:`spf.computation.workspace`)."""

    def buffer(self, name: str) -> Buffer:
        found = self.buffers.get(name)
        if found is None:
            raise UndeclaredError("buffer", name, self.buffers)
        return found


def layout_of(comp: Computation) -> Layout:
    """The layout state of ``comp`` (``Computation._layout``)."""
    return comp._layout


# ----------------------------------------------------------------------------- buffers
def make_buffer(
    comp: Computation, name: str, shape: object, dtype: object, scope: str = "global"
) -> Buffer:
    """Validate ``add_buffer``'s arguments and build the :class:`Buffer` (not yet added)."""
    from spf.computation.data_space import make_data_space

    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_spf_"):
        raise VerifyError(f"buffer name {name!r} is not a valid C identifier")
    taken = {**dict.fromkeys(comp.data_spaces, "data space"), **dict.fromkeys(comp.ufs, "UF")}
    taken.update(dict.fromkeys((s.name for s in comp.stmts), "statement"))
    taken.update(dict.fromkeys(layout_of(comp).buffers, "buffer"))
    taken.update(dict.fromkeys(comp.params, "symbolic constant"))
    if name in taken:
        raise VerifyError(f"add_buffer: {name!r} is already a {taken[name]} of {comp.name}")
    if scope not in SCOPES:
        raise ArgumentError(
            f"add_buffer({name!r}): scope must be one of {', '.join(SCOPES)}, got {scope!r}"
        )
    if isinstance(dtype, str) and "*" in dtype:
        raise ArgumentError(
            f"add_buffer({name!r}): dtype is an element type, not a pointer: {dtype!r}"
        )
    if shape is None:
        shape = ()
    ds = make_data_space(name, c_type(dtype, what=f"add_buffer({name!r})"), shape)
    if ds.pointer:
        raise ArgumentError(
            f"add_buffer({name!r}): dtype is an element type, not a pointer: {dtype!r}"
        )
    return Buffer(comp, name, ds.shape or (), ds.ctype, scope)


def extent_names(shape: Sequence[int | str]) -> set[str]:
    """The names an extent list uses."""
    from spf.sets.expr import compile_expr

    out: set[str] = set()
    for d in shape:
        if isinstance(d, str):
            out |= compile_expr(d)[1]
    return out


# ----------------------------------------------------------------------------- placements
def written_space(stmt: Stmt, cmd: str) -> tuple[str, Relation]:
    """The one data space ``stmt`` writes, with its write access."""
    spaces = sorted({ds for ds, _ in stmt.writes})
    if len(spaces) != 1:
        what = ", ".join(spaces) if spaces else "nothing"
        raise ScheduleError(
            f"{cmd}: statement {stmt.name} writes {what}; {cmd} places the one data space a "
            "statement writes (split the statement, or use a statement that writes it)"
        )
    rels = [r for ds, r in stmt.writes if ds == spaces[0]]
    first = rels[0]
    for r in rels[1:]:
        if not r.is_equal(first):
            raise ScheduleError(
                f"{cmd}: statement {stmt.name} writes {spaces[0]!r} at several indices ({first}, "
                f"{r}); the placement must follow from one write access"
            )
    return spaces[0], first


def make_placement(
    comp: Computation, stmt: Stmt, buffer: Buffer, index: tuple[str, ...] | str, cmd: str
) -> Placement:
    """The placement of what ``stmt`` writes in ``buffer`` at ``index`` (checked)."""
    ds, write = written_space(stmt, cmd)
    space = comp.data_spaces[ds]
    where = f"{cmd}: statement {stmt.name}"
    if space.ctype != buffer.dtype:
        raise ScheduleError(
            f"{where}: data space {ds!r} holds {space.ctype} but buffer {buffer.name!r} holds "
            f"{buffer.dtype}; store it in a buffer of the same element type"
        )
    its = iterator_names(stmt.domain)
    ufs = comp.ufs
    if isinstance(index, str):
        try:
            given = Relation(index, ufs=ufs)
        except ParseError as err:
            form = f"{{[{', '.join(its)}] -> [...]}}"
            raise ScheduleError(
                f"{where}: bad index relation {index!r}: {err.message}; write it from the "
                f"statement's iterators to the buffer's index, with unnamed tuples: {form}"
            ) from err
        if given.in_arity != len(its):
            raise ArityError(
                f"{where}: the index relation {index} takes {given.in_arity}-tuples but the "
                f"domain {stmt.domain} has arity {len(its)}"
            )
    else:
        try:
            given = access_relation(stmt.domain, list(index), ufs, where)
        except ParseError as err:
            raise ScheduleError(f"{where}: bad index {_show(index)}: {err}") from err
    if given.out_arity != buffer.rank:
        raise ArityError(
            f"{where}: buffer {buffer.name!r} has {buffer.rank} dimension(s) but the index "
            f"{_show(index)} gives {given.out_arity}"
        )
    rank = space.rank or 0
    ts = coord_names(rank)
    dom = stmt.domain
    mapping = given.intersect_domain(dom).compose(write.intersect_domain(dom).inverse())
    exprs = mapping.as_function(list(ts))
    if exprs is None:
        raise ScheduleError(
            f"{where}: the index {_show(index)} is not a function of the element of {ds!r} the "
            f"statement writes ({ds}({', '.join(write.out_vars)}) is written by iterations that "
            f"the index puts in different places); index the buffer by the written element "
            f"(a per-tile buffer of a compute_at producer: the element modulo the tile's extent, "
            f"e.g. ['i % 6', 'j % 8'], with allocate_at the tile loop)"
        )
    exprs = _pretty(exprs, index, write, its, ts, mapping, dom)
    relation = _coord_relation(ts, exprs, ufs)
    _check_bounds(comp, stmt, buffer, given, f"{where}: the index {_show(index)}")
    return Placement(ds, buffer.name, exprs, stmt.name, index, relation)


def _check_bounds(
    comp: Computation, stmt: Stmt, buffer: Buffer, given: Relation, where: str
) -> None:
    """The elements the statement writes must land inside the buffer (checked when its
    extents are parameter expressions and the domain has no UF: provable with isl)."""
    if stmt.domain.uf_calls or extent_names(buffer.shape) - comp.params - stmt.domain.params:
        return
    names = [f"_b{k}" for k in range(buffer.rank)]
    conds = [f"0 <= {n} < {d}" for n, d in zip(names, buffer.shape, strict=True)]
    box = Set(f"{{[{', '.join(names)}]{' : ' + ' && '.join(conds) if conds else ''}}}")
    image = given.apply(stmt.domain)
    if not image.is_subset(box):
        raise ScheduleError(
            f"{where} puts elements outside buffer {buffer.name!r} of shape "
            f"({', '.join(map(str, buffer.shape))}): "
            f"they land in {image}; enlarge the buffer or change the index"
        )


def restore_placement(
    comp: Computation,
    *,
    data_space: str,
    buffer: str,
    exprs: tuple[str, ...],
    stmt: str,
    index: tuple[str, ...] | str,
) -> Placement:
    """A placement as ``to_json`` recorded it (checked against the declarations)."""
    spaces = comp.data_spaces
    if data_space not in spaces:
        raise UndeclaredError("data space", data_space, spaces, hint="in a placement")
    b = layout_of(comp).buffer(buffer)
    rank = spaces[data_space].rank or 0
    if len(exprs) != b.rank or not all(isinstance(e, str) for e in exprs):
        raise VerifyError(f"placement of {data_space!r}: {b.rank} index expression(s) expected")
    try:
        relation = _coord_relation(coord_names(rank), exprs, comp.ufs)
    except ParseError as err:
        raise VerifyError(f"placement of {data_space!r}: bad index {list(exprs)}: {err}") from err
    return Placement(data_space, buffer, exprs, stmt, index, relation)


def _coord_relation(ts: Sequence[str], exprs: Sequence[str], ufs: Mapping[str, object]) -> Relation:
    return Relation(f"{{[{', '.join(ts)}] -> [{', '.join(exprs)}]}}", ufs=dict(ufs))  # type: ignore[arg-type]


def _pretty(
    exprs: tuple[str, ...],
    index: tuple[str, ...] | str,
    write: Relation,
    its: Sequence[str],
    ts: Sequence[str],
    mapping: Relation,
    dom: Set,
) -> tuple[str, ...]:
    """The user's index with each iterator replaced by the coordinate it is written at, when
    that is the same placement (``i % 2`` reads better than ``t0 - 2*floor(t0/2)``)."""
    if isinstance(index, str):
        return exprs
    outs = write.as_function(list(its))
    if outs is None:
        return exprs
    coord = {o: t for o, t in zip(outs, ts, strict=True) if o in its}
    try:
        texts = tuple(rename(e, coord) for e in index)
    except (KeyError, ParseError):
        return exprs
    try:
        mine = _coord_relation(ts, texts, mapping.ufs)
    except ParseError:
        return exprs
    written = write.intersect_domain(dom).range()
    if mine.intersect_domain(written).is_equal(mapping):
        return texts
    return exprs


def rename(text: str, names: Mapping[str, str]) -> str:
    """``text`` (an index expression) with names replaced (``KeyError`` for an iterator-like
    name not in ``names`` that is not kept)."""
    doc = parse_document(f"{{[{text}]}}")
    found: list[tuple[int, int, str]] = []

    def visit(e: ast.Expr) -> None:
        if isinstance(e, ast.Name):
            if e.name in names:
                found.append((e.span[0], e.span[1], names[e.name]))
        elif isinstance(e, ast.Call):
            for a in e.args:
                visit(a)
        elif isinstance(e, ast.BinOp):
            visit(e.left)
            visit(e.right)
        elif isinstance(e, (ast.Neg, ast.Floor)):
            visit(e.operand)

    for item in doc.pieces[0].in_tuple:
        visit(item)
    out = doc.text
    for start, end, new in sorted(found, reverse=True):
        out = out[:start] + new + out[end:]
    return out[2:-2]


def _show(index: tuple[str, ...] | str) -> str:
    return index if isinstance(index, str) else "[" + ", ".join(index) + "]"


def physical(comp: Computation, space: str, rel: Relation) -> tuple[str, Relation]:
    """``(storage, access)``: the buffer a data space lives in and the access composed with
    its placement, or the data space itself when it has no placement."""
    placement = layout_of(comp).placements.get(space)
    if placement is None:
        return space, rel
    return placement.buffer, placement.relation.compose(rel)


def local_spaces(comp: Computation) -> frozenset[str]:
    """Data spaces stored in a buffer (their storage is the buffer, not an argument)."""
    return frozenset(layout_of(comp).placements)


# ----------------------------------------------------------------------------- commands
def _index_arg(cmd: str, index: object) -> tuple[str, ...] | str:
    if isinstance(index, Relation):
        return str(index)
    if isinstance(index, str):
        if index.lstrip().startswith("{"):
            return index
        raise ArgumentError(
            f"{cmd}: index must be a list of index expressions (['i % 2', 'j']) or a "
            f"relation, got the string {index!r}"
        )
    if isinstance(index, (list, tuple)):
        out: list[str] = []
        for e in index:
            if isinstance(e, bool) or not isinstance(e, (str, int)):
                raise ArgumentError(f"{cmd}: index expressions must be text or ints, got {e!r}")
            out.append(str(e))
        return tuple(out)
    raise ArgumentError(
        f"{cmd}: index must be a list of index expressions or a relation, got {index!r}"
    )


@register_command
@dataclass(frozen=True, kw_only=True)
class StoreIn(Effect):
    """``stmt.store_in(buffer, index)``."""

    method: ClassVar[str] = "store_in"
    n_required: ClassVar[int] = 2
    buffer: str
    index: tuple[str, ...] | str

    def __post_init__(self) -> None:
        if not isinstance(self.buffer, str) or not self.buffer.isidentifier():
            raise ArgumentError(
                f"store_in: buffer must be a Buffer or its name, got {self.buffer!r}"
            )
        object.__setattr__(self, "index", _index_arg("store_in", self.index))

    def call_text(self) -> str:
        index = self.index
        shown = repr(index) if isinstance(index, str) else repr(list(index))
        return f'store_in("{self.buffer}", {shown})'

    def perform(self, stmt: Stmt) -> None:
        comp = _comp_of(stmt)
        layout = layout_of(comp)
        buffer = layout.buffer(self.buffer)
        placement = make_placement(comp, stmt, buffer, self.index, "store_in")
        layout.placements[placement.data_space] = placement


@register_command
@dataclass(frozen=True, kw_only=True)
class StorageFold(Effect):
    """``stmt.storage_fold(loop, size)``."""

    method: ClassVar[str] = "storage_fold"
    n_required: ClassVar[int] = 2
    loop: Loop
    size: int

    def __post_init__(self) -> None:
        check_loop_ref("storage_fold", "loop", self.loop)
        check_positive("storage_fold", "size", self.size)

    def perform(self, stmt: Stmt) -> None:
        comp = _comp_of(stmt)
        layout = layout_of(comp)
        ds, write = written_space(stmt, "storage_fold")
        its = iterator_names(stmt.domain)
        placement = layout.placements.get(ds)
        if placement is None:
            current = write.as_function(list(its))
            if current is None:
                raise ScheduleError(
                    f"storage_fold: statement {stmt.name} writes {ds!r} at {write}, which is not "
                    "one index per iterator; store it in a buffer with store_in first"
                )
        else:
            current = _through_write(placement, write, its)
        dim = _fold_dim(stmt, self.loop, current, its, ds)
        index = list(current)
        base = current[dim] if current[dim].isidentifier() else f"({current[dim]})"
        index[dim] = f"{base} % {self.size}"
        if placement is None:
            buffer = _fold_buffer(comp, ds, dim, self.size)
            new = make_placement(comp, stmt, buffer, tuple(index), "storage_fold")
            layout.buffers[buffer.name] = buffer
        else:
            buffer = layout.buffer(placement.buffer)
            if buffer.implicit and len(buffer.data_spaces()) == 1:
                buffer = _refolded(buffer, dim, self.size)
            new = make_placement(comp, stmt, buffer, tuple(index), "storage_fold")
            layout.buffers[buffer.name] = buffer
        layout.placements[ds] = new


def _refolded(buffer: Buffer, dim: int, size: int) -> Buffer:
    """The implicit buffer of an earlier fold, with dimension ``dim`` ``size`` long."""
    shape = list(buffer.shape)
    shape[dim] = size
    out = Buffer(buffer.computation, buffer.name, tuple(shape), buffer.dtype, buffer.scope)
    out.partitions, out.allocation, out.implicit = buffer.partitions, buffer.allocation, True
    return out


def _through_write(placement: Placement, write: Relation, its: Sequence[str]) -> tuple[str, ...]:
    """The placement as expressions of the writing statement's iterators (``i % 2``)."""
    outs = write.as_function(list(its))
    if outs is not None:
        values = {
            f"t{k}": o if o.isidentifier() or o.isdigit() else f"({o})" for k, o in enumerate(outs)
        }
        return tuple(rename(e, values) for e in placement.exprs)
    found = placement.relation.compose(write).as_function(list(its))
    if found is None:
        raise ScheduleError(
            f"storage_fold: {placement.data_space!r} is written at {write}, which does not "
            f"determine where it lives in {placement.buffer!r}; fold it with store_in instead"
        )
    return found


def _fold_dim(stmt: Stmt, loop: Loop, current: Sequence[str], its: Sequence[str], ds: str) -> int:
    comp = _comp_of(stmt)
    pos = comp._loop_position(stmt, loop)
    sched = stmt.schedule.pad_outputs(comp.schedule_width()).as_function(list(its))
    if sched is None:
        raise ScheduleError(f"storage_fold: the schedule of {stmt.name} is not a function")
    value = sched[pos]
    head = f"[{', '.join(its)}]"
    want = Relation(f"{{{head} -> [{value}]}}").intersect_domain(stmt.domain)
    for k, e in enumerate(current):
        try:
            mine = Relation(f"{{{head} -> [{e}]}}").intersect_domain(stmt.domain)
        except ParseError:
            continue
        if mine.is_equal(want):
            return k
    raise ScheduleError(
        f"storage_fold: no index of {ds!r} as statement {stmt.name} stores it ("
        f"{', '.join(current)}) follows loop {loop!r} ({value}); fold along a loop that indexes "
        "the data space"
    )


def _fold_buffer(comp: Computation, ds: str, dim: int, size: int) -> Buffer:
    space = comp.data_spaces[ds]
    if space.shape is None:
        raise ScheduleError(
            f"storage_fold: data space {ds!r} has no declared shape; declare it "
            "(add_data_space(..., shape=(...))) or store it in a buffer with store_in first"
        )
    shape = list(space.shape)
    shape[dim] = size
    taken = set(layout_of(comp).buffers) | set(comp.data_spaces) | set(comp.ufs) | comp.params
    name = f"{ds}_buf"
    while name in taken:
        name += "_"
    buffer = Buffer(comp, name, tuple(shape), space.ctype, "local")
    buffer.implicit = True
    return buffer


@register_command
@dataclass(frozen=True, kw_only=True)
class AllocateAt(Effect):
    """``buffer.allocate_at(stmt, level)`` (recorded on ``stmt``)."""

    method: ClassVar[str] = "allocate_at"
    n_required: ClassVar[int] = 3
    buffer: str
    stmt: str
    level: Level

    def __post_init__(self) -> None:
        if not isinstance(self.buffer, str) or not self.buffer.isidentifier():
            raise ArgumentError(f"allocate_at: buffer must be a buffer name, got {self.buffer!r}")
        if not isinstance(self.stmt, str):
            raise ArgumentError(f"allocate_at: stmt must be a statement name, got {self.stmt!r}")
        level: object = self.level
        if level is None:  # JSON writes spf.ROOT as null
            object.__setattr__(self, "level", ROOT)
        check_loop_ref("allocate_at", "level", self.level, root_ok=True)

    def call_text(self) -> str:
        """``computation.buffer("b").allocate_at("s0", "i")`` (printed after
        ``comp.stmt("s0").`` by the trace, which reaches the buffer through the statement)."""
        level = "spf.ROOT" if self.level is ROOT else repr(self.level)
        return f'computation.buffer("{self.buffer}").allocate_at("{self.stmt}", {level})'

    def perform(self, stmt: Stmt) -> None:
        comp = _comp_of(stmt)
        buffer = layout_of(comp).buffer(self.buffer)
        if buffer.argument:
            raise ScheduleError(
                f"allocate_at: buffer {buffer.name!r} has scope {buffer.scope!r} and is a kernel "
                "argument; only stack, local and shared buffers are allocated by the function"
            )
        if self.level is not ROOT:
            comp._loop_position(stmt, self.level)  # raises for an unknown loop
        buffer.allocation = (stmt.name, self.level)


def _comp_of(stmt: Stmt) -> Computation:
    comp = stmt.computation
    if comp is None:
        raise ScheduleError(f"statement {stmt.name}: add it to a Computation first")
    return comp


# ----------------------------------------------------------------------------- Stmt methods
def store_in(stmt: Stmt, buffer: object, index: object) -> None:
    """``stmt.store_in(buffer, index)``: ``buffer`` is a :class:`Buffer` or its name."""
    from spf.computation.scheduling import run

    if isinstance(buffer, Buffer):
        name = buffer.name
    elif isinstance(buffer, str):
        name = buffer
    else:
        raise ArgumentError(f"store_in: expected a Buffer or a buffer name, got {buffer!r}")
    run(stmt, StoreIn(buffer=name, index=_index_arg("store_in", index)))


def storage_fold(stmt: Stmt, loop: Loop, size: int) -> None:
    """``stmt.storage_fold(loop, size)``."""
    from spf.computation.scheduling import run

    run(stmt, StorageFold(loop=loop, size=size))
