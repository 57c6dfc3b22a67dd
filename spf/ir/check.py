"""Is an IR a computation? The checks code generation runs on an IR it did not take from one.

``Computation.add_stmt`` derives a statement's accesses from its C source and refuses a
name taken twice; an IR built by hand (``ComputationIR(...)``, ``dataclasses.replace`` of a
record, :mod:`spf.ir.build` with names of its caller's choosing) went through none of that,
and code generation trusts what it records: the bounds proofs and the checks of a kernel
read the recorded accesses, the statement body runs the source (a source changed to read
``A(k+1)`` with its reads left as ``A(k)`` read past ``A`` in a checked kernel), and
statements are emitted by name (a second ``s0`` replaced the first in the kernel).

:func:`check` raises a :class:`~spf.errors.VerifyError` naming the statement, data space
or name and what to do. An IR taken from a computation (``comp.ir``, whose statements the
computation parsed and checked) passes without parsing anything; another is checked once
per value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from spf.errors import UndeclaredError, VerifyError
from spf.ir.access import access_relation
from spf.ir.parsed import from_computation

if TYPE_CHECKING:
    from spf.ir.model import ComputationIR, OperationIR, StmtIR
    from spf.sets import Relation

__all__ = ["check"]

_CHECKED = "_checked"
"""The attribute of an IR value that records it passed :func:`check`."""


def check(ir: ComputationIR) -> None:
    """``VerifyError`` when ``ir`` is not what a computation records (see the module
    docstring): names taken twice, element types C does not have, operations placed
    outside the statement list; for an IR not taken from a computation also schedules and
    accesses that do not take a statement's domain, accesses of a statement's source it
    does not record and symbolic constants missing from ``params``."""
    if ir.__dict__.get(_CHECKED):
        return
    check_fields(ir)
    _check_names(ir)
    _check_references(ir)
    _check_types(ir)
    _check_positions(ir)
    if not from_computation(ir):
        for stmt in ir.stmts:
            _check_accesses(ir, stmt)
        _check_params(ir)
    ir.__dict__[_CHECKED] = True


_STR = "str"
_INT = "int"
_BOOL = "bool"
_SPEC: dict[str, dict[str, tuple[str, ...]]] = {
    "DataSpaceIR": {
        "name": (_STR,),
        "type": (_STR,),
        "shape": ("None", "extents"),
        "rank": ("None", _INT),
        "role": (_STR,),
        "index": (_BOOL,),
        "private": ("None", _STR),
        "trusted": (_BOOL,),
    },
    "UFIR": {
        "name": (_STR,),
        "arity": (_INT,),
        "domain": ("None", _STR),
        "range": ("None", _STR),
        "monotonic": ("None", _STR),
        "dtype": (_STR,),
        "out_arity": (_INT,),
        "inverse": ("None", _STR),
    },
    "StmtIR": {
        "name": (_STR,),
        "source": (_STR,),
        "domain": (_STR,),
        "schedule": (_STR,),
        "current_schedule": (_STR,),
        "reads": ("accesses",),
        "writes": ("accesses",),
        "tags": ("tags",),
    },
    "OperationIR": {
        "name": (_STR,),
        "position": (_INT,),
        "kind": (_STR,),
        "domain": (_STR,),
        "target": ("None", _STR),
        "index": ("strs",),
        "count": (_STR,),
        "peer": ("None", _STR),
        "schedule": (_STR,),
        "current_schedule": (_STR,),
        "tags": ("tags",),
        "placed": (_BOOL,),
        "placement": ("None", "placement"),
        "reads": ("accesses",),
        "writes": ("accesses",),
    },
    "BufferIR": {
        "name": (_STR,),
        "shape": ("extents",),
        "dtype": (_STR,),
        "scope": (_STR,),
        "partitions": ("partitions",),
        "implicit": (_BOOL,),
        "zeroed": (_BOOL,),
        "allocation": ("None", "allocation"),
    },
    "PlacementIR": {
        "data_space": (_STR,),
        "buffer": (_STR,),
        "stmt": (_STR,),
        "index": (_STR, "strs"),
        "exprs": ("strs",),
    },
    "WorkspaceIR": {"name": (_STR,), "stmt": (_STR,), "loop": (_STR, _INT), "fill": ("number",)},
}
"""The type of each field of each record, by the names of :func:`_is`."""


def _strs(v: object) -> bool:
    return isinstance(v, tuple) and all(isinstance(x, str) for x in v)


def _pair(v: object) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, str) for x in v)


def _integer(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _extents(v: object) -> bool:
    return isinstance(v, tuple) and all(_integer(x) or isinstance(x, str) for x in v)


def _accesses(v: object) -> bool:
    return isinstance(v, tuple) and all(_pair(x) for x in v)


def _tags(v: object) -> bool:
    return isinstance(v, tuple) and all(
        isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and _strs(x[1]) for x in v
    )


def _placement(v: object) -> bool:
    return (
        isinstance(v, tuple)
        and len(v) == 2
        and _integer(v[0])
        and isinstance(v[1], tuple)
        and all(_pair(x) for x in v[1])
    )


def _partitions(v: object) -> bool:
    return isinstance(v, tuple) and all(
        isinstance(x, tuple)
        and len(x) == 3
        and _integer(x[0])
        and _integer(x[1])
        and isinstance(x[2], str)
        for x in v
    )


def _allocation(v: object) -> bool:
    return (
        isinstance(v, tuple)
        and len(v) == 2
        and isinstance(v[0], str)
        and (v[1] is None or _integer(v[1]) or isinstance(v[1], str))
    )


def _none(v: object) -> bool:
    return v is None


def _str(v: object) -> bool:
    return isinstance(v, str)


def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _number(v: object) -> bool:
    return _integer(v) or isinstance(v, float)


_KINDS: dict[str, Callable[[object], bool]] = {
    "None": _none,
    _STR: _str,
    _INT: _integer,
    _BOOL: _bool,
    "number": _number,
    "strs": _strs,
    "extents": _extents,
    "accesses": _accesses,
    "tags": _tags,
    "placement": _placement,
    "partitions": _partitions,
    "allocation": _allocation,
}


def _is(kind: str, value: object) -> bool:
    return _KINDS[kind](value)


def check_fields(ir: ComputationIR) -> None:
    """``VerifyError`` naming the first field of ``ir`` or of one of its records that does
    not hold a value of its type (an IR built by hand with ``source=None``, a shape of one
    int, an access that is not a (data space, relation) pair), or a loop tag of no kind spf
    knows (``("i", ("paralel",))``): the readers of an IR take its field types for granted."""
    from spf.ir.model import ComputationIR
    from spf.schedule.trace import TraceEntry

    top = {
        "name": _is(_STR, ir.name),
        "return_values": _is("strs", ir.return_values),
        "constants": isinstance(ir.constants, tuple)
        and all(_is("strs", c) and len(c) == 2 for c in ir.constants),
        "assumptions": _is("strs", ir.assumptions),
        "params": _is("strs", ir.params),
        "trace": isinstance(ir.trace, tuple) and all(isinstance(e, TraceEntry) for e in ir.trace),
    }
    for field, ok in top.items():
        if not ok:
            raise VerifyError(
                f"{ir.name!r}: the IR's {field} is {getattr(ir, field)!r}, not a value of its "
                f"type ({ComputationIR.__name__}.{field}: see spf.ir.model)"
            )
    groups = ("data_spaces", "ufs", "stmts", "operations", "buffers", "placements", "workspaces")
    for group in groups:
        records = getattr(ir, group)
        if not isinstance(records, tuple):
            raise VerifyError(f"{ir.name}: the IR's {group} is {records!r}, not a tuple")
        for record in records:
            kind = type(record).__name__
            spec = _SPEC.get(kind)
            if spec is None or kind != _RECORDS[group]:
                raise VerifyError(
                    f"{ir.name}: the IR's {group} holds {record!r}, not a {_RECORDS[group]}"
                )
            for field, kinds in spec.items():
                value = getattr(record, field)
                if not any(_is(k, value) for k in kinds):
                    raise VerifyError(
                        f"{ir.name}: {kind} {getattr(record, next(iter(spec)))!r}: its {field} "
                        f"is {value!r}, not a value of its type ({kind}.{field}: see "
                        "spf.ir.model)"
                    )
    _check_tag_kinds(ir)


def _check_tag_kinds(ir: ComputationIR) -> None:
    """Every loop tag of a known kind (:data:`spf.schedule.tags.KINDS`): code generation
    reads the kinds it knows and would run a loop tagged ``paralel`` sequentially."""
    from spf.schedule.tags import KINDS, kind

    records: list[StmtIR | OperationIR] = [*ir.stmts, *ir.operations]
    for record in records:
        for loop, tags in record.tags:
            for tag in tags:
                if kind(tag) not in KINDS:
                    raise VerifyError(
                        f"{ir.name}: statement {record.name!r}: loop {loop!r} carries the tag "
                        f"{tag!r}, which spf does not know (code generation would ignore it "
                        f"and run the loop as if untagged); the known tags are "
                        f"{', '.join(KINDS)} (set them with the scheduling commands: "
                        "parallelize, vectorize, unroll, pipeline, distribute, gpu, wavefront, "
                        "coiterate)"
                    )


_RECORDS = {
    "data_spaces": "DataSpaceIR",
    "ufs": "UFIR",
    "stmts": "StmtIR",
    "operations": "OperationIR",
    "buffers": "BufferIR",
    "placements": "PlacementIR",
    "workspaces": "WorkspaceIR",
}


def _check_names(ir: ComputationIR) -> None:
    """Identifiers, each once among the statements and operations, the data spaces and the
    UFs (a UF shares its name with a data space only as a run-time index array)."""
    groups = (
        ("data space", [d.name for d in ir.data_spaces]),
        ("UF", [u.name for u in ir.ufs]),
        ("statement", [*(s.name for s in ir.stmts), *(o.name for o in ir.operations)]),
    )
    for kind, names in groups:
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str) or not name.isidentifier():
                raise VerifyError(
                    f"{ir.name}: the {kind} name {name!r} is not a C identifier; rename it"
                )
            if name in seen:
                raise VerifyError(
                    f"{ir.name}: two {kind}s (or operations) are named {name!r}; code is "
                    "generated by name (the second replaced the first): rename one of them"
                    if kind == "statement"
                    else f"{ir.name}: two {kind}s are named {name!r}; rename one of them"
                )
            seen.add(name)
    ufs = {u.name for u in ir.ufs}
    for d in ir.data_spaces:
        if d.index and d.name not in ufs:
            raise VerifyError(
                f"{ir.name}: data space {d.name!r} is a run-time index array (index=True) "
                "with no UF of its name; declare the UF (its values as later statements read "
                "them) or make it an ordinary data space"
            )
        if d.name in ufs and not d.index:
            raise VerifyError(
                f"{ir.name}: {d.name!r} is both a data space and a UF; a UF shares its name "
                "with a data space only as a run-time index array (index=True): rename one"
            )


def _check_references(ir: ComputationIR) -> None:
    """Placements, allocations and workspaces name declared buffers, data spaces and
    statements."""
    spaces = {d.name for d in ir.data_spaces}
    buffers = {b.name for b in ir.buffers}
    stmts = {s.name for s in ir.stmts} | {o.name for o in ir.operations}
    named = [
        (f"the placement of {p.data_space!r}", kind, name, known)
        for p in ir.placements
        for kind, name, known in (
            ("data space", p.data_space, spaces),
            ("buffer", p.buffer, buffers),
            ("statement", p.stmt, stmts),
        )
    ]
    named += [
        (f"the allocation of buffer {b.name!r}", "statement", b.allocation[0], stmts)
        for b in ir.buffers
        if b.allocation is not None
    ]
    named += [
        (f"workspace {w.name!r}", kind, name, known)
        for w in ir.workspaces
        for kind, name, known in (("data space", w.name, spaces), ("statement", w.stmt, stmts))
    ]
    for what, kind, name, known in named:
        if name not in known:
            raise UndeclaredError(kind, name, known, hint=f"named by {what} of {ir.name}")


def _check_types(ir: ComputationIR) -> None:
    from spf.clang import NUMPY_OF_C

    typed = [(f"data space {d.name!r}", d.ctype) for d in ir.data_spaces]
    typed += [(f"buffer {b.name!r}", b.dtype) for b in ir.buffers]
    typed += [(f"symbolic constant {n!r}", t) for n, t in ir.constants]
    for what, ctype in typed:
        if ctype not in NUMPY_OF_C:
            raise VerifyError(
                f"{ir.name}: {what} has the element type {ctype!r}, which spf does not "
                f"generate; use one of {', '.join(sorted(NUMPY_OF_C))}"
            )


def _check_positions(ir: ComputationIR) -> None:
    total = len(ir.stmts) + len(ir.operations)
    positions = sorted(o.position for o in ir.operations)
    inside = all(0 <= p < total for p in positions)
    if not inside or len(set(positions)) < len(positions):
        raise VerifyError(
            f"{ir.name}: the operations are placed at positions {positions} of a statement "
            f"list of {total} entries; each needs a position of its own in 0..{total - 1}"
        )


def _check_accesses(ir: ComputationIR, stmt: StmtIR) -> None:
    """Every access of ``stmt``'s source is among its recorded ones (equal relations)."""
    from spf.ir.source import parse_source

    ufs = ir.uf_decls
    parsed = parse_source(
        stmt.source,
        data_spaces={d.name: d.rank for d in ir.data_spaces},
        ufs={n: u.arity for n, u in ufs.items()},
        stmt=stmt.name,
    )
    domain = ir.set_of(stmt.domain)
    where = f"statement {stmt.name} ({stmt.source.strip()!r})"
    for what, text in (("schedule", stmt.schedule), ("current schedule", stmt.current_schedule)):
        if ir.relation_of(text).in_arity != domain.arity:
            raise VerifyError(
                f"{ir.name}: {where}: its {what} {text} does not take the {domain.arity}-tuples "
                f"of its domain {stmt.domain}"
            )
    for ds, text in (*stmt.reads, *stmt.writes):
        if ir.relation_of(text).in_arity != domain.arity:
            raise VerifyError(
                f"{ir.name}: {where}: its access {text} of {ds!r} does not take the "
                f"{domain.arity}-tuples of its domain {stmt.domain}"
            )
    for kind, found, recorded in (
        ("reads", parsed.reads, stmt.reads),
        ("writes", parsed.writes, stmt.writes),
    ):
        known = _recorded(ir, recorded)
        for access in found:
            rel = access_relation(domain, access.indices, ufs, where)
            text = str(rel)
            if not any(
                ds == access.data_space
                and r.out_arity == rel.out_arity
                and (str(r) == text or r.is_equal(rel))
                for ds, r in known
            ):
                shown = f"{access.data_space}({', '.join(access.indices)})"
                raise VerifyError(
                    f"{ir.name}: {where} {kind} {shown}, {text}, which its recorded {kind} "
                    f"{list(recorded)} do not include: code generation proves and checks the "
                    f"recorded accesses and runs the source. Keep a statement's accesses those "
                    f"of its source (build it with spf.ir.build.add_stmt or "
                    f"Computation.add_stmt, not dataclasses.replace of its source)"
                )


def _recorded(ir: ComputationIR, pairs: tuple[tuple[str, str], ...]) -> list[tuple[str, Relation]]:
    return [(ds, ir.relation_of(text)) for ds, text in pairs]


def _check_params(ir: ComputationIR) -> None:
    """The symbolic constants of the statements' sets and of the extents are among
    ``ir.params`` (the kernel's integer arguments)."""
    from spf.sets.set_like import expression_params

    used: dict[str, str] = {}
    for stmt in ir.stmts:
        names = ir.set_of(stmt.domain).params | ir.relation_of(stmt.current_schedule).params
        for name in names:
            used.setdefault(name, f"statement {stmt.name}")
    for uf in ir.uf_decls.values():
        for decl in (uf.domain, uf.range):
            for name in decl.params if decl is not None else ():
                used.setdefault(name, f"the declaration of UF {uf.name!r}")
    for space in ir.data_spaces:
        for extent in space.shape or ():
            if isinstance(extent, str):
                for name in expression_params(extent):
                    used.setdefault(name, f"the shape of data space {space.name!r}")
    missing = sorted(set(used) - set(ir.params))
    if missing:
        raise VerifyError(
            f"{ir.name}: {used[missing[0]]} uses the symbolic constant {missing[0]!r}, which "
            f"is not among the IR's params {list(ir.params)} (the kernel's integer "
            "arguments); an IR changed by hand must list every constant its sets use"
        )
