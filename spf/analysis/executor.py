"""The executor of a computation with a wavefront loop: the computation (an IR) that runs.

A wavefront loop ``i`` (``comp.wavefront("i")``) becomes two loops, ``i_lev`` over the
levels the inspector found (sequential) and ``i_pos`` over the iterations of one level
(``levelptr_i(i_lev) <= i_pos < levelptr_i(i_lev + 1)``, run in parallel), with
``i = order_i(i_pos)``: the executor reads the inspector's output arrays as UFs. Its loops
carry the tags ``wavefront_levels`` and ``wavefront_rows`` (``wavefront_p2p`` for the
point-to-point method), which the C printer turns into one ``#pragma omp parallel`` region
around the level loop with a ``#pragma omp for`` per level (its implicit barrier orders the
levels). A level loop's groups may each be one level or a run of consecutive narrow levels
that one thread runs in order (``#pragma omp single``, chosen per group at run time by the
plan's flag array ``single_<loop>``): one barrier for the whole run instead of one per level.

``method="p2p"``: one loop ``i_pos`` over all iterations in level order, ``#pragma omp
parallel for schedule(static, 64)`` (chunks of neighbouring positions per thread: with
chunks of 1, neighbouring rows alternated threads and shared cache lines of ``u`` and the
flags; 64 ran ~1.4x faster on 2 threads), with ``i = order_i(i_pos)``; before its statements an
iteration waits on the flag ``done_i(src)`` of each source of each pull edge (the
inspector's edge enumeration, as ``wait`` operations with acquire loads) and after them sets
its own (a ``post``, release store). Push edges (a sink found only from its source, as
Gauss-Seidel's anti dependences) use a counter instead: a serial prologue sets
``pending_i(j)`` to minus the number of push edges into ``j``, each source adds one to its
targets' counters after its statements, and ``j`` waits until its counter is back to 0.
Every wait points to earlier positions and each thread takes its positions in increasing
order, so the earliest unfinished iteration can always run: no deadlock, and no barrier
between levels.

``method="coarse"`` and ``"auto"``: three loops, ``i_lev`` over the coarse levels (sequential,
one barrier each), ``i_part`` over the parts of one coarse level
(``levelptr_i(i_lev) <= i_part < levelptr_i(i_lev + 1)``, ``#pragma omp for schedule(static,
1)``: part ``r`` of a level on thread ``r % team``) and ``i_pos`` over the rows of one part,
in order, on that thread (``partptr_i(i_part) <= i_pos < partptr_i(i_part + 1)``), with
``i = order_i(i_pos)``. A coarse plan has one part per thread; a plan of the levels strategy
runs on it too (each level a coarse level, its parts contiguous chunks of the level: several
per thread of a large level, dealt round robin, :mod:`spf.runtime.level_parts`; a run of
narrow levels one part). :mod:`spf.runtime.coarse` builds the parts.

The executor is built from the computation's IR (:mod:`spf.ir.build`), so it keeps every
declaration, layout and assumption; statements outside the wavefront are copied unchanged.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import TYPE_CHECKING, Any

from spf.analysis.inspector import (
    WavefrontAnalysis,
    analyze_wavefront,
    kernel_groups,
    loop_iterator,
    wavefront_members,
)
from spf.errors import CodegenError, InternalError
from spf.ir import build
from spf.ir.reading import StmtReading, iterator_names

if TYPE_CHECKING:
    from spf.ir import ComputationIR, OperationIR, StmtIR
    from spf.ir.reading import ParsedStmt

LEVELS_TAG = "wavefront_levels"
ROWS_TAG = "wavefront_rows"
P2P_TAG = "wavefront_p2p"
COARSE_METHODS = ("coarse", "auto")
"""The methods whose executor runs coarse levels of parts (``i_lev``, ``i_part``, ``i_pos``)."""
PLAN_DTYPE = "int32"
"""The type the executor declares the plan's arrays in (``order``, the level, group and part
pointers, the group flags): a row's position is read once per row, beside its few entries,
and 32 bits halve that stream (docs/inspection.md, "32-bit plan arrays": on one thread, at
load 8-10, the coarse plan of 2-D Poisson 1M went from 1.26 to 1.03 of the serial solve's
CPU time; at load 22 the two widths measured alike). A plan of more positions than 32 bits
hold runs on the executor compiled with 64-bit plan arrays (:func:`plan_arrays_as`)."""
SINGLE_TAG = "wavefront_single"
"""``wavefront_single(<flag>)`` on the rows loop: the C test that runs a group on one thread."""
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class WavefrontNames:
    """The names the executor gives one wavefront loop's run-time arrays and loops."""

    loop: str
    method: str
    levelptr: str
    order: str
    nlevels: str
    lev: str
    pos: str
    done: str
    """``method="p2p"``: the flag array (one per iteration) of the point-to-point waits."""
    single: str
    """``method="levels"``: the flag array (one per group of levels): 1 runs it on one thread."""
    part: str = ""
    """``method="coarse"``/``"auto"``: the loop over the parts of a coarse level."""
    partptr: str = ""
    """``method="coarse"``/``"auto"``: part ``p`` runs ``order[partptr[p]:partptr[p+1]]``."""
    nparts: str = ""
    """``method="coarse"``/``"auto"``: the number of parts (``partptr`` has ``nparts + 1``
    entries)."""


@dataclass(frozen=True)
class Executor:
    """The executor (a computation's IR) and, per wavefront loop, its analysis and names."""

    ir: ComputationIR
    loops: tuple[tuple[WavefrontAnalysis, WavefrontNames], ...]


def wavefront_loops(ir: ComputationIR) -> dict[str, str]:
    """``{loop: method}`` of the loops tagged ``wavefront(<method>)`` in ``ir`` (a loop
    that kernels fused into share is named as its first statement names it)."""
    out: dict[str, str] = {}
    named: set[str] = set()
    for s in ir.parsed_stmts:
        for loop, tags in s.tags.items():
            for t in tags:
                if t.startswith("wavefront(") and t.endswith(")") and s.name not in named:
                    out[loop] = t[len("wavefront(") : -1]
                    named |= {m.name for m in wavefront_members(ir, loop)}
    return out


def wavefront_stmts(ir: ComputationIR, loop: str) -> list[ParsedStmt]:
    """The statements that run ``loop`` as a wavefront (under their own name for it when
    fused into its nest)."""
    return [
        s
        for s in wavefront_members(ir, loop)
        if any(t.startswith("wavefront") for t in s.tags.get(own_loop(s, loop), ()))
    ]


def own_loop(stmt: StmtReading, loop: str) -> str:
    """``stmt``'s name for the wavefront loop ``loop`` (its outermost loop when a fused
    kernel's statement names it otherwise)."""
    return loop if loop in stmt.loops else stmt.loops[0]


def wavefront_names(ir: ComputationIR) -> dict[str, WavefrontNames]:
    """The executor's names for each wavefront loop of ``ir`` (fresh: none clashes with a
    parameter, UF, data space or iterator of ``ir``)."""
    taken = set(ir.params) | {u.name for u in ir.ufs} | {d.name for d in ir.data_spaces}
    taken |= {v for s in ir.parsed_stmts for v in (*s.loops, *iterator_names(s.domain))}
    out = {}
    for loop, method in sorted(wavefront_loops(ir).items()):
        out[loop] = WavefrontNames(
            loop=loop,
            method=method,
            levelptr=_fresh(f"levelptr_{loop}", taken),
            order=_fresh(f"order_{loop}", taken),
            nlevels=_fresh(f"nlevels_{loop}", taken),
            lev=_fresh(f"{loop}_lev", taken),
            pos=_fresh(f"{loop}_pos", taken),
            done=_fresh(f"done_{loop}", taken),
            single=_fresh(f"single_{loop}", taken),
            part=_fresh(f"{loop}_part", taken),
            partptr=_fresh(f"partptr_{loop}", taken),
            nparts=_fresh(f"nparts_{loop}", taken),
        )
    return out


def _fresh(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        out, k = f"{name}{k}", k + 1
    taken.add(out)
    return out


def build_executor(ir: ComputationIR, target: str = "c") -> Executor:
    """The executor of the computation ``ir`` (whose wavefront loops are checked again)."""
    loops = wavefront_loops(ir)
    if not loops:
        raise InternalError(f"spf bug: {ir.name} has no wavefront loop")
    if target != "c":
        loop = sorted(loops)[0]
        raise CodegenError(
            f"loop {loop!r} of {ir.name} runs as a wavefront, which the {target!r} target "
            "does not generate; compile for target 'c' (OpenMP), or remove the wavefront"
        )
    all_names = wavefront_names(ir)
    out = []
    prologue: list[tuple[str, str, str]] = []
    executor = dataclasses.replace(ir, trace=())
    for loop in sorted(loops):
        stmts = wavefront_stmts(ir, loop)
        analysis = analyze_wavefront(ir, [s.name for s in stmts], loop)
        names = all_names[loop]
        n = analysis.nodes
        executor = _declare_run_time_arrays(executor, names, n)
        prefix: list[str] = []
        group = kernel_groups(stmts)
        for s in stmts:
            node = analysis.node(iterator_names(s.domain)[_position(s, loop)], group[s.name])
            entry = _entry(s.record)
            prefix = _rewrite(entry, ir, s.name, loop, names, n, node)
            executor = build.reschedule(
                executor,
                s.name,
                entry["domain"],
                entry["schedule"],
                tuple((ds, rel) for ds, rel in entry["reads"]),
                tuple((ds, rel) for ds, rel in entry["writes"]),
                tuple((k, tuple(v)) for k, v in sorted(entry["tags"].items())),
            )
        if names.method == "p2p":
            executor, pushed = _add_flags(executor, analysis, names, prefix)
            prologue += pushed
        out.append((analysis, names))
    for source, domain, schedule in prologue:
        executor = build.add_stmt(executor, source, domain, schedule)
    return Executor(executor, tuple(out))


def _entry(record: StmtIR | OperationIR) -> dict[str, Any]:
    """The fields of a statement's record that :func:`_rewrite` changes, as it edits them."""
    return {
        "domain": record.domain,
        "schedule": record.schedule,
        "current_schedule": record.current_schedule,
        "reads": [list(a) for a in record.reads],
        "writes": [list(a) for a in record.writes],
        "tags": {k: list(v) for k, v in record.tags},
    }


def _declare_run_time_arrays(ir: ComputationIR, names: WavefrontNames, n: str) -> ComputationIR:
    """``ir`` with the UFs the executor reads the inspector's arrays through and the bounds
    on the number of levels (and parts). The level pointers have ``nlevels + 1`` entries and
    the part pointers ``nparts + 1`` (the flags of a ``levels`` executor's groups
    ``nlevels``): a plan's arrays are sized by its levels and parts, not padded to the
    iterations (each padded entry was a write, and a fresh page a page fault, per
    inspection)."""
    ir = build.assume(ir, f"0 <= {names.nlevels} <= {n}")
    # name, the bound of its domain and of its values (None: a 0/1 flag), its order
    arrays: list[tuple[str, str, str | None, str | None]] = [
        (names.levelptr, f"<= {names.nlevels}", "<=", "nondecreasing"),
        (names.order, f"< {n}", "<", None),
    ]
    if names.method in COARSE_METHODS:
        arrays.append((names.partptr, f"<= {names.nparts}", "<=", "nondecreasing"))
        ir = build.assume(ir, f"0 <= {names.nparts} <= {n}")
    if names.method == "levels":
        arrays.append((names.single, f"< {names.nlevels}", None, None))
    for name, below, top, monotonic in arrays:
        ir = build.declare_uf(
            ir,
            name,
            arity=1,
            domain=f"{{[x] : 0 <= x && x {below}}}",
            range=f"{{[v] : 0 <= v && v {top} {n}}}" if top else "{[v] : 0 <= v && v <= 1}",
            monotonic=monotonic,
            dtype=PLAN_DTYPE,
        )
    return ir


def plan_arrays_as(ir: ComputationIR, names: WavefrontNames, dtype: str) -> ComputationIR:
    """The executor ``ir`` with the plan's arrays it reads (the level, group and part
    pointers, ``order``, the group flags) declared ``dtype``: ``"int64"`` for a plan whose
    positions do not fit :data:`PLAN_DTYPE` (:data:`spf.runtime.copies.NARROW_LIMIT`)."""
    plan = {names.levelptr, names.partptr, names.order, names.single}
    ufs = tuple(dataclasses.replace(u, dtype=dtype) if u.name in plan else u for u in ir.ufs)
    return dataclasses.replace(ir, ufs=ufs)


def _position(s: StmtReading, loop: str) -> int:
    return loop_iterator(s, own_loop(s, loop), f"wavefront({loop!r})")


def _rewrite(
    entry: dict[str, Any],
    ir: ComputationIR,
    stmt: str,
    loop: str,
    names: WavefrontNames,
    extent: str,
    node: str,
) -> list[str]:
    """Turn loop ``loop`` of one statement's JSON entry into ``lev``, ``pos`` (``pos``
    alone for ``p2p``), the iteration's ``node`` (its iterator, offset by its kernel's
    place when kernels were fused) read from ``order``; returns the schedule outputs
    before the loop."""
    s = ir.parsed_stmt(stmt)
    its = iterator_names(s.domain)
    q = _position(s, loop)
    ins = _schedule_inputs(s, its, names)
    outs = s.schedule.as_function(ins)
    if outs is None or outs.count(ins[q]) != 1:
        raise CodegenError(
            f"loop {loop!r} of statement {stmt} runs as a wavefront but its schedule "
            f"{s.schedule} is not a plain function of its iterators; schedule it with "
            "loop transformations that keep the outputs functions"
        )
    lev, pos, part = names.lev, names.pos, names.part
    at = outs.index(ins[q])
    p2p = names.method == "p2p"
    coarse = names.method in COARSE_METHODS
    new = [pos] if p2p else [lev, part, pos] if coarse else [lev, pos]
    kept, named = _named_outputs(s, outs)
    new_outs = [*kept[:at], *(f"{x}, 0" for x in new)] if not p2p else [*kept[:at], pos, "1"]
    new_outs += kept[at:]
    head = f"[{', '.join([*new, *its])}]"
    where = f" : {' && '.join(named)}" if named else ""
    schedule = f"{{[{', '.join([*new, *ins])}] -> [{', '.join(new_outs)}]{where}}}"
    entry["schedule"] = entry["current_schedule"] = schedule
    levels = f"0 <= {lev} && {lev} < {names.nlevels} && {names.levelptr}({lev}) <= "
    if p2p:
        guard = f"0 <= {pos} && {pos} < {extent} && {node} = {names.order}({pos})"
    elif coarse:
        guard = (
            f"{levels}{part} && {part} < {names.levelptr}({lev} + 1) && "
            f"{names.partptr}({part}) <= {pos} && {pos} < {names.partptr}({part} + 1) && "
            f"{node} = {names.order}({pos})"
        )
    else:
        guard = (
            f"{levels}{pos} && {pos} < {names.levelptr}({lev} + 1) && {node} = {names.order}({pos})"
        )
    pieces = []
    for piece in str(s.domain).split(" union "):
        m = re.match(r"^\{\[(.*?)\](?: : (.*))?\}$", piece)
        if m is None:
            raise InternalError(f"spf bug: cannot read the domain piece {piece!r}")
        cons = f" && {m.group(2)}" if m.group(2) else ""
        pieces.append(f"{{{head} : {guard}{cons}}}")
    entry["domain"] = " union ".join(pieces)
    for key in ("reads", "writes"):
        entry[key] = [[ds, rel.replace("{[", f"{{[{', '.join(new)}, ")] for ds, rel in entry[key]]
    tags = {k: [t for t in v if not t.startswith("wavefront")] for k, v in entry["tags"].items()}
    tags = {k: v for k, v in tags.items() if v}
    if p2p:
        tags[pos] = [P2P_TAG]
    elif coarse:
        tags[lev] = [LEVELS_TAG]
        tags[part] = [ROWS_TAG]
    else:
        tags[lev] = [LEVELS_TAG]
        tags[pos] = [ROWS_TAG, f"{SINGLE_TAG}({names.single}({lev}))"]
    entry["tags"] = tags
    return [str(o) for o in outs[:at]]


def _schedule_inputs(s: StmtReading, its: Sequence[str], names: WavefrontNames) -> list[str]:
    """The names of ``s``'s iterators in its executor schedule: the domain's, except one
    that a split, skewed or otherwise computed loop of ``s`` is named (``skew`` keeps the
    name ``k`` for ``k + j``), which is renamed so the loop keeps its name."""
    loops = set(_loop_names(s))
    taken = {*its, *loops, *astuple(names)}
    out = []
    for v in its:
        name = v
        while name in loops:
            name += "_"
        while name != v and name in taken:
            name += "_"
        taken.add(name)
        out.append(name)
    return out


def _loop_names(s: StmtReading) -> list[str]:
    """The names of ``s``'s loops that are expressions of its iterators, not one of them."""
    return [v for v in s.schedule.out_vars if _IDENT.fullmatch(v) and v not in s.schedule.in_vars]


def _named_outputs(s: StmtReading, outs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The outputs of ``s``'s executor schedule and their constraints: a loop computed from
    the iterators (``j0 = floor(j/4)`` of ``split``/``vectorize``/``tile``, a skewed loop)
    keeps its name, so its tags (``vector(4)``, ``unroll(2)``) still name it."""
    computed = set(_loop_names(s))
    kept, named = [], []
    for name, expr in zip(s.schedule.out_vars, outs, strict=True):
        if name in computed and name != expr:
            kept.append(name)
            named.append(f"{name} = {expr}")
        else:
            kept.append(expr)
    return kept, named


def _add_flags(
    ir: ComputationIR, analysis: WavefrontAnalysis, names: WavefrontNames, prefix: list[str]
) -> tuple[ComputationIR, list[tuple[str, str, str]]]:
    """``p2p``: the flag array, a wait on the source's flag for each sink instance of each
    pull edge before the iteration's statements, and a post of its own flag after them.
    Push edges (the sink found only from the source) count instead: a serial prologue
    subtracts one from ``pending`` (a local, zeroed) of each push target, a source adds one
    back after its statements, and an iteration first waits until its ``pending`` is back
    to 0. Returns ``ir`` with the flags and operations, and the prologue statements to add
    (source, domain, schedule)."""
    from spf.analysis.inspector import edge_enumeration

    n, pos, v = analysis.nodes, names.pos, analysis.var
    ir = build.add_data_space(ir, names.done, "int32_t", (n,))
    at = [*prefix, pos]

    def over(text: str, its: tuple[str, ...], var: str) -> str:
        """Edge instances ``text`` with ``pos`` in front, ``var = order(pos)`` (``var`` the
        node: an iteration offset by its kernel's place)."""
        guard = f"0 <= {pos} && {pos} < {n} && {var} = {names.order}({pos})"
        pieces = []
        for piece in text.split(" union "):
            m = re.match(r"^\{\[(.*?)\](?: : (.*))?\}$", piece)
            if m is None:
                raise InternalError(f"spf bug: cannot read the edge domain piece {piece!r}")
            cons = f" && {m.group(2)}" if m.group(2) else ""
            pieces.append(f"{{[{pos}, {', '.join(its)}] : {guard}{cons}}}")
        return " union ".join(pieces)

    ops: list[
        tuple[str, str, str, str, str, str]
    ] = []  # kind, domain, schedule, target, index, count
    prologue: list[tuple[str, str, str]] = []
    pulls = [e for e in analysis.edges if not e.push]
    pushes = [e for e in analysis.edges if e.push]
    for k, e in enumerate(pulls):
        text, its, src, sink = edge_enumeration(e)
        rest = "".join(f", {x}, 0" for x in its if x != sink)
        sched = f"{{[{pos}, {', '.join(its)}] -> [{', '.join(at)}, 0, {sink}, {k}{rest}]}}"
        src, node = analysis.node(src, e.other_group), analysis.node(sink, e.group)
        ops.append(("wait", over(text, its, node), sched, names.done, src, "1"))
    own = f"{{[{pos}, {v}] : 0 <= {pos} && {pos} < {n} && {v} = {names.order}({pos})}}"
    if pushes:
        taken = {d.name for d in ir.data_spaces} | {u.name for u in ir.ufs}
        pending = _fresh(f"pending_{names.loop}", taken)
        ir = build.add_data_space(ir, pending, "int32_t", (n,), role="local")
        sched = f"{{[{pos}, {v}] -> [{', '.join(at)}, 0, {v}, {len(pulls)}]}}"
        ops.append(("wait", own, sched, pending, v, "0"))
        for k, e in enumerate(pushes):
            text, its, snk, src = edge_enumeration(e)
            rest = "".join(f", {x}, 0" for x in its if x != src)
            head = f"{{[{', '.join(its)}] -> [{', '.join(prefix)}, -1, {k}, {src}{rest}]}}"
            snk, node = analysis.node(snk, e.other_group), analysis.node(src, e.group)
            prologue.append((f"${pending}$({snk}) -= 1;", text, head))
            sched = f"{{[{pos}, {', '.join(its)}] -> [{', '.join(at)}, 2, {src}, {k + 1}{rest}]}}"
            ops.append(("post", over(text, its, node), sched, pending, snk, "1"))
    post_sched = f"{{[{pos}, {v}] -> [{', '.join(at)}, 2, {v}, 0]}}"
    ops.append(("post", own, post_sched, names.done, v, "1"))
    for k, (kind, domain, schedule, target, index, count) in enumerate(ops):
        name = f"{kind}_{names.loop}{k}"
        flag = (target, index, count)
        tags = ((pos, (P2P_TAG,)),)
        ir = build.add_flag_operation(ir, name, kind, domain, schedule, flag, tags)
    return ir, prologue


def inspectors(ir: ComputationIR) -> list[tuple[WavefrontNames, ComputationIR]]:
    """The inspector (its first stage, as compiled) of each wavefront loop of ``ir``, with
    the executor's names for the loop."""
    from spf.analysis.coarse_inspector import build_coarse_inspector, free_kernels
    from spf.analysis.inspector import build_inspector

    out = []
    for loop, nm in wavefront_names(ir).items():
        analysis = analyze_wavefront(ir, [s.name for s in wavefront_stmts(ir, loop)], loop)
        wide = any(free_kernels(analysis))  # as compiled: fused kernels' second candidate
        insp = (
            build_coarse_inspector(ir, analysis, wide)
            if nm.method in COARSE_METHODS
            else build_inspector(ir, analysis)
        )
        out.append((nm, insp))
    return out


def inspection_text(found: Sequence[tuple[WavefrontNames, str, str]]) -> str:
    """The inspectors of a computation's wavefront loops for ``comp.layers()``: for each
    loop's names, its inspector's name and statements (Layer I form, ``algorithm``) and how
    the executor reads its results."""
    lines = []
    for nm, name, algorithm in found:
        loop = nm.loop
        coarse = nm.method in COARSE_METHODS
        lines.append(f"  loop {loop} (wavefront, method={nm.method!r}): inspector {name}")
        lines += ["  " + line for line in algorithm.splitlines()]
        if coarse:
            lines.append(
                f"    then the rows sorted by clev (a counting sort), each coarse level cut "
                f"into parts of balanced work; the executor runs {loop} = {nm.order}({nm.pos}) "
                f"for {nm.partptr}({nm.part}) <= {nm.pos} < {nm.partptr}({nm.part} + 1), one "
                f"part per thread, {nm.levelptr}({nm.lev}) <= {nm.part} < "
                f"{nm.levelptr}({nm.lev} + 1)"
            )
            continue
        lines.append(
            f"    then level sizes, their prefix sum {nm.levelptr} and {nm.order} (a counting "
            f"sort of level); the executor runs {loop} = {nm.order}({nm.pos}) for "
            f"{nm.levelptr}({nm.lev}) <= {nm.pos} < {nm.levelptr}({nm.lev} + 1)"
        )
    return "\n".join(lines)


def serial_computation(ir: ComputationIR) -> ComputationIR:
    """The computation ``ir`` with its wavefront loops run in their original order (the
    tags removed): what a plan whose ``strategy`` is ``"serial"`` runs (same operations per
    iteration, so the same bits as the executor). Kernels fused into a wavefront loop run
    one after the other again, as in program order (the fused loop may break their
    dependences: only the inspector's order keeps them)."""
    fused = set()
    for loop in wavefront_loops(ir):
        stmts = wavefront_stmts(ir, loop)
        if len(set(kernel_groups(stmts).values())) > 1:
            fused |= {s.name for s in stmts}
    out = []
    for s in ir.stmts:
        tags = ((k, tuple(t for t in v if not t.startswith("wavefront"))) for k, v in s.tags)
        current = s.schedule if s.name in fused else s.current_schedule
        out.append(
            dataclasses.replace(
                s, current_schedule=current, tags=tuple((k, v) for k, v in tags if v)
            )
        )
    return dataclasses.replace(ir, stmts=tuple(out), trace=())
