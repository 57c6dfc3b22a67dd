"""The "each call" facts printed into a kernel's checked function (API.md §16).

A fact checked on every call (:class:`~spf.runtime.fact_check.FactCost` ``how == "each
call"``) is tested by a small generated loop nest that counts its violations
(:func:`spf.analysis.check_loops.check_loops`, counting form: no branch). Rather than a second
compiled call before the kernel's (a few microseconds of Python and call overhead, as long
as a small kernel), the checked function ``f_spf_checked`` runs those loops itself, before
its own loops: :func:`plan_each_call` lowers them when the kernel is generated and
:func:`each_call_lines` prints them, with

* the counts in a local array (``spf_each``), the check statements' macros renamed
  (``spf_each_<stmt>``) so that they cannot meet the kernel's;
* an index array whose values the checks only compare read as it is (a value out of range
  is the kernel's loops' fault to record, after the facts: as with the separate pass); one
  whose values index (a loop bound, another array's index) read through the checked
  function's own range-checked read. Where a proof rests on the range of an array read as
  it is (:func:`ranges_needed`), its reads or their range test into a flag, no branch
  (:func:`flagged_reads`, unless it was tested whole before these loops); a flag set where
  every fact holds runs the loops again with those reads range-checked, which records the
  first value out of range the facts read, and the function returns before its loops (a
  fact broken is named first, as before). Leaving that range to the kernel's loops let an
  access read out of bounds (audit 24): a fact that holds on a value out of its UF's
  declared range can imply an access's bounds through that range (``0 <= col(k) <=
  cap(k)`` with ``cap`` declared below ``M``: ``x(col(k))`` is then not tested on its own),
  and the kernel's loops may read that UF after the access (in the same statement), or
  never;
* a fact with violations recorded as ``[FAULT_EACH, fact number, 0, 0]`` (the lowest such
  number) and the function returning before anything is written: the caller then runs the
  fact's own recording check (:meth:`~spf.runtime.fact_check.FactChecker.each_error`), so
  the error names the same fact, count and first point as the separate pass does.

A fact stays with the separate pass when its check needs anything but plain loops (a
buffer, a workspace), reads a UF or a parameter the kernel does not take, or cannot be
lowered; :attr:`spf.Kernel.check_cost` says which (``separate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.cexpr import stmt_lines, to_c
from spf.codegen.macros import Define, as_int64, define_lines, uf_element, uf_params
from spf.codegen.unit import Chunk, Function
from spf.errors import SpfError
from spf.sets.memo import Table

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping, Sequence

    from spf.analysis.fact_plan import FactPlan
    from spf.codegen.program import Program, StmtMacro
    from spf.ir import ComputationIR
    from spf.sets import UF
    from spf.sets.facts import Fact

FAULT_EACH = 10
"""``spf_fault`` kind of an each-call fact the checked function found broken before its
loops: ``[10, fact number, 0, 0]``; nothing was written."""
COUNTS = "spf_each"
"""The local array of the counts (fact ``n`` of the block at ``n * stride``)."""
OUT = "spf_each_out"
"""The local flag (a one-entry array) of a value out of its UF's declared range that the
counting loops read as it is (:func:`flagged_reads`)."""
IN_RANGE = Chunk(
    (
        "static inline int64_t spf_each_in(int64_t v, int64_t lo, uint64_t lim, "
        "uint64_t *restrict out)",
        "{ *out |= (uint64_t)v - (uint64_t)lo > lim; return v; }",
    ),
    functions=(
        Function(
            "spf_each_in",
            "int64_t spf_each_in(int64_t v, int64_t lo, uint64_t lim, uint64_t *restrict out)",
            static=True,
        ),
    ),
)
"""The value as it is, its range test or-ed into a flag (no branch: the counting loops stay
vectorizable): ``v - lo > lim`` modulo 2**64, as the checked read's test (``lo`` 0 for a
zero-based UF, whose ``lim`` is its highest value)."""


@dataclass(frozen=True)
class EachCall:
    """The each-call facts a checked function tests before its loops: their numbers (in
    the order of the counts), the lowered check loops, the counts' stride, the name of the
    record data space in those loops, the UFs they read as they are, and those of them whose
    declared range a proof needs (:func:`ranges_needed`: their reads test it on the side,
    :func:`flagged_reads`)."""

    facts: tuple[int, ...]
    program: Program
    stride: int
    record: str
    compared: frozenset[str]
    ranges: frozenset[str] = frozenset()


def ranges_needed(
    ir: ComputationIR, facts: Sequence[Fact], compared: frozenset[str]
) -> frozenset[str]:
    """The UFs of ``compared`` (read as they are by the each-call loops) whose declared
    ranges the kernel relies on beyond its loops' own reads: all those with a declared range
    where an access's bounds were proved with the facts
    (:attr:`~spf.analysis.bounds.AccessBounds.by_facts`: such a proof may rest on them), or
    where the facts that :func:`~spf.analysis.fact_prover.implied_facts` drops from
    ``facts`` (assumptions and bounds obligations) are not the same without those ranges;
    else none (their values matter only where the loops read them, and test them there:
    the sorted rows of ``trsv_diag_csr`` imply its triangular parts without ``col``'s
    range)."""
    from spf.analysis.bounds import analyze_bounds
    from spf.analysis.fact_prover import implied_facts
    from spf.sets import UF

    decls = ir.uf_decls
    ranged = frozenset(u for u in compared if u in decls and decls[u].range is not None)
    if not ranged:
        return ranged
    if any(a.by_facts for a in analyze_bounds(ir).accesses):
        return ranged
    constants = sorted(ir.params)
    stripped = {
        name: UF(
            name,
            uf.arity,
            uf.domain,
            None,
            uf.monotonic,
            uf.dtype,
            out_arity=uf.out_arity,
            inverse=uf.inverse,
        )
        if name in ranged
        else uf
        for name, uf in decls.items()
    }
    with_ranges = implied_facts(facts, decls, constants)
    without = implied_facts(facts, stripped, constants)
    return frozenset() if set(without) == set(with_ranges) else ranged


def plan_each_call(
    ir: ComputationIR,
    program: Program,
    plans: Sequence[FactPlan],
    in_loop: frozenset[int],
    rests: Mapping[int, Fact] | None = None,
) -> EachCall | None:
    """The each-call facts of ``plans`` (those not in ``in_loop``, checked at linear cost
    or without variables) that the checked function of ``program`` can test itself, lowered;
    None when there is none. ``rests``: for a fact of ``in_loop`` whose statements leave one
    point (:func:`spf.analysis.fact_plan.in_loop_cover`), that point, tested here too."""
    from dataclasses import replace

    from spf.analysis.check_loops import check_loops
    from spf.analysis.memo import remembered
    from spf.codegen.program import lower

    params = {a.name for a in program.signature.args if a.kind == "param"}
    ufs = {a.name for a in program.signature.args if a.kind == "uf"}
    taken = params | ufs | {a.name for a in program.signature.args}
    taken |= {s.name for s in program.stmts} | {d.name for d in program.data}
    chosen = []
    for p in plans:
        if p.number in in_loop and rests and p.number in rests and not p.implied_by:
            p = replace(p, checked=rests[p.number])  # one point: no variable left free
        elif p.number in in_loop or p.implied_by or not (p.linear or not p.checked.vars):
            continue
        if p.injective is not None:  # one pass marking values (spf.codegen.injective_marks)
            continue
        needs = _needs(p.checked, ir.uf_decls)
        if needs is not None and needs[0] <= params and needs[1] <= ufs:
            chosen.append(p)
    if not chosen:
        return None
    try:
        checks = check_loops(
            "spf_each_call",
            [p.checked for p in chosen],
            ir.uf_decls,
            counting=True,
            avoid=frozenset(taken),
        )
        # remembered by the value of the loops: a wavefront's executor and its inspector
        # stages often test the same facts with the same loops (SpTRSV's monotonic rows)
        sub = remembered(checks.ir, ("each_call_lower",), lambda: lower(checks.ir))
    except SpfError:
        return None
    if sub.locals or sub.buffers or sub.workspaces or sub.index_arrays:
        return None
    compared = frozenset(u.name for u in checks.ir.ufs if u.range is None)
    return EachCall(
        tuple(p.number for p in chosen), _own_names(sub), checks.stride, checks.record, compared
    )


def _own_names(sub: Program) -> Program:
    """``sub`` with its statements named ``spf_each_<stmt>``, in the macros and the calls,
    so that they cannot meet the kernel's."""
    from dataclasses import replace

    from spf.codegen.loop_ast import rename_calls

    names = {s.name: f"spf_each_{s.name}" for s in sub.stmts}
    stmts = tuple(replace(s, name=names[s.name]) for s in sub.stmts)
    return replace(sub, stmts=stmts, body=rename_calls(sub.body, names))


def _needs(fact: Fact, ufs: Mapping[str, UF]) -> tuple[frozenset[str], frozenset[str]] | None:
    """The parameters and the UFs that ``fact``'s check loops take; None when it has none
    (unbounded, say: the separate pass words the error). Remembered by the fact's text and
    the declarations it uses: a wavefront's executor and its inspector ask for the same
    facts, and each answer builds a Computation."""
    from spf.analysis.check_loops import check_loops
    from spf.analysis.fact_plan import declarations_of

    decls = declarations_of([fact], ufs)
    # the premise too: a fact's one point left by its in-loop checks shares its text
    key = (fact.text, fact.vars, fact.premise, tuple(sorted(decls.items())))
    found = _NEEDS.get(key)
    if found is None:
        try:
            one = check_loops("spf_each_call", [fact], decls, counting=True).ir
            found = ((frozenset(one.params), frozenset(u.name for u in one.ufs)),)
        except SpfError:
            found = (None,)
        _NEEDS.put(key, found)
    return found[0]


_NEEDS: Table[Hashable, tuple[tuple[frozenset[str], frozenset[str]] | None]] = Table(1024)


def stmt_macro_chunk(stmts: Sequence[StmtMacro]) -> Chunk:
    """:func:`stmt_macro_lines` at file scope, noting the macros they define."""
    names: list[str] = []
    for s in stmts:
        if s.operation is None:
            names += [f"{s.name}_target", f"{s.name}_value"] if s.update is not None else []
            names.append(s.name)
    return Chunk(tuple(stmt_macro_lines(stmts)), macros=tuple(names))


def stmt_macro_lines(stmts: Sequence[StmtMacro]) -> list[str]:
    """``#define`` lines of statement macros (and of a reduction's target and value)."""
    out = []
    for s in stmts:
        if s.operation is not None:
            continue
        params = ", ".join(s.params)
        if s.update is not None:  # also set for every ``reduction``
            out.append(f"#define {s.name}_target({params}) {to_c(s.update.target)}")
            out.append(f"#define {s.name}_value({params}) {to_c(s.update.value)}")
        head = f"#define {s.name}({params})"
        if len(s.body) == 1 and isinstance(s.body[0], (cx.Assign, cx.Decl)):
            out.append(f"{head} {cx.simple_text(s.body[0])}")
            continue
        out.append(f"{head} do {{ \\")
        out += [f"  {ln} \\" for ln in stmt_lines(s.body)]
        out.append("} while (0)")
    return out


def flagged_reads(
    program: Program, each: EachCall, tested: frozenset[str], zero: frozenset[str]
) -> list[Define]:
    """The read macros, through :data:`IN_RANGE`, of the UF arguments of ``program`` (a
    checked function's) that ``each``'s loops only compare, whose range a proof needs
    (:attr:`EachCall.ranges`) and that nothing tests before them: not in ``tested`` (tested
    whole before these loops: the prechecked monotonic arrays, the range pass's), with a
    declared range (``zero``: the zero-based UFs)."""
    from spf.codegen.arg_checks import unranged

    out = []
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    for n, a in enumerate(ufs):
        if a.name not in each.ranges or a.name in tested or unranged(a):
            continue
        arity = a.uf.array_uf().arity if a.uf is not None else 1
        lo = cx.Num("0") if a.name in zero else cx.Name(f"spf_lo_{n}")
        args = (as_int64(uf_element(a.name, arity, a.inner)), lo, cx.Name(f"spf_lim_{n}"))
        read = cx.Call("spf_each_in", (*args, cx.Name(OUT)))
        out.append(Define(a.name, uf_params(arity), read, undef=True))
    return out


def each_call_lines(
    each: EachCall,
    body: Sequence[str],
    restore: Sequence[Define],
    flagged: Sequence[Define] = (),
) -> list[str]:
    """The block the checked function runs before its loops: ``body`` is the lines of the
    check loops as printed (:attr:`EachCall.program`'s body), ``restore`` the checked
    function's own macros of the UFs read as they are (redefined after the block; for those
    ``flagged`` (:func:`flagged_reads`) its range-checked reads, with which a flag set runs
    the loops again before returning, its fault recorded as one found before the loops:
    ``FAULT_RANGE_BEFORE``, the error of a refusal, not of partially written outputs)."""
    from spf.codegen.arg_checks import (
        FAULT_ORDER,
        FAULT_ORDER_BEFORE,
        FAULT_RANGE,
        FAULT_RANGE_BEFORE,
    )

    sub = each.program
    size = len(each.facts) * each.stride
    record = Define(each.record, uf_params(1), cx.Index(cx.Name(COUNTS), cx.Param("t0")))
    lines = ["{", f"int64_t {COUNTS}[{size}] = {{0}};", *record.lines()]
    named = {d.name: d for d in flagged}
    if named:
        lines.append(f"uint64_t {OUT}[1] = {{0}};")
    for a in sub.signature.args:
        if a.kind != "uf" or a.name not in each.compared:
            continue
        if a.name in named:
            lines += named[a.name].lines()
            continue
        arity = a.uf.array_uf().arity if a.uf is not None else 1
        entry = as_int64(uf_element(a.name, arity, a.inner))
        lines += Define(a.name, uf_params(arity), entry, undef=True).lines()
    lines += stmt_macro_lines(sub.stmts)
    lines += body
    counts = " | ".join(f"{COUNTS}[{k * each.stride}]" for k in range(len(each.facts)))
    if named:  # the facts hold on a value out of range: again with the checked reads,
        # which record it (a broken fact is named first, as before)
        lines += [f"if ({OUT}[0] && !({counts}))", "{"]
        lines += define_lines([d for d in restore if d.name in named])
        lines += body
        # what they record is refused before the loops (nothing was written): the
        # pre-loop kinds, not the in-loop ones their checked reads note
        for kind, before in ((FAULT_RANGE, FAULT_RANGE_BEFORE), (FAULT_ORDER, FAULT_ORDER_BEFORE)):
            lines.append(f"if (spf_fault[0] == {kind}) spf_fault[0] = {before};")
        lines += ["if (spf_fault[0]) return;", "}"]
    lines.append(f"#undef {each.record}")
    for s in sub.stmts:
        lines += [f"#undef {s.name}{part}" for part in ("", "_target", "_value")]
    lines += define_lines(restore)
    for k, n in enumerate(each.facts):
        lines.append(
            f"if ({COUNTS}[{k * each.stride}]) spf_fault_note(spf_fault, {FAULT_EACH}, {n}, 0, 0);"
        )
    lines += [f"if ({counts}) return;", "}"]
    return lines
