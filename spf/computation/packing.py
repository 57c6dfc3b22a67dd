"""Packing (Tiramisu Layer III, TVM's ``cache_read``): copy the tile of an operand that a
statement reads inside a loop into a buffer laid out for its inner loops.

``comp.cache_read(data_space, at=(stmt, loop), layout=None)`` (or ``stmt.cache_read(
data_space, loop, ...)``) adds a *copy statement* that runs inside ``stmt``'s loops up to
and including ``loop``, right before ``stmt``, and fills a new local data space (``<data
space>_pack``, stored in the buffer ``<data space>_pack_buf``, sized for one iteration of
``loop`` and allocated once per call unless ``comp.buffer(...).allocate_at`` says where) with
the elements of ``data_space`` that ``stmt`` reads during one iteration of ``loop``; ``stmt``
then reads the copy instead. The copy's dimensions are ``stmt``'s loops inside ``loop``:
``layout`` lists them, outer dimension first (default: the inner loops the element depends
on, in loop order). With BLIS's loops for ``C += A·B`` (``j0, k0, i0, j2, i2, k1, i3, j3``)
``cache_read("B", at=(s, "k0"), layout=["j2", "k1", "j3"])`` packs the ``KC x NC`` panel of
``B`` as ``NC/NR`` slivers of ``KC x NR``, each read contiguously by the micro-kernel.

How it is expressed: the loops named by ``layout`` (and the outer loops up to ``loop``)
become dimensions of ``stmt``'s domain, equal to its schedule's loop values, so the read of
the copy is an affine index of the loop variables (``B_pack(j2, k1, j3)``), which gcc reads
at unit stride; the copy statement's domain is the projection of ``stmt``'s instances on
those loops, its element of ``data_space`` a function of them (else refused: add the loop
the element depends on to the layout). The extent of each packed dimension is the loop's
constant trip count (a tile or split loop), or the data space's extent when the loop runs
over a whole dimension.

Checked like any statement: the schedule must be legal before; a statement that writes
``data_space`` inside ``loop`` next to ``stmt`` (or ``stmt`` itself) would make the copy
stale and raises ``IllegalScheduleError`` naming it; afterwards the current order becomes
the program order (as after ``compute_at``) and every later command is checked against the
dependences of the copy and of the buffer: one array per call, so a loop outside
``loop`` runs in parallel only once the buffer is allocated inside it
(``comp.buffer("<data space>_pack_buf").allocate_at(stmt, loop)``; the refusal says so), as
docs/scheduling.md ("Packing") has it. Inside gpu loops, the copy takes
``stmt``'s gpu tags on the loops it shares with it (up to ``loop``): each gpu thread copies
into its own ``local`` (on CUDA also ``stack``) buffer the elements it reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from spf import cexpr as cx
from spf.computation.access import iterator_names
from spf.errors import ArgumentError, IllegalScheduleError, ScheduleError, SpfError, UndeclaredError
from spf.ir.source.render_c import source_access
from spf.schedule.commands import Effect, Loop, check_loop_ref, check_name, register_command
from spf.schedule.relations import is_constant, loops_of, set_constants
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt

PACK_SCOPES = ("local", "stack")
"""``local``: heap memory (64-byte aligned); ``stack``: a C array (small tiles only)."""


@register_command
@dataclass(frozen=True, kw_only=True)
class CacheRead(Effect):
    """``stmt.cache_read(data_space, loop, layout=None, scope="local", name=None)``."""

    method: ClassVar[str] = "cache_read"
    n_required: ClassVar[int] = 2
    data_space: str
    loop: Loop
    layout: tuple[str, ...] | None = None
    scope: str = "local"
    name: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.data_space, str) or not self.data_space.isidentifier():
            raise ArgumentError(f"cache_read: expected a data space name, got {self.data_space!r}")
        check_loop_ref("cache_read", "loop", self.loop)
        layout: object = self.layout
        if layout is not None:
            if isinstance(layout, str) or not isinstance(layout, (list, tuple)):
                raise ArgumentError(
                    f"cache_read: layout must be a list of loop names (outer dimension "
                    f"first), got {layout!r}"
                )
            for item in layout:
                if not isinstance(item, str) or not item.isidentifier():
                    raise ArgumentError(f"cache_read: layout entries are loop names, got {item!r}")
            if len(set(layout)) != len(layout):
                raise ArgumentError(f"cache_read: layout {list(layout)} names a loop twice")
            object.__setattr__(self, "layout", tuple(layout))
        if self.scope not in PACK_SCOPES:
            raise ArgumentError(
                f"cache_read: scope must be one of {', '.join(PACK_SCOPES)}, got {self.scope!r}"
            )
        if self.name is not None:
            check_name("cache_read", "name", self.name)

    def perform(self, stmt: Stmt) -> None:
        cache_read(stmt, self)


@dataclass(frozen=True)
class _Plan:
    """Everything :func:`cache_read` builds before it changes the computation."""

    space: str
    """The packed data space's name."""
    copy_name: str
    shape: tuple[int | str, ...]
    index: tuple[str, ...]
    """The copy's index per dimension, in loop names (``j2``, ``k1 - 1``)."""
    consumer_index: tuple[str, ...]
    """The same in the consumer's domain dimensions."""
    copy_source: str
    copy_domain: Set
    copy_schedule: Relation
    domain: Set
    """The consumer's new domain (its iterators, then the loop dimensions)."""
    schedule: Relation
    original: Relation
    shifted: dict[str, Relation]


def cache_read(stmt: Stmt, cmd: CacheRead) -> None:
    """Apply ``cmd`` to ``stmt`` (the consumer): see the module docstring. Raises before
    changing anything."""
    comp = stmt.computation
    if comp is None:
        raise ScheduleError(f"cache_read: statement {stmt.name} is not part of a Computation")
    ds = cmd.data_space
    where = f"cache_read({ds!r}) at loop {cmd.loop!r} of {stmt.name}"
    space = comp.data_spaces.get(ds)
    if space is None:
        raise UndeclaredError("data space", ds, comp.data_spaces, hint=f"in {where}")
    if stmt.domain.uf_calls:
        raise ScheduleError(
            f"{where}: the domain of {stmt.name} uses UFs ({', '.join(stmt.domain.uf_calls)}); "
            "cache_read packs tiles of affine loop nests (dense loops with constant-size tiles)"
        )
    reads = [rel for d, rel in stmt.reads if d == ds]
    if not reads:
        raise ScheduleError(f"{where}: {stmt.name} does not read {ds!r}; pack what it reads")
    if any(not r.is_equal(reads[0]) for r in reads[1:]):
        raise ScheduleError(
            f"{where}: {stmt.name} reads {ds!r} at several elements per instance "
            f"({', '.join(str(r) for r in reads)}); cache_read packs one read access "
            "(a stencil's shifted reads need one copy each)"
        )
    _check_legal_now(comp, where)
    n = _outer_depth(stmt, cmd.loop, where)
    _check_writers(comp, stmt, ds, n, where)
    plan = _plan(comp, stmt, cmd, reads[0], n, where)
    gpu = _gpu_tags(stmt, n)
    _commit(comp, stmt, cmd, plan)
    if gpu:
        comp.stmt(plan.copy_name)._tags = gpu


def _gpu_tags(stmt: Stmt, n: int) -> dict[str, tuple[str, ...]]:
    """The gpu tags of ``stmt``'s ``n`` outer loops, which the copy shares: inside gpu loops
    the copy runs in the same blocks and threads as the reads it serves, each thread filling
    its own copy (``local`` and, on CUDA, ``stack`` memory is per thread), so the reads of
    one thread find what that thread copied."""
    outs = stmt.schedule.pad_outputs(2 * n + 1).out_vars
    out: dict[str, tuple[str, ...]] = {}
    for loop in (outs[2 * k + 1] for k in range(n)):
        tags = tuple(t for t in stmt.tags.get(loop, ()) if t.startswith("gpu_"))
        if tags:
            out[loop] = tags
    return out


# ----------------------------------------------------------------------------- checks
def _check_legal_now(comp: Computation, where: str) -> None:
    """The current order becomes the program order: it must be legal already."""
    try:
        comp.check_legality()
    except IllegalScheduleError as err:
        raise IllegalScheduleError(
            f"{where}: the schedule is already illegal; fix it first ({err})"
        ) from err


def _outer_depth(stmt: Stmt, loop: Loop, where: str) -> int:
    """How many of ``stmt``'s loops the copy shares (they must sit at the odd positions of a
    2d+1 schedule, with constants between them)."""
    from spf.schedule.apply import LoopView

    view = LoopView(stmt.name, stmt.schedule)
    n = view.depth("cache_read", loop) + 1
    outs = stmt.schedule.pad_outputs(2 * n + 1).out_vars
    if list(view.positions[:n]) != [2 * k + 1 for k in range(n)] or not is_constant(outs[2 * n]):
        raise ScheduleError(
            f"{where}: the loops of {stmt.name} up to {loop!r} must sit at the odd positions of "
            f"a 2d+1 schedule with a constant after them; its schedule is {stmt.schedule}"
        )
    return n


def _check_writers(comp: Computation, stmt: Stmt, ds: str, n: int, where: str) -> None:
    """No statement may write ``ds`` between the copy and ``stmt``'s reads: ``stmt`` itself,
    or a statement that may share ``stmt``'s loops up to the packing loop and its place
    inside them (a writer before it there runs before the copy, one after it after the
    reads)."""
    width = comp.schedule_width()
    mine = stmt.schedule.pad_outputs(max(width, 2 * n + 1)).out_vars
    loop = mine[2 * n - 1]
    for other in comp.stmts:
        if not any(d == ds for d, _ in other.writes):
            continue
        outs = other.schedule.pad_outputs(max(width, 2 * n + 1)).out_vars
        apart = any(
            is_constant(outs[p]) and is_constant(mine[p]) and int(outs[p]) != int(mine[p])
            for p in range(0, 2 * n + 1, 2)
        )
        if other is stmt or not apart:
            raise IllegalScheduleError(
                f"{where}: statement {other.name} writes {ds!r} inside loop {loop!r}, where "
                f"{stmt.name} reads it; a copy made at the start of each iteration of {loop!r} "
                f"would be stale: pack at a loop that {other.name} is not inside, or do not pack "
                f"{ds!r}"
            )


# ----------------------------------------------------------------------------- plan
def _plan(
    comp: Computation, stmt: Stmt, cmd: CacheRead, read: Relation, n: int, where: str
) -> _Plan:
    its = list(iterator_names(stmt.domain))
    _, _, labels = loops_of(stmt.schedule)
    if any(lb is None for lb in labels) or len(set(labels)) != len(labels):
        raise ScheduleError(
            f"{where}: the loops of {stmt.name} must have distinct names, got {list(labels)}; "
            "name them (split/tile give new names) before packing"
        )
    names = [str(lb) for lb in labels]
    outer, inner = names[:n], names[n:]
    for v in names:
        if v in its and _value_of(stmt, v, its) != v:
            raise ScheduleError(
                f"{where}: loop {v!r} of {stmt.name} has the name of an iterator but another "
                "value; rename it (split/tile with new names) before packing"
            )
    layout = cmd.layout
    if layout is None:
        layout = _default_layout(comp, stmt, read, outer, inner, where)
    _check_layout(stmt, layout, outer, inner, where)
    loops = outer + list(layout)
    dims = _loop_dims(comp, stmt, its, loops)
    schedule, domain = _lifted(stmt, dims)
    elements = _elements(read, dims, loops, domain, where, stmt)
    copy_domain = _projection([*its, *_extra(dims, its)], [dims[v] for v in loops], loops, domain)
    shape, index = _extents(comp, cmd.data_space, copy_domain, loops, n, elements, where)
    space = _fresh(comp, f"{cmd.data_space}_pack") if cmd.name is None else _given(comp, cmd.name)
    copy_name = _fresh(comp, f"{space}_copy")
    target = f"${space}$({', '.join(index)})" if index else f"${space}$"
    copy_source = f"{target} = ${cmd.data_space}$({', '.join(_c_index(e) for e in elements)});"
    mine = stmt.schedule.pad_outputs(2 * n + 1).out_vars
    slot = int(mine[2 * n])
    outs = [x for k in range(n) for x in (mine[2 * k], outer[k])] + [str(slot)]
    outs += [x for v in layout for x in (v, "0")]
    copy_schedule = Relation(f"{{[{', '.join(loops)}] -> [{', '.join(outs)}]}}", ufs=comp.ufs)
    original = Relation(_insert(str(stmt.original_schedule), _extra(dims, its)), ufs=comp.ufs)
    from spf.computation.layout import rename

    return _Plan(
        space=space,
        copy_name=copy_name,
        shape=shape,
        index=index,
        consumer_index=tuple(rename(e, dims) for e in index),
        copy_source=copy_source,
        copy_domain=copy_domain,
        copy_schedule=copy_schedule,
        domain=domain,
        schedule=set_constants(schedule, {2 * n: slot + 1}),
        original=original.intersect_domain(domain),
        shifted=_shifted(comp, stmt, n, slot),
    )


def _extra(dims: dict[str, str], its: Sequence[str]) -> list[str]:
    """The consumer's new domain dimensions (loops no iterator holds yet), in order."""
    return [d for d in dims.values() if d not in its]


def _loop_dims(comp: Computation, stmt: Stmt, its: list[str], loops: list[str]) -> dict[str, str]:
    """The consumer's domain dimension holding each loop's value: the iterator of the same
    name, or a new dimension ``<loop>_``."""
    taken = set(its) | set(stmt.loops) | set(comp.params) | set(comp.data_spaces) | set(comp.ufs)
    out: dict[str, str] = {}
    for v in loops:
        if v in its:
            out[v] = v
            continue
        same = _iterator_equal_to(stmt, v, its)
        if same is not None:  # packed before: a dimension already holds the loop's value
            out[v] = same
            continue
        name = f"{v}_"
        while name in taken:
            name += "_"
        taken.add(name)
        out[v] = name
    return out


def _iterator_equal_to(stmt: Stmt, loop: str, its: list[str]) -> str | None:
    """A dimension an earlier ``cache_read`` added (``<loop>_``) always equal to ``loop``'s
    value, if any (a second pack reuses it)."""
    sched = stmt.schedule
    outs = [f"_o{k}" for k in range(sched.out_arity)]
    pos = sched.out_vars.index(loop)
    head = f"{{[{', '.join(its)}] -> [{', '.join(outs)}]"
    for it in its:
        if it.endswith("_") and sched.is_subset(Relation(f"{head} : {outs[pos]} = {it}}}")):
            return it
    return None


def _default_layout(
    comp: Computation,
    stmt: Stmt,
    read: Relation,
    outer: list[str],
    inner: list[str],
    where: str,
) -> tuple[str, ...]:
    """The inner loops the element read depends on, outermost first."""
    loops = outer + inner
    dims = _loop_dims(comp, stmt, list(iterator_names(stmt.domain)), loops)
    _, domain = _lifted(stmt, dims)
    elements = _elements(read, dims, loops, domain, where, stmt)
    used: set[str] = set()
    for e in elements:
        used |= set(re.findall(r"[A-Za-z_]\w*", e))
    return tuple(v for v in inner if v in used)


def _check_layout(
    stmt: Stmt, layout: Sequence[str], outer: list[str], inner: list[str], where: str
) -> None:
    for v in layout:
        if v not in inner:
            known = ", ".join(inner) or "none"
            raise ScheduleError(
                f"{where}: layout names {v!r}, which is not a loop of {stmt.name} inside "
                f"{outer[-1]!r} (those are: {known})"
            )


def _value_of(stmt: Stmt, loop: str, its: list[str]) -> str | None:
    fn = stmt.schedule.as_function(its)
    if fn is None:
        return None
    return fn[stmt.schedule.out_vars.index(loop)]


def _insert(text: str, extra: Sequence[str], conds: Sequence[str] = ()) -> str:
    """Set or relation text with ``extra`` names appended to its input tuple and ``conds``
    to its constraints (one piece: no ``union``)."""
    if " union " in text:
        raise ScheduleError(f"cache_read: {text} has several pieces; packing needs one")
    if extra:
        start = text.index("{[") + 2
        end = text.index("]", start)
        inside = text[start:end].strip()
        added = ", ".join(extra)
        text = text[:start] + (f"{inside}, {added}" if inside else added) + text[end:]
    if conds:
        joined = " && ".join(conds)
        body = text.rstrip()[:-1]
        text = f"{body} && {joined}}}" if " : " in body else f"{body} : {joined}}}"
    return text


def _lifted(stmt: Stmt, dims: dict[str, str]) -> tuple[Relation, Set]:
    """The consumer's schedule and domain with the new dimensions, each equal to its loop
    (whose output keeps its name)."""
    its = list(iterator_names(stmt.domain))
    extra = _extra(dims, its)
    conds = [f"{d} = {v}" for v, d in dims.items() if d in extra]
    schedule = Relation(_insert(str(stmt.schedule), extra, conds), ufs=stmt.schedule.ufs)
    domain = Set(_insert(str(stmt.domain), extra), ufs=stmt.domain.ufs)
    return schedule, domain.intersect(schedule.domain())


def _elements(
    read: Relation,
    dims: dict[str, str],
    loops: list[str],
    domain: Set,
    where: str,
    stmt: Stmt,
) -> tuple[str, ...]:
    """The element of the packed data space each combination of ``loops`` reads."""
    extra = _extra(dims, read.in_vars)
    lifted = Relation(_insert(str(read), extra), ufs=read.ufs).intersect_domain(domain)
    names = list(iterator_names(domain))
    to_loops = Relation(
        f"{{[{', '.join(names)}] -> [{', '.join(dims[v] for v in loops)}]}}", ufs=read.ufs
    ).intersect_domain(domain)
    found = lifted.compose(to_loops.inverse()).as_function(loops)
    if found is None:
        raise ScheduleError(
            f"{where}: the element {stmt.name} reads is not a function of the loops "
            f"{', '.join(loops)}; add the loops it depends on to the layout"
        )
    return found


def _projection(names: list[str], keep: list[str], shown: list[str], domain: Set) -> Set:
    """``domain`` projected on the dimensions ``keep``, named ``shown``."""
    proj = Relation(f"{{[{', '.join(names)}] -> [{', '.join(keep)}]}}", ufs=domain.ufs)
    image = proj.apply(domain)
    return Set(f"{{[{', '.join(shown)}]}}").intersect(image)


def _extents(
    comp: Computation,
    ds: str,
    copy_domain: Set,
    loops: list[str],
    n: int,
    elements: tuple[str, ...],
    where: str,
) -> tuple[tuple[int | str, ...], tuple[str, ...]]:
    """Shape and index of each packed dimension: ``(trip count, loop - first value)`` for a
    loop of constant trip count, else ``(the data space's extent, loop)`` for a loop that
    is a whole coordinate of the data space."""
    shape: list[int | str] = []
    index: list[str] = []
    box = _sample_bounds(copy_domain)
    ds_shape = comp.data_spaces[ds].shape or ()
    for k, v in enumerate(loops[n:], start=n):
        if box is not None:
            lo, hi = box[k]
            if _within(copy_domain, loops, v, str(lo), str(hi)):
                shape.append(hi - lo + 1)
                index.append(v if lo == 0 else f"{v} - {lo}" if lo > 0 else f"{v} + {-lo}")
                continue
        dim = [d for d, e in enumerate(elements) if e.replace(" ", "") == v]
        if dim and dim[0] < len(ds_shape):
            extent = ds_shape[dim[0]]
            if _within(copy_domain, loops, v, "0", f"({extent}) - 1"):
                shape.append(extent)
                index.append(v)
                continue
        raise ScheduleError(
            f"{where}: loop {v!r} has no constant trip count inside {loops[n - 1]!r} and does "
            f"not run over a whole dimension of the data space; split or tile it so that "
            f"the packed tile has a fixed size"
        )
    return tuple(shape), tuple(index)


def _sample_bounds(s: Set) -> list[tuple[int, int]] | None:
    """Bounds of ``s`` with every parameter large (candidates for constant trip counts)."""
    params = dict.fromkeys(s.params, 4099)
    try:
        return s.bounds(params)
    except SpfError:
        return None


def _within(s: Set, names: list[str], v: str, lo: str, hi: str) -> bool:
    box = Set(f"{{[{', '.join(names)}] : {lo} <= {v} <= {hi}}}")
    try:
        return s.is_subset(box)
    except SpfError:
        return False


def _c_index(e: str) -> str:
    """An element expression as the statement source writes it (set syntax ``floor(a/b)``
    becomes C division, exact for the non-negative values of a packed tile)."""
    return re.sub(r"floor\(", "(", e)


def _given(comp: Computation, name: str) -> str:
    """The packed data space's name as the user gave it (refused when taken)."""
    if _fresh(comp, name) != name:
        raise ScheduleError(
            f"cache_read: name {name!r} (or its buffer {name}_buf) is already taken in "
            f"{comp.name}; choose another name"
        )
    return name


def _fresh(comp: Computation, name: str) -> str:
    from spf.computation.layout import layout_of

    taken = set(comp.data_spaces) | set(comp.ufs) | set(comp.params)
    taken |= {s.name for s in comp.stmts} | set(layout_of(comp).buffers)
    taken |= {b + "_buf" for b in taken}
    while name in taken or f"{name}_buf" in taken:
        name += "_"
    return name


def _shifted(comp: Computation, stmt: Stmt, n: int, slot: int) -> dict[str, Relation]:
    """Statements after ``stmt`` in its place inside the shared loops move one later (the
    copy takes ``stmt``'s place)."""
    mine = stmt.schedule.pad_outputs(2 * n + 1).out_vars
    out: dict[str, Relation] = {}
    for s in comp.stmts:
        if s is stmt:
            continue
        outs = s.schedule.pad_outputs(2 * n + 1).out_vars
        same = all(outs[p] == mine[p] for p in range(0, 2 * n, 2))
        same = same and all(outs[p] == mine[p] for p in range(1, 2 * n, 2))
        if same and is_constant(outs[2 * n]) and int(outs[2 * n]) >= slot:
            out[s.name] = set_constants(s.schedule, {2 * n: int(outs[2 * n]) + 1})
    return out


# ----------------------------------------------------------------------------- commit
def _commit(comp: Computation, stmt: Stmt, cmd: CacheRead, plan: _Plan) -> None:
    """Add the packed data space, its buffer and the copy; rewrite the consumer. On error
    everything is put back."""
    from spf.computation.layout import Buffer, layout_of, make_placement
    from spf.computation.operations import forget_orders
    from spf.computation.statement import Stmt

    layout = layout_of(comp)
    space = comp.data_spaces[cmd.data_space]
    saved_data, saved_stmts = dict(comp._data), list(comp._stmts)
    saved_stmt = (stmt._source, stmt._parsed, stmt._reads, stmt._writes, stmt._domain)
    saved_sched = {s.name: (s._schedule, s._original) for s in comp.stmts}
    buffer_name = f"{plan.space}_buf"
    try:
        comp.add_local(plan.space, space.ctype, plan.shape)
        buffer = Buffer(comp, buffer_name, plan.shape, space.ctype, cmd.scope)
        buffer.zeroed = False  # the copy writes every element the reader reads
        layout.buffers[buffer_name] = buffer
        copy = comp.add_stmt(
            Stmt(plan.copy_source, plan.copy_domain, plan.copy_schedule, name=plan.copy_name)
        )
        layout.placements[plan.space] = make_placement(comp, copy, buffer, plan.index, "cache_read")
        _rewrite(comp, stmt, cmd.data_space, plan)
    except BaseException:
        comp._data, comp._stmts = saved_data, saved_stmts
        layout.buffers.pop(buffer_name, None)
        layout.placements.pop(plan.space, None)
        stmt._source, stmt._parsed, stmt._reads, stmt._writes, stmt._domain = saved_stmt
        for s in comp.stmts:
            s._schedule, s._original = saved_sched[s.name]
        raise
    for s in comp.stmts:  # the current order becomes program order (as after compute_at)
        if s.name in plan.shifted:
            s._schedule = plan.shifted[s.name]
        s._original = s.schedule
    forget_orders(comp)


def _rewrite(comp: Computation, stmt: Stmt, ds: str, plan: _Plan) -> None:
    """``stmt`` reads ``plan.space`` instead of ``ds``, over its new domain and schedules
    (validated by adding a fresh statement, as :mod:`spf.computation.inlining` does)."""
    from spf.computation.statement import Stmt

    packed = source_access(plan.space, tuple(cx.Text(i) for i in plan.consumer_index))
    source = stmt.parsed.render_c(
        lambda n, ix: packed if n == ds else source_access(n, ix), cx.Call
    )
    position = comp._stmts.index(stmt)
    comp._stmts.remove(stmt)
    fresh = Stmt(source, plan.domain, plan.original, name=stmt.name)
    try:
        comp.add_stmt(fresh)
        comp._stmts.remove(fresh)
    finally:
        comp._stmts.insert(position, stmt)
    stmt._source, stmt._parsed = fresh._source, fresh._parsed
    stmt._reads, stmt._writes = fresh._reads, fresh._writes
    stmt._domain = fresh._domain
    stmt._schedule = plan.schedule
    stmt._original = fresh._original


def cache_read_stmt(
    stmt: Stmt,
    data_space: str,
    loop: Loop,
    layout: Sequence[str] | None = None,
    scope: str = "local",
    name: str | None = None,
) -> Stmt:
    """Run :class:`CacheRead` on ``stmt`` and return the copy statement."""
    from spf.computation.scheduling import run

    comp = stmt.computation
    before = {s.name for s in comp.stmts} if comp is not None else set()
    given = (
        None if layout is None else tuple(layout) if isinstance(layout, (list, tuple)) else layout
    )
    run(
        stmt,
        CacheRead(
            data_space=data_space,
            loop=loop,
            layout=given,  # type: ignore[arg-type]  # validated by the command
            scope=scope,
            name=name,
        ),
    )
    assert comp is not None
    (copy,) = [s for s in comp.stmts if s.name not in before]
    return copy


__all__ = ["PACK_SCOPES", "CacheRead", "cache_read", "cache_read_stmt"]
