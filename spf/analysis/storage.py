"""Legality of data layouts: the memory-based conflicts that ``store_in`` adds.

A placement that puts several elements at one buffer location (``storage_fold``, ``i % 2``,
a projection, a scalar, two data spaces in one buffer) adds conflicts between accesses of
*different* elements at the *same* location. Two checks use them, both on the current
schedule:

- :func:`storage_dependences`: each such pair (one side a write) as a dependence ordered by
  the current schedule (``Dependence.storage``), so a loop that carries one cannot run in
  parallel (a scalar temporary in a parallel loop is refused unless the buffer is allocated
  inside that loop with ``allocate_at``).
- :func:`check_storage`: no write of another element may land between a write of an element
  and a read of it (the value would be overwritten while live): a fold smaller than the reuse
  distance is refused. A buffer ``allocate_at`` a loop is fresh in each iteration of that
  loop: conflicts across iterations do not exist, and a value may not flow across them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.analysis.dependences import (
    _constraint,
    _loop_name,
    _project,
    _Timing,
    padded,
    pair_names,
    position_in,
    runs_first_at_ties,
    same_element,
    same_rank,
)
from spf.errors import IllegalScheduleError, ScheduleError, SpfError
from spf.ir.dependence import Dependence
from spf.ir.reading import (
    buffer_of,
    is_constant,
    iterator_names,
    placement_of,
    placement_relation,
    storage_of,
)

if TYPE_CHECKING:
    from spf.ir import BufferIR, ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Relation, Set


@dataclass(frozen=True)
class _Acc:
    stmt: StmtReading
    kind: str
    """``"read"`` or ``"write"``."""
    space: str
    """The data space (or the buffer itself, for an operation on it)."""
    logical: Relation
    phys: Relation


def _buffer_accesses(ir: ComputationIR) -> dict[str, list[_Acc]]:
    placements = {p.data_space: p for p in ir.placements}
    out: dict[str, list[_Acc]] = {p.buffer: [] for p in placements.values()}
    for s in ir.parsed_stmts:
        for kind, accs in (("write", s.writes), ("read", s.reads)):
            for ds, rel in accs:
                p = placements.get(ds)
                if p is not None:
                    phys = placement_relation(ir, p).compose(rel)
                    out[p.buffer].append(_Acc(s, kind, ds, rel, phys))
                elif ds in out:
                    out[ds].append(_Acc(s, kind, ds, rel, rel))
    return out


def _buffer(ir: ComputationIR, name: str) -> BufferIR:
    found = buffer_of(ir, name)
    assert found is not None, f"placements and allocations name declared buffers ({name})"
    return found


def _scope(ir: ComputationIR, buffer: str) -> int | None:
    """The schedule position of the loop the buffer is allocated in (None: the function)."""
    b = _buffer(ir, buffer)
    if b.allocation is None:
        return None
    stmt, level = b.allocation
    if level is None:  # spf.ROOT
        return None
    try:
        return position_in(ir.parsed_stmt(stmt), level, ir.schedule_width)
    except SpfError as err:  # a later command renamed the loop (split, tile)
        raise ScheduleError(
            f"buffer {buffer!r} is allocated at loop {level!r} of {stmt} "
            f"(comp.buffer({buffer!r}).allocate_at({stmt!r}, {level!r})), which no longer "
            f"exists ({err}); call allocate_at again with one of its loops now"
        ) from None


def _times(ir: ComputationIR, stmt: StmtReading, names: list[str]) -> tuple[str, ...] | None:
    return padded(stmt, ir.schedule_width).as_function(names)


def _alias(
    ir: ComputationIR, buffer: str, a: _Acc, b: _Acc, xs: list[str], ys: list[str]
) -> Set | None:
    """Pairs ``[x, y]`` where ``a`` and ``b`` touch one location holding different elements
    (in one allocation of the buffer); None when there are none."""
    if a.phys.out_arity != b.phys.out_arity:
        return None
    if buffer in (a.space, b.space):
        return None  # an operation on the buffer itself moves what the data spaces hold
    loc = same_rank(
        ir,
        a.stmt,
        b.stmt,
        same_element(a.stmt, a.phys, b.stmt, b.phys, xs, ys),
        xs,
        ys,
        buffer,
    )
    pos = _scope(ir, buffer)
    if pos is not None:
        ta, tb = _times(ir, a.stmt, xs), _times(ir, b.stmt, ys)
        if ta is not None and tb is not None:
            loc = loc.intersect(
                _constraint(xs + ys, [f"{ta[k]} = {tb[k]}" for k in range(pos + 1)])
            )
    if loc.is_empty():
        return None
    if a.space != b.space:
        return loc
    fa, fb = a.logical.as_function(xs), b.logical.as_function(ys)
    if fa is None or fb is None:
        # an operation's region (a send, a host/device copy): different elements of it
        # share a location only when the placement does
        return None if _injective(ir, a.space) else loc  # else cannot tell: keep (sound)
    found: Set | None = None
    for ea, eb in zip(fa, fb, strict=True):
        for op in ("<", ">"):
            piece = loc.intersect(_constraint(xs + ys, [f"{ea} {op} {eb}"]))
            if not piece.is_empty():
                found = piece if found is None else found.union(piece)
    return found


def _injective(ir: ComputationIR, space: str) -> bool:
    """Whether the placement of ``space`` puts every element at a location of its own (a
    transpose, a shift; not a fold): elements at one location are then one element."""
    p = placement_of(ir, space)
    if p is None:
        return False
    rel = placement_relation(ir, p)
    return rel.inverse().compose(rel).as_function() is not None


_KIND = {("write", "read"): "flow", ("read", "write"): "anti", ("write", "write"): "output"}


def storage_dependences(ir: ComputationIR) -> list[Dependence]:
    """Conflicts the layout adds, ordered by the current schedule."""
    if not ir.placements:
        return []
    width = ir.schedule_width
    out: list[Dependence] = []
    for buffer, accs in _buffer_accesses(ir).items():
        for a in accs:
            for b in accs:
                kind = _KIND.get((a.kind, b.kind))
                if kind is None:
                    continue
                xs, ys = pair_names(a.stmt, b.stmt)
                alias = _alias(ir, buffer, a, b, xs, ys)
                if alias is None:
                    continue
                timing = _Timing(padded(a.stmt, width), padded(b.stmt, width), xs, ys)
                pieces = timing.levels(alias, "<")
                if not pieces:
                    continue
                pairs = pieces[0][1].union_all([p for _, p in pieces[1:]])
                levels = tuple(sorted(d for d, _ in pieces))
                names = [_loop_name(a.stmt, width, d) for d in levels]
                out.append(
                    Dependence(
                        kind=kind,
                        source=a.stmt.name,
                        sink=b.stmt.name,
                        data_space=buffer,
                        relation=pairs.as_relation(len(xs)),
                        carried_by=tuple(n for n in names if n is not None),
                        levels=levels,
                        storage=True,
                    )
                )
    return out


def _names(stmt: StmtReading, tag: str, taken: set[str]) -> list[str]:
    out = []
    for n in iterator_names(stmt.domain):
        new = f"{n}_{tag}"
        while new in taken:
            new += "_"
        taken.add(new)
        out.append(new)
    return out


def _lex(a: tuple[str, ...], b: tuple[str, ...], d: int) -> list[str]:
    """``a`` before ``b``, first differing at position ``d``."""
    return [f"{a[k]} = {b[k]}" for k in range(d)] + [f"{a[d]} < {b[d]}"]


def _before(
    ir: ComputationIR,
    sa: StmtReading,
    ta: tuple[str, ...],
    sb: StmtReading,
    tb: tuple[str, ...],
    start: int = 0,
) -> list[tuple[int | None, list[str]]]:
    """The ways an instance of ``sa`` (times ``ta``) runs before one of ``sb`` (``tb``),
    given equal times before position ``start``: ``(d, constraints)`` for the first
    position ``d`` where they differ, and ``(None, all equal)`` where ``sa`` comes first in
    statement order, which is how the interpreter and the generated code run instances of
    two statements at one time (the scan breaks such ties by statement order)."""
    out: list[tuple[int | None, list[str]]] = [
        (d, _lex(ta, tb, d)[start:]) for d in range(start, len(ta))
    ]
    if runs_first_at_ties(ir, sa, sb):
        out.append((None, [f"{ta[k]} = {tb[k]}" for k in range(start, len(ta))]))
    return out


def check_storage(ir: ComputationIR) -> None:
    """Raise ``IllegalScheduleError`` when the layout lets a write overwrite a live value."""
    placements = {p.data_space for p in ir.placements}
    if not placements:
        return
    for buffer, accs in _buffer_accesses(ir).items():
        writes = [a for a in accs if a.kind == "write" and a.space in placements]
        reads = [a for a in accs if a.kind == "read" and a.space in placements]
        _check_entry_values(ir, buffer, reads, accs)
        for r in reads:
            mine = [w for w in writes if w.space == r.space]
            for w2 in mine:
                _check_scope(ir, buffer, w2, r, mine)
                for w1 in writes:
                    _check_triple(ir, buffer, w1, w2, r)


def _check_entry_values(
    ir: ComputationIR, buffer: str, reads: list[_Acc], accs: list[_Acc]
) -> None:
    """What a statement reads before any statement writes that element is the data
    space's value on entry: the caller's input for a kernel argument, zero for a local
    (``add_local``). A layout must keep it:

    - an argument placed in memory of the function (a ``local``/``stack`` buffer,
      ``storage_fold``) is no longer passed in: its input is gone (``C(i, j) = C(i, j) * 2``
      would read zeros), refused;
    - a local's zero is gone where another element was written to the same location
      earlier in the same allocation (``t(i) += x(i)`` with ``t`` folded to one cell would
      accumulate every ``x``), refused.

    ``reads``: ``accs``' reads of placed data spaces (:func:`check_storage`'s)."""
    writes = [a for a in accs if a.kind == "write"]
    argument = _buffer(ir, buffer).argument
    taken = set(ir.params)
    for r in reads:
        ds = ir.data_space_table.get(r.space)
        if ds is None or ds.role not in ("data", "local") or (argument and ds.role == "data"):
            continue
        xr = _names(r.stmt, "r", taken)
        tr = _times(ir, r.stmt, xr)
        if tr is None:
            continue  # pragma: no cover - schedules are functions of the iterators
        mine = [w for w in writes if w.space == r.space]
        early = _rewritten(ir, r, mine, xr, tr, -1, taken)
        if ds.role == "data":
            bad = not _constraint(xr, []).intersect(r.stmt.domain).is_subset(early)
        else:
            bad = not _clobbered(ir, buffer, r, writes, xr, tr, taken).is_subset(early)
        if not bad:
            continue
        what = f"{r.space}({', '.join(r.logical.out_vars)}) in {r.stmt.name}{r.stmt.domain}"
        if ds.role == "data":
            raise IllegalScheduleError(
                f"illegal data layout: {r.stmt.name} reads elements of {r.space!r} that no "
                f"statement has written yet (its values on entry to the kernel: {what}), "
                f"but {r.space!r} is stored in buffer {buffer!r}, memory of the generated "
                f"function that holds no input: store it in a buffer of scope 'global' (a "
                f"kernel argument the caller fills) or leave {r.space!r} where it is"
            )
        raise IllegalScheduleError(
            f"illegal data layout: {r.stmt.name} reads elements of the local {r.space!r} that "
            f"no statement has written yet (zero: {what}), but buffer {buffer!r} holds "
            f"another element written earlier at that location; use a larger buffer or fold, "
            f"or write {r.space!r} before reading it"
        )


def _clobbered(
    ir: ComputationIR,
    buffer: str,
    r: _Acc,
    writes: list[_Acc],
    xr: list[str],
    tr: tuple[str, ...],
    taken: set[str],
) -> Set:
    """The instances of ``r`` (over ``xr``) whose location some write of another element
    wrote earlier in the same allocation of ``buffer``."""
    out = _constraint(xr, ["false"])
    for w in writes:
        xw = _names(w.stmt, "c", taken)
        tw = _times(ir, w.stmt, xw)
        pairs = _alias(ir, buffer, w, r, xw, xr)
        if pairs is None or tw is None:
            continue
        keep = list(range(len(xw), len(xw) + len(xr)))
        for _, earlier in _before(ir, w.stmt, tw, r.stmt, tr):
            piece = pairs.intersect(_constraint(xw + xr, earlier))
            if not piece.is_empty():
                out = out.union(_project(piece, keep, xr))
    return out


def _check_scope(ir: ComputationIR, buffer: str, w: _Acc, r: _Acc, writers: list[_Acc]) -> None:
    """A value must not flow between two allocations of its buffer: a read of an element
    written in an earlier allocation is refused unless the element is written again in the
    reader's allocation before the read (then the read sees that value: ``compute_at`` with a
    per-tile buffer recomputes a halo in every tile)."""
    pos = _scope(ir, buffer)
    if pos is None:
        return
    taken = set(ir.params)
    xw, xr = _names(w.stmt, "w", taken), _names(r.stmt, "r", taken)
    flow = same_element(w.stmt, w.logical, r.stmt, r.logical, xw, xr)
    tw, tr = _times(ir, w.stmt, xw), _times(ir, r.stmt, xr)
    if flow.is_empty() or tw is None or tr is None:
        return
    early = None
    for d in range(pos + 1):
        piece = flow.intersect(_constraint(xw + xr, _lex(tw, tr, d)))
        if not piece.is_empty():
            early = piece if early is None else early.union(piece)
    if early is None:
        return
    keep = list(range(len(xw), len(xw) + len(xr)))
    stale = _project(early, keep, xr)
    if not stale.is_subset(_rewritten(ir, r, writers, xr, tr, pos, taken)):
        loop = _loop_name(r.stmt, ir.schedule_width, pos) or f"position {pos}"
        raise IllegalScheduleError(
            f"illegal data layout: {r.stmt.name} reads {r.space!r} (stored in buffer "
            f"{buffer!r}, allocated inside loop {loop!r}) written by {w.stmt.name} in an "
            "earlier iteration of that loop, whose allocation is gone; allocate the buffer "
            "at an outer level"
        )


def _rewritten(
    ir: ComputationIR,
    r: _Acc,
    writers: list[_Acc],
    xr: list[str],
    tr: tuple[str, ...],
    pos: int,
    taken: set[str],
) -> Set:
    """The instances of ``r`` (over ``xr``) whose element some writer writes earlier in the
    same allocation (the same values of the schedule up to ``pos``)."""
    out = _constraint(xr, ["false"])
    for w in writers:
        xw = _names(w.stmt, "v", taken)
        tw = _times(ir, w.stmt, xw)
        if tw is None:
            continue
        pairs = same_element(w.stmt, w.logical, r.stmt, r.logical, xw, xr)
        same = [f"{tw[k]} = {tr[k]}" for k in range(pos + 1)]
        for _, earlier in _before(ir, w.stmt, tw, r.stmt, tr, pos + 1):
            piece = pairs.intersect(_constraint(xw + xr, same + earlier))
            if not piece.is_empty():
                keep = list(range(len(xw), len(xw) + len(xr)))
                out = out.union(_project(piece, keep, xr))
    return out


def same_allocation(
    ir: ComputationIR,
    space: str,
    src: StmtReading,
    snk: StmtReading,
    pairs: Set,
    xs: list[str],
    ys: list[str],
) -> Set:
    """Memory-based dependences through a buffer allocated inside a loop (``allocate_at``):
    each iteration of that loop has its own buffer, so instances of two statements inside the
    loop touch the same memory only in the same iteration (``pairs`` over ``xs + ys``
    restricted to equal schedule values up to the loop). A value never flows between
    allocations (:func:`check_storage` refuses such a layout). ``space`` is a data space or
    a buffer; pairs of statements not both inside the loop are kept (sound)."""
    where = storage_of(ir, space)
    buffer = space if buffer_of(ir, space) else (where[0] if where is not None else None)
    if buffer is None or buffer_of(ir, buffer) is None:
        return pairs
    pos = _scope(ir, buffer)
    if pos is None:
        return pairs
    ta, tb = _times(ir, src, xs), _times(ir, snk, ys)
    if ta is None or tb is None or not (_inside(ir, src, buffer) and _inside(ir, snk, buffer)):
        return pairs
    return pairs.intersect(_constraint(xs + ys, [f"{ta[k]} = {tb[k]}" for k in range(pos + 1)]))


def same_workspace_iteration(
    ir: ComputationIR,
    space: str,
    src: StmtReading,
    snk: StmtReading,
    pairs: Set,
    xs: list[str],
    ys: list[str],
) -> Set:
    """Dependences through a workspace (``stmt.workspace(name, loop)``): by its contract no
    iteration of the loop depends on what another one left in it, so instances of two
    statements inside the loop depend through it only in the same iteration. Pairs of
    statements not both inside the loop are kept (sound)."""
    found = next((w for w in ir.workspaces if w.name == space), None)
    if found is None:
        return pairs
    owner = ir.parsed_stmt(found.stmt)
    pos = position_in(owner, found.loop, ir.schedule_width)
    ta, tb = _times(ir, src, xs), _times(ir, snk, ys)
    if ta is None or tb is None:
        return pairs
    if not (_in_loop(ir, src, owner, pos) and _in_loop(ir, snk, owner, pos)):
        return pairs
    return pairs.intersect(_constraint(xs + ys, [f"{ta[k]} = {tb[k]}" for k in range(pos + 1)]))


def _in_loop(ir: ComputationIR, stmt: StmtReading, owner: StmtReading, pos: int) -> bool:
    """Whether ``stmt`` runs inside ``owner``'s loop at schedule position ``pos``."""
    width = ir.schedule_width
    mine, theirs = padded(stmt, width).out_vars, padded(owner, width).out_vars
    if is_constant(mine[pos]):
        return False
    return all(mine[k] == theirs[k] for k in range(0, pos, 2) if is_constant(theirs[k])) and all(
        not is_constant(mine[k]) for k in range(1, pos, 2)
    )


def _inside(ir: ComputationIR, stmt: StmtReading, buffer: str) -> bool:
    """Whether ``stmt`` runs inside the loop ``buffer`` is allocated in (the allocating
    statement's constants before it, and a loop at its position)."""
    b = _buffer(ir, buffer)
    assert b.allocation is not None
    owner = ir.parsed_stmt(b.allocation[0])
    pos = _scope(ir, buffer)
    assert pos is not None
    width = ir.schedule_width
    mine, theirs = padded(stmt, width).out_vars, padded(owner, width).out_vars
    if is_constant(mine[pos]):
        return False
    return all(mine[k] == theirs[k] for k in range(0, pos, 2) if is_constant(theirs[k])) and all(
        not is_constant(mine[k]) for k in range(1, pos, 2)
    )


def _check_triple(ir: ComputationIR, buffer: str, w1: _Acc, w2: _Acc, r: _Acc) -> None:
    """No ``w1`` (another element, same location) between ``w2`` and ``r`` (same element)."""
    taken = set(ir.params)
    x1, x3 = _names(w1.stmt, "o", taken), _names(r.stmt, "r", taken)
    x3b, x2 = _names(r.stmt, "q", taken), _names(w2.stmt, "w", taken)
    alias = _alias(ir, buffer, w1, r, x1, x3)
    if alias is None:
        return
    flow = same_element(r.stmt, r.logical, w2.stmt, w2.logical, x3b, x2)
    pos = _scope(ir, buffer)
    tq, tw = _times(ir, r.stmt, x3b), _times(ir, w2.stmt, x2)
    if pos is not None and tq is not None and tw is not None:
        # values flow only within one allocation (_check_scope): a write of the element in an
        # earlier allocation is not the value the read sees
        flow = flow.intersect(_constraint(x3b + x2, [f"{tq[k]} = {tw[k]}" for k in range(pos + 1)]))
    if flow.is_empty():
        return
    names = x1 + x3 + x3b + x2
    joined = alias.product(flow).intersect(
        _constraint(names, [f"{a} = {b}" for a, b in zip(x3, x3b, strict=True)])
    )
    keep = list(range(len(x1) + len(x3))) + list(range(len(x1) + 2 * len(x3), len(names)))
    triple = _project(joined, keep, x1 + x3 + x2)
    if triple.is_empty():
        return
    t1, t3, t2 = _times(ir, w1.stmt, x1), _times(ir, r.stmt, x3), _times(ir, w2.stmt, x2)
    if t1 is None or t2 is None or t3 is None:
        return
    width = ir.schedule_width
    all_names = x1 + x3 + x2
    for _, w2_first in _before(ir, w2.stmt, t2, w1.stmt, t1):
        first = triple.intersect(_constraint(all_names, w2_first))
        if first.is_empty():
            continue
        for d2, w1_first in _before(ir, w1.stmt, t1, r.stmt, t3):
            if first.intersect(_constraint(all_names, w1_first)).is_empty():
                continue
            p = placement_of(ir, r.space)
            assert p is not None  # r.space is stored in the buffer
            loop = None if d2 is None else _loop_name(r.stmt, width, d2)
            where = f" (across loop {loop!r})" if loop else ""
            raise IllegalScheduleError(
                f"illegal data layout: {w1.stmt.name} writes {w1.space!r} into buffer "
                f"{buffer!r} at a location that still holds the value of {r.space!r} that "
                f"{w2.stmt.name} wrote and {r.stmt.name} has yet to read{where}; the placement "
                f"{r.space}(...) -> {buffer}[{', '.join(p.exprs)}] reuses storage too early "
                "(e.g. storage_fold below the reuse distance): use a larger fold or another "
                "schedule"
            )
