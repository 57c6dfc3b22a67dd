"""A declared UF range must be an interval (audit 24).

A checked call tests an index value against the lowest and highest values of its UF's
declared range (``spf.runtime.checks``, the generated ``spf_read_<uf>``), while the
analyses trust the range as declared. A range with a gap or a stride let a value inside the
gap through every check, and a schedule the gap made legal then computed something else:
``{[v]: 0 <= v < 3 or 4 <= v < 8}`` left out the flow dependence from ``y(3) = 5`` to a
read of ``y(col(k))``, the reordered kernel accepted ``col = [3, 1]`` and returned
``x[0] = 0`` where the declared order gives 5. Such a declaration is refused, naming the
UF and the interval to declare instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.errors import VerifyError


def _reader(range_text: str) -> spf.Computation:
    comp = spf.Computation("audit24_gap")
    comp.add_data_space("y", "double", shape=("8",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < N}", range=range_text)
    comp.add_stmt(spf.Stmt("$y$(3) = 5.0;", "{[z]: z = 0}", "{[z] -> [0,0,0]}"))
    comp.add_stmt(spf.Stmt("$x$(k) = $y$(col(k));", "{[k]: 0 <= k < N}", "{[k] -> [1,k,0]}"))
    return comp


@pytest.mark.parametrize(
    "range_text",
    [
        "{[v]: 0 <= v < 3 or 4 <= v < 8}",
        "{[v]: 0 <= v < 8 and v != 3}",
        "{[v]: exists e: v = 2e and 0 <= v < 8}",
        "{[v]: 0 <= v < N or N + 2 <= v < 2N}",
    ],
)
def test_a_range_with_a_gap_is_refused(range_text: str) -> None:
    with pytest.raises(VerifyError, match=r"UF 'col': its range .* is not an interval"):
        _reader(range_text)


@pytest.mark.parametrize(
    "range_text",
    [
        "{[v]: 0 <= v < 8}",
        "{[v]: -1 <= v < 8}",
        "{[v]: v = -1 or 0 <= v < 8}",  # one interval however written
        "{[v]: 1 <= N + v && v < M}",
        "{[v]: 0 <= v}",
    ],
)
def test_an_interval_is_declared(range_text: str) -> None:
    comp = _reader(range_text)
    assert comp.ufs["col"].range is not None


def test_the_gap_no_longer_makes_a_reordering_legal() -> None:
    """With the interval declared the flow dependence is there, and the reordering the gap
    allowed is refused; the kernel in order computes what the declaration says."""
    comp = _reader("{[v]: 0 <= v < 8}")
    assert any(d.kind == "flow" for d in comp.dependences())
    comp.stmts[1].set_schedule("{[k] -> [0,k,0]}")
    comp.stmts[0].set_schedule("{[z] -> [1,0,0]}")
    with pytest.raises(spf.errors.IllegalScheduleError):
        comp.check_legality()
    kernel = _reader("{[v]: 0 <= v < 8}").compile()
    x = np.zeros(2)
    kernel(y=np.zeros(8), x=x, col=np.array([3, 1], np.int32), N=2)
    assert x.tolist() == [5.0, 0.0]
