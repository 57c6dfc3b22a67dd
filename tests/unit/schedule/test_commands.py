"""Scheduling commands (API.md section 3, Tiramisu Layer II): each command's schedule, loops
and tags; argument errors (nothing changes on error); ordering with after / before / then;
the trace (as_python, replay, JSON); commands as pure functions."""

from __future__ import annotations

import json
from typing import Any

import pytest

import spf
from spf import (
    ArityError,
    Computation,
    ParseError,
    Relation,
    SpfError,
    Stmt,
    UndeclaredError,
    kernels,
)
from spf.schedule import (
    ROOT,
    After,
    Context,
    Parallelize,
    Split,
    State,
    Tile,
    Trace,
    apply_command,
    trace_of,
)


def fill(schedule: str = "{[i,j]->[0,i,0,j,0]}") -> Computation:
    comp = Computation("fill")
    comp.add_data_space("buf", "int32_t", shape=("N", "N"))
    comp.add_stmt(Stmt("$buf$(i,j) = 7;", "{[i,j]: 0 <= i < N && 0 <= j < N}", schedule))
    return comp


def four() -> Computation:
    """EXAMPLES.md "Ordering at a loop level": four statements over [0,10)^2."""
    comp = Computation("order")
    for k in range(4):
        comp.add_data_space(f"b{k}", "double", shape=(10, 10))
    for k in range(4):
        comp.add_stmt(Stmt(f"$b{k}$(i,j) = {k};", "{[i,j]: 0 <= i < 10 && 0 <= j < 10}"))
    return comp


def snapshot(comp: Computation) -> tuple[Any, ...]:
    return (
        tuple(str(s.schedule) for s in comp.stmts),
        tuple(tuple(sorted(s.tags.items())) for s in comp.stmts),
        len(trace_of(comp)),
    )


# ------------------------------------------------------------------------ loop transforms
def test_split() -> None:
    s = kernels.dense_mv().stmt("s0").split("i", 4, "i0", "i1")
    assert s.loops == ("i0", "i1", "j")
    assert str(s.schedule) == (
        "{[i, j] -> [0, i0, 0, i1, 0, j, 0] : 4*i0 <= i && i <= 4*i0 + 3 && i = 4*i0 + i1}"
    )
    assert s.schedule.contains(((9, 2), (0, 2, 0, 1, 0, 2, 0)))


def test_split_by_depth_returns_the_stmt() -> None:
    comp = kernels.dense_mv()
    s = comp.stmt("s0")
    assert s.split(1, 3, "j0", "j1") is s
    assert s.loops == ("i", "j0", "j1")


def test_tile_puts_the_constant_between_the_point_loops() -> None:
    s = fill("{[i,j]->[0,i,5,j,0]}").stmt(0)
    s.tile("i", "j", 2, 3, "i0", "j0", "i1", "j1")
    assert s.loops == ("i0", "j0", "i1", "j1")
    assert s.schedule.out_vars == ("0", "i0", "0", "j0", "0", "i1", "5", "j1", "0")
    assert s.schedule.contains(((5, 7), (0, 2, 0, 2, 0, 1, 5, 1, 0)))
    assert not s.schedule.contains(((5, 7), (0, 2, 0, 2, 0, 1, 0, 1, 0)))


def test_tile_example_loop_structure() -> None:
    comp = fill()
    comp.stmt(0).tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").parallelize("i0")
    assert comp.loop_structure() == (
        "for i0 [parallel]:\n  for j0:\n    for i1:\n      for j1:\n        s0"
    )


def test_interchange_any_depths() -> None:
    s = kernels.gemm().stmt(0).interchange("i", "k")
    assert str(s.schedule) == "{[i, j, k] -> [0, k, 0, j, 0, i, 0]}"
    assert s.loops == ("k", "j", "i")
    s.interchange(0, 2)
    assert str(s.schedule) == "{[i, j, k] -> [0, i, 0, j, 0, k, 0]}"


def test_shift_keeps_the_name() -> None:
    s = kernels.dense_mv().stmt(0).shift("i", 3)
    assert s.loops == ("i", "j")
    assert str(s.schedule) == "{[i_, j] -> [0, i, 0, j, 0] : i = i_ + 3}"
    assert s.schedule.contains(((1, 2), (0, 4, 0, 2, 0)))
    s.shift("i", -3)
    assert s.schedule.is_equal(Relation("{[i, j] -> [0, i, 0, j, 0]}"))


def test_skew() -> None:
    s = kernels.dense_mv().stmt(0).skew("i", "j", 2)
    assert s.loops == ("i", "j")
    assert str(s.schedule) == "{[i, j_] -> [0, i, 0, j, 0] : j = 2*i + j_}"
    t = kernels.dense_mv().stmt(0).skew("i", "j", -1, new_i="t", new_j="u")
    assert t.loops == ("t", "u")
    assert t.schedule.contains(((3, 5), (0, 3, 0, 2, 0)))


def test_reverse() -> None:
    s = kernels.dense_mv().stmt(0).reverse("i")
    assert s.loops == ("i", "j")
    assert str(s.schedule) == "{[i_, j] -> [0, i, 0, j, 0] : i + i_ = 0}"


def test_transforms_of_an_unnamed_loop_stay_expressions() -> None:
    comp = kernels.dense_mv()
    s = comp.stmt(0).set_schedule("{[i,j] -> [0, i + 1, 0, j, 0]}")
    assert s.loops == ("i + 1", "j")
    s.shift(0, 2).interchange(0, "j")
    assert str(s.schedule) == "{[i, j] -> [0, j, 0, i + 3, 0]}"


def test_sparse_split_and_tile_of_the_row_loop() -> None:
    comp = kernels.spmv_csr()
    s = comp.stmt(0).split("i", 8, "i0", "i1").parallelize("i0")
    assert s.loops == ("i0", "i1", "k", "j")
    assert s.schedule.out_vars == ("0", "i0", "0", "i1", "0", "k", "0", "j", "0")
    assert comp.is_parallel_legal(s, "i0")
    comp.check_legality()
    t = kernels.spmv_csr().stmt(0).tile("i", "k", 4, 2, "i0", "k0", "i1", "k1")
    assert t.loops == ("i0", "k0", "i1", "k1", "j")


# ---------------------------------------------------------------------------------- tags
def test_unroll_and_parallelize_tags() -> None:
    comp = kernels.gemm()
    s = comp.stmt(0).parallelize(0).unroll("k", 4).unroll("k", 2)
    assert s.tags == {"i": ("parallel",), "k": ("unroll(2)",)}
    assert comp.loop_structure() == "for i [parallel]:\n  for j:\n    for k [unroll(2)]:\n      s0"
    code = comp.codegen()
    assert "#pragma GCC unroll 2\n" in code
    assert code.count("#pragma omp parallel for") == 1


def test_unroll_next_to_openmp_pragma_is_left_out() -> None:
    comp = kernels.dense_mv()
    comp.stmt(0).parallelize("i").unroll("i", 4)
    code = comp.codegen()
    assert "#pragma omp parallel for" in code
    assert "GCC unroll" not in code


def test_vectorize_splits_and_tags_the_inner_loop() -> None:
    comp = kernels.dense_mv()
    s = comp.stmt(0).vectorize("j", 8)
    assert s.loops == ("i", "j0", "j1")
    assert s.tags == {"j1": ("vector(8)",)}
    assert comp.loop_structure().splitlines()[2] == "    for j1 [vector(8)]:"
    t = kernels.dense_mv().stmt(0).vectorize(1, 4, outer="jv", inner="jl")
    assert t.loops == ("i", "jv", "jl")
    assert t.tags == {"jl": ("vector(4)",)}


def test_tags_follow_their_loops() -> None:
    s = kernels.gemm().stmt(0).parallelize("i").unroll("k", 4)
    s.split("i", 2, "i0", "i1")
    assert s.tags == {"i0": ("parallel",), "k": ("unroll(4)",)}
    s.interchange("j", "k").skew("i0", "i1", 1, new_i="x")
    assert s.tags == {"x": ("parallel",), "k": ("unroll(4)",)}
    s.set_schedule("{[i,j,k] -> [0,i,0,j,0,k,0]}")
    assert s.tags == {"k": ("unroll(4)",)}


def test_set_schedule() -> None:
    s = kernels.dense_mv().stmt(0).set_schedule("{[i,j] -> [0,j,0,i,0]}")
    assert s.loops == ("j", "i")
    s.set_schedule(Relation("{[i,j] -> [1,i,0,j,0]}"))
    assert str(s.schedule) == "{[i, j] -> [1, i, 0, j, 0]}"


def test_commands_do_not_check_legality() -> None:
    comp = kernels.gemm()
    comp.stmt(0).reverse("k")  # reorders the reduction: illegal, but only codegen says so
    with pytest.raises(spf.IllegalScheduleError, match="flow dependence"):
        comp.check_legality()
    with pytest.raises(spf.IllegalScheduleError):
        comp.codegen()


def test_illegal_example_is_refused() -> None:
    comp = Computation("wave")
    comp.add_data_space("A", "int64_t", shape=(10, 10))
    s = comp.add_stmt(
        Stmt(
            "$A$(i,j) = $A$(i-1,j-1) + $A$(i,j) + $A$(i-1,j+1);",
            "{[i,j]: 1 <= i < 9 && 1 <= j < 8}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    s.tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    with pytest.raises(spf.IllegalScheduleError, match=r"flow dependence on 'A'.*'j0'"):
        comp.codegen("c")


# -------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda s: s.split("x", 2, "a", "b"), UndeclaredError, r"unknown loop 'x'.*'i', 'j'"),
        (lambda s: s.reverse(2), UndeclaredError, r"has 2 loop\(s\)"),
        (lambda s: s.parallelize(-1), SpfError, "depth must be >= 0"),
        (lambda s: s.interchange("i", "q"), UndeclaredError, "'q'"),
        (lambda s: s.split("i", 0, "a", "b"), SpfError, "positive int, got 0"),
        (lambda s: s.split("i", -2, "a", "b"), SpfError, "positive int"),
        (lambda s: s.split("i", True, "a", "b"), SpfError, "positive int"),
        (lambda s: s.split("i", 2.0, "a", "b"), SpfError, "positive int"),
        (lambda s: s.tile("i", "j", 2, "4", "a", "b", "c", "d"), SpfError, "tj must be"),
        (lambda s: s.unroll("i", 0), SpfError, "positive int"),
        (lambda s: s.vectorize("j", -8), SpfError, "width must be a positive int"),
        (lambda s: s.shift("i", 1.5), SpfError, "amount must be an int"),
        (lambda s: s.skew("i", "j", 0), SpfError, "non-zero int"),
        # int64_t loop bounds overflow: a shift by 2**63 - 1 gave a wrong result silently
        (lambda s: s.shift("i", 2**63 - 1), SpfError, "amount 9223372036854775807 is too large"),
        (lambda s: s.skew("i", "j", -(2**40)), SpfError, "factor -1099511627776 is too large"),
        (lambda s: s.split("i", 2**31, "a", "b"), SpfError, "too large"),
        (lambda s: s.split("i", 2, "j", "b"), SpfError, "'j' would be used twice"),
        (lambda s: s.split("i", 2, "A", "b"), SpfError, "collides with a data space"),
        (lambda s: s.split("i", 2, "N", "b"), SpfError, "collides"),
        (lambda s: s.split("i", 2, "s0", "b"), SpfError, "collides"),
        (lambda s: s.split("i", 2, "for", "b"), SpfError, "reserved word"),
        (lambda s: s.split("i", 2, "1x", "b"), SpfError, "C identifier"),
        (lambda s: s.split("i", 2, "__x", "b"), SpfError, "reserved for spf"),
        (lambda s: s.split("i", 2, "a", "a"), SpfError, "given twice"),
        (lambda s: s.interchange("i", 0), SpfError, "same loop"),
        (lambda s: s.skew("j", 1, 2), SpfError, "same loop"),
        (lambda s: s.skew("i", "j", 1, new_i="j"), SpfError, "used twice"),
        (lambda s: s.vectorize("j", 4, outer="i"), SpfError, "used twice"),
        (lambda s: s.set_schedule("{[i] -> [0, i, 0]}"), ArityError, "arity 2"),
        (lambda s: s.set_schedule("{[i, j] -> [0, i"), ParseError, "expected"),
        (lambda s: s.set_schedule(3), SpfError, "relation text"),
        (lambda s: s.after(s, 0), SpfError, "cannot run after itself"),
        (lambda s: s.after("nope", 0), UndeclaredError, "unknown statement 'nope'"),
        (lambda s: s.after(3.5, 0), SpfError, "statement or its name"),
    ],
)
def test_argument_errors_leave_everything_unchanged(call: Any, error: Any, pattern: str) -> None:
    comp = kernels.dense_mv()
    s = comp.stmt(0)
    s.parallelize("i")
    before = snapshot(comp)
    with pytest.raises(error, match=pattern):
        call(s)
    assert snapshot(comp) == before


def test_tile_needs_consecutive_loops() -> None:
    comp = kernels.gemm()
    with pytest.raises(SpfError, match="not consecutive"):
        comp.stmt(0).tile("i", "k", 2, 2, "a", "b", "c", "d")
    with pytest.raises(SpfError, match="not consecutive"):
        comp.stmt(0).tile("j", "i", 2, 2, "a", "b", "c", "d")
    assert len(trace_of(comp)) == 0


def test_collision_with_a_uf_name() -> None:
    comp = kernels.spmv_csr()
    with pytest.raises(SpfError, match=r"'rowptr'.*collides"):
        comp.stmt(0).split("i", 2, "rowptr", "i1")


def test_error_notes_name_the_command() -> None:
    with pytest.raises(UndeclaredError) as info:
        kernels.dense_mv().stmt(0).split("x", 2, "a", "b")
    assert any('split("x", 2, "a", "b")' in n for n in info.value.__notes__)


def test_a_statement_must_be_added_first() -> None:
    s = Stmt("$x$(i) = 0;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}")
    with pytest.raises(SpfError, match="add it to a Computation"):
        s.split("i", 2, "a", "b")
    with pytest.raises(SpfError, match="add it to a Computation"):
        s.after("s0", 0)


# ------------------------------------------------------------------------------ ordering
ORDERED = "for i:\n  for j:\n    s0\n  for j:\n    s1\n    s2\n  for j:\n    s3"


def test_ordering_example() -> None:
    comp = four()
    s0, s1, s2, s3 = comp.stmts
    assert s1.after(s0, "i") is s1
    s2.after(s1, "j")
    s3.after(s2, "i")
    assert comp.loop_structure() == ORDERED
    assert [str(s.schedule) for s in comp.stmts] == [
        "{[i, j] -> [0, i, 0, j, 0]}",
        "{[i, j] -> [0, i, 1, j, 0]}",
        "{[i, j] -> [0, i, 1, j, 1]}",
        "{[i, j] -> [0, i, 2, j, 0]}",
    ]


def test_then_chains_and_before_mirrors_after() -> None:
    comp = four()
    assert comp.stmt(0).then("s1", "i").then("s2", 1) is comp.stmt("s2")
    comp.stmt("s2").then(comp.stmt(3), 0)
    assert comp.loop_structure() == ORDERED
    other = four()
    s0, s1, s2, _s3 = other.stmts
    assert s0.before(s1, "i") is s0
    s1.before(s2, "j")
    s2.before("s3", "i")
    assert other.loop_structure() == ORDERED
    assert next(str(e.command) for e in trace_of(other)) == "After(other='s0', level='i')"


def test_after_at_root_moves_the_statements_in_the_way() -> None:
    comp = four()
    s0, _s1, _s2, s3 = comp.stmts
    s3.after(s0, ROOT)
    assert [s.schedule.out_vars[0] for s in comp.stmts] == ["0", "2", "3", "1"]
    assert comp.loop_structure().split("\n    ") == [
        "for i:\n  for j:",
        "s0\nfor i:\n  for j:",
        "s3\nfor i:\n  for j:",
        "s1\nfor i:\n  for j:",
        "s2",
    ]


def test_a_second_predecessor_that_agrees_is_fine() -> None:
    comp = four()
    s0, s1, s2, _ = comp.stmts
    s1.after(s0, "i")
    s2.after(s0, "i")  # takes s1's slot; s1 moves one later and still runs after s0
    s1.after(s2, "j")
    assert [str(s.schedule) for s in comp.stmts[:3]] == [
        "{[i, j] -> [0, i, 0, j, 0]}",
        "{[i, j] -> [0, i, 1, j, 1]}",
        "{[i, j] -> [0, i, 1, j, 0]}",
    ]


def test_conflicting_predecessors_are_refused() -> None:
    comp = four()
    s0, s1, s2, _ = comp.stmts
    s1.after(s0, "i")
    before = snapshot(comp)
    with pytest.raises(SpfError, match=r"s1.*s2.*s0|s1.*s0.*s2") as info:
        s1.after(s2, ROOT)
    assert "conflicting predecessors" in str(info.value)
    assert snapshot(comp) == before
    s1.after(s0, ROOT)  # the same pair again replaces the earlier order
    assert s1.schedule.out_vars[0] == "1"


def test_after_level_errors() -> None:
    comp = four()
    s0, s1, *_ = comp.stmts
    with pytest.raises(UndeclaredError, match="unknown loop 'x'"):
        s1.after(s0, "x")
    with pytest.raises(UndeclaredError, match="depth 2"):
        s1.after(s0, 2)
    other = four()
    with pytest.raises(UndeclaredError, match="unknown statement"):
        s1.after(other.stmt(0), 0)


# --------------------------------------------------------------------- pure, trace, JSON
def test_commands_are_pure_functions_of_the_schedule() -> None:
    old = Relation("{[i,j] -> [0,i,0,j,0]}")
    ctx = Context(states={"s": State(old)}, domain_arity={"s": 2})
    new = apply_command(Split(loop="i", factor=2, outer="a", inner="b"), "s", ctx)
    assert new["s"].schedule.out_vars == ("0", "a", "0", "b", "0", "j", "0")
    assert str(old) == "{[i, j] -> [0, i, 0, j, 0]}"
    tagged = apply_command(Parallelize(loop=1), "s", ctx)
    assert tagged["s"].tags == {"j": ("parallel",)}
    with pytest.raises(SpfError, match="positive int"):
        Tile(i="i", j="j", ti=0, tj=2, i0="a", j0="b", i1="c", j1="d")


def schedule_steps(comp: Computation) -> None:
    s0 = comp.stmt("s0")
    s0.tile("i", "j", 2, 3, "i0", "j0", "i1", "j1").parallelize("i0")
    s0.skew("i1", "j1", 1, new_j="jj").unroll("jj", 2)
    comp.stmt("s1").shift(0, -1).reverse("i").after("s0", ROOT)


def two_stmts() -> Computation:
    comp = Computation("two")
    comp.add_data_space("a", "double", shape=("N", "N"))
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(Stmt("$a$(i,j) = i + j;", "{[i,j]: 0 <= i < N && 0 <= j < N}"))
    comp.add_stmt(Stmt("$b$(i) = 1;", "{[i]: 0 <= i < N}"))
    return comp


def test_trace_as_python_and_replay() -> None:
    comp = two_stmts()
    schedule_steps(comp)
    text = trace_of(comp).as_python()
    assert text == "\n".join(
        [
            "import spf",
            'comp.stmt("s0").tile("i", "j", 2, 3, "i0", "j0", "i1", "j1")',
            'comp.stmt("s0").parallelize("i0")',
            'comp.stmt("s0").skew("i1", "j1", 1, new_j="jj")',
            'comp.stmt("s0").unroll("jj", 2)',
            'comp.stmt("s1").shift(0, -1)',
            'comp.stmt("s1").reverse("i")',
            'comp.stmt("s1").after("s0", spf.ROOT)',
        ]
    )
    fresh = two_stmts()
    exec(text.replace("spf.ROOT", "spf.schedule.ROOT"), {"comp": fresh, "spf": spf})
    assert snapshot(fresh) == snapshot(comp)
    replayed = trace_of(comp).replay(two_stmts())
    assert snapshot(replayed) == snapshot(comp)
    assert trace_of(replayed) == trace_of(comp)


def test_json_round_trip_keeps_schedules_tags_and_trace() -> None:
    comp = two_stmts()
    schedule_steps(comp)
    text = comp.to_json()
    data = json.loads(text)
    assert data["trace"][0] == {
        "stmt": "s0",
        "command": "Tile",
        "args": {
            "i": "i",
            "j": "j",
            "ti": 2,
            "tj": 3,
            "i0": "i0",
            "j0": "j0",
            "i1": "i1",
            "j1": "j1",
        },
    }
    assert data["trace"][-1]["args"] == {"other": "s0", "level": None}
    back = Computation.from_json(text)
    assert snapshot(back) == snapshot(comp)
    assert [s.schedule for s in back.stmts] == [s.schedule for s in comp.stmts]
    assert trace_of(back) == trace_of(comp)
    assert back.to_json() == text
    assert trace_of(back).replay(two_stmts()).to_json() == text


@pytest.mark.parametrize(
    "entry",
    [
        {"stmt": "s0", "command": "Explode", "args": {}},
        {"stmt": "s0", "command": "Split", "args": {"loop": "i"}},
        {
            "stmt": "s0",
            "command": "Split",
            "args": {"loop": "i", "factor": 0, "outer": "a", "inner": "b"},
        },
        {"command": "Split"},
        "Split",
    ],
)
def test_from_json_rejects_a_bad_trace(entry: Any) -> None:
    data = json.loads(kernels.dense_mv().to_json())
    data["trace"] = [entry]
    with pytest.raises(SpfError):
        Computation.from_json(json.dumps(data))


def test_trace_object() -> None:
    comp = kernels.dense_mv()
    comp.stmt(0).split("i", 2, "a", "b")
    tr = trace_of(comp)
    assert tr is trace_of(comp)
    assert len(tr) == 1
    assert tr[0].stmt == "s0"
    assert tr[0].command == Split(loop="i", factor=2, outer="a", inner="b")
    assert repr(tr) == "Trace(entries=1)"
    assert Trace.from_data(tr.to_data()) == tr
    assert After(other="s0", level=ROOT).call_text() == 'after("s0", spf.ROOT)'


def test_computation_trace_property() -> None:
    comp = kernels.dense_mv()
    comp.stmt(0).reverse(0)
    assert getattr(comp, "trace") is trace_of(comp)  # noqa: B009


def test_a_domain_iterator_name_can_name_a_new_loop() -> None:
    comp = kernels.dense_mv()
    s = comp.stmt(0).tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").split("i0", 2, "i", "q")
    assert s.loops == ("i", "q", "j0", "i1", "j1")
    assert s.schedule.in_vars == ("i_", "j")  # the input named i is renamed, not the loop
    assert s.schedule.contains(((5, 3), (0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0)))
    assert Computation.from_json(comp.to_json()).stmt(0).schedule == s.schedule


def test_after_moves_statements_of_other_arities() -> None:
    comp = kernels.sptrsv_csr()
    comp.stmt("s2").after("s0", "i")  # the division before the row's sum: runs, but illegal
    assert [str(s.schedule) for s in comp.stmts] == [
        "{[i] -> [0, i, 0]}",
        "{[i, k, j] -> [0, i, 2, k, 0, j, 0]}",
        "{[i, k] -> [0, i, 1, k, 0]}",
    ]
    with pytest.raises(spf.IllegalScheduleError, match="from s1 to s2"):
        comp.check_legality()
