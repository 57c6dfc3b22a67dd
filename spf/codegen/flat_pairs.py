"""An each-call fact over the neighbouring pairs of every row counted in one flat pass.

The checked function runs the each-call facts' counting loops before its own
(:mod:`spf.codegen.each_call`). For a fact over the pairs ``(s, s + 1)`` inside each row of
a row pointer ``U`` (BDIA's offsets sorted inside each block of rows: ``doff(s) <
doff(s + 1)`` for ``dptr(b) <= s < dptr(b + 1) - 1``), those loops run a loop over rows
and, per row, one over its pairs: a few pairs a row (BDIA(4)'s blocks hold a few
diagonals each), where the loop's start and end cost more than the pairs, so that the pass
measured 0.2-0.3x of the unchecked call (int64 ``spmv(BDIA(4))`` on ``pushpull``, ``arrow``,
``bayer10`` and a 50k dense row; C time, interleaved, on the loaded 2-core machine).

Where the loops have exactly that shape (:func:`plan`) they are printed as one pass over
every pair from ``U(first)`` to ``U(end) - 1`` (contiguous: the compiler vectorizes it) and
one over the rows that takes back the pair across each row's end, counted by the flat pass
but not by the rows' loops: the last entry ``U(b + 1) - 1`` of each non-empty row ``b``
whose end is before ``U(end)``. ``U`` is tested whole (nondecreasing, in range) before the
each-call loops (:func:`~spf.codegen.arg_checks.prechecked`), so the rows' ranges tile
``[U(first), U(end))`` and the count is the same number the rows' loops give, which is all
the caller uses: above zero, the fact's own recording check names the first violating point,
as before. Measured the same way, the checked function's work before its loops (the
overlap test, the prechecks, the range pass over ``doff`` and this pass) went from 0.28x to
0.17x of the unchecked call on the 50k dense row and by -0.02x to +0.01x on the others: the
range pass over ``doff`` and the pass over ``dptr`` are most of the rest.

Where the counted value is an order between the pair's entries, ``!(U(s + 1) - U(s) - g >=
0)`` for ``g`` 0 or 1 (:func:`ordered`: BDIA's ``doff(s) < doff(s + 1)``), both passes
compare the two entries as they are, in the array's own type (``U[s + 1] <= U[s]``: the
same truth for every integer value, and no 64-bit difference to form): the checked
function's C time over the unchecked one's on ``spmv(BDIA(4))`` went from 1.10-1.32x to
1.01-1.18x (int32) and 1.07-1.34x to 1.04-1.23x (int64) on ``cryg2500``, ``zenios``,
``bayer10``, ``pushpull``, ``bcsstk13``, ``arrow``, ``jagmesh7`` and the 10k and 50k dense
rows, every one lower (both libraries in one process, interleaved, the loaded machine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from spf import cexpr as cx
from spf.codegen.loop_ast import Bind, Call, Expr, For, If, Int, Op, Var

if TYPE_CHECKING:
    from spf.codegen.program import Program, StmtMacro


@dataclass(frozen=True)
class FlatPairs:
    """The each-call loops ``guard`` -> rows ``row`` from ``first`` to before ``end`` of
    row pointer ``ptr`` -> the pairs of a row, the statement ``stmt`` (an accumulation into
    a count, its value a function of the pair's first entry, parameter ``at``)."""

    guard: Expr | None
    row: str
    first: Expr
    end: Expr
    ptr: str
    stmt: StmtMacro
    at: int
    order: tuple[str, str] | None = None
    """``(U, op)`` when the value counts the pairs with ``U(s + 1) op U(s)``
    (:func:`ordered`): the passes compare the entries as they are."""


def plan(
    program: Program,
    whole: frozenset[str],
    ranged: frozenset[str] = frozenset(),
    flagged: frozenset[str] = frozenset(),
) -> FlatPairs | None:
    """The flat form of ``program`` (an each-call counting program) when its body is one
    loop over rows of a pointer in ``whole`` (tested before) holding only the loop over each
    row's pairs ``U(b) <= s < U(b + 1) - 1`` around one accumulation whose target and value
    use neither the row nor anything but ``s``; else None. ``ranged``: the index arrays
    range-tested before it (:func:`ordered`); ``flagged``: those whose reads test their
    range on the side (:func:`spf.codegen.each_call.flagged_reads`), which the direct
    compare of :func:`ordered` would not."""
    body, guard = program.body, None
    if isinstance(body, If) and body.orelse is None:
        guard = body.cond
        body = body.then
    if not isinstance(body, For) or body.step != 1 or body.tags:
        return None
    cond = body.cond
    if not (isinstance(cond, Op) and cond.op == "<" and cond.args[0] == Var(body.var)):
        return None
    row = body.var
    outer = body.body
    if not (isinstance(outer, Bind) and isinstance(outer.body, Bind)):
        return None
    binds = {outer.var: outer, outer.body.var: outer.body}
    inner = outer.body.body
    if not isinstance(inner, For) or inner.step != 1 or inner.tags:
        return None
    ptr = _row_pointer(inner, binds, row, whole)
    if ptr is None or not isinstance(inner.body, Call):
        return None
    stmts = {s.name: s for s in program.stmts}
    stmt = stmts[inner.body.stmt]
    at = _only_at(stmt, inner.body, inner.var)
    if at is None:
        return None
    order = ordered(stmt, at, program, ranged)
    if order is not None and order[0] in flagged:
        order = None
    return FlatPairs(guard, row, body.init, cond.args[1], ptr, stmt, at, order)


def ordered(
    stmt: StmtMacro, at: int, program: Program, ranged: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    """``(U, op)`` when ``stmt``'s value (an accumulation) is ``!(c + U(s + 1) - U(s) >= 0)``
    for a one-argument index array ``U`` of ``program``, ``s`` its parameter ``at`` and ``c``
    0 or -1: a pair breaks the order exactly when ``U(s + 1) op U(s)`` (``<`` for ``c = 0``,
    ``<=`` for ``c = -1``); else None. A 64-bit ``U`` not in ``ranged`` (range-tested
    before) keeps the linear form: there the difference of two entries can wrap, and the
    fact check that reruns on a count (:mod:`spf.analysis.fact_check`) computes that form,
    so a direct compare would count a pair the rerun passes (a false "changed during the
    call" instead of the entry's range error)."""
    red = stmt.reduction
    value = red.value if red is not None else None
    if not (isinstance(value, cx.Unary) and value.op == "!"):
        return None
    test = value.operand
    if not (isinstance(test, cx.Binary) and test.op == ">=" and test.right == cx.Num("0")):
        return None
    form = _form(test.left, stmt.params[at])
    if form is None:
        return None
    reads = {k: v for k, v in form.items() if k is not None}
    names = {name for name, _ in reads}
    if len(names) != 1 or reads != {(next(iter(names)), 1): 1, (next(iter(names)), 0): -1}:
        return None
    uf = next(iter(names))
    arg = next((a for a in program.signature.args if a.name == uf), None)
    if arg is None or arg.kind != "uf" or arg.inner or arg.uf is None or arg.uf.arity != 1:
        return None
    if uf not in ranged and np.dtype(arg.dtype).itemsize == 8:
        return None
    op = {0: "<", -1: "<="}.get(form.get(None, 0))
    return None if op is None else (uf, op)


def _form(e: cx.Expr, s: str) -> dict[tuple[str, int] | None, int] | None:
    """``e`` as a sum of integer multiples of reads ``U(s + o)`` (keyed ``(U, o)``) and a
    constant (keyed None), or None."""
    if isinstance(e, cx.Num):
        return {None: int(e.text)} if e.text.lstrip("-").isdigit() else None
    if isinstance(e, cx.Unary) and e.op == "-":
        inner = _form(e.operand, s)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(e, cx.Call) and len(e.args) == 1:
        offset = _offset(e.args[0], s)
        return None if offset is None else {(e.func, offset): 1}
    if not isinstance(e, cx.Binary) or e.op not in ("+", "-", "*"):
        return None
    left, right = _form(e.left, s), _form(e.right, s)
    if left is None or right is None:
        return None
    if e.op == "*":  # one side a constant
        if set(left) == {None}:
            return {k: left[None] * v for k, v in right.items()}
        if set(right) == {None}:
            return {k: right[None] * v for k, v in left.items()}
        return None
    sign = 1 if e.op == "+" else -1
    out = dict(left)
    for k, v in right.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v != 0 or k is None}


def _offset(e: cx.Expr, s: str) -> int | None:
    """``o`` when ``e`` is ``s + o`` (``s``, ``o + s``, ``s + o``, ``s - o``), else None."""
    if e == cx.Param(s):
        return 0
    if isinstance(e, cx.Binary) and e.op in ("+", "-"):
        left, right = e.left, e.right
        if e.op == "+" and isinstance(left, cx.Num):
            left, right = right, left
        if left == cx.Param(s) and isinstance(right, cx.Num) and right.text.isdigit():
            return int(right.text) if e.op == "+" else -int(right.text)
    return None


def _row_pointer(loop: For, binds: dict[str, Bind], row: str, whole: frozenset[str]) -> str | None:
    """``U`` when ``loop`` runs from ``U(row)`` to before ``U(row + 1) - 1``, ``U`` in
    ``whole``."""
    lo, cond = binds.get(_name(loop.init)), loop.cond
    if lo is None or lo.uf not in whole or lo.args != (Var(row),):
        return None
    if not (isinstance(cond, Op) and cond.op == "<" and cond.args[0] == Var(loop.var)):
        return None
    hi = cond.args[1]
    if not (isinstance(hi, Op) and hi.op == "-" and hi.args[1] == Int(1)):
        return None
    up = binds.get(_name(hi.args[0]))
    following = (Op("+", (Int(1), Var(row))), Op("+", (Var(row), Int(1))))
    return lo.uf if up is not None and up.uf == lo.uf and up.args[0] in following else None


def _name(e: Expr) -> str:
    return e.name if isinstance(e, Var) else ""


def _only_at(stmt: StmtMacro, call: Call, var: str) -> int | None:
    """The parameter of ``stmt`` that ``call`` passes the pair loop's ``var`` as, when its
    statement is one accumulation (into a target of no parameter) whose value uses that
    parameter alone; else None."""
    red = stmt.reduction
    if red is None or red.uses or stmt.operation is not None or len(stmt.body) != 1:
        return None
    at = [n for n, a in enumerate(call.args) if a == Var(var)]
    if len(at) != 1:
        return None
    names = set()
    for node in cx.nodes(red.value):
        if isinstance(node, cx.Text):
            return None
        if isinstance(node, cx.Param):
            names.add(node.name)
    return at[0] if names <= {stmt.params[at[0]]} else None


def lines(flat: FlatPairs, expr: Callable[[Expr], str]) -> list[str]:
    """The flat pass and the rows' pass (``expr`` prints a loop expression), adding their
    difference to the statement's target."""
    s, u = flat.stmt, flat.ptr
    red = s.reduction
    assert red is not None

    def value(at: str) -> str:
        if flat.order is not None:  # the two entries compared as they are
            v, op = flat.order
            return f"({v}[{at} + 1] {op} {v}[{at}])"
        args = ["0"] * len(s.params)
        args[flat.at] = at
        return f"{s.name}_value({', '.join(args)})"

    target = f"{s.name}_target({', '.join(['0'] * len(s.params))})"
    first, end, b = expr(flat.first), expr(flat.end), flat.row
    rows = f"({first}) < ({end})"  # no row: the pointer array may be empty, read nothing
    guard = rows if flat.guard is None else f"({expr(flat.guard)}) && {rows}"
    out = [f"if ({guard})"]
    out += [
        "{",
        f"  const int64_t spf_fp_lo = (int64_t){u}({first}), spf_fp_hi = (int64_t){u}({end});",
        f"  {red.ctype} spf_fp_n = 0;",
        "  for (int64_t spf_t = spf_fp_lo; spf_t < spf_fp_hi - 1; spf_t++)",
        f"    spf_fp_n += {value('spf_t')};",
        f"  for (int64_t {b} = {first}; {b} < {end}; {b}++)",
        "  {",
        f"    const int64_t spf_fp_e = (int64_t){u}({b} + 1);",
        f"    if ((int64_t){u}({b}) < spf_fp_e && spf_fp_e < spf_fp_hi)",
        f"      spf_fp_n -= {value('spf_fp_e - 1')};",
        "  }",
        f"  {target} += spf_fp_n;",
        "}",
    ]
    return out
