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

from typing import TYPE_CHECKING, NamedTuple

from spf.analysis.inspector import (
    LEVEL,
    NLEVELS,
    WavefrontAnalysis,
    _copy_declarations,
    edge_enumeration,
)
from spf.errors import SpfError
from spf.ir import build

if TYPE_CHECKING:
    from spf.ir import ComputationIR

CLEV = "clev"
NCLEV = "nclev"
WORK = "work"
BLOCK = "coarse_shift"
"""The parameter holding ``log2 B`` (rows per block ``B``)."""
PART_OF = "coarse_part_of"
LEVEL_OF = "coarse_level_of"
BAD = "coarse_bad"


def _fresh_names(ir: ComputationIR, analysis: WavefrontAnalysis, names: tuple[str, ...]) -> None:
    taken = set(ir.params) | {u.name for u in ir.ufs} | {d.name for d in ir.data_spaces}
    for name in names:
        if name in taken:
            raise SpfError(
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
        out.append(_Edge(text, its, src, snk, var, e.group, step))
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
    """The level and coarse-level stage: writes ``level``, ``nlevels``, ``clev``, ``nclev``
    (zeroed by the caller) and ``work``, reads ``coarse_shift`` (``log2`` of the rows per
    block). With ``wide``, the same pass also computes the coarse levels of blocks of
    ``2**coarse_shift_wide`` rows (``clev_wide``, ``nclev_wide``): the second candidate of
    kernels fused into one loop, without a second pass over the dependences. The counts
    (``nlevels``, ...) of a node are taken right after its own edges (pull edges into it,
    push edges from it), where its levels are final (every raise comes from an earlier
    node or from its own pull edges): no pass of their own. With kernels fused into the
    loop, iteration ``i`` of kernel ``g`` is node ``g * extent + i``
    (:attr:`WavefrontAnalysis.nodes`), visited in program order as by the level stage, so
    every edge goes from a smaller node to a larger one."""
    names = (LEVEL, NLEVELS, CLEV, NCLEV, WORK, BLOCK, *SORT_NAMES, *WIDE_NAMES)
    _fresh_names(ir, analysis, names)
    insp = build.computation(f"{ir.name}_coarse_inspector_{analysis.loop}")
    insp = _copy_declarations(ir, insp)
    v, n = analysis.var, analysis.extent
    coarse = [(CLEV, NCLEV, BLOCK)] + ([(CLEV_WIDE, NCLEV_WIDE, BLOCK_WIDE)] if wide else [])
    for name in (LEVEL, WORK, *(c[0] for c in coarse)):
        insp = build.add_data_space(insp, name, "int64_t", (analysis.nodes,))
    for name in (NLEVELS, *(c[1] for c in coarse)):
        insp = build.add_data_space(insp, name, "int64_t", ())
    edges = _edges(analysis)
    shifts = " && ".join(f"{c[2]} >= 0" for c in coarse)
    for g in range(analysis.groups):  # a node's work starts at 1 right before its own edges
        stage = "1" if analysis.groups == 1 else f"1, {g}"
        insp = build.add_stmt(
            insp,
            f"$work$({analysis.node(v, g)}) = 1;",
            f"{{[{v}]: 0 <= {v} < {n} && {shifts}}}",
            f"{{[{v}] -> [{stage}, {v}, 0, 0]}}",
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


def build_part_check(ir: ComputationIR, analysis: WavefrontAnalysis) -> ComputationIR:
    """The check of a plan's parts against the dependences: reads ``coarse_part_of`` (each
    row's part) and ``coarse_level_of`` (each row's coarse level) as UFs and writes
    ``coarse_bad`` (0-d, zeroed by the caller): the number of dependence instances that join
    two parts of one coarse level or go to an earlier coarse level."""
    _fresh_names(ir, analysis, (PART_OF, LEVEL_OF, BAD))
    check = build.computation(f"{ir.name}_coarse_check_{analysis.loop}")
    check = _copy_declarations(ir, check)
    n = analysis.nodes
    for name in (PART_OF, LEVEL_OF):
        check = build.declare_uf(
            check,
            name,
            arity=1,
            domain=f"{{[x]: 0 <= x < {n}}}",
            range=f"{{[y]: 0 <= y < {n}}}",
            dtype="int64",
        )
    check = build.add_data_space(check, BAD, "int64_t", ())
    for k, e in enumerate(_edges(analysis)):
        body = (
            f"${BAD}$ += ({PART_OF}({e.src}) != {PART_OF}({e.snk})) * "
            f"({LEVEL_OF}({e.src}) >= {LEVEL_OF}({e.snk}));"
        )
        stage = "0" if analysis.groups == 1 else f"0, {e.group}"
        check = build.add_stmt(check, body, e.text, f"{{{_schedule(e.its, e.var, stage, k)}]}}")
    return check


CLEVPTR = "clevptr"
CSLOT = "cslot"
CFILL = "cfill"
CORDER = "corder"
WSUM = "wsum"
"""The coarse levels' counting sort (:func:`build_pair_sort`) and the prefix sums of
``work`` in that order, which the parts are cut by."""
LEVELS_N = "coarse_nlev"
CLEVELS_N = "coarse_nclev"
"""The parameters bounding the prefix sums of the sort (``nlevels`` and ``nclev``): the
sums run over the levels, not over every node."""
SORT_NAMES = (CLEVPTR, CSLOT, CFILL, CORDER, WSUM, LEVELS_N, CLEVELS_N)


CLEV_WIDE = "clev_wide"
NCLEV_WIDE = "nclev_wide"
BLOCK_WIDE = "coarse_shift_wide"
WIDE_NAMES = (CLEV_WIDE, NCLEV_WIDE, BLOCK_WIDE)
"""The second candidate's coarse levels (blocks of ``2**coarse_shift_wide`` rows), computed
in the same pass when kernels fused into the loop include a free one."""


def build_pair_sort(analysis: WavefrontAnalysis, name: str) -> tuple[ComputationIR, ComputationIR]:
    """The counting sort of the nodes by ``clev`` (stable), with the sizes of the levels
    counted in the same pass, as two computations, IRs (the second reads the first's slots as a
    UF). ``<name>_pair_count`` reads ``level`` and ``clev`` as UFs and the parameters
    ``coarse_nlev`` and ``coarse_nclev`` (the counts of levels and coarse levels); it writes
    ``levelptr`` (the prefix sums of the level sizes: its first ``nlevels + 1`` entries),
    ``clevptr`` (the same of the coarse levels), each node's place in coarse-level order
    (``cslot``) and the scratch ``cfill`` (``levelptr``, ``clevptr`` and ``cfill`` zeroed by
    the caller). ``<name>_pair_order`` writes ``corder`` and ``wsum``, the prefix sums of
    ``work`` in coarse-level order (``wsum(p)``: the work of the first ``p`` nodes of
    ``corder``). The nodes are not sorted by level: a coarse plan runs without that order,
    and :meth:`spf.runtime.plan.Plan.order` sorts them when it is first read."""
    v, n = analysis.var, analysis.nodes
    ranged = {
        "domain": f"{{[{v}]: 0 <= {v} < {n}}}",
        "range": f"{{[x]: 0 <= x < {n}}}",
        "dtype": "int64",
    }
    dom = f"{{[{v}]: 0 <= {v} < {n}}}"
    count = build.computation(f"{name}_pair_count")
    order = build.computation(f"{name}_pair_order")
    for key in (LEVEL, CLEV):
        count = build.declare_uf(count, key, **ranged)
    count = build.add_data_space(count, "levelptr", "int64_t", (f"{LEVELS_N} + 1",))
    count = build.add_data_space(count, CLEVPTR, "int64_t", (f"{CLEVELS_N} + 1",))
    count = build.add_data_space(count, CSLOT, "int64_t", (n,))
    count = build.add_data_space(count, CFILL, "int64_t", (CLEVELS_N,))
    for j, (key, ptr, bound) in enumerate(
        ((LEVEL, "levelptr", LEVELS_N), (CLEV, CLEVPTR, CLEVELS_N))
    ):
        count = build.add_stmt(
            count, f"${ptr}$({key}({v}) + 1) += 1;", dom, f"{{[{v}] -> [0, {v}, {j}]}}"
        )
        count = build.add_stmt(
            count,
            f"${ptr}$({v} + 1) += ${ptr}$({v});",
            f"{{[{v}]: 0 <= {v} < {n} && {v} < {bound}}}",
            f"{{[{v}] -> [{1 + j}, {v}, 0]}}",
        )
    count = build.add_stmt(
        count,
        f"${CSLOT}$({v}) = ${CLEVPTR}$({CLEV}({v})) + ${CFILL}$({CLEV}({v}));",
        dom,
        f"{{[{v}] -> [3, {v}, 0]}}",
    )
    count = build.add_stmt(count, f"${CFILL}$({CLEV}({v})) += 1;", dom, f"{{[{v}] -> [3, {v}, 1]}}")
    order = build.declare_uf(order, CSLOT, **ranged)
    order = build.add_data_space(order, CORDER, "int64_t", (n,))
    order = build.add_data_space(order, WORK, "int64_t", (n,))
    order = build.add_data_space(order, WSUM, "int64_t", (f"{n} + 1",))
    for j, body in enumerate(
        (f"${CORDER}$({CSLOT}({v})) = {v};", f"${WSUM}$({CSLOT}({v}) + 1) = ${WORK}$({v});")
    ):
        order = build.add_stmt(order, body, dom, f"{{[{v}] -> [0, {v}, {j}]}}")
    order = build.add_stmt(
        order, f"${WSUM}$({v} + 1) += ${WSUM}$({v});", dom, f"{{[{v}] -> [1, {v}, 0]}}"
    )
    return count, order
