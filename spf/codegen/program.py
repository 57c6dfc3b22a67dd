"""What a printer needs, free of isl: the lowered form of a Computation.

``lower(comp)`` scans the schedule (the scanner uses isl) and collects everything printers
print: the signature, the loop tree, statement bodies rendered through access callbacks,
data-space extents and UF arities. Printers consume a ``Program`` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.clang import C_KEYWORDS
from spf.codegen.signature import Arg, Signature
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.loop_ast import Node
    from spf.computation.computation import Computation


@dataclass(frozen=True)
class StmtMacro:
    name: str
    params: tuple[str, ...]
    lines: tuple[str, ...]
    """The statement's C body, data spaces as ``A(i, j)`` and UF calls as ``col(k)``."""
    reduction: Reduction | None = None
    """Set when the statement is one accumulation ``y(...) op= e`` with ``e`` not reading y."""
    operation: Operation | None = None
    """Set for a Layer IV operation (``lines`` is then empty; printers print the operation)."""


@dataclass(frozen=True)
class Reduction:
    target: str
    """C text of the accumulated element (macro parameters as in ``lines``)."""
    op: str
    value: str
    ctype: str
    uses: frozenset[str]
    """The statement iterators the target's indices use."""


@dataclass(frozen=True)
class DataMacro:
    name: str
    rank: int
    extents: tuple[str, ...]
    """C expressions of the extents (row-major strides use all but the first)."""


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


@dataclass(frozen=True)
class Operation:
    """A Layer IV operation (``comp.send`` ...): its statement's ``Call`` nodes mean this."""

    kind: str
    """``"send"``, ``"receive"``, ``"barrier"``, ``"host_to_device"`` or ``"device_to_host"``."""
    buffer: str | None = None
    """The buffer or data space sent, received or copied (None for a barrier)."""
    index: tuple[str, ...] = ()
    """C expressions (over the operation's macro parameters) of the first element's index."""
    count: str = "1"
    """C expression of the number of elements."""
    peer: str | None = None
    """C expression of the destination (send) or source (receive) rank."""
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
    buffers: tuple[BufferDecl, ...] = ()
    """Layer III buffers (``add_buffer``); data spaces stored in them are remapped by their
    ``DataMacro``."""


def lower(comp: Computation, name: str | None = None) -> Program:
    """Scan ``comp`` and collect what printers need."""
    from spf.codegen.scan import Scanner

    fname = c_function_name(name or comp.name)
    if not fname.isidentifier():
        raise CodegenError(f"function name {fname!r} is not a C identifier")
    if not comp.stmts:
        raise CodegenError(f"computation {comp.name} has no statements to generate")
    from spf.codegen.verify import verify

    body = Scanner(comp).scan()
    verify(comp, body)
    return Program(
        signature=signature(comp, fname),
        body=body,
        stmts=tuple(_stmt_macro(s, comp) for s in comp.stmts),
        data=tuple(_data_macro(ds) for ds in comp.data_spaces.values() if ds.rank is not None),
        ufs=tuple((u.name, u.arity) for _, u in sorted(comp.ufs.items())),
        locals=tuple(_local(ds) for ds in comp.data_spaces.values() if ds.role == "local"),
    )


def _local(ds: object) -> tuple[str, str, str]:
    from spf.computation.data_space import DataSpace

    assert isinstance(ds, DataSpace)
    if ds.rank and ds.shape is None:
        raise CodegenError(
            f"local data space {ds.name!r} has rank {ds.rank} but no shape; declare its shape "
            "in the function Computation so the generated code can allocate it"
        )
    count = " * ".join(f"({d})" for d in ds.shape or ()) or "1"
    return ds.name, ds.ctype, count


C_RESERVED = C_KEYWORDS | {"main"}


def c_function_name(name: str) -> str:
    """``name``, or ``spf_<name>`` when C reserves it (a computation named ``main``)."""
    return f"spf_{name}" if name in C_RESERVED else name


def signature(comp: Computation, fname: str) -> Signature:
    """API.md section 7: parameters (sorted), UF arrays (sorted), data spaces in order."""
    written = {ds for s in comp.stmts for ds, _ in s.writes}
    args = [Arg(name=p, kind="param", ctype="int64_t") for p in sorted(comp.params)]
    for name, uf in sorted(comp.ufs.items()):
        ctype = "int64_t" if uf.dtype == "int64" else "int32_t"
        args.append(Arg(name=name, kind="uf", ctype=ctype, const=True, rank=uf.arity, uf=uf))
    for ds in comp.data_spaces.values():
        if ds.role == "local":
            continue
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
    return Signature(function=fname, args=tuple(args))


def _stmt_macro(stmt: object, comp: Computation) -> StmtMacro:
    from spf.computation.access import iterator_names
    from spf.computation.statement import Stmt
    from spf.sets import Set

    assert isinstance(stmt, Stmt)
    its = iterator_names(stmt.domain)
    formats = (
        lambda n, ix: f"{n}({', '.join(ix)})",
        lambda n, ix: f"{n}({', '.join(ix)})",
        {it: f"({it})" for it in its},
    )
    text = stmt.parsed.render_c(*formats)
    parts = stmt.parsed.reduction_parts(*formats)
    reduction = None
    if parts is not None:
        access, target, op, value = parts
        uses: set[str] = set()
        for idx in access.indices:
            uses |= Set(f"{{[_x]: _x = {idx}}}").params & set(its)
        ctype = comp.data_spaces[access.data_space].ctype
        reduction = Reduction(target, op, value, ctype, frozenset(uses))
    return StmtMacro(stmt.name, its, tuple(text.splitlines()), reduction)


def _data_macro(ds: object) -> DataMacro:
    from spf.computation.data_space import DataSpace

    assert isinstance(ds, DataSpace)
    rank = ds.rank or 0
    if ds.shape is None:
        if rank > 1:
            raise CodegenError(
                f"data space {ds.name!r} has rank {rank} but no shape; declare its shape "
                "(add_data_space(..., shape=(...))) so accesses can be linearised"
            )
        return DataMacro(ds.name, rank, ())
    extents = []
    for d in ds.shape:
        text = str(d)
        if not all(ch.isalnum() or ch in "_+-* ()" for ch in text):
            raise CodegenError(
                f"data space {ds.name!r}: extent {text!r} cannot be printed in C; use +, - "
                "and * of parameters"
            )
        extents.append(text)
    return DataMacro(ds.name, rank, tuple(extents))
