"""Loop counters of a narrow type (``unsigned char``, ``short``...): C's ``i++`` converts
``i + 1`` back to the counter's type, so past the type's largest value the counter wraps
(``unsigned char`` 255 -> 0, ``signed char`` 127 -> -128 under gcc) and a loop ``i < n`` with
``n > 255`` never ends. The import reads a loop as the range its bounds give; it accepts a
narrow counter only where isl proves every value of that range, and the value one step past
each, within the type, so the C loop ends as the range does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.frontend.conds import domain_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.frontend.conds import Cond
    from spf.frontend.exprs import Scope

NARROW = {
    "int8_t": ("signed char", -128, 127),
    "uint8_t": ("unsigned char", 0, 255),
    "int16_t": ("short", -32768, 32767),
    "uint16_t": ("unsigned short", 0, 65535),
}
"""The counter types that wrap within the values a loop commonly runs over: C name, least
and largest value."""


def narrow_counter(
    scope: Scope,
    node: Any,
    it: str,
    step: tuple[int, tuple[int, str] | None],
    conds: Sequence[Cond],
) -> None:
    """ParseError at loop ``node`` when its counter ``it`` is of a narrow type and isl does
    not prove that it and its next value stay within the type over ``conds`` (the enclosing
    loops' and ifs' constraints and the loop's own bounds); ``step`` is the constant step
    and, for a symbolic one, ``(sign, increment text)``."""
    var = scope.vars.get(it)
    if var is None or var.base not in NARROW:
        return
    c_type, least, largest = NARROW[var.base]
    value, symbolic = step
    if symbolic is not None:
        sign, inc = symbolic
        after = f"{it} + ({inc})" if sign > 0 else f"{it} - ({inc})"
    else:
        after = f"{it} + ({value})"
    iters = ", ".join(scope.iters)
    where = domain_text(list(conds)) or "0 = 0"
    outside = f"{it} < {least} || {it} > {largest} || {after} < {least} || {after} > {largest}"
    from spf.errors import SpfError
    from spf.sets import Set

    try:
        proved = Set(f"{{[{iters}]: ({where}) && ({outside})}}").is_empty()
    except (SpfError, ValueError):
        proved = False
    if proved:
        return
    edge = largest if (symbolic or (value, 0))[0] > 0 else least
    wrapped = least if edge == largest else largest
    raise scope.fail(
        node,
        f"loop variable {it!r} is {c_type} ({least}..{largest}): past {edge}, C's step "
        f"wraps it to {wrapped}, so where the loop's bound lets it pass {edge} the C loop "
        f"never ends; spf cannot prove that the bounds keep it within {least}..{largest}",
        f"declare {it!r} int (or long), or bound the loop so that it stays within the type",
    )


__all__ = ["NARROW", "narrow_counter"]
