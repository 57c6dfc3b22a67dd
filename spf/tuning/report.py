"""Progress of a tuning run: a tqdm bar on a terminal, lines of the ``spf`` logger otherwise.

The bar counts seconds of the budget and shows the candidates measured, those refused by
the legality check and the best so far; without a terminal (or without tqdm) each measured
or refused candidate is one INFO line of the ``spf`` logger (:mod:`spf.progress`).
"""

from __future__ import annotations

from spf.progress import LOGGER, Bar


class Reporter:
    """Reports one :func:`spf.tune` run on ``name`` with ``budget`` seconds."""

    def __init__(self, name: str, budget: float, bar: bool | None = None) -> None:
        self.name = name
        self._bar = Bar(f"tune {name}", budget, bar)

    def update(self, elapsed: float, tried: int, illegal: int, best: str, speedup: float,
               last: str) -> None:  # fmt: skip
        """After each candidate: counts, the best so far and what just happened."""
        if self._bar.shown:
            self._bar.update(
                elapsed, f"{tried} tried, {illegal} illegal, best {speedup:.2f}x: {best}"
            )
            return
        LOGGER.info(
            "tune %s: %.1f s, %d tried, %d illegal, best %.2fx (%s); last: %s",
            self.name, elapsed, tried, illegal, speedup, best, last,
        )  # fmt: skip

    def close(self) -> None:
        self._bar.close()
