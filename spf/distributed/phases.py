"""Phases of a row-distributed computation: where the executor stops to combine the ranks.

Statements run in schedule order, grouped by their outermost schedule constant (statements
sharing it share a loop nest). A new phase starts at a group that reads a scalar an earlier
group of the current phase accumulates over the rows (the sum over the ranks must be known
first: ``alpha = rr / pq`` after ``pq += p(i) * q(i)``), at a group that accumulates into
a scalar an earlier group of the phase reads (a phase starts with its sums zeroed, so that
group reads the value on entry), and around each *replicated*
statement (one outside the distributed loop that only touches scalars, run by every rank on
the same values). The executor runs the phases in order, each on the rank's rows, and sums
each phase's accumulations over the ranks (``MPI_Allreduce``) at its end, so a CG iteration
is one computation. A group that reads a scalar it accumulates into itself is refused
(each rank would read its partial sum).

A vector read through an index array may be written in the same computation (CG's new
direction ``p``) only by its own rows and only in phases after every such read: the
exchange happens once, at the start of the call, so a later read would see old ghosts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.distributed.analysis import GhostAccess
    from spf.distributed.statements import Statement

_ROOT = re.compile(r"->\s*\[\s*(-?\d+)\s*[,\]]")


@dataclass(frozen=True)
class Phase:
    """Statements run together; ``reductions``: the scalars summed over the ranks after."""

    stmts: tuple[str, ...]
    replicated: bool
    reductions: tuple[str, ...]


def _root(s: Statement) -> int:
    found = _ROOT.search(str(s.schedule))
    if found is None:
        raise CodegenError(
            f"distribute_rows: the schedule {s.schedule} of {s.name} does not start with a "
            "constant, so its phase cannot be ordered; give it a schedule like [0, i, 0]"
        )
    return int(found.group(1))


def _scalars(s: Statement, *, reduced: bool) -> set[str]:
    """Constant-index data spaces ``s`` accumulates into (``reduced``) or reads otherwise."""
    parsed = s.parsed
    targets = {(a.data_space, a.indices) for a in parsed.reductions}
    accesses = parsed.reductions if reduced else parsed.reads
    return {
        a.data_space
        for a in accesses
        if all(not re.search(r"[A-Za-z_]", i) for i in a.indices)
        and (reduced or (a.data_space, a.indices) not in targets)
    }


def split(
    stmts: list[Statement], replicated: set[str], reductions: set[str], ghosts: list[GhostAccess]
) -> tuple[Phase, ...]:
    """The phases (module docstring); CodegenError for an order the exchange cannot serve."""
    order = sorted(stmts, key=lambda s: (_root(s), stmts.index(s)))
    phases: list[tuple[list[Statement], bool, set[str]]] = []
    read: set[str] = set()  # the scalars the current phase's groups read
    for root in sorted({_root(s) for s in order}):
        group = [s for s in order if _root(s) == root]
        rep = {s.name in replicated for s in group}
        if len(rep) > 1:
            raise CodegenError(
                f"distribute_rows: {', '.join(s.name for s in group)} share a loop nest but "
                "only some are in the distributed loop; schedule the scalar statements apart"
            )
        is_rep = rep.pop()
        reads = set().union(*(_scalars(s, reduced=False) for s in group))
        summed = set()
        if not is_rep:
            summed = set().union(*(_scalars(s, reduced=True) for s in group)) & reductions
            _check_no_partial_reads(group, reads & summed)
        # a phase starts with its sums zeroed: a group reading a sum of the current phase,
        # or summing into a scalar an earlier group of it read, starts a new phase
        if not phases or is_rep or phases[-1][1] or reads & phases[-1][2] or summed & read:
            phases.append(([], is_rep, set()))
            read = set()
        phases[-1][0].extend(group)
        read |= reads
        phases[-1][2].update(summed)
    out = tuple(
        Phase(tuple(s.name for s in ss), rep, tuple(sorted(red))) for ss, rep, red in phases
    )
    _check_writes_after_reads(stmts, out, ghosts)
    return out


def _check_no_partial_reads(group: list[Statement], names: set[str]) -> None:
    """CodegenError when a loop nest reads a scalar it accumulates into over the rows: each
    rank's running value there is its own partial sum (started from zero), not the
    single-process value, which the ranks know only after the nest."""
    for name in sorted(names):
        summing = next(s for s in group if name in _scalars(s, reduced=True))
        reading = next(s for s in group if name in _scalars(s, reduced=False))
        raise CodegenError(
            f"distribute_rows: {reading.name} reads {name} in the loop nest in which "
            f"{summing.name} accumulates into it over the distributed rows; there each rank's "
            f"{name} holds its own partial sum (all of {name} starts the nest at zero), not "
            f"what one process reads (the sum over the ranks is known after the nest): read "
            f"{name} in a later loop nest (another first schedule constant), or accumulate "
            "into another scalar"
        )


def _check_writes_after_reads(
    stmts: list[Statement], phases: tuple[Phase, ...], ghosts: list[GhostAccess]
) -> None:
    phase_of = {name: n for n, p in enumerate(phases) for name in p.stmts}
    for g in ghosts:
        if g.write:
            continue
        for s in stmts:
            if any(a.data_space == g.data for a in s.parsed.writes) and (
                phase_of[s.name] <= phase_of[g.stmt]
            ):
                raise CodegenError(
                    f"distribute_rows: {s.name} writes {g.data}, which {g.stmt} reads through "
                    f"an index array in the same or a later phase; ghosts are exchanged once "
                    "per call, so they would be stale (a Gauss-Seidel sweep is not distributed "
                    "this way): write a new vector, or write it after a combining step"
                )


__all__ = ["Phase", "split"]
