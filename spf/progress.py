"""Progress of long operations through the ``logging`` logger named ``spf``.

An operation (dependences, legality, code generation) creates a :class:`Progress` and calls
:meth:`Progress.step` as it goes; once it has run :data:`AFTER_S` seconds the steps are
logged at INFO level, at most one every :data:`EVERY_S` seconds, e.g. ``dependences:
40/145 statement pairs``. Nothing is printed unless the application configures logging (the
``spf`` command line shows the lines on stderr)."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

LOGGER = logging.getLogger("spf")
"""The logger of spf's progress lines (INFO)."""

AFTER_S = 1.0
"""Seconds an operation runs before it reports progress."""

EVERY_S = 1.0
"""Seconds between two progress lines of one operation."""


class Progress:
    """The progress reporter of one operation named ``what``.

    >>> p = Progress("dependences", total=145, unit="statement pairs")
    >>> p.step(40)  # quiet: the operation has not run for a second yet
    """

    def __init__(self, what: str, total: int = 0, unit: str = "") -> None:
        self.what, self.total, self.unit = what, total, unit
        self.start = time.perf_counter()
        self.last = self.start - EVERY_S

    def _due(self) -> bool:
        now = time.perf_counter()
        if now - self.start < AFTER_S or now - self.last < EVERY_S:
            return False
        self.last = now
        return LOGGER.isEnabledFor(logging.INFO)

    def step(self, done: int) -> None:
        """``done`` of ``total`` units finished (logged when due)."""
        if self._due():
            LOGGER.info("%s: %d/%d %s", self.what, done, self.total, self.unit)

    def phase(self, name: str) -> None:
        """The operation enters phase ``name`` (logged when due)."""
        if self._due():
            LOGGER.info("%s: %s", self.what, name)


class Bar:
    """A tqdm progress bar over ``total`` seconds named ``desc``, shown when ``enabled``
    (None: when stderr is a terminal) and tqdm is installed; :attr:`shown` says whether it
    is, so that the caller logs lines through :data:`LOGGER` instead when it is not (the
    searches of ``spf.tune`` and ``spf.formats.tune``)."""

    def __init__(self, desc: str, total: float, enabled: bool | None = None) -> None:
        self._bar: Any = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if not enabled:
            return
        try:
            from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            LOGGER.info("%s: install tqdm for a progress bar", desc)
            return
        self._bar = tqdm(
            total=round(total, 1), desc=desc, unit="s", leave=False,
            bar_format="{desc}: {bar} {n:.0f}/{total:.0f} s{postfix}",
        )  # fmt: skip

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def update(self, elapsed: float, postfix: str) -> None:
        """``elapsed`` seconds of the total spent; ``postfix`` follows the bar."""
        if self._bar is not None:
            self._bar.n = min(round(elapsed, 1), self._bar.total)
            self._bar.set_postfix_str(postfix, refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
