"""The PDFG at every step (API.md §14, spf/pdfg/history.py): ``comp.pdfg_history()`` has one
graph per command plus the initial one, and each is the graph the computation had at that
step (checked against the computation built and scheduled one command at a time)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

import spf
from spf import kernels
from spf.pdfg.history import PDFGHistory

if TYPE_CHECKING:
    from pathlib import Path

Action = Callable[[spf.Computation], object]


def dots_while_scheduling(
    make: Callable[[], spf.Computation], actions: list[Action]
) -> tuple[spf.Computation, list[str]]:
    """The computation after ``actions``, and its DOT text before and after each one."""
    comp = make()
    dots = [comp.to_dot()]
    for act in actions:
        act(comp)
        dots.append(comp.to_dot())
    return comp, dots


def producer_consumer() -> spf.Computation:
    comp = spf.Computation("pc")
    for name in ("a", "b", "x"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$b$(i) = $a$(i) + 1;", "{[i]: 0 <= i < N}"))
    return comp


def three_loops() -> spf.Computation:
    comp = spf.Computation("three")
    for name in ("a", "b", "c"):
        comp.add_data_space(name, "double", shape=("N",))
        comp.add_stmt(spf.Stmt(f"${name}$(i) = 1.0;", "{[i]: 0 <= i < N}"))
    return comp


SCHEDULES: dict[str, tuple[Callable[[], spf.Computation], list[Action]]] = {
    "blur tiled, bx computed at the tiles": (
        kernels.blur2d,
        [
            lambda c: c.stmt("s1").tile("i", "j", 16, 32, "i0", "j0", "i1", "j1"),
            lambda c: c.stmt("s0").compute_at("s1", "j0"),
        ],
    ),
    "blur inlined, parallel, vectorized": (
        kernels.blur2d,
        [
            lambda c: c.stmt("s0").inline(),
            lambda c: c.stmt("s1").parallelize("i"),
            lambda c: c.stmt("s1").vectorize("j", 8),
        ],
    ),
    "blur shifted and fused": (
        kernels.blur2d,
        [lambda c: c.stmt("s1").shift("i", 2), lambda c: c.stmt("s1").after("s0", "i")],
    ),
    "PDFG inline": (kernels.blur2d, [lambda c: c.pdfg().inline("bx")]),
    "PDFG fuse": (producer_consumer, [lambda c: c.pdfg().fuse("s0", "s1", "i")]),
    "PDFG reschedule, then fuse": (
        three_loops,
        [lambda c: c.reschedule("s2", "s0"), lambda c: c.fuse("s0", "s1", 1)],
    ),
    "forward solve, wavefront": (kernels.sptrsv_csr, [lambda c: c.wavefront("i")]),
    "gemm interchanged, tiled, parallel": (
        kernels.gemm,
        [
            lambda c: c.stmt("s0").interchange("j", "k"),
            lambda c: c.stmt("s0").tile("i", "k", 32, 32, "i0", "k0", "i1", "k1"),
            lambda c: c.stmt("s0").parallelize("i0"),
        ],
    ),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_each_step_is_the_graph_the_computation_had(name: str) -> None:
    make, actions = SCHEDULES[name]
    comp, dots = dots_while_scheduling(make, actions)
    history = comp.pdfg_history()
    assert isinstance(history, PDFGHistory)
    assert len(history) == len(comp.trace) + 1
    assert history[0][0] == "initial"
    assert history[0][1].to_dot() == make().to_dot()
    assert [text for text, _ in history[1:]] == [e.as_python() for e in comp.trace]
    # one command per action, except comp.wavefront (one per statement: shown together)
    if len(comp.trace) == len(actions):
        assert [g.to_dot() for _, g in history] == dots
    assert history[-1][1].to_dot() == dots[-1]


def test_steps_are_independent_copies() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)
    comp.stmt("s1").after("s0", "i")
    history = comp.pdfg_history()
    first, last = history[0][1].computation, history[-1][1].computation
    assert first is not comp
    assert last is not comp
    assert first is not last
    assert first.loop_structure() == kernels.blur2d().loop_structure()
    assert last.loop_structure() == comp.loop_structure()
    assert comp.pdfg_history()[-1][1].to_dot() == comp.to_dot()  # asking twice changes nothing


def test_refused_commands_are_not_steps() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").parallelize("i")
    with pytest.raises(spf.IllegalScheduleError):
        comp.pdfg().fuse("s0", "s1", "i")  # out(i) reads bx(i+2): refused, nothing changes
    with pytest.raises(spf.SpfError):
        comp.stmt("s0").tile("i", "nope", 4, 4, "a", "b", "c", "d")
    with pytest.raises(spf.SpfError):
        comp.pdfg().inline("out")  # nothing reads it
    comp.stmt("s0").parallelize("i")
    history = comp.pdfg_history()
    assert [text for text, _ in history] == [
        "initial",
        'comp.stmt("s1").parallelize("i")',
        'comp.stmt("s0").parallelize("i")',
    ]
    want = kernels.blur2d()
    want.stmt("s1").parallelize("i")
    assert history[1][1].to_dot() == want.to_dot()
    assert history[2][1].to_dot() == comp.to_dot()


def test_declarations_between_commands_show_in_the_next_step() -> None:
    comp = spf.Computation("grow")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = i;", "{[i]: 0 <= i < N}"))
    comp.stmt("s0").reverse("i")
    after_reverse = comp.to_dot()
    comp.add_data_space("b", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$b$(i) = $a$(i);", "{[i]: 0 <= i < N}"))
    with_s1 = comp.to_dot()
    comp.stmt("s1").after("s0", spf.ROOT)
    comp.stmt("s1").parallelize("i")
    comp.add_data_space("c", "double", shape=("N",))  # after the last command
    history = comp.pdfg_history()
    assert len(history) == 4
    assert history[1][1].to_dot() != after_reverse  # s1 was declared before the next command
    assert history[1][1].to_dot() == with_s1
    assert history[-1][1].to_dot() == comp.to_dot()  # the last step is the computation now


def test_layer_three_commands_with_a_buffer_declared_between_them() -> None:
    comp = spf.Computation("two_stage")
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    for name in ("a", "t", "b"):
        comp.add_data_space(name, "double", shape=("N", "M"))
    comp.add_stmt(spf.Stmt("$t$(i,j) = 2 * $a$(i,j);", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$b$(i,j) = $t$(i,j) + $t$(i-1,j);",
            "{[i,j]: 1 <= i < N && 0 <= j < M}",
            "{[i,j]->[0,i,1,j,0]}",
        )
    )
    comp.stmt("s1").parallelize("j")
    buf = comp.add_buffer("rows", (2, "M"), "double", scope="local")
    dots = [comp.to_dot()]  # step 1 shows the buffer declared after its command
    comp.stmt("s0").store_in(buf, ["i % 2", "j"])
    dots.append(comp.to_dot())
    buf.allocate_at("s0", "i")
    dots.append(comp.to_dot())
    history = comp.pdfg_history()
    assert [text for text, _ in history][2:] == [e.as_python() for e in comp.trace][1:]
    assert history.file_names()[2:] == ["02-store_in.svg", "03-allocate_at.svg"]
    assert [g.to_dot() for _, g in history][1:] == dots
    assert "rows" in history[2][1].graph


def test_a_computation_loaded_with_a_trace_replays_from_its_original_schedules() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2).after("s0", "i")
    loaded = spf.Computation.from_json(comp.to_json())
    got = [g.to_dot() for _, g in loaded.pdfg_history()]
    assert got == [g.to_dot() for _, g in comp.pdfg_history()]


def test_a_loaded_trace_that_changed_statements_is_a_clear_error() -> None:
    comp = kernels.blur2d()
    comp.stmt("s0").inline()
    loaded = spf.Computation.from_json(comp.to_json())
    with pytest.raises(spf.SpfError, match=r'stmt\("s0"\)\.inline\(\) changes more than'):
        loaded.pdfg_history()


def test_no_command_is_one_step() -> None:
    comp = kernels.gemm()
    history = comp.pdfg_history()
    assert [text for text, _ in history] == ["initial"]
    assert history[0][1].to_dot() == comp.to_dot()
    assert history.file_names() == ["00-initial.svg"]


def test_file_names_number_the_steps_and_name_the_command() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    comp.stmt("s0").compute_at("s1", "j0")
    assert comp.pdfg_history().file_names() == [
        "00-initial.svg",
        "01-tile.svg",
        "02-compute_at.svg",
    ]
    comp = three_loops()
    for _ in range(110):
        comp.stmt("s0").reverse("i")
    names = comp.pdfg_history().file_names()
    assert names[0] == "000-initial.svg"
    assert names[-1] == "110-reverse.svg"


def test_pdfg_inline_is_recorded_and_replays() -> None:
    comp = kernels.blur2d()
    assert comp.pdfg().inline("bx") == ["s1"]
    assert comp.trace.as_python() == 'comp.stmt("s0").inline()'
    replayed = comp.trace.replay(kernels.blur2d())
    assert replayed.to_dot() == comp.to_dot()


def test_pdfg_inline_of_a_temporary_nothing_reads_is_refused() -> None:
    """Regression: the PDFG operation dropped the producer (and what it computes) silently."""
    comp = spf.Computation("unread")
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = i;", "{[i]: 0 <= i < N}"))
    with pytest.raises(spf.SpfError, match="nothing reads it"):
        comp.pdfg().inline("t")
    assert [s.name for s in comp.stmts] == ["s0"]
    assert len(comp.trace) == 0


@pytest.mark.requires_graphviz
def test_repr_html_shows_one_svg_per_step_with_the_command_under_it() -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)
    comp.stmt("s1").after("s0", "i")
    html = comp.pdfg_history()._repr_html_()
    assert html.count("<svg") == 3
    assert "<?xml" not in html
    assert "<!DOCTYPE" not in html
    assert "overflow-x:auto" in html
    captions = [html.index(t) for t in ("0. initial", "1. comp.stmt(&quot;s1&quot;).shift")]
    assert captions == sorted(captions)
    assert html.index("2. comp.stmt(&quot;s1&quot;).after") > html.rindex("<svg")


def test_repr_html_without_graphviz_is_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import spf.pdfg.pdfg

    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)
    history = comp.pdfg_history()
    monkeypatch.setattr(spf.pdfg.pdfg.shutil, "which", lambda _name: None)
    html = history._repr_html_()
    assert "Graphviz&#x27;s &#x27;dot&#x27; is not installed" in html
    assert "<svg" not in html
    assert "comp.stmt(&quot;s1&quot;).shift(&quot;i&quot;, 2)" in html
    with pytest.raises(spf.SpfError, match="Graphviz's 'dot' is not installed"):
        history.render("steps")


@pytest.mark.requires_graphviz
def test_render_writes_each_step_and_an_index(tmp_path: Path) -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    history = comp.pdfg_history()
    written = history.render(tmp_path / "new" / "steps")
    folder = tmp_path / "new" / "steps"
    assert [p.name for p in written] == ["00-initial.svg", "01-tile.svg", "index.html"]
    assert all(b"<svg" in (folder / n).read_bytes() for n in history.file_names())
    index = (folder / "index.html").read_text()
    assert index.index('src="00-initial.svg"') < index.index('src="01-tile.svg"')
    assert "1. comp.stmt(&quot;s1&quot;).tile(" in index


@pytest.mark.requires_graphviz
def test_render_again_removes_the_steps_of_the_previous_render(tmp_path: Path) -> None:
    """``spf dot --steps DIR`` twice: the second trace's steps only (01-tile.svg of the
    first stayed, a graph of another schedule next to the new ones); other files stay."""
    comp = kernels.blur2d()
    comp.stmt("s1").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    comp.pdfg_history().render(tmp_path)
    (tmp_path / "07-mine.svg").write_text("<svg/>")  # not in the previous index: kept
    (tmp_path / "notes.txt").write_text("mine")
    written = kernels.blur2d().pdfg_history().render(tmp_path)
    assert [p.name for p in written] == ["00-initial.svg", "index.html"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00-initial.svg",
        "07-mine.svg",
        "index.html",
        "notes.txt",
    ]


def test_render_into_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.write_text("x")
    with pytest.raises(spf.SpfError, match="is a file; give a directory"):
        kernels.gemm().pdfg_history().render(target)
    with pytest.raises(spf.SpfError, match="expected a directory path"):
        kernels.gemm().pdfg_history().render(3)  # type: ignore[arg-type]


def test_module_doctests() -> None:
    import doctest

    import spf.pdfg.history

    result = doctest.testmod(spf.pdfg.history, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# --------------------------------------------------------------------------------- params
def test_params_price_every_step_as_pdfg_does() -> None:
    comp = kernels.blur2d()
    params = {"N": 1080, "M": 1920}
    dots = [comp.pdfg(params=params).to_dot()]
    comp.stmt("s1").shift("i", 2)
    dots.append(comp.pdfg(params=params).to_dot())
    comp.stmt("s1").after("s0", "i")
    dots.append(comp.pdfg(params=params).to_dot())
    history = comp.pdfg_history(params=params)
    assert [g.to_dot() for _, g in history] == dots
    for _, graph in history:
        assert graph.params == params
        assert graph.graph.nodes["bx"]["bytes"] == 1080 * 1918 * 8
    assert history[0][1].graph.nodes["bx"]["removable_by"] == ("inline('bx')",)
    assert "bytes" not in comp.pdfg_history()[0][1].graph.nodes["bx"]  # no params: no sizes


def test_a_parameter_declared_after_a_command_prices_only_the_steps_that_have_it() -> None:
    comp = spf.Computation("grow")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = i;", "{[i]: 0 <= i < N}"))
    comp.stmt("s0").reverse("i")
    comp.add_data_space("b", "double", shape=("K",))
    comp.add_stmt(spf.Stmt("$b$(k) = 1.0;", "{[k]: 0 <= k < K}"))
    comp.stmt("s1").parallelize("k")
    history = comp.pdfg_history(params={"N": 10, "K": 4})
    assert history[0][1].params == {"N": 10}  # the initial state has no K yet
    assert history[-1][1].params == {"N": 10, "K": 4}
    assert history[-1][1].graph.nodes["b"]["bytes"] == 32


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"K": 3}, spf.UndeclaredError, r"unknown parameter 'K'; known parameters: 'M', 'N'"),
        ({"N": 2.5}, spf.ArgumentError, r"pdfg_history\(params=...\): the value of 'N' must"),
        ([("N", 3)], spf.ArgumentError, r"pdfg_history\(params=...\) takes a dict"),
    ],
)
def test_bad_params_are_refused_before_any_graph_is_drawn(
    params: object, error: type[spf.SpfError], message: str
) -> None:
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2)
    before = comp.to_json()
    with pytest.raises(error, match=message):
        comp.pdfg_history(params=params)  # type: ignore[arg-type]
    assert comp.to_json() == before
