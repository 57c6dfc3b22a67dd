"""Producer-consumer pipelines as one candidate of :func:`spf.tune` (the space's
``compute_at`` key, docs/tune.md): the producer computed inside the consumer's row strips,
into a line buffer, the two stages fused element by element (Halide's
``bx.store_at(out, yo).compute_at(out, x)``; ``spf.bench.blur.schedule`` is the same
sequence written by hand).

A *pipeline* is a producer statement ``p`` and a later consumer ``c`` in a loop nest of its
own, where ``p`` writes a data space ``D`` at its loop variables (``bx(i, j)``), ``c`` has
loops of the same names and reads ``D`` only at ``(i + a, j, ...)`` with constant offsets
``lo <= a <= hi`` in the outermost dimension (``bx(i, j) + bx(i+1, j) + bx(i+2, j)``), and no
other statement touches ``D``. A candidate with strips of ``rows`` rows:

* ``c.split(i, rows, i0, i1)``, ``p.compute_at(c, i0)``: ``p`` computes in strip ``i0`` the
  ``rows + hi - lo`` rows its strip reads (the halo rows once more per strip);
* ``set_schedule`` on both: in strip ``i0``, producer row ``r`` and the consumer row that
  needs it last (``i = rows*i0 + r - hi``) share the loops ``r, j, ...``, the producer first;
* ``D`` folded into a local buffer of ``hi - lo + 1`` rows (``storage_fold``, at
  ``i % (hi-lo+1)``) allocated per strip, so that the strips share nothing and ``i0`` runs
  in parallel;
* both innermost loops vectorized by the machine's vector width.

``D`` is then an intermediate: the tuned kernel no longer takes its array (the search
compares the other outputs with the default schedule's; docs/tune.md says so).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from spf.tuning.blocking import VECTOR_BYTES, native_isa, nest_key, order
from spf.tuning.moves import fresh_name

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


@dataclass(frozen=True)
class Pipe:
    """A producer-consumer pair (module docstring): the statements, the intermediate data
    space, the consumer's offsets ``lo..hi`` into its outermost dimension and the
    intermediate's element size."""

    producer: str
    consumer: str
    data: str
    lo: int
    hi: int
    itemsize: int

    @property
    def window(self) -> int:
        """Rows of the line buffer (the rows one consumer row reads)."""
        return self.hi - self.lo + 1


def _outputs(relation: object) -> tuple[str, ...]:
    from spf.tuning.nest import _outputs as outputs

    return outputs(str(relation))


def _offset(expr: str, var: str) -> int | None:
    """``a`` for ``var + a`` (``var``, ``var - 1``, ``2 + var``), else None."""
    from spf.tuning.nest import shifted

    got = shifted(expr)
    return got[1] if got is not None and got[0] == var else None


def _offsets(p: Stmt, c: Stmt, data: str) -> tuple[int, int] | None:
    """``(lo, hi)`` when every read of ``data`` by ``c`` is ``(i + a, j, ...)`` with ``p``'s
    loops, else None."""
    loops = c.loops
    found = []
    for ds, rel in c.reads:
        if ds != data:
            continue
        exprs = _outputs(rel)
        if len(exprs) != len(loops):
            return None
        a = _offset(exprs[0], loops[0])
        if a is None or any(e.strip() != v for e, v in zip(exprs[1:], loops[1:], strict=True)):
            return None
        found.append(a)
    return (min(found), max(found)) if found else None


def _pipe(comp: Computation, p: Stmt, c: Stmt) -> Pipe | None:
    if len(p.writes) != 1 or len(p.loops) < 2 or p.loops != c.loops:
        return None
    data, rel = p.writes[0]
    if _outputs(rel) != p.loops or any(ds == data for ds, _ in c.writes):
        return None
    if any(ds == data for ds, _ in p.reads):
        return None
    others = [s for s in comp.stmts if s is not p and s is not c]
    if any(ds == data for s in others for ds, _ in (*s.reads, *s.writes)):
        return None
    span = _offsets(p, c, data)
    ds = comp.data_spaces.get(data)
    if span is None or ds is None or ds.shape is None or len(ds.shape) != len(p.loops):
        return None
    from spf.clang import NUMPY_OF_C

    dtype = NUMPY_OF_C.get(ds.ctype)
    item = np.dtype(dtype).itemsize if dtype is not None else 8
    return Pipe(p.name, c.name, data, span[0], span[1], item)


def find(comp: Computation) -> tuple[Pipe, ...]:
    """The pipelines of ``comp`` (module docstring): consecutive loop nests whose first
    statement reads what the single statement of the nest before writes."""
    nests: dict[tuple[str, ...], list[Stmt]] = {}
    for s in sorted(comp.stmts, key=order):
        nests.setdefault(nest_key(s), []).append(s)
    groups = list(nests.values())
    out = []
    for before, after in itertools.pairwise(groups):
        if len(before) == 1 and len(after) == 1:
            pipe = _pipe(comp, before[0], after[0])
            if pipe is not None:
                out.append(pipe)
    return tuple(out)


def vector_width(pipe: Pipe) -> int:
    """The machine's vector width in elements of the intermediate."""
    return max(VECTOR_BYTES[native_isa()] // max(pipe.itemsize, 1), 1)


def apply(comp: Computation, pipe: Pipe, rows: int) -> None:
    """Schedule ``pipe`` of ``comp`` in strips of ``rows`` rows (module docstring)."""
    p, c = comp.stmt(pipe.producer), comp.stmt(pipe.consumer)
    loops = c.loops
    taken = set(loops) | set(p.loops) | set(comp.params) | set(comp.data_spaces)
    i0, i1, r = (fresh_name(base, taken) for base in (loops[0] + "0", loops[0] + "1", "r"))
    first = _outputs(c.schedule)[0]
    c.split(loops[0], rows, i0, i1)
    p.compute_at(c, i0)
    before = set(comp.buffers)
    p.storage_fold(loops[0], pipe.window)  # the line buffer (while loop i is still row i)
    (line,) = set(comp.buffers) - before
    inner = ",".join(f"0,{v}" for v in loops[1:])
    p.set_schedule(
        f"{{[{i0},{','.join(loops)}] -> [{first},{i0},0,{r},{inner},0]: "
        f"{r} = {loops[0]} - {rows}*{i0}}}"
    )
    c.set_schedule(
        f"{{[{','.join(loops)}] -> [{first},{i0},0,{r},{inner},1]: "
        f"{loops[0]} = {rows}*{i0} + {r} - {pipe.hi} && "
        f"{pipe.hi} <= {r} < {rows + pipe.hi}}}"
    )
    c.parallelize(i0)
    comp.buffer(line).allocate_at(c, i0)
    width = vector_width(pipe)
    if width > 1:
        p.vectorize(loops[-1], width)
        c.vectorize(loops[-1], width)
