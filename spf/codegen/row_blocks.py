"""Blocked pre-checks of a checked function's sparse row loops (issue 28, item 1).

A checked function (:mod:`spf.codegen.arg_checks`) tests, in the innermost loop of a
sparse row, the range of each index value it reads (``col(k)``) and the sorted-rows fact on
neighbouring entries (``col(k - 1) < col(k)`` inside a row): a compare and a branch per
entry each, in a loop of a few instructions an entry, which cost 1.2-1.6x the unchecked
loop on mid-size matrices. Where the loops have the shape of CSR's (one loop over rows
``i``, inside it one loop over ``k`` from ``U(i)`` to ``U(i + 1)`` with ``U`` tested whole
before the loops, :func:`~spf.codegen.arg_checks.prechecked`), the rows run in blocks of
about :data:`BLOCK_ENTRIES` entries, and before each block's arithmetic (its entries are
then in cache) two branch-free passes the compiler vectorizes test

* the range of every index array the row loop reads at ``k`` over the block's entries
  ``U(b0) .. U(b1) - 1`` (one unsigned comparison an entry, as the checked read makes);
* each neighbouring-pairs fact (``V(k + c + 1) - V(k + c) >= m`` for pairs the fact's guard
  keeps inside one row): the pairs of the whole block that break it are counted in one flat
  pass, then those that straddle two rows (one per non-empty row starting inside the block)
  in a pass over its rows; the block keeps the fact when the two counts are equal.

A block that passes runs the rows as the unchecked function does (its index arrays read as
they are, no fact test). A block that fails either test runs the checked loops for its
rows, exactly as before: every value read is tested and clamped, every fact instance is
tested, and the error names the same fact, row and entry (a pre-check that fails on a pair
the fact does not cover only costs that block its fast path). Results are bitwise equal:
both copies run the same statements in the same order.

Any other shape, or a fact the row loop's tests cannot cover this way (one over the row
number, say ``col(k) <= i``), keeps the checked loops unchanged (:func:`plan` returns None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.codegen.arg_checks import (
    _expr,
    _linear,
    checked_macros,
    prechecked,
    read_key,
)
from spf.codegen.loop_ast import Bind, Block, Call, Expr, For, If, Int, Op, UFRead, Var, walk
from spf.codegen.loop_ast import node_exprs as _node_exprs

if TYPE_CHECKING:
    from spf.analysis.fact_plan import InLoopCheck
    from spf.codegen.program import Program
    from spf.codegen.signature import Arg

BLOCK_ENTRIES = 2048
"""Entries of a block, about (its row count follows from the mean row length): 16 KiB of
int64 indices, so that the arithmetic after the passes finds them in L1/L2."""


@dataclass(frozen=True)
class Pair:
    """A neighbouring-pairs fact over index array ``uf`` (its number ``n`` among the UF
    arguments): ``uf(t + 1) - uf(t) >= gap`` for the pairs inside one row."""

    uf: str
    gap: int


@dataclass(frozen=True)
class RowBlocks:
    """The loop over rows ``outer`` (variable ``row``, from ``init`` to before ``end``), its
    row pointer ``ptr`` and what a block's passes test: the index arrays ``ranged`` (name,
    number among the UF arguments, zero-based) read at the row loop's ``k`` and the
    neighbouring-pairs facts ``pairs``."""

    outer: For
    row: str
    init: Expr
    end: Expr
    ptr: str
    ranged: tuple[tuple[str, int, bool], ...]
    pairs: tuple[Pair, ...]


def plan(
    program: Program,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
    zero: frozenset[str],
) -> RowBlocks | None:
    """The blocked form of ``program``'s checked loops, or None where it does not apply
    (above). ``checks``: the in-loop fact checks by statement; ``params``: each statement's
    iterators; ``zero``: the zero-based UFs (:func:`~spf.codegen.arg_checks.zero_based`)."""
    if program.index_arrays:
        return None
    outer = _outer(program.body)
    if outer is None:
        return None
    inner = [n for n in walk(outer.body) if isinstance(n, For)]
    if len(inner) != 1 or inner[0].step != 1 or inner[0].tags:
        return None
    loop = inner[0]
    binds = {n.var: n for n in walk(outer.body) if isinstance(n, Bind)}
    ptr = _row_pointer(loop, binds, outer.var, prechecked(program))
    if ptr is None:
        return None
    ranged = _ranged(program, outer, loop, binds, zero)
    pairs = _pairs(program, outer, loop, ptr, checks, params)
    if ranged is None or pairs is None or not (ranged or pairs):
        return None
    init, end = _bounds(outer)
    return RowBlocks(outer, outer.var, init, end, ptr, ranged, pairs)


def _uf_args(program: Program) -> dict[str, tuple[int, Arg]]:
    """Each UF argument by name: its number among them and the argument."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    return {a.name: (n, a) for n, a in enumerate(ufs)}


def _ranged(
    program: Program, outer: For, loop: For, binds: dict[str, Bind], zero: frozenset[str]
) -> tuple[tuple[str, int, bool], ...] | None:
    """The index arrays the rows read other than the row pointer (tested whole): each read
    at ``k`` in the row loop only, one argument, not monotonic; None if another is read."""
    whole = prechecked(program)
    ufs = _uf_args(program)
    out: dict[str, tuple[str, int, bool]] = {}
    for e in _reads(outer.body):
        name = e.uf.removeprefix("spf_v_")
        if name in whole:
            continue
        n, a = ufs[name]
        if e.args != (Var(loop.var),) or e not in _reads(loop.body) or a.inner:
            return None
        if a.uf is None or a.uf.arity != 1 or a.uf.monotonic is not None:
            return None
        out[name] = (name, n, name in zero)
    return tuple(out.values())


def _pairs(
    program: Program,
    outer: For,
    loop: For,
    ptr: str,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> tuple[Pair, ...] | None:
    """The neighbouring-pairs facts of the statements the rows run, all in the row loop;
    None if a statement reads an index array in its own text or has another fact."""
    ufs = _uf_args(program)
    whole = prechecked(program)
    in_loop = {id(n) for n in walk(loop.body) if isinstance(n, Call)}
    stmts = {s.name: s for s in program.stmts}
    out: set[Pair] = set()
    for c in (n for n in walk(outer.body) if isinstance(n, Call)):
        if stmts[c.stmt].calls & set(ufs):  # the statement's own text reads an index array
            return None
        mine = checks.get(c.stmt, [])
        if mine and id(c) not in in_loop:
            return None
        env = dict(zip(params[c.stmt], c.args, strict=True))
        for check in mine:
            pair = _pair(check, env, outer.var, loop.var, ptr)
            if pair is None or pair.uf in whole or ufs[pair.uf][1].inner:
                return None
            out.add(pair)
    return tuple(sorted(out, key=repr))


def _outer(body: Any) -> For | None:
    """The one loop the function's body runs (through blocks of one item and branches
    without ``else``), serial, step 1, its end free of index reads."""
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


def _bounds(n: For) -> tuple[Expr, Expr]:
    """The first row and the row after the last."""
    assert isinstance(n.cond, Op)
    end = n.cond.args[1]
    return n.init, end if n.cond.op == "<" else Op("+", (end, Int(1)))


def _has_read(e: Expr) -> bool:
    if isinstance(e, UFRead):
        return True
    return isinstance(e, Op) and any(_has_read(a) for a in e.args)


def _value(e: Expr, binds: dict[str, Bind]) -> Expr:
    """``e``, a variable bound from an index array replaced by the read."""
    if isinstance(e, Var) and e.name in binds:
        b = binds[e.name]
        return UFRead(b.uf.removeprefix("spf_v_"), b.args)
    if isinstance(e, UFRead):
        return UFRead(e.uf.removeprefix("spf_v_"), e.args)
    return e


def _row_pointer(loop: For, binds: dict[str, Bind], i: str, whole: frozenset[str]) -> str | None:
    """``U`` when ``loop`` runs ``k`` from ``U(i)`` to before ``U(i + 1)``, ``U`` tested whole."""
    cond = loop.cond
    if not (isinstance(cond, Op) and cond.op == "<" and cond.args[0] == Var(loop.var)):
        return None
    lo, hi = _value(loop.init, binds), _value(cond.args[1], binds)
    if not (isinstance(lo, UFRead) and isinstance(hi, UFRead) and lo.uf == hi.uf):
        return None
    if lo.uf not in whole or len(lo.args) != 1 or len(hi.args) != 1:
        return None
    if _linear(lo.args[0]) != {i: 1} or _linear(hi.args[0]) != {i: 1, (): 1}:
        return None
    return lo.uf


def _reads(n: Any) -> list[UFRead]:
    """Every index read under ``n``: the binds' and those in expressions."""
    out = [UFRead(b.uf, b.args) for b in walk(n) if isinstance(b, Bind)]
    for e in _node_exprs(n):
        out += _expr_reads(e)
    return out


def _expr_reads(e: Expr) -> list[UFRead]:
    if isinstance(e, UFRead):
        return [e, *(r for a in e.args for r in _expr_reads(a))]
    if isinstance(e, Op):
        return [r for a in e.args for r in _expr_reads(a)]
    return []


def _pair(check: InLoopCheck, env: dict[str, Expr], i: str, k: str, ptr: str) -> Pair | None:
    """``check`` as a neighbouring-pairs fact whose guard and the row loop keep both
    entries of the pair inside row ``i`` (``ptr(i) <= k + c`` and ``k + c + 1 < ptr(i +
    1)``), or None."""
    if len(check.conclusion) != 1 or check.conclusion[0][0]:
        return None
    form = _form(check.conclusion[0][1], env)
    reads = {key: v for key, v in (form or {}).items() if key != ()}
    if form is None or len(reads) != 2 or sorted(reads.values()) != [-1, 1]:
        return None
    (up, _), (down, _) = sorted(reads.items(), key=lambda kv: -kv[1])
    if not (isinstance(up, tuple) and isinstance(down, tuple) and up[0] == down[0]):
        return None
    hi_at, lo_at = _offset(up, k), _offset(down, k)
    if hi_at is None or lo_at is None or hi_at != lo_at + 1:
        return None
    guard = [_form(t, env) for eq, t in check.guard if not eq]
    c = lo_at
    start = read_key(f"spf_raw_{ptr}", (Var(i),))
    stop = read_key(f"spf_raw_{ptr}", (Op("+", (Var(i), Int(1))),))
    inside_low = c >= 0 or any(
        g is not None and _only(g, {k: 1, start: -1}) and g.get((), 0) <= c for g in guard
    )
    inside_high = c <= -1 or any(
        g is not None and _only(g, {k: -1, stop: 1}) and g.get((), 0) <= -c - 2 for g in guard
    )
    if not (inside_low and inside_high):
        return None
    name = str(up[0]).removeprefix("spf_raw_")
    return Pair(name, -int(form.get((), 0)))


def _form(term: Any, env: dict[str, Expr]) -> dict[Any, int] | None:
    """A term of the analysis as a linear form over the loop's variables and index reads
    (:func:`~spf.codegen.arg_checks.read_key`), or None."""
    return _linear(_expr(term, env, {}))


def _offset(key: Any, k: str) -> int | None:
    """``c`` when read ``key`` is at ``k + c``."""
    args = key[1]
    if len(args) != 1:
        return None
    form = dict(args[0])
    if form.get(k) != 1 or set(form) - {k, ()}:
        return None
    return int(form.get((), 0))


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
    """The block's tests (rows ``spf_b0 .. spf_b1 - 1``), clearing ``spf_ok`` on a failure."""
    u = blocks.ptr
    out = [
        "int spf_ok = 1;",
        f"const int64_t spf_s = (int64_t){u}[spf_b0], spf_e = (int64_t){u}[spf_b1];",
    ]
    for name, n, zero in blocks.ranged:
        test = f"(uint64_t)(int64_t){name}[spf_t]"
        test = f"{test} > spf_lim_{n}" if zero else f"{test} - (uint64_t)spf_lo_{n} > spf_lim_{n}"
        out += [
            "{",
            "  uint64_t spf_bad = 0;",
            "  for (int64_t spf_t = spf_s; spf_t < spf_e; spf_t++)",
            f"    spf_bad |= {test};",
            "  spf_ok &= !spf_bad;",
            "}",
        ]
    for p in blocks.pairs:
        bad = f"((int64_t){p.uf}[spf_t + 1] - (int64_t){p.uf}[spf_t] < {p.gap})"
        across = f"((int64_t){p.uf}[spf_q] - (int64_t){p.uf}[spf_q - 1] < {p.gap})"
        out += [
            "if (spf_ok && spf_e - spf_s >= 2)",
            "{",
            "  int64_t spf_d = 0;",
            "  for (int64_t spf_t = spf_s; spf_t + 1 < spf_e; spf_t++)",
            f"    spf_d += {bad};",
            "  if (spf_d)",
            "  {",
            "    int64_t spf_c = 0;",
            "    for (int64_t spf_r = spf_b0; spf_r < spf_b1; spf_r++)",
            "    {",
            f"      const int64_t spf_p = (int64_t){u}[spf_r];",
            f"      const int64_t spf_in = (spf_p > spf_s) & (spf_p < (int64_t){u}[spf_r + 1]);",
            "      const int64_t spf_q = spf_in ? spf_p : spf_s + 1;",
            f"      spf_c += spf_in & {across};",
            "    }",
            "    spf_ok &= spf_d == spf_c;",
            "  }",
            "}",
        ]
    return out


def raw_lines(blocks: RowBlocks) -> list[str]:
    """The macros of the ranged index arrays read as they are (the fast block)."""
    out = []
    for name, _, _ in blocks.ranged:
        out += [f"#undef {name}", f"#define {name}(t0) ((int64_t) {name}[t0])"]
    return out


def restore_lines(blocks: RowBlocks, program: Program, dense: dict[str, int | None]) -> list[str]:
    """The checked read macros of the ranged index arrays again (after the fast block)."""
    names = {name for name, _, _ in blocks.ranged}
    return [line for d in checked_macros(program, dense) if d.name in names for line in d.lines()]
