"""The analysis takes a frozen IR (``comp.ir``, issue 29 item 2): results are keyed by the
IR's fingerprint, shared by equal computations (dependences, legality verdicts, generated
code), found for an IR that arrives without its computation, and the analysis leaves the
computation it reads as it was."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import spf
from spf import IllegalScheduleError, kernels
from spf.analysis import dependences
from spf.analysis.dependences import check_legality, compute_dependences, is_parallel_legal
from spf.analysis.index_ranges import implied_ranges
from spf.analysis.reductions import is_reduction_legal
from spf.computation.fingerprint import state_key


def _illegal() -> spf.Computation:
    comp = kernels.gauss_seidel_csr()
    comp.stmt("s0").parallelize("i")  # the row loop carries the sweep's flow dependence
    return comp


def test_an_unpickled_ir_is_analysed_alone_as_its_computation_is() -> None:
    comp = kernels.ilu0_csr()
    expected = comp.dependences()
    ir = pickle.loads(pickle.dumps(comp.ir))  # no computation comes with it
    dependences.clear_remembered()
    assert list(compute_dependences(ir)) == expected
    assert list(compute_dependences(ir, private=False)) == expected
    check_legality(ir)  # program order: legal
    assert not is_parallel_legal(ir, "s0", "i")


def test_an_illegal_ir_is_refused_naming_the_dependence() -> None:
    ir = pickle.loads(pickle.dumps(_illegal().ir))
    with pytest.raises(IllegalScheduleError, match=r"loop 'i' of s0 cannot run in parallel"):
        check_legality(ir)


def test_equal_computations_share_the_legality_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []
    real = dependences.check_legality

    def counted(ir: spf.ir.ComputationIR, **kwargs: Any) -> None:
        checked.append(ir.name)
        real(ir, **kwargs)

    monkeypatch.setattr(dependences, "check_legality", counted)
    dependences.clear_remembered()
    first = _illegal()
    with pytest.raises(IllegalScheduleError) as one:
        first.check_legality()
    with pytest.raises(IllegalScheduleError) as two:
        first.clone().check_legality()  # remembered by value: not checked again
    assert checked == ["gauss_seidel_csr"]
    assert str(two.value) == str(one.value)


def test_equal_computations_share_generated_code(monkeypatch: pytest.MonkeyPatch) -> None:
    import spf.codegen

    lowered: list[str] = []
    real = spf.codegen.lower_checked

    def counted(comp: spf.Computation, *args: Any, **kwargs: Any) -> Any:
        lowered.append(comp.name)
        return real(comp, *args, **kwargs)

    monkeypatch.setattr(spf.codegen, "lower_checked", counted)
    dependences.clear_remembered()
    comp = kernels.spmv_csr()
    text = comp.codegen("c")
    assert spf.Computation.from_ir(comp.ir).codegen("c") == text
    assert comp.clone().codegen("c", name="other") != text  # another name: generated
    assert lowered == ["spmv_csr", "spmv_csr"]
    comp.stmt("s0").parallelize("i")
    assert comp.codegen("c") != text  # a change: another IR, generated again
    assert len(lowered) == 3


def test_the_analysis_leaves_the_computation_it_reads_as_it_was() -> None:
    comp = kernels.gauss_seidel_csr()
    comp.stmt("s0").parallelize("i")
    ir = comp.ir
    before = state_key(comp)
    with pytest.raises(IllegalScheduleError):
        check_legality(ir)
    compute_dependences(ir, private=False)
    implied_ranges(ir)
    assert state_key(comp) == before
    assert comp.ir is ir  # the computation it was taken from is untouched


def test_a_computation_changed_after_its_ir_was_taken_is_not_what_the_ir_reads() -> None:
    comp = kernels.gemm()
    ir = comp.ir
    comp.stmt("s0").interchange("i", "j")  # ir stays the program order
    dependences.clear_remembered()
    deps = compute_dependences(ir)
    assert ir.parsed_stmt("s0").schedule == spf.Computation.from_ir(ir).stmt("s0").schedule
    assert all(d.carried_by == d.original_carried_by for d in deps)


def test_a_trusted_local_index_array_is_part_of_the_ir() -> None:
    def build(trusted: bool) -> spf.Computation:
        comp = spf.Computation("slots")
        comp.add_local(
            "p", "int32_t", ("N",), index=True, range="{[v]: 0 <= v < N}", trusted=trusted
        )
        return comp

    trusted, checked = build(True), build(False)
    assert trusted.ir.fingerprint != checked.ir.fingerprint  # code is remembered by it
    assert spf.Computation.from_ir(trusted.ir).data_spaces["p"].trusted


def _folded_blur(fold: int) -> spf.Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", 2)
    s1.after(s0, "j")
    s0.storage_fold("i", fold)
    return comp


def test_layout_conflicts_are_found_from_an_unpickled_ir() -> None:
    comp = _folded_blur(3)
    ir = pickle.loads(pickle.dumps(comp.ir))
    dependences.clear_remembered()
    found = compute_dependences(ir)
    assert list(found) == comp.dependences()
    assert any(d.storage for d in found)  # the fold puts rows i and i + 3 in one place
    check_legality(ir)
    too_small = pickle.loads(pickle.dumps(_folded_blur(2).ir))
    with pytest.raises(IllegalScheduleError, match=r"illegal data layout: s0 writes 'bx'"):
        check_legality(too_small)


def test_reduction_verdicts_come_from_an_unpickled_ir() -> None:
    ir = pickle.loads(pickle.dumps(kernels.spmv_csr().ir))
    assert not is_parallel_legal(ir, "s0", "k")  # y(i) += ... over k
    assert is_reduction_legal(ir, "s0", "k", "atomic")
    assert not is_reduction_legal(ir, "s0", "k")  # untagged: no reduction option
    with pytest.raises(spf.SpfError, match=r"s9"):
        is_reduction_legal(ir, "s9", "k", "atomic")
