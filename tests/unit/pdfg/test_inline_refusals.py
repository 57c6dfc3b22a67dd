"""PDFG ``inline`` refusals found by audit19: a run-time index array read through its UF,
and a data space named by something that is not a string."""

from __future__ import annotations

import pytest

import spf


def reversed_gather() -> spf.Computation:
    comp = spf.Computation("gather")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("p", "int32_t", shape=("N",), index=True, range="{[k]: 0 <= k < N}")
    comp.add_stmt(spf.Stmt("$p$(i) = N - 1 - i;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) = $x$(p(i)) + $p$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    return comp


def test_an_index_array_read_through_its_uf_is_not_inlined() -> None:
    comp = reversed_gather()
    before = comp.to_json()
    # only $p$(i) was replaced: x(p(i)) then read p as an input the caller had to pass
    with pytest.raises(spf.ScheduleError, match=r"s1 reads the run-time index array p as p"):
        comp.pdfg().inline("p")
    assert comp.to_json() == before
    removable = comp.pdfg(params={"N": 8}).graph.nodes["p"].get("removable_by", ())
    assert "inline('p')" not in removable


@pytest.mark.parametrize("name", [["x"], ("x",), 3])
def test_a_data_space_that_is_not_a_name_is_undeclared(name: object) -> None:
    with pytest.raises(spf.UndeclaredError, match="unknown data space"):
        reversed_gather().pdfg().inline(name)  # type: ignore[arg-type]


def test_a_return_value_is_not_inlined() -> None:
    comp = spf.Computation("twice")
    comp.add_parameter("x", "double*")
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = $x$(i) * 2;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) = $t$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    comp.add_return_value("t")
    # inlined, t stayed a return value: append_computation returned '_i0_t', which no
    # data space of the caller was
    with pytest.raises(spf.ScheduleError, match="return value of twice"):
        comp.pdfg().inline("t")
    assert "t" in comp.data_spaces
