"""The frozen IR of a computation: values made of tuples, strings and numbers.

A :class:`ComputationIR` holds everything a :class:`~spf.Computation` holds (its data
spaces, UF declarations, assumptions, statements with their domains, accesses, schedules
and loop tags, Layer III buffers and placements, Layer IV operations, and the trace of
scheduling commands), with every set and relation stored as its text. Two snapshots are
equal exactly when their content is, :attr:`ComputationIR.fingerprint` is a stable hash of
that content, and ``str(ir)`` is a deterministic text (:mod:`spf.ir.printer`). Sets and
relations are parsed on demand and remembered per value (:meth:`ComputationIR.set_of`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.ir.reading import ParsedStmt
    from spf.schedule.trace import TraceEntry
    from spf.sets import UF, Relation, Set
    from spf.sets.facts import Fact
    from spf.sets.uf import Monotonic

Shape = tuple[int | str, ...]
Tags = tuple[tuple[str, tuple[str, ...]], ...]
"""Loop tags: ``(loop, (tag, ...))`` pairs sorted by loop name."""
Accesses = tuple[tuple[str, str], ...]
"""``(data space, access relation text)`` pairs, in the statement's order."""

SCOPES = ("global", "shared", "local", "constant", "stack")
"""Buffer scopes: ``global``/``constant`` buffers are kernel arguments, the others belong to
the generated function (``stack``: a C array; ``local``: allocated memory (per thread on a GPU);
``shared``: GPU shared memory, a ``stack`` array on the CPU)."""
ARGUMENT_SCOPES = ("global", "constant")


def _frozen(value: object) -> object:
    """``value`` with every list in it (at any depth of lists and tuples) a tuple: a record
    built by hand with lists (``StmtIR(reads=[...])``) holds no container that could change
    after its text and fingerprint were taken (``value`` itself when it holds none)."""
    if type(value) is tuple:
        for v in value:
            if type(v) is list or (type(v) is tuple and _frozen(v) is not v):
                return tuple(_frozen(x) for x in value)
        return value
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class _Record:
    """A frozen record whose sequences are tuples (lists given are made tuples)."""

    def __post_init__(self) -> None:
        names = _FIELD_NAMES.get(type(self))
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
            _FIELD_NAMES[type(self)] = names
        for name in names:
            value = getattr(self, name)
            frozen = _frozen(value)
            if frozen is not value:
                object.__setattr__(self, name, frozen)


@dataclass(frozen=True, kw_only=True)
class DataSpaceIR(_Record):
    """A declared data space (``add_data_space``, ``add_local``, ``add_parameter``)."""

    name: str
    type: str
    """C type text (``double``, ``int32_t``, ``double*`` for a by-reference parameter)."""
    shape: Shape | None
    rank: int | None
    role: str
    """``data``, ``local`` or ``parameter``."""
    index: bool = False
    """A run-time index array (its UF shares the name)."""
    private: str | None = None
    """The loop each of whose iterations has its own copy (``add_local(private=...)``)."""
    trusted: bool = False
    """A local index array whose values the statements keep in its range (``add_local(...,
    trusted=True)``): its reads are not range-checked."""

    @property
    def ctype(self) -> str:
        """The element's C type (:attr:`type` without a by-reference parameter's ``*``)."""
        return self.type.removesuffix("*")

    @property
    def dtype(self) -> str:
        """The numpy dtype name of the element type."""
        from spf.clang import NUMPY_OF_C

        return NUMPY_OF_C[self.ctype]


@dataclass(frozen=True, kw_only=True)
class UFIR(_Record):
    """An uninterpreted function (``declare_uf``) with its facts."""

    name: str
    arity: int
    domain: str | None
    range: str | None
    monotonic: Monotonic | None
    dtype: str
    out_arity: int = 1
    inverse: str | None = None


@dataclass(frozen=True, kw_only=True)
class StmtIR(_Record):
    """A statement: C source, domain, original and current schedule, accesses, tags."""

    name: str
    source: str
    domain: str
    schedule: str
    """The schedule it was added with (program order)."""
    current_schedule: str
    reads: Accesses
    writes: Accesses
    tags: Tags = ()


@dataclass(frozen=True, kw_only=True)
class OperationIR(_Record):
    """A Layer IV operation (send, receive, barrier, copy, wait, post) at ``position`` in
    the statement order."""

    name: str
    position: int
    kind: str
    domain: str
    target: str | None
    index: tuple[str, ...]
    count: str
    peer: str | None
    schedule: str
    current_schedule: str
    tags: Tags = ()
    placed: bool = False
    placement: tuple[int, tuple[tuple[str, str], ...]] | None = None
    """``(seq, ((statement, schedule text), ...))`` of its program order, or None."""
    reads: Accesses = ()
    """What it reads (a send: the region it sends; a copy: the whole buffer; a wait: its
    flag), as a statement's reads."""
    writes: Accesses = ()
    """What it writes (a receive: the region it receives; a post: its flag)."""


@dataclass(frozen=True, kw_only=True)
class BufferIR(_Record):
    """A Layer III buffer."""

    name: str
    shape: Shape
    dtype: str
    scope: str
    partitions: tuple[tuple[int, int, str], ...] = ()
    """``(dim, factor, kind)`` of each ``partition``."""
    implicit: bool = False
    zeroed: bool = True
    allocation: tuple[str, int | str | None] | None = None
    """``(statement, level)`` of ``allocate_at`` (level None: ``spf.ROOT``)."""

    @property
    def argument(self) -> bool:
        """A kernel argument (``global``/``constant``), not memory of the function."""
        return self.scope in ARGUMENT_SCOPES


@dataclass(frozen=True, kw_only=True)
class PlacementIR(_Record):
    """Where a data space lives (``store_in``, ``storage_fold``)."""

    data_space: str
    buffer: str
    stmt: str
    index: tuple[str, ...] | str
    exprs: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class WorkspaceIR(_Record):
    """``stmt.workspace(name, loop, fill)``."""

    name: str
    stmt: str
    loop: str | int
    fill: int | float


@dataclass(frozen=True, kw_only=True)
class ComputationIR:
    """A computation as an immutable value (``Computation.ir``; docs/ir.md).

    >>> import spf
    >>> ir = spf.kernels.gemm().ir
    >>> ir.name, [s.name for s in ir.stmts], ir.params
    ('gemm', ['s0'], ('K', 'M', 'N'))
    >>> ir == spf.Computation.from_ir(ir).ir
    True
    """

    name: str
    data_spaces: tuple[DataSpaceIR, ...] = ()
    ufs: tuple[UFIR, ...] = ()
    return_values: tuple[str, ...] = ()
    constants: tuple[tuple[str, str], ...] = ()
    """``(name, C type)`` of each ``add_constant``."""
    assumptions: tuple[str, ...] = ()
    """The texts of the facts added with ``assume``."""
    params: tuple[str, ...] = ()
    """The symbolic constants (sorted): derived from the rest, kept for readers."""
    stmts: tuple[StmtIR, ...] = ()
    """The statements with C source (operations are in :attr:`operations`)."""
    operations: tuple[OperationIR, ...] = ()
    buffers: tuple[BufferIR, ...] = ()
    placements: tuple[PlacementIR, ...] = ()
    workspaces: tuple[WorkspaceIR, ...] = ()
    trace: tuple[TraceEntry, ...] = ()
    """The scheduling commands applied, oldest first."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            from spf.errors import VerifyError

            raise VerifyError(
                f"ComputationIR: the name {self.name!r} is not a C identifier (it names the "
                "generated function); give a name such as 'spmv'"
            )
        _Record.__post_init__(self)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        """Equal exactly when the texts are (so equal IRs hash alike: ``0`` and ``0.0``,
        equal as Python values, print, and generate, differently)."""
        if not isinstance(other, ComputationIR):
            return NotImplemented
        return self is other or self.text == other.text

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __getstate__(self) -> dict[str, object]:
        """The fields only: the remembered text and parsed sets stay behind (a pickled IR,
        e.g. sent to a worker process, parses again where it is used)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)

    @cached_property
    def text(self) -> str:
        """The deterministic text (``str(ir)``), as golden files hold it. A field holding a
        value the text cannot print (``object()`` as a fill or a shape entry, in an IR built
        by hand) is a ``VerifyError`` naming it (the field checks run only then: an IR of a
        computation pays nothing for them)."""
        from spf.ir.printer import ir_text

        try:
            return ir_text(self)
        except (TypeError, ValueError):
            from spf.ir.check import check_fields

            check_fields(self)  # names the field holding the value
            raise

    @cached_property
    def fingerprint(self) -> str:
        """sha256 (hex) of :attr:`text`: equal for equal content, in every process."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    def stmt(self, name: str) -> StmtIR | OperationIR:
        """A statement or operation by name (``KeyError`` when there is none)."""
        for found in itertools.chain[StmtIR | OperationIR](self.stmts, self.operations):
            if found.name == name:
                return found
        raise KeyError(name)

    @cached_property
    def uf_decls(self) -> Mapping[str, UF]:
        """The UF declarations as :class:`spf.UF` objects (parsed once per value), read-only:
        the analysis of every equal IR is remembered by the fingerprint, so a declaration
        changed here would change what they all are told (``dict(ir.uf_decls)`` is a copy to
        change)."""
        from spf.ir.parsed import uf_decls

        return MappingProxyType(uf_decls(self))

    @cached_property
    def parsed_stmts(self) -> tuple[ParsedStmt, ...]:
        """The statements and operations with their sets parsed, in the order of
        ``comp.stmts`` (:mod:`spf.ir.reading`; remembered per value)."""
        from spf.ir.reading import parsed_stmts

        return parsed_stmts(self)

    def parsed_stmt(self, name: str) -> ParsedStmt:
        """The parsed statement or operation ``name`` (``UndeclaredError`` naming the
        statements when there is none)."""
        found = self._parsed_by_name.get(name)
        if found is None:
            from spf.errors import UndeclaredError

            names = [s.name for s in self.parsed_stmts]
            raise UndeclaredError("statement", str(name), names, hint=f"of {self.name}")
        return found

    @cached_property
    def _parsed_by_name(self) -> dict[str, ParsedStmt]:
        return {s.name: s for s in self.parsed_stmts}

    @cached_property
    def schedule_width(self) -> int:
        """The common schedule arity after padding (``comp.schedule_width()``)."""
        return max((s.schedule.out_arity for s in self.parsed_stmts), default=0)

    @cached_property
    def facts(self) -> tuple[Fact, ...]:
        """The assumptions as parsed facts (``comp.assumptions``)."""
        from spf.ir.reading import facts

        return facts(self)

    @cached_property
    def data_space_table(self) -> Mapping[str, DataSpaceIR]:
        """The data spaces by name (read-only, as :attr:`uf_decls`)."""
        return MappingProxyType({d.name: d for d in self.data_spaces})

    def set_of(self, text: str) -> Set:
        """``text`` parsed as a set with this computation's UFs (remembered)."""
        from spf.ir.parsed import parsed

        return parsed(self, text, "set")  # type: ignore[return-value]

    def relation_of(self, text: str) -> Relation:
        """``text`` parsed as a relation with this computation's UFs (remembered)."""
        from spf.ir.parsed import parsed

        return parsed(self, text, "relation")  # type: ignore[return-value]
