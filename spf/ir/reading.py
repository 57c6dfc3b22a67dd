"""The IR as the analysis reads it: statements with their sets parsed, in program order.

A :class:`ParsedStmt` is one statement or operation record of a
:class:`~spf.ir.model.ComputationIR` with its domain, schedules and accesses parsed with
the IR's UF declarations (:meth:`~spf.ir.model.ComputationIR.set_of`, remembered on the IR
value). ``ir.parsed_stmts`` lists them in the order of ``comp.stmts`` (operations at their
positions); ``ir.schedule_width``, ``ir.facts`` and :func:`storage_of` are the other
whole-computation values the analysis reads. Nothing here changes or builds a computation.

:class:`StmtReading` is what the analysis reads of a statement: a :class:`ParsedStmt`, or
a live ``spf.Stmt`` in the analyses not yet moved onto the IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from spf.ir.model import StmtIR

if TYPE_CHECKING:
    from spf.ir.model import (
        BufferIR,
        ComputationIR,
        DataSpaceIR,
        OperationIR,
        PlacementIR,
    )
    from spf.sets import Relation, Set
    from spf.sets.facts import Fact

__all__ = [
    "ParsedStmt",
    "StmtReading",
    "buffer_of",
    "data_space",
    "describe_operation",
    "facts",
    "is_constant",
    "iterator_names",
    "order_width",
    "parsed_stmts",
    "placement_of",
    "placement_order",
    "placement_relation",
    "program_schedules",
    "storage_of",
]


def is_constant(text: str) -> bool:
    """True for a schedule entry that is an integer constant (``0``, ``-1``)."""
    return text.lstrip("-").isdigit()


def iterator_names(domain: Set) -> tuple[str, ...]:
    """Names for the domain's tuple positions (``_c<k>`` where the domain has a constant)."""
    names = []
    for k, v in enumerate(domain.tuple_vars):
        names.append(v if v.isidentifier() else f"_c{k}")
    return tuple(names)


class StmtReading(Protocol):
    """What the analysis reads of a statement (a :class:`ParsedStmt` or an ``spf.Stmt``)."""

    @property
    def name(self) -> str: ...

    @property
    def domain(self) -> Set: ...

    @property
    def schedule(self) -> Relation: ...

    @property
    def original_schedule(self) -> Relation: ...

    @property
    def reads(self) -> tuple[tuple[str, Relation], ...]: ...

    @property
    def writes(self) -> tuple[tuple[str, Relation], ...]: ...

    @property
    def loops(self) -> tuple[str, ...]: ...

    @property
    def tags(self) -> dict[str, tuple[str, ...]]: ...


@dataclass(frozen=True, eq=False)
class ParsedStmt:
    """A statement or operation record of ``ir`` with its sets parsed on first use."""

    record: StmtIR | OperationIR
    ir: ComputationIR = field(repr=False)

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def source(self) -> str:
        """The C source of a statement; an operation's kind as a C comment."""
        if isinstance(self.record, StmtIR):
            return self.record.source
        return f"/* {self.record.kind} */"

    @cached_property
    def domain(self) -> Set:
        return self.ir.set_of(self.record.domain)

    @cached_property
    def schedule(self) -> Relation:
        """The current schedule."""
        return self.ir.relation_of(self.record.current_schedule)

    @cached_property
    def original_schedule(self) -> Relation:
        """The schedule it was added with (program order)."""
        return self.ir.relation_of(self.record.schedule)

    @cached_property
    def reads(self) -> tuple[tuple[str, Relation], ...]:
        return tuple((ds, self.ir.relation_of(r)) for ds, r in self.record.reads)

    @cached_property
    def writes(self) -> tuple[tuple[str, Relation], ...]:
        return tuple((ds, self.ir.relation_of(r)) for ds, r in self.record.writes)

    @cached_property
    def loops(self) -> tuple[str, ...]:
        """Current loop names, outer first (schedule entries that are not constants)."""
        return tuple(v for v in self.schedule.out_vars if not is_constant(v))

    @property
    def tags(self) -> dict[str, tuple[str, ...]]:
        """Tags by loop name (``{"i": ("parallel",)}``)."""
        return dict(self.record.tags)


def placement_order(stmt: StmtReading) -> tuple[int, dict[str, str]] | None:
    """``(seq, {statement: schedule text})`` of the program order a Layer IV operation was
    placed in (None for a statement, or an operation whose creation schedule is its order)."""
    record = getattr(stmt, "record", None)
    placement = getattr(record, "placement", None)
    return None if placement is None else (placement[0], dict(placement[1]))


def _meaning(stmt: ParsedStmt) -> Relation:
    """The schedule that gives ``stmt`` its place in the program order."""
    placed = placement_order(stmt)
    if placed is not None and stmt.name in placed[1]:
        return stmt.ir.relation_of(placed[1][stmt.name])
    return stmt.original_schedule


def program_schedules(a: ParsedStmt, b: ParsedStmt) -> tuple[Relation, Relation] | None:
    """The schedules that order ``a`` against ``b`` in the program order when one of them is
    a placed operation (None otherwise: their original schedules): both from the latest
    placement that knows both statements, else each one's own."""
    known = [p for p in (placement_order(a), placement_order(b)) if p is not None]
    if not known:
        return None
    for _, schedules in sorted(known, key=lambda p: -p[0]):
        if a.name in schedules and b.name in schedules:
            return a.ir.relation_of(schedules[a.name]), a.ir.relation_of(schedules[b.name])
    return _meaning(a), _meaning(b)


def order_width(ir: ComputationIR) -> int:
    """The longest schedule among the current ones and the placements in use."""
    width = ir.schedule_width
    for op in ir.operations:
        if op.placement is not None:
            arities = [ir.relation_of(text).out_arity for _, text in op.placement[1]]
            width = max([width, *arities])
    return width


def describe_operation(
    kind: str, target: str | None, index: tuple[str, ...], count: str, peer: str | None
) -> str:
    """``send(A(q, 0), count=4, dest=q + 1)``-like text of a Layer IV operation."""
    if kind == "barrier":
        return "barrier"
    elem = f"{target}({', '.join(index)})" if index else str(target)
    if kind in ("wait", "post"):
        return f"{kind}({elem})"
    if kind == "send":
        return f"send({elem}, count={count}, dest={peer})"
    if kind == "receive":
        return f"receive({elem}, count={count}, src={peer})"
    return f"{kind}({target})"


def parsed_stmts(ir: ComputationIR) -> tuple[ParsedStmt, ...]:
    """The statements and operations of ``ir`` in the order of ``comp.stmts``
    (``ir.parsed_stmts``, which remembers them)."""
    ops = {o.position: o for o in ir.operations}
    total = len(ir.stmts) + len(ir.operations)
    if len(ops) < len(ir.operations) or any(not 0 <= k < total for k in ops):
        from spf.errors import VerifyError

        raise VerifyError(
            f"{ir.name}: the operations are placed at positions "
            f"{sorted(o.position for o in ir.operations)} of a statement list of {total} "
            f"entries; each needs a position of its own in 0..{total - 1}"
        )
    stmts = iter(ir.stmts)
    records: list[StmtIR | OperationIR] = []
    for k in range(total):
        op = ops.get(k)
        records.append(op if op is not None else next(stmts))
    return tuple(ParsedStmt(r, ir) for r in records)


def facts(ir: ComputationIR) -> tuple[Fact, ...]:
    """The assumptions of ``ir`` as facts, parsed with its UFs (``ir.facts``)."""
    from spf.sets.facts import Fact

    return tuple(Fact.parse(text, ir.uf_decls, ir.params) for text in ir.assumptions)


def storage_of(ir: ComputationIR, space: str) -> tuple[str, tuple[str, ...]] | None:
    """``(buffer, index)`` where ``space`` lives (``comp.storage_of``), or None."""
    p = placement_of(ir, space)
    return None if p is None else (p.buffer, p.exprs)


def placement_of(ir: ComputationIR, space: str) -> PlacementIR | None:
    """Where data space ``space`` lives (``store_in``), or None."""
    for p in ir.placements:
        if p.data_space == space:
            return p
    return None


def placement_relation(ir: ComputationIR, placement: PlacementIR) -> Relation:
    """``{[t0, t1, ...] -> [buffer coordinates]}`` of ``placement`` (its data space's
    coordinates ``t<k>`` to the buffer's)."""
    ds = data_space(ir, placement.data_space)
    rank = 0 if ds is None or ds.rank is None else ds.rank
    coords = ", ".join(f"t{k}" for k in range(rank))
    return ir.relation_of(f"{{[{coords}] -> [{', '.join(placement.exprs)}]}}")


def buffer_of(ir: ComputationIR, name: str) -> BufferIR | None:
    """The Layer III buffer ``name`` (None when there is none)."""
    for b in ir.buffers:
        if b.name == name:
            return b
    return None


def data_space(ir: ComputationIR, name: str) -> DataSpaceIR | None:
    """The data space ``name`` of ``ir`` (None when there is none)."""
    return ir.data_space_table.get(name)


def uses(stmt: ParsedStmt, space: str) -> bool:
    """Whether ``stmt`` reads or writes ``space``."""
    return any(ds == space for ds, _ in (*stmt.reads, *stmt.writes))
