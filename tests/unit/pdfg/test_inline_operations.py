"""``pdfg().inline(t)`` of a data space an operation moves, or a buffer stores, is refused
(inlining removes the data space; the operation would name nothing and codegen fail)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


def producer_consumer() -> spf.Computation:
    c = spf.Computation("pc")
    for name in ("a", "t", "out"):
        c.add_data_space(name, "double", shape=("N",))
    c.add_stmt(spf.Stmt("$t$(i) = 2.0 * $a$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    c.add_stmt(spf.Stmt("$out$(i) = $t$(i) + 1.0;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    return c


OPERATIONS: dict[str, Callable[[spf.Computation], object]] = {
    "host_to_device": lambda c: c.host_to_device("t"),
    "device_to_host": lambda c: c.device_to_host("t"),
    "send": lambda c: c.send("{[q, i]: 0 <= q < P && i = 0}", "t", ["0"], "N", "q + 1"),
}


@pytest.mark.parametrize("kind", sorted(OPERATIONS))
def test_inline_of_a_data_space_an_operation_moves_is_refused(kind: str) -> None:
    comp = producer_consumer()
    OPERATIONS[kind](comp)
    before = comp.to_json()
    with pytest.raises(spf.ScheduleError, match=f"operation s2 \\({kind}\\(t"):
        comp.pdfg().inline("t")
    assert comp.to_json() == before


def test_inline_of_a_data_space_stored_in_a_buffer_is_refused() -> None:
    comp = producer_consumer()
    comp.stmt("s0").store_in(comp.add_buffer("tb", ("N",), "double"), ["i"])
    before = comp.to_json()
    with pytest.raises(spf.ScheduleError, match="stored in buffer 'tb'"):
        comp.pdfg().inline("t")
    assert comp.to_json() == before


def test_inline_still_rewrites_a_cache_read_copy(tmp_path: Path) -> None:
    """A packing copy is an ordinary statement reading t: it is rewritten like any reader."""
    comp = producer_consumer()
    comp.cache_read("t", (comp.stmt("s1"), "i"))
    comp.pdfg().inline("t")
    assert "t" not in comp.data_spaces
    a, out = np.arange(7.0), np.zeros(7)
    comp.compile(cache_dir=str(tmp_path))(a=a, out=out)
    assert np.array_equal(out, 2.0 * a + 1.0)
