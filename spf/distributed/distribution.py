"""What ``Computation.distribute_rows`` records (API.md §19): a value the analysis and the
kernel of :mod:`spf.distributed` read; ``spf.computation.distribution`` checks a request
against the computation's declarations and makes one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """What ``distribute_rows`` recorded: the loop, the dimension of each data space, and
    ``owner`` (``"block"`` or ``"array"``: an owner array is given at call time)."""

    loop: str
    data: tuple[tuple[str, int], ...]
    owner: str = "block"

    def dim(self, name: str) -> int | None:
        return dict(self.data).get(name)


__all__ = ["Distribution"]
