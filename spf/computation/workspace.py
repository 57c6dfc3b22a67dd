"""Workspaces: a dense scratch array private to each iteration of a loop
(``stmt.workspace(name, loop, fill=0)``, docs/formats.md "Sparse outputs").

A workspace is a local data space (``comp.add_local``) that the statements inside one loop
(a row loop) use as scratch: a dense accumulator row, a marker array. Its contract:

* each thread that runs iterations of the loop has its own copy, filled with ``fill`` once
  before its first iteration (the generated code allocates one copy per thread, not one per
  iteration);
* at the start of an iteration every element holds ``fill`` or a value an earlier iteration
  on the same thread stored there, and the statements' results must not depend on which
  (reset what a row touched, or mark elements with the row number). spf trusts this, as it
  trusts ``assume`` facts: it drops the dependences on the workspace between different
  iterations of the loop, which makes ``parallelize(loop)`` legal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from spf.errors import ArgumentError, ScheduleError, UndeclaredError
from spf.schedule.commands import Effect, Loop, check_loop_ref, register_command

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


@register_command
@dataclass(frozen=True, kw_only=True)
class Workspace(Effect):
    """``stmt.workspace(name, loop, fill=0)`` (recorded on ``stmt``)."""

    method: ClassVar[str] = "workspace"
    n_required: ClassVar[int] = 2
    data_space: str
    loop: Loop
    fill: int | float = 0

    def __post_init__(self) -> None:
        if not isinstance(self.data_space, str) or not self.data_space.isidentifier():
            raise ArgumentError(
                f"workspace: expected the name of a local data space, got {self.data_space!r}"
            )
        check_loop_ref("workspace", "loop", self.loop)
        fill: object = self.fill
        if isinstance(fill, bool) or not isinstance(fill, (int, float)):
            raise ArgumentError(
                f"workspace({self.data_space!r}): fill must be a number, got {fill!r}"
            )

    def perform(self, stmt: Stmt) -> None:
        from spf.computation.layout import layout_of

        comp = stmt.computation
        if comp is None:
            raise ScheduleError(f"statement {stmt.name}: add it to a Computation first")
        name = self.data_space
        ds = comp.data_spaces.get(name)
        if ds is None:
            raise UndeclaredError(
                "data space",
                name,
                comp.data_spaces,
                hint=f"declare the workspace first: comp.add_local({name!r}, 'double', ('M',))",
            )
        if ds.role != "local" or not ds.shape:
            raise ScheduleError(
                f"workspace({name!r}): a workspace is a local array the function allocates "
                f"(comp.add_local({name!r}, type, shape)), not a {ds.role} data space"
                + ("" if ds.shape else " without a shape")
            )
        if comp.storage_of(name) is not None:
            raise ScheduleError(f"workspace({name!r}): it is stored in a buffer (store_in)")
        if isinstance(fill := self.fill, float) and ds.ctype not in ("double", "float"):
            raise ScheduleError(
                f"workspace({name!r}): fill {fill!r} is not a value of its type {ds.ctype}"
            )
        comp._loop_position(stmt, self.loop)  # raises for an unknown loop
        layout_of(comp).workspaces[name] = (stmt.name, self.loop, self.fill)


def workspace_of(comp: Computation, name: str) -> tuple[str, str | int, int | float] | None:
    """``(statement, loop, fill)`` of workspace ``name``, or None."""
    from spf.computation.layout import layout_of

    return layout_of(comp).workspaces.get(name)
