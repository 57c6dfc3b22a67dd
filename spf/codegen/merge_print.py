"""C text of a :class:`~spf.codegen.loop_ast.Merge` (every C-like printer: C, OpenMP, MPI,
CUDA, HLS).

Two cursors walk the sorted lists; each step compares the current coordinates, runs the
body of the case that holds (equal: ``both``; the left one smaller: ``left_only``; the
right one smaller: ``right_only``) and advances the cursor(s) holding the smaller
coordinate, without a branch (``j1 += k1 <= k2``). A union then runs the rest of the longer
list. Every position of either list is visited once: ``O(len1 + len2)``::

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
        }
        j1 += spf_key_j1 <= spf_key_j2;
        j2 += spf_key_j2 <= spf_key_j1;
      }
    }
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen.c import expr

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
            _case(out, f"if ({ka} == {kb})", n.both, body)
            if n.left_only is not None:
                _case(out, f"else if ({ka} < {kb})", n.left_only, body)
            if n.right_only is not None:
                last = "else" if n.left_only is not None else f"else if ({kb} < {ka})"
                _case(out, last, n.right_only, body)
            out.line(f"{a.var} += {ka} <= {kb};")
            out.line(f"{b.var} += {kb} <= {ka};")
        for cursor, end, rest in ((a, ea, n.left_only), (b, eb, n.right_only)):
            if rest is not None:
                _tail(out, cursor, end, rest, body)


def _case(out: Emitter, head: str, n: Node, body: Callable[[Node], None]) -> None:
    out.line(head)
    with out.braces():
        body(n)


def _tail(out: Emitter, c: Cursor, end: str, n: Node, body: Callable[[Node], None]) -> None:
    """The positions of one list after the other ran out (a union)."""
    out.line(f"for (; {c.var} < {end}; {c.var}++)")
    with out.braces():
        body(n)
