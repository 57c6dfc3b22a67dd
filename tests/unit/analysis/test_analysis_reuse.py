"""The dependence analysis is done once (issue 28): the legality check after ``wavefront`` and
the kernels ``compile()`` generates reuse the dependences the inspector was built from, the
work is remembered by value (an equal computation built again reuses it), and a computation
that runs in program order without parallel tags needs no dependence to be checked."""

from __future__ import annotations

import pytest

from spf import IllegalScheduleError, kernels
from spf.analysis import dependences


@pytest.fixture
def pair_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statement pairs whose dependences get computed (source->sink), from now on."""
    seen: list[str] = []
    real = dependences._pair_relations

    def counted(comp, src, snk, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(f"{comp.name}:{src.name}->{snk.name}")
        return real(comp, src, snk, *args, **kwargs)

    monkeypatch.setattr(dependences, "_pair_relations", counted)
    return seen


def test_compiling_a_wavefront_reuses_the_dependences_it_was_built_from(
    pair_analyses: list[str],
) -> None:
    dependences.clear_remembered()
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    analysed = list(pair_analyses)
    assert analysed  # the inspector needed them
    comp.check_legality()
    comp.codegen("c")  # the executor, in program order, and the legality check
    assert pair_analyses == analysed


def test_an_equal_computation_built_again_reuses_the_analysis(pair_analyses: list[str]) -> None:
    dependences.clear_remembered()
    first = kernels.gauss_seidel_csr().dependences()
    count = len(pair_analyses)
    assert count
    assert kernels.gauss_seidel_csr().dependences() == first
    assert len(pair_analyses) == count


def test_codegen_in_program_order_computes_no_dependence(pair_analyses: list[str]) -> None:
    dependences.clear_remembered()
    kernels.ilu0_csr().codegen("c")
    assert pair_analyses == []


def test_a_parallel_tag_is_still_checked_against_the_dependences(
    pair_analyses: list[str],
) -> None:
    comp = kernels.sptrsv_csr()
    comp.stmt("s1").parallelize("i")
    with pytest.raises(IllegalScheduleError, match="cannot run in parallel"):
        comp.check_legality()


def test_a_tag_that_only_says_how_a_loop_runs_keeps_the_dependences() -> None:
    comp = kernels.dense_mv()
    before = comp.dependences()
    comp.stmt("s0").unroll("j", 4)
    assert comp.dependences() == before
