"""Ordering against fused nests (spf/schedule/order.py): a statement, or a Layer IV operation,
ordered before the first statement of a nest fused by earlier orders moves the whole nest;
ordering a later statement of the nest away from it stays a conflict."""

from __future__ import annotations

import numpy as np
import pytest

from spf import ROOT, Computation, SpfError, Stmt
from spf.schedule import trace_of

DOM = "{[i,j]: 0 <= i < N && 0 <= j < M}"


def nest(stages: int = 2) -> Computation:
    """``b0 = 2 img``, ``b<k> = b<k-1> + k``: point-wise stages over ``N x M``."""
    comp = Computation("nest")
    comp.add_data_space("img", "double", shape=("N", "M"))
    for k in range(stages):
        comp.add_data_space(f"b{k}", "double", shape=("N", "M"))
    for k in range(stages):
        src = "2.0 * $img$(i,j)" if k == 0 else f"$b{k - 1}$(i,j) + {k}.0"
        comp.add_stmt(Stmt(f"$b{k}$(i,j) = {src};", DOM, f"{{[i,j]->[{k},i,0,j,0]}}"))
    return comp


def snapshot(comp: Computation) -> tuple[tuple[str, ...], int]:
    return tuple(str(s.schedule) for s in comp.stmts), len(trace_of(comp))


def check_values(comp: Computation, stages: int) -> None:
    n, m = 3, 5
    img = np.random.default_rng(0).random((n, m))
    arrays = {f"b{k}": np.zeros((n, m)) for k in range(stages)}
    arrays.update({name: np.zeros(n) for name in comp.data_spaces if name == "z"})
    comp.interpret(img=img, N=n, M=m, **arrays)
    want = 2.0 * img
    for k in range(stages):
        want = want + k if k else want
        assert np.allclose(arrays[f"b{k}"], want), k


def test_a_copy_before_the_first_statement_of_a_fused_nest_moves_the_nest() -> None:
    comp = nest()
    s0, s1 = comp.stmts
    s1.after(s0, "j")
    copy = comp.host_to_device("img")
    assert copy.before(s0, ROOT) is copy
    assert comp.loop_structure() == "s2\nfor i:\n  for j:\n    s0\n    s1"
    s0_outs, s1_outs = s0.schedule.out_vars, s1.schedule.out_vars
    assert s0_outs[0] == s1_outs[0] != copy.schedule.out_vars[0]
    assert (s0_outs[2], s0_outs[4], s1_outs[4]) == ("0", "0", "1")
    comp.check_legality()
    check_values(comp, 2)


def test_the_order_of_fusing_and_placing_the_copy_does_not_matter() -> None:
    first = nest()
    a0, a1 = first.stmts
    first.host_to_device("img").before(a0, ROOT)
    a1.after(a0, "j")
    second = nest()
    b0, b1 = second.stmts
    b1.after(b0, "j")
    second.host_to_device("img").before(b0, ROOT)
    assert first.loop_structure() == second.loop_structure()
    assert first.loop_structure() == "s2\nfor i:\n  for j:\n    s0\n    s1"


def test_a_statement_before_a_nest_fused_at_two_levels_moves_all_of_it() -> None:
    comp = nest(3)
    s0, s1, s2 = comp.stmts
    s1.after(s0, "j")
    s2.after(s1, "i")  # inside loop i of s0 and s1, after their j loop
    comp.add_data_space("z", "double", shape=("N",))
    zero = comp.add_stmt(Stmt("$z$(i) = 0.0;", "{[i]: 0 <= i < N}", "{[i]->[5,i,0]}"))
    zero.before(s0, ROOT)
    assert comp.loop_structure() == (
        "for i:\n  s3\nfor i:\n  for j:\n    s0\n    s1\n  for j:\n    s2"
    )
    check_values(comp, 3)
    # after a statement, inside its loop i: the nest moves into that loop
    other = nest(3)
    t0, t1, _ = other.stmts
    t1.after(t0, "j")
    other.add_data_space("z", "double", shape=("N",))
    w = other.add_stmt(Stmt("$z$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    t0.after(w, "i")
    assert (
        other.loop_structure() == "for i:\n  s3\n  for j:\n    s0\n    s1\nfor i:\n  for j:\n    s2"
    )
    check_values(other, 3)


def test_a_successor_at_the_depth_of_the_move_is_not_left_behind() -> None:
    """``s2`` runs after ``s1`` inside loop ``i`` only; moving the nest into another statement's
    loop ``i`` would leave it outside that loop: refused, nothing changes, and the other
    command order works."""
    comp = nest(3)
    s0, s1, s2 = comp.stmts
    s1.after(s0, "j")
    s2.after(s1, "i")
    comp.add_data_space("z", "double", shape=("N",))
    w = comp.add_stmt(Stmt("$z$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[5,i,0]}"))
    before = snapshot(comp)
    with pytest.raises(SpfError, match=r"s1 runs inside the loops of s0.*s2\.after\('s1', 'i'\)"):
        s0.after(w, "i")
    assert snapshot(comp) == before
    again = nest(3)
    a0, a1, a2 = again.stmts
    again.add_data_space("z", "double", shape=("N",))
    v = again.add_stmt(Stmt("$z$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[5,i,0]}"))
    a1.after(a0, "j")
    a0.after(v, "i")
    a2.after(a1, "i")
    assert again.loop_structure() == ("for i:\n  s3\n  for j:\n    s0\n    s1\n  for j:\n    s2")
    check_values(again, 3)


def test_ordering_a_later_statement_of_a_fused_nest_away_from_it_is_refused() -> None:
    comp = nest()
    s0, s1 = comp.stmts
    s1.after(s0, "j")
    copy = comp.host_to_device("img")
    before = snapshot(comp)
    with pytest.raises(SpfError, match="conflicting predecessors") as info:
        copy.before(s1, ROOT)
    assert "s0" in str(info.value)
    assert "s1" in str(info.value)
    assert snapshot(comp) == before


def test_a_nest_member_whose_root_successor_would_be_left_behind_is_refused() -> None:
    comp = nest(3)
    s0, s1, s2 = comp.stmts
    s1.after(s0, "j")
    s2.after(s1, ROOT)  # right after the nest, at the root
    copy = comp.host_to_device("img")
    copy.after(s2, ROOT)
    before = snapshot(comp)
    with pytest.raises(SpfError, match=r"s1 runs inside the loops of s0.*s2"):
        s0.after(copy, ROOT)  # s0 and s1 would move after s2, which must follow s1
    assert snapshot(comp) == before


def test_ordering_inside_the_nest_is_unchanged() -> None:
    """An order at the nest's own depth moves only the statement (nothing is fused deeper)."""
    comp = nest(3)
    s0, s1, s2 = comp.stmts
    s1.after(s0, "j")
    s2.after(s0, "j")  # takes s1's slot; s1 moves one later
    assert [s.schedule.out_vars[4] for s in comp.stmts] == ["0", "2", "1"]
    assert {s.schedule.out_vars[0] for s in comp.stmts} == {"0"}
