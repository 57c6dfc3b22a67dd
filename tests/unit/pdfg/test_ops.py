"""PDFG fuse and reschedule (spf/computation/graph_ops.py, API.md sections 5 and 10): ``fuse``'s level
counts shared loops, ``reschedule(s1, s2)`` moves ``s1`` (not ``s2``), and fusing again (the
same pair, deeper, shallower, or a chain) works."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf import ROOT

DOM = "{[i,j]: 0 <= i < N && 0 <= j < M}"


def chain(stages: int = 3, *, independent: tuple[int, ...] = ()) -> spf.Computation:
    """``a<k>(i,j) = a<k-1>(i,j) + k`` (``a0 = x + 0``); stages in ``independent`` write
    ``z<k> = x`` instead (no dependence on the others)."""
    comp = spf.Computation("chain")
    comp.add_data_space("x", "double", shape=("N", "M"))
    for k in range(stages):
        comp.add_data_space(f"a{k}" if k not in independent else f"z{k}", "double", ("N", "M"))
    prev = "x"
    for k in range(stages):
        if k in independent:
            comp.add_stmt(spf.Stmt(f"$z{k}$(i,j) = $x$(i,j);", DOM))
            continue
        comp.add_stmt(spf.Stmt(f"$a{k}$(i,j) = ${prev}$(i,j) + {k}.0;", DOM))
        prev = f"a{k}"
    return comp


def run(comp: spf.Computation) -> dict[str, np.ndarray]:
    n, m = 3, 4
    x = np.arange(n * m, dtype=float).reshape(n, m)
    arrays = {name: np.zeros((n, m)) for name in comp.data_spaces if name != "x"}
    comp.interpret(x=x, N=n, M=m, **arrays)
    return arrays


def expected(comp: spf.Computation) -> dict[str, np.ndarray]:
    fresh = spf.Computation.from_json(comp.to_json())
    for s in fresh.stmts:
        s.set_schedule(str(s.original_schedule))
    return run(fresh)


def same_results(comp: spf.Computation) -> None:
    got, want = run(comp), expected(comp)
    assert got.keys() == want.keys()
    for name in got:
        assert np.array_equal(got[name], want[name]), name


ONE = "for i:\n  for j:\n    s0\n  for j:\n    s1\n"
TWO = "for i:\n  for j:\n    s0\n    s1\n"
NONE = "for i:\n  for j:\n    s0\nfor i:\n  for j:\n    s1\n"


@pytest.mark.parametrize(
    ("level", "shape"),
    [(1, ONE), (2, TWO), ("i", ONE), ("j", TWO), (0, NONE), (ROOT, NONE)],
)
def test_fuse_level_counts_shared_loops_or_names_the_innermost(level: object, shape: str) -> None:
    comp = chain(3)
    comp.fuse("s0", "s1", level)
    assert comp.loop_structure() == shape + "for i:\n  for j:\n    s2"
    same_results(comp)


def test_fuse_level_zero_puts_s2_right_after_s1_s_nest_at_the_root() -> None:
    comp = chain(3, independent=(1,))  # s0: a0 = x; s1: z1 = x; s2: a2 = a0 + 2
    comp.fuse("s0", "s2", 0)
    assert comp.loop_structure() == (
        "for i:\n  for j:\n    s0\nfor i:\n  for j:\n    s2\nfor i:\n  for j:\n    s1"
    )
    same_results(comp)


def test_pdfg_fuse_counts_too() -> None:
    comp = chain(2)
    changed = comp.pdfg().fuse("s0", "s1", 1)
    assert [str(r) for r in changed] == ["{[i, j] -> [0, i, 1, j, 0]}"]
    assert comp.loop_structure() == ONE.rstrip()


@pytest.mark.parametrize("level", [3, -1, True, 1.5, None, "k"])
def test_bad_fuse_levels_are_refused_and_change_nothing(level: object) -> None:
    comp = chain(2)
    before = (comp.to_json(), len(comp.trace))
    with pytest.raises(spf.SpfError) as info:
        comp.fuse("s0", "s1", level)
    text = str(info.value)
    assert "fuse" in text or "after" in text
    if level == 3:
        assert isinstance(info.value, spf.UndeclaredError)
        assert "at most 2" in text
    assert (comp.to_json(), len(comp.trace)) == before


def test_fusing_a_statement_with_itself_is_refused() -> None:
    comp = chain(1)
    with pytest.raises(spf.SpfError, match="s0 cannot be fused with itself"):
        comp.fuse("s0", "s0", 1)


def test_fusing_a_chain_one_pair_at_a_time() -> None:
    for level, shape in (
        (1, "for i:\n  for j:\n    s0\n  for j:\n    s1\n  for j:\n    s2"),
        (2, "for i:\n  for j:\n    s0\n    s1\n    s2"),
    ):
        comp = chain(3)
        comp.fuse("s0", "s1", level)
        comp.fuse("s1", "s2", level)
        assert comp.loop_structure() == shape
        same_results(comp)


def test_fusing_the_same_pair_again_changes_nothing() -> None:
    comp = chain(3)
    comp.fuse("s0", "s1", 1)
    schedules = [str(s.schedule) for s in comp.stmts]
    assert comp.fuse("s0", "s1", 1) == []
    assert [str(s.schedule) for s in comp.stmts] == schedules
    same_results(comp)


def test_fusing_a_pair_deeper_then_shallower() -> None:
    comp = chain(3)
    comp.fuse("s0", "s1", 1)
    comp.fuse("s0", "s1", 2)
    assert comp.loop_structure() == TWO + "for i:\n  for j:\n    s2"
    same_results(comp)
    comp.fuse("s0", "s1", 1)
    assert comp.loop_structure() == ONE + "for i:\n  for j:\n    s2"
    same_results(comp)


def test_fusing_a_fused_nest_into_an_earlier_statement_moves_the_nest() -> None:
    comp = chain(3)
    comp.fuse("s1", "s2", 2)
    comp.fuse("s0", "s1", 1)  # s1 and s2 (fused inside j) join s0's loop i together
    assert comp.loop_structure() == "for i:\n  for j:\n    s0\n  for j:\n    s1\n    s2"
    same_results(comp)
    # s1 into s0's loop j would leave s2 (after s1 inside j) behind: a clear refusal
    before = (comp.to_json(), len(comp.trace))
    with pytest.raises(spf.SpfError, match=r"breaks the earlier s2\.after\('s1'"):
        comp.fuse("s0", "s1", 2)
    assert (comp.to_json(), len(comp.trace)) == before


def test_reschedule_moves_the_first_statement_not_the_second() -> None:
    """``s2`` (independent) moves before ``s0``; ``s0`` and ``s1`` keep their order (moving
    ``s0`` after ``s2`` instead would break ``s0 -> s1``)."""
    comp = chain(3, independent=(2,))
    changed = comp.reschedule("s2", "s0")
    assert comp.loop_structure() == (
        "for i:\n  for j:\n    s2\nfor i:\n  for j:\n    s0\nfor i:\n  for j:\n    s1"
    )
    assert str(comp.stmt("s2").schedule) in [str(r) for r in changed]
    same_results(comp)


def test_reschedule_later_in_program_order() -> None:
    """``s0`` (independent) moves to just before ``s2``: after ``s1``, not after ``s2``."""
    comp = chain(3, independent=(0,))
    comp.reschedule("s0", "s2")
    assert comp.loop_structure() == (
        "for i:\n  for j:\n    s1\nfor i:\n  for j:\n    s0\nfor i:\n  for j:\n    s2"
    )
    same_results(comp)


def test_reschedule_inside_shared_loops() -> None:
    comp = chain(3, independent=(2,))
    comp.fuse("s0", "s1", 2)
    comp.fuse("s1", "s2", 2)
    comp.reschedule("s2", "s0")
    assert comp.loop_structure() == "for i:\n  for j:\n    s2\n    s0\n    s1"
    same_results(comp)
    comp.reschedule("s2", "s1")
    assert comp.loop_structure() == "for i:\n  for j:\n    s0\n    s2\n    s1"
    same_results(comp)


def test_illegal_reschedule_is_refused_and_changes_nothing() -> None:
    comp = chain(3)
    before = (comp.to_json(), len(comp.trace))
    with pytest.raises(spf.IllegalScheduleError, match="flow dependence"):
        comp.reschedule("s2", "s0")
    assert (comp.to_json(), len(comp.trace)) == before
    with pytest.raises(spf.SpfError, match="s1 cannot move before itself"):
        comp.reschedule("s1", "s1")


@pytest.mark.parametrize("case", ["consumer_first", "reads_ahead"])
def test_inline_refuses_reads_before_the_producer_writes(case: str) -> None:
    """``inline("t")`` substituted the producer's value into reads that run before the
    producer writes the element (they read what ``t`` held before): a consumer ahead of the
    producer (``[7, 7, ...]`` became ``[0, 2, ...]``), or one reading ``t(i+1)`` in the
    producer's loop. Both are refused, naming the anti dependence."""
    c = spf.Computation(case)
    for n in ("a", "t", "out"):
        c.add_data_space(n, "double", shape=("N",))
    if case == "consumer_first":
        c.add_stmt(spf.Stmt("$out$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
        c.add_stmt(spf.Stmt("$t$(i) = 2.0 * $a$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    else:
        c.add_stmt(spf.Stmt("$t$(i) = 2.0 * $a$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
        c.add_stmt(spf.Stmt("$out$(i) = $t$(i+1);", "{[i]: 0 <= i < N-1}", "{[i]->[0,i,1]}"))
    with pytest.raises(spf.IllegalScheduleError, match="reads elements of 't' before"):
        c.pdfg().inline("t")
    assert "t" in c.data_spaces  # nothing changed
