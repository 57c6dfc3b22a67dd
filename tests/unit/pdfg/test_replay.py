"""The trace of PDFG fuse and reschedule replays to the same schedules (spf/computation/graph_ops.py,
spf/schedule/trace.py): random sequences of the two operations on small computations (3-5
statements, one or two loops), each followed by a replay of ``comp.trace`` on a copy built
before the commands, compared by schedules, tags and generated C."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest

import spf
from spf.schedule import After, Trace
from spf.schedule.commands import Reschedule

DOMAINS = {1: "{[i]: 0 <= i < N}", 2: "{[i,j]: 0 <= i < N && 0 <= j < M}"}
INDEX = {1: "(i)", 2: "(i,j)"}


def three_loops() -> spf.Computation:
    """Three independent one-loop statements ``s0``, ``s1``, ``s2``."""
    comp = spf.Computation("three")
    for name in ("a", "b", "c"):
        comp.add_data_space(name, "double", shape=("N",))
        comp.add_stmt(spf.Stmt(f"${name}$(i) = 1.0;", DOMAINS[1]))
    return comp


def builder(seed: int) -> Callable[[], spf.Computation]:
    """A builder of a computation of 3-5 statements, each in one or two loops (all the same
    depth, or mixed), writing its own array; some read an earlier statement's array at the
    same point (a flow dependence, so some operations are refused)."""
    rng = random.Random(seed)
    count = rng.randint(3, 5)
    depths = [rng.choice((1, 2)) for _ in range(count)] if seed % 3 == 0 else []
    depths = depths or [rng.choice((1, 2))] * count
    reads = [
        rng.choice([k2 for k2 in range(k) if depths[k2] == depths[k]] or [None])
        if rng.random() < 0.4
        else None
        for k in range(count)
    ]

    def make() -> spf.Computation:
        comp = spf.Computation(f"random{seed}")
        for k, depth in enumerate(depths):
            shape = ("N", "M")[:depth]
            comp.add_data_space(f"a{k}", "double", shape=shape)
        for k, depth in enumerate(depths):
            source = reads[k]
            value = f"$a{source}${INDEX[depth]} + 1.0" if source is not None else f"{k}.0"
            comp.add_stmt(spf.Stmt(f"$a{k}${INDEX[depth]} = {value};", DOMAINS[depth]))
        return comp

    return make


def snapshot(comp: spf.Computation) -> tuple[list[str], list[dict[str, tuple[str, ...]]], str]:
    """The schedules, tags and generated C of ``comp``."""
    schedules = [str(s.schedule) for s in comp.stmts]
    tags = [dict(s.tags) for s in comp.stmts]
    return schedules, tags, comp.codegen(check=False)


def replays(make: Callable[[], spf.Computation], comp: spf.Computation) -> None:
    """``comp.trace`` replayed on a fresh ``make()`` (directly, from JSON, and as the Python
    it prints) gives ``comp``'s schedules, tags and C."""
    want = snapshot(comp)
    direct = comp.trace.replay(make())
    assert snapshot(direct) == want, comp.trace.as_python()
    assert direct.trace == comp.trace
    data = json.loads(json.dumps(comp.trace.to_data()))
    assert snapshot(Trace.from_data(data).replay(make())) == want
    fresh = make()
    exec(comp.trace.as_python(), {"comp": fresh, "spf": spf})
    assert snapshot(fresh) == want
    assert fresh.trace == comp.trace


def test_reschedule_replays_moving_the_mover_not_the_anchor() -> None:
    """The reported case: ``s2`` before ``s0`` replayed gave s1, s2, s0 (the trace held
    ``s0.after("s2", ROOT)``, which moves the anchor); it gives s2, s0, s1."""
    comp = three_loops()
    comp.reschedule("s2", "s0")
    want = "for i:\n  s2\nfor i:\n  s0\nfor i:\n  s1"
    assert comp.loop_structure() == want
    assert comp.trace.as_python() == 'comp.reschedule("s2", "s0")'
    fresh = comp.trace.replay(three_loops())
    assert fresh.loop_structure() == want
    replays(three_loops, comp)


def test_reschedule_in_a_pdfg_replays_too() -> None:
    comp = three_loops()
    comp.pdfg().reschedule("s2", "s0")
    comp.pdfg().reschedule("s1", "s2")
    assert comp.loop_structure() == "for i:\n  s1\nfor i:\n  s2\nfor i:\n  s0"
    replays(three_loops, comp)


def four_loops() -> spf.Computation:
    comp = three_loops()
    comp.add_data_space("d", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$d$(i) = 1.0;", DOMAINS[1]))
    return comp


def test_a_reversed_order_does_not_move_anything_on_replay() -> None:
    """``s3`` after ``s1`` (then ``s2`` between them), then ``s3`` rescheduled before ``s0``:
    the order ``s3.after("s1")`` is reversed and kept as an order in force (``s1`` after
    ``s3``), not replayed as ``s1.after("s3")``, which would move ``s1`` next to ``s3``."""
    comp = four_loops()
    comp.stmt("s3").after("s1", spf.ROOT)
    comp.stmt("s2").after("s1", spf.ROOT)
    comp.reschedule("s3", "s0")
    assert comp.loop_structure() == "for i:\n  s3\nfor i:\n  s0\nfor i:\n  s1\nfor i:\n  s2"
    assert comp.trace[-1].as_python() == 'comp.reschedule("s3", "s0")'
    assert comp.trace[-1].command == Reschedule(
        other="s0", level=spf.ROOT, follows=(("s1", "s3", spf.ROOT),)
    )
    assert comp.trace.orders()[-1] == ("s1", After(other="s3", level=spf.ROOT))
    replays(four_loops, comp)
    comp.reschedule("s1", "s3")  # the reversed order is in force: s1 may move again
    assert comp.loop_structure() == "for i:\n  s1\nfor i:\n  s3\nfor i:\n  s0\nfor i:\n  s2"
    replays(four_loops, comp)


def nested() -> spf.Computation:
    """Two-loop statements: ``s1`` reads what ``s0`` writes, ``s2`` is independent."""
    comp = spf.Computation("nested")
    for name in ("a", "b", "c"):
        comp.add_data_space(name, "double", shape=("N", "M"))
    comp.add_stmt(spf.Stmt("$a$(i,j) = 1.0;", DOMAINS[2]))
    comp.add_stmt(spf.Stmt("$b$(i,j) = $a$(i,j) + 1.0;", DOMAINS[2]))
    comp.add_stmt(spf.Stmt("$c$(i,j) = 2.0;", DOMAINS[2]))
    return comp


@pytest.mark.parametrize("level", [1, 2])
def test_reschedule_inside_shared_loops_replays(level: int) -> None:
    comp = nested()
    comp.fuse("s0", "s1", level)
    comp.fuse("s1", "s2", level)
    comp.reschedule("s2", "s0")
    comp.reschedule("s0", "s2")  # back: s0 first, s2 and s1 keep their order
    comp.reschedule("s2", "s1")
    inner = "    s0\n    s2\n    s1" if level == 2 else "    s0\n  for j:\n    s2\n  for j:\n    s1"
    assert comp.loop_structure() == "for i:\n  for j:\n" + inner
    replays(nested, comp)


def test_pdfg_history_replays_reschedules_without_snapshots() -> None:
    comp = three_loops()
    dots = [comp.to_dot()]
    for act in (
        lambda c: c.reschedule("s2", "s0"),
        lambda c: c.fuse("s2", "s0", 1),
        lambda c: c.reschedule("s1", "s2"),
    ):
        act(comp)
        dots.append(comp.to_dot())
    history = comp.pdfg_history()
    assert [g.to_dot() for _, g in history] == dots
    assert history.methods == ("initial", "reschedule", "after", "reschedule")


def test_bad_reschedule_entries_in_json_are_refused() -> None:
    entry = {"stmt": "s0", "command": "Reschedule", "args": {"other": "s1", "level": None}}
    assert Trace.from_data([entry])[0].command.level is spf.ROOT
    bad = {**entry, "args": {"other": "s1", "level": None, "follows": [["s0", 3, None]]}}
    with pytest.raises(spf.SpfError, match=r"reschedule: follows must be \(succ, pred, level\)"):
        Trace.from_data([bad])


def random_command(rng: random.Random, comp: spf.Computation) -> Callable[[], object]:
    names = [s.name for s in comp.stmts]
    a, b = rng.sample(names, 2)
    if rng.random() < 0.5:
        return lambda: comp.reschedule(a, b)
    most = min(len(comp.stmt(a).loops), len(comp.stmt(b).loops))
    level: object = rng.randint(0, most)
    if level and rng.random() < 0.3:
        level = comp.stmt(a).loops[int(str(level)) - 1]  # the innermost shared loop by name
    return lambda: comp.fuse(a, b, level)


@pytest.mark.parametrize("seed", range(14))
def test_random_fuse_and_reschedule_sequences_replay(seed: int) -> None:
    make = builder(seed)
    comp = make()
    rng = random.Random(1000 + seed)
    done = 0
    for _ in range(6):
        command = random_command(rng, comp)
        before = (comp.to_json(), len(comp.trace))
        try:
            command()
        except spf.SpfError:
            assert (comp.to_json(), len(comp.trace)) == before  # refused: nothing changed
            continue
        done += 1
        replays(make, comp)
    assert done > 0  # the seeds are chosen so that some commands are legal
