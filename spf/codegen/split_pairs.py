"""The one test of :mod:`spf.codegen.row_pairs` over a row split at its diagonal
(issue 28, item 1: ``gauss_seidel_csr``).

A row loop ``i`` whose row ``P(i) .. P(i + 1) - 1`` runs in two loops around an entry
``D(i)`` (the diagonal), the first from ``P(i)`` to before ``D(i)``, the second from
``D(i) + 1`` to before ``P(i + 1)``, each reading an index array ``V`` at its variable first
thing, tests a sorted-rows fact ``V(p + 1) - V(p) >= m`` (``m`` 0 or 1) at every pair of the
row: in the first loop at ``p = k``, in the second at ``p = k``, and once a row at ``p =
D(i)`` (the pair right of the diagonal). Where the row also tests, unconditionally and with
lower facts (bits of ``spf_facts``), that ``D(i)`` lies in the row (``P(i) <= D(i) < P(i +
1)``) and that ``V(D(i)) = i`` (the *premises*), those pair tests become one unsigned
comparison per entry against a running interval (:func:`spf.codegen.row_pairs.helper_chunk`):
``[lo, min(hi, i - m)]`` at the row's start, ``[prev + m, top]`` after each entry, and
``[max(lo, i + m), hi]`` again before the second loop (the interval reset across the
diagonal, :func:`spf.codegen.row_pairs.mid_lines`).

Why the error is the same as the separate tests' (the bit set is the lowest, the caller then
finds the first violating point with the fact's own check loop). In a row where both
premises hold, ``V(D(i)) = i`` is the value the pair test at ``D(i)`` compares with, so:
a value of the first loop outside ``[prev + m, i - m]`` breaks the pair with its previous
entry or, being above ``i - m = V(D(i)) - m``, some pair between it and ``D(i)`` (the row
rises by at least ``m`` a pair where none breaks); the second loop's first value below ``i +
m`` breaks the pair at ``D(i)``, and a later one below ``prev + m`` its own pair. Conversely
each broken pair fails the test of its later entry (the pair at ``D(i)``: the second loop's
first value; the pair left of ``D(i)``: the first loop's last value, above ``i - m``). So in
such a row the pair fact's bit is set exactly when the separate tests set it. In a row where
a premise fails, the interval may flag pairs that hold, or miss one across the diagonal, but
the premise's own test sets its bit in the same row, lower than the pair fact's: the lowest
bit set over the call, the fact the error names, is the same either way. Values out of range
are recorded and clamped as by the read's own test, in the same order (the first fault is
the one reported, before any fact).

Where ``P`` and ``D`` are both tested whole before the loops (their passes), the fused rows
test them in each row instead (:func:`guard_row_lines`, a per-call choice,
:func:`guard_head`): a failing row test goes back before the passes, which then run. Not
where facts are tested before the loops (:mod:`spf.codegen.each_call`): their loops read
``P`` and ``D`` as they are, as bounds and indices, so the passes must run before them (a
fact over ``D(i) <= k < D(i + 1)`` read ``col`` up to ``D(1) = 2**31 - 1``: audit 24).
Measured on ``arrow`` (rows of one to three entries, where the passes cost about what the
rows' tests do): 1.20-1.29x -> 1.08-1.23x the unchecked function in C.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.codegen import row_blocks
from spf.codegen.arg_checks import (
    BOUNDS_PER_UF,
    FAULT_WORDS,
    fact_bits,
    prechecked,
    read_key,
    zero_based,
)
from spf.codegen.loop_ast import Alloc, Bind, Block, Call, For, Int, Merge, Op, UFRead, Var, walk
from spf.codegen.row_pairs import Fused, RowGuard, RowPairs, Split, _first_reads, whole

if TYPE_CHECKING:
    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program


def plan(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> RowPairs | None:
    """The fused reads of ``program``'s checked row loop split at its diagonal (above), or
    None where the shape, the pair fact or the premises do not match exactly."""
    if program.index_arrays:
        return None
    outer = row_blocks._outer(program.body)
    if outer is None or any(isinstance(n, (Merge, Alloc)) for n in walk(outer.body)):
        return None
    loops = [n for n in walk(outer.body) if isinstance(n, For)]
    if len(loops) != 2 or any(row_blocks._bad_loop(n) for n in loops):
        return None
    left, right = loops
    binds = row_blocks._binds(outer.body)
    found = _split(left, right, binds, outer.var, prechecked(program))
    if found is None or binds is None:
        return None
    ptr, diag = found
    uf = _read_uf(left, right, outer)
    ufs = row_blocks._uf_args(program)
    if uf is None or uf not in ufs or uf in prechecked(program):
        return None
    n, arg = ufs[uf]
    if arg.inner or arg.uf is None or arg.uf.arity != 1 or arg.uf.monotonic is not None:
        return None
    rows = _row_calls(outer.body)
    pair = _pair_checks(outer, left, right, rows, checks, params, uf, ptr, diag)
    if pair is None:
        return None
    gap, mine = pair
    premises = _premises(rows, checks, params, uf, ptr, binds[diag], outer.var)
    bits = fact_bits(mine)
    if premises is None or fact_bits(premises).bit_length() > (bits & -bits).bit_length() - 1:
        return None  # a premise's bit must be below every bit of the pair fact
    split = Split(right, gap, frozenset(mine), bits)
    zero = zero_based(program)
    fused = Fused(uf, arg.ctype, n, uf in zero, split=split)
    init, end = row_blocks._bounds(outer)
    d = binds[diag].uf
    guard = None
    # the each-call fact loops run before the rows and read the prechecked arrays as they
    # are (bounds of their loops, indices): their passes must run first (audit 24)
    each = program.each_call is None
    if each and ptr in prechecked(program) and d in prechecked(program) and d in ufs:
        guard = RowGuard(ptr, ufs[ptr][0], ptr in zero, d, ufs[d][0], d in zero)
    return RowPairs(outer, (fused,), init, end, guard)


def _split(
    left: For, right: For, binds: dict[str, UFRead] | None, i: str, whole: frozenset[str]
) -> tuple[str, str] | None:
    """``(P, D)``: the row pointer ``P`` (tested whole) and the local ``D`` bound to the
    diagonal's read, when ``left`` runs ``P(i) .. D - 1`` and ``right`` ``D + 1 .. P(i + 1) -
    1``; else None."""
    if binds is None:
        return None
    assert isinstance(left.cond, Op)
    assert isinstance(right.cond, Op)
    start = row_blocks._out(left.init, binds)
    stop = row_blocks._out(right.cond.args[1], binds)
    diag = left.cond.args[1]
    if not (isinstance(start, UFRead) and start.uf in whole and isinstance(diag, Var)):
        return None
    if not isinstance(binds.get(diag.name), UFRead) or left.var != right.var:
        return None
    if start != UFRead(start.uf, (Var(i),)):
        return None
    if stop != UFRead(start.uf, (Op("+", (Int(1), Var(i))),)):
        return None
    if right.init != Op("+", (diag, Int(1))):
        return None
    return start.uf, diag.name


def _read_uf(left: For, right: For, outer: For) -> str | None:
    """The one index array both loops read first thing at their variable, read nowhere
    else in the rows."""
    first = _first_reads(left) & _first_reads(right)
    if len(first) != 1:
        return None
    (uf,) = first
    reads = [r for r in row_blocks._reads(outer.body) if r.uf.removeprefix("spf_v_") == uf]
    return uf if len(reads) == 2 else None


def _row_calls(body: Any) -> list[Call]:
    """The calls every row runs (through blocks and binds only: no loop, no branch)."""
    if isinstance(body, Call):
        return [body]
    if isinstance(body, Block):
        return [c for item in body.items for c in _row_calls(item)]
    if isinstance(body, Bind):
        return _row_calls(body.body)
    return []


def _pair_checks(
    outer: For,
    left: For,
    right: For,
    rows: list[Call],
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
    uf: str,
    ptr: str,
    diag: str,
) -> tuple[int, list[InLoopCheck]] | None:
    """The gap and the checks of the one sorted-rows fact over ``uf``, when they test
    exactly the row's pairs at ``k`` in both loops and at the diagonal once a row; else
    None (another pair fact over ``uf``, a pair elsewhere, a guard that skips one)."""
    # where each call runs: (its place, the variable p its pairs must be at)
    where = {id(c): ("left", left.var) for c in walk(left.body) if isinstance(c, Call)}
    where |= {id(c): ("right", right.var) for c in walk(right.body) if isinstance(c, Call)}
    where |= {id(c): ("diagonal", diag) for c in rows}
    found: dict[int, list[InLoopCheck]] = {}
    seen: set[str] = set()
    for call in (n for n in walk(outer.body) if isinstance(n, Call)):
        env = dict(zip(params[call.stmt], call.args, strict=True))
        place, var = where.get(id(call), ("", ""))
        for check in checks.get(call.stmt, []):
            p = _pair_at(check, env)
            if p is None or p[0] != uf:
                continue
            if not place or p[1] != var:
                return None  # a pair of uf tested elsewhere
            k = None if place == "diagonal" else var
            full = row_blocks._pair(check, env, outer.var, k, ptr)
            if full is None or not full[2] or full[0] != uf:
                return None  # a guard that skips a pair of the row
            found.setdefault(full[1], []).append(check)
            seen.add(place)
    if len(found) != 1 or seen != {"left", "right", "diagonal"}:
        return None
    ((gap, mine),) = found.items()
    return (gap, mine) if gap in (0, 1) else None


def _pair_at(check: InLoopCheck, env: dict[str, Any]) -> tuple[str, str] | None:
    """``(V, p)`` when ``check``'s conclusion is ``V(p + 1) - V(p) >= m`` (offset 0)."""
    if len(check.conclusion) != 1 or check.conclusion[0][0]:
        return None
    form = row_blocks._form(check.conclusion[0][1], env)
    reads = {key: v for key, v in (form or {}).items() if key != ()}
    if form is None or len(reads) != 2 or sorted(reads.values()) != [-1, 1]:
        return None
    (up, _), (down, _) = sorted(reads.items(), key=lambda kv: -kv[1])
    if not (isinstance(up, tuple) and isinstance(down, tuple) and up[0] == down[0]):
        return None
    hi_at, lo_at = row_blocks._offset(up), row_blocks._offset(down)
    if hi_at is None or lo_at != (hi_at[0], 0) or hi_at[1] != 1:
        return None
    return str(up[0]).removeprefix("spf_raw_"), lo_at[0]


def _premises(
    rows: list[Call],
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
    uf: str,
    ptr: str,
    diag: UFRead,
    i: str,
) -> list[InLoopCheck] | None:
    """The unguarded checks every row runs that say ``P(i) <= D(i) < P(i + 1)`` and
    ``V(D(i)) = i`` for the loops' diagonal read ``diag`` (each exactly: a fact failing
    exactly when the premise does), or None if either is missing."""
    start = read_key(f"spf_raw_{ptr}", (Var(i),))
    stop = read_key(f"spf_raw_{ptr}", (Op("+", (Var(i), Int(1))),))
    d = read_key(f"spf_raw_{diag.uf}", diag.args)
    low, high = {d: 1, start: -1}, {stop: 1, d: -1, (): -1}
    at = [UFRead(f"spf_{how}_{diag.uf}", diag.args) for how in ("raw", "peek")]
    equal = [{i: -1, read_key(f"spf_raw_{uf}", (a,)): 1} for a in at]
    inside: list[InLoopCheck] = []
    same: list[InLoopCheck] = []
    for call in rows:
        env = dict(zip(params[call.stmt], call.args, strict=True))
        for check in checks.get(call.stmt, []):
            if check.guard:
                continue
            forms = [(eq, row_blocks._form(t, env)) for eq, t in check.conclusion]
            ineq = [f for eq, f in forms if not eq]
            if len(forms) == 2 and len(ineq) == 2 and low in ineq and high in ineq:
                inside.append(check)
            if len(forms) == 1 and forms[0][0] and forms[0][1] in equal:
                same.append(check)
    return [*inside, *same] if inside and same else None


# ------------------------------------------------------------------ the row pointer in the rows
LABEL = "spf_recheck"
"""Where a failing row test goes back to: before the passes it replaced."""


def guard_head(pairs: RowPairs, init: str, end: str) -> list[str]:
    """Before the passes (:func:`spf.codegen.arg_checks.precheck_lines`): whether the fused
    loop runs (``spf_fused``: :func:`spf.codegen.row_pairs.whole`) and whether it tests the
    row pointer ``P`` and the diagonal ``D`` of its rows instead of their passes
    (``spf_guarded``: the fused loop runs, there are rows, and the entries the passes test,
    ``first .. entries - 1`` of each declared domain, are exactly those the rows read, ``P(init
    .. end)`` and ``D(init .. end - 1)``), then the label a failing row test goes back to."""
    g = pairs.guard
    assert g is not None
    p, d = BOUNDS_PER_UF * g.ptr_n, BOUNDS_PER_UF * g.diag_n
    same = (
        f"spf_first_{g.ptr_n} == ({init}) && spf_bounds[{p + 3}] - 1 == ({end}) && "
        f"spf_first_{g.diag_n} == ({init}) && spf_bounds[{d + 3}] == ({end})"
    )
    return [
        "int64_t spf_x;",
        "(void)spf_x;",
        f"int spf_fused = {whole(pairs, init, end)};",
        f"int spf_guarded = spf_fused && ({end}) > ({init}) && {same};",
        f"{LABEL}:;",
    ]


def _fail() -> str:
    """A failing row test: the fault record cleared (a range fault the fused rows noted
    before would come first), back before the passes, which then run, and to the checked
    loops."""
    clear = " = ".join(f"spf_fault[{w}]" for w in range(FAULT_WORDS))
    return f"{{ spf_fused = spf_guarded = 0; {clear} = 0; goto {LABEL}; }}"


def _out_of_range(v: str, n: int, zero: bool) -> str:
    """``v`` outside the declared range of UF argument ``n`` (one unsigned comparison)."""
    if zero:
        return f"(uint64_t){v} > spf_lim_{n}"
    return f"(uint64_t){v} - (uint64_t)spf_lo_{n} > spf_lim_{n}"


def guard_open_lines(pairs: RowPairs, init: str) -> list[str]:
    """Before the fused rows: ``P(init)`` in range, where the passes did not run."""
    g = pairs.guard
    assert g is not None
    first = _out_of_range(f"(int64_t){g.ptr}[{init}]", g.ptr_n, g.ptr_zero)
    return [f"if (spf_guarded && ({first}))", f"  {_fail()}"]


def guard_row_lines(pairs: RowPairs) -> list[str]:
    """At each fused row ``i``'s start: ``D(i)`` in its range and ``P(i) <= D(i) < P(i +
    1)``, ``P(i + 1)`` in its range. Over all rows these imply what the passes of ``P`` and
    ``D`` test on the entries the rows read (``P`` from ``P(init)``, in range, rising
    through each ``D(i)``: ordered and in range; ``D`` strictly increasing, in range), and
    they are the whole of what the rows' accesses need of ``P`` and ``D``; where one fails,
    the function goes back before the passes (:func:`_fail`), which then run and report
    today's fault, or pass (``D(i)`` outside its row: the checked loops then run from the
    first row and report the diagonal's fact). Where the passes ran (``spf_guarded`` 0),
    the test passes unless ``D(i)`` leaves its row, and then the checked loops run."""
    g = pairs.guard
    assert g is not None
    i = pairs.row
    return [
        "{",
        f"  const int64_t spf_gd = (int64_t){g.diag}[{i}], spf_g0 = (int64_t){g.ptr}[{i}], "
        f"spf_g1 = (int64_t){g.ptr}[{i} + 1];",
        f"  if (__builtin_expect({_out_of_range('spf_gd', g.diag_n, g.diag_zero)} || "
        f"spf_gd < spf_g0 || spf_gd >= spf_g1 || "
        f"{_out_of_range('spf_g1', g.ptr_n, g.ptr_zero)}, 0))",
        f"    {_fail()}",
        "}",
    ]
