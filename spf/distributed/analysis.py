"""What ``comp.distribute_rows(loop, data)`` means for each access (API.md §19).

A statement is distributed when its domain has the loop's iterator. In a distributed
statement every access to a distributed data space is either

* **owned**: the distributed dimension is indexed by the loop variable itself (``y(i)``);
  each rank holds those entries, renumbered ``0 .. n_local - 1``; or
* **through a UF** (``x(j)`` with ``j = col(k)`` in the domain, or ``x(col(k))``): a *ghost
  read* when read, a *remote write* when it is an accumulation ``+=``/``-=``. The UF holds
  global indices; the inspector (:mod:`spf.distributed.inspector`) computes the image of the
  rank's iterations under it and renumbers it into a compact buffer (owned entries first,
  then the ghosts), as PETSc's ``MatSetUpMultiply_MPIAIJ`` does.

Data spaces that are not distributed are rank-local (the rank's nonzeros ``A(k)``) or, when
every index is a constant, replicated scalars: an accumulation into one over the distributed
loop (a dot product) is summed over the ranks with ``MPI_Allreduce``. Statements outside the
loop may touch only such scalars (every rank runs them); :mod:`spf.distributed.phases` orders
the statements into the phases the executor runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from spf.analysis.memo import HasIR, as_ir
from spf.analysis.reductions import families
from spf.distributed.local_rows import check_row_uses, row_vars
from spf.distributed.phases import Phase, split
from spf.distributed.statements import Statement, statement
from spf.errors import CodegenError
from spf.ir import ComputationIR, OperationIR

if TYPE_CHECKING:
    from collections.abc import Mapping

    from spf.distributed.distribution import Distribution

_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class GhostAccess:
    """One access through a UF to a distributed data space."""

    stmt: str
    data: str
    index: str
    """The index text in the statement (``"j"`` or ``"col(k)"``)."""
    uf: str
    """The index array holding the global indices (renumbered for the executor)."""
    write: bool
    shift: bool = False
    """The index is the loop variable plus the UF (DIA's ``x(p + offsets(d))`` with
    ``i = p``, BDIA's ``x(i + doff(s))``): the executor reads a window of the vector, and
    the UF's values are shifted by the rank's first row minus the window's start."""


@dataclass(frozen=True)
class Layout:
    """The result of the analysis: what the inspector and the executor need."""

    loop: str
    stmts: tuple[str, ...]
    owned: tuple[str, ...]
    """Distributed data spaces indexed by the loop variable only (never through a UF)."""
    ghost_reads: tuple[str, ...]
    remote_writes: tuple[str, ...]
    accesses: tuple[GhostAccess, ...]
    reductions: tuple[str, ...]
    """Replicated data spaces accumulated over the distributed loop (summed over ranks)."""
    row_params: tuple[str, ...]
    """Parameters that are the extent of the loop / of owned dimensions: a rank passes the
    global value, its local arrays have its share."""
    extent: dict[str, str]
    """Each distributed data space's extent (a parameter) in its distributed dimension."""
    renumbered: tuple[str, ...]
    """The UFs whose global indices the executor reads through the local renumbering."""
    bound: str | None = None
    """The parameter ``N`` of ``loop < N`` (the loop's extent)."""
    phases: tuple[Phase, ...] = ()
    """The statements in executor order, split where the ranks must combine (phases.py)."""
    copy_back: tuple[str, ...] = ()
    """Vectors read through an index array that later statements write (their own rows):
    the executor copies the entries rows with ghosts wrote in the compact buffer back to the
    caller's array at the end (rows without ghosts write the caller's array itself)."""
    shifted: tuple[str, ...] = ()
    """Ghost-read vectors read at the loop variable plus a UF (:attr:`GhostAccess.shift`)."""
    block: dict[str, int] = field(default_factory=dict)
    """Vectors of blocks (BCSR's ``y[r*NB]``, ``x[c*MB]``): entries per block; the extent,
    the partition, the marks and the renumbering count blocks (``NB``), the exchange moves
    their entries. Absent: 1."""
    rowwise: tuple[str, ...] = ()
    """Ghost-read vectors also indexed by the loop variable (CG's ``p(i)``): rows with
    ghosts touch their own entries in the compact buffer, so those entries are copied in,
    and, for a vector in ``copy_back``, back out at the end (only those rows')."""


def _uf_of(stmt: Statement, index: str, ufs: Mapping[str, object]) -> str | None:
    """The UF that gives ``index``: ``col`` for ``col(k)``, or for an iterator ``j`` with
    ``j = col(k)`` in the domain."""
    call = _CALL.match(index)
    if call and call.group(1) in ufs:
        return call.group(1)
    if index.strip().isidentifier():
        var = re.escape(index.strip())
        found = re.search(rf"(?<![\w]){var} = ([A-Za-z_]\w*)\(", str(stmt.domain))
        if found and found.group(1) in ufs:
            return found.group(1)
    return None


def _equal_to(domain: str, var: str) -> str | None:
    """The expression ``var`` equals in ``domain`` (``var = <expr>`` up to ``&&`` or ``}``)."""
    found = re.search(rf"(?<![\w]){re.escape(var)} = ([^&}}]+)", domain)
    return found.group(1).strip() if found else None


def _terms(expr: str) -> list[str]:
    return sorted(t.replace(" ", "") for t in expr.split(" + "))


def _shifted_uf(stmt: Statement, index: str, loop: str, ufs: Mapping[str, object]) -> str | None:
    """The UF ``u`` of an index that is the loop variable plus ``u(...)`` (``j`` with
    ``j = p + offsets(d)`` and ``i = p``, or ``j = 4*b + r + doff(s)`` and ``i = 4*b + r``);
    None otherwise."""
    domain = str(stmt.domain)
    name = index.strip()
    expr = _equal_to(domain, name) if name.isidentifier() else name
    if expr is None:
        return None
    row = _equal_to(domain, loop)
    rows = {loop, *([row] if row else [])}
    terms = _terms(expr)
    calls = [t for t in terms if (c := _CALL.match(t)) and c.group(1) in ufs]
    if len(calls) != 1:
        return None
    rest = [t for t in terms if t != calls[0]]
    if not any(rest == _terms(r) for r in rows):
        return None
    found = _CALL.match(calls[0])
    return found.group(1) if found else None


def extent_of(extent: object) -> tuple[str, int]:
    """``(parameter, entries per block)`` of a distributed extent: ``N`` (1) or ``r*NB``,
    ``NB*r`` (``r``, a vector of ``NB`` blocks); CodegenError otherwise."""
    text = str(extent).replace(" ", "")
    if text.isidentifier():
        return text, 1
    found = re.fullmatch(r"(\d+)\*([A-Za-z_]\w*)|([A-Za-z_]\w*)\*(\d+)", text)
    if found is None:
        raise CodegenError(
            f"distribute_rows: the extent {extent!r} is not a parameter (N) or a number of "
            "blocks times their size (r*NB); declare it so"
        )
    if found.group(1):
        return found.group(2), int(found.group(1))
    return found.group(3), int(found.group(4))


def _block_index(stmt: Statement, data: str, index: str, size: int) -> str:
    """The block of an access to a vector of blocks of ``size``: ``v`` for an index
    ``size*v + t`` with ``0 <= t < size`` (directly, or through ``i = size*v + t`` in the
    domain); CodegenError otherwise."""
    domain = str(stmt.domain)
    name = index.strip()
    expr = (_equal_to(domain, name) if name.isidentifier() else None) or name
    terms = _terms(expr)
    scaled = [
        m.group(1) or m.group(2)
        for t in terms
        if (m := re.fullmatch(rf"{size}\*(.+)|(.+)\*{size}", t))
    ]
    rest = [t for t in terms if not re.fullmatch(rf"{size}\*(.+)|(.+)\*{size}", t)]
    if len(scaled) == 1 and len(rest) == 1 and rest[0].isidentifier():
        t = re.escape(rest[0])
        low = re.search(rf"0 <= {t}(?![\w(])", domain)
        high = re.search(rf"(?<![\w]){t} (<= {size - 1}|< {size})(?![\w])", domain)
        if low and high:
            return scaled[0]
    raise CodegenError(
        f"distribute_rows: {stmt.name} accesses {data}({index}); {data} is a vector of blocks "
        f"of {size}, so its index must be {size}*b + t with 0 <= t < {size} (b the loop "
        "variable or an index array's value)"
    )


def _is_reduction(text: str, end: int) -> bool:
    rest = text[end:].lstrip()
    return rest.startswith(("+=", "-="))


def analyse(comp: ComputationIR | HasIR, dist: Distribution) -> Layout:
    """Classify the accesses of ``comp`` (a computation's IR, or a computation, for its
    IR) under ``dist``; CodegenError names what cannot be distributed and what to change."""
    ir = as_ir(comp, "distribute_rows")
    loop = dist.loop
    spaces = ir.data_space_table
    distributed = dict(dist.data)
    every, replicated = _distributed_stmts(ir, loop, distributed)
    stmts = [s for s in every if s.name not in replicated]
    for s in stmts:
        _check_loop_not_an_index_value(s, loop, ir.uf_decls, dist.local)
    extent: dict[str, str] = {}
    block: dict[str, int] = {}
    for name, dim in distributed.items():
        extent[name], size = extent_of((spaces[name].shape or ())[dim])
        if size > 1:
            block[name] = size
    found = _Found()
    for s in stmts:
        _classify(ir, s, loop, distributed, extent, found, block)
    accesses = found.accesses
    ghost_reads = sorted({g.data for g in accesses if not g.write})
    shifted = sorted({g.data for g in accesses if g.shift})
    for name in shifted:
        if any(g.data == name and not g.shift for g in accesses):
            raise CodegenError(
                f"distribute_rows: {name} is read both at the loop variable plus an index array "
                "and through an index array alone; read it one way"
            )
    remote_writes = sorted({g.data for g in accesses if g.write})
    copy_back = _check_vectors(stmts, ghost_reads, remote_writes, found.owned, distributed, loop)
    phases = split(every, replicated, found.reductions, accesses)
    owned = found.owned - set(ghost_reads) - set(remote_writes)
    found.row_params |= {extent[name] for name in owned}
    _check_renumbering(stmts, accesses)
    for name in (*ghost_reads, *remote_writes):
        if extent[name] in found.row_params:
            raise CodegenError(
                f"distribute_rows: parameter {extent[name]} is both the extent of loop {loop} "
                f"and of {name}, which is accessed through an index array; declare {name} "
                "with its own extent parameter (e.g. M), passed the same value"
            )
    bound = _loop_bound(ir, stmts, loop)
    if bound is not None:
        found.row_params.add(bound)
    check_row_uses(every, loop, found.row_params, ir.uf_decls)
    return Layout(
        loop=loop,
        stmts=tuple(s.name for s in stmts),
        owned=tuple(sorted(owned)),
        ghost_reads=tuple(ghost_reads),
        remote_writes=tuple(remote_writes),
        accesses=tuple(accesses),
        reductions=tuple(sorted(found.reductions)),
        row_params=tuple(sorted(found.row_params)),
        extent=extent,
        renumbered=tuple(sorted({g.uf for g in accesses})),
        bound=bound,
        phases=phases,
        copy_back=copy_back,
        shifted=tuple(shifted),
        block=block,
        rowwise=tuple(x for x in ghost_reads if x in found.owned),
    )


@dataclass
class _Found:
    owned: set[str] = field(default_factory=set)
    accesses: list[GhostAccess] = field(default_factory=list)
    reductions: set[str] = field(default_factory=set)
    row_params: set[str] = field(default_factory=set)

    def add(self, g: GhostAccess) -> None:
        for n, h in enumerate(self.accesses):
            if (h.stmt, h.data, h.index) == (g.stmt, g.data, g.index):
                self.accesses[n] = GhostAccess(
                    g.stmt, g.data, g.index, g.uf, g.write or h.write, g.shift
                )
                return
        self.accesses.append(g)


def _check_loop_not_an_index_value(
    s: Statement, loop: str, ufs: Mapping[str, object], local: tuple[str, ...]
) -> None:
    """CodegenError when the statement's domain gives the loop's variable as an index
    array's value (``i = perm(p)``): each rank runs its own rows numbered from 0 and would
    read the array's global rows as local ones, running other ranks' iterations (and
    leaving some of its own), silently. ``local`` arrays hold local rows (SELL's ``perm``
    as ``spf.mpi.scatter`` packs it)."""
    expr = _equal_to(str(s.domain), loop)
    if expr is None:
        return
    called = [m.group(1) for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", expr)]
    arrays = [name for name in called if name in ufs and name not in local]
    if arrays:
        raise CodegenError(
            f"distribute_rows({loop!r}): in {s.name}, the loop variable {loop} is the value "
            f"of index array {arrays[0]} ({loop} = {expr}); each rank runs its own rows "
            f"numbered from 0 and would read {arrays[0]}'s global rows as its local ones, "
            f"running other ranks' iterations; distribute a loop that enumerates the rows "
            f"({loop} bounded by 0 <= {loop} < N, the index array read in the statement), or "
            "for SELL use spf.mpi.spmv(SELL(C, sigma)) with spf.mpi.scatter, which packs perm "
            "with each rank's local rows"
        )


def _distributed_stmts(
    ir: ComputationIR, loop: str, distributed: dict[str, int]
) -> tuple[list[Statement], set[str]]:
    """The statements in the distributed loop, and the replicated ones (outside it, only
    scalars: every rank runs them on the same values)."""
    stmts: list[Statement] = []
    replicated: set[str] = set()
    for p in ir.parsed_stmts:
        if isinstance(p.record, OperationIR):
            raise CodegenError(
                f"distribute_rows: {p.name} is a {p.record.kind} operation; the generated "
                "exchange replaces send/receive, so remove it"
            )
        s = statement(ir, p)
        if loop in s.domain.tuple_vars:
            stmts.append(s)
            continue
        accesses = (*s.parsed.reads, *s.parsed.writes)
        if any(a.data_space in distributed or not _constant(a.indices) for a in accesses):
            raise CodegenError(
                f"distribute_rows({loop!r}): statement {s.name} is not inside loop {loop} and "
                "touches arrays, so no rank would own it; put it in the distributed loop, or "
                "keep statements outside it to scalars (every rank runs those)"
            )
        replicated.add(s.name)
        stmts.append(s)
    return stmts, replicated


def _constant(indices: tuple[str, ...]) -> bool:
    return all(_WORD.search(i) is None for i in indices)


def _classify(
    ir: ComputationIR,
    s: Statement,
    loop: str,
    distributed: dict[str, int],
    extent: dict[str, str],
    found: _Found,
    block: dict[str, int] | None = None,
) -> None:
    parsed = s.parsed
    blocks = block or {}
    writes = {(a.data_space, a.indices) for a in parsed.writes}
    reduced = {(a.data_space, a.indices) for a in parsed.reductions}
    for a in (*parsed.reads, *parsed.writes):
        written = (a.data_space, a.indices) in writes
        if a.data_space not in distributed:
            constant = all(_WORD.search(i) is None for i in a.indices)
            if written and not constant:
                _check_rank_local(ir, s, a.data_space, a.indices, loop)
            if constant and written:
                if (a.data_space, a.indices) not in reduced:
                    raise CodegenError(
                        f"distribute_rows: {s.name} assigns the replicated {a.data_space} "
                        f"inside the distributed loop {loop}; only accumulations (+=, -=) "
                        "into it are combined across ranks"
                    )
                _check_sum(s, a.data_space, loop)
                found.reductions.add(a.data_space)
            continue
        index = a.indices[distributed[a.data_space]]
        if a.data_space in blocks:
            index = _block_index(s, a.data_space, index, blocks[a.data_space])
        if index.strip() == loop:
            found.owned.add(a.data_space)
            continue
        ufs = ir.uf_decls
        uf = _uf_of(s, index, ufs)
        shift = None if uf is not None else _shifted_uf(s, index, loop, ufs)
        if shift is not None:
            if written:
                raise CodegenError(
                    f"distribute_rows: {s.name} writes {a.data_space}({index}) at the loop "
                    f"variable plus index array {shift}; only reads are exchanged that way"
                )
            found.add(GhostAccess(s.name, a.data_space, index, shift, False, True))
            continue
        if uf is None:
            raise CodegenError(
                f"distribute_rows: {s.name} accesses {a.data_space}({', '.join(a.indices)}); "
                f"a distributed dimension is indexed by the loop variable {loop} or through "
                "an index array (x(col(k)), or x(j) with j = col(k)); a stencil halo "
                "(i + 1) is comp.send/comp.receive's job"
            )
        if written and not _is_reduction(parsed.text, a.span[1]):
            raise CodegenError(
                f"distribute_rows: {s.name} assigns {a.data_space}({index}) through index "
                f"array {uf}; a write to another rank's entry must be an accumulation "
                "(+= or -=), summed at its owner"
            )
        found.add(GhostAccess(s.name, a.data_space, index, uf, written))


def _check_rank_local(
    ir: ComputationIR, s: Statement, name: str, indices: tuple[str, ...], loop: str
) -> None:
    """A data space that is not distributed is the rank's own (``A(k)``, its nonzeros): a
    write into it at an index that depends on no row (``d(t) += x(i) * w(t)``, ``s(N-1)``)
    would leave each rank with its own rows' part of what one process computes, so it is
    refused (only scalars at constant indices are summed over the ranks)."""
    rows = row_vars(s, loop, ir.uf_decls)
    used = {w for i in indices for w in _WORD.findall(i)} & set(s.domain.tuple_vars)
    if rows is None or used & rows:
        return
    raise CodegenError(
        f"distribute_rows: {s.name} writes {name}({', '.join(indices)}), which is not "
        f"distributed, at an index that does not depend on the rows of loop {loop}; each rank "
        f"would hold only its own rows' part of it (only accumulations into scalars at "
        f"constant indices, s(), are summed over the ranks): accumulate into scalars, or "
        f"distribute {name}"
    )


_FAMILY_NAMES = {"*": "a product (*=, /=)", "max": "a max", "min": "a min"}


def _check_sum(s: Statement, name: str, loop: str) -> None:
    """An accumulation into a replicated scalar is combined over the ranks as a sum
    (``MPI_Allreduce`` with ``MPI_SUM`` of each rank's partial sum, started from zero), so
    it must be one: CodegenError for a max, min or product (a wrong result otherwise)."""
    kinds = families(s.parsed, name) - {"+"}
    if kinds:
        what = ", ".join(sorted(_FAMILY_NAMES.get(k, "an assignment") for k in kinds))
        raise CodegenError(
            f"distribute_rows: {s.name} accumulates into the replicated {name} with {what} "
            f"inside the distributed loop {loop}; only sums (+=, -=, or {name} = {name} + e) "
            "are combined across ranks: compute the max, min or product over the rows in a "
            "distributed vector and combine it outside (e.g. comm.allreduce)"
        )


def _check_vectors(
    stmts: list[Statement],
    ghost_reads: list[str],
    remote_writes: list[str],
    owned: set[str],
    distributed: dict[str, int],
    loop: str,
) -> tuple[str, ...]:
    """The ghost-read vectors that are written (by their own rows only); CodegenError for
    the combinations the exchange cannot serve."""
    written: set[str] = set()
    for name in ghost_reads:
        writes = [(s, a) for s in stmts for a in s.parsed.writes if a.data_space == name]
        if name in remote_writes or any(
            a.indices[distributed[name]].strip() != loop for _, a in writes
        ):
            raise CodegenError(
                f"distribute_rows: {name} is read through an index array and written through "
                "one in the same computation; ghost values would be stale (a Gauss-Seidel "
                "sweep is not distributed this way): write a new vector instead"
            )
        if writes:
            written.add(name)
    for name in remote_writes:
        if name in owned:
            raise CodegenError(
                f"distribute_rows: {name} is accumulated through an index array and also "
                "accessed directly; keep the accumulated vector for that statement alone"
            )
    return tuple(sorted(written))


def _loop_bound(ir: ComputationIR, stmts: list[Statement], loop: str) -> str | None:
    """The parameter ``N`` of ``loop < N`` in the domains (None when there is none)."""
    for s in stmts:
        found = re.search(rf"(?<![\w]){re.escape(loop)} < ([A-Za-z_]\w*)(?![\w(])", str(s.domain))
        if found and found.group(1) in ir.params:
            return found.group(1)
    return None


def _check_renumbering(stmts: list[Statement], accesses: list[GhostAccess]) -> None:
    """A renumbered UF must index only its distributed data space (its other uses would read
    local numbers as global ones)."""
    by_uf: dict[str, str] = {}
    for g in accesses:
        other = by_uf.setdefault(g.uf, g.data)
        if other != g.data:
            raise CodegenError(
                f"distribute_rows: index array {g.uf} indexes both {other} and {g.data}; each "
                "distributed vector needs its own index array (or the same partition)"
            )
    ghost = {(g.stmt, g.data) for g in accesses}
    for s in stmts:
        parsed = s.parsed
        for a in (*parsed.reads, *parsed.writes):
            for pos, index in enumerate(a.indices):
                names = set(_WORD.findall(index))
                for uf, data in by_uf.items():
                    via = {g.index for g in accesses if g.uf == uf and g.stmt == s.name}
                    if uf not in names and not names & via:
                        continue
                    if a.data_space == data and (s.name, data) in ghost:
                        continue  # the access itself (of a block vector: b*size + t)
                    raise CodegenError(
                        f"distribute_rows: {s.name} uses index array {uf} in "
                        f"{a.data_space}({', '.join(a.indices)}) (index {pos}); its values are "
                        f"renumbered for {data}'s ghost buffer, so use it only to index {data}"
                    )


__all__ = ["GhostAccess", "Layout", "analyse", "extent_of"]
