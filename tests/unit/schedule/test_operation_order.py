"""Layer IV operations take their program order from the first ordering command that places
them (API.md section 10, spf/computation/operations.py): created after the statements and
ordered before them is legal (Tiramisu's order), later moves are checked against the order
they were given, and an operation never ordered keeps its creation place."""

from __future__ import annotations

import pytest

import spf
from spf import ROOT, Computation, IllegalScheduleError, Stmt
from spf.computation.operations import OperationStmt


def two_stages() -> Computation:
    """``s0: a = 2 x``; ``s1: out = a + 1`` (``a`` flows from s0 to s1)."""
    comp = Computation("stages")
    for name in ("x", "a", "out"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$out$(i) = $a$(i) + 1.0;", "{[i]: 0 <= i < N}"))
    return comp


def deps(comp: Computation, op: str) -> set[tuple[str, str, str, str]]:
    return {
        (d.kind, d.source, d.sink, d.data_space)
        for d in comp.dependences()
        if op in (d.source, d.sink)
    }


def test_a_copy_created_last_and_ordered_first_is_legal() -> None:
    comp = two_stages()
    s0, s1 = comp.stmts
    copy_in = comp.host_to_device("a")  # created after s0 writes a and s1 reads it
    assert isinstance(copy_in, OperationStmt)
    assert not copy_in.placed
    assert ("flow", "s0", "s2", "a") in deps(comp, "s2")  # creation order until placed
    s0.after(copy_in, ROOT)
    s1.after(s0, ROOT)
    assert copy_in.placed
    assert comp.loop_structure() == "s2\nfor i:\n  s0\nfor i:\n  s1"
    assert deps(comp, "s2") == {("anti", "s2", "s0", "a")}
    comp.check_legality()


def test_moving_a_placed_operation_again_is_checked_against_its_placement() -> None:
    comp = two_stages()
    s0, s1 = comp.stmts
    copy_out = comp.device_to_host("out")
    copy_out.after(s1, ROOT)  # placed: after the writer of out
    comp.check_legality()
    with pytest.raises(spf.SpfError, match="conflicting predecessors"):
        copy_out.after(s0, ROOT)  # moved again, before the writer: refused at once
    with pytest.raises(IllegalScheduleError, match="flow dependence on 'out' from s1 to s2"):
        comp.reschedule(copy_out, s1)  # before the writer: checked against the placement
    assert copy_out.placed
    comp.check_legality()


def test_moving_a_statement_across_a_placed_operation_is_checked() -> None:
    comp = two_stages()
    s0, _ = comp.stmts
    comp.add_data_space("z", "double", shape=("N",))
    copy_out = comp.device_to_host("a")
    s0.then(copy_out, ROOT)  # the copy of a comes after its writer
    comp.check_legality()
    s0.after(copy_out, ROOT)
    with pytest.raises(IllegalScheduleError, match="flow dependence on 'a' from s0 to s2"):
        comp.check_legality()


def test_operations_chained_among_themselves_are_placed_together() -> None:
    comp = two_stages()
    s0, s1 = comp.stmts
    a_in, x_in = comp.host_to_device("a"), comp.host_to_device("x")
    a_in.then(x_in, ROOT)  # no statement involved yet: neither is placed
    assert not a_in.placed
    assert not x_in.placed
    x_in.then(s0, ROOT).then(s1, ROOT)
    assert a_in.placed
    assert x_in.placed
    assert a_in.placement is x_in.placement
    assert comp.loop_structure() == "s2\ns3\nfor i:\n  s0\nfor i:\n  s1"
    assert ("anti", "s2", "s0", "a") in deps(comp, "s2")
    comp.check_legality()


def test_tiramisu_order_send_after_the_producer_receive_before_the_consumer() -> None:
    """The brief's order: compute statements, then send/receive, then ``s.then(send)``,
    ``send.then(recv)``, ``recv.then(s2)``; the receive overwrites what s0 computed."""
    comp = Computation("tiramisu")
    comp.add_data_space("a", "double", shape=("P", "N"))
    comp.add_data_space("b", "double", shape=("P", "N"))
    dom = "{[q,i]: 0 <= q < P && 0 <= i < N}"
    s = comp.add_stmt(Stmt("$a$(q,i) = q + i;", dom, name="produce"))
    s2 = comp.add_stmt(Stmt("$b$(q,i) = $a$(q,i) * 2.0;", dom, name="consume"))
    for stmt in (s, s2):
        stmt.distribute("q")
    send = comp.send("{[q]: 1 <= q < P}", "a", ["q", "0"], "N", "q - 1")
    recv = comp.receive("{[q]: 0 <= q < P - 1}", "a", ["q + 1", "0"], "N", "q + 1")
    s.then(send, "q").then(recv, "q").then(s2, "q")
    assert comp.loop_structure().startswith(
        "for q [distribute]:\n  for i:\n    produce\n  s2\n  s3\n  for i:\n    consume\n"
    )
    comp.check_legality()
    src = comp.codegen("mpi")
    body = src[src.index("void tiramisu(") :]
    assert body.index("produce(") < body.index("s2(q);") < body.index("consume(")


def test_an_operation_never_ordered_keeps_its_creation_place() -> None:
    comp = two_stages()
    copy_out = comp.device_to_host("out")
    assert not copy_out.placed
    assert ("flow", "s1", "s2", "out") in deps(comp, "s2")
    assert comp.loop_structure().endswith("s2")
    comp.check_legality()


def test_the_placement_survives_json() -> None:
    comp = two_stages()
    s0, _ = comp.stmts
    copy_in = comp.host_to_device("a")
    s0.after(copy_in, ROOT)
    comp.stmt("s1").after(s0, ROOT)
    again = Computation.from_json(comp.to_json())
    op = again.stmt("s2")
    assert isinstance(op, OperationStmt)
    assert op.placed
    assert op.placement is not None
    assert deps(again, "s2") == deps(comp, "s2")
    again.check_legality()
    assert again.to_json() == comp.to_json()


def test_a_refused_pdfg_operation_leaves_operations_unplaced() -> None:
    comp = two_stages()
    copy_out = comp.device_to_host("out")
    before = comp.to_json()
    with pytest.raises(IllegalScheduleError, match="flow dependence on 'a' from s0 to s1"):
        comp.reschedule("s0", copy_out)  # s0 would run after s1
    assert not copy_out.placed
    assert comp.to_json() == before


def test_barrier_at_is_placed_when_created() -> None:
    comp = two_stages()
    barrier = comp.barrier_at("s0", ROOT)
    assert isinstance(barrier, OperationStmt)
    assert barrier.placed


def test_fuse_and_reschedule_accept_operations() -> None:
    comp = two_stages()
    copy_in = comp.host_to_device("x")
    comp.reschedule(copy_in, "s0")  # moves the copy (created last) to the front
    assert copy_in.placed
    assert comp.loop_structure() == "s2\nfor i:\n  s0\nfor i:\n  s1"
    comp.check_legality()
    assert isinstance(spf.Computation.from_json(comp.to_json()), Computation)
