"""A bound on the isl work of scanning one computation (the safety net against a hang).

isl counts the elementary steps of its algorithms (simplex pivots, eliminations) and fails
an operation once a context's ``max_operations`` is exceeded. :func:`isl_budget` sets that
bound around the scanner and the implemented-domain check and turns running out into a
``CodegenError`` that says what to change: a schedule whose loops fall into very many pieces
(skewed tiles separated into full and partial ones, many ``min``/``max`` bounds) could
otherwise keep isl busy for minutes or hours. Nested budgets share the outermost one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import islpy as isl

from spf.errors import CodegenError, SpfError

ISL_MAX_OPERATIONS = 20_000_000
"""isl steps one phase of codegen (preparing, scanning, verifying) may take, about 20 s of
isl work; the heaviest kernels measured (GEMM and blur skewed, then tiled 8x8 or 32x32)
need under 3 million. Raise it for schedules that legitimately need more; lower it to fail
faster."""

_EXCEEDED = "maximal number of operations exceeded"
_depth = 0


@contextmanager
def isl_budget(what: str) -> Iterator[None]:
    """Run the body under :data:`ISL_MAX_OPERATIONS`; ``what`` names the work in the error
    (``scanning the loops of gemm``)."""
    global _depth
    ctx = isl.DEFAULT_CONTEXT
    outermost = _depth == 0
    previous = ctx.get_max_operations()
    if outermost:
        ctx.reset_operations()
        ctx.set_max_operations(ISL_MAX_OPERATIONS)
    _depth += 1
    try:
        yield
    except (isl.Error, SpfError, TypeError) as err:
        if not exceeded(err):
            raise
        raise CodegenError(
            f"{what} took more than {ISL_MAX_OPERATIONS} isl operations and was stopped: the "
            "schedule's loops fall into too many pieces (e.g. skewed, non-rectangular tiles "
            "scanned as full and partial tiles, with min/max bounds in every loop); simplify "
            "the schedule (tile before skewing, fewer tiled or split loops, larger tiles), or "
            "raise spf.codegen.budget.ISL_MAX_OPERATIONS"
        ) from err
    finally:
        _depth -= 1
        if outermost:
            ctx.set_max_operations(previous)
            ctx.reset_operations()


def exceeded(err: BaseException) -> bool:
    """Whether ``err`` (or an error it was raised from) is isl running out of operations.
    isl does not always report it as such (a parse aborted midway says "syntax error"), so
    an isl error under an exhausted budget counts too: a tiny isl step fails then. So does
    a TypeError (islpy converting a value whose printing isl refused: ``int(None)``)."""
    seen: BaseException | None = err
    found = False
    while seen is not None:
        if isinstance(seen, isl.Error):
            if _EXCEEDED in str(seen):
                return True
            found = True
        elif isinstance(seen, TypeError):  # islpy read a value isl failed to print
            found = True
        seen = seen.__cause__ or seen.__context__
    if not found or isl.DEFAULT_CONTEXT.get_max_operations() == 0:
        return False
    try:
        isl.Set("{ [i] : 0 <= i <= 1 }").coalesce().is_empty()
    except isl.Error:
        return True
    return False


__all__ = ["ISL_MAX_OPERATIONS", "exceeded", "isl_budget"]
