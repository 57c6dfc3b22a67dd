"""Progress of long operations through the ``logging`` logger named ``spf``.

An operation (dependences, legality, code generation) creates a :class:`Progress` and calls
:meth:`Progress.step` as it goes; once it has run :data:`AFTER_S` seconds the steps are
logged at INFO level, at most one every :data:`EVERY_S` seconds, e.g. ``dependences:
40/145 statement pairs``. Nothing is printed unless the application configures logging (the
``spf`` command line shows the lines on stderr)."""

from __future__ import annotations

import logging
import time

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
