"""Builders of IR values: the computations a lower layer makes, step by step.

The analysis builds computations of its own (the wavefront inspector and its counting
sorts, the coarse inspector, the loops that check facts): each step here takes a
:class:`~spf.ir.ComputationIR` and returns a new one, as ``Computation``'s declarations
do for a live computation, so nothing below ``spf.computation`` needs that class. A step
records what ``Computation`` would record for the same call (the texts of sets and
relations as spf prints them, the statement's accesses derived from its C source, the
symbolic constants), so ``Computation.from_ir(ir).ir == ir``.

The builders take what the analysis writes, already checked: a C type name, extents as
text, UF fields, statements whose data spaces and UFs are declared (a call of anything
else is an :class:`~spf.errors.UndeclaredError`; a builder infers no declaration).

>>> from spf.ir import build
>>> ir = build.computation("scale")
>>> ir = build.add_data_space(ir, "x", "double", ("N",))
>>> ir = build.add_stmt(ir, "$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}")
>>> ir.stmts[0].writes, ir.params
((('x', '{[i] -> [i]}'),), ('N',))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from spf.errors import ArityError, UndeclaredError, VerifyError
from spf.ir.access import access_relation
from spf.ir.model import UFIR, Accesses, ComputationIR, DataSpaceIR, OperationIR, StmtIR, Tags
from spf.ir.reading import is_constant, iterator_names
from spf.sets import UF, Relation, Set
from spf.sets.set_like import expression_params

__all__ = [
    "add_constant",
    "add_data_space",
    "add_flag_operation",
    "add_stmt",
    "assume",
    "computation",
    "declarations",
    "declare_uf",
    "next_root",
    "program_order",
    "reschedule",
]


def computation(name: str) -> ComputationIR:
    """An empty computation named ``name``."""
    return ComputationIR(name=name)


def declarations(ir: ComputationIR, name: str) -> ComputationIR:
    """A computation named ``name`` with the declarations of ``ir`` (its data spaces, UFs,
    symbolic constants and assumptions) and none of its statements, operations, layout or
    trace: where a computation derived from ``ir`` starts."""
    names = set(dict(ir.constants))
    for space in ir.data_spaces:
        for extent in space.shape or ():
            if isinstance(extent, str):
                names |= expression_params(extent)
    for uf in ir.uf_decls.values():
        for s in (uf.domain, uf.range):
            if s is not None:
                names |= s.params
    for fact in ir.facts:
        names |= fact.params
    out = ComputationIR(
        name=name,
        data_spaces=ir.data_spaces,
        ufs=ir.ufs,
        constants=ir.constants,
        assumptions=ir.assumptions,
    )
    return _with_params(out, names)


def add_data_space(
    ir: ComputationIR, name: str, ctype: str, shape: Sequence[int | str], *, role: str = "data"
) -> ComputationIR:
    """``ir`` with the data space ``name`` (C type ``ctype``, extents ``shape``; ``()``: a
    scalar)."""
    _check_fresh(ir, name, "data space")
    dims = tuple(d if isinstance(d, int) else d.strip() for d in shape)
    space = DataSpaceIR(name=name, type=ctype, shape=dims, rank=len(dims), role=role)
    names: set[str] = set()
    for extent in dims:
        if isinstance(extent, str):
            names |= expression_params(extent)
    return _with_params(dataclasses.replace(ir, data_spaces=(*ir.data_spaces, space)), names)


def add_constant(ir: ComputationIR, name: str, ctype: str = "int64_t") -> ComputationIR:
    """``ir`` with the symbolic constant ``name`` (a kernel argument of C type ``ctype``)."""
    _check_fresh(ir, name, "symbolic constant")
    if name in dict(ir.constants):
        return ir
    return _with_params(dataclasses.replace(ir, constants=(*ir.constants, (name, ctype))), {name})


def declare_uf(ir: ComputationIR, name: str, **fields: Any) -> ComputationIR:
    """``ir`` with the UF ``name`` (the fields of :class:`spf.UF`) and, when it names an
    inverse not declared yet, that one too; declaring an equal UF again changes nothing."""
    uf = UF(name, **fields)
    record = UFIR(
        name=uf.name,
        arity=uf.arity,
        domain=None if uf.domain is None else str(uf.domain),
        range=None if uf.range is None else str(uf.range),
        monotonic=uf.monotonic,
        dtype=uf.dtype,
        out_arity=uf.out_arity,
        inverse=uf.inverse,
    )
    old = next((u for u in ir.ufs if u.name == name), None)
    if old is not None:
        if old != record:
            raise VerifyError(f"{ir.name}: UF {name!r} is already declared otherwise")
        return ir
    _check_fresh(ir, name, "UF")
    names: set[str] = set()
    for s in (uf.domain, uf.range):
        if s is not None:
            names |= s.params
    ir = _with_params(dataclasses.replace(ir, ufs=(*ir.ufs, record)), names)
    if uf.inverse is not None and all(u.name != uf.inverse for u in ir.ufs):
        inverse = uf.inverse_uf()
        copied = ("arity", "domain", "range", "monotonic", "dtype", "out_arity", "inverse")
        ir = declare_uf(ir, inverse.name, **{f: getattr(inverse, f) for f in copied})
    return ir


def assume(ir: ComputationIR, text: str) -> ComputationIR:
    """``ir`` with the fact ``text`` among its assumptions (over its declared UFs)."""
    from spf.sets.facts import Fact

    fact = Fact.parse(text, ir.uf_decls, ir.params)
    _check_declared(ir, set(fact.ufs), f"assumption {text!r}")
    if fact.text in ir.assumptions:
        return ir
    return _with_params(
        dataclasses.replace(ir, assumptions=(*ir.assumptions, fact.text)), fact.params
    )


def add_stmt(
    ir: ComputationIR,
    source: str,
    domain: str,
    schedule: str | None = None,
    *,
    name: str | None = None,
) -> ComputationIR:
    """``ir`` with the statement ``source`` (C, data spaces as ``$name$``) over ``domain``
    at ``schedule`` (without one, after every statement: :func:`program_order`; named
    ``s<k>`` unless ``name``): its accesses are derived from the source as
    ``Computation.add_stmt`` derives them."""
    from spf.ir.source import parse_source

    if name is None:
        name = _fresh_stmt_name(ir)
    elif not isinstance(name, str) or not name.isidentifier():
        raise VerifyError(f"{ir.name}: statement name {name!r} is not a C identifier")
    elif name in {s.name for s in ir.stmts} | {o.name for o in ir.operations}:
        raise VerifyError(
            f"{ir.name}: a statement or operation is already named {name!r}; code is "
            "generated by name: give another name (or none, for a fresh one)"
        )
    where = f"statement {name} ({source.strip()!r})"
    ufs = ir.uf_decls
    dom = Set(domain, ufs=ufs)
    if schedule is None:
        schedule = program_order(dom, _next_root(ir))
    sched = Relation(schedule, ufs=ufs)
    _check_declared(ir, {c.split("(", 1)[0] for c in (*dom.uf_calls, *sched.uf_calls)}, where)
    if sched.in_arity != dom.arity:
        raise ArityError(f"{where}: the schedule {sched} does not take the domain's tuples")
    ranks = {d.name: d.rank for d in ir.data_spaces}
    parsed = parse_source(
        source, data_spaces=ranks, ufs={n: u.arity for n, u in ufs.items()}, stmt=name
    )
    _check_declared(ir, {n for n, _ in parsed.uf_calls}, where)
    known = set(iterator_names(dom)) | set(ir.params) | dom.params
    unknown = sorted(parsed.names - known)
    if unknown:
        raise UndeclaredError("iterator or parameter", unknown[0], sorted(known), hint=where)
    reads, writes = (
        tuple((a.data_space, str(access_relation(dom, a.indices, ufs, where))) for a in accs)
        for accs in (parsed.reads, parsed.writes)
    )
    text = str(sched)
    stmt = StmtIR(
        name=name,
        source=source,
        domain=str(dom),
        schedule=text,
        current_schedule=text,
        reads=reads,
        writes=writes,
    )
    new = dataclasses.replace(ir, stmts=(*ir.stmts, stmt))
    return _with_params(new, dom.params | sched.params)


def reschedule(
    ir: ComputationIR,
    name: str,
    domain: str,
    schedule: str,
    reads: Accesses,
    writes: Accesses,
    tags: Tags,
) -> ComputationIR:
    """``ir`` with statement ``name`` over a new ``domain`` at a new ``schedule`` (its
    program order too), with the given accesses and loop tags (its source is unchanged):
    the texts as spf prints them."""
    ufs = ir.uf_decls
    dom = Set(domain, ufs=ufs)
    sched = Relation(schedule, ufs=ufs)
    text = str(sched)
    try:
        old = ir.stmt(name)
    except KeyError:
        raise UndeclaredError(
            "statement", name, [s.name for s in ir.stmts], hint=f"of {ir.name}"
        ) from None
    if not isinstance(old, StmtIR):
        raise VerifyError(f"{ir.name}: {name!r} is an operation, not a statement")
    new = dataclasses.replace(
        old,
        domain=str(dom),
        schedule=text,
        current_schedule=text,
        reads=_printed(reads, ufs),
        writes=_printed(writes, ufs),
        tags=tags,
    )
    stmts = tuple(new if s.name == name else s for s in ir.stmts)
    return _with_params(dataclasses.replace(ir, stmts=stmts), dom.params | sched.params)


def add_flag_operation(
    ir: ComputationIR,
    name: str,
    kind: str,
    domain: str,
    schedule: str,
    flag: tuple[str, str, str],
    tags: Tags,
) -> ComputationIR:
    """``ir`` with a ``wait`` or ``post`` operation (Layer IV) after its statements and
    operations: ``flag`` is ``(data space, index, count)``; a wait reads the flag element
    until it holds ``count``, a post writes it."""
    if kind not in ("wait", "post"):
        raise VerifyError(f"{ir.name}: flag operation {name!r}: kind must be 'wait' or 'post'")
    ufs = ir.uf_decls
    dom = Set(domain, ufs=ufs)
    sched = Relation(schedule, ufs=ufs)
    target, index, count = flag
    access = ((target, str(access_relation(dom, [index], ufs, kind))),)
    op = OperationIR(
        name=name,
        position=len(ir.stmts) + len(ir.operations),
        kind=kind,
        domain=str(dom),
        target=target,
        index=(index,),
        count=count,
        peer=None,
        schedule=str(sched),
        current_schedule=str(sched),
        tags=tags,
        placed=True,
        reads=access if kind == "wait" else (),
        writes=() if kind == "wait" else access,
    )
    new = dataclasses.replace(ir, operations=(*ir.operations, op))
    return _with_params(new, dom.params | sched.params)


def program_order(domain: Set, root: int) -> str:
    """The schedule of a statement over ``domain`` added without one: at ``root`` (after the
    statements before it), its loops in the domain's order, a ``0`` after each
    (``{[i, j] -> [2, i, 0, j, 0]}``); a constant of the domain's tuple stays in place."""
    its = iterator_names(domain)
    shown = domain.tuple_vars
    entries = [it if shown[k].isidentifier() else shown[k] for k, it in enumerate(its)]
    out = [str(root)] + [x for e in entries for x in (e, "0")]
    return f"{{[{', '.join(its)}] -> [{', '.join(out)}]}}"


def next_root(schedules: Iterable[Relation]) -> int:
    """The outermost schedule constant after every one of ``schedules`` (the current and
    original schedules of the statements before a new one)."""
    roots = [-1]
    for sched in schedules:
        first = sched.out_vars[0] if sched.out_arity else "0"
        if is_constant(first):
            roots.append(int(first))
    return max(roots) + 1


def _next_root(ir: ComputationIR) -> int:
    """After every statement of ``ir`` in the current and in the program order."""
    return next_root(x for s in ir.parsed_stmts for x in (s.schedule, s.original_schedule))


def _printed(accesses: Accesses, ufs: Mapping[str, UF]) -> Accesses:
    """``accesses`` with their relations as spf prints them."""
    return tuple((ds, str(Relation(rel, ufs=ufs))) for ds, rel in accesses)


def _fresh_stmt_name(ir: ComputationIR) -> str:
    """``s<k>``: ``k`` the number of statements, or the next one no other name takes."""
    taken = {s.name for s in ir.stmts} | {o.name for o in ir.operations} | set(ir.params)
    taken |= {d.name for d in ir.data_spaces} | {u.name for u in ir.ufs}
    k = len(ir.stmts) + len(ir.operations)
    while f"s{k}" in taken:
        k += 1
    return f"s{k}"


def _check_fresh(ir: ComputationIR, name: str, what: str) -> None:
    if any(d.name == name for d in ir.data_spaces) or any(u.name == name for u in ir.ufs):
        raise VerifyError(f"{ir.name}: {what} {name!r}: the name is already declared")


def _check_declared(ir: ComputationIR, calls: set[str], where: str) -> None:
    """Every UF in ``calls`` is declared in ``ir`` (the builders infer none)."""
    declared = {u.name for u in ir.ufs}
    for call in sorted(calls - declared):
        raise UndeclaredError("UF", call, sorted(declared), hint=f"in {where} of {ir.name}")


def _with_params(ir: ComputationIR, names: set[str] | frozenset[str]) -> ComputationIR:
    """``ir`` with ``names`` among its symbolic constants (``Computation.params`` is the
    union of the free names of domains, schedules, extents, UF domains and ranges and
    assumptions, and the declared constants: each step adds those of what it adds)."""
    params = tuple(sorted(set(ir.params) | names))
    return ir if params == ir.params else dataclasses.replace(ir, params=params)
