"""``comp.wavefront(loop, method)`` / ``stmt.wavefront`` (API.md section 11): a scheduling
command recorded in the trace, kept in JSON and shown in the layers, and refused with a clear
spf error when the loop carries no dependence or one the inspector cannot order."""

from __future__ import annotations

import re

import pytest

import spf
from spf import Computation, IllegalScheduleError, SpfError, Stmt, UndeclaredError, kernels
from spf.analysis.inspector import analyze_wavefront


def sptrsv_without_triangularity() -> Computation:
    """SpTRSV as ``kernels.sptrsv_csr`` builds it, without its triangular assumption."""
    comp = Computation("sptrsv_free")
    comp.add_data_space("u", "double", shape=("N",))
    comp.add_data_space("L", "double", shape=("NNZ",))
    comp.add_data_space("f", "double", shape=("N",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}")
    for stmt in kernels.sptrsv_csr().stmts:
        comp.add_stmt(Stmt(stmt.source, str(stmt.domain), str(stmt.schedule)))
    return comp


def test_tags_every_statement_of_the_loop_and_records_the_command() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    assert all(s.tags == {"i": ("wavefront(auto)",)} for s in comp.stmts)
    assert [e.as_python() for e in comp.trace.entries] == [
        f'comp.stmt("s{k}").wavefront("i", method="auto")' for k in range(3)
    ]
    # printed as the one call that recorded them: stmt("s0").wavefront("i") alone is
    # refused (s1 and s2 share the loop), so the per-statement lines did not run
    assert str(comp.trace).splitlines() == ['comp.wavefront("i", method="auto")']
    fresh = kernels.sptrsv_csr()
    exec(str(comp.trace), {"comp": fresh})
    assert [s.tags for s in fresh.stmts] == [s.tags for s in comp.stmts]
    assert "[i: wavefront(auto)]" in str(comp.layers())
    comp.check_legality()


def test_layers_show_the_inspector() -> None:
    comp = kernels.sptrsv_csr()
    assert "Run-time inspection" not in str(comp.layers())
    comp.wavefront("i", method="levels")
    text = str(comp.layers())
    assert "Run-time inspection:\n  loop i (wavefront, method='levels'): inspector " in text
    assert ": level(ip) = max(level(ip), level(j) + 1);" in text
    assert "i = order_i(i_pos)" in text
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    text = str(comp.layers())
    assert "loop i (wavefront, method='auto'): inspector sptrsv_csr_coarse_inspector_i" in text
    # runs: the crossing edges' coarse levels masked, not selected (no store-forwarding
    # stall in the pass gcc builds: spf.analysis.coarse_inspector._crossing)
    assert "clev_run() = max(clev_run(), (clev(j) + 1) & -(j < block_run()));" in text
    assert "clev_new_run() = max(clev_new_run(), clev(j) + 1);" in text
    assert "clev_run() = near_run() ? max(clev_new_run() - 1, clev_run()) : clev_new_run();" in text
    assert "coarse_segment() = near_run() ? coarse_segment() : ip;" in text
    assert ": clev(ip) = clev_run();" in text
    assert "partptr_i(i_part) <= i_pos < partptr_i(i_part + 1)" in text


def test_the_coarse_pass_keeps_a_rows_levels_in_locals_stored_once() -> None:
    """Without push edges the pass updates each row's level, coarse level and work in
    locals private to the row loop and stores them once after the row's edges: the edges
    read only earlier rows' entries, and gcc cannot keep ``level[i]`` in a register across
    reads of ``level[col[k]]``. The generated C declares the locals inside the row loop.
    What a row stored, it also keeps in locals carried to the next row (declared before the
    row loop), which an edge from the row before reads instead of the arrays: no wait on a
    store-to-load forward from row to row."""
    from spf.analysis.executor import inspectors
    from spf.codegen import codegen

    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    ((_, insp),) = inspectors(comp.ir)
    private = {d.name: d.private for d in insp.data_spaces if d.private is not None}
    assert private == {
        "level_run": "ip",
        "clev_run": "ip",
        "work_run": "ip",
        "clev_new_run": "ip",
        "near_run": "ip",
        "block_run": "ip",
    }
    writes = [s.source for s in insp.stmts if s.source.startswith(("$level$", "$clev$"))]
    assert writes == ["$level$(ip) = $level_run$;", "$clev$(ip) = $clev_run$;"]
    carried = [s.source for s in insp.stmts if s.source.startswith(("$level_prev$", "$clev_prev$"))]
    assert carried == ["$level_prev$ = $level_run$;", "$clev_prev$ = $clev_run$;"]
    code = codegen(insp, check=False)

    def macro(body: str) -> str:  # the statement whose macro is ``body``
        found = re.search(rf"#define (s\d+)\(ip(?:, k, j)?\) {re.escape(body)}\n", code)
        assert found is not None, body
        return found[1]

    loop = code.index("for (int64_t ip = 0; ip < N; ip++)")
    assert code.index("int32_t level_prev[1] = {0};") < loop
    from_prev = macro("level_run() = spf_max(level_run(), level_prev() + 1)")
    near = macro("near_run() = 1")  # the edge from the row before says so itself
    assert "near_run() == (ip)" not in code
    assert (
        loop
        < code.index("int32_t level_run[1] = {0};")
        < code.index("if (ip >= col_k + 2)")  # an edge from before the row before: the arrays
        < code.index("s1(ip, k, col_k);")  # the first edge statement (s0: the block start)
        < code.index("if (ip == col_k + 1)")  # an edge from the row before: the locals
        < code.index(f"{from_prev}(ip, k, -1 + ip);")
        < code.index(f"{near}(ip, k, -1 + ip);")
        < code.index(f"{macro('level(ip) = level_run()')}(ip);")  # stored after the edges
        < code.index(f"{macro('level_prev() = level_run()')}(ip);")  # kept for the next row
    )


def test_json_round_trip_and_replay() -> None:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="p2p")
    back = Computation.from_json(comp.to_json())
    assert [s.tags for s in back.stmts] == [s.tags for s in comp.stmts]
    fresh = comp.trace.replay(kernels.sptrsv_csr())
    assert fresh.stmt("s1").tags == {"i": ("wavefront(p2p)",)}


def test_stmt_form_on_a_statement_alone_in_its_loop() -> None:
    """Distributed into its own loop, ``s1`` carries its own flow dependence only; the
    inspector's range of ``i`` drops the UF conditions of s1's rows (``0 <= i < N``)."""
    comp = kernels.sptrsv_csr()
    comp.stmt("s1").after(comp.stmt("s0"), spf.ROOT)
    comp.stmt("s2").after(comp.stmt("s1"), spf.ROOT)
    comp.stmt("s1").wavefront("i")
    assert [s.tags for s in comp.stmts] == [{}, {"i": ("wavefront(auto)",)}, {}]
    assert 'comp.stmt("s1").wavefront("i", method="auto")' in str(comp.trace)
    assert "0 <= i && i < N" in str(comp.inspector("i").stmt("s0").domain)


def test_stmt_form_by_depth() -> None:
    comp = kernels.sptrsv_csr()
    with pytest.raises(IllegalScheduleError, match="not part of the wavefront"):
        comp.stmt("s1").wavefront(0)
    assert comp.stmt("s1").tags == {}


def test_unknown_loop() -> None:
    with pytest.raises(UndeclaredError, match=r"unknown loop 'q'.*wavefront"):
        kernels.sptrsv_csr().wavefront("q")


def test_unknown_method() -> None:
    with pytest.raises(SpfError, match=r"unknown method 'bfs' for loop 'i'.*'levels', 'p2p'"):
        kernels.sptrsv_csr().wavefront("i", method="bfs")


def test_loop_without_carried_dependence_says_parallelize() -> None:
    comp = kernels.spmv_csr()
    with pytest.raises(IllegalScheduleError, match="loop 'i' carries no dependence: parallelize"):
        comp.wavefront("i")
    assert comp.stmts[0].tags == {}
    assert len(comp.trace) == 0


def test_inner_loop_is_refused() -> None:
    with pytest.raises(IllegalScheduleError, match="loop 'k' of statement s1 lies inside loop 'i'"):
        kernels.sptrsv_csr().wavefront("k")


def test_without_triangularity_the_anti_dependence_is_pushed() -> None:
    """Without triangularity row ``i`` may read ``u(col(k))`` that a later row writes: that
    anti dependence's source row is not a function of the sink's iteration, but its sink is
    one of the source's (push form), accepted by both methods."""
    comp = sptrsv_without_triangularity()
    comp.wavefront("i")
    edges = analyze_wavefront(comp.ir, [s.name for s in comp.stmts], "i").edges
    assert [(e.stmt, e.push) for e in edges] == [("s1", False), ("s1", True)]
    other = sptrsv_without_triangularity()
    other.wavefront("i", method="p2p")
    assert "pending_i" in other.codegen()


def test_dependence_neither_pulled_nor_pushed_names_the_dependence() -> None:
    """A scatter (``y(col(k)) += ...``): neither end's row is a function of the other's."""
    comp = kernels.spmtv_csr()
    with pytest.raises(IllegalScheduleError) as info:
        comp.wavefront("i")
    msg = str(info.value)
    assert "dependence on 'y' from s0 to s0" in msg
    assert "neither is the source iteration of loop 'i' a function of the sink's" in msg
    assert "comp.assume(" in msg
    assert all(s.tags == {} for s in comp.stmts)


def test_with_the_assumption_declared_it_is_accepted() -> None:
    comp = sptrsv_without_triangularity()
    comp.assume(kernels.TRIANGULAR)
    comp.wavefront("i")
    assert comp.stmt("s1").tags == {"i": ("wavefront(auto)",)}


def test_wavefront_and_parallel_on_one_loop_conflict() -> None:
    comp = kernels.sptrsv_csr()
    comp.stmt("s0").parallelize("i")
    with pytest.raises(SpfError, match="loop 'i' of statement s0 would carry the tags"):
        comp.wavefront("i")


def test_inspector_before_wavefront() -> None:
    with pytest.raises(SpfError, match=r"call comp.wavefront\('i'\) first"):
        kernels.sptrsv_csr().inspector("i")


def test_stmt_form_refuses_a_loop_shared_with_an_independent_statement() -> None:
    """``y(i) = 2 f(i)`` shares loop ``i`` with ``x(i) = x(p(i)) + 1`` but no dependence with
    it: left out of the wavefront it would run in the old order while the loop is
    reordered."""
    comp = Computation("chain")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("f", "double", shape=("N",))
    comp.declare_uf("p", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < N}")
    comp.assume("forall i: 0 <= i < N => p(i) < i")
    comp.add_stmt(Stmt("$x$(i) = $x$(p(i)) + 1.0;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    comp.add_stmt(Stmt("$y$(i) = 2.0 * $f$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 1]}"))
    with pytest.raises(IllegalScheduleError, match="statement s1 shares loop 'i'"):
        comp.stmt("s0").wavefront("i")
    comp.wavefront("i")
    assert comp.stmt("s1").tags == {"i": ("wavefront(auto)",)}
    assert "$level$(ip) = max($level$(ip), $level$(_wsrc) + 1);" in str(comp.inspector("i"))


def test_pdfg_shows_the_inspector() -> None:
    comp = kernels.sptrsv_csr()
    assert not any("inspector" in n for n in comp.pdfg().graph.nodes)
    comp.wavefront("i")
    g = comp.pdfg().graph
    name = "sptrsv_csr_inspector_i"
    assert g.nodes[f"{name}.s1"]["kind"] == "stmt"
    assert g.nodes[f"{name}.level"]["kind"] == "data"
    assert g.has_edge(f"{name}.s1", f"{name}.level")
    assert all(g.edges[f"{name}.level", s]["kind"] == "schedule" for s in ("s0", "s1", "s2"))
    assert f'"{name}.s1"' in comp.pdfg().to_dot()
