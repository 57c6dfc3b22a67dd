"""The inspector of a coarse wavefront (``method="coarse"``/``"auto"``) and its plan check.

**Coarse levels.** The rows ``0 <= i < n`` of the wavefront loop are cut into blocks of
``B = 2**s`` consecutive rows (``block(i) = i >> s``). One pass over the iterations in increasing
order, like the level stage (:func:`spf.analysis.inspector.build_inspector`), computes for
each dependence ``src -> snk`` of the loop both

- ``level(snk) = max(level(snk), level(src) + 1)`` (the dependence levels), and
- ``clev(snk) = max(clev(snk), clev(src) + (block(src) != block(snk)))``: the levels of the
  DAG whose edges inside one block weigh 0 (the *coarse levels*),

and ``work(i)``, 1 plus the number of dependence instances row ``i`` enumerates (its
nonzeros, for a solve): the cost the parts are balanced by. The same induction as for
``level`` shows every update reads the final ``clev`` of its source, so every dependence
has ``clev(snk) >= clev(src)``, with equality only inside a block.

A *piece* is the set of rows of one block at one coarse level: pieces of one coarse level
are independent (an edge between two blocks raises ``clev``), and the rows of one piece run
in increasing order on one thread respect the edges inside it (every edge goes from a row to
a later row). :mod:`spf.runtime.coarse` cuts each coarse level's rows, in increasing order,
into one contiguous run of pieces per thread of about equal work: the *parts*. This is
ParSy's load-balanced level coarsening (Cheshmi et al., SC'17: a coarse level is a set of
disjoint sub-DAGs, each run in order by one thread, bin-packed by cost) with the sub-DAGs
taken as the pieces of row blocks, which the inspector finds in the same O(iterations +
dependences) pass as the levels (no union-find over a window of levels).

**The plan check** (:func:`build_part_check`): a plan built from arrays gets, on its first
call, a pass over the same dependences that counts those which are neither inside one part
nor from an earlier coarse level to a later one; with the structural checks of
:class:`spf.runtime.plan.Plan` (each part's rows increasing) that rules out every race and
every out-of-order read, in O(iterations + dependences).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from spf.analysis.inspector import (
    LEVEL,
    NLEVELS,
    WavefrontAnalysis,
    _copy_declarations,
    edge_enumeration,
    with_constraint,
)
from spf.errors import VerifyError
from spf.ir import build

if TYPE_CHECKING:
    from spf.ir import ComputationIR

LEVEL_TYPE = "int32_t"
"""The C type of the coarse pass's levels and coarse levels and of the sort's slots: each
is below the number of nodes (:data:`MAX_NODES`)."""
MAX_NODES = 2**31 - 1
"""The most nodes a coarse inspector levels (its levels are :data:`LEVEL_TYPE`)."""
CLEV = "clev"
NCLEV = "nclev"
WORK = "work"
BLOCK = "coarse_shift"
"""The parameter holding ``log2 B`` (rows per block ``B``)."""
PART_OF = "coarse_part_of"
LEVEL_OF = "coarse_level_of"
POS_OF = "coarse_pos_in_order"
BAD = "coarse_bad"


def _fresh_names(ir: ComputationIR, analysis: WavefrontAnalysis, names: tuple[str, ...]) -> None:
    taken = set(ir.params) | {u.name for u in ir.ufs} | {d.name for d in ir.data_spaces}
    for name in names:
        if name in taken:
            raise VerifyError(
                f"wavefront({analysis.loop!r}): the coarse inspector names an array {name!r}, "
                f"which {ir.name} already uses; rename that parameter, UF or data space"
            )


class _Edge(NamedTuple):
    text: str
    """The instances the edge enumerates (set text)."""
    its: tuple[str, ...]
    src: str
    """The source node (a term of the iterators, offset by its kernel's place)."""
    snk: str
    var: str
    """The enumerated statement's iteration."""
    group: int
    """The enumerated statement's kernel."""
    step: str
    """What the edge adds to the coarse level: 1 between kernels, else whether the two
    iterations lie in different blocks."""
    snk_group: int
    """The sink's kernel."""


def _edges(analysis: WavefrontAnalysis) -> list[_Edge]:
    """The edges of the loop, pull edges first."""
    out = []
    for e in [*(e for e in analysis.edges if not e.push), *(e for e in analysis.edges if e.push)]:
        text, its, other, var = edge_enumeration(e)
        var_node = analysis.node(var, e.group)
        other_node = analysis.node(other, e.other_group)
        src, snk = (var_node, other_node) if e.push else (other_node, var_node)
        first, last = (var, other) if e.push else (other, var)
        step = "1" if e.group != e.other_group else f"({first}) >> {BLOCK} != ({last}) >> {BLOCK}"
        snk_group = e.other_group if e.push else e.group
        out.append(_Edge(text, its, src, snk, var, e.group, step, snk_group))
    return out


def free_kernels(analysis: WavefrontAnalysis) -> tuple[bool, ...]:
    """Per kernel fused into the loop, whether no edge joins two of its iterations (an SpMV
    after a solve): its nodes need no block to keep their order, so parts may cut between
    any two of them."""
    joined = {e.group for e in analysis.edges if e.group == e.other_group}
    return tuple(g not in joined for g in range(analysis.groups))


def _schedule(its: tuple[str, ...], var: str, stage: str, k: int) -> str:
    """The schedule of an edge's instances up to the statement's own position: ``stage``
    (with the kernel when kernels were fused: in program order), the enumerated iteration
    ``var``, the edge ``k``, then the other iterators."""
    rest = "".join(f", {x}, 0" for x in its if x != var)
    return f"[{', '.join(its)}] -> [{stage}, {var}, {k}{rest}"


def build_coarse_inspector(
    ir: ComputationIR, analysis: WavefrontAnalysis, wide: bool = False
) -> ComputationIR:
    """The level and coarse-level stage: writes ``level``, ``nlevels``, ``clev``, ``nclev`` and
    ``work``, reads ``coarse_shift`` (``log2`` of the rows per block). ``level`` and the
    coarse levels are 32-bit (:data:`LEVEL_TYPE`): the pass reads them at the other end of
    every dependence, scattered for a matrix whose columns are, and half the bytes halve
    what those reads miss in cache (1M-row random triangle, in C: 2.2 -> 1.5 solves of the
    pass alone, the arrays no longer zeroed first); they are below the number of nodes,
    which the caller keeps under ``2**31``. Without push edges (:func:`zeroes_in_pass`) a
    node's levels start at 0 right before its own edges, as its work starts at 1, and the
    caller does not zero them first; with push edges, which raise later nodes' levels, the
    caller does. With ``wide``, the same pass also computes the coarse levels of blocks of
    ``2**coarse_shift_wide`` rows (``clev_wide``, ``nclev_wide``): the second candidate of
    kernels fused into one loop, without a second pass over the dependences. The counts
    (``nlevels``, ...) of a node are taken right after its own edges (pull edges into it,
    push edges from it), where its levels are final (every raise comes from an earlier node
    or from its own pull edges): no pass of their own. With kernels fused into the loop,
    iteration ``i`` of kernel ``g`` is node ``g * extent + i``
    (:attr:`WavefrontAnalysis.nodes`), visited in program order as by the level stage, so
    every edge goes from a smaller node to a larger one. Without push edges a node's
    running levels and work live in locals private to its loop, stored once after its
    edges (:func:`_pass_in_locals`), and a loop of one kernel without ``wide`` grows its
    blocks as runs of rows of at most ``2**coarse_shift`` (:func:`_pass_in_run_blocks`)
    instead of the fixed ``i >> coarse_shift``; kernels fused into one loop grow each
    kernel's runs the same way and keep the fixed blocks of ``2**coarse_shift_fixed`` rows
    (and with ``wide`` those of ``2**coarse_shift_wide``) as further candidates
    (:func:`_fused_pass_in_run_blocks`)."""
    names = (
        LEVEL,
        NLEVELS,
        CLEV,
        NCLEV,
        WORK,
        BLOCK,
        *SORT_NAMES,
        *WIDE_NAMES,
        *FIXED_NAMES,
        AFTER,
    )
    _fresh_names(ir, analysis, names)
    insp = build.computation(f"{ir.name}_coarse_inspector_{analysis.loop}")
    insp = _copy_declarations(ir, insp)
    v, n = analysis.var, analysis.extent
    edges = _edges(analysis)
    fused_runs = fuses_run_blocks(insp, analysis, edges)
    coarse = [(CLEV, NCLEV, BLOCK)] + ([(CLEV_WIDE, NCLEV_WIDE, BLOCK_WIDE)] if wide else [])
    coarse += [(CLEV_FIXED, NCLEV_FIXED, BLOCK_FIXED)] if fused_runs else []
    insp = build.add_data_space(insp, WORK, "int64_t", (analysis.nodes,))
    for name in (LEVEL, *(c[0] for c in coarse)):
        insp = build.add_data_space(insp, name, LEVEL_TYPE, (analysis.nodes,))
    for name in (NLEVELS, *(c[1] for c in coarse)):
        insp = build.add_data_space(insp, name, "int64_t", ())
    shifts = " && ".join(f"{c[2]} >= 0" for c in coarse)
    levels = (LEVEL, *(c[0] for c in coarse))
    if _runs_in_locals(insp, analysis, edges, levels):
        return _local_pass(insp, analysis, edges, coarse, wide)
    starts = ["$work$({node}) = 1;"]  # right before the node's own edges
    if zeroes_in_pass(analysis):
        starts += [f"${name}$({{node}}) = 0;" for name in levels]
    for g in range(analysis.groups):
        stage = "1" if analysis.groups == 1 else f"1, {g}"
        for j, body in enumerate(starts):
            insp = build.add_stmt(
                insp,
                body.format(node=analysis.node(v, g)),
                f"{{[{v}]: 0 <= {v} < {n} && {shifts}}}",
                f"{{[{v}] -> [{stage}, {v}, 0, {j}]}}",
            )
    for k, e in enumerate(edges, start=1):
        updates = [f"$level$({e.snk}) = max($level$({e.snk}), $level$({e.src}) + 1);"]
        for clev, _, shift in coarse:
            step = e.step.replace(BLOCK, shift)
            updates.append(
                f"${clev}$({e.snk}) = max(${clev}$({e.snk}), ${clev}$({e.src}) + ({step}));"
            )
        updates.append(f"$work$({analysis.node(e.var, e.group)}) += 1;")
        stage = "1" if analysis.groups == 1 else f"1, {e.group}"
        prefix = _schedule(e.its, e.var, stage, k)
        for j, body in enumerate(updates):
            insp = build.add_stmt(insp, body, e.text, f"{{{prefix}, {j}]}}")
    totals = [(NLEVELS, LEVEL), *((c[1], c[0]) for c in coarse)]
    for g in range(analysis.groups):
        node = analysis.node(v, g)
        stage = "1" if analysis.groups == 1 else f"1, {g}"
        for j, (total, per_row) in enumerate(totals):
            insp = build.add_stmt(
                insp,
                f"${total}$ = max(${total}$, ${per_row}$({node}) + 1);",
                f"{{[{v}]: 0 <= {v} < {n}}}",
                f"{{[{v}] -> [{stage}, {v}, {len(edges) + 1}, {j}]}}",
            )
    return insp


def _local_pass(
    insp: ComputationIR,
    analysis: WavefrontAnalysis,
    edges: list[_Edge],
    coarse: list[tuple[str, str, str]],
    wide: bool,
) -> ComputationIR:
    """The pass in locals: with run blocks (:func:`_pass_in_run_blocks`) for one kernel
    without a second candidate, with run blocks and fixed ones for kernels fused into one
    loop (:func:`_fused_pass_in_run_blocks`), else with fixed blocks
    (:func:`_pass_in_locals`)."""
    if not wide and analysis.groups == 1 and _run_names_free(insp):
        return _pass_in_run_blocks(insp, analysis, edges)
    if analysis.groups > 1 and _fused_run_names_free(insp, analysis):
        return _fused_pass_in_run_blocks(insp, analysis, edges, coarse[1:])
    return _pass_in_locals(insp, analysis, edges, coarse)


def build_split_passes(
    ir: ComputationIR, analysis: WavefrontAnalysis
) -> tuple[ComputationIR, ComputationIR] | None:
    """The run-block pass of :func:`build_coarse_inspector` (one kernel, no push edge, no
    second candidate: :func:`_pass_in_run_blocks`) as two passes that two threads run at
    once, None for a loop whose pass is another: ``<name>_coarse_levels_<loop>`` writes
    ``level`` and ``work``, ``<name>_coarse_blocks_<loop>`` ``clev`` (the coarse levels
    never read the levels; the work goes with the shorter pass, which the sort waits on
    anyway). Each reads one array at the far end of a dependence
    where the joint pass reads two, and the values are those of the joint pass (the same
    ``max`` over the same operands in the same order). On two cores the pass then lasts
    as long as the longer of them (in C, on the 1M-row triangles: the levels alone 0.38 and
    0.79 serial solves, the coarse levels 0.59 and 1.00, both in one pass 0.72 and 1.44)."""
    found = _split_levels(ir, analysis)
    if found is None:
        return None
    levels, edges = found
    blocks = _declare(ir, analysis, "blocks", ((CLEV, LEVEL_TYPE),))
    return _levels_in_locals(levels, analysis, edges), _pass_in_run_blocks(
        blocks, analysis, edges, alone=True
    )


def can_split_passes(ir: ComputationIR, analysis: WavefrontAnalysis) -> bool:
    """Whether :func:`build_split_passes` builds the two passes (not None), without building
    them: a kernel is compiled with its split passes still to build, on the first 2-thread
    inspection that runs them (~15 ms of SpTRSV's cold ``compile()``)."""
    return _split_levels(ir, analysis) is not None


def _split_levels(
    ir: ComputationIR, analysis: WavefrontAnalysis
) -> tuple[ComputationIR, list[_Edge]] | None:
    """The declarations of the levels pass of :func:`build_split_passes` and the edges,
    None where there are no split passes."""
    if any(free_kernels(analysis)) or analysis.groups != 1:
        return None
    names = (LEVEL, NLEVELS, CLEV, NCLEV, WORK, BLOCK, *SORT_NAMES, *WIDE_NAMES, *FIXED_NAMES)
    _fresh_names(ir, analysis, names)
    edges = _edges(analysis)
    levels = _declare(ir, analysis, "levels", ((WORK, "int64_t"), (LEVEL, LEVEL_TYPE)))
    if not (_runs_in_locals(levels, analysis, edges, (LEVEL, CLEV)) and _run_names_free(levels)):
        return None
    return levels, edges


def _declare(
    ir: ComputationIR, analysis: WavefrontAnalysis, what: str, arrays: tuple[tuple[str, str], ...]
) -> ComputationIR:
    """A pass ``<name>_coarse_<what>_<loop>`` over ``ir``'s declarations, writing ``arrays``
    (name, C type; one entry per node)."""
    insp = build.computation(f"{ir.name}_coarse_{what}_{analysis.loop}")
    insp = _copy_declarations(ir, insp)
    for name, ctype in arrays:
        insp = build.add_data_space(insp, name, ctype, (analysis.nodes,))
    return insp


def _levels_in_locals(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge]
) -> ComputationIR:
    """The levels and the work of one kernel's nodes without push edges, each node's running
    level and work in locals private to its loop, stored after its edges
    (:func:`_pass_in_locals` without the coarse levels)."""
    loop = edges[0].var if edges else analysis.var
    level_run, work_run = _locals_of(analysis, (LEVEL, WORK), 0)
    insp = _private_local(insp, level_run, LEVEL_TYPE, loop)
    insp = _private_local(insp, work_run, "int64_t", loop)
    for k, e in enumerate(edges, start=1):
        prefix = _schedule(e.its, e.var, "1", k)
        body = f"${level_run}$ = max(${level_run}$, ${LEVEL}$({e.src}) + 1);"
        insp = build.add_stmt(insp, body, e.text, f"{{{prefix}, 0]}}")
        insp = build.add_stmt(insp, f"${work_run}$ += 1;", e.text, f"{{{prefix}, 1]}}")
    node = analysis.node(loop, 0)
    stores = [f"${LEVEL}$({node}) = ${level_run}$;", f"${WORK}$({node}) = ${work_run}$ + 1;"]
    return _after_edges(insp, stores, loop, analysis.extent, "1", len(edges) + 1)


def _after_edges(
    insp: ComputationIR, bodies: list[str], loop: str, extent: str, stage: str, after: int
) -> ComputationIR:
    """``insp`` with ``bodies`` run for each node of ``loop`` after its edges (the schedule
    ``[stage, loop, after, j]``, ``after`` past the last edge's place)."""
    for j, body in enumerate(bodies):
        insp = build.add_stmt(
            insp,
            body,
            f"{{[{loop}]: 0 <= {loop} < {extent}}}",
            f"{{[{loop}] -> [{stage}, {loop}, {after}, {j}]}}",
        )
    return insp


RUN = "_run"
"""The suffix of the pass's private locals (:func:`_pass_in_locals`): ``level_run``, ..."""


def _locals_of(analysis: WavefrontAnalysis, names: tuple[str, ...], g: int) -> list[str]:
    """The private locals holding kernel ``g``'s running ``names`` (one set per kernel)."""
    tail = RUN if analysis.groups == 1 else f"{RUN}{g}"
    return [f"{name}{tail}" for name in names]


def _private_local(insp: ComputationIR, name: str, ctype: str, loop: str) -> ComputationIR:
    """``insp`` with a scalar local ``name`` private to ``loop`` (a fresh one per iteration,
    starting at 0)."""
    insp = build.add_data_space(insp, name, ctype, (), role="local")
    last = insp.data_spaces[-1]
    return replace(insp, data_spaces=(*insp.data_spaces[:-1], replace(last, private=loop)))


def _runs_in_locals(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge], levels: tuple[str, ...]
) -> bool:
    """Whether the pass may keep each node's levels and work in private locals
    (:func:`_pass_in_locals`): :func:`pulled_into_locals` of the locals of ``levels`` and
    the work."""
    return pulled_into_locals(insp, analysis, edges, (*levels, WORK))


def pulled_into_locals(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge], names: tuple[str, ...]
) -> bool:
    """Whether a pass over ``edges`` may keep each node's running ``names`` in locals private
    to its loop (:func:`_locals_of`), stored after its edges: no push edge (every update of
    a node's values comes from its own pull edges, which read earlier nodes only), each
    kernel's edges enumerate one iterator name (the locals' loop), and the locals' names
    are free in ``insp``."""
    if not zeroes_in_pass(analysis):
        return False
    taken = {d.name for d in insp.data_spaces} | set(insp.params) | {u.name for u in insp.ufs}
    for g in range(analysis.groups):
        if len({e.var for e in edges if e.group == g}) > 1:
            return False
        if taken & set(_locals_of(analysis, names, g)):
            return False
    return True


def _pass_in_locals(
    insp: ComputationIR,
    analysis: WavefrontAnalysis,
    edges: list[_Edge],
    coarse: list[tuple[str, str, str]],
) -> ComputationIR:
    """The pass with each node's running ``level``, coarse levels and work in locals private
    to the node's loop, stored into the arrays once after its edges: the edges read the
    levels of earlier nodes (``src < snk``: no push edge) from the arrays, never the node's
    own entry, so the locals hold what the arrays held in the pass that updates them in
    place, and the C compiler keeps them in registers (it cannot keep ``level[i]`` there
    across the reads of ``level[col[k]]``, which may be the same array element as far as it
    can tell). Same values, same order of ``max`` over the same operands."""
    v, n = analysis.var, analysis.extent
    for _, _, shift in coarse:  # the edges' steps read it
        insp = build.add_constant(insp, shift)
    names = (LEVEL, *(c[0] for c in coarse), WORK)
    for g in range(analysis.groups):
        mine = [(k, e) for k, e in enumerate(edges, start=1) if e.group == g]
        loop = mine[0][1].var if mine else v
        runs = _locals_of(analysis, names, g)
        for name, run in zip(names, runs, strict=True):
            ctype = "int64_t" if name == WORK else LEVEL_TYPE
            insp = _private_local(insp, run, ctype, loop)
        insp = _edges_into_locals(insp, analysis, mine, coarse, runs)
        stage = "1" if analysis.groups == 1 else f"1, {g}"
        node = analysis.node(loop, g)
        pairs = zip(names[:-1], runs[:-1], strict=True)
        stores = [f"${name}$({node}) = ${run}$;" for name, run in pairs]
        stores.append(f"${WORK}$({node}) = ${runs[-1]}$ + 1;")
        stores += [
            f"${total}$ = max(${total}$, ${run}$ + 1);"
            for total, run in zip((NLEVELS, *(c[1] for c in coarse)), runs[:-1], strict=True)
        ]
        insp = _after_edges(insp, stores, loop, n, stage, len(edges) + 1)
    return insp


SEGMENT = "coarse_segment"
"""The first row of the stretch the pass is in, rows each with an edge from the row before
(:func:`_pass_in_run_blocks`): a scalar local of the pass, carried from row to row."""
RUN_LOCALS = ("clev_new_run", "near_run", "block_run")
"""Per row of :func:`_pass_in_run_blocks`: its coarse level if it begins a block (1 + the
highest among its sources), whether it has an edge from the row before (in
:func:`_fused_pass_in_run_blocks` its highest source + 1, then whether that is the row
before), and the first row of its block if it has an edge from the row before."""
PREV_LOCALS = ("level_prev", "clev_prev")
"""The level and coarse level the row before stored (:func:`_pass_in_run_blocks`): scalar
locals of the pass, carried from row to row, read by the edges from the row before."""


def _run_names_free(insp: ComputationIR) -> bool:
    taken = {d.name for d in insp.data_spaces} | set(insp.params) | {u.name for u in insp.ufs}
    return not taken & {SEGMENT, *RUN_LOCALS, *PREV_LOCALS}


def uses_run_blocks(stage: ComputationIR) -> bool:
    """Whether the coarse pass ``stage`` grows its blocks as runs (:func:`_pass_in_run_blocks`):
    the parts may then cut between any two rows that are not neighbours
    (:attr:`spf.runtime.coarse.Blocks.runs`)."""
    return any(d.name == SEGMENT for d in stage.data_spaces)


def _pass_in_run_blocks(
    insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge], alone: bool = False
) -> ComputationIR:
    """The pass of one kernel without push edges (:func:`_pass_in_locals`) whose blocks are
    runs of rows instead of the fixed ``i >> coarse_shift``: a *stretch* is a maximal run of
    rows each with an edge from the row before, begun at row ``s``; its blocks are its
    pieces ``s + [m B, (m + 1) B)`` (``B = 2**coarse_shift``). A row ``i`` with an edge from
    ``i - 1`` lies in the block beginning at ``b = s + ((i - s) >> shift << shift)`` and its
    coarse level is the max over its edges ``j -> i`` of ``clev(j) + (j < b)`` (an edge from
    inside the block weighs 0); a row without one begins a stretch and takes ``clev(j) +
    1``. Along the edges the pass keeps two maxima, ``begun`` of ``clev(j) + 1`` over every
    source and ``crossing`` of ``clev(j) + 1`` over the sources before ``b`` (0 for one
    inside the block: :func:`_crossing`), and chooses after them: ``near ? max(begun - 1,
    crossing) : begun`` (the joined value ``max_j clev(j) + (j < b)`` is ``max(begun - 1,
    crossing)``); the stretch's start, the only other value carried from row to row, is
    ``near ? s : i`` (docs/inspection.md, "Selects in the pass": why selects, measured).
    The counts ``nlevels`` and ``nclev`` are left to the caller (the maxima of the stored
    arrays): two more running maxima in the row loop cost it more than two reads of the
    32-bit arrays after it (register pressure: on the 1M-row triangles, one thread, loaded
    machine, the pass took ~0.1-0.2 serial solves less without them). A block's rows depend
    each on the one before at weight 0, so its coarse levels never
    fall along it and its rows at one coarse level are consecutive rows: a part may cut
    between any two rows of a level that are not neighbours. On a 2-D grid in natural order
    a grid row's first row has no edge from the row before, so every block lies inside one
    grid row, aligned to its start, whatever the grid's width (fixed blocks straddle grid
    rows, and their coarse levels step every few rows: on 2-D Poisson 1000 x 1000, parts
    run stretches of ~9 rows against ~125 here).

    A row's level and coarse level, once stored, are also kept in locals carried to the next
    row (:data:`PREV_LOCALS`), and an edge from the row before reads them there
    (:func:`_source_reads`: each edge's updates twice, over its instances from rows before
    the row before, which read the arrays, and over those from the row before): where every
    row reads the row before (a stencil's neighbour), the chain from row to row no longer
    waits on a store-to-load forward of what the row before just stored, as the serial
    solve's ``spf_prev`` (:mod:`spf.codegen.row_scalar`). Those edges also set ``near``
    (whether the row has an edge from the row before: its highest source is the row before,
    every edge going to a later row), so no other edge keeps a running maximum of its
    sources for it. The same ``max`` over the same values (docs/inspection.md, "The row
    before in registers": measured)."""
    v, n = analysis.var, analysis.extent
    insp = build.add_constant(insp, BLOCK)
    loop = edges[0].var if edges else v
    names = (LEVEL, CLEV, WORK)
    level_run, clev_run, work_run = _locals_of(analysis, names, 0)
    new_run, near_run, block_run = RUN_LOCALS
    runs = (clev_run, *RUN_LOCALS) if alone else (level_run, clev_run, work_run, *RUN_LOCALS)
    for run in runs:
        ctype = "int64_t" if run in (work_run, block_run) else LEVEL_TYPE
        insp = _private_local(insp, run, ctype, loop)
    insp = build.add_data_space(insp, SEGMENT, "int64_t", (), role="local")
    node = analysis.node(loop, 0)
    rows = f"{{[{loop}]: 0 <= {loop} < {n}}}"
    first = f"${block_run}$ = ${SEGMENT}$ + ((({node}) - ${SEGMENT}$) >> {BLOCK} << {BLOCK});"
    insp = build.add_stmt(insp, first, rows, f"{{[{loop}] -> [1, {loop}, 0, 0]}}")
    level_prev, clev_prev = PREV_LOCALS
    for prev in (clev_prev,) if alone else PREV_LOCALS:
        insp = build.add_data_space(insp, prev, LEVEL_TYPE, (), role="local")
    for k, e in enumerate(edges, start=1):
        prefix = _schedule(e.its, e.var, "1", k)
        j = 0
        for level_read, clev_read, domain, before in _source_reads(e):
            updates = [
                *([] if alone else [f"${level_run}$ = max(${level_run}$, {level_read} + 1);"]),
                f"${clev_run}$ = max(${clev_run}$, {_crossing(e.src, block_run, clev_read)});",
                f"${new_run}$ = max(${new_run}$, {clev_read} + 1);",
                *([f"${near_run}$ = 1;"] if before else []),
                *([] if alone else [f"${work_run}$ += 1;"]),
            ]
            for body in updates:
                insp = build.add_stmt(insp, body, domain, f"{{{prefix}, {j}]}}")
                j += 1
    kept = (None, None) if alone else (level_run, work_run)
    after = _run_block_stores(node, (kept[0], clev_run, kept[1], new_run, near_run), flag=True)
    after += [f"${level_prev}$ = ${level_run}$;"] if not alone else []
    after.append(f"${clev_prev}$ = ${clev_run}$;")
    for j, body in enumerate(after):
        insp = build.add_stmt(
            insp, body, rows, f"{{[{loop}] -> [1, {loop}, {len(edges) + 1}, {j}]}}"
        )
    return insp


def _source_reads(e: _Edge) -> list[tuple[str, str, str, bool]]:
    """How the run-block pass reads the level and the coarse level of edge ``e``'s source,
    each pair with the instances it serves (set text) and whether those are the edges from
    the row before: from the arrays where the source lies before the row before, from the
    locals :data:`PREV_LOCALS` where it is the row before (:func:`_pass_in_run_blocks`)."""
    level_prev, clev_prev = PREV_LOCALS
    far = with_constraint(e.text, f"({e.src}) + 1 < ({e.snk})")
    near = with_constraint(e.text, f"({e.src}) + 1 = ({e.snk})")
    return [
        (f"${LEVEL}$({e.src})", f"${CLEV}$({e.src})", far, False),
        (f"${level_prev}$", f"${clev_prev}$", near, True),
    ]


def _crossing(src: str, block_run: str, clev: str | None = None) -> str:
    """What an edge from ``src`` adds to the running maximum of the coarse levels, plus one,
    of a row's sources outside its run block (``block_run``: the block's first row): 0 for
    a source inside it (:func:`_pass_in_run_blocks`). A mask (``& -(src < block)``), not a
    select: gcc (12, ``-O2``) keeps the pass's chains of 32-bit maxima in SSE registers (its
    scalar-to-vector pass), and a select's value, needed in a general register for the
    ``cmov``, reached them through a 4-byte store and a 16-byte load of one stack slot, a
    store-forwarding stall per dependence: the joint pass over Poisson's 1M rows took
    ~1.5 serial solves with the select and ~0.55 with the mask, over the 12-level
    triangle's ~1.9 and ~1.6 (C, docs/inspection.md). The same values (a coarse level plus
    one is at least 1, so the mask's 0 is the select's). ``clev``: the source's coarse level
    as the pass reads it (default ``clev(src)``; a local for the row before,
    :func:`_source_reads`)."""
    value = f"${CLEV}$({src})" if clev is None else clev
    return f"(({value} + 1) & -(({src}) < ${block_run}$))"


def _run_block_stores(
    node: str, runs: tuple[str | None, str, str | None, str, str], flag: bool = False
) -> list[str]:
    """What the run-block pass does after a node's edges, given its locals (level, coarse
    level, work, begun, near): whether it had an edge from the row before (unless ``flag``:
    ``near`` already says so, set by the edges from the row before, where it is else the
    highest source + 1), its coarse level chosen, the stretch's start carried, its level,
    coarse level and work stored (the level and the work unless None: the coarse levels
    alone, :func:`build_split_passes`)."""
    level_run, clev_run, work_run, new_run, near_run = runs
    return [
        *([] if flag else [f"${near_run}$ = ${near_run}$ == ({node});"]),
        f"${clev_run}$ = ${near_run}$ ? max(${new_run}$ - 1, ${clev_run}$) : ${new_run}$;",
        f"${SEGMENT}$ = ${near_run}$ ? ${SEGMENT}$ : ({node});",
        *([f"${LEVEL}$({node}) = ${level_run}$;"] if level_run is not None else []),
        f"${CLEV}$({node}) = ${clev_run}$;",
        *([f"${WORK}$({node}) = ${work_run}$ + 1;"] if work_run is not None else []),
    ]


def _edges_into_locals(
    insp: ComputationIR,
    analysis: WavefrontAnalysis,
    edges: list[tuple[int, _Edge]],
    coarse: list[tuple[str, str, str]],
    runs: list[str],
) -> ComputationIR:
    """The updates of ``edges`` (one kernel's pull edges, each with its place among the
    loop's edges) into that kernel's locals."""
    for k, e in edges:
        updates = [f"${runs[0]}$ = max(${runs[0]}$, $level$({e.src}) + 1);"]
        for (clev, _, shift), run in zip(coarse, runs[1:-1], strict=True):
            step = e.step.replace(BLOCK, shift)
            updates.append(f"${run}$ = max(${run}$, ${clev}$({e.src}) + ({step}));")
        updates.append(f"${runs[-1]}$ += 1;")
        stage = "1" if analysis.groups == 1 else f"1, {e.group}"
        prefix = _schedule(e.its, e.var, stage, k)
        for j, body in enumerate(updates):
            insp = build.add_stmt(insp, body, e.text, f"{{{prefix}, {j}]}}")
    return insp


def zeroes_in_pass(analysis: WavefrontAnalysis) -> bool:
    """Whether :func:`build_coarse_inspector`'s pass sets each node's levels to 0 itself
    (no push edge: every raise of a node's level comes from its own pull edges, which run
    after its start), so the caller need not zero them."""
    return not any(e.push for e in analysis.edges)


def node_uf(insp: ComputationIR, name: str, nodes: str, bound: str, dtype: str) -> ComputationIR:
    """``insp`` with the UF ``name`` of one node (``[0, nodes)``) valued in ``[0, bound)``, of
    ``dtype`` (``"int32"`` or ``"int64"``): an array the caller fills per node."""
    return build.declare_uf(
        insp,
        name,
        arity=1,
        domain=f"{{[x]: 0 <= x < {nodes}}}",
        range=f"{{[y]: 0 <= y < {bound}}}",
        dtype=dtype,
    )


def build_part_check(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The check of a plan's parts against the dependences: reads ``coarse_part_of`` (each
    row's part), ``coarse_level_of`` (each row's coarse level) and ``coarse_pos_in_order``
    (each row's position in the plan's order) as UFs and writes ``coarse_bad`` (0-d, zeroed
    by the caller): the number of dependence instances that join two parts of one coarse
    level, go to an earlier coarse level, or go back within one part (a part whose rows
    increase never does: every edge goes to a later row; a part that interleaves a free
    kernel's rows, :mod:`spf.runtime.interleave`, is checked by position)."""
    _fresh_names(ir, analysis, (PART_OF, LEVEL_OF, POS_OF, BAD))
    check = build.computation(f"{ir.name}_coarse_check_{analysis.loop}")
    check = _copy_declarations(ir, check)
    for name in (PART_OF, LEVEL_OF, POS_OF):
        check = node_uf(check, name, analysis.nodes, analysis.nodes, "int64")
    check = build.add_data_space(check, BAD, "int64_t", ())
    for k, e in enumerate(_edges(analysis)):
        body = (
            f"${BAD}$ += ({PART_OF}({e.src}) != {PART_OF}({e.snk})) * "
            f"({LEVEL_OF}({e.src}) >= {LEVEL_OF}({e.snk})) + "
            f"({PART_OF}({e.src}) == {PART_OF}({e.snk})) * "
            f"({POS_OF}({e.src}) >= {POS_OF}({e.snk}));"
        )
        stage = "0" if analysis.groups == 1 else f"0, {e.group}"
        check = build.add_stmt(check, body, e.text, f"{{{_schedule(e.its, e.var, stage, k)}]}}")
    return check


SINK_POS = "coarse_pos_of"
SINK_KEY = "coarse_key_of"
LAST_POS = "coarse_last_pos"
LAST_KEY = "coarse_last_key"
"""The arrays of :func:`build_sink_pass`: each node's position in a plan's order and its key
(read at the source of each edge), and, per sink, the maxima of both over its sources."""


def feeds_free(analysis: WavefrontAnalysis, free: tuple[bool, ...]) -> bool:
    """Whether an edge enters a node of a ``free`` kernel (:func:`free_kernels`): where none
    does (a kernel fused beside the others that reads nothing they write), no free node has
    a source to run after, and :func:`build_sink_pass` would have no statement."""
    return any(free[e.snk_group] for e in _edges(analysis))


def build_sink_pass(
    ir: ComputationIR, analysis: WavefrontAnalysis, free: tuple[bool, ...]
) -> ComputationIR:
    """Where a plan's parts may run each node of a ``free`` kernel fused into the loop
    (:func:`free_kernels`): over the edges into those nodes only, reads ``coarse_pos_of``
    (each node's position in the plan's order) and ``coarse_key_of`` (its coarse level times
    ``nodes + 1`` less its position) at the source, and writes per sink the greatest of
    each over its sources, ``coarse_last_pos`` and ``coarse_last_key`` (all 64-bit, the
    outputs filled by the caller with -1 and the least ``int64``). The last source's part and
    the coarse level of the latest sources, with the first position of a source at that
    level, say whether every source at that level lies in one part
    (:func:`spf.runtime.interleave.interleave`). O(those edges), no edge of another kernel read."""
    _fresh_names(ir, analysis, (SINK_POS, SINK_KEY, LAST_POS, LAST_KEY))
    arrays = tuple((name, "int64_t") for name in (SINK_POS, SINK_KEY, LAST_POS, LAST_KEY))
    sink = _declare(ir, analysis, "sinks", arrays)
    for k, e in enumerate(_edges(analysis)):
        if not free[e.snk_group]:
            continue
        updates = (
            f"${LAST_POS}$({e.snk}) = max(${LAST_POS}$({e.snk}), ${SINK_POS}$({e.src}));",
            f"${LAST_KEY}$({e.snk}) = max(${LAST_KEY}$({e.snk}), ${SINK_KEY}$({e.src}));",
        )
        stage = "0" if analysis.groups == 1 else f"0, {e.group}"
        prefix = _schedule(e.its, e.var, stage, k)
        for j, body in enumerate(updates):
            sink = build.add_stmt(sink, body, e.text, f"{{{prefix}, {j}]}}")
    return sink


CLEVPTR = "clevptr"
CSLOT = "cslot"
CORDER = "corder"
WSUM = "wsum"
"""The coarse levels' counting sort (:func:`build_pair_sort`) and the prefix sums of
``work`` in that order, which the parts are cut by."""
LEVELS_N = "coarse_nlev"
CLEVELS_N = "coarse_nclev"
"""The parameters bounding the prefix sums of the sort (``nlevels`` and ``nclev``): the
sums run over the levels, not over every node."""
SORT_NAMES = (CLEVPTR, CSLOT, CORDER, WSUM, LEVELS_N, CLEVELS_N)


CLEV_WIDE = "clev_wide"
NCLEV_WIDE = "nclev_wide"
BLOCK_WIDE = "coarse_shift_wide"
WIDE_NAMES = (CLEV_WIDE, NCLEV_WIDE, BLOCK_WIDE)
"""The second candidate's coarse levels (blocks of ``2**coarse_shift_wide`` rows), computed
in the same pass when kernels fused into the loop include a free one."""


def _node_ufs(analysis: WavefrontAnalysis) -> tuple[dict[str, str], dict[str, str]]:
    """The declarations of a sort stage's UFs over the nodes (each node to a node): 64-bit
    (an order), and :data:`LEVEL_TYPE` (levels, slots)."""
    v, n = analysis.var, analysis.nodes
    ranged = {
        "domain": f"{{[{v}]: 0 <= {v} < {n}}}",
        "range": f"{{[x]: 0 <= x < {n}}}",
        "dtype": "int64",
    }
    return ranged, {**ranged, "dtype": LEVEL_TYPE.removesuffix("_t")}


def build_pair_sort(
    analysis: WavefrontAnalysis, name: str
) -> tuple[ComputationIR, ComputationIR, ComputationIR]:
    """The counting sort of the nodes by ``clev`` (stable), with the sizes of the levels
    counted in the same pass, as three computations, IRs (each reads the one before's output
    as a UF). ``<name>_pair_count`` reads ``level`` and ``clev`` (32-bit) as UFs and the
    parameters
    ``coarse_nlev`` and ``coarse_nclev`` (the counts of levels and coarse levels); it writes
    ``levelptr`` (the prefix sums of the level sizes: its first ``nlevels + 1`` entries),
    ``clevptr`` and each node's place in coarse-level order (``cslot``: its coarse level's
    start, which it then advances by one, so ``clevptr(c)`` ends as the start of ``c + 1``
    and the caller shifts the first ``nclev`` entries up by one, O(levels); no fill array
    read and written beside it); ``levelptr`` and ``clevptr`` are zeroed by the caller
    (both copies).
    ``<name>_pair_order`` writes ``corder``; ``<name>_pair_sums`` reads it and writes
    ``wsum``, the prefix sums of ``work`` in coarse-level order (``wsum(p)``: the work of the
    first ``p`` nodes of ``corder``; ``wsum(0) = 0`` set by the caller), in one pass
    that reads ``work`` through ``corder``: its nodes run in stretches of consecutive rows
    (a coarse level's block), so the reads are near sequential, where scattering ``work``
    to its slots and a prefix pass after it cost two passes (on 2-D Poisson, 1M rows, in C:
    0.42 solves against 0.69). The nodes are not sorted by level: a coarse plan runs
    without that order, and :meth:`spf.runtime.plan.Plan.order` sorts them when it is first
    read.

    The count loops take :data:`COUNT_WAYS` (4) nodes an iteration (``4v`` to ``4v + 3``),
    so that a run of nodes with one coarse level (a block of consecutive rows, 128 of them
    on 2-D Poisson) waits on one store to that level's counter per four nodes, not per
    node: the sizes are counted in four copies (``levelptr`` and ``clevptr`` hold
    ``4 * (levels + 1)`` entries, :func:`count_entries`; node ``4v + j``'s counts in copy
    ``j``, summed by the prefix loops; the caller reads the first ``levels + 1``), and all
    four nodes' slots are read before any advances its level's start (node ``j``'s slot one
    further for each earlier node of the four in its coarse level). On the 1M-row Poisson
    triangle (one thread, CPU time, loaded machine) the stage took 0.36-0.39 serial solves
    against 0.45-0.47 with two nodes an iteration; on the 12-level triangle, whose keys
    seldom repeat from node to node, hand-written C of both ran the same."""
    v, n = analysis.var, analysis.nodes
    ranged, small = _node_ufs(analysis)
    dom = f"{{[{v}]: 0 <= {v} < {n}}}"
    count = _count_stage(
        analysis,
        f"{name}_pair_count",
        ((LEVEL, "levelptr", LEVELS_N), (CLEV, CLEVPTR, CLEVELS_N)),
    )
    order = build.computation(f"{name}_pair_order")
    order = build.declare_uf(order, CSLOT, **small)
    order = build.add_data_space(order, CORDER, "int64_t", (n,))
    order = build.add_stmt(
        order, f"${CORDER}$({CSLOT}({v})) = {v};", dom, f"{{[{v}] -> [0, {v}, 0]}}"
    )
    sums = build.declare_uf(build.computation(f"{name}_pair_sums"), CORDER, **ranged)
    sums = build.add_data_space(sums, WORK, "int64_t", (n,))
    sums = build.add_data_space(sums, WSUM, "int64_t", (f"{n} + 1",))
    body = f"${WSUM}$({v} + 1) = ${WSUM}$({v}) + ${WORK}$({CORDER}({v}));"
    sums = build.add_stmt(sums, body, dom, f"{{[{v}] -> [0, {v}, 0]}}")
    return count, order, sums


COUNT_WAYS = 4
"""The nodes one iteration of a count stage takes (:func:`_count_stage`): each histogram is
kept in this many copies and each coarse level's running start is read and stored once per
this many nodes."""


def count_entries(keys: int) -> int:
    """The entries of a count stage's pointer array for ``keys`` values (its
    :data:`COUNT_WAYS` copies of ``keys + 1``), zeroed by the caller."""
    return COUNT_WAYS * (keys + 1)


def _count_stage(
    analysis: WavefrontAnalysis, name: str, keyed: tuple[tuple[str, str, str], ...]
) -> ComputationIR:
    """A count stage: per (key, pointer, count) of ``keyed`` the histogram of the key (in
    :data:`COUNT_WAYS` copies, as :func:`build_pair_sort` says) and its prefix sums, then
    each node's slot by the last key (``clev``, ``clevptr``)."""
    v, n = analysis.var, analysis.nodes
    ways = COUNT_WAYS
    small = _node_ufs(analysis)[1]
    count = build.computation(name)
    for key, _, _ in keyed:
        count = build.declare_uf(count, key, **small)
    for _, ptr, bound in keyed:
        count = build.add_data_space(count, ptr, "int64_t", (f"{ways} * {bound} + {ways}",))
    count = build.add_data_space(count, CSLOT, LEVEL_TYPE, (n,))
    node = _way_nodes(v)
    # node j of an iteration (``ways * v + j``) exists when it is below n
    domain = [f"{{[{v}]: 0 <= {v} && {node[j]} < {n}}}" for j in range(ways)]
    # each histogram in copies, node j of an iteration counted in copy j: a run of nodes
    # with one key (a coarse level's block) adds to each copy every ways-th node, so an add
    # no longer waits on the one just before
    for k, (key, ptr, bound) in enumerate(keyed):
        for j in range(ways):
            at = (
                f"{key}({node[j]}) + 1" if j == 0 else f"{j} * {bound} + {j + 1} + {key}({node[j]})"
            )
            count = build.add_stmt(
                count, f"${ptr}$({at}) += 1;", domain[j], f"{{[{v}] -> [0, {v}, {ways * k + j}]}}"
            )
        copies = " + ".join(
            [f"${ptr}$({v})"] + [f"${ptr}$({j} * {bound} + {j + 1} + {v})" for j in range(1, ways)]
        )
        count = build.add_stmt(
            count,
            f"${ptr}$({v} + 1) += {copies};",
            f"{{[{v}]: 0 <= {v} < {n} && {v} < {bound}}}",
            f"{{[{v}] -> [{1 + k}, {v}, 0]}}",
        )
    return _add_slots(count, v, CLEVPTR, domain, 1 + len(keyed))


def _way_nodes(v: str) -> list[str]:
    """The nodes of iteration ``v`` of a count stage (:data:`COUNT_WAYS` of them)."""
    return [f"{COUNT_WAYS} * {v}" + (f" + {j}" if j else "") for j in range(COUNT_WAYS)]


def _add_slots(
    count: ComputationIR, v: str, starts: str, domain: list[str], stage: int
) -> ComputationIR:
    """``count`` with the slot (``cslot``) of each node of iteration ``v`` taken from its
    coarse level's running start in ``starts``, which it advances: ``starts(c)`` ends at
    the start of ``c + 1``. All the iteration's starts are read before any is stored: node
    ``j``'s slot is its level's start plus the earlier nodes of the iteration at that
    level, and the stores, in node order, leave each level at its last node's slot + 1. A
    coarse level's run of nodes then waits on one store per :data:`COUNT_WAYS` nodes.
    ``domain``: where each node exists."""
    node = _way_nodes(v)
    at = [f"{CLEV}({x})" for x in node]
    slots = []
    for j, x in enumerate(node):
        same = "".join(f" + ({at[i]} == {at[j]})" for i in range(j))
        slots.append((f"${CSLOT}$({x}) = ${starts}$({at[j]}){same};", j))
    slots += [(f"${starts}$({at[j]}) = ${CSLOT}$({x}) + 1;", j) for j, x in enumerate(node)]
    for k, (body, j) in enumerate(slots):
        count = build.add_stmt(count, body, domain[j], f"{{[{v}] -> [{stage}, {v}, {k}]}}")
    return count


SORT_LO = "sort_lo"
SORT_HI = "sort_hi"
"""The parameters of :func:`build_ranged_sort`'s stages: the positions ``[sort_lo,
sort_hi)`` one call covers."""


def build_ranged_sort(
    analysis: WavefrontAnalysis, name: str
) -> tuple[ComputationIR, ComputationIR]:
    """:func:`build_pair_sort`'s order and sums stages over the positions ``sort_lo <= v <
    sort_hi`` alone, so that two threads run one half each: ``<name>_order`` writes
    ``corder(cslot(v)) = v`` (the slots are a permutation: the halves write disjoint
    entries), ``<name>_sums`` writes ``wsum(v + 1)``, the sum of ``work`` over the range's
    first positions up to ``v`` (from 0 at ``sort_lo``: it reads nothing the other half
    writes), to which the caller adds the sum before the range (``wsum(sort_lo)``) once
    both halves are done. Integer sums: the same values as the one pass."""
    v, n = analysis.var, analysis.nodes
    ranged, small = _node_ufs(analysis)
    span = f"0 <= {SORT_LO} <= {v} < {SORT_HI} <= {n}"
    order = build.declare_uf(build.computation(f"{name}_order"), CSLOT, **small)
    order = build.add_data_space(order, CORDER, "int64_t", (n,))
    order = build.add_stmt(
        order, f"${CORDER}$({CSLOT}({v})) = {v};", f"{{[{v}]: {span}}}", f"{{[{v}] -> [0, {v}, 0]}}"
    )
    sums = build.declare_uf(build.computation(f"{name}_sums"), CORDER, **ranged)
    sums = build.add_data_space(sums, WORK, "int64_t", (n,))
    sums = build.add_data_space(sums, WSUM, "int64_t", (f"{n} + 1",))
    first = f"${WSUM}$({v} + 1) = ${WORK}$({CORDER}({v}));"
    sums = build.add_stmt(
        sums, first, f"{{[{v}]: {span} && {v} = {SORT_LO}}}", f"{{[{v}] -> [0, {v}, 0]}}"
    )
    rest = f"${WSUM}$({v} + 1) = ${WSUM}$({v}) + ${WORK}$({CORDER}({v}));"
    return order, build.add_stmt(
        sums, rest, f"{{[{v}]: {span} && {v} > {SORT_LO}}}", f"{{[{v}] -> [0, {v}, 1]}}"
    )


RUN_FIRST = "run_first"
RUN_LEN = "run_len"
RUN_AT = "run_at"
RUN_WORK = "run_work"
RUN_TOP = "run_top"
RUNS_N = "coarse_runs"
RUN_LO = "run_lo"
RUN_HI = "run_hi"
"""The arrays and parameters of :func:`build_run_fill`: per run of nodes (in node order),
its first node, its number of nodes, its first position in coarse-level order, its
work and its largest work of a node; the runs ``[run_lo, run_hi)`` one call fills."""


def build_run_fill(analysis: WavefrontAnalysis, name: str) -> ComputationIR:
    """The coarse-level order written from its runs (:mod:`spf.runtime.coarse_runs`): reads
    ``run_first``, ``run_len`` and ``run_at`` as UFs and ``work``; for each run ``run_lo <=
    r < run_hi``, its ``run_len(r)`` nodes from ``run_first(r)`` on, writes ``corder(run_at(r)
    + v) = run_first(r) + v`` and ``run_work(r)``, the sum of ``work`` over the run's nodes
    (in a local private to the run, stored after it), and ``run_top(r)``, the largest
    ``work`` of one of its nodes (which spares the cuts most reads of the runs they fall
    in: :func:`spf.runtime.coarse_runs.split_runs`). A coarse level's rows are runs of
    consecutive nodes (a run block's rows at one coarse level), so the order is written
    and the work read run by run, no slot read per node. The caller passes the runs in node
    order (their positions ``run_at`` in coarse-level order): the work, written by the pass
    a few milliseconds before, is then read in sequence, and only the order's writes jump
    from run to run (on Poisson 1M, one thread, the whole inspection 0.013-0.04 serial
    solves less than with the runs in coarse-level order, five processes; docs/inspection.md).
    Two threads fill one range of runs each (the ranges write disjoint entries). The order is
    written in 32 bits (the coarse inspector levels at most ``2**31 - 1`` nodes), the width
    the executor reads it in: the plan holds it as it is and widens ``coarse_order`` only when
    a caller reads it (:data:`spf.runtime.plan.NARROW_ORDER`)."""
    v, n = analysis.var, analysis.nodes
    r = f"{v}_run"
    fill = build.computation(name)
    ends = (RUNS_N, f"{n} + 1")  # a length or a position: one entry more than a node
    fill = _declare_ufs(fill, ((RUN_FIRST, RUNS_N, n), (RUN_LEN, *ends), (RUN_AT, *ends)))
    fill = build.add_data_space(fill, WORK, "int64_t", (n,))
    fill = build.add_data_space(fill, CORDER, "int32_t", (n,))  # the executor's width
    fill = build.add_data_space(fill, RUN_WORK, "int64_t", (RUNS_N,))
    fill = build.add_data_space(fill, RUN_TOP, "int64_t", (RUNS_N,))
    fill = _private_local(fill, "run_sum", "int64_t", r)
    fill = _private_local(fill, "run_most", "int64_t", r)  # from 0: every work is 1 or more
    runs = f"0 <= {RUN_LO} <= {r} < {RUN_HI} <= {RUNS_N}"
    domain = f"{{[{r}, {v}]: {runs} && 0 <= {v} < {RUN_LEN}({r})}}"
    node = f"{RUN_FIRST}({r}) + {v}"
    bodies = (
        f"${CORDER}$({RUN_AT}({r}) + {v}) = {node};",
        f"$run_sum$ += ${WORK}$({node});",
        f"$run_most$ = max($run_most$, ${WORK}$({node}));",
    )
    for j, body in enumerate(bodies):
        fill = build.add_stmt(fill, body, domain, f"{{[{r}, {v}] -> [0, {r}, 0, {v}, {j}]}}")
    stores = (f"${RUN_WORK}$({r}) = $run_sum$;", f"${RUN_TOP}$({r}) = $run_most$;")
    for j, store in enumerate(stores):
        after = f"{{[{r}] -> [0, {r}, 1, 0, {j}]}}"
        fill = build.add_stmt(fill, store, f"{{[{r}]: {runs}}}", after)
    return fill


def _declare_ufs(stage: ComputationIR, ufs: tuple[tuple[str, str, str], ...]) -> ComputationIR:
    """``stage`` with the 64-bit UFs ``ufs`` (name, the bounds of its domain and of its
    range: ``0 <= x < domain``, ``0 <= y < range``)."""
    for name, domain, upto in ufs:
        stage = build.declare_uf(
            stage,
            name,
            domain=f"{{[x]: 0 <= x < {domain}}}",
            range=f"{{[y]: 0 <= y < {upto}}}",
            dtype="int64",
        )
    return stage


REACH_FIRST = "reach_first"
REACH_LEN = "reach_len"
REACH_SHARE = "reach_share"
REACH_GOT = "reach_got"
REACH_N = "coarse_reaches"
"""The arrays and parameter of :func:`build_run_reach`."""


def build_run_reach(analysis: WavefrontAnalysis, name: str) -> ComputationIR:
    """Where a part's cut falls inside a run (:func:`spf.runtime.coarse_runs.split_runs`):
    for each of ``coarse_reaches`` runs (``reach_first``: its first node, ``reach_len``:
    its nodes, UFs) the least prefix sum of ``work`` along it that reaches
    ``reach_share``, into ``reach_got`` (the largest ``int64`` when none does; the caller
    asks only where some prefix sum does). O(the nodes of those runs).

    The running prefix sum and the best one so far are locals private to the run, the
    best kept as its distance below the largest ``int64`` (``reach_far``, which a local's
    start at 0 and a ``max`` give) and stored once after the run: updated in
    ``reach_got`` itself, gcc stored it and loaded it again on every node."""
    v, n = analysis.var, analysis.nodes
    k = f"{v}_cut"
    reach = build.computation(name)
    reach = _declare_ufs(reach, ((REACH_FIRST, REACH_N, n), (REACH_LEN, REACH_N, f"{n} + 1")))
    reach = build.add_data_space(reach, WORK, "int64_t", (n,))
    for space in (REACH_SHARE, REACH_GOT):
        reach = build.add_data_space(reach, space, "int64_t", (REACH_N,))
    reach = _private_local(reach, "reach_sum", "int64_t", k)
    reach = _private_local(reach, "reach_far", "int64_t", k)
    domain = f"{{[{k}, {v}]: 0 <= {k} < {REACH_N} && 0 <= {v} < {REACH_LEN}({k})}}"
    bodies = (
        f"$reach_sum$ += ${WORK}$({REACH_FIRST}({k}) + {v});",
        f"$reach_far$ = max($reach_far$, $reach_sum$ >= ${REACH_SHARE}$({k}) ? "
        f"{_INT64_MAX} - $reach_sum$ : 0);",
    )
    for j, body in enumerate(bodies):
        reach = build.add_stmt(reach, body, domain, f"{{[{k}, {v}] -> [0, {k}, 0, {v}, {j}]}}")
    store = f"${REACH_GOT}$({k}) = {_INT64_MAX} - $reach_far$;"
    runs = f"{{[{k}]: 0 <= {k} < {REACH_N}}}"
    return build.add_stmt(reach, store, runs, f"{{[{k}] -> [0, {k}, 1, 0, 0]}}")


_INT64_MAX = "9223372036854775807"
"""The largest ``int64`` as a C literal (a ``long`` on the 64-bit targets spf builds for)."""


KHIST = "khist"
KSTART = "kstart"
"""The per-range histogram and starts of :func:`build_ranged_count`."""


def build_ranged_count(
    analysis: WavefrontAnalysis, name: str
) -> tuple[ComputationIR, ComputationIR]:
    """The stable counting sort's count by ``clev`` over the positions ``sort_lo <= v <
    sort_hi`` alone, so that two threads count one half each: ``<name>_hist`` adds each
    node's key to ``khist`` (zeroed by the caller, one array per range), ``<name>_slots``
    gives each node the running start of its key in ``kstart`` (the range's starts, which
    the caller takes from the halves' histograms: a key's start plus the first half's count
    of it for the second half) and advances it. The slots are those of
    :func:`build_pair_sort`'s count: the same stable order. Both take :data:`COUNT_WAYS`
    nodes an iteration as the count stage does (``khist`` holds that many copies of
    ``coarse_nclev`` entries, node ``4v + j``'s counts in copy ``j``, which the caller
    adds), so ``sort_lo`` must be a multiple of :data:`COUNT_WAYS` (an iteration's
    nodes then lie in one range)."""
    v, n = analysis.var, analysis.nodes
    small = _node_ufs(analysis)[1]
    node = _way_nodes(v)
    # from sort_lo on, a multiple of COUNT_WAYS: the loop's bound, one guard a node
    domain = [f"{{[{v}]: 0 <= {SORT_LO} <= {node[0]} && {x} < {SORT_HI} <= {n}}}" for x in node]
    hist = build.declare_uf(build.computation(f"{name}_hist"), CLEV, **small)
    hist = build.add_data_space(hist, KHIST, "int64_t", (f"{COUNT_WAYS} * {CLEVELS_N}",))
    for j, x in enumerate(node):
        at = f"{j} * {CLEVELS_N} + {CLEV}({x})" if j else f"{CLEV}({x})"
        hist = build.add_stmt(
            hist, f"${KHIST}$({at}) += 1;", domain[j], f"{{[{v}] -> [0, {v}, {j}]}}"
        )
    slots = build.declare_uf(build.computation(f"{name}_slots"), CLEV, **small)
    slots = build.add_data_space(slots, KSTART, "int64_t", (CLEVELS_N,))
    slots = build.add_data_space(slots, CSLOT, LEVEL_TYPE, (n,))
    return hist, _add_slots(slots, v, KSTART, domain, 0)


CLEV_FIXED = "clev_fixed"
NCLEV_FIXED = "nclev_fixed"
BLOCK_FIXED = "coarse_shift_fixed"
FIXED_NAMES = (CLEV_FIXED, NCLEV_FIXED, BLOCK_FIXED)
"""The coarse levels of fixed blocks of ``2**coarse_shift_fixed`` rows that the pass of
kernels fused into one loop computes beside its run blocks (:func:`fuses_run_blocks`): a
matrix whose rows seldom read the row before (a stiffness matrix) has short runs, and its
fixed blocks merge more levels."""


AFTER = "coarse_after"
"""Per node of kernels fused into one loop (:func:`_fused_pass_in_run_blocks`): a node of the
first kernel itself, a later kernel's node the highest ``coarse_after`` of its sources (0
without one): the first kernel's row after which every input of the node is final. Sorted
by it (stable: ties by node, and every edge goes from a smaller node to a larger one), the
nodes run on one thread with each later kernel's row right after the first kernel's row
that completes it (:data:`spf.runtime.plan.IN_ORDER`)."""


def uses_after(stage: ComputationIR) -> bool:
    """Whether the coarse pass ``stage`` writes :data:`AFTER`."""
    return any(d.name == AFTER for d in stage.data_spaces)


def fuses_run_blocks(insp: ComputationIR, analysis: WavefrontAnalysis, edges: list[_Edge]) -> bool:
    """Whether the pass of ``analysis``'s kernels fused into one loop grows run blocks
    (:func:`_fused_pass_in_run_blocks`): more than one kernel, the pass in locals
    (:func:`_runs_in_locals`) and its names free. It then also computes the fixed blocks'
    coarse levels (:data:`FIXED_NAMES`)."""
    return (
        analysis.groups > 1
        and _runs_in_locals(insp, analysis, edges, (LEVEL, CLEV))
        and _fused_run_names_free(insp, analysis)
    )


def _fused_run_locals(analysis: WavefrontAnalysis, g: int) -> list[str]:
    """Kernel ``g``'s private locals of :func:`_fused_pass_in_run_blocks`: its running
    level, coarse level, work, then :data:`RUN_LOCALS`, then the fixed-block candidates'
    levels."""
    names = (LEVEL, CLEV, WORK, *(r.removesuffix(RUN) for r in RUN_LOCALS), CLEV_WIDE, CLEV_FIXED)
    return [*_locals_of(analysis, names, g), *_locals_of(analysis, (AFTER,), g)]


def _fused_run_names_free(insp: ComputationIR, analysis: WavefrontAnalysis) -> bool:
    taken = {d.name for d in insp.data_spaces} | set(insp.params) | {u.name for u in insp.ufs}
    mine = {SEGMENT, *(x for g in range(analysis.groups) for x in _fused_run_locals(analysis, g))}
    return not taken & (mine | {AFTER})


def _fused_pass_in_run_blocks(
    insp: ComputationIR,
    analysis: WavefrontAnalysis,
    edges: list[_Edge],
    fixed: list[tuple[str, str, str]],
) -> ComputationIR:
    """:func:`_pass_in_run_blocks` for kernels fused into one loop, kernel after kernel in
    program order (node ``g * extent + i``), each with its own private locals and one
    stretch start carried through all of them: inside a kernel a block is a run of rows each
    with an edge from the row before, as for one kernel; an edge between kernels always
    raises the coarse level (``clev(src) + 1``) and never joins a block (it does not count as
    the edge from the row before), so blocks never span two kernels and a free kernel's rows
    (no edge among them) are blocks of one row each. The same pass computes the coarse
    levels of the ``fixed`` candidates (coarse level, count, shift: ``clev_wide`` of
    ``2**coarse_shift_wide`` rows with a free kernel, ``clev_fixed``) as
    :func:`_pass_in_locals` does. The counts (``nlevels``, ``nclev``, ...) are left to the
    caller (the maxima of the stored arrays), and each node's :data:`AFTER`."""
    v, n = analysis.var, analysis.extent
    for shift in (BLOCK, *(f[2] for f in fixed)):
        insp = build.add_constant(insp, shift)
    insp = build.add_data_space(insp, SEGMENT, "int64_t", (), role="local")
    insp = build.add_data_space(insp, AFTER, LEVEL_TYPE, (analysis.nodes,))
    for g in range(analysis.groups):
        mine = [(k, e) for k, e in enumerate(edges, start=1) if e.group == g]
        loop = mine[0][1].var if mine else v
        level_run, clev_run, work_run, new_run, near_run, block_run, *others, after_run = (
            _fused_run_locals(analysis, g)
        )
        kept = [r for r, name in zip(others, (CLEV_WIDE, CLEV_FIXED), strict=True)
                if name in {f[0] for f in fixed}]  # fmt: skip
        runs = [level_run, clev_run, work_run, new_run, near_run, block_run]
        runs += [after_run] if g else []
        for run in runs + kept:
            ctype = "int64_t" if run in (work_run, block_run) else LEVEL_TYPE
            insp = _private_local(insp, run, ctype, loop)
        node = analysis.node(loop, g)
        rows = f"{{[{loop}]: 0 <= {loop} < {n}}}"
        first = f"${block_run}$ = ${SEGMENT}$ + ((({node}) - ${SEGMENT}$) >> {BLOCK} << {BLOCK});"
        insp = build.add_stmt(insp, first, rows, f"{{[{loop}] -> [1, {g}, {loop}, 0, 0]}}")
        for k, e in mine:
            within = e.step != "1"  # an edge inside the kernel (between kernels: "1")
            crossing = _crossing(e.src, block_run) if within else f"${CLEV}$({e.src}) + 1"
            updates = [
                f"${level_run}$ = max(${level_run}$, $level$({e.src}) + 1);",
                f"${clev_run}$ = max(${clev_run}$, {crossing});",
                f"${new_run}$ = max(${new_run}$, ${CLEV}$({e.src}) + 1);",
                *([f"${near_run}$ = max(${near_run}$, ({e.src}) + 1);"] if within else []),
                f"${work_run}$ += 1;",
                *([f"${after_run}$ = max(${after_run}$, ${AFTER}$({e.src}));"] if g else []),
            ]
            for (clev, _, shift), run in zip(fixed, kept, strict=True):
                step = e.step.replace(BLOCK, shift)
                updates.append(f"${run}$ = max(${run}$, ${clev}$({e.src}) + ({step}));")
            prefix = _schedule(e.its, e.var, f"1, {g}", k)
            for j, body in enumerate(updates):
                insp = build.add_stmt(insp, body, e.text, f"{{{prefix}, {j}]}}")
        after = _run_block_stores(node, (level_run, clev_run, work_run, new_run, near_run))
        after += [f"${f[0]}$({node}) = ${run}$;" for f, run in zip(fixed, kept, strict=True)]
        after.append(f"${AFTER}$({node}) = {f'${after_run}$' if g else loop};")
        for j, body in enumerate(after):
            insp = build.add_stmt(
                insp, body, rows, f"{{[{loop}] -> [1, {g}, {loop}, {len(edges) + 1}, {j}]}}"
            )
    return insp
