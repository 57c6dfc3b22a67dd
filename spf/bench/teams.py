"""The OpenMP team each timed spf variant actually ran with.

spf runs a call with no more threads than cores are free (:mod:`spf.runtime.threads`), so on
a busy machine a row timed as "2 threads" may have run on one. :class:`Teams` wraps a
variant's call to read its kernels' ``last_threads`` after every call, and the tables print
the thread count as it ran (``2 (ran 1)``, or ``2 (ran 1: 40%, 2: 60%)`` when it varied),
and, for a call that ran on fewer threads than asked, what the governor had measured
(:attr:`spf.runtime.threads.ThreadGovernor.reading`: the other processes' CPU time and
runnable threads), so that a table says why.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from spf.runtime.threads import GOVERNOR

if TYPE_CHECKING:
    from spf.bench.common import Variant
    from spf.runtime.threads import Reading


class Teams:
    """Per variant (code, threads asked), how many kernel calls ran on each team size."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, int], dict[int, int]] = {}
        self.capped: dict[tuple[str, int], list[Reading]] = {}
        """The governor's reading behind each call that ran on fewer threads than asked."""

    def watch(self, code: str, threads: int, fn: Callable[[], object], *kernels: Any) -> Variant:
        """The variant ``(code, threads, fn)`` with its call recording the team each of
        ``kernels`` (objects with ``last_threads``) ran its last call with. The call carries
        ``fn`` as its ``timed`` attribute and the recording as ``after``: the bench's
        rotation (:func:`spf.bench.common.rotation`) times ``fn`` alone and records after
        the clock stops, as for a variant that is not watched (MKL's)."""
        seen = self.seen.setdefault((code, threads), {})
        capped = self.capped.setdefault((code, threads), [])

        def after() -> None:
            for kernel in kernels:
                used = kernel.last_threads
                if used is not None:
                    seen[used] = seen.get(used, 0) + 1
                    reading = GOVERNOR.reading  # its cap is the one this call ran under
                    if used < threads and reading is not None and 0 < reading.cap < threads:
                        capped.append(reading)  # not a plan that runs serially

        def call() -> None:
            fn()
            after()

        call.timed = fn  # type: ignore[attr-defined]
        call.after = after  # type: ignore[attr-defined]
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

    def why(self, code: str, threads: int) -> str:
        """What the governor measured behind the variant's calls on fewer threads (medians
        over those calls), or ``""``."""
        got = self.capped.get((code, threads), [])
        if not got:
            return ""
        cpu = [r.cpu for r in got if r.cpu is not None]
        runnable = statistics.median(r.runnable for r in got)
        used = f"{statistics.median(cpu):.2f} cores of CPU time, " if cpu else ""
        return (
            f"other processes used {used}{runnable:.2f} runnable threads "
            f"(median of {len(got)} capped calls' readings)"
        )

    def note(self, code: str, threads: int) -> str:
        """A target's note when the variant did not run on ``threads`` every call."""
        label = self.label(code, threads)
        if label == str(threads):
            return ""
        why = self.why(code, threads)
        return f"the {code} row ran {label}: machine busy" + (f" ({why})" if why else "")
