"""Temporaries the PDFG highlights: data spaces that inlining or fusion would remove.

A data space is a candidate when exactly one statement (its producer) writes it, the
producer does not read it, and other statements read it. Whether it can go is not guessed:
``inline`` is tried on a copy of the computation, and ``fuse(producer, reader, level)`` with
the legality check of :mod:`spf.computation.graph_ops` inside a transaction that is always
rolled back, from the deepest shared loop outwards (fusing at no loop removes nothing). The
answer is a list of the operations that succeed, e.g. ``("inline('bx')", "fuse('s0', 's1',
1)")``. The PDFG asks for them through ``comp._removable_temporaries()``
(:class:`spf.pdfg.subject.GraphSubject`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.computation.graph_ops import fuse, transaction
from spf.errors import SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


class _RollbackError(Exception):
    """Raised inside a transaction to undo a trial operation."""


def removable_temporaries(comp: Computation) -> dict[str, tuple[str, ...]]:
    """``{data space: operations that would remove it}`` for every candidate temporary
    some operation removes."""
    out: dict[str, tuple[str, ...]] = {}
    for name in comp.data_spaces:
        writers = [s for s in comp.stmts if any(ds == name for ds, _ in s.writes)]
        readers = [s for s in comp.stmts if any(ds == name for ds, _ in s.reads)]
        if len(writers) != 1 or not readers or writers[0] in readers:
            continue
        ops = []
        if _can_inline(comp, name):
            ops.append(f"inline({name!r})")
        fusions = [_deepest_fusion(comp, writers[0], r) for r in readers]
        if all(f is not None for f in fusions):
            ops.extend(f for f in fusions if f is not None)
        if ops:
            out[name] = tuple(ops)
    return out


def _can_inline(comp: Computation, name: str) -> bool:
    from spf.computation.computation import Computation
    from spf.computation.inlining import inline_data_space

    try:
        copy = Computation.from_json(comp.to_json())
        inline_data_space(copy, name)
    except SpfError:
        return False
    return True


def _deepest_fusion(comp: Computation, producer: Stmt, reader: Stmt) -> str | None:
    """``fuse(producer, reader, k)`` for the most shared loops ``k >= 1`` that is legal."""
    for level in range(min(len(producer.loops), len(reader.loops)), 0, -1):
        try:
            with transaction(comp):
                fuse(comp, producer, reader, level)
                raise _RollbackError
        except _RollbackError:
            return f"fuse({producer.name!r}, {reader.name!r}, {level})"
        except SpfError:
            continue
    return None
