"""Where the scanner may read a run-time index array: after the last write that can change it.

A run-time index array (``add_data_space(..., index=True)``) is a UF whose values the
computation's own statements write. The scanner reads a UF value once, at the *level* of its
arguments (:mod:`spf.codegen.scan`): at the top of an iteration of the innermost loop they
use. For an index array that is too early when a statement writes the element the reader
reads within that same iteration, before the reader: the prefix sum
``ptr(i+1) = ptr(i) + cnt(i)`` at ``[3, i, 0]`` followed by the loop
``ptr(i) <= p < ptr(i+1)`` at ``[3, i, 1, p]`` must read ``ptr(i+1)`` after the first
statement of iteration ``i``, i.e. at position 2.

A value bound at schedule position ``l`` is read before every statement instance whose time
agrees with the reader's up to ``l`` and after every earlier one. So for each write instance
``w`` of an element the reader instance ``r`` reads, with ``w`` before ``r`` in the current
schedule, the read must come at or below the first position where their times differ:
:func:`written_level` is the deepest such position over all writers (-1 when none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.analysis.dependences import (
    _constraint,
    _Timing,
    empty,
    function_of,
    padded,
    pair_names,
    same_element,
)
from spf.ir.reading import is_constant

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Relation, Set


def is_written_index_array(ir: ComputationIR, name: str) -> bool:
    """Whether UF ``name`` is a run-time index array (its values come from statements)."""
    ds = ir.data_space_table.get(name)
    return ds is not None and ds.index


def written_level(
    ir: ComputationIR, reader: StmtReading, uf: str, width: int, floor: int = -1
) -> int:
    """The deepest schedule position (of ``width``, the current schedule padded) at which a
    write of index array ``uf`` that runs before an instance of ``reader`` and writes an
    element it reads first differs in time from that instance; -1 when no write does.
    With ``floor``, a level at or below it is reported as ``floor``, and writers that can
    give no deeper one cost no set operation (the scanner reads an index array no earlier
    than position 0 anyway: a rows-only workspace written before the row loop, SpGEMM's
    sort bounds, is told apart from none by no test).

    A writer whose schedule first differs from the reader's at two constants cannot give a
    deeper position than that one: writers are taken deepest bound first, and one whose
    bound is not below the level found so far is skipped without any set operation; each
    writer's positions are tested deepest first, up to the first that holds."""
    reads = [rel for ds, rel in reader.reads if ds == uf]
    if not reads:
        return max(-1, floor)
    sched_r = padded(reader, width)
    candidates = []
    for writer in ir.parsed_stmts:
        writes = [rel for ds, rel in writer.writes if ds == uf]
        if not writes:
            continue
        xs, ys = pair_names(writer, reader)
        timing = _Timing(padded(writer, width), sched_r, xs, ys, ir.facts)
        positions = _positions(timing)
        if positions:
            candidates.append((positions, writer, writes, xs, ys, timing))
    level = max(-1, floor)
    for positions, writer, writes, xs, ys, timing in sorted(candidates, key=lambda c: -c[0][-1]):
        for a, b in ((a, b) for a in writes for b in reads):
            if positions[-1] <= level:
                break
            # no emptiness test of the pairs first: each level tested is a part of them
            pairs = _same_element(writer, a, reader, b, xs, ys)
            if pairs is None:  # two different constant elements
                continue
            level = _deepest(timing, pairs, positions, level)
    return level


def _same_element(
    writer: StmtReading, a: Relation, reader: StmtReading, b: Relation, xs: list[str], ys: list[str]
) -> Set | None:
    """:func:`same_element`, or where both accesses are constant elements (a scalar
    workspace's ``len(0)``) every pair of the two domains when the elements agree and None
    when they differ, without composing the accesses."""
    fa, fb = function_of(a, list(a.in_vars)), function_of(b, list(b.in_vars))
    if fa is not None and fb is not None and all(is_constant(e) for e in (*fa, *fb)):
        if [int(e) for e in fa] != [int(e) for e in fb]:
            return None
        both = writer.domain.product(reader.domain)
        return _constraint(xs + ys, []).intersect(both)
    return same_element(writer, a, reader, b, xs, ys)


def _deepest(timing: _Timing, pairs: Set, positions: list[int], level: int) -> int:
    """The deepest of ``positions`` above ``level`` where some of ``pairs`` first differ in
    time (the writer's first), else ``level``."""
    for d in reversed(positions):
        if d <= level:
            break
        if not empty(timing.level(pairs, d, "<"), timing.facts):
            return d
    return level


def _positions(timing: _Timing) -> list[int]:
    """The positions at which a writer instance may first run before a reader instance
    (``_Timing.levels`` with ``<`` tests these): none after the first position where the
    two schedules hold different constants, none where they hold equal ones; empty when
    the writer never runs first."""
    out = []
    for d in range(timing.width):
        fixed = timing._constants(d)
        if fixed is not None and fixed[0] == fixed[1]:
            continue
        if fixed is not None and fixed[0] > fixed[1]:
            break
        out.append(d)
        if fixed is not None:
            break
    return out
