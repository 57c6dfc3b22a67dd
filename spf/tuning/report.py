"""Progress of a tuning run: a tqdm bar on a terminal, lines of the ``spf`` logger otherwise.

The bar counts seconds of the budget and shows the candidates measured, those refused by
the legality check and the best so far; without a terminal (or without tqdm) each measured
or refused candidate is one INFO line of the ``spf`` logger (:mod:`spf.progress`).
"""

from __future__ import annotations

import sys
from typing import Any

from spf.progress import LOGGER


class Reporter:
    """Reports one :func:`spf.tune` run on ``name`` with ``budget`` seconds."""

    def __init__(self, name: str, budget: float, bar: bool | None = None) -> None:
        self.name = name
        self._bar: Any = None
        if bar is None:
            bar = sys.stderr.isatty()
        if bar:
            try:
                from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]
            except ImportError:
                LOGGER.info("tune %s: install tqdm for a progress bar", name)
            else:
                self._bar = tqdm(
                    total=round(budget, 1), desc=f"tune {name}", unit="s", leave=False,
                    bar_format="{desc}: {bar} {n:.0f}/{total:.0f} s{postfix}",
                )  # fmt: skip

    def update(self, elapsed: float, tried: int, illegal: int, best: str, speedup: float,
               last: str) -> None:  # fmt: skip
        """After each candidate: counts, the best so far and what just happened."""
        if self._bar is not None:
            self._bar.n = min(round(elapsed, 1), self._bar.total)
            self._bar.set_postfix_str(
                f"{tried} tried, {illegal} illegal, best {speedup:.2f}x: {best}", refresh=True
            )
            return
        LOGGER.info(
            "tune %s: %.1f s, %d tried, %d illegal, best %.2fx (%s); last: %s",
            self.name, elapsed, tried, illegal, speedup, best, last,
        )  # fmt: skip

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
