"""Blocked pre-checks of a checked function's sparse row loops (issue 28, item 1).

A checked function (:mod:`spf.codegen.arg_checks`) tests, in the innermost loop of a
sparse row, the range of each index value it reads (``col(k)``) and the facts on the
values just loaded (sorted rows: ``col(k - 1) < col(k)`` inside a row): a compare and a
branch per entry each, in a loop of a few instructions an entry, which cost 1.2-1.7x the
unchecked loop on mid-size matrices, most of it the sorted-rows test. Where the loops have
the shape of CSR's (one loop over rows ``i``, inside it one loop over ``k`` from ``U(i)`` to
``U(i + 1)`` for a row pointer ``U`` tested whole before the loops,
:func:`~spf.codegen.arg_checks.prechecked`), the row loop tests a neighbouring-pairs fact and
its index arrays are 32-bit, the rows run in blocks of about :data:`BLOCK_ENTRIES` entries,
each after branch-free passes over the block that the compiler vectorizes (its entries are
then in cache for the arithmetic):

* the range of every index array the row loop reads at ``k``, over the block's entries
  ``U(b0) .. U(b1) - 1``, as their minimum and maximum in the array's own width;
* for each neighbouring-pairs fact (``V(p + 1) - V(p) >= m`` for pairs the fact's guard
  keeps inside one row): the block's pairs that break it, counted in the same kind of pass.

A block whose ranges pass runs its rows with those index arrays read as they are and no
pair test; each row counts its one pair across the row start (loaded anyway by its first
entry), and a count of breaking pairs above the count across rows sets the fact's bit of
``spf_facts``, as the in-loop test does (the error then names the first violating point,
found by the fact's own check loop, as before). Any other fact is tested in the loops as
before. A block that fails runs the checked loops for its rows, exactly as before (every
value read tested and clamped, every fact instance tested). Results are bitwise equal: both
copies run the same statements in the same order.

Where :mod:`spf.codegen.row_pairs` applies (a pair fact of gap 0 or 1 over the array the
row loop reads once per entry: the built-in CSR and CSC SpMVs, 32- and 64-bit), its one test
per entry replaces both the in-loop tests and these blocks (:func:`shape` gives it the rows).

Measured (C time of the checked function against the unchecked one, interleaved, on the
loaded 2-core machine): int32 ``spmv(CSR)`` and ``spmv(CSC)`` gain 0.05-0.3x on the
SuiteSparse matrices; what is left out measured no gain: 64-bit index arrays (their passes
run four lanes a vector and cost as much as the tests they replace), a row loop with only
range tests (the in-loop test is about free next to the gather), and loops with other bounds
(``gauss_seidel_csr``'s left and right of ``diag(i)``, whose bounds a block would test per
row: 1.5-2.7x against 1.1-1.7x). Any other shape keeps the checked loops unchanged
(:func:`plan` returns None).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.codegen.arg_checks import (
    BOUNDS_PER_UF,
    _expr,
    _has_read,
    _linear,
    checked_macros,
    fact_bits,
    prechecked,
    read_key,
)
from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
    Merge,
    Op,
    UFRead,
    Var,
    map_expr,
    node_exprs,
    walk,
)

if TYPE_CHECKING:
    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program
    from spf.codegen.signature import Arg

BLOCK_ENTRIES = 2048
"""Entries of a block, about (its row count follows from the mean row length): 8 KiB of
32-bit indices, so that the arithmetic after the passes finds them in L1/L2 (4,096 and
16,384 measured the same)."""

NARROW = frozenset({"int8_t", "int16_t", "int32_t", "uint8_t", "uint16_t", "uint32_t"})
"""The index types whose arrays the passes test (eight or more lanes a 256-bit vector)."""


@dataclass(frozen=True)
class Pair:
    """A neighbouring-pairs fact over index array ``uf`` (of C type ``ctype``): ``uf(t +
    1) - uf(t) >= gap`` for the pairs inside one row; ``checks`` are the in-loop checks it
    replaces and ``bits`` their bits of ``spf_facts``."""

    uf: str
    ctype: str
    gap: int
    checks: frozenset[InLoopCheck]
    bits: int
    exact: bool = True
    """Every check's pairs are exactly the row's (its guards neither start after the row's
    first pair nor end before its last): a test of every pair of the row reports what the
    checks report (:mod:`spf.codegen.row_pairs` and the blocks, whose counts of broken
    pairs report the fact, need it; others keep the checked loops)."""


@dataclass(frozen=True)
class RowBlocks:
    """The loop over rows ``outer`` (variable ``row``, from ``init`` to before ``end``), its
    row pointer ``ptr`` and what a block's passes test: the index arrays ``ranged`` (name, C
    type, number among the UF arguments) the row loop reads at its variable and the
    neighbouring-pairs facts ``pairs``."""

    outer: For
    row: str
    init: Expr
    end: Expr
    ptr: str
    ranged: tuple[tuple[str, str, int], ...]
    pairs: tuple[Pair, ...]

    @property
    def replaced(self) -> frozenset[InLoopCheck]:
        """The in-loop checks the pairs' counts replace."""
        return frozenset(c for p in self.pairs for c in p.checks)


def plan(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> RowBlocks | None:
    """The blocked form of ``program``'s checked loops, or None where it does not apply
    (above). ``checks``: the in-loop fact checks by statement; ``params``: each statement's
    iterators."""
    blocks = shape(program, checks, params)
    if blocks is None:
        return None
    ranged, pairs = blocks.ranged, blocks.pairs
    if any(ct not in NARROW for _, ct, _ in ranged) or any(p.ctype not in NARROW for p in pairs):
        return None
    pointer = _uf_args(program).get(blocks.ptr)
    if pointer is None or pointer[1].ctype not in NARROW:  # a block's 32-bit pair counts
        return None
    if not all(p.exact for p in pairs):  # a block's count would report pairs the fact skips
        return None
    return blocks


def shape(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
    pairs_needed: bool = True,
    short: bool = False,
) -> RowBlocks | None:
    """The rows of ``program``'s checked loops when they have CSR's shape (above) with a
    neighbouring-pairs fact (or without, unless ``pairs_needed``), whatever the index
    arrays' widths; else None (:mod:`spf.codegen.row_pairs` also reads them; with ``short``,
    a row loop may stop before ``U(i + 1) - c``, ``c >= 1``, where no pair fact is tested)."""
    if program.index_arrays:
        return None
    outer = _outer(program.body)
    if outer is None or any(isinstance(n, (Merge, Alloc)) for n in walk(outer.body)):
        return None
    loops = [n for n in walk(outer.body) if isinstance(n, For)]
    if len(loops) != 1 or _bad_loop(loops[0]):  # measured: other bounds cost more
        return None
    binds = _binds(outer.body)
    ptr = _row_pointer(loops[0], binds, outer.var, prechecked(program), short)
    if binds is None or ptr is None:
        return None
    ranged = _ranged(program, outer, loops)
    pairs = _pairs(program, outer, loops[0], ptr, checks, params)
    if ranged is None or pairs is None or (pairs_needed and not pairs):
        return None  # measured: a block's range alone gains nothing
    init, end = _bounds(outer)
    if short and pairs and not _full_row(loops[0], binds):
        return None  # a pair fact's test needs the row's every entry
    return RowBlocks(outer, outer.var, init, end, ptr, ranged, pairs)


def _outer(body: Any) -> For | None:
    """The one loop the function's body runs (through blocks of one item and branches
    without ``else``), serial, step 1, its bounds free of index reads."""
    n = body
    while True:
        if isinstance(n, Block) and len(n.items) == 1:
            n = n.items[0]
        elif isinstance(n, If) and n.orelse is None:
            n = n.then
        else:
            break
    if not isinstance(n, For) or n.step != 1 or n.tags:
        return None
    cond = n.cond
    if not (isinstance(cond, Op) and cond.op in ("<", "<=") and cond.args[0] == Var(n.var)):
        return None
    if _has_read(cond.args[1]) or _has_read(n.init):
        return None
    return n


def _bad_loop(n: For) -> bool:
    """A row loop that is not serial, step 1, ``k < end``, or holds another loop."""
    cond = n.cond
    if n.step != 1 or n.tags or any(isinstance(m, For) for m in walk(n.body)):
        return True
    return not (isinstance(cond, Op) and cond.op == "<" and cond.args[0] == Var(n.var))


def _bounds(n: For) -> tuple[Expr, Expr]:
    """The first row and the row after the last."""
    assert isinstance(n.cond, Op)
    end = n.cond.args[1]
    return n.init, end if n.cond.op == "<" else Op("+", (end, Int(1)))


def _binds(n: Any) -> dict[str, UFRead] | None:
    """Each local bound from an index read under ``n``, as the read (its own locals written
    out; ``spf_v_<uf>`` as ``uf``); None if one name is bound to two reads."""
    out: dict[str, UFRead] = {}
    for b in walk(n):
        if isinstance(b, Bind):
            read = UFRead(b.uf.removeprefix("spf_v_"), tuple(_out(a, out) for a in b.args))
            if out.setdefault(b.var, read) != read:
                return None
    return out


def _out(e: Expr, binds: dict[str, UFRead] | None) -> Expr:
    """``e`` with the locals of ``binds`` written out as their reads."""
    if not binds:
        return e
    return map_expr(e, lambda x: binds.get(x.name) if isinstance(x, Var) else None)


def _row_pointer(
    loop: For, binds: dict[str, UFRead] | None, i: str, whole: frozenset[str], short: bool = False
) -> str | None:
    """``U`` when ``loop`` runs from ``U(i)`` to before ``U(i + 1)``, ``U`` tested whole
    (with ``short``, also to before ``U(i + 1) - c`` for a constant ``c >= 1``: the row less
    its last entries, ``sptrsv_csr``'s, whose diagonal comes after the loop)."""
    assert isinstance(loop.cond, Op)
    lo, hi = _out(loop.init, binds), _out(loop.cond.args[1], binds)
    if not (isinstance(lo, UFRead) and lo.uf in whole):
        return None
    at_i, at_next = UFRead(lo.uf, (Var(i),)), UFRead(lo.uf, (Op("+", (Int(1), Var(i))),))
    if short and isinstance(hi, Op) and hi.op == "-" and isinstance(hi.args[1], Int):
        hi = hi.args[0] if hi.args[1].value >= 1 else hi
    return lo.uf if lo == at_i and hi == at_next else None


def _full_row(loop: For, binds: dict[str, UFRead] | None) -> bool:
    """``loop`` runs to before ``U(i + 1)`` itself, not a row less its last entries."""
    assert isinstance(loop.cond, Op)
    return isinstance(_out(loop.cond.args[1], binds), UFRead)


def _uf_args(program: Program) -> dict[str, tuple[int, Arg]]:
    """Each UF argument by name: its number among them and the argument."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    return {a.name: (n, a) for n, a in enumerate(ufs)}


def _ranged(
    program: Program, outer: For, loops: list[For]
) -> tuple[tuple[str, str, int], ...] | None:
    """The index arrays the rows read other than those tested whole: each read only at a
    row loop's variable, inside that loop, one argument, not monotonic; None if another
    is read."""
    whole = prechecked(program)
    ufs = _uf_args(program)
    out: dict[str, tuple[str, str, int]] = {}
    inside = [e for n in loops for e in _reads(n.body) if e.args == (Var(n.var),)]
    for e in _reads(outer.body):
        name = e.uf.removeprefix("spf_v_")
        if name in whole:
            continue
        n, a = ufs[name]
        if e not in inside or a.inner or a.uf is None:
            return None
        if a.uf.arity != 1 or a.uf.monotonic is not None:
            return None
        out[name] = (name, a.ctype, n)
    return tuple(out.values())


def _reads(n: Any) -> list[UFRead]:
    """Every index read under ``n``: the binds' and those in expressions."""
    out = [UFRead(b.uf, b.args) for b in walk(n) if isinstance(b, Bind)]
    for e in node_exprs(n):
        out += _expr_reads(e)
    return out


def _expr_reads(e: Expr) -> list[UFRead]:
    if isinstance(e, UFRead):
        return [e, *(r for a in e.args for r in _expr_reads(a))]
    if isinstance(e, Op):
        return [r for a in e.args for r in _expr_reads(a)]
    return []


def _pairs(
    program: Program,
    outer: For,
    loop: For,
    ptr: str,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> tuple[Pair, ...] | None:
    """The neighbouring-pairs facts of the statements the rows run (the other facts stay
    in the loops); None if a statement reads an index array in its own text."""
    ufs = _uf_args(program)
    whole = prechecked(program)
    inside = {id(c) for c in walk(loop.body) if isinstance(c, Call)}
    stmts = {s.name: s for s in program.stmts}
    found: dict[tuple[str, int], list[InLoopCheck]] = {}
    exact: dict[tuple[str, int], bool] = {}
    for c in (n for n in walk(outer.body) if isinstance(n, Call)):
        if stmts[c.stmt].calls & set(ufs):  # the statement's own text reads an index array
            return None
        env = dict(zip(params[c.stmt], c.args, strict=True))
        for check in checks.get(c.stmt, []):
            k = loop.var if id(c) in inside else None
            pair = _pair(check, env, outer.var, k, ptr)
            if pair is not None and pair[0] not in whole and not ufs[pair[0]][1].inner:
                key = pair[:2]
                found.setdefault(key, []).append(check)
                exact[key] = exact.get(key, True) and pair[2]
    out = []
    for (uf, gap), mine in sorted(found.items()):
        bits = fact_bits(mine)
        out.append(Pair(uf, ufs[uf][1].ctype, gap, frozenset(mine), bits, exact[uf, gap]))
    return tuple(out)


def _pair(
    check: InLoopCheck, env: dict[str, Expr], i: str, k: str | None, ptr: str
) -> tuple[str, int, bool] | None:
    """``check`` as a neighbouring-pairs fact ``V(p + c + 1) - V(p + c) >= m`` whose guard
    (or the row loop, variable ``k``, None outside it, when ``p`` is ``k``) keeps both
    entries inside row ``i`` (``ptr(i) <= p + c`` and ``p + c + 1 < ptr(i + 1)``), as
    ``(V, m, exact)``, ``exact`` when the pairs it tests are all of the row's (none
    skipped at either end); else None."""
    if len(check.conclusion) != 1 or check.conclusion[0][0]:
        return None
    form = _form(check.conclusion[0][1], env)
    reads = {key: v for key, v in (form or {}).items() if key != ()}
    if form is None or len(reads) != 2 or sorted(reads.values()) != [-1, 1]:
        return None
    (up, _), (down, _) = sorted(reads.items(), key=lambda kv: -kv[1])
    if not (isinstance(up, tuple) and isinstance(down, tuple) and up[0] == down[0]):
        return None
    hi_at, lo_at = _offset(up), _offset(down)
    if hi_at is None or lo_at is None or hi_at[0] != lo_at[0] or hi_at[1] != lo_at[1] + 1:
        return None
    p, c = lo_at
    in_loop = p == k  # the row loop keeps p inside the row
    terms = [(eq, _form(t, env)) for eq, t in check.guard]
    if any(eq or g is None for eq, g in terms):  # a guard the block's count cannot follow
        return None
    guard = [g for _, g in terms if g is not None]
    start = read_key(f"spf_raw_{ptr}", (Var(i),))
    stop = read_key(f"spf_raw_{ptr}", (Op("+", (Var(i), Int(1))),))
    lows = [_only(g, {p: 1, start: -1}) and g.get((), 0) <= c for g in guard]
    highs = [_only(g, {p: -1, stop: 1}) and g.get((), 0) <= -c - 2 for g in guard]
    if not all(map(operator.or_, lows, highs)):  # the in-loop test skips pairs the block counts
        return None
    if not ((in_loop and c >= 0) or any(lows)) or not ((in_loop and c <= -1) or any(highs)):
        return None
    # how many of the row's pairs each bound skips at the start and at the end: the
    # tightest bound is the test's, and it tests the whole row when it skips none
    skip_lo = [c - g.get((), 0) for g, low in zip(guard, lows, strict=True) if low]
    skip_hi = [-c - 2 - g.get((), 0) for g, high in zip(guard, highs, strict=True) if high]
    if in_loop:
        skip_lo, skip_hi = [*skip_lo, c], [*skip_hi, -c - 1]
    exact = max(skip_lo) == 0 and max(skip_hi) == 0
    return str(up[0]).removeprefix("spf_raw_"), -int(form.get((), 0)), exact


def _form(term: Any, env: dict[str, Expr]) -> dict[Any, int] | None:
    """A term of the analysis as a linear form over the loop's variables and index reads
    (:func:`~spf.codegen.arg_checks.read_key`), or None."""
    return _linear(_expr(term, env, {}))


def _offset(key: Any) -> tuple[str, int] | None:
    """``(p, c)`` when read ``key`` is at ``p + c`` for a variable ``p``."""
    args = key[1]
    if len(args) != 1:
        return None
    form = dict(args[0])
    names = [v for v in form if v != ()]
    if len(names) != 1 or form[names[0]] != 1 or not isinstance(names[0], str):
        return None
    return names[0], int(form.get((), 0))


def _only(form: dict[Any, int], terms: dict[Any, int]) -> bool:
    """``form`` is ``terms`` plus a constant."""
    return {key: v for key, v in form.items() if key != ()} == terms


# ------------------------------------------------------------------------------ printing
def head_lines(blocks: RowBlocks, init: str, end: str) -> list[str]:
    """The rows of a block: about :data:`BLOCK_ENTRIES` entries at the mean row length."""
    u = blocks.ptr
    return [
        f"const int64_t spf_rb_n = ({end}) - ({init});",
        f"const int64_t spf_rb_e = spf_rb_n > 0 ? (int64_t){u}[{end}] - (int64_t){u}[{init}] : 0;",
        f"int64_t spf_rb_rows = spf_rb_e > 0 ? {BLOCK_ENTRIES} * spf_rb_n / spf_rb_e : spf_rb_n;",
        "if (spf_rb_rows < 16) spf_rb_rows = 16;",
    ]


def pass_lines(blocks: RowBlocks) -> list[str]:
    """The block's tests (rows ``spf_b0 .. spf_b1 - 1``): the ranges clear ``spf_ok``;
    each pair fact's count of breaking pairs (``spf_d<n>``) is compared after the rows with
    theirs across rows (``spf_c<n>``, :func:`verdict_lines`)."""
    u = blocks.ptr
    out = ["int spf_ok = 1;"]
    out.append(f"const int64_t spf_s = (int64_t){u}[spf_b0], spf_e = (int64_t){u}[spf_b1];")
    for name, ctype, n in blocks.ranged:
        base = BOUNDS_PER_UF * n
        out += [
            "if (spf_ok && spf_e > spf_s)",
            "{",
            f"  {ctype} spf_mn = {name}[spf_s], spf_mx = spf_mn;",
            "  for (int64_t spf_t = spf_s + 1; spf_t < spf_e; spf_t++)",
            "  {",
            f"    spf_mn = {name}[spf_t] < spf_mn ? {name}[spf_t] : spf_mn;",
            f"    spf_mx = {name}[spf_t] > spf_mx ? {name}[spf_t] : spf_mx;",
            "  }",
            f"  spf_ok &= (int64_t)spf_mn >= spf_bounds[{base}] && "
            f"(int64_t)spf_mx <= spf_bounds[{base + 1}];",
            "}",
        ]
    for n, p in enumerate(blocks.pairs):
        out += [
            f"uint32_t spf_d{n} = 0, spf_c{n} = 0;",  # < 2**31 pairs: 32-bit indices
            "if (spf_ok)",
            "  for (int64_t spf_t = spf_s; spf_t + 1 < spf_e; spf_t++)",
            f"    spf_d{n} += {_breaks(p, 'spf_t + 1', 'spf_t')};",
        ]
    return out


def _breaks(p: Pair, at: str, before: str) -> str:
    """Whether the pair ``(before, at)`` breaks ``p`` (0 or 1), compared in the array's own
    width where the gap allows."""
    v = p.uf
    if p.gap == 1:
        return f"({v}[{at}] <= {v}[{before}])"
    if p.gap == 0:
        return f"({v}[{at}] < {v}[{before}])"
    return f"((int64_t){v}[{at}] - (int64_t){v}[{before}] < {p.gap})"


def row_count_lines(blocks: RowBlocks) -> list[str]:
    """At the start of each row of a block that passed: the pair across the row's start,
    when the row is not empty and starts after the block's first entry, counted if it
    breaks a pair fact."""
    i, u = blocks.row, blocks.ptr
    if not blocks.pairs:
        return []
    out = ["{", f"  const int64_t spf_p = (int64_t){u}[{i}];"]
    out.append(f"  if (spf_p > spf_s && spf_p < (int64_t){u}[{i} + 1])")
    out.append("  {")
    for n, p in enumerate(blocks.pairs):
        out.append(f"    spf_c{n} += {_breaks(p, 'spf_p', 'spf_p - 1')};")
    return [*out, "  }", "}"]


def verdict_lines(blocks: RowBlocks) -> list[str]:
    """After the rows of a block that passed: a pair fact broken inside a row sets its
    bits of ``spf_facts``."""
    return [
        f"if (spf_d{n} != spf_c{n}) spf_facts |= (uint64_t){p.bits}ULL;"
        for n, p in enumerate(blocks.pairs)
    ]


def raw_lines(blocks: RowBlocks) -> list[str]:
    """The macros of the ranged index arrays read as they are (the block that passed)."""
    out = []
    for name, _, _ in blocks.ranged:
        out += [f"#undef {name}", f"#define {name}(t0) ((int64_t) {name}[t0])"]
    return out


def restore_lines(blocks: RowBlocks, program: Program, dense: dict[str, int | None]) -> list[str]:
    """The checked read macros of the ranged index arrays again (after the fast block)."""
    names = {name for name, _, _ in blocks.ranged}
    return [line for d in checked_macros(program, dense) if d.name in names for line in d.lines()]
