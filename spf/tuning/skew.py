"""Time skewing and tiling of stencils as one candidate of :func:`spf.tune` (the space's
``skew`` key, docs/tune.md).

A *stencil* nest: an outermost time loop ``t`` that carries a dependence, and inside it
``K`` statements in loops of their own over the same dense space loops ``x1, x2, ...``
(PolyBench's jacobi-2d: ``B = f(A)`` then ``A = f(B)`` per step), every access ``x + c``
with constant offsets, ``r`` the largest ``|c|`` (the radius). A candidate ``(tt, tx)``
gives statement ``k`` the time ``T = K*t + k`` and skews every space loop by it
(``x' = x + r*T``), so that every dependence goes forward in ``T`` and in every ``x'``; then
it tiles ``T`` by ``tt`` and ``x1'`` by ``tx`` and runs the tiles by wavefronts
``w = p + q`` (``p`` the time tile, ``q`` the space tile): the tiles of one wavefront are
independent (the parallel stage may run them in parallel, loop ``p``). Inside a tile: ``t``,
then the statements in order, then ``x1', x2', ...`` (the innermost left to gcc's
vectorizer: an explicit ``vectorize`` of the skewed loop measured 1.9x slower). The
schedule is one ``set_schedule`` per statement; ``check_legality`` decides as for every
candidate (a radius or an order this reasoning gets wrong is refused, never run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.tuning.blocking import order

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


@dataclass(frozen=True)
class Stencil:
    """A stencil nest (module docstring): its statements in time order, the loops
    (time first), the radius and the first schedule constant of the nest."""

    stmts: tuple[str, ...]
    loops: tuple[str, ...]
    radius: int
    first: str
    wave: str  # the names of the loops after the candidate: wavefront of tiles,
    tile: str  # time tile (parallel within a wavefront),
    skewed: tuple[str, ...]  # and the skewed space loops


def _names(loops: tuple[str, ...], taken: set[str]) -> list[str]:
    """Fresh names of the wavefront loop, the time-tile loop and the skewed space loops."""
    from spf.tuning.moves import fresh_name

    bases = (loops[0] + "_w", loops[0] + "_p", *(v + "_s" for v in loops[1:]))
    return [fresh_name(base, taken) for base in bases]


def _radius(expr: str, loops: tuple[str, ...]) -> int | None:
    """``|c|`` for ``x + c`` with ``x`` a space loop, else None."""
    from spf.tuning.nest import shifted

    got = shifted(expr)
    return abs(got[1]) if got is not None and got[0] in loops[1:] else None


def find(comp: Computation, main: Stmt, outer_parallel: bool) -> Stencil | None:
    """The stencil nest of ``main`` (module docstring), or None."""
    from spf.tuning.blocking import nest_key
    from spf.tuning.nest import _outputs, _real_loops

    loops = tuple(main.loops)
    if outer_parallel or len(loops) < 2 or _real_loops(main)[0] != list(loops):
        return None
    group = sorted((s for s in comp.stmts if nest_key(s) == nest_key(main)), key=order)
    radius = 0
    for s in group:
        sched = _outputs(str(s.schedule))
        if tuple(s.loops) != loops or len(sched) != 2 * len(loops) + 1:
            return None
        if any(not sched[p].lstrip("-").isdigit() for p in range(0, len(sched), 2)):
            return None
        for _, rel in (*s.reads, *s.writes):
            for e in _outputs(str(rel)):
                got = _radius(e, loops)
                if got is None:
                    return None
                radius = max(radius, got)
    first = _outputs(str(main.schedule))[0]
    taken = {lp for s in comp.stmts for lp in s.loops} | set(comp.data_spaces) | set(comp.params)
    wave, tile, *skewed = _names(loops, taken)
    return Stencil(tuple(s.name for s in group), loops, max(radius, 1), first, wave, tile,
                   tuple(skewed))  # fmt: skip


def apply(comp: Computation, stencil: Stencil, tt: int, tx: int) -> None:
    """Skew and tile ``stencil`` of ``comp`` by ``tt x tx`` (module docstring)."""
    t, space = stencil.loops[0], stencil.loops[1:]
    wave, tile, skewed = stencil.wave, stencil.tile, stencil.skewed
    count = len(stencil.stmts)
    for k, name in enumerate(stencil.stmts):
        time = f"({count}*{t} + {k})"
        eqs = " && ".join(
            f"{a} = {x} + {stencil.radius}*{time}" for a, x in zip(skewed, space, strict=True)
        )
        inner = "".join(f",0,{a}" for a in skewed[1:])
        comp.stmt(name).set_schedule(
            f"{{[{','.join(stencil.loops)}] -> [{stencil.first},{wave},0,{tile},0,{t},{k},"
            f"{skewed[0]}{inner},0]: {eqs} && {tt}*{tile} <= {time} < {tt}*{tile} + {tt} && "
            f"{tx}*({wave} - {tile}) <= {skewed[0]} < {tx}*({wave} - {tile}) + {tx}}}"
        )
