"""A trace prints as Python that replays, one line a command, whatever its strings hold."""

from __future__ import annotations

import spf
from spf import kernels


def test_a_relation_written_over_lines_prints_as_one_line_that_replays() -> None:
    comp = kernels.gemm()
    comp.stmt("s0").set_schedule("{[i, j, k] ->\n\t[0, k, 0, j, 0, i, 0]}")
    text = comp.trace.as_python()
    assert len(text.strip().splitlines()) == 1
    again = kernels.gemm()
    exec(text, {"comp": again, "spf": spf})
    assert again.ir == comp.ir
    trace_lines = str(comp.ir).split("  trace:\n")[1].splitlines()
    assert len(trace_lines) == 1  # the IR's text: one line per trace entry
