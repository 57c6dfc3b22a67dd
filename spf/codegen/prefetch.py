"""Software prefetch of the rows ahead in a wavefront executor's loop over positions.

A wavefront executor on part-ordered copies (:mod:`spf.analysis.local_copies`) streams each
row's entries (``col_part``, ``L_part``), but the elements a row reads through its columns
(``u(col_part(k))``) lie wherever the columns point. Inside a level (or a coarse level's
part) the rows do not depend on each other, so the core could fetch many rows' elements at
once, but its out-of-order window covers only a few rows ahead. The loop over positions
tagged ``wavefront_prefetch(...)``
(:data:`spf.analysis.local_copies.PREFETCH_TAG`) opens each iteration by asking the cache
for the elements the row ``ahead`` positions later in the same loop will touch::

    if (N >= MIN && pos + ahead < end) {  /* large vectors; the loop's own bound */
      __builtin_prefetch(&f(order(pos + ahead)), 0, 3);  /* the row's own elements */
      __builtin_prefetch(&u(order(pos + ahead)), 1, 3);  /* (written: for writing) */
      for (k = pointer(pos + ahead); k < pointer(pos + ahead + 1); k++)
        __builtin_prefetch(&u(uf(k)), 0, 3);             /* its reads through columns */
    }

Only the unchecked function prints it: the checked one reads its index arrays through the
checks, and a prefetch is a hint that changes no value (the results stay bitwise those of
the loop without it). The lines come from the tags and the loop alone; a tag naming a UF or
a data space the program does not hold as a 1-D array prints nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from spf.analysis.local_copies import PREFETCH_TAG
from spf.codegen.loop_ast import Expr, For, Int, Op, Var, map_expr

_TAG = re.compile(rf"^{PREFETCH_TAG}\((\d+),(\w*),(\w+),(\w+),([rw])\)$")


@dataclass(frozen=True)
class Request:
    """One tag's request: the elements of ``data`` at ``uf(k)`` for ``k`` over the segment
    ``pointer(q) <= k < pointer(q + 1)`` of the position ``q`` ``ahead`` of the running one,
    or at ``uf(q)`` when ``pointer`` is empty; ``write``: the row will write it."""

    ahead: int
    pointer: str
    uf: str
    data: str
    write: bool


def requests(n: For) -> list[Request]:
    """The prefetch requests of loop ``n``'s tags, an element both read and written asked
    for once, for writing."""
    out: list[Request] = []
    for tag in n.tags:
        m = _TAG.match(tag)
        if m is not None:
            ahead, pointer, uf, data, rw = m.groups()
            out.append(Request(int(ahead), pointer, uf, data, rw == "w"))
    written = {(r.ahead, r.pointer, r.uf, r.data) for r in out if r.write}
    kept = [r for r in out if r.write or (r.ahead, r.pointer, r.uf, r.data) not in written]
    return list(dict.fromkeys(kept))


MIN_ELEMENTS = 1 << 19
"""The fewest elements of the data spaces a loop prefetches (the largest of their extents)
for which it prefetches: 4 MiB of doubles, this machine's L2 cache per core. Smaller
vectors stay in the cache between the rows that read them, and the prefetches only cost:
on random lower triangles of 12 levels (a levels plan on copies forced, 2 threads, medians
of 101 interleaved calls) 20,000 rows ran 6% slower with them and 200,000 rows 2% slower,
where 1M rows ran 9-10% faster (41 calls, two runs). A test of a parameter before each
row, always taken the same way."""


def lines(
    n: For,
    ufs: Collection[str],
    data: Mapping[str, tuple[str, str]],
    expr: Callable[[Expr], str],
) -> list[str]:
    """The C lines opening an iteration of ``n`` (module docstring): ``ufs`` the 1-D UFs
    the program reads as arrays, ``data`` the 1-D data spaces with their macros and
    extents (C expressions), ``expr`` the printer of an expression. Empty when ``n`` asks
    for nothing it can print."""
    asked = [
        r
        for r in requests(n)
        if (not r.pointer or r.pointer in ufs) and r.uf in ufs and r.data in data
    ]
    if not asked or n.step != 1:
        return []
    extents = list(dict.fromkeys(data[r.data][1] for r in asked))
    large = " || ".join(f"({e}) >= {MIN_ELEMENTS}" for e in extents)
    out: list[str] = []
    for ahead in sorted({r.ahead for r in asked}):
        mine = [r for r in asked if r.ahead == ahead]
        at = f"spf_ahead_{n.var}"
        cond = map_expr(n.cond, _shift(n.var, ahead))
        gate = f"({large}) && ({expr(cond)})"
        out += [f"if ({gate})", "{", f"  const int64_t {at} = {n.var} + {ahead};"]
        for r in mine:
            if not r.pointer:
                out.append(f"  {_fetch(data[r.data][0], f'{r.uf}({at})', r.write)}")
        for pointer in dict.fromkeys(r.pointer for r in mine if r.pointer):
            k = f"spf_ahead_k_{pointer}"
            out.append(f"  for (int64_t {k} = {pointer}({at}); {k} < {pointer}({at} + 1); {k}++)")
            out.append("  {")
            for r in mine:
                if r.pointer == pointer:
                    out.append(f"    {_fetch(data[r.data][0], f'{r.uf}({k})', r.write)}")
            out.append("  }")
        out.append("}")
    return out


def _shift(var: str, ahead: int) -> Callable[[Expr], Expr | None]:
    """What :func:`map_expr` maps ``var`` by to ``var + ahead`` (the rest unchanged)."""
    shifted = Op("+", (Var(var), Int(ahead)))

    def one(e: Expr) -> Expr | None:
        return shifted if e == Var(var) else None

    return one


def _fetch(macro: str, index: str, write: bool) -> str:
    return f"__builtin_prefetch(&{macro}({index}), {1 if write else 0}, 3);"
