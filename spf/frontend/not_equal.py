"""A loop condition ``i != e`` (docs/import_c.md): with a step of +1 (-1) the loop stops the
first time ``i`` reaches ``e``, so where ``i`` starts at or below (above) ``e`` the condition
is ``i < e`` (``i > e``). That start is proved by isl under the enclosing loops and
conditions, or, over integer parameters alone, assumed (``comp.assume``, checked at every
call: C would run past ``e`` otherwise); anything else is refused, saying to write ``<``."""

from __future__ import annotations

import re
from typing import Any

from spf.errors import SpfError
from spf.frontend.conds import Cmp, Cond, negate
from spf.frontend.cparse import c_ast
from spf.frontend.exprs import NotAffineError, Scope
from spf.frontend.rewrite import located


def as_ordered(
    s: Scope,
    p: Any,
    it: str,
    step: int,
    start: Cond,
    coefficients: tuple[int | None, int | None],
    facts: list[tuple[str, Any]],
) -> Any:
    """``p`` (``left != right``, a condition of loop ``it``) as the ordered comparison the loop
    runs under, ``coefficients`` being those of ``it`` in ``left`` and ``right`` (``step``
    0: a symbolic step, refused)."""
    from pycparser.c_generator import CGenerator  # type: ignore[import-untyped]

    shown = CGenerator().visit(p)
    left, right = coefficients
    ordered = f"{it} < hi" if step >= 0 else f"{it} > lo"
    if left is None or right is None or abs(left - right) != 1 or abs(step) != 1:
        raise s.fail(
            p,
            f"loop {it!r}: '{shown}' reads as an ordered bound only with {it} (coefficient 1) "
            "on one side and a step of +1 or -1",
            f"write {ordered}",
        )
    op = "<" if (left - right) * step > 0 else ">"  # left - right moves toward 0
    if not isinstance(start, Cmp) or start.lhs != it:
        raise s.fail(p, f"loop {it!r}: '{shown}' needs a single start value", f"write {ordered}")
    try:
        s.in_bound = True
        first = s.cond(located(c_ast.BinaryOp(f"{op}=", p.left, p.right), p))
    except NotAffineError:
        return located(c_ast.BinaryOp(op, p.left, p.right), p)  # the bound says why
    finally:
        s.in_bound = False

    def started(c: Cond) -> str:
        return re.sub(rf"\b{re.escape(it)}\b", f"({start.rhs})", c.text())

    at_start = started(first)
    if not _never(s, started(negate(first))):
        if not set(re.findall(r"[A-Za-z_]\w*", at_start)) <= s.consts:
            raise s.fail(
                p,
                f"loop {it!r}: '{shown}' stops {it} only where it starts "
                f"{'at or below' if step > 0 else 'at or above'} the bound "
                f"({at_start}), which spf cannot prove here",
                f"write {CGenerator().visit(c_ast.BinaryOp(op, p.left, p.right))} (which runs "
                "no iteration where the start is past the bound)",
            )
        facts.append((at_start, p))
    return located(c_ast.BinaryOp(op, p.left, p.right), p)


def _never(s: Scope, cond: str) -> bool:
    """Whether ``cond`` holds nowhere the enclosing constraints do (isl)."""
    from spf.sets import Set

    where = f"{s.conds} && " if s.conds else ""
    try:
        return Set(f"{{[{', '.join(s.iters)}]: {where}{cond}}}").is_empty()
    except (SpfError, ValueError):
        return False
