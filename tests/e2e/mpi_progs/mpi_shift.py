"""A one-step shift over MPI ranks, shared by tests/e2e/test_mpi.py and check_mpi.py.

Rank ``q`` of ``P`` sends its block ``x`` to rank ``q + 1`` (domain ``0 <= q < P - 1``) and
receives the block of rank ``q - 1`` into ``h`` (domain ``1 <= q < P``: it starts at 1, so isl
splits ``q = 0`` off the other statements' range, and ``q = P - 1`` off the sends'), then
computes ``y(i) = 2 y(i) + h(i)`` on every rank (in two statements that do not touch
``x``, so nothing waits for the send before the receive is posted). Rank 0 keeps the ``h`` it was given. With
``P == 1`` only ``y`` remains, on rank 0; ranks ``>= P`` run nothing.
"""

from __future__ import annotations

import itertools

import numpy as np

import spf


def shift() -> spf.Computation:
    comp = spf.Computation("shift")
    for name in ("x", "h", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    dom = "{[q,i]: 0 <= q < P && 0 <= i < N}"
    comp.send("{[q]: 0 <= q < P - 1}", "x", ["0"], "N", "q + 1")  # a rank loop of its own
    recv = comp.receive("{[q]: 1 <= q < P}", "h", ["0"], "N", "q - 1")
    copy = spf.Stmt("$y$(i) = 2.0 * $y$(i);", dom, "{[q,i]->[2,q,0,i,0]}", name="copy")
    add = spf.Stmt("$y$(i) = $y$(i) + $h$(i);", dom, "{[q,i]->[3,q,0,i,0]}", name="add")
    for s in (copy, add):
        comp.add_stmt(s).distribute("q")
    for prev, nxt in itertools.pairwise([recv, copy, add]):
        prev.then(nxt, "q")  # q = 0 has no receive: isl splits it off as one iteration
    return comp


def expected(rank: int, p: int, n: int) -> np.ndarray | None:
    """``y`` of ``rank`` for :func:`inputs` (None: the rank is outside ``0 <= rank < P``)."""
    if rank >= p:
        return None
    _, h, y = inputs(rank, n)
    return 2.0 * y + (inputs(rank - 1, n)[0] if rank >= 1 else h)


def inputs(rank: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rank ``rank``'s ``x``, its initial ``h`` and its initial ``y``."""
    rng = np.random.default_rng(100 + rank)
    return rng.random(n), rng.random(n), rng.random(n)
