"""Producer-consumer inlining of a temporary: PDFG ``inline(data_space)`` and
``Stmt.inline()``.

The temporary must be written by one statement that is a plain assignment
``$t$(i, j, ...) = e;`` indexed by its own iterators (one instance per element), and only
read elsewhere; nothing the producer reads may be written by another statement (so ``e``
has the same value wherever it is substituted). Each read ``t(f(x))`` in a consumer becomes
``(e)`` with the producer's iterators replaced by ``f(x)``, cast to ``t``'s element type
unless ``e`` has that type (the conversion the assignment made,
:mod:`spf.computation.value_types`); every read must fall inside the
elements the producer writes, after the producer writes them (no anti dependence from a
consumer to the producer). The producer and the data space disappear; consumers keep
their names, schedules and tags.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.computation.access import iterator_names
from spf.computation.statement import Stmt
from spf.computation.value_types import converted
from spf.errors import IllegalScheduleError, ScheduleError, UndeclaredError
from spf.ir.source.render_c import source_access

if TYPE_CHECKING:
    from spf.computation.computation import Computation


def inline_data_space(comp: Computation, name: str) -> list[str]:
    """Inline temporary ``name``; returns the names of the rewritten consumers."""
    if not isinstance(name, str) or name not in comp.data_spaces:
        raise UndeclaredError("data space", str(name), comp.data_spaces)
    _check_unnamed(comp, name)
    _check_not_called(comp, name)
    if name in comp.return_values:
        raise ScheduleError(
            f"inline({name!r}): {name} is a return value of {comp.name}, which a caller "
            f"reads after the call (append_computation returns it); keep {name!r}"
        )
    writers = [s for s in comp.stmts if any(ds == name for ds, _ in s.writes)]
    readers = [s for s in comp.stmts if any(ds == name for ds, _ in s.reads)]
    if len(writers) != 1:
        raise ScheduleError(
            f"inline({name!r}): needs exactly one statement writing it, found "
            f"{[s.name for s in writers] or 'none'}"
        )
    producer = writers[0]
    if producer in readers:
        raise ScheduleError(f"inline({name!r}): {producer.name} reads what it writes")
    if not readers:
        raise ScheduleError(
            f"inline({name!r}): nothing reads it, so inlining would drop what "
            f"{producer.name} computes"
        )
    its = list(iterator_names(producer.domain))
    found = producer.parsed.assignment_value(source_access, cx.Call, its)
    if found is None:
        raise ScheduleError(
            f"inline({name!r}): {producer.name} must be one plain assignment "
            f"'${name}$(...) = e;', got {producer.source.strip()!r}"
        )
    written, value = found
    value = converted(comp, name, value)  # what the assignment stores: t's type
    if sorted(written.indices) != sorted(its) or len(set(written.indices)) != len(its):
        raise ScheduleError(
            f"inline({name!r}): {producer.name} must write {name}(...) indexed by "
            f"its iterators {its}, got {name}({', '.join(written.indices)})"
        )
    _check_inputs_stable(comp, producer, name)
    slot = {it: written.indices.index(it) for it in its}
    for reader in readers:
        _check_covered(producer, reader, name)
    _check_read_after(comp, producer, readers, name)
    saved = [(r, r._source, r._parsed, r._reads, r._writes) for r in readers]
    try:
        for reader in readers:
            source = reader.parsed.render_c(
                lambda n, ix: (
                    cx.substitute(value, {it: ix[slot[it]] for it in its})
                    if n == name
                    else source_access(n, ix)
                ),
                cx.Call,
            )
            _replace_source(comp, reader, source)
    except BaseException:
        for r, src, parsed, reads, writes in saved:
            r._source, r._parsed, r._reads, r._writes = src, parsed, reads, writes
        raise
    comp._stmts.remove(producer)
    del comp._data[name]
    return [r.name for r in readers]


def inline_stmt(comp: Computation, stmt: Stmt) -> list[str]:
    """``stmt.inline()``: inline the one data space ``stmt`` writes (see
    :func:`inline_data_space`); returns the names of the rewritten consumers."""
    written = sorted({ds for ds, _ in stmt.writes})
    if len(written) != 1:
        raise ScheduleError(
            f"inline: statement {stmt.name} must write exactly one data space to be inlined, "
            f"writes {written or 'none'}"
        )
    readers = [s for s in comp.stmts if s is not stmt and any(d == written[0] for d, _ in s.reads)]
    if not readers:
        raise ScheduleError(
            f"inline: nothing reads {written[0]!r}, which {stmt.name} writes; inlining it "
            "would drop its result"
        )
    return inline_data_space(comp, written[0])


def _check_read_after(comp: Computation, producer: Stmt, readers: list[Stmt], name: str) -> None:
    """``IllegalScheduleError`` when a reader reads an element of ``name`` before the
    producer writes it (an anti dependence from the reader to the producer): it reads what
    the array held before, which the producer's value substituted in its place is not
    (a consumer ahead of the producer, or one reading ``t(i+1)`` in the producer's loop)."""
    names = {r.name for r in readers}
    for d in comp.dependences():
        if (
            d.kind == "anti"
            and d.data_space == name
            and d.source in names
            and d.sink == producer.name
        ):
            raise IllegalScheduleError(
                f"inline({name!r}): {d.source} reads elements of {name!r} before "
                f"{producer.name} writes them ({d}), so it reads what {name!r} held "
                f"before, not {producer.name}'s values; order {d.source} after "
                f"{producer.name} first, or keep {name!r}"
            )


def _check_inputs_stable(comp: Computation, producer: Stmt, name: str) -> None:
    inputs = {ds for ds, _ in producer.reads}
    for s in comp.stmts:
        if s is producer:
            continue
        clash = inputs & {ds for ds, _ in s.writes}
        if clash:
            raise IllegalScheduleError(
                f"inline({name!r}): {s.name} writes {sorted(clash)}, which {producer.name} "
                f"reads: the inlined value could change"
            )


def _check_covered(producer: Stmt, reader: Stmt, name: str) -> None:
    (write,) = [r for ds, r in producer.writes if ds == name]
    produced = write.apply(producer.domain)
    for ds, rel in reader.reads:
        if ds == name and not rel.apply(reader.domain).is_subset(produced):
            raise IllegalScheduleError(
                f"inline({name!r}): {reader.name} reads elements of {name} that "
                f"{producer.name} does not write ({rel.apply(reader.domain)} is not within "
                f"{produced})"
            )


def _check_not_called(comp: Computation, name: str) -> None:
    """A run-time index array read through its UF (``x(p(i))``, a bound ``p(i)``) cannot be
    inlined: only its ``$p$(...)`` reads would be replaced, and the UF calls left behind would
    read an input array in place of the values the producer computed."""
    for s in comp.stmts:
        relations = [s.domain, s.schedule, *(r for _, r in (*s.reads, *s.writes))]
        called = {c.split("(", 1)[0] for r in relations for c in r.uf_calls}
        called |= {uf for uf, _ in s.parsed.uf_calls}
        if name in called:
            raise ScheduleError(
                f"inline({name!r}): {s.name} reads the run-time index array {name} as "
                f"{name}(...) (a UF), which inlining cannot replace by the value "
                f"{name!r} holds; keep {name!r}"
            )


def _replace_source(comp: Computation, stmt: Stmt, source: str) -> None:
    """Re-parse ``stmt`` with a new source, keeping the object, name, schedules and tags."""
    index = comp._stmts.index(stmt)
    comp._stmts.remove(stmt)
    fresh = Stmt(source, stmt.domain, stmt.original_schedule, name=stmt.name)
    try:
        comp.add_stmt(fresh)  # validates against the computation's declarations
        comp._stmts.remove(fresh)
    finally:
        comp._stmts.insert(index, stmt)
    stmt._source, stmt._parsed = fresh._source, fresh._parsed
    stmt._reads, stmt._writes = fresh._reads, fresh._writes


def _check_unnamed(comp: Computation, name: str) -> None:
    """Inlining removes the data space: no operation (a copy, send or receive) may move it,
    and it may not be stored in a buffer (the buffer would be left behind)."""
    from spf.computation.operations import OperationStmt

    for s in comp.stmts:
        if isinstance(s, OperationStmt) and (
            s.target == name or any(ds == name for ds, _ in (*s.reads, *s.writes))
        ):
            raise ScheduleError(
                f"inline({name!r}): operation {s.name} ({s.describe()}) moves {name}, which "
                f"inlining removes; inline {name!r} before adding the operation, or keep it"
            )
    stored = comp.storage_of(name)
    if stored is not None:
        raise ScheduleError(
            f"inline({name!r}): {name} is stored in buffer {stored[0]!r} (store_in), which "
            f"inlining would leave behind; inline {name!r} before storing it, or keep it"
        )
