"""Effect commands (``compute_at``, ``inline``) as records, and the scanner's separation of
full and partial tiles (which loops, which pieces, tags on the remainder)."""

from __future__ import annotations

import pytest

import spf
from spf import Computation, SpfError, Stmt, kernels
from spf.codegen.scan import separable_loops
from spf.computation.effects import ComputeAt, Inline
from spf.schedule import ROOT, trace_of
from spf.schedule.commands import COMMANDS, Effect
from spf.schedule.trace import Trace, TraceEntry, blame, culprit


def test_effect_commands_are_registered_and_print_as_python() -> None:
    assert COMMANDS["ComputeAt"] is ComputeAt
    assert COMMANDS["Inline"] is Inline
    assert issubclass(ComputeAt, Effect)
    assert issubclass(Inline, Effect)
    assert ComputeAt(consumer="s1", level="j0").call_text() == 'compute_at("s1", "j0")'
    assert ComputeAt(consumer="s1", level=0).call_text() == 'compute_at("s1", 0)'
    assert Inline().call_text() == "inline()"


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"consumer": "", "level": "i"}, "consumer must be"),
        ({"consumer": "s1", "level": -1}, "depth must be >= 0"),
        ({"consumer": "s1", "level": 1.5}, "level must be a loop name or depth"),
    ],
)
def test_compute_at_arguments_are_checked(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(SpfError, match=pattern):
        ComputeAt(**kwargs)  # type: ignore[arg-type]


def test_effect_entries_round_trip_through_data() -> None:
    trace = Trace(
        [
            TraceEntry(stmt="s0", command=ComputeAt(consumer="s1", level="i")),
            TraceEntry(stmt="s0", command=Inline()),
        ]
    )
    data = trace.to_data()
    assert data[1] == {"stmt": "s0", "command": "Inline", "args": {}}
    assert Trace.from_data(data) == trace


def test_compute_at_by_depth_and_by_statement_object() -> None:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    assert s0.compute_at(s1, 0) is s0
    assert s0.loops == ("i_", "i", "j")
    assert trace_of(comp).as_python() == 'comp.stmt("s0").compute_at("s1", 0)'
    # s1 moved one slot later under the shared loop; s0 took its place
    assert s1.schedule.out_vars[:3] == ("1", "i", "1")
    assert s0.schedule.out_vars[:3] == ("1", "i_", "0")


def test_compute_at_refuses_an_already_illegal_schedule() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").after("s0", "i")  # too early without a shift
    with pytest.raises(spf.IllegalScheduleError, match="already illegal"):
        comp.stmt("s0").compute_at("s1", "i")


def test_inline_a_statement_writing_two_data_spaces_is_refused() -> None:
    comp = Computation("two")
    for name in ("a", "b", "c"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 1.0; $b$(i) = 2.0;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$c$(i) = $a$(i);", "{[i]: 0 <= i < N}"))
    with pytest.raises(SpfError, match="exactly one data space"):
        comp.stmt("s0").inline()
    assert len(comp.stmts) == 2
    assert len(trace_of(comp)) == 0


def test_separable_loops_follow_split_tile_and_vectorize() -> None:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.tile("i", "j", 8, 8, "i0", "j0", "i1", "j1").vectorize("j1", 4)
    loops = separable_loops(comp.ir.parsed_stmt("s0"))
    assert loops == ["j11", "i1", "j10"]  # the vector loop, tile loops, j1's parts
    s.gpu(("i0", "j0"), ("i1", "j10"))
    assert separable_loops(comp.ir.parsed_stmt("s0")) == []  # grids: one loop per position


def test_the_remainder_of_a_vector_loop_is_not_tagged() -> None:
    comp = Computation("v")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i) = 1.0;", "{[i]: 0 <= i < N}"))
    comp.stmt(0).vectorize("i", 4)
    assert comp.loop_structure() == "for i0:\n  for i1 [vector(4)]:\n    s0\nfor i1:\n  s0"
    assert comp.codegen().count("#pragma omp simd") == 1


def test_culprit_prefers_the_command_naming_the_loop() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").split("j", 4, "j0", "j1").shift("i", 2).after("s0", "i")
    entry = culprit(comp, ["s0", "s1"], "j0")
    assert entry is not None
    assert entry.command.method == "split"
    last = culprit(comp, ["s0"], None)
    assert last is not None
    assert last.command.method == "after"
    assert blame(kernels.blur2d(), ["s0"], "i") == ""
    assert ROOT is spf.ROOT
