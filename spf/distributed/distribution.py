"""What ``Computation.distribute_rows`` records (API.md §19): a value the analysis and the
kernel of :mod:`spf.distributed` read; ``spf.computation.distribution`` checks a request
against the computation's declarations and makes one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """What ``distribute_rows`` recorded: the loop, the dimension of each data space, and
    ``owner`` (``"block"`` or ``"array"``: an owner array is given at call time);
    ``local``: index arrays that give the loop's variable (SELL's ``i = perm(C*ch + r)``)
    and hold each rank's *local* row numbers, as ``spf.mpi.scatter`` packs them (only
    ``spf.mpi.spmv`` sets it; ``distribute_rows`` refuses such a loop otherwise)."""

    loop: str
    data: tuple[tuple[str, int], ...]
    owner: str = "block"
    local: tuple[str, ...] = ()

    def dim(self, name: str) -> int | None:
        return dict(self.data).get(name)


__all__ = ["Distribution"]
