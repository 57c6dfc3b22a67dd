"""Loops of partial sums in the C printer: ``stmt.partial_sums(loop, count, min_trip)``.

A loop tagged ``sums(count,min_trip)`` whose body is one accumulation ``y(f) op= e`` into an
element that does not change across the loop (a sparse row's ``k`` loop of SpMV, or a
solve's row, ``x(i) -= A(k) * x(col(k))``, whose other reads of ``x`` the facts keep from
``x(i)``) is printed with ``count`` accumulators: the first is the statement's own local
(``spf_acc``, or the solve row's ``spf_row``), the others start from the operator's identity
(``spf_acc1``, ...). Iteration ``t`` of an instance (counted from its first) goes into
accumulator ``t mod count``: ``count`` iterations a step (each a block binding the loop
variable) while more than ``count`` are left, then the last one to ``count``, each tested.
A solve's row reads the row before's value from its local (``spf_prev``) in those last
ones alone, as the loop without the tag does in its last iteration. The accumulators are
then combined pairwise, ``(spf_acc + spf_acc1) + (spf_acc2 + spf_acc3)``. An instance of
fewer than ``min_trip`` iterations runs the loop as without the tag, and the test is
printed as unlikely (``__builtin_expect``) so that gcc lays the short rows' code out as
without the tag: printed plain, the lower solve of arrow (rows of one entry before the
diagonal) took 1.28x the untagged kernel's time, with the hint 1.01x (pushpull 0.70x either
way; hand runs on an AMD EPYC host, 2026-12-02). The form depends on
the trip count alone, so the serial kernel, every executor and every thread count of one
kernel give the same bits; they differ from the in-order loop's by rounding (the sum is
reassociated, which is why no default schedule prints it: API.md §15).

Why: a long row's in-order sum is one chain of dependent additions (4 cycles each on the
hosts measured), so its loads wait on it; with four chains they overlap. Measured on hand
C (docs/inspection.md): four sums took 0.68x (bcsstk13) and 0.73x (pushpull) the in-order
SpMV's time, and 1.19x-1.69x on rows of a few entries, hence ``min_trip``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from spf.codegen.loop_ast import Expr, For, Int, Op, expr_vars, upper_bound
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.c import CPrinter
    from spf.codegen.loop_ast import Call

IDENTITY = {"+=": "0", "-=": "0", "*=": "1"}
"""Each accumulator's start but the first's, by the statement's operator."""

COMBINE = {"+=": "+", "-=": "+", "*=": "*"}
"""How two accumulators are combined (``-=`` accumulators hold negated sums)."""


def accumulator(r: int) -> str:
    """The C name of accumulator ``r`` > 0 (the first is the statement's own local)."""
    return f"spf_acc{r}"


def combined(names: list[str], op: str) -> str:
    """The pairwise sum of ``names``: ``(a + b) + (c + d)``."""
    while len(names) > 1:
        names = [f"({a} {op} {b})" for a, b in zip(names[::2], names[1::2], strict=True)]
    return names[0].removeprefix("(").removesuffix(")")


def loop_end(n: For) -> Expr:
    """The exclusive end of loop ``n`` (``var < e`` or ``var <= e``, or a conjunction of
    them: their least), for a loop of step one; else ``CodegenError`` naming the loop."""
    from spf.codegen.c import expr

    last = upper_bound(n)
    if last is None or n.step != 1 or n.var in set(expr_vars(last)):
        raise CodegenError(
            f"partial_sums: loop {n.var} ({expr(n.cond)}, step {n.step}) is not a range of "
            "step one; partial sums need a loop var from a start while var < end"
        )
    if isinstance(last, Op) and last.op == "-" and last.args[1] == Int(1):
        return last.args[0]  # var < e
    return Op("+", (last, Int(1)))


def sums_for(
    printer: CPrinter, n: For, call: Call, sums: tuple[int, int], acc: tuple[str, str, str]
) -> None:
    """Print loop ``n`` (tagged ``sums(count,min_trip)``: ``sums``) around ``call``, an
    accumulation by operator ``op`` into the local ``first`` of C type ``ctype`` (``acc``:
    ``spf_acc``, or a solve row's ``spf_row``), as the module docstring says."""
    from spf.codegen.c import expr

    count, min_trip = sums
    op, ctype, first = acc
    if op not in IDENTITY:
        raise CodegenError(
            f"partial_sums: loop {n.var} of {call.stmt} accumulates with {op or 'several'} "
            f"statements; partial sums take one update by {', '.join(IDENTITY)}"
        )
    out = printer.out
    with out.braces():  # its locals scoped: a row may hold two loops of partial sums
        start, end, at = f"spf_s0_{n.var}", f"spf_s1_{n.var}", f"spf_sk_{n.var}"
        names = [first] + [accumulator(r) for r in range(1, count)]
        out.line(f"const int64_t {start} = {expr(n.init)};")
        out.line(f"const int64_t {end} = {expr(loop_end(n))};")
        out.line(f"if (__builtin_expect({end} - {start} >= {min_trip}, 0))")  # see the docstring
        with out.braces():
            rest = ", ".join(f"{a} = {IDENTITY[op]}" for a in names[1:])
            out.line(f"{ctype} {rest};")
            out.line(f"int64_t {at} = {start};")
            out.line(f"for (; {at} < {end} - {count}; {at} += {count})")
            with out.braces():  # never the last iteration: no read of the row before's local
                for r in range(count):
                    where = f"{at} + {r}" if r else at
                    printer.before_last(
                        functools.partial(_iteration, printer, n, call, where, names[r])
                    )
            for r in range(count):  # the instance's last 1 to count iterations, t mod count = r
                where = f"{at} + {r}" if r else at
                out.line(f"if ({where} < {end})")
                _iteration(printer, n, call, where, names[r])
            out.line(f"{first} = {combined(names, COMBINE[op])};")
        out.line("else")
        with out.braces():  # as without the tag
            plain = dataclasses.replace(n, tags=())
            printer.accumulate(call.stmt, first, lambda: printer.plain_for(plain))


def _iteration(printer: CPrinter, n: For, call: Call, value: str, name: str) -> None:
    """One iteration of ``n``'s body (``n.var`` bound to ``value``) into the local ``name``."""
    with printer.out.braces():
        printer.out.line(f"const int64_t {n.var} = {value};")
        printer.accumulate(call.stmt, name, lambda: printer.region(n.body))
