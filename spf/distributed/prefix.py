"""Each row's prefix up to its first ghost, computed while the messages travel.

A row that reads a ghost used to wait for the whole exchange. Its iterations before the
first one that reads a ghost need none: in a CSR row ``y(i) += A(k) * x(col(k))`` over
``rowptr(i) <= k < rowptr(i+1)``, every ``k`` before the first ghost column. The executor
runs those before the wait and the rest after it; the row's sum is kept in ``y(i)`` between
the two (a double stored and loaded back unchanged), so each row adds in the
single-process order and the result stays bitwise the single-process kernel's.

:func:`find` says when this applies: the first phase that reads ghosts is one loop nest with
exactly one ghost read, through an index array of an iterator ``k`` bounded by
``B(i) <= k < B(i + 1)`` (``B`` another index array, CSR's ``rowptr``). :func:`computation`
is that phase's statements with ``k`` restricted to ``dist_from(i) <= k < dist_to(i)``, the
statements before the ghost read in the row run only when ``dist_pre = 1`` and those after
it only when ``dist_post = 1``: the executor calls it with ``(B, split, 1, 0)`` before the
wait and ``(split, B + 1, 0, 1)`` after it, where ``split(i)`` (:func:`split_points`) is
the first ``k`` of row ``i`` that reads a ghost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.analysis.memo import HasIR, as_ir
from spf.distributed.derived import restricted_domain, uf_arguments
from spf.ir import ComputationIR, build

if TYPE_CHECKING:
    from spf.codegen.signature import Signature
    from spf.distributed.analysis import Layout
    from spf.ir import StmtIR

FROM, TO, PRE, POST = "dist_from", "dist_to", "dist_pre", "dist_post"


@dataclass(frozen=True)
class Split:
    """Where rows with ghosts split (module docstring)."""

    phase: int
    stmt: str
    """The statement that reads the ghosts."""
    data: str
    """The ghost-read vector."""
    uf: str
    """The index array of the ghost read (``col``), renumbered by the executor."""
    bound: str
    """The index array bounding ``k`` (``rowptr``)."""
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True)
class Lowered:
    """A split and the C function of its phase (``sig``, the printed ``source``)."""

    split: Split
    sig: Signature
    source: str

    def call(self, lo: str, hi: str, before_wait: bool) -> str:
        """C: the prefixes (``before_wait``) or the rest of the rows ``lo .. hi - 1``."""
        bound = self.split.bound
        ends = (bound, "spf_split") if before_wait else ("spf_split", f"{bound} + 1")
        values = {
            "row_lo": lo,
            "row_hi": hi,
            FROM: ends[0],
            TO: ends[1],
            PRE: str(int(before_wait)),
            POST: str(int(not before_wait)),
        }
        args = ", ".join(values.get(a.name, a.name) for a in self.sig.args)
        return f"{self.sig.function}({args});"

    @property
    def ctype(self) -> str:
        return self.sig.arg(self.split.bound).ctype


def find(comp: ComputationIR | HasIR, layout: Layout) -> Split | None:
    """The split of the first phase reading ghosts, or None where it does not apply
    (``comp``: a computation's IR, or a computation, for its IR)."""
    reads = [g for g in layout.accesses if not g.write]
    phase_of = {name: n for n, p in enumerate(layout.phases) for name in p.stmts}
    if not reads:
        return None
    first = min(phase_of[g.stmt] for g in reads)
    mine = [g for g in reads if phase_of[g.stmt] == first]
    stmts = {s.name: s for s in as_ir(comp, "distribute_rows").stmts}
    names = layout.phases[first].stmts
    roots = {re.search(r"->\s*\[\s*(-?\d+)", stmts[n].current_schedule) for n in names}
    if len(mine) != 1 or len({m.group(1) if m else None for m in roots}) != 1:
        return None
    g = mine[0]
    domain = stmts[g.stmt].domain
    call = re.search(rf"\b{re.escape(g.uf)}\(\s*(\w+)\s*\)", f"{g.index} {domain}")
    if call is None or call.group(1) == layout.loop:
        return None
    k, i = re.escape(call.group(1)), re.escape(layout.loop)
    low = re.search(rf"\b(\w+)\(\s*{i}\s*\)\s*<=\s*{k}\b", domain)
    if low is None or low.group(1) in (g.uf, FROM):
        return None
    high = rf"\b{k}\s*<\s*{re.escape(low.group(1))}\(\s*({i}\s*\+\s*1|1\s*\+\s*{i})\s*\)"
    if re.search(high, domain) is None:
        return None
    at = names.index(g.stmt)
    return Split(first, g.stmt, g.data, g.uf, low.group(1), names[:at], names[at + 1 :])


def computation(comp: ComputationIR | HasIR, layout: Layout, split: Split) -> ComputationIR:
    """The split phase's statements on rows ``row_lo .. row_hi - 1`` (module docstring) of a
    computation (its IR, or the computation, for its IR)."""
    ir = as_ir(comp, "distribute_rows")
    out = build.declarations(ir, f"{ir.name}_split")
    for name in (FROM, TO):
        out = build.declare_uf(out, name, **uf_arguments(ir, split.bound, monotonic=None))
    out = build.assume(out, f"0 <= {PRE} <= 1")
    out = build.assume(out, f"0 <= {POST} <= 1")
    stmts = {s.name: s for s in ir.stmts}
    k = re.search(rf"\b{re.escape(split.uf)}\(\s*(\w+)\s*\)", _text(stmts[split.stmt]))
    assert k is not None
    i = layout.loop
    for name in (*split.before, split.stmt, *split.after):
        s = stmts[name]
        if name == split.stmt:
            extra = f"{FROM}({i}) <= {k.group(1)} && {k.group(1)} < {TO}({i})"
        else:
            extra = f"{PRE if name in split.before else POST} = 1"
        domain = restricted_domain(s.domain, i, None, extra)
        out = build.add_stmt(out, s.source, domain, s.current_schedule, name=s.name)
    return out


def _text(s: StmtIR) -> str:
    return f"{s.source} {s.domain}"


def split_points(
    bound: np.ndarray, renumbered: np.ndarray, nown: int, outer: np.ndarray, rows: int
) -> np.ndarray:
    """``split[i]``: the first ``k`` of row ``i`` (``bound[i] <= k < bound[i + 1]``) whose
    renumbered index is a ghost (``>= nown``); ``bound[i + 1]`` when none; set on the rows
    with ghosts (``outer``: their ``[lo, hi)`` runs), ``bound[i]`` elsewhere."""
    starts = np.asarray(bound[:rows], dtype=np.int64)
    ends = np.asarray(bound[1 : rows + 1], dtype=np.int64)
    out = starts.copy()
    ghost = np.append(np.flatnonzero(renumbered >= nown), np.iinfo(np.int64).max)
    for lo, hi in outer.reshape(-1, 2):
        first = ghost[np.searchsorted(ghost, starts[lo:hi])]  # the sentinel when none
        out[lo:hi] = np.minimum(first, ends[lo:hi])
    result: np.ndarray = out.astype(bound.dtype)
    return result


GAIN = 0.9
"""Prefixes are kept when they cut the slowest rank's work after the wait to this share of
what it was without them (:func:`worth`)."""


def worth(comm: Any, bound: np.ndarray, split: np.ndarray, outer: np.ndarray) -> bool:
    """Whether the prefixes shorten the product (collective: every rank calls it, at plan
    time). After the wait each rank runs the rest of its rows with ghosts; the product ends
    with the slowest, so prefixes help only when they cut the largest such rest over the
    ranks. On a uniform random matrix over 2 ranks they do not: rank 0 computes half of its
    entries before the wait, rank 1 almost none (its first column is usually rank 0's), so
    rank 1's rest is what it was, and on a loaded machine rank 1 then waited for rank 0's
    prefixes (measured: 40 ms a product with them, 21.5 ms without)."""
    from mpi4py import MPI

    starts = np.asarray(bound, dtype=np.int64)
    cuts = np.asarray(split, dtype=np.int64)
    whole = before = 0
    for lo, hi in outer.reshape(-1, 2):
        whole += int(starts[hi] - starts[lo])  # the entries of the rows with ghosts
        before += int((cuts[lo:hi] - starts[lo:hi]).sum())  # their prefixes
    rest = whole - before
    top = np.zeros(2, dtype=np.int64)
    comm.Allreduce(np.array([whole, rest], dtype=np.int64), top, op=MPI.MAX)
    return bool(top[1] <= GAIN * top[0]) and top[1] < top[0]


__all__ = [
    "FROM",
    "GAIN",
    "POST",
    "PRE",
    "TO",
    "Lowered",
    "Split",
    "computation",
    "find",
    "split_points",
    "worth",
]
