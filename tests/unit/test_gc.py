"""``spf._gc.fewer_collections``: the young generation's threshold is raised inside
(reentrant), restored on the way out (errors too), and a threshold the caller set to 0, above
``YOUNG`` or changed meanwhile is left alone; ``Computation.codegen``/``compile``/``wavefront``
run inside."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

import spf.codegen
from spf._gc import YOUNG, fewer_collections
from spf.kernels import spmv_csr


@pytest.fixture(autouse=True)
def _threshold() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def test_raised_inside_nested_and_restored_after_an_error_too() -> None:
    with fewer_collections():
        assert gc.get_threshold() == (YOUNG, 10, 10)
        with fewer_collections():
            assert gc.get_threshold() == (YOUNG, 10, 10)
        assert gc.get_threshold() == (YOUNG, 10, 10)  # the outer one is still inside
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(ValueError, match="boom"), fewer_collections():
        raise ValueError("boom")
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("young", [0, YOUNG + 1])
def test_collection_off_or_a_larger_threshold_is_left_alone(young: int) -> None:
    gc.set_threshold(young, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (young, 10, 10)
    assert gc.get_threshold() == (young, 10, 10)


def test_a_threshold_changed_inside_is_kept() -> None:
    with fewer_collections():
        gc.set_threshold(500, 5, 5)
    assert gc.get_threshold() == (500, 5, 5)


def test_computation_entry_points_run_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int, int]] = []

    def codegen(*args: object, **kwargs: object) -> str:
        seen.append(gc.get_threshold())
        return "/* C */"

    monkeypatch.setattr(spf.codegen, "codegen", codegen)
    assert spmv_csr().codegen("c") == "/* C */"
    assert seen == [(YOUNG, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)


def test_einsum_and_a_sparse_outputs_group_build_run_inside(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``spf.einsum`` builds, and a sparse output's group of phases (built, generated and
    compiled by ``SparseEinsum.compile`` or on a first call, not by ``Computation.compile``)
    runs inside too."""
    import spf.index_notation as notation
    import spf.index_notation.remembered as remembered
    from spf.formats import CSR

    seen: list[tuple[int, int, int]] = []
    build = notation.build_sparse

    def build_sparse(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_threshold())
        return build(*args, **kwargs)

    def load_or_compile(*args: object, **kwargs: object) -> list[object]:
        seen.append(gc.get_threshold())
        raise LookupError("stop here")

    monkeypatch.setattr(notation, "build_sparse", build_sparse)
    monkeypatch.setattr(remembered, "load_or_compile", load_or_compile)
    comp = notation.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR)
    assert isinstance(comp, notation.SparseEinsum)
    assert gc.get_threshold() == (700, 10, 10)
    with pytest.raises(LookupError, match="stop here"):  # the group a first call takes
        comp.compile()
    assert seen == [(YOUNG, 10, 10)] * 2
    assert gc.get_threshold() == (700, 10, 10)
