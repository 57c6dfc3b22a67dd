"""The passes of Python's garbage collector inside a timed region (``spf bench``).

A first call's CPU time includes every collection that runs while it runs, and a full
(generation-2) pass walks every tracked object of the process, whatever allocated them: on
the shared machine, 0.31 s for a heap of 3M small lists (one ``gc.collect()``, CPU time),
where a warm ``compile()`` takes about 5 ms. Which call a full pass lands in is decided by
the collector's counters (a young pass runs whenever allocations outnumber frees by the
threshold; every tenth young pass of generation 1 may become a full one once the objects
that survived since the last full pass reach a quarter of the old generation), so the same
region measures milliseconds in one run and a few hundred in another. :class:`GcPasses`
records the passes a region ran and their CPU time, so a table can say how much of a
measurement was the collector, and whether it walked the whole heap.
"""

from __future__ import annotations

import gc
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["GcPasses"]


class GcPasses:
    """``with GcPasses() as passes:`` records each collection the body runs, as
    ``(generation, CPU seconds of this thread)`` in :attr:`passes`."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float]] = []
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.passes.append((int(info["generation"]), time.thread_time() - self._started))

    def __enter__(self) -> GcPasses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        gc.callbacks.remove(self._callback)

    @property
    def seconds(self) -> float:
        """CPU seconds spent in the collector."""
        return sum(s for _, s in self.passes)

    @property
    def full(self) -> int:
        """How many passes were full ones (generation 2: the whole heap)."""
        return sum(1 for g, _ in self.passes if g == 2)
