"""What a printer needs, free of isl: the lowered form of a computation's IR.

``lower(ir)`` scans the schedule (the scanner uses isl) and collects everything printers
print: the signature, the loop tree, statement bodies as C expression trees
(:mod:`spf.cexpr`, reads and writes as :class:`~spf.cexpr.Access` nodes), data-space extents
and UF arities. Printers consume a ``Program`` and nothing else, and print the trees with the
one precedence-table printer."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.cexpr import to_c
from spf.clang import (
    C_KEYWORDS,
    C_LATER_KEYWORDS,
    CPP_KEYWORDS,
    HEADER_FUNCTIONS,
    HEADER_MACROS,
    LIBRARY_NAMES,
)
from spf.codegen.apart import Pair, apart_pairs
from spf.codegen.body import BodyBuilder
from spf.codegen.c import eval_product, int_literal
from spf.codegen.loop_ast import Alloc, Bind, Block, Call, For, If, Merge, Node, walk
from spf.codegen.register_tile import IndexForm, index_form
from spf.codegen.signature import Arg, Signature, check_statement_names, uf_inner_extents
from spf.errors import CodegenError, ParseError, SpfError
from spf.ir.reading import storage_of
from spf.sets import syntax as ast
from spf.sets.parse import parse_document

if TYPE_CHECKING:
    from spf.analysis.bounds import Obligation
    from spf.analysis.fact_plan import InLoopCheck
    from spf.cexpr import Expr
    from spf.cexpr import Stmt as CStmt
    from spf.codegen.each_call import EachCall
    from spf.codegen.injective_marks import MarkCheck
    from spf.ir import BufferIR, ComputationIR, DataSpaceIR, OperationIR
    from spf.ir.reading import ParsedStmt


@dataclass(frozen=True)
class StmtMacro:
    name: str
    params: tuple[str, ...]
    body: tuple[CStmt, ...]
    """The statement's body as a C tree: its iterators are the macro's parameters, data
    spaces are read and written as :class:`~spf.cexpr.Access` nodes (printed ``A(i, j)``)
    and UFs called as ``col(k)``."""
    reduction: Reduction | None = None
    """Set when the statement is one accumulation ``y(...) op= e`` with ``e`` not reading y."""
    update: Reduction | None = None
    """Like ``reduction`` but also for ``/=`` and the spelled-out ``y = y + e`` (as ``y +=
    e``): the form of an atomic update in a ``reduction(atomic)`` loop."""
    accumulates: tuple[tuple[str, str, str], ...] = ()
    """``(data space, operator family, C type)`` of the statement's reduction updates in the
    sense of :mod:`spf.analysis.reductions` (what a ``reduction(privatize)`` loop copies)."""
    assigns: tuple[str, ...] = ()
    """Data spaces the statement writes other than by those updates (``tmp(i) = 0.0``): a
    ``reduction(privatize)`` loop never copies them, its merge would add to their input."""
    reads: tuple[str, ...] = ()
    """Data spaces the statement reads other than by those updates: a
    ``reduction(privatize)`` loop never copies them either, a reader of the copy would see
    zeros instead of the array's values."""
    operation: Operation | None = None
    """Set for a Layer IV operation (``body`` is then empty; printers print the operation)."""
    tags: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """The statement's loop tags by loop name (``stmt.pipeline``, ``stmt.unroll`` ...), as
    scheduled: the loops printed around its calls carry those of the loops code generation
    keeps."""
    calls: frozenset[str] = frozenset()
    """The C names ``body`` calls, as printed: data-space access macros (``spf_ds_<name>``
    for a run-time index array), UFs and functions (``spf_min``, ``sqrt``)."""
    names: frozenset[str] = frozenset()
    """Every name ``body`` refers to: :attr:`calls`, the data spaces and UFs by their
    names, iterators, parameters and locals (what a printer needs to know which arrays a
    statement uses, without reading its text back)."""
    apart: tuple[Pair, ...] = ()
    """``(data space, index written, index read)`` of each write and read of one data space
    in ``body`` that the computation's facts keep apart wherever the statement runs
    (:mod:`spf.codegen.apart`): a row scalar stores nothing before such a read."""


@dataclass(frozen=True)
class Reduction:
    target: Expr
    """The accumulated element (macro parameters as in :attr:`StmtMacro.body`)."""
    op: str
    value: Expr
    ctype: str
    uses: frozenset[str]
    """The statement iterators the target's indices use."""
    data_space: str = ""
    """The data space accumulated into."""
    indices: tuple[IndexForm, ...] | None = None
    """The target's index expressions over the statement's iterators, None where one does
    not parse (a register tile keeps one cell per element only where they are affine:
    :mod:`spf.codegen.register_tile`)."""


@dataclass(frozen=True)
class DataMacro:
    name: str
    rank: int
    extents: tuple[str, ...]
    """C expressions of the extents (row-major strides use all but the first)."""
    buffer: str | None = None
    """The buffer the data space is stored in (``store_in`` / ``storage_fold``); None: the
    data space is its own array ``name``. A buffer's own macro has ``buffer`` None."""
    index: tuple[Expr, ...] = ()
    """With ``buffer``: the buffer element's index over ``t0, t1, ...`` (the macro
    parameters), one expression per buffer dimension (linearise with the buffer's extents)."""
    offset: str | None = None
    """A workspace (``stmt.workspace``): the C variable holding the first element of the
    running thread's copy (``spf_ws_<name>``)."""
    macro: str | None = None
    """The macro's name when it is not ``name`` (a run-time index array: ``spf_ds_<name>``,
    since ``<name>(...)`` reads it as a UF)."""


@dataclass(frozen=True)
class Partition:
    """``buffer.partition(dim, factor, kind)`` (HLS ``ARRAY_PARTITION``)."""

    dim: int
    factor: int
    kind: str
    """``"cyclic"``, ``"block"`` or ``"complete"``."""


@dataclass(frozen=True)
class BufferDecl:
    """A buffer of the generated function (Layer III, ``comp.add_buffer``)."""

    name: str
    ctype: str
    extents: tuple[str, ...]
    """C expressions of the extents (row-major)."""
    scope: str
    """``"global"``, ``"shared"``, ``"local"``, ``"constant"`` (GPU) or ``"stack"``."""
    argument: bool
    """True when the buffer is a kernel argument (global/constant buffers); False when the
    generated code allocates it (stack/local/shared buffers)."""
    partitions: tuple[Partition, ...] = ()
    allocated_at: bool = False
    """True when an :class:`~spf.codegen.loop_ast.Alloc` node of the body places it
    (``allocate_at``); otherwise it lives for the whole function."""
    zeroed: bool = True
    """Filled with zeros when allocated (not for a packed copy: written before it is read)."""
    private: bool = False
    """A local private to each iteration of a loop (``add_local(..., private=...)``, placed
    by :mod:`spf.codegen.private_locals`): a zeroed stack array declared in the loop body."""


ONE = cx.Num("1")


@dataclass(frozen=True)
class Operation:
    """A Layer IV operation (``comp.send`` ...): its statement's ``Call`` nodes mean this."""

    kind: str
    """``"send"``, ``"receive"``, ``"barrier"``, ``"host_to_device"`` or ``"device_to_host"``."""
    buffer: str | None = None
    """The buffer or data space sent, received or copied (None for a barrier)."""
    index: tuple[Expr, ...] = ()
    """The first element's index (over the operation's macro parameters)."""
    count: Expr = ONE
    """The number of elements."""
    source_index: tuple[str, ...] = ()
    """:attr:`index` in set syntax (what a printer that expands the operation at its call
    prints with :func:`index_tree` and the call's values)."""
    source_count: str = "1"
    """:attr:`count` in set syntax."""
    peer: Expr | None = None
    """The destination (send) or source (receive) rank."""
    ctype: str = "double"
    """Element type of ``buffer``."""


@dataclass(frozen=True)
class Program:
    signature: Signature
    body: Node
    stmts: tuple[StmtMacro, ...]
    data: tuple[DataMacro, ...]
    ufs: tuple[tuple[str, int], ...]
    """``(name, arity)`` of each UF array."""
    locals: tuple[tuple[str, str, str], ...] = ()
    """``(name, C type, element count as a C expression)`` of the function's own arrays."""
    local_sizes: tuple[tuple[str, int], ...] = ()
    """``(name, element count)`` of each of :attr:`locals` whose count is a constant."""
    buffers: tuple[BufferDecl, ...] = ()
    """Layer III buffers (``add_buffer``); data spaces stored in them are remapped by their
    ``DataMacro``."""
    workspaces: tuple[tuple[str, str, str], ...] = ()
    """``(name, elements from one thread's copy to the next, fill)`` of each workspace
    (``stmt.workspace``): the function allocates one copy per thread (``locals`` counts them
    all) and each parallel loop's body sets ``spf_ws_<name>`` to its thread's copy."""
    index_arrays: tuple[tuple[str, int, str | None, str | None], ...] = ()
    """``(name, rank, lowest, highest)`` of each run-time index array: ``name(...)`` reads
    it as a UF; with a declared range (C expressions ``lowest``/``highest``) a value outside
    it reads as ``lowest`` and sets the kernel's index fault (docs/formats.md)."""
    index_order: tuple[tuple[int, str, str, str], ...] = ()
    """``(number, monotonic, first, last)`` of each run-time index array (``number`` in
    :attr:`index_arrays`) whose UF declares an order (``"increasing"`` or
    ``"nondecreasing"``): once its loops are done, the kernel checks that the entries
    ``first .. last`` (C expressions: the UF's domain) are in that order
    (:func:`spf.codegen.faults.order_check`)."""
    obligations: tuple[Obligation, ...] = ()
    """Bounds facts no static proof covers (``forall ... => 0 <= j < M``), for the kernel's
    run-time argument checks; empty unless ``codegen(check=True)`` lowered it."""
    fact_checks: tuple[InLoopCheck, ...] = ()
    """Facts (assumptions, then obligations, numbered so) the checked function tests where
    statements run (:mod:`spf.analysis.fact_plan`, :mod:`spf.codegen.arg_checks`)."""
    in_loop_facts: frozenset[int] = frozenset()
    """The numbers of the facts :attr:`fact_checks` verify completely."""
    each_call: EachCall | None = None
    """The each-call facts the checked function tests before its loops
    (:mod:`spf.codegen.each_call`)."""
    implied_facts: tuple[tuple[int, tuple[int, ...]], ...] = ()
    """``(fact, facts it follows from)`` of each fact that is not checked at all: the
    facts checked imply it (:mod:`spf.analysis.fact_prover`)."""
    marks: tuple[MarkCheck, ...] = ()
    """The injectivity facts the checked function tests before its loops, one marking pass
    each (:mod:`spf.codegen.injective_marks`)."""

    def buffer(self, name: str) -> BufferDecl:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def access(self, d: DataMacro) -> str:
        """The C body of ``d``'s macro over ``t0, t1, ...``: ``y[t0]``, ``A[(t0) * M + t1]``,
        or through a buffer ``bx_buf[(t0) % 3 * (M - 2) + t1]``."""
        if d.buffer is None:
            index = linear_index(coords(d.rank), d.extents)
            if d.offset is not None:
                index = cx.Binary("+", cx.Name(d.offset), index)
            return to_c(cx.Index(cx.Name(d.name), index))
        buf = self.buffer(d.buffer)
        return to_c(cx.Index(cx.Name(buf.name), linear_index(d.index, buf.extents)))


def coords(rank: int) -> tuple[cx.Param, ...]:
    """The parameters ``t0, t1, ...`` of an access macro of ``rank`` dimensions."""
    return tuple(cx.Param(f"t{k}") for k in range(rank))


def linear_index(index: Sequence[cx.Expr], extents: Sequence[str]) -> cx.Expr:
    """Row-major offset of ``index`` in an array of ``extents`` (``0`` for rank 0)."""
    if not index:
        return cx.Num("0")
    out = index[0]
    for k in range(1, len(index)):
        extent = extent_tree(extents[k]) if k < len(extents) else cx.Name("?")
        if not any(isinstance(n, (cx.Name, cx.Param)) for n in cx.nodes(extent)):
            # a constant extent is an int: with an int32 index (a UF value read in the
            # body, col(k)) the product would be int arithmetic and overflow past 2**31
            extent = cx.Cast("int64_t", extent)
        out = cx.Binary("+", cx.Binary("*", out, extent), index[k])
    return out


def linearize(names: Sequence[str], extents: Sequence[str]) -> str:
    """C text of :func:`linear_index` over the macro parameters ``names``."""
    return to_c(linear_index([cx.Param(n) for n in names], extents))


@functools.lru_cache(maxsize=1024)
def extent_tree(text: str) -> cx.Expr:
    """An extent (``M - 2``, ``4 * N``: parameters, integers, ``+ - *``) as a tree."""
    return index_tree(text)


def lower(ir: ComputationIR, name: str | None = None) -> Program:
    """Scan the computation ``ir`` and collect what printers need."""
    from spf.codegen.scan import Scanner

    if name is not None and not isinstance(name, str):
        raise CodegenError(f"name= must be a function name (str), got {name!r}")
    fname = c_function_name(name or ir.name)
    if not fname.isidentifier():
        raise CodegenError(f"function name {fname!r} is not a C identifier")
    if not ir.parsed_stmts:
        raise CodegenError(f"computation {ir.name} has no statements to generate")
    stmts = [s.name for s in ir.parsed_stmts]
    macros: dict[str, Collection[str]] = {
        "data space": ir.data_space_table,
        "UF": ir.uf_decls,
        "buffer": _buffers(ir),
    }
    _check_function_name(ir.name, fname, stmts, macros)
    if fname in ir.params:
        raise CodegenError(
            f"function name {fname} is also the name of a symbolic constant of {ir.name}: "
            f"the function's parameter {fname} would hide the function from the checked "
            "variant that calls it (gcc fails); name the computation (or codegen/compile's "
            "name=) otherwise"
        )
    from spf.codegen.verify import verify

    check_statement_names(stmts, {**macros, "symbolic constant": ir.params})
    from spf.codegen.merge import merging

    scanned, expand = merging(ir)  # co-iterated loops: one placeholder each, then merges
    body = Scanner(scanned).scan()
    try:
        verify(scanned, body)
    except CodegenError as err:
        # a UF value read above the guard that keeps its arguments in the UF's domain (the
        # self-check refuses it): scanned again with the reads below such guards
        guarded = Scanner(scanned, below_guards=True).scan()
        try:
            verify(scanned, guarded)
        except CodegenError:
            raise err from None
        body = guarded
    body = expand(body)
    buffers = _buffers(ir)
    body = _place_allocations(ir, body, buffers)
    from spf.codegen.private_locals import place_private_locals

    body, private = place_private_locals(ir, body)
    data = [_data_macro(ds, ir) for ds in ir.data_spaces if ds.rank is not None]
    data += [_buffer_macro(b) for b in buffers.values()]
    own = [
        ds
        for ds in ir.data_spaces
        if ds.role == "local" and storage_of(ir, ds.name) is None and ds.private is None
    ]
    return Program(
        signature=signature(ir, fname),
        body=body,
        stmts=tuple(_stmt_macro(s, ir) for s in ir.parsed_stmts),
        data=tuple(data),
        ufs=tuple(
            (u.name, u.array_uf().arity)
            for n, u in sorted(ir.uf_decls.items())
            if not _is_index(ir, n)
        ),
        locals=tuple(_local(ds, ir) for ds in own),
        local_sizes=tuple(
            (ds.name, n) for ds in own if (n := _constant_elements(ds, ir)) is not None
        ),
        workspaces=_workspaces(ir),
        buffers=(*(_buffer_decl(b) for b in buffers.values()), *private),
        index_arrays=index_arrays(ir),
        index_order=index_order(ir),
    )


def _buffers(ir: ComputationIR) -> dict[str, BufferIR]:
    """The Layer III buffers of ``ir`` by name, in declaration order."""
    return {b.name: b for b in ir.buffers}


def index_arrays(ir: ComputationIR) -> tuple[tuple[str, int, str | None, str | None], ...]:
    """:attr:`Program.index_arrays` of ``ir``."""
    from spf.codegen.signature import uf_range_bounds

    out = []
    for ds in ir.data_spaces:
        if ds.index:
            # a trusted local's range holds by construction: its reads are not checked
            lo_hi = None if ds.trusted else uf_range_bounds(ir.uf_decls[ds.name])
            lo, hi = lo_hi if lo_hi is not None else (None, None)
            out.append((ds.name, ds.rank or 0, lo, hi))
    return tuple(out)


def index_order(ir: ComputationIR) -> tuple[tuple[int, str, str, str], ...]:
    """:attr:`Program.index_order` of ``ir``: the ordered index arrays, checked over their
    UF's domain (the shape when the domain is not a box)."""
    from spf.codegen.signature import set_bounds

    out = []
    spaces = [ds for ds in ir.data_spaces if ds.index]
    for number, ds in enumerate(spaces):
        uf = ir.uf_decls[ds.name]
        if uf.monotonic is None:
            continue
        box = None if uf.domain is None else set_bounds(uf.domain)
        first, last = box if box is not None else ("0", f"({(ds.shape or (0,))[0]}) - 1")
        out.append((number, uf.monotonic, first, last))
    return tuple(out)


def _is_index(ir: ComputationIR, name: str) -> bool:
    """Whether UF ``name`` is a run-time index array (``add_data_space(..., index=True)``)."""
    ds = ir.data_space_table.get(name)
    return ds is not None and ds.index


def _workspaces(ir: ComputationIR) -> tuple[tuple[str, str, str], ...]:
    out = []
    for w in ir.workspaces:
        ds = ir.data_space_table[w.name]
        out.append((w.name, _workspace_stride(ds), repr(w.fill)))
    return tuple(out)


def _is_workspace(ir: ComputationIR, name: str) -> bool:
    return any(w.name == name for w in ir.workspaces)


def _workspace_stride(ds: DataSpaceIR) -> str:
    """C expression of the elements between two threads' copies of a workspace: its size
    rounded up to 64 elements, so no two threads write one cache line (a one-element
    counter per thread would otherwise bounce between cores)."""
    count = " * ".join(f"({d})" for d in ds.shape or ()) or "1"
    return f"spf_ws_stride({count})"


def _local(ds: DataSpaceIR, ir: ComputationIR) -> tuple[str, str, str]:
    if _is_workspace(ir, ds.name):
        return ds.name, ds.ctype, f"spf_thread_count() * {_workspace_stride(ds)}"
    if ds.rank and ds.shape is None:
        raise CodegenError(
            f"local data space {ds.name!r} has rank {ds.rank} but no shape; declare its shape "
            "in the function Computation so the generated code can allocate it"
        )
    count = " * ".join(f"({d})" for d in ds.shape or ()) or "1"
    return ds.name, ds.ctype, count


def _constant_elements(ds: DataSpaceIR, ir: ComputationIR) -> int | None:
    """The number of elements of local ``ds`` when its shape is made of constants (not a
    workspace: one copy per thread), else None."""
    if _is_workspace(ir, ds.name):
        return None
    extents = [str(d) for d in ds.shape or ()]
    if not all(e.isdigit() for e in extents):
        return None
    return eval_product(tuple(extents))


C_RESERVED = C_KEYWORDS | C_LATER_KEYWORDS | CPP_KEYWORDS | LIBRARY_NAMES | {"main"}
"""Names a kernel's C function cannot take: keywords, and the functions of the headers
generated code includes (a computation named ``trunc`` or ``exp`` clashed with math.h's)."""

HELPER_CALLS = {"min": "spf_min", "max": "spf_max"}
"""Statement calls printed by the names of the generated code's own macros (the preludes
define ``spf_min``/``spf_max``), so that a data space, loop or statement may be named
``min`` or ``max``."""


def _check_function_name(
    comp: str, fname: str, stmts: Sequence[str], macros: Mapping[str, Collection[str]]
) -> None:
    """Refuse a function name that is also a name the generated code defines a function-like
    macro for (``macros``: a kind's names; or a statement, or a statement's ``_target`` /
    ``_value``): the macro would rewrite the function's own name (gcc fails)."""
    own = {*stmts, *(f"{s}_target" for s in stmts), *(f"{s}_value" for s in stmts)}
    for kind, names in {**macros, "statement": own}.items():
        if fname in names:
            raise CodegenError(
                f"function name {fname} is also the name of a {kind} of {comp}: the "
                f"generated code defines a macro {fname}(...) for it, which would rewrite the "
                "function's own name; name the computation (or codegen/compile's name=) "
                "otherwise"
            )


def c_function_name(name: str) -> str:
    """``name``, or ``spf_<name>`` when C reserves it (a computation named ``main``,
    ``trunc``, ``div``, ``erf`` or ``HUGE_VAL``)."""
    clash = HEADER_MACROS.fullmatch(name) or HEADER_FUNCTIONS.fullmatch(name)
    return f"spf_{name}" if name in C_RESERVED or clash else name


def signature(ir: ComputationIR, fname: str) -> Signature:
    """docs/backends/c.md: parameters (sorted), UF arrays (sorted), data spaces in order, then
    ``global``/``constant`` buffers in order; data spaces stored in buffers are not
    arguments (their buffer is, when it is global)."""
    written = {ds for s in ir.parsed_stmts for ds, _ in s.record.writes}
    types = dict(ir.constants)
    args = [Arg(name=p, kind="param", ctype=types.get(p, "int64_t")) for p in sorted(ir.params)]
    for name, declared in sorted(ir.uf_decls.items()):
        if _is_index(ir, name):
            continue  # a run-time index array: its data space is the argument
        array = declared.array_uf()  # a tuple-valued UF: the array of its values, f[i][c]
        ctype = "int64_t" if array.dtype == "int64" else "int32_t"
        inner = uf_inner_extents(array)
        args.append(
            Arg(
                name=name,
                kind="uf",
                ctype=ctype,
                const=True,
                rank=array.arity,
                uf=declared,
                inner=inner,
            )
        )
    stored: dict[str, str] = {}
    for ds_name in ir.data_space_table:
        where = storage_of(ir, ds_name)
        if where is not None:
            stored[ds_name] = where[0]
    written_buffers = {stored.get(ds, ds) for ds in written}
    for ds in ir.data_spaces:
        if ds.role == "local" or ds.name in stored:
            continue
        if ds.name in ir.params:  # a function's by-value parameter bounding its loops
            raise CodegenError(
                f"{ir.name}: parameter {ds.name!r} (add_parameter) is also a symbolic constant "
                f"of its domains, and a kernel cannot take both; a function Computation's "
                f"parameters are bound when it is inlined (append_computation): to compile it "
                f"on its own, leave out add_parameter({ds.name!r}, ...) so {ds.name} is the "
                f"kernel's integer argument"
            )
        args.append(
            Arg(
                name=ds.name,
                kind="data",
                ctype=ds.ctype,
                const=ds.name not in written,
                shape=ds.shape,
                rank=ds.rank,
            )
        )
    for b in ir.buffers:
        if b.argument:
            args.append(
                Arg(
                    name=b.name,
                    kind="data",
                    ctype=b.dtype,
                    const=b.name not in written_buffers,
                    shape=b.shape,
                    rank=len(b.shape),
                )
            )
    return Signature(function=fname, args=tuple(args), facts=ir.facts)


def _stmt_macro(stmt: ParsedStmt, ir: ComputationIR) -> StmtMacro:
    from spf.analysis.reductions import updates
    from spf.analysis.sources import source_tree
    from spf.ir import OperationIR
    from spf.ir.reading import iterator_names

    its = iterator_names(stmt.domain)
    if isinstance(stmt.record, OperationIR):
        return StmtMacro(stmt.name, its, (), operation=_operation(stmt.record, ir, its))
    index = {ds.name for ds in ir.data_spaces if ds.index}
    parsed = source_tree(ir, stmt)
    build = BodyBuilder(its, index, HELPER_CALLS)
    spaces = {a.data_space for a in (*parsed.reads, *parsed.writes)}
    ufs = {name for name, _ in parsed.uf_calls}
    calls = frozenset(
        {f"spf_ds_{n}" if n in index else n for n in spaces}
        | ufs
        | {HELPER_CALLS.get(f, f) for f in parsed.functions()}
    )
    names = calls | spaces | parsed.names | {n for n, _ in parsed.locals}
    reduction, update = None, None
    for spelled in (False, True):
        parts = parsed.reduction_tree(spelled=spelled)
        if parts is None:
            continue
        access, target, op, value = parts
        uses: set[str] = set()
        for idx in access.indices:  # the loops the target's subscripts read (min/max too)
            uses |= set(re.findall(r"[A-Za-z_]\w*", idx)) & set(its)
        ctype = ir.data_space_table[access.data_space].ctype
        forms = _index_forms(access.indices)
        found = Reduction(
            build.access(target), op, build.expr(value), ctype, frozenset(uses),
            access.data_space, forms,
        )  # fmt: skip
        reduction, update = (found, found) if not spelled else (reduction, found)
    reduced = updates(parsed)
    spaces_ir = ir.data_space_table
    accumulates = tuple((ds, family, spaces_ir[ds].ctype) for ds, family in reduced.items())
    assigns = tuple(sorted({a.data_space for a in parsed.writes if a.data_space not in reduced}))
    reads = tuple(sorted({a.data_space for a in parsed.reads if a.data_space not in reduced}))
    body = build.stmts(parsed.body)
    return StmtMacro(
        stmt.name,
        its,
        body,
        reduction,
        update=update,
        accumulates=accumulates,
        assigns=assigns,
        reads=reads,
        calls=calls,
        names=names,
        apart=apart_pairs(stmt, ir, body),
        tags=tuple(stmt.record.tags),
    )


def _data_macro(ds: DataSpaceIR, ir: ComputationIR) -> DataMacro:
    rank = ds.rank or 0
    where = storage_of(ir, ds.name)
    if where is not None:
        buffer, exprs = where
        ts = tuple(c.name for c in coords(rank))
        extents = tuple(_extent(ds.name, d) for d in ds.shape or ())
        index = tuple(index_tree(e, ts) for e in exprs)
        return DataMacro(ds.name, rank, extents, buffer=buffer, index=index)
    if ds.shape is None:
        if rank > 1:
            raise CodegenError(
                f"data space {ds.name!r} has rank {rank} but no shape; declare its shape "
                "(add_data_space(..., shape=(...))) so accesses can be linearised"
            )
        return DataMacro(ds.name, rank, ())
    macro = f"spf_ds_{ds.name}" if ds.index else None
    offset = f"spf_ws_{ds.name}" if _is_workspace(ir, ds.name) else None
    extents = tuple(_extent(ds.name, d) for d in ds.shape)
    return DataMacro(ds.name, rank, extents, macro=macro, offset=offset)


def _extent(owner: str, d: int | str) -> str:
    text = str(d)
    if not all(ch.isalnum() or ch in "_+-* ()" for ch in text):
        raise CodegenError(
            f"data space or buffer {owner!r}: extent {text!r} cannot be printed in C; use +, - "
            "and * of parameters"
        )
    return text


# ----------------------------------------------------------------------------- Layer III
def _buffer_macro(b: BufferIR) -> DataMacro:
    return DataMacro(b.name, len(b.shape), tuple(_extent(b.name, d) for d in b.shape))


def _buffer_decl(b: BufferIR) -> BufferDecl:
    return BufferDecl(
        name=b.name,
        ctype=b.dtype,
        extents=tuple(_extent(b.name, d) for d in b.shape),
        scope=b.scope,
        argument=b.argument,
        partitions=tuple(Partition(dim, factor, kind) for dim, factor, kind in b.partitions),
        allocated_at=b.allocation is not None,
        zeroed=b.zeroed,
    )


def _users(ir: ComputationIR, buffer: str) -> set[str]:
    """Statements that access ``buffer`` (through a data space stored in it, or directly)."""
    spaces = {buffer} | {p.data_space for p in ir.placements if p.buffer == buffer}
    return {
        s.name
        for s in ir.parsed_stmts
        if any(d in spaces for d, _ in (*s.record.reads, *s.record.writes))
    }


def _place_allocations(ir: ComputationIR, body: Node, buffers: dict[str, BufferIR]) -> Node:
    """Wrap the body of the loop each ``allocate_at`` names in an :class:`Alloc` node
    (refused where the scanner split one iteration of it over several loops,
    :mod:`spf.codegen.alloc_pieces`)."""
    from spf.analysis.dependences import position_in
    from spf.codegen.alloc_pieces import check_split_iterations

    for b in buffers.values():
        if b.allocation is None:
            continue
        stmt_name, level = b.allocation
        if level is None:  # spf.ROOT: the whole function
            body = Alloc(b.name, body)
        else:
            try:
                stmt = ir.parsed_stmt(stmt_name)
                pos = position_in(stmt, level, ir.schedule_width)
            except SpfError as err:
                raise CodegenError(
                    f"buffer {b.name!r} is allocated at loop {level!r} of {stmt_name}, which "
                    f"no longer exists ({err}); call allocate_at again"
                ) from err
            peers = _loop_peers(ir, stmt, pos, _users(ir, b.name))
            body, count = _wrap_loops(body, pos, peers, b.name)
            if count == 0:  # pragma: no cover - a statement always has its loops
                raise CodegenError(f"buffer {b.name!r}: loop {level!r} of {stmt_name} not found")
            if count > 1:
                what = f"buffer {b.name!r} is allocated at loop {level!r} of {stmt_name}"
                check_split_iterations(ir, body, pos, peers, what)
        _check_users(ir, body, b.name)
    return body


def _loop_peers(ir: ComputationIR, stmt: ParsedStmt, pos: int, users: set[str]) -> set[str]:
    """``stmt`` and the buffer's users that share its loop at schedule position ``pos``
    (equal constants before it): the scanner may split that loop into several nests
    (e.g. one for parameters where only some of the statements run), each iteration of
    every piece gets the buffer fresh."""
    from spf.analysis.dependences import padded
    from spf.ir.reading import is_constant

    width = ir.schedule_width
    mine = padded(stmt, width).out_vars
    out = {stmt.name}
    for name in users:
        outs = padded(ir.parsed_stmt(name), width).out_vars
        if not is_constant(outs[pos]) and all(outs[k] == mine[k] for k in range(0, pos, 2)):
            out.add(name)
    return out


def _wrap_loops(n: Node, pos: int, stmts: set[str], buffer: str) -> tuple[Node, int]:
    if isinstance(n, Block):
        items, total = [], 0
        for item in n.items:
            new, k = _wrap_loops(item, pos, stmts, buffer)
            items.append(new)
            total += k
        return Block(tuple(items)), total
    if isinstance(n, For):
        if n.position == pos and any(isinstance(c, Call) and c.stmt in stmts for c in walk(n)):
            return replace(n, body=Alloc(buffer, n.body)), 1
        inner, k = _wrap_loops(n.body, pos, stmts, buffer)
        return replace(n, body=inner), k
    if isinstance(n, If):
        then, k1 = _wrap_loops(n.then, pos, stmts, buffer)
        orelse, k2 = (None, 0) if n.orelse is None else _wrap_loops(n.orelse, pos, stmts, buffer)
        return If(n.cond, then, orelse), k1 + k2
    if isinstance(n, (Bind, Alloc)):
        inner, k = _wrap_loops(n.body, pos, stmts, buffer)
        return replace(n, body=inner), k
    return n, 0


def _check_users(ir: ComputationIR, body: Node, buffer: str) -> None:
    users = _users(ir, buffer)
    inside: set[str] = set()
    outside: set[str] = set()

    def visit(n: Node, within: bool) -> None:
        if isinstance(n, Call):
            (inside if within else outside).add(n.stmt)
        elif isinstance(n, Block):
            for item in n.items:
                visit(item, within)
        elif isinstance(n, If):
            visit(n.then, within)
            if n.orelse is not None:
                visit(n.orelse, within)
        elif isinstance(n, Alloc):
            visit(n.body, within or n.buffer == buffer)
        elif isinstance(n, Merge):
            for b in n.bodies():
                visit(b, within)
        else:
            visit(n.body, within)

    visit(body, False)
    bad = sorted(users & outside)
    if bad:
        raise CodegenError(
            f"buffer {buffer!r} is allocated inside a loop (allocate_at) but statement "
            f"{bad[0]} uses it outside that loop; allocate it at an outer level or order "
            f"{bad[0]} into the loop"
        )


# ----------------------------------------------------------------------------- Layer IV
def _operation(stmt: OperationIR, ir: ComputationIR, its: tuple[str, ...]) -> Operation:
    ctype = "double"
    if stmt.target is not None:
        if stmt.target in ir.data_space_table:
            ctype = ir.data_space_table[stmt.target].ctype
        else:
            ctype = _buffers(ir)[stmt.target].dtype
    return Operation(
        kind=stmt.kind,
        buffer=stmt.target,
        index=tuple(index_tree(e, its) for e in stmt.index),
        count=index_tree(stmt.count, its),
        peer=None if stmt.peer is None else index_tree(stmt.peer, its),
        ctype=ctype,
        source_index=tuple(stmt.index),
        source_count=stmt.count,
    )


# ----------------------------------------------------------------------------- expressions
def _index_forms(indices: Sequence[str]) -> tuple[IndexForm, ...] | None:
    if not indices:
        return ()
    try:
        doc = parse_document(f"{{[{', '.join(indices)}]}}")
    except ParseError:
        return None
    return tuple(index_form(e) for e in doc.pieces[0].in_tuple)


def c_expr(text: str, params: Collection[str] = ()) -> str:
    """C text of an index expression in set syntax (``i % 2``, ``floor(i/4)``, ``N - 1``)
    whose names in ``params`` are macro parameters (:func:`index_tree`)."""
    return to_c(index_tree(text, params))


def index_tree(
    text: str, params: Collection[str] = (), values: Mapping[str, cx.Expr] | None = None
) -> cx.Expr:
    """An index expression in set syntax as a C tree; names in ``params`` are macro
    parameters, or, with ``values``, replaced by their value (a macro's expansion at a
    call). ``%`` and ``floor`` keep their mathematical meaning (plain C ``%`` and ``/`` only
    where the dividend is a name or an integer, i.e. a non-negative coordinate or extent)."""
    try:
        doc = parse_document(f"{{[{text}]}}")
    except ParseError as err:
        raise CodegenError(f"cannot print index expression {text!r} in C: {err.message}") from err
    (e,) = doc.pieces[0].in_tuple
    names: dict[str, cx.Expr] = {p: cx.Param(p) if values is None else values[p] for p in params}
    return _c(e, names)


def _c(e: ast.Expr, params: Mapping[str, cx.Expr]) -> cx.Expr:
    if isinstance(e, ast.Num):
        return cx.Num(int_literal(e.value))
    if isinstance(e, ast.Name):
        return params.get(e.name, cx.Name(e.name))
    if isinstance(e, ast.Neg):
        return cx.Unary("-", _c(e.operand, params))
    if isinstance(e, ast.Call):
        args = tuple(_c(a, params) for a in e.args)
        return cx.Call(f"spf_{e.name}" if e.name in ("min", "max") else e.name, args)
    if isinstance(e, ast.Floor):
        inner = e.operand
        if not (isinstance(inner, ast.BinOp) and inner.op == "/"):
            return _c(inner, params)
        num, den = _c(inner.left, params), _c(inner.right, params)
        if e.ceil:
            return cx.Unary("-", cx.Call("spf_floord", (cx.Unary("-", num), den)))
        if isinstance(inner.left, (ast.Name, ast.Num)):
            return cx.Binary("/", num, den)
        return cx.Call("spf_floord", (num, den))
    assert isinstance(e, ast.BinOp)
    left, right = _c(e.left, params), _c(e.right, params)
    if e.op == "%" and not isinstance(e.left, (ast.Name, ast.Num)):
        return cx.Binary("%", cx.Binary("+", cx.Binary("%", left, right), right), right)
    return cx.Binary(e.op, left, right)
