"""Reduction loops: recognition, legality, the command in trace/JSON/layers, and the code the
printers make of ``parallelize(loop, reduction=...)`` (no compiler; e2e/test_reductions.py
runs the kernels)."""

from __future__ import annotations

import json

import pytest

from spf import CodegenError, Computation, IllegalScheduleError, SpfError, Stmt, kernels


def histogram() -> Computation:
    comp = Computation("histogram")
    comp.add_data_space("h", "int32_t", shape=("B",))
    comp.declare_uf("key", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < B}")
    comp.add_stmt(Stmt("$h$(key(k)) += 1;", "{[k]: 0 <= k < N}", "{[k] -> [0, k, 0]}"))
    return comp


def column_sum(source: str = "$s$(j) += $A$(i, j);") -> Computation:
    comp = Computation("colsum")
    comp.add_data_space("s", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_stmt(Stmt(source, "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j] -> [0,i,0,j,0]}"))
    return comp


def scatter_then(reader: str) -> Computation:
    """A^T x followed, inside the row loop, by a second statement ``reader``."""
    comp = kernels.spmtv_csr()
    comp.add_data_space("z", "double", shape=("N",))
    comp.add_stmt(Stmt(reader, "{[i]: 0 <= i < N}", "{[i] -> [0,i,1,0,0,0,0]}"))
    return comp


@pytest.mark.parametrize("make", [kernels.spmtv_csr, histogram, column_sum])
def test_plain_parallelize_of_a_reduction_loop_names_both_options(make: object) -> None:
    comp = make()  # type: ignore[operator]
    stmt = comp.stmts[0]
    assert not comp.is_parallel_legal(stmt, 0)
    assert comp.is_parallel_legal(stmt, 0, reduction="atomic")
    assert comp.is_parallel_legal(stmt, 0, reduction="privatize")
    stmt.parallelize(0)
    with pytest.raises(IllegalScheduleError) as err:
        comp.check_legality()
    text = str(err.value)
    assert 'reduction="atomic"' in text
    assert 'reduction="privatize"' in text
    assert f"of {stmt.name}" in text


@pytest.mark.parametrize("option", ["atomic", "privatize"])
def test_reduction_loop_is_legal_and_recorded(option: str) -> None:
    comp = kernels.spmtv_csr()
    stmt = comp.stmts[0]
    assert not comp.is_parallel_legal(stmt, "i")
    stmt.parallelize("i", reduction=option)
    comp.check_legality()
    assert comp.is_parallel_legal(stmt, "i")  # the loop's own option
    assert comp.is_parallel_legal(stmt, 0)
    assert stmt.tags == {"i": ("parallel", f"reduction({option})")}
    assert comp.loop_structure() == f"for i [parallel, reduction({option})]:\n  for k:\n    s0"
    assert f"i: parallel, reduction({option})" in str(comp.layers())
    assert f'parallelize("i", reduction="{option}")' in str(comp.trace)
    again = Computation.from_json(comp.to_json())
    assert again.stmts[0].tags == stmt.tags
    assert again.codegen("c") == comp.codegen("c")


def test_old_json_without_the_reduction_field_still_loads() -> None:
    comp = kernels.spmv_csr()
    comp.stmts[0].parallelize("i")
    data = json.loads(comp.to_json())
    text = json.dumps(data)
    assert '"reduction": null' in text
    old = Computation.from_json(text.replace(', "reduction": null', ""))
    assert old.stmts[0].tags == {"i": ("parallel",)}


def test_plain_parallelize_drops_an_earlier_reduction() -> None:
    comp = kernels.spmtv_csr()
    comp.stmts[0].parallelize("i", reduction="atomic").parallelize("i")
    assert comp.stmts[0].tags == {"i": ("parallel",)}


def test_bad_option_is_refused() -> None:
    comp = kernels.spmtv_csr()
    with pytest.raises(SpfError, match="reduction must be one of 'atomic', 'privatize'"):
        comp.stmts[0].parallelize("i", reduction="sum")
    with pytest.raises(SpfError, match="reduction must be one of"):
        comp.is_parallel_legal(comp.stmts[0], "i", reduction="sum")


def test_spelled_out_and_other_operators_are_reductions() -> None:
    for source in (
        "$s$(j) = $s$(j) + $A$(i, j);",
        "$s$(j) = $A$(i, j) + $s$(j);",
        "$s$(j) -= $A$(i, j);",
        "$s$(j) *= $A$(i, j);",
        "$s$(j) /= $A$(i, j);",
    ):
        comp = column_sum(source)
        assert comp.is_parallel_legal(comp.stmts[0], "i", reduction="atomic"), source
        comp.stmts[0].parallelize("i", reduction="atomic")
        assert "#pragma omp atomic" in comp.codegen("c"), source


def test_a_non_reduction_is_refused_even_with_reduction() -> None:
    comp = Computation("prefix")
    comp.add_data_space("y", "double", shape=("N + 1",))
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(Stmt("$y$(i + 1) = $y$(i) + $a$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    assert not comp.is_parallel_legal(comp.stmts[0], "i", reduction="atomic")
    comp.stmts[0].parallelize("i", reduction="privatize")
    with pytest.raises(IllegalScheduleError) as err:
        comp.check_legality()
    text = str(err.value)
    assert "cannot run as a reduction loop" in text
    assert "dependence on 'y' from s0 to s0 is not a reduction" in text
    assert "s0 assigns y" in text


def test_a_reader_inside_the_loop_breaks_the_reduction() -> None:
    comp = scatter_then("$z$(i) = $y$(i);")
    comp.stmts[0].parallelize("i", reduction="atomic")
    with pytest.raises(
        IllegalScheduleError,
        match=r"dependence on .y. from s0 to s1 is not a reduction: s1 reads y",
    ):
        comp.check_legality()


@pytest.mark.parametrize("option", ["atomic", "privatize"])
def test_other_data_spaces_inside_the_loop_are_fine(option: str) -> None:
    comp = scatter_then("$z$(i) = 2 * $x$(i);")
    comp.stmts[0].parallelize("i", reduction=option)
    comp.stmts[1].parallelize("i", reduction=option)
    comp.check_legality()
    src = comp.codegen("c")
    assert "s1(i);" in src  # not atomic, not redirected
    assert "spf_my_z" not in src


def test_two_operators_on_one_data_space_are_not_a_reduction() -> None:
    comp = kernels.spmtv_csr()
    comp.add_stmt(
        Stmt(
            "$y$(j) *= $A$(k);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,1,j,0]}",
        )
    )
    comp.stmts[0].parallelize("i", reduction="atomic")
    with pytest.raises(IllegalScheduleError, match="accumulates with \\+ and s1 with \\*"):
        comp.check_legality()


def test_max_is_not_a_parallel_reduction() -> None:
    comp = column_sum("$s$(j) = max($s$(j), $A$(i, j));")
    comp.stmts[0].parallelize("i", reduction="atomic")
    with pytest.raises(IllegalScheduleError, match="min/max"):
        comp.check_legality()


def test_atomic_code_and_privatized_code() -> None:
    comp = kernels.spmtv_csr()
    comp.stmts[0].parallelize("i", reduction="atomic")
    src = comp.codegen("c")
    assert "#pragma omp parallel for" in src
    assert "#pragma omp atomic\n" in src
    assert "s0_target(i, k, col_k) += s0_value(" in src
    comp = kernels.spmtv_csr()
    comp.stmts[0].parallelize("i", reduction="privatize")
    src = comp.codegen("c")
    assert "#pragma omp atomic" not in src
    assert "const size_t spf_n_y = (size_t)(M);" in src
    assert "#define y(t0) spf_my_y[t0]" in src
    assert src.count("#pragma omp for") == 2
    assert "free(spf_copies_y);" in src


def test_an_atomic_statement_must_be_one_update() -> None:
    comp = column_sum("double t = $A$(i, j); $s$(j) += t;")
    comp.stmts[0].parallelize("i", reduction="atomic")
    with pytest.raises(CodegenError, match=r'not one update.*reduction="privatize"'):
        comp.codegen("c")
    comp = column_sum("double t = $A$(i, j); $s$(j) += t;")
    comp.stmts[0].parallelize("i", reduction="privatize")
    assert "spf_my_s" in comp.codegen("c")


def test_targets_without_the_option_refuse_it() -> None:
    comp = kernels.spmtv_csr()
    comp.stmts[0].parallelize("i", reduction="privatize")
    for target in ("cuda", "mpi", "hls"):
        with pytest.raises(CodegenError, match=rf'loop i .*"privatize".*{target!r}'):
            comp.codegen(target)
    comp = kernels.spmtv_csr()
    comp.stmts[0].parallelize("i", reduction="atomic")
    with pytest.raises(CodegenError, match="on the host"):
        comp.codegen("cuda")


def test_cuda_atomic_on_gpu_loops() -> None:
    comp = kernels.spmtv_csr()
    s = comp.stmts[0]
    s.split("i", 64, "i0", "i1").gpu(("i0",), ("i1",))
    s.parallelize("i0", reduction="atomic").parallelize("i1", reduction="atomic")
    assert s.tags == {
        "i0": ("gpu_block(0)", "reduction(atomic)"),
        "i1": ("gpu_thread(0)", "reduction(atomic)"),
    }
    src = comp.codegen("cuda")
    assert "atomicAdd(&(s0_target(" in src
    with pytest.raises(CodegenError, match="on a gpu loop"):
        comp.codegen("c")
    comp = column_sum("$s$(j) *= $A$(i, j);")
    comp.stmts[0].gpu(("i",), ("j",)).parallelize("i", reduction="atomic")
    with pytest.raises(CodegenError, match="atomicAdd adds one value"):
        comp.codegen("cuda")


def test_privatize_needs_a_shape() -> None:
    comp = Computation("noshape")
    comp.add_data_space("h", "double*")
    comp.add_data_space("w", "double", shape=("N",))
    comp.declare_uf("key", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < N}")
    comp.add_stmt(Stmt("$h$(key(k)) += $w$(k);", "{[k]: 0 <= k < N}", "{[k] -> [0, k, 0]}"))
    comp.stmts[0].parallelize("k", reduction="privatize")
    with pytest.raises(CodegenError, match="'h' has no shape"):
        comp.codegen("c", check=False)
