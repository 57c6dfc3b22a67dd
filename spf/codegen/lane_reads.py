"""Branch-free range tests of index reads in a loop of a few lanes (SELL's slices).

A checked function (:mod:`spf.codegen.arg_checks`) tests each value its loops read from an
index array against the UF's declared range where it is read: a compare and a rarely taken
branch with a call to the fault recorder behind it. In a loop of constant extent, SELL's
``r`` over the 8 rows of a slice (``r <= min(7, ...)``), the unchecked function's loop is
vectorized (the 8 column indices loaded at once, ``x`` gathered by them) and the branch
keeps the checked one scalar: int32 ``spmv(SELL(8, 1))``'s checked function measured
1.22-1.40x the unchecked one on ``arrow`` and ``jagmesh7``, and 0.88-1.19x with no test in
its loops at all (C time, interleaved, on the loaded 2-core machine); with the tests below,
1.11-1.31x on those and ``bcsstk13``, ``pushpull`` and a 10k dense row (1.29-1.39x before).

For each :func:`lanes` UF the checked function reads the value through ``spf_lane_<uf>``
instead, which clamps it to the declared range in the array's own width (the nearest bound,
as the checked read does: nothing is read out of bounds) and ors ``clamped ^ value`` into its
own flag ``spf_lanes<n>``, an unsigned integer of the array's width (no branch: the compiler
vectorizes the loop as in the unchecked function; nonzero exactly where a value was
clamped). The xor keeps the test in plain vector instructions where ``clamped != value``
(a 32-bit flag for every width) made a mask and narrowed it to the flag's lanes: the
checked function's C time over the unchecked one's on int32 ``spmv(SELL(8, 1))`` went from
1.06-1.33x to 0.92-1.16x on ``cryg2500``, ``zenios``, ``bayer10``, ``pushpull``,
``jagmesh7``, ``bcsstk13``, ``arrow`` and the 10k and 50k dense rows (``bayer10`` 1.20x ->
0.99x, ``bcsstk13`` 1.22x -> 1.07x), int64 0.92-1.12x to 0.93-1.09x (both libraries in one
process, interleaved, the loaded 2-core machine). After the loops a set flag records
:data:`~spf.codegen.range_pass.FAULT_READS`, as the range pass does: the caller runs the
fallback ``f_spf_checked_reads`` (every read checked where it is read) on the same
arguments, which finds and reports the first value read out of range exactly as before. Only
values the loops read are tested, so a set flag always ends in that error; the outputs, then
written by both runs, hold no valid result, as the error says of any fault found inside the
loops. An empty declared range records it before the loops (the fallback decides).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.codegen.arg_checks import dense_monotonic, prechecked, serial
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
    expr_vars,
    node_exprs,
    walk,
)
from spf.codegen.range_pass import FAULT_READS, in_type, unsigned_type
from spf.codegen.unit import Chunk, Function

if TYPE_CHECKING:
    from spf.codegen.program import Program, StmtMacro
    from spf.codegen.signature import Arg


def lanes(program: Program, ranged: frozenset[str]) -> frozenset[str]:
    """The UF arguments every read of which is bound (``Bind``) directly in a loop of
    constant extent (:func:`_constant`) that holds no other loop: one argument, one value, a
    declared range, not monotonic, not tested whole before the loops (by the prechecks or
    the range pass, ``ranged``), not read in a statement's text, a loop bound or a
    condition; none in a function with a parallel loop."""
    if not serial(program):  # the flag is or-ed without atomics: one thread only
        return frozenset()
    whole = prechecked(program) | ranged | frozenset(dense_monotonic(program))
    good: dict[str, bool] = {}
    for a in program.signature.args:
        uf = a.uf if a.kind == "uf" else None
        if uf is None or a.name in whole or uf.monotonic is not None or a.inner:
            continue
        if uf.arity == 1 and uf.out_arity == 1 and uf.range is not None:
            good[a.name] = True
    if not good:
        return frozenset()
    _visit(program.body, None, good, {s.name: s for s in program.stmts})
    for s in program.stmts:
        for u in set(good) & s.calls:
            good[u] = False
    return frozenset(u for u, ok in good.items() if ok)


def _visit(n: Any, loop: For | None, good: dict[str, bool], stmts: dict[str, StmtMacro]) -> None:
    if isinstance(n, Merge):  # reads under a merge: not followed
        for m in walk(n):
            if isinstance(m, Bind):
                good[m.uf.removeprefix("spf_v_")] = False
        _exprs(tuple(node_exprs(n)), good)
        return
    _exprs(_own_exprs(n), good)
    if isinstance(n, Bind) and n.uf in good and not _lane_loop(loop, stmts):
        good[n.uf] = False
    inner = n if isinstance(n, For) else loop
    for child in _children(n):
        _visit(child, inner, good, stmts)


def _own_exprs(n: Any) -> tuple[Expr, ...]:
    """The expressions of ``n`` itself (not of the nodes under it)."""
    if isinstance(n, For):
        return (n.init, n.cond)
    if isinstance(n, If):
        return (n.cond,)
    if isinstance(n, (Bind, Call)):
        return tuple(n.args)
    return ()


def _children(n: Any) -> list[Any]:
    if isinstance(n, Block):
        return list(n.items)
    if isinstance(n, If):
        return [n.then] + ([n.orelse] if n.orelse is not None else [])
    if isinstance(n, (For, Bind, Alloc)):
        return [n.body]
    return []


def _lane_loop(loop: For | None, stmts: dict[str, StmtMacro]) -> bool:
    """A loop of constant extent holding no other loop whose statements only gather: each
    is one accumulation whose target uses no value read from an index array in the loop (a
    target an index array chooses, SELL(8, 32)'s ``y(perm(...))``, is a scatter the compiler
    does not vectorize, and there the branch-free tests measured 1.7-2.4x the unchecked
    function, 1.1-1.8x with ``scol`` alone, where the branches measured 0.9-1.6x)."""
    if loop is None or not _constant(loop):
        return False
    if any(isinstance(m, (For, Merge)) for m in walk(loop.body)):
        return False
    bound = {m.var for m in walk(loop.body) if isinstance(m, Bind)}
    for c in (m for m in walk(loop.body) if isinstance(m, Call)):
        red = stmts[c.stmt].reduction
        if red is None:
            return False
        for param, arg in zip(stmts[c.stmt].params, c.args, strict=True):
            if param in red.uses and bound & set(expr_vars(arg)):
                return False
    return True


def _constant(loop: For) -> bool:
    """A loop from a constant to at most a constant (``r <= min(7, ...)``), step 1."""
    cond = loop.cond
    if loop.step != 1 or not isinstance(loop.init, Int) or not isinstance(cond, Op):
        return False
    return cond.op in ("<", "<=") and cond.args[0] == Var(loop.var) and _capped(cond.args[1])


def _capped(e: Expr) -> bool:
    if isinstance(e, Int):
        return True
    return isinstance(e, Op) and e.op == "min" and any(_capped(a) for a in e.args)


def _exprs(es: tuple[Expr, ...], good: dict[str, bool]) -> None:
    """A read inside an expression: not a lane read."""
    for e in es:
        if isinstance(e, UFRead):
            good[e.uf.removeprefix("spf_v_")] = False
            _exprs(e.args, good)
        elif isinstance(e, Op):
            _exprs(e.args, good)


# ------------------------------------------------------------------------------ printing
def functions(program: Program, names: frozenset[str]) -> Chunk:
    """``spf_lane_<uf>`` of each UF of ``names``: the entry clamped to ``[lo, hi]`` in the
    array's own width, ``*o`` (of the unsigned type of that width) or-ed with the clamped
    value xor the entry, nonzero exactly where the entry was outside."""
    lines: list[str] = []
    out: list[Function] = []
    for a in _ufs(program, names):
        t, u = a.ctype, unsigned_type(a)
        name = f"spf_lane_{a.name}"
        proto = f"{t} {name}(const {t} *restrict a, int64_t t, {t} lo, {t} hi, {u} *restrict o)"
        out.append(Function(name, proto, static=True))
        lines += [
            f"static inline {proto}",
            "{",
            f"  const {t} v = a[t];",
            f"  {t} c = v < lo ? lo : v;",
            "  c = c > hi ? hi : c;",
            f"  *o |= ({u})(c ^ v);",
            "  return c;",
            "}",
        ]
    return Chunk(tuple(lines), functions=tuple(out))


def first_lines(program: Program, names: frozenset[str]) -> list[str]:
    """Before the loops: each lane UF's flag (of its unsigned type,
    :func:`~spf.codegen.range_pass.unsigned_type`) and bounds in its own width (clamped to
    the type; an empty range sends the call to the fallback before the loops) and its read
    macro through ``spf_lane_<uf>``."""
    out = []
    for n, a in _numbered(program, names):
        lo, hi = in_type(a, n)
        out += [
            f"{unsigned_type(a)} spf_lanes{n} = 0;",
            f"const int64_t spf_lane_l{n} = {lo}, spf_lane_h{n} = {hi};",
            f"if (spf_lane_l{n} > spf_lane_h{n})",
            f"{{ spf_fault[0] = {FAULT_READS}; return; }}",
            f"const {a.ctype} spf_lane_lo{n} = ({a.ctype})spf_lane_l{n}, "
            f"spf_lane_hi{n} = ({a.ctype})spf_lane_h{n};",
            f"#undef {a.name}",
            f"#define {a.name}(t0) ((int64_t)spf_lane_{a.name}({a.name}, t0, spf_lane_lo{n}, "
            f"spf_lane_hi{n}, &spf_lanes{n}))",
        ]
    return out


def last_lines(program: Program, names: frozenset[str]) -> list[str]:
    """After the loops: a value read out of range (a flag set) sends the call to the
    fallback."""
    flags = " | ".join(f"spf_lanes{n}" for n, _ in _numbered(program, names))
    return [f"if ({flags})", f"{{ spf_fault[0] = {FAULT_READS}; return; }}"]


def _numbered(program: Program, names: frozenset[str]) -> list[tuple[int, Arg]]:
    """The UFs of ``names`` with their numbers among the UF arguments."""
    ufs = [a for a in program.signature.args if a.kind == "uf"]
    return [(n, a) for n, a in enumerate(ufs) if a.name in names]


def _ufs(program: Program, names: frozenset[str]) -> list[Arg]:
    return [a for _, a in _numbered(program, names)]
