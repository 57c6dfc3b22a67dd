"""The OpenMP team each timed spf variant actually ran with.

spf runs a call with no more threads than cores are free (:mod:`spf.runtime.threads`), so on
a busy machine a row timed as "2 threads" may have run on one. :class:`Teams` wraps a
variant's call to read its kernels' ``last_threads`` after every call, and the tables print
the thread count as it ran (``2 (ran 1)``, or ``2 (ran 1: 40%, 2: 60%)`` when it varied).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spf.bench.common import Variant


class Teams:
    """Per variant (code, threads asked), how many kernel calls ran on each team size."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, int], dict[int, int]] = {}

    def watch(self, code: str, threads: int, fn: Callable[[], object], *kernels: Any) -> Variant:
        """The variant ``(code, threads, fn)`` with its call recording the team each of
        ``kernels`` (objects with ``last_threads``) ran its last call with."""
        seen = self.seen.setdefault((code, threads), {})

        def call() -> None:
            fn()
            for kernel in kernels:
                used = kernel.last_threads
                if used is not None:
                    seen[used] = seen.get(used, 0) + 1

        return code, threads, call

    def ran(self, code: str, threads: int) -> dict[int, int]:
        """The team sizes the variant's kernels ran with (empty when it is not watched)."""
        return self.seen.get((code, threads), {})

    def label(self, code: str, threads: int) -> str:
        """``threads`` as the table prints it: with the teams that ran when they differ."""
        seen = self.ran(code, threads)
        if not seen or set(seen) == {threads}:
            return str(threads)
        if len(seen) == 1:
            return f"{threads} (ran {next(iter(seen))})"
        total = sum(seen.values())
        shares = ", ".join(f"{t}: {100 * c / total:.0f}%" for t, c in sorted(seen.items()))
        return f"{threads} (ran {shares})"

    def labels(self) -> dict[str, str]:
        """Every watched variant's label, keyed ``"code (threads)"`` (the bench's data)."""
        return {f"{c} ({t})": self.label(c, t) for c, t in self.seen}

    def note(self, code: str, threads: int) -> str:
        """A target's note when the variant did not run on ``threads`` every call."""
        label = self.label(code, threads)
        return "" if label == str(threads) else f"the {code} row ran {label}: machine busy"
