"""Blocked pre-checks of a checked function's sparse row loops (issue 28, item 1).

A checked function (:mod:`spf.codegen.arg_checks`) tests, in the innermost loop of a
sparse row, the range of each index value it reads (``col(k)``) and the facts on the
values just loaded (sorted rows: ``col(k - 1) < col(k)`` inside a row): a compare and a
branch per entry each, in a loop of a few instructions an entry, which cost 1.2-1.6x the
unchecked loop on mid-size matrices. Where the loops have the shape of CSR's (one loop over
rows ``i``; inside it loops over ``k``, none nested in another, each within ``U(i) ..
U(i + 1) - 1`` for a row pointer ``U`` tested whole before the loops,
:func:`~spf.codegen.arg_checks.prechecked`), the rows run in blocks of about
:data:`BLOCK_ENTRIES` entries, and before each block's arithmetic (its entries are then in
cache) branch-free passes test the whole block:

* per row: each row loop's bounds inside ``U(i) .. U(i + 1)`` (where they are not those
  two), and the facts tested once per row (``rowptr(i) <= diag(i) < rowptr(i + 1)``);
* over the block's entries ``U(b0) .. U(b1) - 1`` in one flat loop each: the range of every
  index array the row loops read at ``k`` (one unsigned comparison an entry, as the checked
  read makes), and each neighbouring-pairs fact (``V(p + 1) - V(p) >= m`` for pairs the
  fact's guard keeps inside one row): the pairs of the block that break it are counted,
  then those that straddle two rows (one per non-empty row starting inside the block) in a
  pass over its rows; the block keeps the fact when the two counts are equal;
* any other fact tested in a row loop (``col(k) <= i``) in a copy of the row loops that only
  tests (:data:`NESTED`).

A block that passes runs the rows as the unchecked function does (its index arrays read as
they are, no fact test). A block that fails any test runs the checked loops for its rows,
exactly as before: every value read is tested and clamped, every fact instance is tested,
and the error names the same fact, row and entry (a pass that fails on a pair the fact does
not cover only costs that block its fast path). Results are bitwise equal: both copies run
the same statements in the same order.

Any other shape keeps the checked loops unchanged (:func:`plan` returns None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.codegen.arg_checks import (
    _expr,
    _linear,
    checked_macros,
    fact_check_lines,
    prechecked,
    read_key,
)
from spf.codegen.loop_ast import (
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
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
"""Entries of a block, about (its row count follows from the mean row length): 8-16 KiB of
indices, so that the arithmetic after the passes finds them in L1/L2."""

NESTED = True
"""Test the facts of the row loops that are no neighbouring pairs in a copy of the loops
before the block (else such a kernel keeps its checked loops)."""


@dataclass(frozen=True)
class Pair:
    """A neighbouring-pairs fact over index array ``uf``: ``uf(t + 1) - uf(t) >= gap`` for
    the pairs inside one row."""

    uf: str
    gap: int


@dataclass(frozen=True)
class Inner:
    """A row loop: its variable and bounds (index reads bound to locals written out), and
    whether they are exactly the row's ``U(i)`` and ``U(i + 1)``."""

    var: str
    init: Expr
    end: Expr
    exact: bool


@dataclass(frozen=True)
class Test:
    """A fact check a pass evaluates: the statement's iterators ``params`` take ``args``
    (locals written out); ``loop``: the row loop it runs in (None: once per row)."""

    check: InLoopCheck
    params: tuple[str, ...]
    args: tuple[Expr, ...]
    loop: Inner | None


@dataclass(frozen=True)
class RowBlocks:
    """The loop over rows ``outer`` (variable ``row``, from ``init`` to before ``end``), its
    row pointer ``ptr`` and what a block's passes test: the row loops ``inner``, the index
    arrays ``ranged`` (name, number among the UF arguments, zero-based) read at a row loop's
    variable, the neighbouring-pairs facts ``pairs`` and the other facts ``tests``."""

    outer: For
    row: str
    init: Expr
    end: Expr
    ptr: str
    inner: tuple[Inner, ...]
    ranged: tuple[tuple[str, int, bool], ...]
    pairs: tuple[Pair, ...]
    tests: tuple[Test, ...]


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
    loops = [n for n in walk(outer.body) if isinstance(n, For)]
    if not loops or any(_bad_loop(n) for n in loops):
        return None
    binds = _binds(outer.body)
    whole = prechecked(program)
    ptr = _row_pointer(loops[0], binds, outer.var, whole)
    if binds is None or ptr is None:
        return None
    names = _params(program) | {outer.var}
    inner: dict[int, Inner] = {}
    for n in loops:
        loop = _inner(n, binds, outer.var, ptr, names, whole)
        if loop is None:
            return None
        inner[id(n)] = loop
    ranged = _ranged(program, outer, loops, zero)
    found = _facts(program, outer, loops, inner, binds, ptr, checks, params)
    if ranged is None or found is None:
        return None
    pairs, tests = found
    if not (ranged or pairs or tests) or (tests and not NESTED):
        return None
    init, end = _bounds(outer)
    return RowBlocks(outer, outer.var, init, end, ptr, tuple(inner.values()), ranged, pairs, tests)


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


def _has_read(e: Expr) -> bool:
    if isinstance(e, UFRead):
        return True
    return isinstance(e, Op) and any(_has_read(a) for a in e.args)


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
    loop: For, binds: dict[str, UFRead] | None, i: str, whole: frozenset[str]
) -> str | None:
    """``U`` when ``loop`` starts at ``U(i)`` or ends at ``U(i + 1)``, ``U`` tested whole."""
    assert isinstance(loop.cond, Op)
    for bound, offset in ((loop.init, {i: 1}), (loop.cond.args[1], {i: 1, (): 1})):
        e = _out(bound, binds)
        if (
            isinstance(e, UFRead)
            and e.uf in whole
            and len(e.args) == 1
            and (_linear(e.args[0]) == offset)
        ):
            return e.uf
    return None


def _inner(
    n: For,
    binds: dict[str, UFRead] | None,
    i: str,
    ptr: str,
    names: frozenset[str],
    whole: frozenset[str],
) -> Inner | None:
    """Row loop ``n``, its bounds free of variables but ``names`` and of index reads other
    than those tested whole."""
    assert isinstance(n.cond, Op)
    init, end = _out(n.init, binds), _out(n.cond.args[1], binds)
    for e in (init, end):
        if not _row_expr(e, names, whole):
            return None
    exact = init == _at(ptr, i, 0) and end == _at(ptr, i, 1)
    return Inner(n.var, init, end, exact)


def _at(ptr: str, i: str, plus: int) -> Expr:
    """``ptr(i)`` or ``ptr(1 + i)`` as the scanner writes them."""
    return UFRead(ptr, (Var(i),) if plus == 0 else (Op("+", (Int(plus), Var(i))),))


def _row_expr(e: Expr, names: frozenset[str], whole: frozenset[str]) -> bool:
    """``e`` reads only the variables ``names`` (the row's, a row loop's, the parameters)
    and index arrays tested whole."""
    if isinstance(e, UFRead):
        return e.uf in whole and all(_row_expr(a, names, whole) for a in e.args)
    if isinstance(e, Op):
        return all(_row_expr(a, names, whole) for a in e.args)
    return not isinstance(e, Var) or e.name in names


def _params(program: Program) -> frozenset[str]:
    """The kernel's parameters."""
    return frozenset(a.name for a in program.signature.args if a.kind == "param")


def _uf_args(program: Program) -> dict[str, tuple[int, Arg]]:
    """Each UF argument by name: its number among them and the argument."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    return {a.name: (n, a) for n, a in enumerate(ufs)}


def _ranged(
    program: Program, outer: For, loops: list[For], zero: frozenset[str]
) -> tuple[tuple[str, int, bool], ...] | None:
    """The index arrays the rows read other than those tested whole: each read only at a
    row loop's variable, inside that loop, one argument, not monotonic; None if another
    is read."""
    whole = prechecked(program)
    ufs = _uf_args(program)
    out: dict[str, tuple[str, int, bool]] = {}
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
        out[name] = (name, n, name in zero)
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


def _facts(
    program: Program,
    outer: For,
    loops: list[For],
    inner: dict[int, Inner],
    binds: dict[str, UFRead] | None,
    ptr: str,
    checks: dict[str, list[InLoopCheck]],
    params: dict[str, tuple[str, ...]],
) -> tuple[tuple[Pair, ...], tuple[Test, ...]] | None:
    """The neighbouring-pairs facts and the other fact tests of the statements the rows
    run; None if a statement reads an index array in its own text or a fact cannot be
    tested by the passes."""
    ufs = _uf_args(program)
    whole = prechecked(program)
    where = {id(c): inner[id(n)] for n in loops for c in walk(n.body) if isinstance(c, Call)}
    stmts = {s.name: s for s in program.stmts}
    pairs: set[Pair] = set()
    tests: list[Test] = []
    for c in (n for n in walk(outer.body) if isinstance(n, Call)):
        if stmts[c.stmt].calls & set(ufs):  # the statement's own text reads an index array
            return None
        loop = where.get(id(c))
        env = dict(zip(params[c.stmt], c.args, strict=True))
        for check in checks.get(c.stmt, []):
            pair = _pair(check, env, outer.var, loop, ptr)
            if pair is not None and pair.uf not in whole and not ufs[pair.uf][1].inner:
                pairs.add(pair)
                continue
            args = tuple(_out(a, binds) for a in c.args)
            k = loop.var if loop is not None else None
            names = _params(program) | {outer.var, *([k] if k else [])}
            if not all(_row_expr(a, names, whole) or _at_k(a, k) for a in args):
                return None
            tests.append(Test(check, params[c.stmt], args, loop))
    return tuple(sorted(pairs, key=repr)), tuple(tests)


def _at_k(e: Expr, k: str | None) -> bool:
    """``e`` is a read at the row loop's variable ``k`` (in range once the range pass
    passed)."""
    return k is not None and isinstance(e, UFRead) and e.args == (Var(k),)


def _pair(
    check: InLoopCheck, env: dict[str, Expr], i: str, loop: Inner | None, ptr: str
) -> Pair | None:
    """``check`` as a neighbouring-pairs fact ``V(p + c + 1) - V(p + c) >= m`` whose guard,
    or the row loop of ``p``, keeps both entries inside row ``i`` (``ptr(i) <= p + c`` and
    ``p + c + 1 < ptr(i + 1)``), or None."""
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
    in_loop = loop is not None and p == loop.var  # the loop keeps p inside the row
    guard = [g for g in (_form(t, env) for eq, t in check.guard if not eq) if g is not None]
    start = read_key(f"spf_raw_{ptr}", (Var(i),))
    stop = read_key(f"spf_raw_{ptr}", (Op("+", (Var(i), Int(1))),))
    low = (in_loop and c >= 0) or any(
        _only(g, {p: 1, start: -1}) and g.get((), 0) <= c for g in guard
    )
    high = (in_loop and c <= -1) or any(
        _only(g, {p: -1, stop: 1}) and g.get((), 0) <= -c - 2 for g in guard
    )
    if not (low and high):
        return None
    return Pair(str(up[0]).removeprefix("spf_raw_"), -int(form.get((), 0)))


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
    """The block's tests (rows ``spf_b0 .. spf_b1 - 1``), clearing ``spf_ok`` on a failure:
    the rows first (their loops' bounds), then the flat passes, then the nested one."""
    u = blocks.ptr
    out = ["int spf_ok = 1;"]
    out += _row_lines(blocks)
    out.append(f"const int64_t spf_s = (int64_t){u}[spf_b0], spf_e = (int64_t){u}[spf_b1];")
    for name, n, zero in blocks.ranged:
        test = f"(uint64_t)(int64_t){name}[spf_t]"
        test = f"{test} > spf_lim_{n}" if zero else f"{test} - (uint64_t)spf_lo_{n} > spf_lim_{n}"
        out += [
            "if (spf_ok)",
            "{",
            "  uint64_t spf_bad = 0;",
            "  for (int64_t spf_t = spf_s; spf_t < spf_e; spf_t++)",
            f"    spf_bad |= {test};",
            "  spf_ok &= !spf_bad;",
            "}",
        ]
    for p in blocks.pairs:
        out += _pair_lines(p, u)
    return out + _nested_lines(blocks)


def _row_lines(blocks: RowBlocks) -> list[str]:
    """Per row: each row loop inside the row, and the facts tested once per row."""
    from spf.codegen.c import expr

    i, u = blocks.row, blocks.ptr
    lines: list[str] = []
    for n, loop in enumerate(blocks.inner):
        if loop.exact:
            continue
        lo, hi = f"spf_rl_{n}", f"spf_rh_{n}"
        lines += [
            f"const int64_t {lo} = {expr(loop.init)}, {hi} = {expr(loop.end)};",
            f"spf_rows_bad |= ({lo} < {hi}) & (({lo} < (int64_t){u}[{i}]) | "
            f"({hi} > (int64_t){u}[{i} + 1]));",
        ]
    for t in blocks.tests:
        if t.loop is None:
            lines += fact_check_lines(t.check, t.params, t.args, {}, True, "spf_rows_bad")
    if not lines:
        return []
    return [
        "{",
        "  uint64_t spf_rows_bad = 0;",
        f"  for (int64_t {i} = spf_b0; {i} < spf_b1; {i}++)",
        "  {",
        *(f"    {line}" for line in lines),
        "  }",
        "  spf_ok &= !spf_rows_bad;",
        "}",
    ]


def _pair_lines(p: Pair, u: str) -> list[str]:
    """The count of the block's pairs breaking ``p`` against those of them across rows."""
    bad = f"((int64_t){p.uf}[spf_t + 1] - (int64_t){p.uf}[spf_t] < {p.gap})"
    across = f"((int64_t){p.uf}[spf_q] - (int64_t){p.uf}[spf_q - 1] < {p.gap})"
    return [
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


def _nested_lines(blocks: RowBlocks) -> list[str]:
    """The facts tested in a row loop that are no neighbouring pairs: a copy of each such
    loop over the block's rows that only tests (after the row and range passes, so every
    value it reads is in range)."""
    from spf.codegen.c import expr

    i = blocks.row
    out: list[str] = []
    for loop in blocks.inner:
        mine = [t for t in blocks.tests if t.loop is loop]
        if not mine:
            continue
        body = [
            line
            for t in mine
            for line in fact_check_lines(t.check, t.params, t.args, {}, True, "spf_bad")
        ]
        out += [
            "if (spf_ok)",
            "{",
            "  uint64_t spf_bad = 0;",
            f"  for (int64_t {i} = spf_b0; {i} < spf_b1; {i}++)",
            f"    for (int64_t {loop.var} = {expr(loop.init)}; {loop.var} < {expr(loop.end)}; "
            f"{loop.var}++)",
            "    {",
            *(f"      {line}" for line in body),
            "    }",
            "  spf_ok &= !spf_bad;",
            "}",
        ]
    return out


def raw_lines(blocks: RowBlocks) -> list[str]:
    """The macros of the ranged index arrays read as they are (the passes and the fast
    block)."""
    out = []
    for name, _, _ in blocks.ranged:
        out += [f"#undef {name}", f"#define {name}(t0) ((int64_t) {name}[t0])"]
    return out


def restore_lines(blocks: RowBlocks, program: Program, dense: dict[str, int | None]) -> list[str]:
    """The checked read macros of the ranged index arrays again (after the fast block)."""
    names = {name for name, _, _ in blocks.ranged}
    return [line for d in checked_macros(program, dense) if d.name in names for line in d.lines()]
