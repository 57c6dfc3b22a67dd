"""Part-ordered copies of a wavefront's row segments: which arrays a plan may copy, and the
executor that reads the copies.

A coarse executor (``method="coarse"``/``"auto"``) runs row ``i = order(pos)`` at position
``pos``. When a row's inner loop walks a *segment* ``P(i) <= k < P(i + 1)`` of a pointer UF
``P`` (CSR's ``rowptr``) and reads ``col(k)`` and ``L(k)``, the rows of one part lie where the
matrix keeps them: on 2-D Poisson a coarse level's pieces lie a grid row apart, and every
piece opens fresh streams of ``rowptr``, ``col`` and ``L``. A plan with copies holds the
segments in position order (:mod:`spf.runtime.copies`): ``P_part(pos)`` the prefix sums of
the rows' lengths in position order, ``col_part`` and ``L_part`` the entries of each row
moved to ``P_part(pos) .. P_part(pos + 1)``, so that a thread streams through its parts.

:func:`find_copies` finds, in the executor's IR, the pointer UFs ``P`` whose every use in a
wavefront statement bounds an iterator ``k`` by ``P(i)`` and ``P(i + 1)`` (a *segment
iterator*: ``P(i) <= k``, ``k < P(i + 1) - c``, ``k <= P(i + 1) - c``, or pinned to
``k = P(i + 1) - c`` or ``k = P(i) + c``), and the UFs and data spaces read at ``k`` alone.
Moving a row's segment keeps each ``k``'s offset from the row's start, so a copy read at
``k' = k - P(i) + P_part(pos)`` holds what the original held at ``k``: the same operations on
the same values in the same order, the same bits. A pinned ``k`` lies inside its row only
when the row is long enough (``k = P(i + 1) - 1`` needs one entry: a solve's diagonal), so
each pointer records the least row length it needs, which the plan checks before it copies.
Anything else that reads a segment iterator (``k`` in arithmetic, a data space written
through ``k``, a union of pieces) leaves the loop without copies: correct, not faster.

:func:`copy_executor` rewrites the executor's wavefront statements to read the copies.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.ir import build

if TYPE_CHECKING:
    from spf.analysis.executor import WavefrontNames
    from spf.ir import ComputationIR, StmtIR

_DOMAIN = re.compile(r"^\{\[(.*?)\](?: : (.*))?\}$")
_ACCESS = re.compile(r"^\{\[.*\] -> \[(\w+)\]\}$")
_CALL = r"(\$?\w+\$?)\((\w+)\)"


@dataclass(frozen=True)
class Segment:
    """A pointer UF whose segments the plan copies: ``name`` (``rowptr``), the copy's name
    (indexed by position), the least row length the statements need (``k = P(i + 1) - c``
    needs ``c``), and the UFs and data spaces read at its segment iterators: (original,
    copy) pairs."""

    pointer: str
    copy: str
    need: int
    ufs: tuple[tuple[str, str], ...]
    data: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CopySpec:
    """The segments of one wavefront loop that a plan may copy (:func:`find_copies`)."""

    segments: tuple[Segment, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The original arrays copied (pointers, UFs, data spaces)."""
        out: list[str] = []
        for s in self.segments:
            out += [s.pointer, *(u for u, _ in s.ufs), *(d for d, _ in s.data)]
        return tuple(out)

    @property
    def copies(self) -> tuple[str, ...]:
        """The executor's names of the copies (arguments a plan supplies)."""
        out: list[str] = []
        for s in self.segments:
            out += [s.copy, *(c for _, c in s.ufs), *(c for _, c in s.data)]
        return tuple(out)


class _NoCopiesError(Exception):
    """A use of a pointer or segment iterator that copies would not keep."""


def _segment_bounds(
    constraints: list[str], var: str, pointers: set[str]
) -> tuple[dict[str, str], dict[str, int], list[str]]:
    """(segment iterator -> its pointer, pointer -> least row length needed, the constraints
    that do not name a pointer) of one statement; :class:`_NoCopiesError` on any other use of a
    pointer."""
    low: dict[str, str] = {}
    high: dict[str, str] = {}
    pinned: dict[str, str] = {}
    need: dict[str, int] = {}
    rest = []
    v = re.escape(var)
    for c in constraints:
        named = [p for p in pointers if re.search(rf"\b{re.escape(p)}\(", c)]
        if not named:
            rest.append(c)
            continue
        if len(named) > 1:
            raise _NoCopiesError(c)
        p = re.escape(named[0])
        start, end = rf"{p}\({v}\)", rf"{p}\({v} \+ 1\)"
        if m := re.fullmatch(rf"{start} <= (\w+)", c):
            low[m.group(1)] = named[0]
        elif m := _upper(c, end):
            high[m.group(1)] = named[0]
        elif (m := re.fullmatch(rf"(\w+) = {end} - (\d+)", c)) and int(m.group(2)) >= 1:
            pinned[m.group(1)] = named[0]
            need[named[0]] = max(need.get(named[0], 0), int(m.group(2)))
        elif m := re.fullmatch(rf"(\w+) = {start}(?: \+ (\d+))?", c):
            pinned[m.group(1)] = named[0]
            need[named[0]] = max(need.get(named[0], 0), int(m.group(2) or 0) + 1)
        else:
            raise _NoCopiesError(c)
    its = dict(pinned)
    for k, p in low.items():
        if high.get(k) == p and k not in its:
            its[k] = p
    if set(low) - set(its) or set(high) - set(its):
        raise _NoCopiesError("a one-sided bound")
    return its, need, rest


def _upper(c: str, end: str) -> re.Match[str] | None:
    """``k < P(i + 1) - c`` or ``k <= P(i + 1) - c`` (``c >= 1``): an upper bound inside
    the row."""
    if m := re.fullmatch(rf"(\w+) < {end}(?: - (\d+))?", c):
        return m
    m = re.fullmatch(rf"(\w+) <= {end} - (\d+)", c)
    return m if m is not None and int(m.group(2)) >= 1 else None


def _uses_only_in_calls(text: str, its: dict[str, str], calls: dict[str, str]) -> None:
    """Every segment iterator of ``text`` is the sole argument of a call, which ``calls``
    records (callee -> the iterator's pointer); :class:`_NoCopiesError` otherwise."""
    for m in re.finditer(_CALL, text):
        if m.group(2) in its:
            callee = m.group(1).strip("$")
            if calls.setdefault(callee, its[m.group(2)]) != its[m.group(2)]:
                raise _NoCopiesError(callee)
    bare = re.sub(_CALL, "", text)
    if any(re.search(rf"\b{re.escape(k)}\b", bare) for k in its):
        raise _NoCopiesError(text)


def find_copies(
    ir: ComputationIR, stmts: list[str], var: dict[str, str], executor: frozenset[str]
) -> CopySpec | None:
    """The segments the wavefront statements ``stmts`` of the executor ``ir`` read (``var``:
    each statement's iterator of the wavefront loop; ``executor``: the UFs the executor
    reads its plan through), None when nothing can be copied or a use of a segment would not
    survive the copy (module docstring)."""
    pointers = {
        u.name
        for u in ir.ufs
        if u.monotonic == "nondecreasing" and u.arity == 1 and u.name not in executor
    }
    written = {ds for s in ir.stmts for ds, _ in s.writes}
    need: dict[str, int] = {}
    calls: dict[str, str] = {}
    data: dict[str, str] = {}
    try:
        for name in stmts:
            _read_segments(ir, name, var[name], pointers, need, calls, data)
    except _NoCopiesError:
        return None
    if not need or data.keys() & written or calls.keys() & pointers:
        return None
    spaces = {d.name for d in ir.data_spaces}
    taken = {*ir.params, *(u.name for u in ir.ufs), *spaces}

    def fresh(base: str) -> str:
        out, k = f"{base}_part", 1
        while out in taken:
            out, k = f"{base}_part{k}", k + 1
        taken.add(out)
        return out

    segments = []
    for p in sorted(need):
        ufs = tuple((u, fresh(u)) for u in sorted(calls) if calls[u] == p and u not in spaces)
        owned = {*(d for d in data if data[d] == p), *(u for u in calls if calls[u] == p)}
        copied = tuple((d, fresh(d)) for d in sorted(owned & spaces))
        segments.append(Segment(p, fresh(p), need[p], ufs, copied))
    return CopySpec(tuple(segments))


def _read_segments(
    ir: ComputationIR,
    name: str,
    var: str,
    pointers: set[str],
    need: dict[str, int],
    calls: dict[str, str],
    data: dict[str, str],
) -> None:
    """Add what statement ``name`` reads at its segment iterators to ``need``, ``calls``
    (UFs and data spaces called at one) and ``data`` (data spaces accessed at one), each
    with its pointer; :class:`_NoCopiesError` on a use that copies would not keep."""
    s = ir.stmt(name)
    m = _DOMAIN.match(str(s.domain))
    if m is None or " union " in str(s.domain):
        raise _NoCopiesError(str(s.domain))
    constraints = m.group(2).split(" && ") if m.group(2) else []
    its, needs, rest = _segment_bounds(constraints, var, pointers)
    for p, c in needs.items():
        need[p] = max(need.get(p, 0), c)
    _uses_only_in_calls(" && ".join(rest), its, calls)
    _uses_only_in_calls(getattr(s, "source", ""), its, calls)
    for ds, rel in (*s.reads, *s.writes):
        got = _ACCESS.match(rel)
        if got is not None and got.group(1) in its:
            if data.setdefault(ds, its[got.group(1)]) != its[got.group(1)]:
                raise _NoCopiesError(ds)
        elif any(re.search(rf"\b{re.escape(k)}\b", rel.split("->")[1]) for k in its):
            raise _NoCopiesError(rel)
    for p in {*its.values()}:
        need.setdefault(p, 0)


def copy_executor(
    ir: ComputationIR,
    spec: CopySpec,
    stmts: list[str],
    var: dict[str, str],
    names: WavefrontNames,
    extent: str,
    index_dtype: str = "int64",
) -> ComputationIR:
    """The executor ``ir`` with its wavefront statements reading the copies of ``spec``:
    ``P(i)`` and ``P(i + 1)`` become ``P_part(pos)`` and ``P_part(pos + 1)``, a UF or data
    space read at a segment iterator its copy (declared like the original). The plan's
    arrays (``order``, the level and part pointers, the group flags) and the pointer copies
    are declared ``index_dtype``: ``"int32"`` when a plan's positions and entries fit
    (:data:`spf.runtime.copies.NARROW_LIMIT`),
    which halves the bytes of the two streams every row reads besides its entries (on the
    1M-row random triangle of ``spf bench --only sptrsv``, one thread, three interleaved
    runs on a loaded machine: the executor's CPU time went from 0.83-0.95 of the serial
    solve's to 0.67-0.79, what a hand-written level-ordered solve took: 0.68-0.81)."""
    from spf.analysis.executor import plan_arrays_as

    ir = plan_arrays_as(ir, names, index_dtype)
    decl = {u.name: u for u in ir.ufs}
    spaces = {d.name: d for d in ir.data_spaces}
    for seg in spec.segments:
        p = decl[seg.pointer]
        ir = build.declare_uf(
            ir,
            seg.copy,
            arity=1,
            domain=f"{{[x] : 0 <= x && x <= {extent}}}",
            range=p.range,
            monotonic="nondecreasing",
            dtype=index_dtype,
        )
        for uf, copy in seg.ufs:
            u = decl[uf]
            ir = build.declare_uf(
                ir, copy, arity=u.arity, domain=u.domain, range=u.range, dtype=u.dtype
            )
        for ds, copy in seg.data:
            d = spaces[ds]
            ir = dataclasses.replace(
                ir, data_spaces=(*ir.data_spaces, dataclasses.replace(d, name=copy))
            )
    renamed = {u: c for seg in spec.segments for u, c in (*seg.ufs, *seg.data)}
    for name in stmts:
        ir = _read_copies(ir, name, spec, renamed, var[name], names.pos)
        ir = _prefetch_ahead(ir, name, spec, names.pos, names.order)
    for text in ir.assumptions:
        for seg in spec.segments:
            moved = copied_fact(text, seg, names.order)
            if moved is not None:
                ir = build.assume(ir, moved)
    return ir


_FACT = re.compile(r"^forall ([\w, ]+): (.*) => (.*)$")


def copied_fact(text: str, seg: Segment, order: str) -> str | None:
    """The fact ``text`` about the rows of ``seg``'s pointer as a fact about their copies,
    or None when it is not one. A fact ``forall i, k: P(i) <= k < P(i+1) - c => C``
    whose ``C`` reads the copied UFs at ``k`` alone and ``i`` bare (a solve's
    ``col(k) < i``) holds of the copies with ``i`` a position: ``P_part(i) <= k <
    P_part(i+1) - c => C'``, ``C'`` reading the copies at ``k`` and ``order(i)`` for
    ``i`` (a copy moves each row's entries, their offsets kept, to its position). What
    it proves of the copies' executor is what it proved of the rows read in place: a row
    that never reads its own ``u(i)`` needs no compare per entry (:mod:`spf.codegen.apart`).
    Any other fact (a premise or conclusion reading ``i`` otherwise, another UF, another
    form of segment) is left out: the executor is correct without it."""
    m = _FACT.match(text)
    if m is None:
        return None
    qs = [v.strip() for v in m.group(1).split(",")]
    premise, conclusion = m.group(2), m.group(3)
    ptr, copies = re.escape(seg.pointer), dict(seg.ufs)
    seg_m = re.fullmatch(rf"{ptr}\((\w+)\) <= (\w+) < {ptr}\(\1 ?\+ ?1\)( - \d+)?", premise.strip())
    if seg_m is None:
        return None
    row, k, tail = seg_m.group(1), seg_m.group(2), seg_m.group(3) or ""
    if sorted(qs) != sorted({row, k}) or row == k:
        return None
    if not copies:
        return None
    at_k = rf"\b({'|'.join(map(re.escape, copies))})\({re.escape(k)}\)"
    bare = re.sub(at_k, "", conclusion)
    if "(" in bare or re.search(rf"\b{re.escape(k)}\b", bare):
        return None  # another call, or k itself compared: a copy's k is not the original's
    moved = re.sub(at_k, lambda c: f"{copies[c.group(1)]}({k})", conclusion)
    moved = re.sub(rf"(?<![\w(])\b{re.escape(row)}\b(?![\w(])", f"{order}({row})", moved)
    return f"forall {row}, {k}: {seg.copy}({row}) <= {k} < {seg.copy}({row}+1){tail} => {moved}"


def _read_copies(
    ir: ComputationIR,
    name: str,
    spec: CopySpec,
    renamed: dict[str, str],
    var: str,
    pos: str,
) -> ComputationIR:
    s = ir.stmt(name)
    domain = str(s.domain)
    for seg in spec.segments:
        p = re.escape(seg.pointer)
        domain = re.sub(rf"\b{p}\({re.escape(var)} \+ 1\)", f"{seg.copy}({pos} + 1)", domain)
        domain = re.sub(rf"\b{p}\({re.escape(var)}\)", f"{seg.copy}({pos})", domain)
    m = _DOMAIN.match(domain)
    if m is None:  # checked by find_copies
        return ir
    its = set(_segment_iterators(m.group(2) or "", spec))

    def rename(text: str) -> str:
        def one(call: re.Match[str]) -> str:
            callee, arg = call.group(1), call.group(2)
            bare = callee.strip("$")
            if arg in its and bare in renamed:
                return f"{callee.replace(bare, renamed[bare])}({arg})"
            return call.group(0)

        return re.sub(r"(\$?\w+\$?)\((\w+)\)", one, text)

    def accesses(accs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        out = []
        for ds, rel in accs:
            got = _ACCESS.match(rel)
            copied = got is not None and got.group(1) in its and ds in renamed
            out.append((renamed[ds] if copied else ds, rel))
        return tuple(out)

    ir = build.reschedule(
        ir,
        name,
        rename(domain),
        s.current_schedule,
        accesses(s.reads),
        accesses(s.writes),
        s.tags,
    )
    new: StmtIR = ir.stmt(name)  # type: ignore[assignment]
    stmt = dataclasses.replace(new, source=rename(new.source))
    return dataclasses.replace(ir, stmts=tuple(stmt if x.name == name else x for x in ir.stmts))


PREFETCH_TAG = "wavefront_prefetch"
"""The tag :func:`copy_executor` puts on the executor's loop over positions ``pos`` for each
1-D data space a wavefront statement accesses at an iterator that depends on the position
through the plan (the rows of a level or part lie anywhere in the matrix):
``wavefront_prefetch(<ahead>,<pointer copy>,<UF copy>,<data space>,r)`` for a read through
a copied UF at a segment iterator (``u(j)``, ``j = col_part(k)``,
``rowptr_part(pos) <= k``), and ``wavefront_prefetch(<ahead>,,<order>,<data space>,<r|w>)``
for the row's own element (``f(i)``, ``u(i)``, ``i = order(pos)``; ``w`` when the
statements write it, ``r`` when they only read it). The C printer (:mod:`spf.codegen.prefetch`)
then asks the cache, at position ``pos``, for the elements the row at ``pos + ahead`` of the
same part will touch, in the unchecked function only: a hint, which changes no value."""

PREFETCH_AHEAD = 32
"""Positions ahead of the running one whose elements :data:`PREFETCH_TAG` asks for. On the
1M-row random lower triangle of ``spf bench --only sptrsv`` (12 levels, ~3 entries a row; a
level-ordered hand-written solve, medians of 25 interleaved calls, 2 threads, the host
quiet) no prefetch ran at 1.45x serial spf, and prefetching the column reads and the row's
own elements 8, 16, 32 and 64 rows ahead at 1.55x, 1.64x, 1.64x and 1.75x (one thread:
0.99-1.11x against 0.97-1.08x); the column reads alone, 32 ahead: 1.38x and 1.56x against
1.46x and 1.63x with the row's own elements (two runs). spf's own executor of copies on that
triangle (the levels plan ``auto`` picks, 2 threads, 41 interleaved rounds, one run): 16,
32, 64 and 128 ahead 1.39x, 1.42x, 1.40x and 1.37x (0, the row itself: 1.11x). 32 leaves
a short part (a level's rows split between the threads) most of its rows prefetched."""


def _prefetch_ahead(
    ir: ComputationIR, name: str, spec: CopySpec, pos: str, order: str
) -> ComputationIR:
    """Statement ``name`` (already reading the copies) with the :data:`PREFETCH_TAG` tags of
    its accesses on the loop ``pos`` (``order``: the plan's UF of the row at a position);
    unchanged when it has none."""
    s: StmtIR = ir.stmt(name)  # type: ignore[assignment]  # a wavefront statement
    m = _DOMAIN.match(str(s.domain))
    if m is None:
        return ir
    constraints = m.group(2) or ""
    tags: list[str] = []

    def add(tag: str) -> None:
        if tag not in tags:
            tags.append(tag)

    rows = set(re.findall(rf"\b(\w+) = {re.escape(order)}\({re.escape(pos)}\)", constraints))
    written = {ds for ds, rel in s.writes if (got := _ACCESS.match(rel)) and got.group(1) in rows}
    for ds, rel in (*s.writes, *s.reads):
        got = _ACCESS.match(rel)
        if got is not None and got.group(1) in rows:
            add(f"{PREFETCH_TAG}({PREFETCH_AHEAD},,{order},{ds},{'w' if ds in written else 'r'})")
    for seg in spec.segments:
        c = re.escape(seg.copy)
        its = set(re.findall(rf"\b{c}\({re.escape(pos)}\) <= (\w+)\b", constraints))
        for _, copy in seg.ufs:
            u = re.escape(copy)
            pinned = {
                j
                for j, k in re.findall(rf"\b(\w+) = {u}\((\w+)\)(?![\w(])", constraints)
                if k in its
            }
            for ds, rel in s.reads:
                got = _ACCESS.match(rel)
                if got is not None and got.group(1) in pinned:
                    add(f"{PREFETCH_TAG}({PREFETCH_AHEAD},{seg.copy},{copy},{ds},r)")
    if not tags:
        return ir
    current = dict(s.tags)
    have = current.get(pos, ())
    current[pos] = (*have, *(t for t in tags if t not in have))
    stmt = dataclasses.replace(s, tags=tuple(sorted(current.items())))
    return dataclasses.replace(ir, stmts=tuple(stmt if x.name == name else x for x in ir.stmts))


def _segment_iterators(constraints: str, spec: CopySpec) -> list[str]:
    """The iterators the rewritten ``constraints`` bound by a pointer copy."""
    out = []
    for seg in spec.segments:
        c = re.escape(seg.copy)
        out += re.findall(rf"\b{c}\(\w+\) <= (\w+)\b", constraints)
        out += re.findall(rf"\b(\w+) = {c}\(", constraints)
    return out


def plan_copies(
    ir: ComputationIR,
    executor: ComputationIR,
    loop: str,
    groups: int,
    names: WavefrontNames,
    extent: str,
    index_dtype: str = "int64",
) -> tuple[CopySpec, ComputationIR] | None:
    """The copies a plan of the wavefront loop ``loop`` of ``ir`` may keep and the executor
    ``executor`` rewritten to read them, its plan arrays and pointer copies of
    ``index_dtype`` (:func:`copy_executor`); None when the loop's rows have no segments to
    copy, or kernels were fused into it (their rows interleave two kernels' segments)."""
    from spf.analysis.executor import own_loop, wavefront_stmts
    from spf.analysis.inspector import loop_iterator
    from spf.ir.reading import iterator_names

    if groups != 1:
        return None
    stmts = wavefront_stmts(ir, loop)
    var = {
        s.name: iterator_names(s.domain)[loop_iterator(s, own_loop(s, loop), "wavefront")]
        for s in stmts
    }
    order = [s.name for s in stmts]
    plan_ufs = frozenset({names.levelptr, names.partptr, names.order, names.single})
    spec = find_copies(executor, order, var, plan_ufs)
    if spec is None:
        return None
    return spec, copy_executor(executor, spec, order, var, names, extent, index_dtype)
