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

from spf.analysis.dependences import _Timing, empty, padded, pair_names, same_element

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


def is_written_index_array(comp: Computation, name: str) -> bool:
    """Whether UF ``name`` is a run-time index array (its values come from statements)."""
    ds = comp.data_spaces.get(name)
    return ds is not None and ds.index


def written_level(comp: Computation, reader: Stmt, uf: str, width: int) -> int:
    """The deepest schedule position (of ``width``, the current schedule padded) at which a
    write of index array ``uf`` that runs before an instance of ``reader`` and writes an
    element it reads first differs in time from that instance; -1 when no write does."""
    reads = [rel for ds, rel in reader.reads if ds == uf]
    if not reads:
        return -1
    level = -1
    sched_r = padded(reader, width)
    for writer in comp.stmts:
        writes = [rel for ds, rel in writer.writes if ds == uf]
        if not writes:
            continue
        xs, ys = pair_names(writer, reader)
        timing = _Timing(padded(writer, width), sched_r, xs, ys, comp.assumptions)
        if timing.never_before():
            continue
        for a in writes:
            for b in reads:
                pairs = same_element(writer, a, reader, b, xs, ys)
                if empty(pairs, comp.assumptions):
                    continue
                found = [d for d, _ in timing.levels(pairs, "<")]
                level = max([level, *found])
    return level
