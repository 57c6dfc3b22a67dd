"""Copies of a computation (``copy.copy``, ``copy.deepcopy``, ``pickle``) are independent of
it and equal to it, the trace of its scheduling commands included; a compiled kernel refuses
to be pickled with an spf error that says what to send instead."""

from __future__ import annotations

import copy
import pickle

import pytest

import spf


def _scheduled() -> spf.Computation:
    comp = spf.kernels.gemm()
    comp.stmts[0].interchange("i", "j")
    return comp


@pytest.mark.parametrize(
    "make",
    [copy.deepcopy, lambda c: pickle.loads(pickle.dumps(c)), copy.copy],
    ids=["deepcopy", "pickle", "copy"],
)
def test_copy_keeps_the_trace_and_equals_the_original(make: object) -> None:
    comp = _scheduled()
    other = make(comp)  # type: ignore[operator]
    assert len(other.trace) == len(comp.trace) == 1
    assert other.ir == comp.ir  # the trace is part of the IR
    steps = [text for text, _ in other.pdfg_history()]
    assert steps == [text for text, _ in comp.pdfg_history()]  # not "initial" alone


@pytest.mark.parametrize("make", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_changing_a_copy_leaves_the_original(make: object) -> None:
    comp = _scheduled()
    before = comp.ir
    other = make(comp)  # type: ignore[operator]
    other.add_data_space("z", "double", shape=("N",))
    other.stmts[0].parallelize("j")
    assert comp.ir == before
    assert "z" not in comp.data_spaces
    assert comp.stmts[0].tags == {}


def test_a_kernel_refuses_pickling_with_an_spf_error() -> None:
    kernel = spf.testing.compiled("gemm")
    for attempt in (pickle.dumps, copy.deepcopy):
        with pytest.raises(spf.ArgumentError, match=r"gemm.*pickle the computation"):
            attempt(kernel)
    shallow = copy.copy(kernel)  # a shallow copy shares the loaded library: allowed
    assert shallow.name == kernel.name
