"""The per-call fault record of a C kernel (spf.codegen.faults): index faults of run-time
index arrays and failed allocations are the call's own and reported by the call."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import spf
from spf.errors import ArgumentError

N = 200_000


def _gather() -> spf.Computation:
    """``p(i) = q(i)`` (a run-time index array of range [0, N)), then ``y(i) = x(p(i))``."""
    c = spf.Computation("gather_faults")
    c.add_data_space("q", "int64_t", shape=("N",))
    c.add_data_space("p", "int64_t", shape=("N",), index=True)
    c.declare_uf("p", range="{[v]: 0 <= v < N}")
    c.add_data_space("x", "double", shape=("N",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_stmt(spf.Stmt("$p$(i) = $q$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$y$(i) = $x$(p(i));", "{[i]: 0 <= i < N}"))
    return c


def _args(bad: bool) -> dict[str, object]:
    q = np.arange(N, dtype=np.int64)[::-1].copy()
    if bad:  # every entry from 17 on: the fault is flagged all through the call
        q[17:] = N + 400
    x = np.arange(N, dtype=np.float64)
    return {"N": N, "q": q, "p": np.zeros(N, np.int64), "x": x, "y": np.zeros(N)}


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("check", [True, False])
def test_index_fault_names_the_array_index_and_value(check: bool, parallel: bool) -> None:
    comp = _gather()
    if parallel:  # each thread flags its own faults, combined after its iterations
        comp.stmt("s1").parallelize("i")
    kernel = comp.compile()
    with pytest.raises(ArgumentError, match=rf"p\[17\] = {N + 400} is outside the range"):
        kernel(**_args(bad=True), check=check)
    good = _args(bad=False)
    kernel(**good, check=check)  # the fault of the previous call is not this call's
    assert np.array_equal(good["y"], np.arange(N)[::-1])


@pytest.mark.parametrize("check", [True, False])
def test_concurrent_calls_keep_their_own_faults(check: bool) -> None:
    kernel = _gather().compile()
    bad_args, good_args = _args(bad=True), _args(bad=False)

    def run(args: dict[str, object]) -> str:
        try:
            kernel(**args, check=check)
        except ArgumentError as err:
            return str(err)
        return ""

    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = [(pool.submit(run, bad_args), pool.submit(run, good_args)) for _ in range(100)]
        for bad, good in runs:
            assert good.result() == ""
            assert "p[17]" in bad.result()
    assert np.array_equal(good_args["y"], np.arange(N)[::-1])


def _big() -> spf.Computation:
    """A local of ``N`` doubles, used only when ``G > 0``."""
    c = spf.Computation("big_local")
    c.add_local("tmp", "double", shape=("N",))
    c.add_data_space("y", "double", shape=(1,))
    c.add_stmt(spf.Stmt("$tmp$(i) = 1.0;", "{[i]: 0 <= i < N && G > 0}"))
    c.add_stmt(spf.Stmt("$y$(0) = $y$(0) + $tmp$(i);", "{[i]: 0 <= i < N && G > 0}"))
    return c


@pytest.mark.parametrize("check", [True, False])
def test_failed_allocation_is_a_memory_error_naming_the_buffer(check: bool) -> None:
    kernel = _big().compile()
    y = np.zeros(1)
    kernel(N=5, G=1, y=y, check=check)
    assert y[0] == 5.0
    with pytest.raises(MemoryError, match=r"'tmp' of 1152921504606846976 elements of 8 bytes"):
        kernel(N=1 << 60, G=0, y=y, check=check)
    assert y[0] == 5.0


def test_failed_allocation_in_a_loop_is_a_memory_error_not_an_abort() -> None:
    """A ``local`` buffer allocated at a loop: its ``calloc`` failing used to ``abort()``."""
    comp = spf.Computation("row_buffer")
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M && R >= 0}"
    for name in ("a", "t", "b"):
        comp.add_data_space(name, "double", shape=("N", "M"))
    comp.add_stmt(spf.Stmt("$t$(i,j) = 2 * $a$(i,j);", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(spf.Stmt("$b$(i,j) = $t$(i,j);", dom, "{[i,j]->[0,i,1,j,0]}"))
    buf = comp.add_buffer("row", ("M + R",), "double", scope="local")
    comp.stmt("s0").store_in(buf, ["j"])
    buf.allocate_at("s0", "i")
    kernel = comp.compile()
    a, b = np.ones((2, 3)), np.zeros((2, 3))
    kernel(N=2, M=3, R=1, a=a, b=b)
    assert np.array_equal(b, 2 * a)
    with pytest.raises(MemoryError, match=r"'row' of 1152921504606846979 elements"):
        kernel(N=2, M=3, R=1 << 60, a=a, b=b)


@pytest.mark.parametrize(
    ("low", "high", "bad"),
    [
        ("-1099511627776", "1099511627776", None),
        ("1099511627776", "2199023255552", 0),
        ("-5", "N - 1", 2),
    ],
)
def test_int32_index_array_ranges_beyond_int32(low: str, high: str, bad: int | None) -> None:
    """The check compares ``int32_t`` values with the range saturated to ``int32_t``: a
    range wider than the type accepts every value, one above it none."""
    c = spf.Computation("wide_range")
    c.add_data_space("q", "int32_t", shape=("N",))
    c.add_data_space("p", "int32_t", shape=("N",), index=True)
    c.declare_uf("p", range=f"{{[v]: {low} <= v <= {high}}}")
    c.add_data_space("y", "int64_t", shape=("N",))
    c.add_stmt(spf.Stmt("$p$(i) = $q$(i);", "{[i]: 0 <= i < N}"))
    c.add_stmt(spf.Stmt("$y$(i) = p(i);", "{[i]: 0 <= i < N}"))
    kernel = c.compile()
    q = np.array([0, 1, 2**31 - 1, -(2**31)], np.int32)
    y = np.zeros(4, np.int64)
    args = {"N": 4, "q": q, "p": np.zeros(4, np.int32), "y": y}
    if bad is None:
        kernel(**args)
        assert np.array_equal(y, q)
    else:
        with pytest.raises(ArgumentError, match=rf"p\[{bad}\] = {q[bad]} is outside"):
            kernel(**args)
