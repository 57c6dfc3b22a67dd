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

from typing import TYPE_CHECKING

from spf.analysis.inspector import (
    LEVEL,
    NLEVELS,
    WavefrontAnalysis,
    _copy_declarations,
    edge_enumeration,
)
from spf.computation.statement import Stmt
from spf.errors import SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation

CLEV = "clev"
NCLEV = "nclev"
WORK = "work"
BLOCK = "coarse_shift"
"""The parameter holding ``log2 B`` (rows per block ``B``)."""
PART_OF = "coarse_part_of"
LEVEL_OF = "coarse_level_of"
BAD = "coarse_bad"


def _fresh_names(comp: Computation, analysis: WavefrontAnalysis, names: tuple[str, ...]) -> None:
    taken = set(comp.params) | set(comp.ufs) | set(comp.data_spaces)
    for name in names:
        if name in taken:
            raise SpfError(
                f"wavefront({analysis.loop!r}): the coarse inspector names an array {name!r}, "
                f"which {comp.name} already uses; rename that parameter, UF or data space"
            )


def _edges(analysis: WavefrontAnalysis) -> list[tuple[str, tuple[str, ...], str, str, bool]]:
    """Each edge's instances (set text), iterators, source and sink iteration (terms of the
    iterators) and whether it is a push edge; pull edges first."""
    out = []
    for e in [*(e for e in analysis.edges if not e.push), *(e for e in analysis.edges if e.push)]:
        text, its, other, var = edge_enumeration(e)
        src, snk = (var, other) if e.push else (other, var)
        out.append((text, its, src, snk, e.push))
    return out


def build_coarse_inspector(comp: Computation, analysis: WavefrontAnalysis) -> Computation:
    """The level and coarse-level stage: writes ``level``, ``nlevels``, ``clev``, ``nclev``
    (zeroed by the caller) and ``work``, reads ``coarse_shift`` (``log2`` of the rows per block)."""
    from spf.computation.computation import Computation as _Computation

    _fresh_names(comp, analysis, (LEVEL, NLEVELS, CLEV, NCLEV, WORK, BLOCK))
    insp = _Computation(f"{comp.name}_coarse_inspector_{analysis.loop}")
    _copy_declarations(comp, insp)
    v, n = analysis.var, analysis.extent
    for name in (LEVEL, CLEV, WORK):
        insp.add_data_space(name, "int64_t", shape=(n,))
    for name in (NLEVELS, NCLEV):
        insp.add_data_space(name, "int64_t", shape=())
    rows = f"{{[{v}]: 0 <= {v} < {n} && {BLOCK} >= 0}}"
    insp.add_stmt(Stmt(f"$work$({v}) = 1;", rows, f"{{[{v}] -> [0, {v}, 0]}}"))
    for k, (text, its, src, snk, push) in enumerate(_edges(analysis), start=1):
        var = src if push else snk
        rest = "".join(f", {x}, 0" for x in its if x != var)
        updates = (
            f"$level$({snk}) = max($level$({snk}), $level$({src}) + 1);",
            f"$clev$({snk}) = max($clev$({snk}), $clev$({src}) + "
            f"(({src}) >> {BLOCK} != ({snk}) >> {BLOCK}));",
            f"$work$({var}) += 1;",
        )
        for j, body in enumerate(updates):
            schedule = f"{{[{', '.join(its)}] -> [1, {var}, {k}{rest}, {j}]}}"
            insp.add_stmt(Stmt(body, text, schedule))
    for j, (total, per_row) in enumerate(((NLEVELS, LEVEL), (NCLEV, CLEV))):
        insp.add_stmt(
            Stmt(
                f"${total}$ = max(${total}$, ${per_row}$({v}) + 1);",
                f"{{[{v}]: 0 <= {v} < {n}}}",
                f"{{[{v}] -> [2, {v}, {j}]}}",
            )
        )
    return insp


def build_part_check(comp: Computation, analysis: WavefrontAnalysis) -> Computation:
    """The check of a plan's parts against the dependences: reads ``coarse_part_of`` (each
    row's part) and ``coarse_level_of`` (each row's coarse level) as UFs and writes
    ``coarse_bad`` (0-d, zeroed by the caller): the number of dependence instances that join
    two parts of one coarse level or go to an earlier coarse level."""
    from spf.computation.computation import Computation as _Computation

    _fresh_names(comp, analysis, (PART_OF, LEVEL_OF, BAD))
    check = _Computation(f"{comp.name}_coarse_check_{analysis.loop}")
    _copy_declarations(comp, check)
    n = analysis.extent
    for name in (PART_OF, LEVEL_OF):
        check.declare_uf(
            name,
            arity=1,
            domain=f"{{[x]: 0 <= x < {n}}}",
            range=f"{{[y]: 0 <= y < {n}}}",
            dtype="int64",
        )
    check.add_data_space(BAD, "int64_t", shape=())
    for k, (text, its, src, snk, push) in enumerate(_edges(analysis)):
        var = src if push else snk
        rest = "".join(f", {x}, 0" for x in its if x != var)
        body = (
            f"${BAD}$ += ({PART_OF}({src}) != {PART_OF}({snk})) * "
            f"({LEVEL_OF}({src}) >= {LEVEL_OF}({snk}));"
        )
        check.add_stmt(Stmt(body, text, f"{{[{', '.join(its)}] -> [{var}, {k}{rest}]}}"))
    return check
