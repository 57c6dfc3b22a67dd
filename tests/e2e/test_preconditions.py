"""Preconditions (API.md section 10): an access out of bounds for some parameter values only
is not refused; codegen and compile warn once naming the condition and the access, the
kernel lists it in ``kernel.preconditions``, a ``check=True`` call outside it raises
``ArgumentError`` naming the access and the values, ``check=False`` does not check, and an
``assume`` that implies it removes the warning. A definite bug stays a ``CodegenError``."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf
import spf.runtime.compile as compile_module
from spf import Computation, Stmt
from spf.analysis import Precondition
from spf.runtime.preconditions import PreconditionCheck
from spf.sets.facts import Fact

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime import Kernel


def head(*facts: str) -> Computation:
    """``s = r(0)`` (PolyBench durbin's first statement: no loop, so it runs for ``N = 0``
    too), then ``y(i) = r(i) * s``."""
    comp = Computation("head")
    comp.add_data_space("s", "double")
    comp.add_data_space("r", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    for fact in facts:
        comp.assume(fact)
    comp.add_stmt(Stmt("$s$ = $r$(0);", "{[]}"))
    comp.add_stmt(Stmt("$y$(i) = $r$(i) * $s$;", "{[i]: 0 <= i < N}"))
    return comp


def first_row() -> Computation:
    """fdtd-2d's ``ey(0, j) = fict(t)``: in bounds unless ``NX = 0`` while the loops run."""
    comp = Computation("first_row")
    comp.add_data_space("ey", "double", shape=("NX", "NY"))
    comp.add_data_space("fict", "double", shape=("TMAX",))
    comp.add_stmt(Stmt("$ey$(0, j) = $fict$(t);", "{[t, j]: 0 <= t < TMAX && 0 <= j < NY}"))
    return comp


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> Path:
    return shared_cache


def _compile(comp: Computation, cache: Path) -> Kernel:
    with pytest.warns(spf.PreconditionWarning) as record:
        kernel = comp.compile(openmp=False, cache_dir=str(cache))
    assert len(record) == 1
    return kernel


@pytest.fixture(scope="module")
def head_kernel(cache: Path) -> Kernel:
    return _compile(head(), cache)


def test_codegen_warns_once_naming_condition_and_access() -> None:
    with pytest.warns(spf.PreconditionWarning) as record:
        source = head().codegen()
    assert "void head(" in source
    (warning,) = record  # one warning for the computation, not one per access
    message = str(warning.message)
    assert "computation head: 1 access is in bounds only for some parameter values" in message
    assert "statement s0 reads r(0) inside data space 'r' only under the precondition 'N >= 1'"
    assert "its only instance with N = 0 (index (0))" in message
    assert "comp.assume('N >= 1')" in message
    assert warning.filename == __file__  # attributed to the caller, not to spf
    assert issubclass(spf.PreconditionWarning, UserWarning)
    assert spf.errors.PreconditionWarning is spf.PreconditionWarning


def test_every_target_warns() -> None:
    for target in ("cuda", "hls"):
        with pytest.warns(spf.PreconditionWarning, match=r"r\(0\)"):
            head().codegen(target)


@pytest.mark.parametrize(("target", "options"), [("cuda", {"emulate": True}), ("hls", {})])
def test_every_target_checks(target: str, options: dict[str, object], cache: Path) -> None:
    with pytest.warns(spf.PreconditionWarning):
        kernel = head().compile(target=target, cache_dir=str(cache), **options)
    assert [p.condition for p in kernel.preconditions] == ["N >= 1"]
    with pytest.raises(spf.ArgumentError, match=r"r\(0\).*N=0 breaks"):
        kernel(s=np.zeros(()), r=np.zeros(0), y=np.zeros(0))


def test_compile_warns_once_and_lists_the_preconditions(head_kernel: Kernel) -> None:
    (p,) = head_kernel.preconditions
    assert isinstance(p, Precondition)
    assert isinstance(p, Fact)
    assert p.is_parameter_fact
    assert p.text == "N >= 1 (for r(0) in statement s0)"
    assert (p.condition, p.stmt, p.access, p.data_space, p.kind) == (
        "N >= 1",
        "s0",
        "r(0)",
        "r",
        "read",
    )


def test_calls_inside_the_precondition_run(head_kernel: Kernel) -> None:
    for n in (1, 2, 7):
        r = np.arange(2.0, n + 2.0)
        y, s = np.zeros(n), np.zeros(())
        head_kernel(s=s, r=r, y=y)
        np.testing.assert_array_equal(y, r * r[0])


def test_checked_call_outside_the_precondition_names_access_and_values(
    head_kernel: Kernel,
) -> None:
    s = np.full((), 5.0)
    with pytest.raises(spf.ArgumentError) as err:
        head_kernel(s=s, r=np.zeros(0), y=np.zeros(0))
    assert str(err.value) == (
        "kernel head: statement s0 reads r(0) inside data space 'r' only under the "
        "precondition 'N >= 1', which N=0 breaks (the access would be out of bounds); pass "
        "parameters that satisfy it"
    )
    assert float(s) == 5.0  # refused before the kernel ran


def test_unchecked_call_is_not_checked(head_kernel: Kernel) -> None:
    """``check=False``: the caller vouches for the arguments. Here ``r`` is an empty view
    into a larger array, so the read of ``r(0)`` the check would refuse reads ``big[0]``."""
    big = np.array([3.0, 4.0])
    s = np.zeros(())
    head_kernel(s=s, r=big[:0], y=np.zeros(0), check=False)
    assert float(s) == 3.0


def test_implication_does_not_refuse_calls_where_the_statement_does_not_run(
    cache: Path,
) -> None:
    kernel = _compile(first_row(), cache)
    (p,) = kernel.preconditions
    assert p.condition == "NY >= 1 && TMAX >= 1 => NX >= 1"
    kernel(ey=np.zeros((0, 3)), fict=np.zeros(0))  # TMAX = 0: nothing runs
    kernel(ey=np.zeros((0, 0)), fict=np.zeros(2))  # NY = 0
    fict = np.array([1.0, 2.0])
    ey = np.zeros((2, 3))
    kernel(ey=ey, fict=fict)
    np.testing.assert_array_equal(ey, [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]])
    with pytest.raises(spf.ArgumentError, match=r"ey\(0, j\).*NX=0, NY=3, TMAX=2 breaks"):
        kernel(ey=np.zeros((0, 3)), fict=fict)


@pytest.mark.parametrize("fact", ["N >= 1", "N >= 5", "N = 8"])
def test_an_assumption_implying_the_precondition_removes_it(fact: str, cache: Path) -> None:
    comp = head(fact)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no PreconditionWarning
        comp.codegen()
        kernel = comp.compile(openmp=False, cache_dir=str(cache))
    assert kernel.preconditions == ()
    with pytest.raises(spf.ArgumentError, match=rf"the assumption '{fact}' does not hold"):
        kernel(s=np.zeros(()), r=np.zeros(0), y=np.zeros(0))


def test_an_assumption_not_implying_it_keeps_it() -> None:
    with pytest.warns(spf.PreconditionWarning, match=r"'N >= 1'"):
        head("N <= 100").codegen()


def test_out_of_bounds_wherever_it_runs_is_still_a_codegen_error() -> None:
    comp = Computation("past")
    comp.add_data_space("r", "double", shape=("N",))
    comp.add_data_space("s", "double")
    comp.add_stmt(Stmt("$s$ = $r$(N);", "{[]}"))
    with pytest.raises(spf.CodegenError) as err:
        comp.codegen()
    message = str(err.value)
    assert "statement s0 reads r(N) outside data space 'r' of shape (N)" in message
    assert "its only instance with N = 10 (index (10))" in message


def test_check_false_codegen_derives_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "void head(" in head().codegen(check=False)
        assert head().compile(check=False, openmp=False).preconditions == ()


def test_a_remembered_compile_keeps_warning_and_checking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile loaded from the remembered entry (spf.runtime.warm: no analysis) has the
    same preconditions, warns the same way and refuses the same calls."""
    first = _compile(head(), tmp_path)

    def refuse(*_: object) -> object:
        raise AssertionError("analysed again")

    monkeypatch.setattr(compile_module, "bounds_preconditions", refuse)
    monkeypatch.setattr(compile_module, "bounds_obligations", refuse)
    again = _compile(head(), tmp_path)
    assert again.preconditions == first.preconditions
    with pytest.raises(spf.ArgumentError, match=r"r\(0\).*N=0 breaks"):
        again(s=np.zeros(()), r=np.zeros(0), y=np.zeros(0))


def test_condition_with_a_floor_division_is_checked_exactly() -> None:
    """A condition with an integer division (an odd ``N`` of at least 5), as isl writes
    strides: the check evaluates it with exact integer arithmetic."""
    p = Precondition.make(
        "2*floor((N + 1)/2) = N + 1 && N >= 5", stmt="s0", access="A(i)", data_space="A",
        kind="read",
    )  # fmt: skip
    check = PreconditionCheck([p], "kernel k: ")
    for n in (5, 7, 101):
        check.check({"N": n})
    for n in (-1, 3, 4, 6, 100):
        with pytest.raises(spf.ArgumentError, match=rf"N={n} breaks"):
            check.check({"N": n})
