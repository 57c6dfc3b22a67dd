"""A send or receive of a data space that ``store_in`` put in a buffer with another layout
(spf.codegen.moved_layouts): the kernel sent ``count`` consecutive elements of the buffer
from ``&a(1, 0)``, which under a transpose are ``a``'s first column, not its row 1 (found by
running it on two ranks: rank 0 received 110, 120, 101, 111 for 110, 111, 112, 113)."""

from __future__ import annotations

import pytest

import spf


def exchange(layout: str | None) -> spf.Computation:
    """Rank q sends row 1 of its ``a`` to rank q - 1, which receives it into ``o``; then
    ``a += 1000`` (the statement whose ``store_in`` places ``a`` in ``T``)."""
    comp = spf.Computation("rowsend")
    comp.add_data_space("a", "double", shape=("N", "W"))
    comp.add_data_space("o", "double", shape=("N", "W"))
    send = comp.send("{[q]: 1 <= q < P}", "a", ["1", "0"], "W", "q - 1")
    recv = comp.receive("{[q]: 0 <= q < P - 1}", "o", ["0", "0"], "W", "q + 1")
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i, j) = $a$(i, j) + 1000.0;",
            "{[q,i,j]: 0 <= q < P && 0 <= i < N && 0 <= j < W}",
            "{[q,i,j]->[1,q,0,i,0,j,0]}",
        )
    )
    s.distribute("q")
    if layout == "transposed":
        s.store_in(comp.add_buffer("T", ("W", "N"), "double"), ["j", "i"])
    elif layout == "same":
        s.store_in(comp.add_buffer("T", ("N", "W"), "double"), ["i", "j"])
    send.then(recv, "q").then(s, "q")
    comp.assume("N >= 2")
    return comp


def test_a_send_of_a_transposed_data_space_is_refused() -> None:
    comp = exchange("transposed")
    with pytest.raises(
        spf.CodegenError,
        match=r"statement s0: send\(a\(1, 0\), count=W\) moves W consecutive elements of 'a', "
        r"but 'a' is stored in buffer 'T' at \[t1, t0\].*name the buffer 'T' in the send",
    ):
        comp.codegen("mpi")
    with pytest.raises(spf.CodegenError, match="stored in buffer 'T'"):
        comp.codegen("mpi", check=False)  # not a dependence: never generated


@pytest.mark.parametrize("layout", [None, "same"])
def test_a_send_of_a_data_space_kept_in_row_major_order_is_generated(layout: str | None) -> None:
    src = exchange(layout).codegen("mpi")
    assert "&a(1, 0)" in src
