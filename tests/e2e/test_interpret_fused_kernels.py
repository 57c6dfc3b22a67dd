"""The reference interpreter runs the schedule's order; for sparse kernels fused into one
loop (docs/inspection.md, "Fused kernels") that order breaks dependences a wavefront's
inspector orders at run time, so ``interpret`` refuses them rather than return other values
than the compiled kernel (audit19)."""

from __future__ import annotations

import numpy as np
import pytest

import spf


def solve_then_mv() -> spf.Computation:
    comp = spf.Computation("solve_mv")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.append_computation(
        spf.kernels.trsv_diag_csr(), "{[]}", "{[] -> [0]}", {"x": "x", "A": "A", "b": "b"}
    )
    comp.append_computation(
        spf.kernels.spmv_csr(), "{[]}", "{[] -> [1]}", {"y": "y", "A": "A", "x": "x"}
    )
    return comp


def test_fused_kernels_are_refused_by_the_interpreter_before_and_after_the_wavefront() -> None:
    args = spf.sparse.gauss_seidel_args(spf.sparse.poisson2d(4))
    x, y = np.zeros(16), np.zeros(16)
    solve_then_mv().interpret(x=x, y=y, b=np.ones(16), **args)  # unfused: runs
    assert np.count_nonzero(y) > 0
    fused = solve_then_mv()
    fused.fuse("s2", "s3", 1)  # kept for a wavefront (the product reads later rows of x)
    for _ in range(2):
        with pytest.raises(spf.IllegalScheduleError, match="before the fusion"):
            fused.interpret(x=np.zeros(16), y=np.zeros(16), b=np.ones(16), **args)
        fused.wavefront("_i0_i")


def two_solves() -> spf.Computation:
    comp = spf.Computation("two_solves")
    for name in ("x", "b", "z"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    for k, (out, rhs) in enumerate((("x", "b"), ("z", "x"))):
        comp.append_computation(
            spf.kernels.trsv_diag_csr(), "{[]}", f"{{[] -> [{k}]}}", {"x": out, "A": "A", "b": rhs}
        )
    return comp


def test_kernels_fused_legally_still_interpret() -> None:
    args = spf.sparse.gauss_seidel_args(spf.sparse.poisson2d(4))
    want_x, want_z = np.zeros(16), np.zeros(16)
    two_solves().interpret(x=want_x, z=want_z, b=np.ones(16), **args)
    comp = two_solves()
    comp.fuse("s2", "s3", 1)  # z(i) = x(i) right after row i of x is solved: legal
    comp.wavefront("_i0_i")
    x, z = np.zeros(16), np.zeros(16)
    comp.interpret(x=x, z=z, b=np.ones(16), **args)
    assert np.array_equal(x, want_x)
    assert np.array_equal(z, want_z)


@pytest.mark.parametrize("wavefront", [False, True])
def test_fused_kernels_are_not_appended_as_a_program_order(wavefront: bool) -> None:
    # the callee's current schedules become the caller's program order: inlined, the fused
    # order lost the dependence the wavefront orders and the caller compiled a wrong y
    fused = solve_then_mv()
    fused.fuse("s2", "s3", 1)
    if wavefront:
        fused.wavefront("_i0_i")
    caller = spf.Computation("caller")
    for name in ("x", "b", "y"):
        caller.add_data_space(name, "double", shape=("N",))
    caller.add_data_space("A", "double", shape=("NNZ",))
    with pytest.raises(spf.IllegalScheduleError, match="append the kernels before fusing"):
        caller.append_computation(
            fused, "{[]}", "{[]->[0]}", {"x": "x", "b": "b", "y": "y", "A": "A"}
        )
    assert caller.stmts == ()
