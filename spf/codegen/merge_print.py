"""C text of a :class:`~spf.codegen.loop_ast.Merge` (every C-like printer: C, OpenMP, MPI,
CUDA, HLS).

Two cursors walk the sorted lists; each step compares the current coordinates, runs the
body of the case that holds (equal: ``both``; the left one smaller: ``left_only``; the
right one smaller: ``right_only``) and advances the cursor(s) holding the smaller
coordinate inside that case (``j1++``: the branch predictor then runs ahead to the next
keys' loads, where a branchless ``j1 += k1 <= k2`` makes each step wait for the last
comparison, 1.15x the time of SpAdd's merge on a random matrix). A union then runs the
rest of the longer list. Every position of either list is visited once: ``O(len1 + len2)``.
A checked call relies on that, whatever the lists hold: it tests a union's ordering facts in
each one-sided body and in ``both``, which between them reach every position of that side's
list (:func:`spf.analysis.fact_plan.union_sides`); a union step that skipped positions would
have to change that plan too.

An intersection runs no body where the keys differ, so the cursor with the smaller key
*gallops* to the first key not below the other (doubling steps, then a binary search):
``O(len1 + len2)`` still, and ``O(short · log(long))`` when one list is much shorter than
the other (ILU(0) on a matrix with a dense row updated by short rows)::

    {
      int64_t j1 = k + 1;
      int64_t j2 = diag(col(k)) + 1;
      const int64_t spf_end_j1 = rowptr(1 + i);
      const int64_t spf_end_j2 = rowptr(1 + col(k));
      while (j1 < spf_end_j1 && j2 < spf_end_j2)
      {
        const int64_t spf_key_j1 = col(j1);
        const int64_t spf_key_j2 = col(j2);
        if (spf_key_j1 == spf_key_j2)
        {
          s1(i, k, j1, j2);
          j1++;
          j2++;
        }
        else if (spf_key_j1 < spf_key_j2)
        {
          ... j1 gallops to the first key >= spf_key_j2 (or spf_end_j1)
        }
        else
        {
          ... j2 gallops to the first key >= spf_key_j1 (or spf_end_j2)
        }
      }
    }
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.cexpr import to_c
from spf.codegen.c import expr, loop_tree

if TYPE_CHECKING:
    from collections.abc import Callable

    from spf.codegen.emitter import Emitter
    from spf.codegen.loop_ast import Cursor, Merge, Node


def print_merge(out: Emitter, n: Merge, body: Callable[[Node], None]) -> None:
    """Print ``n`` to ``out``; ``body`` prints a case's statements (the printer's own node
    printer: CPU code, or one CUDA thread's)."""
    a, b = n.left, n.right
    ka, kb = f"spf_key_{a.var}", f"spf_key_{b.var}"
    ea, eb = f"spf_end_{a.var}", f"spf_end_{b.var}"
    with out.braces():
        out.line(f"int64_t {a.var} = {expr(a.init)};")
        out.line(f"int64_t {b.var} = {expr(b.init)};")
        out.line(f"const int64_t {ea} = {expr(a.end)};")
        out.line(f"const int64_t {eb} = {expr(b.end)};")
        out.line(f"while ({a.var} < {ea} && {b.var} < {eb})")
        with out.braces():
            out.line(f"const int64_t {ka} = {expr(a.key)};")
            out.line(f"const int64_t {kb} = {expr(b.key)};")
            if not n.is_union:
                _intersection_step(out, n, body)
                return
            _case(out, f"if ({ka} == {kb})", n.both, body, (a.var, b.var))
            _case(out, f"else if ({ka} < {kb})", n.left_only, body, (a.var,))
            _case(out, "else", n.right_only, body, (b.var,))
        for cursor, end, rest in ((a, ea, n.left_only), (b, eb, n.right_only)):
            if rest is not None:
                _tail(out, cursor, end, rest, body)


def _intersection_step(out: Emitter, n: Merge, body: Callable[[Node], None]) -> None:
    """Equal keys: the body, both cursors advance; else the smaller one gallops."""
    a, b = n.left, n.right
    ka, kb = f"spf_key_{a.var}", f"spf_key_{b.var}"
    out.line(f"if ({ka} == {kb})")
    with out.braces():
        body(n.both)
        out.line(f"{a.var}++;")
        out.line(f"{b.var}++;")
    out.line(f"else if ({ka} < {kb})")
    with out.braces():
        _gallop(out, a, kb)
    out.line("else")
    with out.braces():
        _gallop(out, b, ka)


def _gallop(out: Emitter, c: Cursor, target: str) -> None:
    """Move cursor ``c`` (its key below ``target``) to its first position whose key is not
    below ``target``, or to its end: steps of 1, 2, 4, ... then a binary search."""
    v, end = c.var, f"spf_end_{c.var}"
    reached = to_c(cx.Binary(">=", loop_tree(c.key), cx.Name(target)))
    lo, hi, step = f"spf_lo_{v}", f"spf_hi_{v}", f"spf_step_{v}"
    out.line(f"int64_t {lo} = {v};")
    out.line(f"int64_t {step} = 1;")
    out.line("for (;;)")
    with out.braces():
        out.line(f"{v} = {lo} + {step};")
        out.line(f"if ({v} >= {end})")
        with out.braces():
            out.line(f"{v} = {end};")
            out.line("break;")
        out.line(f"if ({reached})")
        with out.braces():
            out.line("break;")
        out.line(f"{lo} = {v};")
        out.line(f"{step} += {step};")
    out.line(f"int64_t {hi} = {v};")
    out.line(f"while ({hi} - {lo} > 1)")
    with out.braces():
        out.line(f"{v} = {lo} + ({hi} - {lo}) / 2;")
        out.line(f"if ({reached})")
        with out.braces():
            out.line(f"{hi} = {v};")
        out.line("else")
        with out.braces():
            out.line(f"{lo} = {v};")
    out.line(f"{v} = {hi};")


def _case(
    out: Emitter, head: str, n: Node | None, body: Callable[[Node], None], advance: tuple[str, ...]
) -> None:
    """One case of a union's step: its body (if any), then the cursors it consumed."""
    out.line(head)
    with out.braces():
        if n is not None:
            body(n)
        for v in advance:
            out.line(f"{v}++;")


def _tail(out: Emitter, c: Cursor, end: str, n: Node, body: Callable[[Node], None]) -> None:
    """The positions of one list after the other ran out (a union)."""
    out.line(f"for (; {c.var} < {end}; {c.var}++)")
    with out.braces():
        body(n)
