"""One test per entry for a sparse row's range and its sorted-pairs or row-bound fact
(issue 28, item 1).

A checked function (:mod:`spf.codegen.arg_checks`) tests, in the innermost loop of a
sparse row (CSR's ``k`` from ``U(i)`` to ``U(i + 1)``), each index value it reads against
its UF's range (``col(k)``: a compare and a branch) and a neighbouring-pairs fact on the
values just loaded (sorted rows: ``col(k - 1) < col(k)`` inside a row: a second load, two
compares and a branch). Where such a fact has gap ``m`` of 0 or 1 (``V(k) - V(k - 1) >= m``)
over the one index array ``V`` the row loop reads at ``k``, both tests are one: the value
``v`` must lie in ``[prev + m, hi]`` (``[lo, hi]`` at the row's first entry), which is one
unsigned comparison, ``hi - v < room``, where ``room`` is ``hi - prev + 1 - m`` after each
entry and ``hi - lo + 1`` at each row's start (:func:`helper_chunk` says why it is exact).
Only a value that fails it takes the slow path, which tells the two apart exactly as the
separate tests do: out of range, the fault is recorded and the value clamped (the same
record and clamp as ``spf_read_<uf>``); in range, the fact's bits of ``spf_facts`` are set
when the value breaks the pair with the row's previous one (the error then names the first
violating point, found by the fact's own check loop, as before). A fact bounding ``V(k)``
by the row, ``V(k) <= i + c`` or ``V(k) >= i + c`` (the symmetric SpMV's assumption
``col(k) <= i``, ``sptrsv_csr``'s ``col(k) <= i - 1`` over its row less the diagonal), is
tested the same way: each row's interval is ``[lo, i + c]`` or ``[i + c, hi]``, its length
as ``room`` (where every row's ``i + c`` lies in ``[lo - 1, hi]`` or ``[lo, hi + 1]``:
:func:`whole`), each tested from its fixed end (``(uint64_t)(v - lo) >= room`` for ``[lo, i
+ c]``: :func:`_bottom_anchored`).
Results are bitwise those of the unchecked function (same statements, same order).

Measured on the loaded 2-core machine (C time of the checked function over the unchecked
one, this form against the one before in the same process, 21 interleaved batches, medians):
``spmv(CSR)`` int64 ``cryg2500`` 1.48 -> 1.22, ``arrow`` 1.22 -> 1.08, the 10k dense row 1.25
-> 0.94; ``spmv(CSC)`` int64 ``zenios`` 1.31 -> 1.02, ``arrow`` 1.47 -> 1.12; int32, against
:mod:`spf.codegen.row_blocks`' blocks, ``spmv(CSR)`` ``arrow`` 1.52 -> 1.19, ``spmv(CSC)``
``bcsstk13`` 1.41 -> 1.22; the symmetric SpMV's row bound, int64 ``bayer10`` 1.37 -> 1.15
(0.1-0.2 worse on matrices of rows of one entry: a few operations a row). The blocks apply
only where this does not (:func:`plan` returns None). A row split at its diagonal
(``gauss_seidel_csr``) gets the same test with its interval reset across the diagonal
(:mod:`spf.codegen.split_pairs`, :class:`Split`). docs/backends/c.md, "Range and order in one
test", has the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.codegen import row_blocks
from spf.codegen.arg_checks import (
    FAULT_RANGE,
    checked_macros,
    fact_bits,
    read_key,
    zero_based,
)
from spf.codegen.loop_ast import Bind, Block, Call, Expr, For, Int, Op, Var, walk
from spf.codegen.unit import Chunk, Function

if TYPE_CHECKING:
    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program


@dataclass(frozen=True)
class Bound:
    """A fact bounding an index array by the row ``i``: ``V(k) <= i + c`` (``upper``) or
    ``V(k) >= i + c``; ``checks`` are the in-loop checks it replaces, ``bits`` their bits
    of ``spf_facts``."""

    upper: bool
    c: int
    checks: frozenset[InLoopCheck]
    bits: int


@dataclass(frozen=True)
class Split:
    """A sorted-rows fact ``V(p + 1) - V(p) >= gap`` over a row split at its diagonal
    ``D(i)`` (:mod:`spf.codegen.split_pairs`): ``second`` is the loop right of it, before
    which the interval is reset (:func:`mid_lines`); ``checks`` are the in-loop checks it
    replaces, ``bits`` their bits of ``spf_facts``."""

    second: For
    gap: int
    checks: frozenset[InLoopCheck]
    bits: int


@dataclass(frozen=True)
class Fused:
    """Index array ``uf`` (C type ``ctype``, number ``n`` among the UF arguments, ``zero``:
    its range test is ``v <= hi`` unsigned), read once per entry of the row loop, whose
    neighbouring-pairs fact ``pair`` or row bound ``bound`` is tested with its range."""

    uf: str
    ctype: str
    n: int
    zero: bool
    pair: row_blocks.Pair | None = None
    bound: Bound | None = None
    split: Split | None = None

    @property
    def checks(self) -> frozenset[InLoopCheck]:
        """The in-loop checks this read replaces."""
        fact = self.pair or self.bound or self.split
        return fact.checks if fact is not None else frozenset()

    @property
    def gap(self) -> int | None:
        """The gap of the pair fact its room follows entry by entry (None: a row bound)."""
        fact = self.pair or self.split
        return fact.gap if fact is not None else None

    @property
    def bits(self) -> int:
        fact = self.pair or self.bound or self.split
        return fact.bits if fact is not None else 0


@dataclass(frozen=True)
class RowGuard:
    """The row pointer ``ptr`` and the diagonal ``diag`` of a split row (numbers ``n`` among
    the UF arguments, ``zero``: ranges from 0), both tested whole before the loops, whose
    passes a per-row test in the fused loop replaces where it can
    (:func:`spf.codegen.split_pairs.guard_row_lines`)."""

    ptr: str
    ptr_n: int
    ptr_zero: bool
    diag: str
    diag_n: int
    diag_zero: bool


@dataclass(frozen=True)
class RowPairs:
    """The loop over rows ``outer`` (variable ``row``) and the index arrays whose reads
    test their pairs or row bounds."""

    outer: For
    fused: tuple[Fused, ...]
    init: Expr
    end: Expr
    """The first row and the row after the last (:func:`whole` tests ``i + c`` at both)."""
    guard: RowGuard | None = None
    """A split row's pointer and diagonal tested in each row instead of before the loops."""

    @property
    def row(self) -> str:
        return self.outer.var

    @property
    def replaced(self) -> frozenset[InLoopCheck]:
        """The in-loop checks the fused reads replace."""
        return frozenset(c for f in self.fused for c in f.checks)

    @property
    def second(self) -> For | None:
        """The loop right of the diagonal of a split row, before which :func:`mid_lines`
        runs (None: rows of one loop)."""
        return next((f.split.second for f in self.fused if f.split is not None), None)


def plan(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> RowPairs | None:
    """The fused reads of ``program``'s checked row loop, or None where they do not apply:
    the loops must have CSR's shape (:func:`spf.codegen.row_blocks.shape`) and each pair
    fact a gap of 0 or 1 over an index array the row loop reads once per entry, first thing
    in its body (so that every entry updates ``room``, in order)."""
    shape = row_blocks.shape(program, checks, params, pairs_needed=False, short=True)
    if shape is None:
        return None
    loop = next(n for n in walk(shape.outer.body) if isinstance(n, For))
    ranged = {name: (ctype, n) for name, ctype, n in shape.ranged}
    first = _first_reads(loop)
    reads = [r.uf.removeprefix("spf_v_") for r in row_blocks._reads(loop.body)]
    zero = zero_based(program)
    out: dict[str, Fused] = {}
    for p in shape.pairs:
        if p.uf not in ranged or p.gap not in (0, 1) or reads.count(p.uf) != 1 or not p.exact:
            return None  # (a fact over fewer pairs than the row's: its test would over-report)
        if p.uf not in first or sum(q.uf == p.uf for q in shape.pairs) != 1:
            return None
        ctype, n = ranged[p.uf]
        out[p.uf] = Fused(p.uf, ctype, n, p.uf in zero, pair=p)
    for uf, b in _row_bounds(shape, loop, checks, params).items():
        if uf not in out and uf in ranged and uf in first and reads.count(uf) == 1:
            ctype, n = ranged[uf]
            out[uf] = Fused(uf, ctype, n, uf in zero, bound=b)
    return RowPairs(shape.outer, tuple(out.values()), shape.init, shape.end) if out else None


def _row_bounds(
    shape: row_blocks.RowBlocks,
    loop: For,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> dict[str, Bound]:
    """The index arrays with one row-bound fact (:func:`_row_bound`) tested by statements
    the row loop alone runs, by name."""
    calls = [c for c in walk(shape.outer.body) if isinstance(c, Call)]
    inside = {id(c) for c in walk(loop.body) if isinstance(c, Call)}
    found: dict[tuple[str, bool, int], list[InLoopCheck]] = {}
    for call in calls:
        env = dict(zip(params[call.stmt], call.args, strict=True))
        for check in checks.get(call.stmt, []):
            b = _row_bound(check, env, shape.row, loop.var, shape.ptr)
            if b is not None and all(id(c) in inside for c in calls if c.stmt == call.stmt):
                found.setdefault(b, []).append(check)
    out: dict[str, Bound] = {}
    for (uf, upper, c), mine in found.items():
        if sum(key[0] == uf for key in found) == 1:  # one bound of one side an array
            out[uf] = Bound(upper, c, frozenset(mine), fact_bits(mine))
    return out


def _row_bound(
    check: InLoopCheck, env: dict[str, Expr], i: str, k: str, ptr: str
) -> tuple[str, bool, int] | None:
    """``check`` as ``V(k) <= i + c`` (``(V, True, c)``) or ``V(k) >= i + c`` (``(V, False,
    c)``), its guard (if any) implied by the row loop ``k`` over row ``i`` of ``ptr``; else
    None."""
    if len(check.conclusion) != 1 or check.conclusion[0][0]:
        return None
    form = row_blocks._form(check.conclusion[0][1], env)
    if form is None or form.get(i) not in (1, -1):
        return None
    reads = [(key, v) for key, v in form.items() if key not in ((), i)]
    if len(reads) != 1 or reads[0][1] != -form[i] or not isinstance(reads[0][0], tuple):
        return None
    if row_blocks._offset(reads[0][0]) != (k, 0):
        return None
    start = read_key(f"spf_raw_{ptr}", (Var(i),))
    stop = read_key(f"spf_raw_{ptr}", (Op("+", (Var(i), Int(1))),))
    for eq, term in check.guard:  # each true at every k of the row: k >= U(i), k < U(i + 1)
        g = row_blocks._form(term, env)
        if eq or g is None:
            return None
        low = row_blocks._only(g, {k: 1, start: -1}) and g.get((), 0) >= 0
        if not (low or (row_blocks._only(g, {k: -1, stop: 1}) and g.get((), 0) >= -1)):
            return None
    c = int(form.get((), 0))
    uf = str(reads[0][0][0]).removeprefix("spf_raw_")
    return (uf, True, c) if form[i] == 1 else (uf, False, -c)


def _first_reads(loop: For) -> set[str]:
    """The index arrays the chain of ``Bind`` opening ``loop``'s body reads at its
    variable (each read once per iteration, before anything else)."""
    out, body = set(), loop.body
    while isinstance(body, Bind) or (isinstance(body, Block) and len(body.items) == 1):
        if isinstance(body, Block):
            body = body.items[0]
            continue
        if body.args == (Var(loop.var),):
            out.add(body.uf)
        body = body.body
    return out


def helper_chunk(pairs: RowPairs) -> Chunk:
    """``spf_pair_<uf>`` per fused array: the read, its one test and the slow path.

    Why one test is exact: ``[lo, hi]`` is the range the read's own test accepts
    (``spf_read_<uf>``: ``(uint64_t)v <= lim`` from 0, or ``(uint64_t)v - lo <= lim``),
    ``top`` is ``hi``, and the fused loop runs only where that range is one interval of
    int64 values of fewer than ``2**64`` (:func:`whole`; else the checked loops run). With
    ``prev`` in ``[lo, hi]`` (or ``lo - 1`` at a row's start) and ``room = hi - prev + 1 - m``
    (``hi - lo + 1`` at the start: never more), ``(uint64_t)(hi - v) < room`` holds exactly
    for ``prev + m <= v <= hi``: for ``v <= hi`` the difference is exact, and for ``v > hi``
    it wraps to ``2**64 - (v - hi) >= hi - lo + 1`` (``v - lo < 2**64``). So a value in range
    that fails it breaks the pair (at a row's start none fails), and the slow path tells the
    range apart only. A value out of range (recorded, clamped: the clamped value may lie
    outside ``[lo, hi]``) leaves ``room`` as it was, so the next values are still tested
    against ``[lo, hi]`` (their facts are not reported: the first fault is).

    A row bound ``V(k) <= i + c`` has the fixed end at the bottom instead: its interval
    ``[lo, i + c]`` is tested as ``(uint64_t)(v - lo) >= room`` (:func:`_bottom_anchored`
    proves it the same test), so that the top that moves every row costs nothing an entry.

    A split row (:mod:`spf.codegen.split_pairs`) moves ``top`` below ``hi`` (``i - m``, left
    of the diagonal): a value in range above it sets the bits and leaves ``room`` 0, so that
    the row's next values take the slow path too, whose range test is the read's own (a
    ``room`` from a value above ``top`` would wrap and let values out of range through)."""
    lines: list[str] = []
    functions = []
    for f in pairs.fused:
        pair = f.gap is not None
        name = _helper_name(f)
        room = "uint64_t *restrict room" if pair else "uint64_t room"
        end = "bottom" if _bottom_anchored(f) else "top"
        proto = (
            f"int64_t {name}(const {f.ctype} *restrict a, int64_t t, int64_t lo, uint64_t lim, "
            f"int64_t {end}, {room}, uint64_t bits, uint64_t *restrict facts, int64_t *restrict f)"
        )
        functions.append(Function(name, proto, static=True))
        if f.zero:
            test, hi = "(uint64_t)v > lim", "(int64_t)lim"
        else:
            test, hi = "(uint64_t)v - (uint64_t)lo > lim", "(int64_t)((uint64_t)lo + lim)"
        if end == "bottom":
            outside = "(uint64_t)v - (uint64_t)bottom >= room"
        else:
            outside = f"(uint64_t)top - (uint64_t)v >= {'*' if pair else ''}room"
        lines += [
            f"static inline {proto}",
            "{",
            "  int64_t v = (int64_t)a[t];",
            f"  if (__builtin_expect({outside}, 0))",
            "  {",
            f"    if ({test})",
            f"    {{ spf_fault_note(f, {FAULT_RANGE}, {f.n}, t, v); return v < lo ? lo : {hi}; }}",
            "    *facts |= bits;",
            *(["    if (v > top) { *room = 0; return v; }"] if f.split is not None else []),
            "  }",
        ]
        if f.gap is not None:
            lines.append(f"  *room = (uint64_t)top - (uint64_t)v + {1 - f.gap};")
        lines += ["  return v;", "}"]
    return Chunk(tuple(lines), functions=tuple(functions))


def _bottom_anchored(f: Fused) -> bool:
    """Whether ``f``'s interval is tested from its bottom: a row bound ``V(k) <= i + c``,
    whose interval ``[lo, i + c]`` has a fixed bottom and a top that moves every row (the
    others' top is fixed: ``hi``, or ``i - gap`` through a split row's left part, while
    their bottom moves entry by entry).

    Why ``(uint64_t)v - (uint64_t)bottom >= room`` is the top-anchored test ``(uint64_t)top
    - (uint64_t)v >= room``, both true exactly for ``v`` outside ``[bottom, top]``: with
    ``bottom = lo`` (0 for a range from 0), ``top = i + c`` in ``[lo - 1, hi]`` and ``room =
    top - lo + 1`` (:func:`whole`, :func:`row_lines`; ``hi - lo + 1 < 2**64``), for ``v`` in
    ``[lo, top]`` the difference ``v - lo`` is exact and below ``room``; for ``v > top`` it
    is exact (``v - lo <= INT64_MAX - INT64_MIN < 2**64``) and at least ``room``; for ``v <
    lo`` it wraps to ``2**64 - (lo - v) >= 2**64 - (lo + 2**63) = 2**63 - lo``, at least
    ``hi - lo + 1 >= room`` since ``hi <= 2**63 - 1``. An empty interval (``room`` 0) sends
    every value to the slow path both ways. Measured by hand (docs/backends/c.md,
    "``sptrsv_csr``'s row pointer and obligation in the rows"): the top that moves every row
    cost a subtraction an entry, 1.32x -> 1.22x on ``arrow`` int64."""
    return f.bound is not None and f.bound.upper


def _helper_name(f: Fused) -> str:
    kind = "pair" if f.pair is not None else "bound" if f.bound is not None else "split"
    return f"spf_{kind}_{f.uf}"


def whole(pairs: RowPairs, init: str, end: str) -> str:
    """The C condition under which the fused loop runs: each fused array's accepted range
    is one interval ``[lo, hi]`` of int64 values, ``hi - lo + 1 < 2**64``, and each row
    bound's ``i + c`` an int64 value at the first row ``init`` and at ``end`` (so at every
    row between), inside ``[lo - 1, hi]`` (``V(k) <= i + c``) or ``[lo, hi + 1]`` at every
    row (:func:`_rows_inside`); for a split row also ``i - gap`` and ``i + gap``, and every
    row ``i`` in ``[lo, hi]`` (so that its intervals ``[lo, i - gap]`` and ``[i + gap, hi]``
    need no clamp: where not, the checked loops run)."""
    out = []
    for f in pairs.fused:
        for c in _offsets(f):
            for at in (init, end):
                out.append(f"!__builtin_add_overflow((int64_t)({at}), {c}LL, &spf_x)")
        lim = f"spf_lim_{f.n}"
        if f.zero:
            out.append(f"{lim} <= (uint64_t)INT64_MAX")
        else:
            top = f"(uint64_t)INT64_MAX - (uint64_t)spf_lo_{f.n}"
            out.append(f"({lim} <= {top} && {lim} != UINT64_MAX)")
        lo = "0" if f.zero else f"spf_lo_{f.n}"
        hi = f"(int64_t){lim}" if f.zero else f"(int64_t)((uint64_t)spf_lo_{f.n} + {lim})"
        if f.split is not None:
            out.append(f"(({end}) <= ({init}) || (({init}) >= {lo} && ({end}) - 1 <= {hi}))")
        if f.bound is not None:
            out.append(f"(({end}) <= ({init}) || {_rows_inside(f.bound, init, end, lo, hi)})")
    return " && ".join(out)


def _rows_inside(b: Bound, init: str, end: str, lo: str, hi: str) -> str:
    """Every row's ``i + c`` in ``[lo - 1, hi]`` (``upper``) or ``[lo, hi + 1]``, tested at
    the first row and the last (``x = init + c`` and ``y = end + c``, int64 values: tested
    before this; each compare written so that it cannot overflow): the row's interval is
    then ``[lo, i + c]`` or ``[i + c, hi]``, no clamp (:func:`row_lines`)."""
    x, y = f"((int64_t)({init}) + {_lit(b.c)})", f"((int64_t)({end}) + {_lit(b.c)})"
    if b.upper:
        return f"({x} >= {lo} || {x} + 1 == {lo}) && ({y} <= {hi} || {y} - 1 == {hi})"
    return f"{x} >= {lo} && ({y} <= {hi} || {y} - 1 == {hi} || {y} - 2 == {hi})"


def _lit(c: int) -> str:
    """``c`` as a C int64 constant (``INT64_MIN`` has no literal of its own)."""
    return "(-9223372036854775807LL - 1)" if c == -(2**63) else f"{c}LL"


def _offsets(f: Fused) -> list[int]:
    """The constants ``c`` of the ``i + c`` a row computes: a row bound's, a split row's
    ``-gap`` (the top left of the diagonal) and ``+gap`` (the bottom right of it)."""
    if f.bound is not None:
        return [f.bound.c]
    if f.split is not None:
        return [-f.split.gap, f.split.gap]
    return []


def open_lines(pairs: RowPairs) -> list[str]:
    """Before the fused row loop: each fused array's ``hi`` (``top``; none for a row bound
    ``V(k) <= i + c``, tested from its bottom), its ``lo`` (``bottom``) and ``room`` (for a
    pair fact ``hi - lo + 1``, ``span``), and its read macro through its helper
    (:func:`helper_chunk`)."""
    out = []
    for f in pairs.fused:
        n, lo, lim = f.n, f"spf_lo_{f.n}", f"spf_lim_{f.n}"
        hi = f"(int64_t){lim}" if f.zero else f"(int64_t)((uint64_t){lo} + {lim})"
        if f.pair is not None:
            out += [
                f"const int64_t spf_top_{n} = {hi};",
                f"const uint64_t spf_span_{n} = {lim} + 1;",
                f"uint64_t spf_room_{n} = spf_span_{n};",
            ]
            room = f"&spf_room_{n}"
        elif _bottom_anchored(f):  # [bottom, i + c]: only room moves (row_lines)
            out += [
                f"const int64_t spf_bottom_{n} = {'0' if f.zero else lo};",
                f"uint64_t spf_room_{n} = 0;",
            ]
            room = f"spf_room_{n}"
        else:
            out += [
                f"const int64_t spf_hi_{n} = {hi}, spf_bottom_{n} = {'0' if f.zero else lo};",
                f"int64_t spf_top_{n} = spf_hi_{n};",
                f"uint64_t spf_room_{n} = 0;",
            ]
            room = f"spf_room_{n}" if f.split is None else f"&spf_room_{n}"
        end = f"spf_bottom_{n}" if _bottom_anchored(f) else f"spf_top_{n}"
        out += [
            f"#undef {f.uf}",
            f"#define {f.uf}(t0) {_helper_name(f)}({f.uf}, t0, {lo}, {lim}, {end}, "
            f"{room}, (uint64_t){f.bits}ULL, &spf_facts, spf_fault)",
        ]
    return out


def row_lines(pairs: RowPairs) -> list[str]:
    """At each row's start: for a pair fact no previous entry, the whole range; for a row
    bound the row's interval, ``[lo, i + c]`` or ``[i + c, hi]`` (``i + c`` an int64 value
    in ``[lo - 1, hi]`` or ``[lo, hi + 1]``: :func:`whole`; no clamp, which cost 0.1-0.2x on
    rows of one or two entries), as ``top`` and ``room``; for a split row ``[lo, i - gap]``
    (``i`` in ``[lo, hi]``: :func:`whole`)."""
    out = []
    for f in pairs.fused:
        n = f.n
        if f.split is not None:  # [lo, i - gap]: the row i lies in [lo, hi] (whole)
            i, m = pairs.row, f.split.gap
            out += [
                f"spf_top_{n} = (int64_t)({i}) - {m}LL;",
                f"spf_room_{n} = (uint64_t)({i}) - (uint64_t)spf_bottom_{n} + {1 - m};",
            ]
            continue
        if f.bound is None:
            out.append(f"spf_room_{n} = spf_span_{n};")
            continue
        b, x = f.bound, f"((int64_t)({pairs.row}) + {_lit(f.bound.c)})"
        if b.upper:  # [lo, i + c]: i + c in [lo - 1, hi] (whole), tested from lo
            out.append(f"spf_room_{n} = (uint64_t){x} - (uint64_t)spf_bottom_{n} + 1;")
        else:  # [i + c, hi]: i + c in [lo, hi + 1] (whole)
            out += [
                f"spf_top_{n} = spf_hi_{n};",
                f"spf_room_{n} = (uint64_t)spf_hi_{n} - (uint64_t){x} + 1;",
            ]
    return out


def mid_lines(pairs: RowPairs) -> list[str]:
    """Before the loop right of a split row's diagonal: the interval reset to ``[i + gap,
    hi]`` (:mod:`spf.codegen.split_pairs` says why this is exact; the row ``i`` lies in
    ``[lo, hi]``, :func:`whole`, so the interval needs no clamp)."""
    out = []
    for f in pairs.fused:
        if f.split is not None:  # [i + gap, hi]: the row i lies in [lo, hi] (whole)
            n, i, m = f.n, pairs.row, f.split.gap
            out += [
                f"spf_top_{n} = spf_hi_{n};",
                f"spf_room_{n} = (uint64_t)spf_hi_{n} - (uint64_t)({i}) + {1 - m};",
            ]
    return out


def close_lines(pairs: RowPairs, program: Program, dense: dict[str, int | None]) -> list[str]:
    """After the row loop: the fused arrays' checked read macros again."""
    names = {f.uf for f in pairs.fused}
    return [line for d in checked_macros(program, dense) if d.name in names for line in d.lines()]
