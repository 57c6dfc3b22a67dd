"""Exchange plans of row-distributed kernels (API.md §19).

A :class:`spf.mpi.Partition` says which rank owns each of ``G`` global entries: contiguous
blocks (rank ``r`` owns ``G // P`` entries, one more for the first ``G % P`` ranks, as
PETSc's ``PETSC_DECIDE``) or an ``owner`` array. A rank numbers its entries
``0 .. n_local - 1`` in global order.

An :class:`ExchangePlan` of one vector is what the inspector's marks become: the ghosts
(marked entries another rank owns) sorted by owner then global index, their slots after the
rank's own entries, the counts received from each rank, and, after one ``MPI_Alltoall`` of
the counts and one ``MPI_Alltoallv`` of the global indices, the local indices each rank
sends to each other rank. It is made once per index-array content and reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spf.mpi import Partition


NEAR_GAP = 16
"""Runs of own entries to copy closer than this many entries are copied as one."""

RUN_LENGTH = 8
"""The entries sent are packed as runs (one ``memcpy`` each) when a run holds at least this
many on average, and gathered one by one otherwise (:meth:`ExchangePlan.send_runs`)."""


@dataclass
class ExchangePlan:
    """The ghost exchange of one distributed vector on one rank (module docstring)."""

    nown: int
    ghosts: np.ndarray
    """Global indices of the ghosts, in slot order (by owner, then index)."""
    rcnt: np.ndarray
    rdsp: np.ndarray
    scnt: np.ndarray
    sdsp: np.ndarray
    sidx: np.ndarray
    """Local indices of the entries sent, neighbour after neighbour."""

    def renumber(self, part: Partition, rank: int, values: np.ndarray) -> np.ndarray:
        """Global indices -> local slots (own entries ``0 .. nown-1``, ghosts after);
        values no iteration reads (outside the marked image) map to 0. One lookup table of
        the global extent (the inspector's marks are that size too), then one gather."""
        glob = values.astype(np.int64, copy=False)
        if glob.size == 0:
            return np.zeros(glob.shape, dtype=np.int64)
        slot = np.zeros(part.size, dtype=np.int64)
        slot[part.owned(rank)] = np.arange(self.nown, dtype=np.int64)
        slot[self.ghosts] = np.arange(self.nown, self.nown + self.ghosts.size, dtype=np.int64)
        out: np.ndarray = slot.take(glob, mode="clip")
        return out

    def near(
        self, part: Partition, rank: int, marked: np.ndarray, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``[lo, hi)`` pairs of local indices covering the rank's own entries among
        ``marked`` (the inspector's marks of what rows reading ghosts read) and the local
        indices ``rows`` (the rows with ghosts, for a vector they also index directly): its
        maximal runs, joined across gaps of at most ``NEAR_GAP`` entries (one ``memcpy``
        copies a few entries nobody reads faster than two calls)."""
        touched = np.flatnonzero(marked).astype(np.int64)
        mine = part.local_index(rank, touched[part.owner_of(touched) == rank])
        if rows is not None:
            mine = np.concatenate([mine, rows]).astype(np.int64)
        mine = np.unique(mine)
        if mine.size == 0:
            return np.zeros(0, dtype=np.int64)
        breaks = np.flatnonzero(np.diff(mine) > NEAR_GAP + 1) + 1
        starts = mine[np.concatenate([[0], breaks])]
        ends = mine[np.concatenate([breaks - 1, [mine.size - 1]])] + 1
        out: np.ndarray = np.stack([starts, ends], axis=1).ravel().astype(np.int64)
        return out

    def send_runs(self) -> np.ndarray | None:
        """``[lo, hi)`` pairs of local indices: the maximal runs of consecutive entries in
        ``sidx``, whose copies, one after the other, are the send buffer; None when a run
        holds fewer than ``RUN_LENGTH`` entries on average (packing them one by one is then
        as fast). A rank's rows read most of a neighbour's block on a random matrix, and a
        mesh's boundary is a run: a ``memcpy`` per run reads neither the indices nor each
        entry's address (measured on 99,317 of 100,000 entries in 682 runs: 37 us against
        79 us)."""
        sidx = self.sidx
        if sidx.size == 0:
            return None
        breaks = np.flatnonzero(np.diff(sidx) != 1) + 1
        if (breaks.size + 1) * RUN_LENGTH > sidx.size:
            return None
        starts = sidx[np.concatenate([[0], breaks])]
        ends = sidx[np.concatenate([breaks - 1, [sidx.size - 1]])] + 1
        out: np.ndarray = np.stack([starts, ends], axis=1).ravel().astype(np.int64)
        return out

    def blocked(self, size: int) -> ExchangePlan:
        """This plan of blocks as a plan of their entries (``size`` per block, a block's
        entries consecutive): what the executor moves for a vector of blocks (BCSR's
        ``x[c*MB]``), whose marks, partition and renumbering count blocks."""
        if size == 1:
            return self

        def entries(blocks: np.ndarray) -> np.ndarray:
            out: np.ndarray = (blocks[:, None] * size + np.arange(size)).ravel()
            return out.astype(np.int64)

        return ExchangePlan(
            nown=self.nown * size,
            ghosts=entries(self.ghosts),
            rcnt=self.rcnt * size,
            rdsp=self.rdsp * size,
            scnt=self.scnt * size,
            sdsp=self.sdsp * size,
            sidx=entries(self.sidx),
        )

    def stats(self) -> tuple[int, int, int, int]:
        """Messages and entries sent, messages and entries received, by one exchange."""
        return (
            int(np.count_nonzero(self.scnt)),
            int(self.scnt.sum()),
            int(np.count_nonzero(self.rcnt)),
            int(self.rcnt.sum()),
        )


def _displacements(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def exchange_plan(comm: Any, part: Partition, marked: np.ndarray) -> ExchangePlan:
    """The plan of one vector from the inspector's marks (collective: every rank calls it)."""
    from mpi4py import MPI

    rank, size = comm.Get_rank(), comm.Get_size()
    touched = np.flatnonzero(marked).astype(np.int64)
    owners = part.owner_of(touched)
    keep = owners != rank
    ghosts, owners = touched[keep], owners[keep]
    order = np.argsort(owners, kind="stable")  # by owner, then global index
    ghosts, owners = ghosts[order], owners[order]
    rcnt = np.bincount(owners, minlength=size).astype(np.int64)
    scnt = np.zeros(size, dtype=np.int64)
    comm.Alltoall(rcnt, scnt)
    rdsp, sdsp = _displacements(rcnt), _displacements(scnt)
    wanted = np.zeros(int(scnt.sum()), dtype=np.int64)
    comm.Alltoallv([ghosts, (rcnt, rdsp), MPI.INT64_T], [wanted, (scnt, sdsp), MPI.INT64_T])
    return ExchangePlan(
        nown=part.count(rank),
        ghosts=ghosts,
        rcnt=rcnt,
        rdsp=rdsp,
        scnt=scnt,
        sdsp=sdsp,
        sidx=part.local_index(rank, wanted),
    )


def runs(halo: np.ndarray | None, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``(inner, outer)``: ``[lo, hi)`` pairs of the maximal runs of rows that read no
    ghost, and of those that do (all rows are inner without a ghost read)."""
    if halo is None or rows == 0:
        inner = np.array([0, rows] if rows else [], dtype=np.int64)
        return inner, np.zeros(0, dtype=np.int64)
    flag = (halo[:rows] != 0).astype(np.int8)
    edges = np.flatnonzero(np.diff(flag)) + 1
    starts = np.concatenate([[0], edges]).astype(np.int64)
    ends = np.concatenate([edges, [rows]]).astype(np.int64)
    pairs = np.stack([starts, ends], axis=1)
    ghost_run = flag[starts] != 0
    return pairs[~ghost_run].ravel(), pairs[ghost_run].ravel()


__all__ = ["NEAR_GAP", "RUN_LENGTH", "ExchangePlan", "exchange_plan", "runs"]
