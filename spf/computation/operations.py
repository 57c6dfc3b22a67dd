"""Communication operations (Tiramisu Layer IV): send, receive, barriers, host/device copies.

Each operation is an :class:`OperationStmt`, a statement of the computation with a domain, a
schedule and access relations (a send reads the region it sends, a receive writes the region
it receives, a host/device copy reads the whole buffer: it comes after the writes before it
in program order, and its values do not change), so dependences order it
and ``after``/``then`` place it like any statement. It has no C body: ``lower`` gives its
macro an :class:`spf.codegen.program.Operation` and each target prints it (MPI calls,
``__syncthreads()``, ``cudaMemcpy``; the C target prints barriers and copies as comments and
refuses send/receive).

Program order (docs/assumptions.md): an operation has no place of its own in the program order
until an ordering command (``after``/``before``/``then``) places it; the order the user gives
is its meaning. An operation ordered against a statement, or against an operation already
placed, is placed by that command, together with the unplaced operations chained to it by
earlier orders among themselves (``send.then(recv, q)`` before either meets a statement): its
dependences with every statement are derived from the schedules right after that command (a
:class:`Placement`), not from the order of creation. Later commands, which may move the
operation again or move statements across it, are checked against those dependences like any
schedule change. An operation never ordered keeps the place it was created at (after every
statement existing then, at the root), as in the CUDA copy examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.computation.access import access_relation, iterator_names
from spf.computation.statement import Stmt, is_constant
from spf.errors import ArgumentError, ArityError, ParseError, UndeclaredError, VerifyError
from spf.ir.reading import describe_operation
from spf.schedule.commands import ROOT, Level
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.schedule.commands import After

KINDS = ("send", "receive", "barrier", "host_to_device", "device_to_host", "wait", "post")
"""``wait``/``post``: the point-to-point flags of a wavefront executor (spf.analysis.executor):
wait until ``target(index)`` is set (acquire), set it (release)."""


@dataclass(frozen=True)
class Placement:
    """Where the first ordering command put an operation: every statement's schedule right
    after that command (``schedules``, by name) and when (``seq``: later placements have
    larger numbers)."""

    seq: int
    schedules: Mapping[str, Relation]


class OperationStmt(Stmt):
    """A Layer IV operation in ``comp.stmts`` (a ``Stmt`` without C source).

    ``kind`` is one of :data:`KINDS`; ``target`` the buffer or data space it moves (None for a
    barrier); ``index`` the first element's index (expressions of the domain's iterators);
    ``count`` the number of elements (consecutive in row-major order, see
    :mod:`spf.computation.regions`); ``peer`` the destination
    (send) or source (receive) rank.
    """

    def __init__(
        self,
        kind: str,
        domain: Set,
        *,
        target: str | None = None,
        index: Sequence[str] = (),
        count: str = "1",
        peer: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__("", domain, name=name)
        self.kind = kind
        self.target = target
        self.index = tuple(index)
        self.count = count
        self.peer = peer
        self.placed = False
        """Whether an ordering command has placed the operation (see the module docstring)."""
        self.placement: Placement | None = None
        """The program order it was placed in (None: its creation schedule is its order)."""

    @property
    def source(self) -> str:
        """A C comment naming the operation (it has no C body of its own)."""
        return f"/* {self.describe()} */"

    def describe(self) -> str:
        """``send(A(q, 0), 4, to q + 1)``-like text (Layer IV)."""
        return describe_operation(self.kind, self.target, self.index, self.count, self.peer)

    def to_data(self) -> dict[str, object]:
        """JSON-ready description (``serialize`` stores it with the schedule and tags)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "domain": str(self.domain),
            "target": self.target,
            "index": list(self.index),
            "count": self.count,
            "peer": self.peer,
            "schedule": str(self.original_schedule),
            "current_schedule": str(self.schedule),
            "tags": {loop: list(tags) for loop, tags in sorted(self.tags.items())},
            "placed": self.placed,
            "placement": None
            if self.placement is None
            else {
                "seq": self.placement.seq,
                "schedules": {n: str(r) for n, r in self.placement.schedules.items()},
            },
            "reads": [[ds, str(r)] for ds, r in self.reads],
            "writes": [[ds, str(r)] for ds, r in self.writes],
        }

    def __repr__(self) -> str:
        return f"OperationStmt(name={self.name!r}, {self.describe()})"


def _domain(comp: Computation, domain: object, what: str) -> Set:
    if isinstance(domain, Set):
        text = str(domain)
    elif isinstance(domain, str):
        text = domain
    else:
        raise ArgumentError(f"{what}: domain must be set text or an spf.Set, got {domain!r}")
    return Set(text, ufs=comp.ufs)


def _target(
    comp: Computation, buffer: object, what: str
) -> tuple[str, int, tuple[int | str, ...] | None]:
    """Name, rank and shape of the buffer or data space an operation moves."""
    from spf.computation.layout import Buffer, layout_of

    if isinstance(buffer, Buffer):
        if buffer.computation is not comp:
            raise ArgumentError(f"{what}: buffer {buffer.name!r} belongs to another computation")
        return buffer.name, buffer.rank, buffer.shape
    if not isinstance(buffer, str):
        raise ArgumentError(f"{what}: expected a Buffer or a data-space name, got {buffer!r}")
    spaces = comp.data_spaces
    if buffer in spaces:
        ds = spaces[buffer]
        if ds.rank is None:
            raise VerifyError(
                f"{what}: data space {buffer!r} has no known rank yet; declare its shape or use "
                "it in a statement first"
            )
        return buffer, ds.rank, ds.shape
    buffers = layout_of(comp).buffers
    if buffer in buffers:
        b = buffers[buffer]
        return b.name, b.rank, b.shape
    raise UndeclaredError("buffer or data space", buffer, [*spaces, *buffers])


def _expr(text: object, what: str) -> str:
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ArgumentError(f"{what} must be an int or an expression text, got {text!r}")
    return str(text).strip()


def _region(
    comp: Computation,
    dom: Set,
    index: Sequence[str],
    count: str,
    rank: int,
    shape: tuple[int | str, ...] | None,
    where: str,
) -> Relation:
    """The ``count`` consecutive (row-major) elements from ``index`` of an array of rank
    ``rank`` and ``shape`` (None: unknown), as an access relation from the domain
    (:mod:`spf.computation.regions`)."""
    from spf.computation.regions import region_constraints

    its = iterator_names(dom)
    if len(index) != rank:
        raise ArityError(
            f"{where}: the index {list(index)} has {len(index)} entries; {rank} expected"
        )
    base = access_relation(dom, list(index), comp.ufs, where)  # validates the expressions
    if rank == 0:
        return base
    outs = [f"_e{k}" for k in range(rank)]
    conds = region_constraints(index, count, shape, outs)
    text = f"{{[{', '.join(its)}] -> [{', '.join(outs)}] : {' && '.join(conds)}}}"
    del base
    try:
        return Relation(text, ufs=comp.ufs)
    except ParseError as err:
        raise VerifyError(f"{where}: bad count {count!r}: {err.message}") from err


def _whole(comp: Computation, rank: int, shape: tuple[int | str, ...] | None) -> Relation:
    outs = [f"_e{k}" for k in range(rank)]
    conds = [f"0 <= _e{k} < {d}" for k, d in enumerate(shape or ())]
    body = f" : {' && '.join(conds)}" if conds else ""
    return Relation(f"{{[] -> [{', '.join(outs)}]{body}}}", ufs=comp.ufs)


def _check_expr(comp: Computation, dom: Set, text: str, where: str) -> None:
    its = iterator_names(dom)
    try:
        Relation(f"{{[{', '.join(its)}] -> [{text}]}}", ufs=comp.ufs)
    except ParseError as err:
        raise VerifyError(f"{where}: bad expression {text!r}: {err.message}") from err


def make_transfer(
    comp: Computation,
    kind: str,
    domain: object,
    buffer: object,
    index: Sequence[object],
    count: object,
    peer: object,
) -> OperationStmt:
    """A send or receive (not yet added)."""
    where = f"{kind}"
    dom = _domain(comp, domain, where)
    if dom.arity < 1:
        raise ArityError(
            f"{where}: the domain {dom} needs at least one variable (the first is the rank "
            "that executes the operation)"
        )
    name, rank, shape = _target(comp, buffer, where)
    if isinstance(index, str) or not isinstance(index, (list, tuple)):
        raise ArgumentError(f"{where}: index must be a list of index expressions, got {index!r}")
    idx = [_expr(e, f"{where}: an index entry") for e in index]
    cnt = _expr(count, f"{where}: count")
    who = _expr(peer, f"{where}: {'dest' if kind == 'send' else 'src'}")
    region = _region(comp, dom, idx, cnt, rank, shape, where)
    _check_expr(comp, dom, who, where)
    op = OperationStmt(kind, dom, target=name, index=idx, count=cnt, peer=who)
    op._given_reads = ((name, region),) if kind == "send" else ()
    op._given_writes = ((name, region),) if kind == "receive" else ()
    return op


def make_copy(comp: Computation, kind: str, buffer: object) -> OperationStmt:
    """A host-to-device or device-to-host copy of a whole buffer (not yet added)."""
    name, rank, shape = _target(comp, buffer, kind)
    whole = _whole(comp, rank, shape)
    count = " * ".join(f"({d})" for d in shape or ()) or "1"
    op = OperationStmt(kind, Set("{[]}"), target=name, index=("0",) * rank, count=count)
    op._given_reads = ((name, whole),)  # the copy reads what the host (device) holds
    op._given_writes = ()
    return op


def make_barrier(comp: Computation, stmt: Stmt, level: Level) -> tuple[OperationStmt, str]:
    """A barrier inside loop ``level`` of ``stmt`` (its domain: the values of ``stmt``'s loops
    up to ``level``) and the schedule that puts it with ``stmt``'s loops."""
    from spf.schedule.relations import loops_of

    sched = stmt.schedule
    positions, names, labels = loops_of(sched)
    if level is ROOT:
        depth = 0
    elif isinstance(level, int) and not isinstance(level, bool):
        if not 0 <= level < len(positions):
            raise UndeclaredError(
                "loop", str(level), names, hint=f"barrier_at: {stmt.name} has {len(names)} loop(s)"
            )
        depth = level + 1
    elif isinstance(level, str) and level in names:
        depth = names.index(level) + 1
    else:
        raise UndeclaredError("loop", str(level), names, hint=f"barrier_at: of {stmt.name}")
    used = positions[:depth]
    vars_ = []
    taken = set(comp.params)
    for k, p in enumerate(used):
        label = labels[k] or f"l{k}"
        while label in taken:
            label += "_"
        taken.add(label)
        vars_.append((p, label))
    src = [f"a{k}" for k in range(sched.out_arity)]
    proj = Relation(
        f"{{[{', '.join(src)}] -> [{', '.join(n for _, n in vars_)}]"
        + (f" : {' && '.join(f'{n} = a{p}' for p, n in vars_)}" if vars_ else "")
        + "}"
    )
    dom = proj.apply(sched.apply(stmt.domain))
    outs: list[str] = []
    by_pos = dict(vars_)
    last = used[-1] if used else -1
    for p in range(last + 1):
        v = sched.out_vars[p]
        outs.append(by_pos[p] if p in by_pos else (v if is_constant(v) else "0"))
    outs.append("0")
    names_in = [n for _, n in vars_]
    schedule = f"{{[{', '.join(names_in)}] -> [{', '.join(outs)}]}}"
    return OperationStmt("barrier", Set(str(dom), ufs=comp.ufs)), schedule


# ------------------------------------------------------------------------ program order
def note_order(comp: Computation, stmt: str, cmd: After) -> None:
    """After ``stmt.after(cmd.other, ...)`` was applied: place the unplaced operations it
    involves, with those chained to them, when one side is a statement or a placed operation
    (see the module docstring)."""
    by_name = {s.name: s for s in comp.stmts}
    involved = [by_name[n] for n in (stmt, cmd.other) if n in by_name]
    loose = {s.name for s in involved if isinstance(s, OperationStmt) and not s.placed}
    if not loose or len(loose) == len(involved):
        return  # nothing to place, or only unplaced operations ordered among themselves
    from spf.schedule.trace import trace_of

    unplaced = {s.name for s in comp.stmts if isinstance(s, OperationStmt) and not s.placed}
    links = [
        (succ, order.other)
        for succ, order in trace_of(comp).orders()
        if succ in unplaced and order.other in unplaced
    ]
    group, todo = set(loose), list(loose)
    while todo:
        name = todo.pop()
        for a, b in links:
            for x, y in ((a, b), (b, a)):
                if x == name and y not in group:
                    group.add(y)
                    todo.append(y)
    seq = 1 + max(
        (s.placement.seq for s in comp.stmts if isinstance(s, OperationStmt) and s.placement),
        default=0,
    )
    where = Placement(seq, {s.name: s.schedule for s in comp.stmts})
    for name in group:
        op = by_name[name]
        assert isinstance(op, OperationStmt)
        op.placed, op.placement = True, where


def _meaning(stmt: Stmt) -> Relation:
    """The schedule that gives ``stmt`` its place in the program order."""
    if isinstance(stmt, OperationStmt) and stmt.placement is not None:
        return stmt.placement.schedules.get(stmt.name, stmt.original_schedule)
    return stmt.original_schedule


def program_schedules(a: Stmt, b: Stmt) -> tuple[Relation, Relation] | None:
    """The schedules that order ``a`` against ``b`` in the program order when one of them is
    a placed operation (None otherwise: their original schedules): both from the latest
    placement that knows both statements, else each one's own."""
    known = [
        s.placement for s in (a, b) if isinstance(s, OperationStmt) and s.placement is not None
    ]
    if not known:
        return None
    for where in sorted(known, key=lambda p: -p.seq):
        if a.name in where.schedules and b.name in where.schedules:
            return where.schedules[a.name], where.schedules[b.name]
    return _meaning(a), _meaning(b)


def order_width(comp: Computation) -> int:
    """The longest schedule among the current ones and the placements in use."""
    width = comp.schedule_width()
    for s in comp.stmts:
        if isinstance(s, OperationStmt) and s.placement is not None:
            width = max([width, *(r.out_arity for r in s.placement.schedules.values())])
    return width


def forget_orders(comp: Computation) -> None:
    """The current order became the program order (``compute_at``): placed operations keep
    being placed but take their current schedule as their order."""
    for s in comp.stmts:
        if isinstance(s, OperationStmt):
            s.placement = None


def placements(comp: Computation) -> dict[str, tuple[bool, Placement | None]]:
    """Every operation's placement state (to restore with :func:`restore_placements`)."""
    return {s.name: (s.placed, s.placement) for s in comp.stmts if isinstance(s, OperationStmt)}


def restore_placements(
    comp: Computation, saved: Mapping[str, tuple[bool, Placement | None]]
) -> None:
    """Undo placements made since :func:`placements` was taken."""
    for s in comp.stmts:
        if isinstance(s, OperationStmt) and s.name in saved:
            s.placed, s.placement = saved[s.name]


def load_placement(comp: Computation, op: OperationStmt, data: Mapping[str, object]) -> None:
    """Set ``op``'s placement from :meth:`OperationStmt.to_data` output (JSON)."""
    op.placed = bool(data.get("placed", False))
    where = data.get("placement")
    if not isinstance(where, dict):
        return
    scheds = where.get("schedules")
    seq = where.get("seq")
    if not isinstance(scheds, dict) or not isinstance(seq, int):
        raise VerifyError(f"from_json: bad placement of operation {op.name}: {where!r}")
    op.placement = Placement(
        seq, {str(n): Relation(str(t), ufs=comp.ufs) for n, t in scheds.items()}
    )


__all__ = [
    "KINDS",
    "OperationStmt",
    "Placement",
    "forget_orders",
    "load_placement",
    "make_barrier",
    "make_copy",
    "make_transfer",
    "note_order",
    "order_width",
    "placements",
    "program_schedules",
    "restore_placements",
]
