"""A barrier whose waiting ranks sleep instead of polling (the rank-check programs' ranks
wait there while rank 0 compiles the kernels they then load from the shared cache).

Open MPI's blocking ``Barrier`` polls for its messages at full speed (``sched_yield`` between
polls with ``mpi_yield_when_idle``): on a busy machine a rank that waits seconds for rank 0's
compiles takes its share of a core all that time. ``Ibarrier`` tested every few milliseconds
waits as long and costs next to nothing; what the ranks compute is the same.
"""

from __future__ import annotations

import time

from mpi4py import MPI


def barrier(comm: MPI.Comm = MPI.COMM_WORLD, pause_s: float = 0.005) -> None:
    """``comm.Barrier()``, sleeping ``pause_s`` between tests of the request."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(pause_s)
