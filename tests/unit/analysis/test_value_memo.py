"""Analysis results remembered by the computation's value (``spf.analysis.memo``): equal
computations share them, a change or other declarations do not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import spf
from spf import kernels
from spf.analysis import dependences


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the computations whose dependences were computed (not remembered)."""
    seen: list[str] = []
    real = dependences._compute

    def counted(ir: spf.ir.ComputationIR, private: bool) -> Any:
        seen.append(ir.name)
        return real(ir, private)

    monkeypatch.setattr(dependences, "_compute", counted)
    dependences.clear_remembered()
    return seen


@pytest.mark.parametrize(
    "copy",
    [
        lambda c: c.clone(),
        lambda c: spf.Computation.from_ir(c.ir),
        lambda c: spf.Computation.from_json(c.to_json()),
    ],
    ids=["clone", "from_ir", "from_json"],
)
def test_an_equal_computation_shares_the_dependences(
    analyses: list[str], copy: Callable[[spf.Computation], spf.Computation]
) -> None:
    comp = kernels.gauss_seidel_csr()
    first = comp.dependences()
    assert analyses == ["gauss_seidel_csr"]
    twin = copy(comp)
    assert twin.dependences() == first
    assert analyses == ["gauss_seidel_csr"]  # remembered by value


def test_a_change_to_a_copy_is_analysed_and_leaves_the_original_remembered(
    analyses: list[str],
) -> None:
    comp = kernels.gemm()
    before = comp.dependences()
    twin = comp.clone()
    twin.stmt("s0").interchange("j", "k")
    twin.dependences()
    assert len(analyses) == 2
    assert comp.dependences() == before
    assert len(analyses) == 2
    dependences.clear_remembered()
    assert comp.dependences() == before
    assert len(analyses) == 3


def test_computations_that_differ_only_in_a_fact_do_not_share(analyses: list[str]) -> None:
    def build(injective: bool) -> spf.Computation:
        comp = spf.Computation("gather")
        comp.add_data_space("x", "double", shape=("N",))
        comp.add_stmt(spf.Stmt("$x$(f(i)) = $x$(f(i)) + 1.0;", "{[i]: 0 <= i < N}"))
        if injective:
            comp.assume("forall a, b: f(a) = f(b) => a = b")
        return comp

    plain, injective = build(False), build(True)
    assert plain.ir.fingerprint != injective.ir.fingerprint
    assert len(injective.dependences()) < len(plain.dependences())
    assert analyses == ["gather", "gather"]
    assert injective.ir.fingerprint == build(True).ir.fingerprint
