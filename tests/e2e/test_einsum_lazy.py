"""A sparse einsum compiles only the group of phases a call runs (issue 33): the single pass
(``single`` + ``bound``) where its row loop runs on one thread, the two phases (``symbolic``
+ ``numeric``) otherwise; the other group on the first call that needs it (a team of more
than one thread, or a bound that does not fit), once, whatever the threads calling, and
each group is remembered on its own (a warm process loads only what it runs)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.codegen
import spf.index_notation.remembered as remembered
import spf.index_notation.sparse_output as sparse_output
from spf.errors import ArgumentError
from spf.formats import CSR
from spf.sparse import csr_args
from spf.testing import fixed_team as _team

if TYPE_CHECKING:
    from pathlib import Path

SPADD = "C(i,j) = A(i,j) + B(i,j)"


def _refuse(what: str) -> Any:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the lazy einsum compile ran {what}")

    return refused


def _operands(seed: int, n: int = 23, m: int = 17) -> tuple[sp.csr_array, sp.csr_array]:
    a = sp.random_array((n, m), density=0.3, format="csr", rng=seed)
    b = sp.random_array((n, m), density=0.2, format="csr", rng=seed + 1)
    for x in (a, b):
        x.sort_indices()
    return a, b


def _call(kernel: Any, a: sp.csr_array, b: sp.csr_array) -> dict[str, Any]:
    return kernel(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"))  # type: ignore[no-any-return]


def _same(one: dict[str, Any], two: dict[str, Any], want: Any) -> None:
    for key in ("rowptr", "col", "A"):
        assert one[key].tobytes() == two[key].tobytes(), key
    got = sp.csr_array((one["A"], one["col"], one["rowptr"]), shape=want.shape)
    assert np.array_equal(got.toarray(), sp.csr_array(want).toarray())


@pytest.fixture
def no_two_phases(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Building either of the two phases' Computations fails the test."""
    for name in ("_symbolic", "_numeric"):
        monkeypatch.setattr(sparse_output, name, _refuse(f"sparse_output.{name}"))
    return monkeypatch


def test_a_serial_compile_builds_only_the_single_pass_then_a_team_builds_the_two_phases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_two_phases: pytest.MonkeyPatch
) -> None:
    a, b = _operands(1)
    with _team(1):
        kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path))
        assert kernel.compiled() == ("single",)
        one = _call(kernel, a, b)  # validated and run without the two phases
    assert kernel.compiled() == ("single",)
    monkeypatch.undo()
    with _team(2):
        two = _call(kernel, a, b)
    assert kernel.compiled() == ("two", "single")
    _same(one, two, a + b)


def test_a_parallel_compile_builds_only_the_two_phases_then_one_thread_the_single_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _operands(3)
    monkeypatch.setattr("spf.index_notation.single_pass.build_single", _refuse("build_single"))
    with _team(2):
        kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path))
        two = _call(kernel, a, b)
    assert kernel.compiled() == ("two",)
    monkeypatch.undo()
    with _team(1):
        one = _call(kernel, a, b)
    assert kernel.compiled() == ("two", "single")
    assert kernel.single.kernel.last_threads == 1
    _same(one, two, a + b)


def test_a_bound_that_does_not_fit_builds_the_two_phases_on_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _operands(5)
    want = sp.csr_array(a + b)
    kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, parallel=False).compile(cache_dir=str(tmp_path))
    assert kernel.compiled() == ("single",)
    one = _call(kernel, a, b)
    # room for the output (int32 columns and values) but not for the bound A_NNZ + B_NNZ + 1
    monkeypatch.setattr("spf.formats.sizing.memory_limit", lambda: want.nnz * 12)
    fallback = _call(kernel, a, b)
    assert kernel.compiled() == ("two", "single")
    _same(one, fallback, want)


def test_each_group_is_remembered_and_loaded_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _operands(7)
    with _team(1):  # cold: the single pass now, the two phases on a team's first call
        cold = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path))
        one = _call(cold, a, b)
    with _team(2):
        _call(cold, a, b)
    monkeypatch.setattr(spf.codegen, "generate", _refuse("code generation"))
    monkeypatch.setattr("spf.runtime.compile.compile_kernel", _refuse("compile_kernel"))
    monkeypatch.setattr("spf.runtime.compile.compile_kernels", _refuse("compile_kernels"))
    for first, then in ((1, 2), (2, 1)):
        loads = remembered.LOADS
        with _team(first):
            warm = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path))
        assert remembered.LOADS - loads == 1
        assert warm.compiled() == (("single",) if first == 1 else ("two",))
        with _team(then):
            other = _call(warm, a, b)
        assert remembered.LOADS - loads == 2
        assert warm.compiled() == ("two", "single")
        _same(one, other, a + b)


def test_an_unknown_argument_is_named_with_what_both_paths_take(
    tmp_path: Path,
) -> None:
    a, b = _operands(9)
    with _team(1):
        kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path))
        with pytest.raises(ArgumentError) as err:
            kernel(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"), Z=3)
    n0, n1 = kernel._names
    takes = sorted((n0 | n1) - {"C_rowptr", "C_col", "C", "C_NNZ"})
    assert f"unknown argument(s) Z; it takes {', '.join(takes)} (and" in str(err.value)
    assert "C_CAP" not in takes
    with _team(1), pytest.raises(ArgumentError, match=r"unknown argument.*C_CAP"):
        kernel(**csr_args(a, prefix="A_"), **csr_args(b, prefix="B_"), C_CAP=3)


def test_threads_making_the_first_call_compile_the_group_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = _operands(11)
    want = sp.csr_array(a + b)
    kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, parallel=False).compile(cache_dir=str(tmp_path))
    built: list[str] = []
    compile_group = kernel._compile

    def counted(group: str) -> list[Any]:
        built.append(group)
        return compile_group(group)  # type: ignore[no-any-return]

    kernel._compile = counted
    # every call falls back to the two phases (the bound does not fit)
    monkeypatch.setattr("spf.formats.sizing.memory_limit", lambda: want.nnz * 12)
    results: list[dict[str, Any]] = []
    calls = [threading.Thread(target=lambda: results.append(_call(kernel, a, b)))
             for _ in range(3)]  # fmt: skip
    for t in calls:
        t.start()
    for t in calls:
        t.join()
    assert built == ["two"]
    assert len(results) == 3
    for out in results[1:]:
        _same(results[0], out, want)
