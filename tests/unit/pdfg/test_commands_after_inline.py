"""Scheduling after a PDFG ``inline`` removed a producer that an earlier order named (its
``after`` is still in the trace): the order is gone with the statement (audit19: KeyError)."""

from __future__ import annotations

import numpy as np
import pytest

import spf


def three() -> spf.Computation:
    comp = spf.Computation("three")
    for name in ("x", "y", "z", "t"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = $x$(i) * 2;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) = $t$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    comp.add_stmt(spf.Stmt("$z$(i) = $x$(i) - 1;", "{[i]: 0 <= i < N}", "{[i]->[2,i,0]}"))
    return comp


@pytest.mark.parametrize(
    "command",
    [
        lambda c: c.fuse("s1", "s2", 1),
        lambda c: c.reschedule("s2", "s1"),
        lambda c: c.stmt("s2").after("s1", 0),
    ],
)
def test_commands_after_the_producer_an_order_named_was_inlined(command: object) -> None:
    comp = three()
    comp.fuse("s0", "s2", 1)  # s2 ordered after the producer s0
    comp.pdfg().inline("t")  # s0 is gone
    command(comp)  # type: ignore[operator]
    x = np.arange(6.0)
    y, z = np.zeros(6), np.zeros(6)
    comp.interpret(x=x, y=y, z=z, N=6)
    assert y.tolist() == (2 * x + 1).tolist()
    assert z.tolist() == (x - 1).tolist()
    assert comp.trace.replay(three()).loop_structure() == comp.loop_structure()
    assert [text for text, _ in comp.pdfg_history()][2] == 'comp.stmt("s0").inline()'
