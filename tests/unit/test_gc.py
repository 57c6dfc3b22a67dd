"""``spf._gc.fewer_collections``: the young generation's threshold is raised inside
(reentrant), restored on the way out (errors too), and a threshold the caller set to 0, above
``YOUNG`` or changed meanwhile is left alone; the young and middle generations are collected
on the way out where young passes ran inside, and only there;
``Computation.codegen``/``compile``/``wavefront`` run inside."""

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


def _passes(body: Any) -> list[int]:
    """The generations of the collections that ran while ``body()`` ran."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(int(info["generation"]))

    gc.callbacks.append(note)
    try:
        body()
    finally:
        gc.callbacks.remove(note)
    return seen


def test_the_middle_generation_is_collected_on_the_way_out_after_young_passes() -> None:
    """Young passes inside moved their survivors into the middle generation: the last exit
    walks them there (``gc.collect(1)``), not the tenth young pass after it, inside
    whatever call the caller makes next; the counts start again from zero."""
    gc.collect()
    kept: list[list[int]] = []

    def allocate() -> None:
        with fewer_collections(), fewer_collections():
            kept.extend([k] for k in range(3 * YOUNG))  # alive: survivors of young passes

    seen = _passes(allocate)
    assert seen.count(0) >= 2  # young passes at YOUNG inside
    assert seen[-1] == 1  # then the exit's own pass: young and middle generations
    assert gc.get_count()[1] == 0
    assert len(kept) == 3 * YOUNG


def test_nothing_is_collected_on_the_way_out_without_young_passes_inside() -> None:
    """A short call (a warm compile) allocates fewer than ``YOUNG`` objects: no pass ran
    inside, and the exit starts no middle one (only the young pass the restored threshold
    starts at the next allocation, as without spf)."""
    gc.collect()

    def small() -> None:
        with fewer_collections():
            keep = [[k] for k in range(YOUNG // 4)]
            assert len(keep) == YOUNG // 4

    assert set(_passes(small)) <= {0}


def test_collection_turned_off_stays_off_and_collects_nothing() -> None:
    gc.collect()
    gc.disable()
    try:

        def allocate() -> None:
            with fewer_collections():
                keep = [[k] for k in range(3 * YOUNG)]
                assert len(keep) == 3 * YOUNG

        assert _passes(allocate) == []
        assert not gc.isenabled()
    finally:
        gc.enable()


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
