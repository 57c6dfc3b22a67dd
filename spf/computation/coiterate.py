"""``stmt.coiterate(i, j, left=None, right=None)``: run two loops as one merge of sorted
coordinate lists (docs/coiteration.md, :mod:`spf.analysis.coiteration`).

The command checks, when it is given, that the statement's domain is a merge of loops ``i``
and ``j`` (their ranges and one equality of UF values ``c1(i) = c2(j)``), that the facts
prove both lists sorted, and, for a union, that ``left`` (over ``[outer, i]``) and ``right``
(over ``[outer, j]``) run over the same outer loops and ranges; it refuses otherwise, saying
what is missing. It records itself as the tag ``coiterate(j, left=.., right=..)`` on loop
``i``, which code generation (and the interpreter, for a union) reads; the statements'
domains and schedules do not change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from spf.errors import ArgumentError, ScheduleError, UndeclaredError
from spf.schedule.commands import Effect, Loop, check_loop_ref, register_command

if TYPE_CHECKING:
    from spf.computation.statement import Stmt


@register_command
@dataclass(frozen=True, kw_only=True)
class Coiterate(Effect):
    """``stmt.coiterate(i, j, left=None, right=None)`` (recorded on ``stmt``)."""

    method: ClassVar[str] = "coiterate"
    n_required: ClassVar[int] = 2
    i: Loop
    j: Loop
    left: str | None = None
    right: str | None = None

    def __post_init__(self) -> None:
        check_loop_ref("coiterate", "i", self.i)
        check_loop_ref("coiterate", "j", self.j)
        for what in ("left", "right"):
            value = getattr(self, what)
            if value is not None and (not isinstance(value, str) or not value):
                raise ArgumentError(
                    f"coiterate: {what} must be a statement or its name, got {value!r}"
                )

    def perform(self, stmt: Stmt) -> None:
        comp = stmt.computation
        if comp is None:
            raise ScheduleError(f"statement {stmt.name}: add it to a Computation first")
        i, j = (_loop_name(stmt, loop) for loop in (self.i, self.j))
        for other in (self.left, self.right):
            if other is not None:
                comp.stmt(other)  # UndeclaredError for an unknown statement
        stmt._tags = comp._coiterate_tags(stmt, i, j, self.left, self.right)


def _loop_name(stmt: Stmt, loop: Loop) -> str:
    loops = stmt.loops
    if isinstance(loop, int):
        if loop >= len(loops):
            raise ScheduleError(
                f"coiterate: statement {stmt.name} has {len(loops)} loops ({', '.join(loops)}); "
                f"depth {loop} is not one of them"
            )
        return loops[loop]
    if loop not in loops:
        raise UndeclaredError("loop", loop, loops, hint=f"of statement {stmt.name}")
    return loop
