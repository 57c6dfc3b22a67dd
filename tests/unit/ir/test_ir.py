"""The frozen IR (``spf.ir``): snapshots, round trips, fingerprints, golden text, cheap
copies and ``spf.ir.apply``."""

from __future__ import annotations

import dataclasses
import pickle
import runpy
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spf
import spf.formats as formats
from spf import kernels
from spf.computation.checkpoints import snapshots
from spf.errors import IllegalScheduleError, SpfError
from spf.ir import from_data, to_data
from spf.schedule.commands import (
    Command,
    Interchange,
    Parallelize,
    Reverse,
    Shift,
    Skew,
    Split,
    Tile,
    Unroll,
    Wavefront,
)
from spf.schedule.trace import TraceEntry

if TYPE_CHECKING:
    from spf.ir import ComputationIR

KERNELS: dict[str, Callable[[], spf.Computation]] = {
    "blur2d": kernels.blur2d,
    "dense_mv": kernels.dense_mv,
    "gauss_seidel_csr": kernels.gauss_seidel_csr,
    "gemm": kernels.gemm,
    "ilu0_csr": kernels.ilu0_csr,
    "jacobi2d": kernels.jacobi2d,
    "spmm_csr": kernels.spmm_csr,
    "spmtv_csr": kernels.spmtv_csr,
    "spmv_coo": kernels.spmv_coo,
    "spmv_csc": kernels.spmv_csc,
    "spmv_csr": kernels.spmv_csr,
    "sptrsv_csr": kernels.sptrsv_csr,
    "spmv_bcsr": lambda: kernels.spmv_bcsr(2, 3),
    "spmv_dia": lambda: kernels.spmv(formats.DIA),
    "spmv_sell": lambda: kernels.spmv(formats.SELL(4, 8)),
}


def _packed_gemm() -> spf.Computation:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.split("k", 4, "k0", "k1")
    comp.cache_read("B", at=(s, "k0"))
    s.parallelize("i")
    return comp


def _stored_blur() -> spf.Computation:
    comp = kernels.blur2d()
    bx, out = comp.stmts
    out.shift("i", 2).after(bx, "j")
    ring = comp.add_buffer("ring", (3, "M - 2"), "double", scope="stack")
    bx.store_in(ring, ["i % 3", "j"])
    ring.partition(0, 3, "complete")
    return comp


def _mpi_rows() -> spf.Computation:
    """Halo exchange: send and receive operations beside the statements."""
    path = Path(__file__).resolve().parents[2] / "e2e" / "mpi_progs" / "mpi_rows.py"
    comp: spf.Computation = runpy.run_path(str(path))["rows"]()
    return comp


def _facts_and_locals() -> spf.Computation:
    comp = spf.Computation("rows")
    comp.add_constant("SCALE", "double")
    comp.add_data_space("p", "int32_t", shape=("N + 1",))
    comp.add_data_space(
        "rowptr", "int32_t", shape=("N + 1",), index=True, monotonic="nondecreasing"
    )
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_local("t", "double", private="i")
    comp.assume("N >= 1")
    comp.add_stmt(spf.Stmt("$rowptr$(i) = $p$(i);", "{[i]: 0 <= i <= N}"))
    comp.add_stmt(
        spf.Stmt(
            "$t$ += SCALE * $A$(k);",
            "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}",
            "{[i,k] -> [1,i,0,k,0]}",
        )
    )
    comp.add_stmt(spf.Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < N}", "{[i] -> [1,i,1]}"))
    return comp


def _conversion() -> spf.Computation:
    """A format conversion: run-time index arrays declared after the input's UFs."""
    return formats.convert(formats.CSR, formats.CSC)


RICH: dict[str, Callable[[], spf.Computation]] = {
    "convert_csr_csc": _conversion,
    "packed_gemm": _packed_gemm,
    "stored_blur": _stored_blur,
    "mpi_rows": _mpi_rows,
    "facts_and_locals": _facts_and_locals,
}


@pytest.mark.parametrize("make", [*KERNELS.values(), *RICH.values()], ids=[*KERNELS, *RICH])
def test_from_ir_rebuilds_an_equal_computation(make: Callable[[], spf.Computation]) -> None:
    comp = make()
    ir = comp.ir
    again = spf.Computation.from_ir(ir)
    assert again.ir == ir
    assert again.ir.fingerprint == ir.fingerprint
    assert str(again.ir) == str(ir)
    assert again.to_json() == comp.to_json()
    assert comp.clone().ir == ir


def test_from_json_keeps_the_order_of_uf_declarations() -> None:
    comp = _conversion()
    names = list(comp.ufs)
    assert names.index("cv_ptr") > names.index("rowptr")  # declared after the input's
    again = spf.Computation.from_json(comp.to_json())
    assert list(again.ufs) == names
    assert again.to_json() == comp.to_json()


def test_ir_is_a_frozen_value_that_later_changes_leave_alone() -> None:
    comp = kernels.gemm()
    ir = comp.ir
    assert comp.ir is ir  # remembered until the computation changes
    with pytest.raises(dataclasses.FrozenInstanceError):
        ir.name = "other"  # type: ignore[misc]
    comp.stmt("s0").interchange("j", "k")
    assert ir.stmts[0].current_schedule == "{[i, j, k] -> [0, i, 0, j, 0, k, 0]}"
    assert ir.trace == ()
    changed = comp.ir
    assert changed != ir
    assert changed.fingerprint != ir.fingerprint
    assert changed.stmts[0].current_schedule == "{[i, j, k] -> [0, i, 0, k, 0, j, 0]}"
    assert changed.trace == (TraceEntry(stmt="s0", command=Interchange(i="j", j="k")),)


def test_equal_computations_have_equal_hashable_irs() -> None:
    a, b = kernels.ilu0_csr(), kernels.ilu0_csr()
    assert a.ir == b.ir
    assert a.ir is not b.ir
    assert hash(a.ir) == hash(b.ir)
    assert len({a.ir, b.ir, kernels.gemm().ir}) == 2
    assert a.ir.fingerprint == b.ir.fingerprint
    assert len(a.ir.fingerprint) == 64


def test_a_pickled_ir_is_equal_and_leaves_its_parsed_sets_behind() -> None:
    ir = _packed_gemm().ir
    ir.set_of(ir.stmts[0].domain)
    again = pickle.loads(pickle.dumps(ir))
    assert again == ir
    assert again.fingerprint == ir.fingerprint
    assert "_parsed_texts" not in vars(again)
    assert spf.Computation.from_ir(again).ir == ir


def test_ir_parses_its_sets_once_with_its_ufs() -> None:
    ir = kernels.spmv_csr().ir
    stmt = ir.stmts[0]
    assert ir.stmt(stmt.name) is stmt
    domain = ir.set_of(stmt.domain)
    assert ir.set_of(stmt.domain) is domain
    assert "rowptr" in ir.uf_decls
    assert ir.uf_decls["rowptr"].monotonic == "nondecreasing"
    assert str(ir.relation_of(stmt.current_schedule)) == stmt.current_schedule
    with pytest.raises(KeyError):
        ir.stmt("s9")


GOLDEN: dict[str, Callable[[], spf.Computation]] = {
    "gemm": kernels.gemm,
    "ilu0_csr": kernels.ilu0_csr,
    "spmv_csr": kernels.spmv_csr,
    "packed_gemm": _packed_gemm,
    "stored_blur": _stored_blur,
}


@pytest.mark.parametrize("name", GOLDEN)
def test_ir_text_matches_golden(name: str, golden: Callable[[str, str], None]) -> None:
    golden(f"ir/{name}.txt", str(GOLDEN[name]().ir))


def test_clone_is_an_independent_copy_sharing_the_frozen_parts() -> None:
    comp = _stored_blur()
    twin = comp.clone()
    assert twin.ir == comp.ir
    assert twin.stmts[0] is not comp.stmts[0]
    assert twin.stmts[0].domain is comp.stmts[0].domain  # sets are shared, not parsed again
    assert twin.buffer("ring") is not comp.buffer("ring")
    assert twin.buffer("ring").computation is twin
    twin.stmt(1).parallelize("i")
    twin.buffer("ring").partition(1, 2, "cyclic")
    assert "i" not in comp.stmt(1).tags
    assert comp.buffer("ring").partitions == twin.buffer("ring").partitions[:1]
    assert len(comp.trace) == len(twin.trace) - 1
    assert comp.clone().loop_structure() == comp.loop_structure()
    before = snapshots(comp)  # what pdfg_history replays from: the clone keeps it
    assert before
    assert {k: v for k, v in snapshots(twin).items() if k in before} == before


def test_apply_returns_the_scheduled_ir_and_leaves_the_argument() -> None:
    comp = kernels.gemm()
    ir = comp.ir
    new = spf.ir.apply(
        TraceEntry(
            stmt="s0", command=Tile(i="i", j="j", ti=4, tj=4, i0="i0", j0="j0", i1="i1", j1="j1")
        ),
        ir,
    )
    assert ir == kernels.gemm().ir
    comp.stmt("s0").tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    assert new == comp.ir
    assert spf.ir.apply(Parallelize(loop="i0"), new, stmt="s0") == spf.ir.apply(
        TraceEntry(stmt="s0", command=Parallelize(loop="i0")), new
    )


def test_apply_refuses_bad_input_with_spf_errors() -> None:
    ir = kernels.gemm().ir
    with pytest.raises(SpfError, match="name the statement"):
        spf.ir.apply(Interchange(i="i", j="j"), ir)
    with pytest.raises(SpfError, match="expected a ComputationIR"):
        spf.ir.apply(Interchange(i="i", j="j"), kernels.gemm(), stmt="s0")  # type: ignore[arg-type]
    with pytest.raises(SpfError, match="scheduling command"):
        spf.ir.apply("interchange", ir, stmt="s0")  # type: ignore[arg-type]
    entry = TraceEntry(stmt="s0", command=Interchange(i="i", j="j"))
    with pytest.raises(SpfError, match="applies to statement 's0', not 's1'"):
        spf.ir.apply(entry, ir, stmt="s1")
    with pytest.raises(SpfError, match="s9"):
        spf.ir.apply(Interchange(i="i", j="j"), ir, stmt="s9")
    with pytest.raises(SpfError, match="unknown loop 'q'"):
        spf.ir.apply(Interchange(i="i", j="q"), ir, stmt="s0")
    with pytest.raises(SpfError, match="from_ir expects"):
        spf.Computation.from_ir("{}")  # type: ignore[arg-type]


def test_apply_checks_a_wavefront_as_the_method_does() -> None:
    with pytest.raises(IllegalScheduleError, match="parallelize"):
        spf.ir.apply(Wavefront(loop="i"), kernels.dense_mv().ir, stmt="s0")


@st.composite
def _commands(draw: st.DrawFn, loops: tuple[str, ...], fresh: str) -> Command:
    """One scheduling command on the current loops; new loops are named ``fresh + 0/1``."""
    a = draw(st.sampled_from(loops))
    b = draw(st.sampled_from(loops))
    kind = draw(st.integers(0, 6))
    if kind == 0:
        return Interchange(i=a, j=b)
    if kind == 1:
        return Split(loop=a, factor=draw(st.integers(2, 4)), outer=f"{fresh}0", inner=f"{fresh}1")
    if kind == 2:
        return Parallelize(loop=a)
    if kind == 3:
        return Unroll(loop=a, factor=draw(st.integers(2, 4)))
    if kind == 4:
        return Reverse(loop=a)
    if kind == 5:
        return Shift(loop=a, amount=draw(st.integers(-2, 2)))
    return Skew(i=a, j=b, factor=draw(st.integers(1, 2)))


_BASES = {"gemm": kernels.gemm().ir, "jacobi2d": kernels.jacobi2d().ir}


@settings(max_examples=15)
@given(st.data(), st.sampled_from(sorted(_BASES)))
def test_random_command_sequences_agree_on_the_ir_and_on_the_computation(
    data: st.DataObject, base: str
) -> None:
    ir: ComputationIR = _BASES[base]
    comp = spf.Computation.from_ir(ir)
    for step in range(data.draw(st.integers(1, 4))):
        stmt = data.draw(st.sampled_from([s.name for s in ir.stmts]))
        loops = next(s for s in comp.stmts if s.name == stmt).loops
        cmd = data.draw(_commands(loops, f"n{step}_"))
        try:
            comp.stmt(stmt)._run(cmd)
        except SpfError:
            with pytest.raises(SpfError):
                spf.ir.apply(cmd, ir, stmt=stmt)
            continue
        ir = spf.ir.apply(cmd, ir, stmt=stmt)
        assert ir == comp.ir
    assert spf.Computation.from_ir(ir).ir == ir
    assert comp.clone().ir == ir


@pytest.mark.parametrize("module", ["spf.ir.model", "spf.ir.apply"])
def test_module_doctests(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


# ----------------------------------------------------------------------------- reading
def _halo() -> spf.Computation:
    comp = spf.Computation("halo")
    comp.add_data_space("a", "double", shape=(4, 8))
    comp.add_stmt(
        spf.Stmt("$a$(i,j) = 2 * $a$(i,j);", "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}")
    )
    comp.send("{[q]: 0 <= q < P - 1}", "a", [3, 0], 8, "q + 1")
    comp.receive("{[q]: 1 <= q < P}", "a", [0, 0], 8, "q - 1")
    return comp


def test_parsed_statements_read_as_the_computations_statements() -> None:
    comp = _halo()
    ir = pickle.loads(pickle.dumps(comp.ir))  # no computation comes with it
    assert [s.name for s in ir.parsed_stmts] == [s.name for s in comp.stmts]
    assert ir.schedule_width == comp.schedule_width()
    for live, read in zip(comp.stmts, ir.parsed_stmts, strict=True):
        assert read.domain.is_equal(live.domain)
        assert read.schedule.is_equal(live.schedule)
        assert read.original_schedule.is_equal(live.original_schedule)
        assert read.loops == live.loops
        assert read.tags == live.tags
        for mine, theirs in ((read.reads, live.reads), (read.writes, live.writes)):
            assert [d for d, _ in mine] == [d for d, _ in theirs]
            assert all(a.is_equal(b) for (_, a), (_, b) in zip(mine, theirs, strict=True))


def test_operation_accesses_are_part_of_the_ir() -> None:
    ir = _halo().ir
    send, receive = ir.operations
    assert ([d for d, _ in send.reads], send.writes) == (["a"], ())
    assert ([d for d, _ in receive.writes], receive.reads) == (["a"], ())
    assert '    reads: [["a", "{[q] -> ' in str(ir)  # in the text, so in the fingerprint
    assert spf.Computation.from_ir(ir).ir == ir
    assert from_data(to_data(ir), trace=ir.trace, params=ir.params) == ir


def test_an_unknown_parsed_statement_names_the_statements() -> None:
    with pytest.raises(SpfError, match=r"s9.*s0"):
        spf.kernels.gemm().ir.parsed_stmt("s9")


def test_assumptions_read_as_facts() -> None:
    comp = spf.kernels.gemm()
    comp.assume("N >= 4")
    assert [f.text for f in comp.ir.facts] == [f.text for f in comp.assumptions]
