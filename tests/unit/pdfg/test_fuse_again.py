"""Fusing a statement again moves it (IEGenLib's FusionUnitTest, issue 27 item 6).

IEGenLib's ``FusionUnitTest`` (``src/computation/computation_test.cc``) has four statements
``S0..S3`` over ``{[i,j]: 0 <= i < NR && 0 <= j < X}`` (``X`` = ``NC, NQ, NP, NT``) at
``[k,i,0,j,0]`` and fuses ``(S0, S1)``, ``(S2, S3)``, then ``(S3, S1)``: the second fusion of
``S1`` takes it out of ``S0``'s nest into ``S3``'s. spf refused that (``after`` keeps each
statement's earlier predecessor: "conflicting predecessors"); PDFG ``fuse`` now lets the
moved statement's earlier order give way, still legality-checked, recorded so the trace
prints as the ``fuse`` call and replays.

IEGenLib counts schedule positions (its levels 2 and 4 are spf's 1 and 2, the shared loops).
Its expected schedules are compared here as program orders (spf does not renumber the other
nests' outer constants). One difference is kept on purpose: after its level-4 fusion IEGenLib
gives ``S1`` ``[1,t1,1,t2,2]``, i.e. a ``j`` loop of its own after ``S3``'s (it keeps ``S1``'s
old constant at position 2), where spf's ``fuse`` shares both loops as documented (API §5,
§10): ``S1`` right after ``S3`` inside ``j``. Fusing at level 1 gives IEGenLib's order.
"""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.schedule.trace import trace_of

EXTENTS = ("NC", "NQ", "NP", "NT")
SIZES = {"NR": 3, "NC": 4, "NQ": 2, "NP": 5, "NT": 3}


def four(s3_reads_s1: bool = False) -> spf.Computation:
    """IEGenLib's four statements, each writing its own array (``s3_reads_s1``: ``S3``
    reads what ``S1`` wrote, which ``S1`` moved after ``S3`` breaks)."""
    comp = spf.Computation("fusion")
    for k, x in enumerate(EXTENTS):
        comp.add_data_space(f"a{k}", "double", shape=("NR", x))
    for k, x in enumerate(EXTENTS):
        value = f"{k}.0 + i + 0.5 * j"
        if k == 3 and s3_reads_s1:
            value = "$a1$(i, 0) + 1.0"
        comp.add_stmt(
            spf.Stmt(
                f"$a{k}$(i, j) = {value};",
                f"{{[i,j]: 0 <= i < NR && 0 <= j < {x}}}",
                f"{{[i,j] -> [{k},i,0,j,0]}}",
            )
        )
    return comp


def before(a: list[str], b: list[str]) -> bool:
    """Whether schedule ``a`` runs before ``b`` (2d+1 tuples, loops by name, same loops)."""
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return int(x) < int(y)
        raise AssertionError(f"{a} and {b} differ at a loop")
    return False


def order(schedules: list[list[str]]) -> list[list[bool]]:
    return [[before(a, b) for b in schedules] for a in schedules]


def spf_order(comp: spf.Computation) -> list[list[bool]]:
    width = comp.schedule_width()
    rows = []
    for s in comp.stmts:
        outs = list(s.schedule.pad_outputs(width).out_vars)
        rows.append([v if v.isdigit() else {"i": "t1", "j": "t2"}[v] for v in outs])
    return order(rows)


def iegen(*tuples: str) -> list[list[bool]]:
    return order([t.split(",") for t in tuples])


# IEGenLib's expected schedules after each fusion (its test, positions joined by commas)
STEP_1 = iegen("0,t1,0,t2,0", "0,t1,1,t2,0", "1,t1,0,t2,0", "2,t1,0,t2,0")
STEP_2 = iegen("0,t1,0,t2,0", "0,t1,1,t2,0", "1,t1,0,t2,0", "1,t1,0,t2,1")
STEP_3 = iegen("0,t1,0,t2,0", "1,t1,1,t2,2", "1,t1,0,t2,0", "1,t1,0,t2,1")


def values(comp: spf.Computation) -> list[np.ndarray]:
    arrays = {f"a{k}": np.zeros((SIZES["NR"], SIZES[x])) for k, x in enumerate(EXTENTS)}
    comp.interpret(**arrays, **SIZES)
    return list(arrays.values())


def test_iegenlibs_fusion_sequence_moves_s1_into_s3s_nest() -> None:
    comp = four()
    want = values(four())
    comp.fuse("s0", "s1", 1)  # IEGenLib fuse(0, 1, 2)
    assert spf_order(comp) == STEP_1
    comp.fuse("s2", "s3", 2)  # IEGenLib fuse(2, 3, 4)
    assert spf_order(comp) == STEP_2
    comp.fuse("s3", "s1", 2)  # IEGenLib fuse(3, 1, 4): used to be refused
    assert str(comp.stmt("s1").schedule) == "{[i, j] -> [2, i, 0, j, 2]}"  # in j, after s3
    assert [str(s.schedule) for s in comp.stmts if s.name != "s1"] == [
        "{[i, j] -> [0, i, 0, j, 0]}",
        "{[i, j] -> [2, i, 0, j, 0]}",
        "{[i, j] -> [2, i, 0, j, 1]}",
    ]
    assert all(np.array_equal(a, b) for a, b in zip(values(comp), want, strict=True))


def test_fusing_s1_at_one_loop_gives_iegenlibs_third_order() -> None:
    comp = four()
    comp.fuse("s0", "s1", 1)
    comp.fuse("s2", "s3", 2)
    comp.fuse("s3", "s1", 1)
    assert spf_order(comp) == STEP_3
    assert comp.loop_structure().startswith("for i:\n  for j:\n    s0\nfor i:\n  for j:\n    s2\n")


@pytest.mark.parametrize(("level", "inner"), [(1, "  for j:\n    s1\n"), (2, "    s1\n")])
def test_fusing_twice_at_the_same_level_moves_s1_after_s3(level: int, inner: str) -> None:
    """The brief's sequences: ``fuse(s0,s1)``, ``fuse(s2,s3)``, ``fuse(s3,s1)`` all at level 1
    or all at 2: ``s1`` leaves ``s0``'s nest and runs after ``s3`` in ``s2``/``s3``'s."""
    comp = four()
    want = values(four())
    for a, b in (("s0", "s1"), ("s2", "s3"), ("s3", "s1")):
        comp.fuse(a, b, level)
    s1, s3 = comp.stmt("s1").schedule.out_vars, comp.stmt("s3").schedule.out_vars
    assert s1[: 2 * level] == s3[: 2 * level]  # the shared loops
    assert int(s1[2 * level]) == int(s3[2 * level]) + 1  # right after s3
    assert int(s1[0]) != int(comp.stmt("s0").schedule.out_vars[0])  # out of s0's nest
    text = comp.loop_structure()
    assert text.index("s3") < text.index("s1")
    assert inner in text
    assert all(np.array_equal(a, b) for a, b in zip(values(comp), want, strict=True))


def test_the_move_is_recorded_as_fuse_and_replays() -> None:
    comp = four()
    comp.fuse("s0", "s1", 1)
    comp.fuse("s2", "s3", 2)
    comp.fuse("s3", "s1", 2)
    lines = trace_of(comp).as_python().splitlines()
    assert lines == [
        'comp.stmt("s1").after("s0", 0)',  # nothing gave way: an ordinary after
        'comp.stmt("s3").after("s2", 1)',
        'comp.fuse("s3", "s1", 2)',
    ]
    state = [str(s.schedule) for s in comp.stmts]
    fresh = four()
    exec("\n".join(lines), {"comp": fresh, "spf": spf})
    assert [str(s.schedule) for s in fresh.stmts] == state
    assert [str(s.schedule) for s in trace_of(comp).replay(four()).stmts] == state
    back = spf.Computation.from_json(comp.to_json())
    assert [str(s.schedule) for s in back.stmts] == state
    back.fuse("s0", "s1", 1)  # and it can move again: the order after s3 gives way
    assert back.stmt("s1").schedule.out_vars[0] == back.stmt("s0").schedule.out_vars[0]


@pytest.mark.parametrize("level", [1, 2])
def test_an_illegal_second_fusion_is_refused_and_changes_nothing(level: int) -> None:
    """``S3`` reads what ``S1`` writes: moved after ``S3``, ``S1`` would write it too late."""
    comp = four(s3_reads_s1=True)
    comp.fuse("s0", "s1", 1)
    comp.fuse("s2", "s3", 2)
    saved = (comp.to_json(), len(comp.trace))
    with pytest.raises(spf.IllegalScheduleError, match="flow dependence on 'a1'"):
        comp.fuse("s3", "s1", level)
    assert (comp.to_json(), len(comp.trace)) == saved
