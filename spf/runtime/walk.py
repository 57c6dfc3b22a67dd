"""Statement instances in schedule order, enumerated as late as run-time index arrays need.

The interpreter runs every statement instance in the order of the current schedules,
read from the schedule relations themselves: each statement's instances are the points
``[t_0, .., t_{w-1}, x..]`` of its padded schedule restricted to its domain, ordered by the
time ``t`` (ties: statement order, then the iterators). Without run-time index arrays
(``add_data_space(..., index=True)``) every statement's points are enumerated once, up
front. A statement whose domain or schedule reads such an array (a conversion's row
pointers, a path chosen at run time) cannot be enumerated before the statements computing
the array have run, so the order is walked one schedule position at a time: the values of
position ``d`` under a fixed prefix are listed when the walk reaches that prefix (after
everything earlier in the schedule has run), and listed again for the statements reading
index arrays whenever an index array was written since (a loop whose bounds the loop
itself moves); such a statement goes down every value's subtree, where a statement before
it may write what its bounds read, and its instances are enumerated with the whole time
fixed. Subtrees with no such statement are enumerated in one go, as above.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf.analysis.dependences import padded
from spf.errors import CodegenError, SpfError

if TYPE_CHECKING:
    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Set

Instance = tuple[tuple[int, ...], int, tuple[int, ...]]
"""``(time, statement number, iterator values)``."""


class Writes:
    """A counter of writes to run-time index arrays (bumped by :class:`Watched`)."""

    def __init__(self) -> None:
        self.count = 0


class Watched:
    """A run-time index array as the statements' generated Python stores into it: every
    store counts (:class:`Writes`), reads go to the array (which the UF lookups share)."""

    def __init__(self, array: Any, writes: Writes) -> None:
        self.array, self.writes = array, writes
        self.shape, self.dtype = array.shape, array.dtype

    def __getitem__(self, idx: tuple[int, ...]) -> Any:
        return self.array[idx]

    def __setitem__(self, idx: tuple[int, ...], value: Any) -> None:
        self.array[idx] = value
        self.writes.count += 1


class _Timed:
    """One statement's instances as points ``[time.., iterators..]``."""

    def __init__(self, number: int, stmt: StmtReading, width: int, runtime: frozenset[str]) -> None:
        self.number, self.name, self.width = number, stmt.name, width
        sched = padded(stmt, width).intersect_domain(stmt.domain)
        self.points_set: Set = sched.inverse().as_set()
        # the same instances as [iterators.., time..]: enumerated iterators first, they cost
        # time proportional to the domain's points (each time is then one value); scanned
        # time first, a tile loop over a CSR row (floor(k/5) before k, whose bounds need
        # the row i a later point loop fixes) ran over the UF values' whole range, so a
        # tiled ILU(0) of 9 rows took minutes
        self.by_iterators: Set = sched.as_set()
        self.arity = stmt.domain.arity
        outs = sched.out_vars
        self.constants = [int(v) if _is_int(v) else None for v in outs]
        used = {call.split("(", 1)[0] for call in self.points_set.uf_calls}
        self.runtime = bool(used & runtime)
        self._prefixes: dict[int, Set] = {}

    def _find(
        self, s: Set, params: Mapping[str, int], ufs: Mapping[str, Any], fixed: Sequence[int]
    ) -> list[tuple[int, ...]]:
        try:
            return s._points(params, ufs, fixed)
        except SpfError as err:
            raise CodegenError(f"interpret: statement {self.name}: {err}") from err

    def instances(
        self, params: Mapping[str, int], ufs: Mapping[str, Any], prefix: Sequence[int]
    ) -> list[Instance]:
        if not prefix:
            n = self.arity
            found = self._find(self.by_iterators, params, ufs, ())
            return [(p[n:], self.number, p[:n]) for p in found]
        w = self.width
        pts = self._find(self.points_set, params, ufs, prefix)
        return [(p[:w], self.number, p[w:]) for p in pts]

    def values(
        self, d: int, params: Mapping[str, int], ufs: Mapping[str, Any], prefix: Sequence[int]
    ) -> list[int]:
        """The values of time position ``d`` under ``prefix`` (with the arrays as they are)."""
        const = self.constants[d]
        if const is not None:
            return [const]
        upto = self._prefixes.get(d)
        if upto is None:
            upto = self._prefixes[d] = self.points_set.as_relation(d + 1).domain()
        return sorted({p[d] for p in self._find(upto, params, ufs, prefix)})


def _moving(s: _Timed, d: int) -> bool:
    return s.runtime and s.constants[d] is None


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


class ScheduleWalk:
    """Calls ``run(instance)`` for every statement instance of ``ir`` in schedule order
    (module docstring); ``runtime`` names the run-time index arrays, ``writes`` counts the
    stores into them."""

    def __init__(
        self,
        ir: ComputationIR,
        params: Mapping[str, int],
        ufs: Mapping[str, Any],
        runtime: frozenset[str],
        writes: Writes,
    ) -> None:
        width = ir.schedule_width
        self.width = width
        self.stmts = [_Timed(k, s, width, runtime) for k, s in enumerate(ir.parsed_stmts)]
        self.params, self.ufs, self.writes = params, ufs, writes

    def run(self, run: Callable[[Instance], None]) -> None:
        self._walk((), self.stmts, run)

    def _walk(
        self, prefix: tuple[int, ...], stmts: list[_Timed], run: Callable[[Instance], None]
    ) -> None:
        if not stmts:
            return
        if not any(s.runtime for s in stmts) or len(prefix) == self.width:
            found: list[Instance] = []
            for s in stmts:
                found += s.instances(self.params, self.ufs, prefix)
            for inst in sorted(found):
                run(inst)
            return
        d = len(prefix)
        fixed = {s.number: s.values(d, self.params, self.ufs, prefix) for s in stmts}
        seen = {s.number: self.writes.count for s in stmts}
        done: int | None = None
        while True:
            for s in stmts:  # loops whose bounds read index arrays written since
                if _moving(s, d) and seen[s.number] != self.writes.count:
                    fixed[s.number] = s.values(d, self.params, self.ufs, prefix)
                    seen[s.number] = self.writes.count
            later = [v for vs in fixed.values() for v in vs if done is None or v > done]
            if not later:
                return
            done = min(later)
            # a loop bounded by index arrays may gain this value while the subtree runs
            # (a statement before it under the same value writes them): it comes along
            under = [s for s in stmts if done in fixed[s.number] or _moving(s, d)]
            self._walk((*prefix, done), under, run)


__all__ = ["Instance", "ScheduleWalk", "Watched", "Writes"]
