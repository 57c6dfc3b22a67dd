"""The cost model that orders candidates before anything is compiled.

A prediction in seconds, from the priced PDFG (statement instances, bytes of the data
spaces) and a few features of the symbolic schedule (:mod:`spf.tuning.moves`):

* memory: each access costs, per statement instance, the cache lines it brings in; a
  unit-stride access in the innermost loop costs ``itemsize / 64`` of a line, an access
  that does not move with the innermost loop none, an index-array gather (``x(col(k))``)
  half a line, any other stride a whole line, unless the working set of the loops inside
  the innermost tile (or split) fits in the L2 cache, or the data space is packed
  (``cache_read``), when it costs a unit stride's; a computation whose whole footprint fits
  in L2, or a tiled one whose tile working set does, pays a quarter of that;
* compute: one nanosecond per instance and access, divided by the vector width when the
  innermost loop is vectorized with every moving access unit-stride, a little less with
  ``unroll``;
* parallel: divided by the threads (at most the cores), plus a fork-join overhead; atomic
  updates cost three times, per-thread copies a combine pass; a wavefront runs at 60%
  efficiency plus a barrier per level (estimated as the square root of the rows, or one
  per iteration when every loop is dense);
* packing adds its copy traffic;
* a time-skewed stencil tile (``skew``) whose working set fits in L2 brings its data once
  for all the time steps inside it;
* a producer-consumer pipeline fused in row strips (``compute_at``): both statements
  vectorized, the intermediate's accesses free, the halo rows recomputed per strip, the
  strips in parallel; without it the consumer's nest adds its cost as given;
* a GEMM-like nest blocked as BLIS does (``blocking``): the arithmetic divided by the vector
  width times the share of the vector units its register tile keeps busy, accesses free
  (packed, or held in registers), plus the packing's copies.

The numbers are a ranking, not a forecast: measurements decide (docs/tune.md).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.tuning.moves import State
    from spf.tuning.nest import Access, Nest

LINE = 64.0
L2 = 1 << 20
BANDWIDTH = 8e9  # bytes per second from memory
NS = 1e-9
FORK_JOIN = 5e-6


def mentions(expr: str, var: str) -> bool:
    return re.search(rf"\b{re.escape(var)}\b", expr) is not None


def classify(access: Access, var: str, nest: Nest) -> str:
    """``zero``, ``unit``, ``gather`` or ``strided``: how ``access`` moves with ``var``."""
    exprs = access.exprs
    for b, rhs in nest.bound.items():
        if mentions(rhs, var) and any(mentions(e, b) for e in exprs):
            return "gather" if "(" in rhs else "unit"
    if not any(mentions(e, var) for e in exprs):
        return "zero"
    last = exprs[-1] if exprs else ""
    if mentions(last, var) and not any(mentions(e, var) for e in exprs[:-1]):
        return "unit" if re.search(rf"\d\s*\*\s*{re.escape(var)}\b", last) is None else "strided"
    return "strided"


def _working_set(nest: Nest, state: State) -> float:
    """Bytes the loops inside the innermost tile/split loop touch (whole nest when untiled)."""
    start = 0
    names = state.names()
    for t in state.tiled:
        if t in names:
            start = max(start, names.index(t) + 1)
    inner = state.loops[start:]
    extent: dict[str, float] = {}
    for lp in inner:
        extent[lp.var] = extent.get(lp.var, 1.0) * lp.extent
    total = 0.0
    for a in nest.accesses:
        elems = 1.0
        for e in a.exprs:
            moving = [v for v in extent if mentions(e, v)]
            elems *= max((extent[v] for v in moving), default=1.0)
        total += elems * a.itemsize
    return total


def predict(nest: Nest, state: State, threads: int | None, cores: int) -> float:
    """Predicted seconds of the schedule ``state`` on ``threads`` threads (None: ``cores``);
    a main statement with a consumer (``nest.pipe``) adds the consumer's nest as given,
    unless the candidate computes the pipeline fused (``compute_at``)."""
    if state.piped:
        return _pipeline(nest, state, threads, cores)
    rest = 0.0 if nest.consumer is None else _alone(nest.consumer, 1)
    return _main(nest, state, threads, cores) + rest


def _alone(nest: Nest, vector: int, drop: str = "") -> float:
    """Serial seconds of ``nest`` as given, with innermost vectors of ``vector`` lanes and
    without the accesses to ``drop`` (an intermediate kept in registers)."""
    from spf.tuning.moves import initial

    kept = replace(nest, accesses=tuple(a for a in nest.accesses if a.data_space != drop))
    return _serial(kept, replace(initial(kept), vector=vector))


def _pipeline(nest: Nest, state: State, threads: int | None, cores: int) -> float:
    """A pipeline fused in row strips (``spf.tuning.pipeline``): both statements vectorized,
    the intermediate's accesses free (a line buffer in L1, values in registers), the
    producer's halo rows recomputed once per strip, the strips in parallel."""
    from spf.tuning.pipeline import vector_width

    pipe, consumer = nest.pipe, nest.consumer
    assert pipe is not None
    assert consumer is not None
    rows = max(state.piped, 1)
    width = vector_width(pipe)
    t = _alone(nest, width, pipe.data) * (1 + (pipe.hi - pipe.lo) / rows)
    t += _alone(consumer, width, pipe.data)
    strips = math.ceil(max(state.loops[0].extent, 1.0) / rows)
    team = min(threads or cores, cores, strips)
    return t / team + FORK_JOIN


def _main(nest: Nest, state: State, threads: int | None, cores: int) -> float:
    """:func:`predict` of the main nest alone."""
    if not state.loops:
        return nest.instances * NS
    if state.blocked:
        return _parallel(nest, state, _blocked(nest, state), threads, cores)
    t = _serial(nest, state)
    if state.fissioned:  # it lets interchanges and tiles move the main statement alone
        moved = tuple(lp.var for lp in state.loops) != nest.loops[: len(state.loops)]
        t *= 0.99 if moved or state.tiled else 1.01
    return _parallel(nest, state, t, threads, cores)


def _serial(nest: Nest, state: State) -> float:
    """Predicted seconds of the schedule ``state`` (loops, vectors, packing) on one thread."""
    var = state.loops[-1].var
    fits = _working_set(nest, state) <= L2
    lines = 0.0
    classes = []
    for a in nest.accesses:
        c = "unit" if a.data_space in state.packed else classify(a, var, nest)
        if a.weight > 0.5:  # the accesses of statements run once per many main instances
            classes.append(c)  # neither cost lines nor decide the vector loop
        if c == "unit" or (c == "strided" and fits and state.tiled):  # reused from L2
            lines += a.weight * a.itemsize / LINE
        elif c == "gather":
            lines += a.weight * 0.5
        elif c == "strided":
            lines += a.weight
    memory = _memory(nest, state, lines, fits)
    compute = nest.instances * NS * (1 + 0.3 * sum(a.weight for a in nest.accesses))
    if state.vector > 1 and all(c in ("unit", "zero") for c in classes):
        compute /= min(state.vector, 4) * 0.75
    elif state.vector > 1:
        compute *= 1.1
    if state.unroll > 1:
        compute *= 0.9
    t = compute + memory
    for ds in state.packed:
        t += (
            sum(a.itemsize for a in nest.accesses if a.data_space == ds)
            * nest.instances
            / (BANDWIDTH * max(state.loops[-1].extent, 1.0))
        )
    if state.tiled and not fits:
        t *= 1.05
    return t


def _memory(nest: Nest, state: State, lines: float, fits: bool) -> float:
    """Seconds of memory traffic for ``lines`` cache lines per instance: a quarter when the
    data (or a tile's) fits in L2, once for all the time steps of a skewed tile that fits."""
    memory = nest.instances * lines * LINE / BANDWIDTH
    if state.skewed and fits:
        memory /= state.skewed
    if nest.footprint <= L2 or (fits and state.tiled):
        memory *= 0.25
    return memory


def _blocked(nest: Nest, state: State) -> float:
    """A blocked GEMM-like nest: the arithmetic at the vector units' share the register tile
    keeps busy (:func:`spf.tuning.blocking.efficiency`), every access from packed or
    register-held data, plus the packing's copies (each element of ``A`` once per ``nc``
    columns, of ``B`` once)."""
    from spf.tuning.blocking import efficiency
    from spf.tuning.moves import main_block

    main = main_block(nest)
    item = main.itemsize if main is not None else 8
    mc, kc, nc, mr, nr = state.blocked
    compute = (
        nest.instances
        * NS
        * (1 + 0.3 * len(nest.accesses))
        / efficiency((mc, kc, nc, mr, nr), item)
    )
    packing = nest.instances * item * (1.0 / max(nc, 1) + 1.0 / max(mc, 1)) / BANDWIDTH
    return compute + packing


def _parallel(nest: Nest, state: State, t: float, threads: int | None, cores: int) -> float:
    if not state.parallel:
        return t
    team = min(threads or cores, cores)
    if state.parallel == "wavefront":
        # a sparse nest's levels: about the square root of the rows; a dense loop that
        # carries a dependence (lu's rows, a time step) usually has one per iteration
        extent = max(state.loops[0].extent, 1.0)
        levels = extent if all(nest.dense) else math.sqrt(extent)
        width = max(extent / levels, 1.0)  # iterations per level: the most threads it feeds
        return t / (min(team, width) * 0.6) + levels * FORK_JOIN + FORK_JOIN
    if state.reduction == "atomic":
        t *= 3.0
    elif state.reduction == "privatize":
        t *= 1.2
    regions = max(state.loops[0].extent, 1.0) if state.inner and not state.blocked else 1.0
    return t / team + FORK_JOIN * regions
