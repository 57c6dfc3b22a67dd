"""What :func:`spf.tune` returns: the scheduled copy, the timings and the history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from spf.computation.computation import Computation


@dataclass(frozen=True)
class Trial:
    """One candidate of the search: its commands (Python, empty for the default schedule),
    a one-line summary, the thread count, the model's prediction, the measured median
    seconds (None unless it ran) and its ``status``: ``"baseline"``, ``"measured"``,
    ``"illegal"`` (refused by the legality check, never compiled) or ``"rejected"`` (a
    command did not apply or the code did not compile; ``reason`` says why); ``cost``: the
    seconds the search spent on it (scheduling, legality check, compilation, timing)."""

    commands: str
    summary: str
    threads: int | None
    predicted: float
    time: float | None
    status: str
    reason: str = ""
    cost: float = 0.0

    def to_data(self) -> dict[str, Any]:
        return {
            "commands": self.commands,
            "summary": self.summary,
            "threads": self.threads,
            "predicted": self.predicted,
            "time": self.time,
            "status": self.status,
            "reason": self.reason,
            "cost": self.cost,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Trial:
        return cls(
            commands=str(data.get("commands", "")),
            summary=str(data.get("summary", "")),
            threads=data.get("threads"),
            predicted=float(data.get("predicted", 0.0)),
            time=None if data.get("time") is None else float(data["time"]),
            status=str(data.get("status", "")),
            reason=str(data.get("reason", "")),
            cost=float(data.get("cost", 0.0)),
        )


@dataclass(frozen=True)
class TuneResult:
    """The outcome of :func:`spf.tune` (API.md §17).

    ``comp``: a scheduled copy of the computation (``comp.trace`` replays it);
    ``time`` / ``baseline_time``: median seconds per call of the chosen schedule and of the
    default one, timed interleaved; ``speedup``: their ratio; ``tried``: candidates
    measured; ``illegal``: candidates refused by the legality check (never compiled);
    ``history``: every candidate considered, in order (:class:`Trial`); ``threads``: the
    OpenMP thread count the chosen schedule was timed with (None: OpenMP's default);
    ``reused``: the result came from a record (nothing was measured); ``record``: the
    record's path (None when ``interrupted``, when the budget ran out before any candidate
    was measured, or when the cache could not be written: a warning says so);
    ``interrupted``: the search was stopped by Ctrl-C (``KeyboardInterrupt``): the best
    candidate measured until then, its ``time`` the search's estimate (no final timing),
    and no record written."""

    comp: Computation
    time: float
    baseline_time: float
    speedup: float
    tried: int
    illegal: int
    history: tuple[Trial, ...]
    threads: int | None = None
    reused: bool = False
    record: Path | None = None
    commands: str = ""
    interrupted: bool = False

    def __repr__(self) -> str:
        how = "reused" if self.reused else f"{self.tried} tried, {self.illegal} illegal"
        how += ", interrupted" if self.interrupted else ""
        return (
            f"TuneResult({self.comp.name}: {self.speedup:.2f}x, {self.time:.3g} s vs "
            f"{self.baseline_time:.3g} s, {how})"
        )
