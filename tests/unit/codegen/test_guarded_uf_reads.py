"""A UF value read under the guard that keeps its arguments in the UF's domain: a statement
of ``{[i]: 1 <= i < N && rowptr(i - 1) < rowptr(i) - 1}`` beside one over every ``i``. The
scanner's segment below ``i`` printed ``if (i >= 1 && rowptr_i >= rowptr__1_i + 2)`` with
``rowptr(i - 1)`` read above the ``if`` (at ``i = 0``), which its self-check refused as a
"scanner bug" (a coarse wavefront's pass over a solve reading ``x(i + 1)`` met it). Where the
self-check refuses the first scan, the scanner now scans again with such reads below the
operands of the condition that do not use them (every other computation's loops unchanged)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.codegen.binds import bind_where_used
from spf.codegen.loop_ast import Bind, Call, If, Int, Op, Var


def _guarded(domain: str) -> spf.Computation:
    comp = spf.Computation("guarded_read")
    comp.add_data_space("y", "double", shape=("N",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.add_stmt(spf.Stmt("$y$(i) = 1;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0,0,0]}"))
    comp.add_stmt(spf.Stmt("$y$(i) += 1;", domain, "{[i] -> [0,i,1,0,0]}"))
    return comp


@pytest.mark.parametrize(
    "domain",
    [
        "{[i]: 1 <= i < N && rowptr(i - 1) < rowptr(i) - 1}",
        "{[i]: 0 <= i < N - 2 && rowptr(i + 2) > rowptr(i + 1) + 1}",
    ],
)
def test_read_below_the_guard_of_its_arguments(domain: str) -> None:
    comp = _guarded(domain)
    rowptr = np.array([0, 3, 4, 7, 7, 9, 12], dtype=np.int32)
    n = len(rowptr) - 1
    y = np.zeros(n)
    comp.compile()(y=y, rowptr=rowptr, N=n, NNZ=int(rowptr[-1]))
    want = np.ones(n)
    for i in range(n):
        if "i - 1" in domain and i >= 1 and rowptr[i - 1] < rowptr[i] - 1:
            want[i] += 1
        if "i + 2" in domain and i < n - 2 and rowptr[i + 2] > rowptr[i + 1] + 1:
            want[i] += 1
    np.testing.assert_array_equal(y, want)


def test_bind_goes_below_the_operands_that_do_not_use_it() -> None:
    cond = Op("&&", (Op(">=", (Var("i"), Int(1))), Op("<", (Var("r"), Var("s")))))
    body = If(cond, Call("s1", ()))
    read = ("r", "rowptr", (Op("-", (Var("i"), Int(1))),))
    assert bind_where_used(*read, body) == Bind(*read, body)  # the first scan: above the if
    placed = bind_where_used(*read, body, below_guards=True)
    assert isinstance(placed, If)
    assert placed.cond == Op(">=", (Var("i"), Int(1)))
    assert isinstance(placed.then, Bind)
    assert placed.then.var == "r"
    assert placed.then.body == If(Op("<", (Var("r"), Var("s"))), Call("s1", ()))
