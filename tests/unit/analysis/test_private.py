"""Locals private to a loop (``add_local(..., private=loop)``, spf.analysis.private): the
dependences, legality, codegen, interpreter, JSON and PDFG agree on one copy per iteration."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf import Computation, Stmt


def rowsum(private: str | None = "i") -> Computation:
    """``t`` sums row ``i`` of ``A`` (never reset by a statement) into ``y(i)``: correct
    only with a fresh zeroed ``t`` per row."""
    comp = Computation("rowsum")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_local("t", "double", private=private)
    comp.add_stmt(
        Stmt("$t$ += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j] -> [0,i,0,j,0]}")
    )
    comp.add_stmt(Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
    return comp


def test_private_local_carries_no_dependence_across_its_loop() -> None:
    deps = [d for d in rowsum().dependences() if d.data_space == "t"]
    assert deps
    assert all("i" not in d.carried_by for d in deps)
    assert any("j" in d.carried_by for d in deps)  # the sum itself stays ordered
    shared = [d for d in rowsum(None).dependences() if d.data_space == "t"]
    assert any("i" in d.carried_by for d in shared)


def test_private_local_row_loop_is_parallel_and_declared_in_its_body() -> None:
    comp = rowsum()
    assert comp.is_parallel_legal("s1", "i")
    assert not rowsum(None).is_parallel_legal("s1", "i")
    comp.stmt("s0").parallelize("i")
    code = comp.codegen()
    body = code[code.index("void rowsum(") :]
    assert body.index("#pragma omp parallel for") < body.index("double t[1] = {0};")
    k = comp.compile()
    a = np.random.default_rng(1).random((37, 5))
    y = np.zeros(37)
    k(A=a, y=y)
    np.testing.assert_allclose(y, a.sum(axis=1))


def test_private_local_is_fresh_in_each_iteration_for_interpret_and_kernel() -> None:
    a = np.arange(12.0).reshape(3, 4)
    y1, y2 = np.zeros(3), np.zeros(3)
    rowsum().interpret(A=a, y=y1)
    rowsum().compile()(A=a, y=y2)
    np.testing.assert_array_equal(y1, a.sum(axis=1))
    np.testing.assert_array_equal(y2, y1)
    shared = np.zeros(3)
    rowsum(None).interpret(A=a, y=shared)
    np.testing.assert_array_equal(shared, np.cumsum(a.sum(axis=1)))


def test_private_local_in_json_str_and_pdfg() -> None:
    comp = rowsum()
    again = Computation.from_json(comp.to_json())
    assert again.data_spaces["t"].private == "i"
    assert again.dependences() == comp.dependences()
    assert "t: double  (local, private to loop i)" in str(comp)
    g = comp.pdfg()
    assert g.graph.nodes["t"]["private"] == "i"
    assert "private to loop i" in comp.to_dot()


def test_shared_scalar_parallel_tag_error_says_how_to_privatize() -> None:
    comp = rowsum(None)
    comp.stmt("s0").parallelize("i")
    with pytest.raises(spf.IllegalScheduleError) as err:
        comp.check_legality()
    text = str(err.value)
    assert "'t' is a scalar shared by every iteration of loop 'i'" in text
    assert "comp.add_local('t', 'double', private='i')" in text


def test_moving_the_private_loop_is_refused_naming_the_local() -> None:
    comp = rowsum()
    comp.stmt("s0").interchange("i", "j")
    with pytest.raises(
        spf.IllegalScheduleError, match=r"use 't', a local private to each iteration"
    ):
        comp.codegen()


def test_inner_loops_of_a_private_local_may_be_transformed() -> None:
    comp = rowsum()
    comp.stmt("s0").split("j", 2, "j0", "j1")
    a = np.random.default_rng(2).random((4, 7))
    y = np.zeros(4)
    comp.compile()(A=a, y=y)
    np.testing.assert_allclose(y, a.sum(axis=1))


def test_statement_outside_the_private_loop_is_an_error() -> None:
    comp = rowsum()
    comp.add_stmt(Stmt("$y$(0) = $t$;", "{[]: N >= 1}", "{[] -> [1]}"))
    with pytest.raises(spf.SpfError, match=r"s2 uses 't', a local private to loop 'i'"):
        comp.codegen()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"private": 3}, "private= names the loop"),
        ({"private": "i", "shape": ("N",)}, "not of shape"),
        ({"private": "i", "shape": (4,), "index": True, "type": "int32_t"}, "cannot be private"),
    ],
)
def test_add_local_private_arguments_are_checked(kwargs: dict[str, object], message: str) -> None:
    comp = Computation("c")
    args = {"type": "double", **kwargs}
    with pytest.raises(spf.SpfError, match=message):
        comp.add_local("t", **args)  # type: ignore[arg-type]


def test_private_fixed_size_array_is_one_copy_per_iteration() -> None:
    comp = Computation("pairs")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("w", "double", shape=(2,), private="i")
    comp.add_stmt(Stmt("$w$(0) = $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(Stmt("$w$(1) = 2 * $w$(0);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
    comp.add_stmt(Stmt("$y$(i) = $w$(1) + $w$(0);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,2]}"))
    comp.stmt("s0").parallelize("i")
    x, y = np.arange(9.0), np.zeros(9)
    comp.compile()(x=x, y=y)
    np.testing.assert_array_equal(y, 3 * x)


def test_redeclaring_a_local_with_another_privacy_is_refused() -> None:
    comp = Computation("c")
    comp.add_local("t", "double", private="i")
    comp.add_local("t", "double", private="i")  # the same declaration again: accepted
    with pytest.raises(spf.SpfError, match=r"\(local, private to loop i\); cannot redeclare"):
        comp.add_local("t", "double")


def test_split_private_loop_declares_the_local_in_the_inner_piece() -> None:
    """After a split of its loop, each iteration of the inner piece is one iteration of the
    private loop: the local lives there (C, interpreter and CUDA agree)."""
    comp = rowsum()
    for s in ("s0", "s1"):
        comp.stmt(s).split("i", 4, "i0", "i1")
    comp.stmt("s0").parallelize("i0")
    a = np.random.default_rng(3).random((11, 3))
    y, y2 = np.zeros(11), np.zeros(11)
    comp.compile()(A=a, y=y)
    comp.interpret(A=a, y=y2)
    np.testing.assert_allclose(y, a.sum(axis=1))
    np.testing.assert_array_equal(y2, y)
    code = comp.codegen()
    assert code.index("for (int64_t i1") < code.index("double t[1] = {0};")
    gpu = rowsum()
    for s in ("s0", "s1"):
        gpu.stmt(s).split("i", 32, "i0", "i1").gpu(("i0",), ("i1",))
    cuda = gpu.codegen("cuda")
    assert cuda.index("threadIdx.x") < cuda.index("double t[1] = {0};")


def test_splitting_one_statement_of_a_copy_is_refused() -> None:
    comp = rowsum()
    comp.stmt("s0").split("i", 4, "i0", "i1")
    with pytest.raises(spf.IllegalScheduleError, match=r"no loop of their schedules"):
        comp.check_legality()


def test_inlined_private_local_is_private_to_the_prefixed_loop() -> None:
    callee = Computation("rows")
    callee.add_parameter("y", "double*")
    callee.add_parameter("A", "double*")
    callee.add_local("t", "double", private="i")
    callee.add_stmt(
        Stmt("$t$ += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j] -> [0,i,0,j,0]}")
    )
    callee.add_stmt(Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
    caller = Computation("outer")
    caller.add_data_space("Y", "double", shape=("N",))
    caller.add_data_space("B", "double", shape=("N", "M"))
    caller.append_computation(callee, "{[]}", "{[] -> [0]}", args=["Y", "B"])
    (local,) = [ds for ds in caller.data_spaces.values() if ds.role == "local"]
    assert local.private is not None
    assert local.private == local.name.replace("t", "i")  # the callee's prefix on both
    assert caller.is_parallel_legal("s1", local.private)
    a, y = np.arange(6.0).reshape(3, 2), np.zeros(3)
    caller.compile()(B=a, Y=y)
    np.testing.assert_array_equal(y, [1.0, 5.0, 9.0])
