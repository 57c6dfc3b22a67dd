"""Sends and receives no operation answers (spf.codegen.mpi_matching): a halo exchange
whose receive domain was not shifted with its peer deadlocked on two ranks until
``spf.mpi.run`` killed the job after its timeout (rank 1 waited for rank 0, which never
sent); now codegen refuses it naming the operation and a rank pair."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import spf


def exchange(recv_domain: str, recv_peer: str) -> spf.Computation:
    """Rank q sends row 0 of ``a`` to q - 1 ({q: 1 <= q < P}); the receive into ``o`` as
    given."""
    comp = spf.Computation("halo")
    comp.add_data_space("a", "double", shape=("N", "W"))
    comp.add_data_space("o", "double", shape=("N", "W"))
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i, j) = 1.0 + q;",
            "{[q,i,j]: 0 <= q < P && 0 <= i < N && 0 <= j < W}",
            "{[q,i,j]->[0,q,0,i,0,j,0]}",
        )
    )
    s.distribute("q")
    send = comp.send("{[q]: 1 <= q < P}", "a", ["0", "0"], "W", "q - 1")
    recv = comp.receive(recv_domain, "o", ["0", "0"], "W", recv_peer)
    s.then(send, "q").then(recv, "q")
    comp.assume("N >= 1")
    return comp


@pytest.mark.parametrize(
    ("domain", "peer", "side"),
    [
        ("{[q]: 1 <= q < P}", "q - 1", "s1: send"),  # receives from q - 1 as the send goes
        ("{[q]: 0 <= q < P}", "q + 1", "s2: receive"),  # the last rank waits for rank P
        ("{[q]: 0 <= q < P - 2}", "q + 1", "s1: send"),  # the last receiver left out
    ],
)
def test_an_unanswered_send_or_receive_is_refused(domain: str, peer: str, side: str) -> None:
    stmt, kind = side.split(": ")
    with pytest.raises(
        spf.IllegalScheduleError,
        match=rf"statement {stmt}: {kind} on .* no (send|receive) answers: e\.g\. rank",
    ):
        exchange(domain, peer).codegen("mpi")
    exchange(domain, peer).codegen("mpi", check=False)  # the escape hatch still generates


def test_a_mirrored_exchange_and_the_blur_example_are_accepted() -> None:
    exchange("{[q]: 0 <= q < P - 1}", "q + 1").codegen("mpi")
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    try:
        import mpi_blur
    finally:
        sys.path.pop(0)
    for order in (False, True):
        mpi_blur.blur(tiramisu_order=order).codegen("mpi")
