"""How a call of a row-distributed kernel agrees with the other ranks without a blocking
collective (docs/backends/mpi.md, "The protocol of a call").

A communicator is **armed** once a call of a distributed kernel on it has returned on every
rank: every rank then holds that kernel and its exchange plan (the same call on every rank;
a call that fails raises on every rank and disarms it). The arming is an attribute of the
communicator (MPI attribute caching: a duplicate starts unarmed, a freed communicator takes
it along). Every rank's arming is the same, so every rank knows, without communicating,
which exchange the others may have posted.

While the communicator is armed, every call of *any* distributed kernel on it, on every
rank, starts with the armed kernel's ghost exchange and sends its agreement integers
(:func:`spf.distributed.arguments.flags`) to every other rank, receiving theirs (tag
``AGREE_TAG``; point to point, so a rank waits only until the others have *posted* their
call: Open MPI's ``MPI_Iallreduce`` for a few integers reduces to a root and broadcasts
back, so a rank's result would wait for the root to reach its wait, and P - 1 messages of
72 bytes a call cost less than that up to a few dozen ranks):

* a rank calling the armed kernel with arguments that pass its checks and a plan that holds
  (its index arrays unchanged) runs the executor in mode 1: it packs and posts the exchange,
  posts the agreement, runs its rows without ghosts and, at its first wait, reads the
  verdict (:mod:`spf.distributed.executor`);
* any other rank, a bad argument, a stale plan, another kernel, **drains** (:func:`drain`):
  it posts the armed exchange's receives into the plan's buffers and empty sends with the
  same tags (so no posted message is left unmatched, however large), exchanges the
  agreement integers with its drained flag set, and waits.

The verdict (the ``MAX`` of everyone's integers) is the same on every rank. When every rank
ran mode 1 with the same computation, extents and owner array, the call is done: one
exchange, no other synchronisation. Otherwise every rank settles it from the verdict, as a
first call does: an ``ArgumentError`` on every rank (the texts gathered), or a new plan on
every rank when any plan is stale; then the ranks that ran mode 1 resume (mode 2: their
rows without ghosts are done and hold under the new plan, since their own index arrays did
not change), the others run the whole call. A rank without neighbours learns the verdict
like the others (every rank hears from every rank), and a rank whose plan is stale drains the
old exchange before the new plan is made. While the communicator is not armed (the first
call, or after an error) every rank agrees with a blocking ``MPI_Allreduce`` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.codegen.mpi import TAG
from spf.distributed.arguments import AGREEMENT

if TYPE_CHECKING:
    from spf.distributed.kernel import DistributedKernel, _Plan

_KEYVAL: list[int] = []
_EPOCH = [0]
"""Bumped whenever this process arms or disarms a communicator (:func:`epoch`)."""


@dataclass(frozen=True)
class Armed:
    """The kernel whose call last returned on every rank of the communicator, and its plan."""

    kernel: DistributedKernel
    plan: _Plan


def _keyval() -> int:
    from mpi4py import MPI

    if not _KEYVAL:
        _KEYVAL.append(MPI.Comm.Create_keyval())
    return _KEYVAL[0]


def armed(comm: Any) -> Armed | None:
    """The communicator's arming (None when not armed)."""
    found = comm.Get_attr(_keyval())
    return found if isinstance(found, Armed) else None


def arm(comm: Any, kernel: DistributedKernel, plan: _Plan) -> None:
    found = comm.Get_attr(_keyval())
    if not (isinstance(found, Armed) and found.kernel is kernel and found.plan is plan):
        comm.Set_attr(_keyval(), Armed(kernel, plan))
        _EPOCH[0] += 1


def disarm(comm: Any) -> None:
    if comm.Get_attr(_keyval()) is not None:
        comm.Delete_attr(_keyval())
        _EPOCH[0] += 1


def epoch() -> int:
    """A count of the armings and disarmings this process made. A kernel whose last call
    left a communicator armed with it, and finds the count unchanged at its next call on the
    same communicator object (not freed since: its handle is the same), knows it is still
    armed without asking MPI (``MPI_Comm_get_attr`` through mpi4py costs ~25 us with the
    interpreter's caches cold, as they are after a large product)."""
    return _EPOCH[0]


def drain(comm: Any, state: Armed, agreement: np.ndarray) -> np.ndarray:
    """Match the armed exchange (receive into its buffers, send nothing with the same
    tags), send ``agreement`` to every other rank and receive theirs; returns the verdict
    (their maximum, ``AGREEMENT`` integers)."""
    from mpi4py import MPI

    from spf.distributed.executor import AGREE_TAG

    rank, size = comm.Get_rank(), comm.Get_size()
    theirs = np.zeros((size, AGREEMENT), dtype=np.int64)
    theirs[rank] = agreement
    requests = []
    for tag, name in enumerate(state.kernel.layout.ghost_reads):
        ep, buf = state.plan.plans[name], state.plan.buffers[name][0]
        for p in np.flatnonzero(ep.rcnt):
            lo = ep.nown + int(ep.rdsp[p])
            part = buf[lo : lo + int(ep.rcnt[p])]
            requests.append(comm.Irecv(part, source=int(p), tag=TAG + tag))
        for p in np.flatnonzero(ep.scnt):
            requests.append(comm.Isend(buf[:0], dest=int(p), tag=TAG + tag))
    for other in range(size):
        if other != rank:
            requests.append(comm.Irecv(theirs[other], source=other, tag=AGREE_TAG))
            requests.append(comm.Isend(agreement, dest=other, tag=AGREE_TAG))
    MPI.Request.Waitall(requests)
    top: np.ndarray = theirs.max(axis=0)
    return top


__all__ = ["Armed", "arm", "armed", "disarm", "drain", "epoch"]
