"""append_computation (API.md section 6): calls that were wrong silently or left half a call
behind (audit19), run against plain numpy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    from pathlib import Path


def scale(first: int = 0) -> spf.Computation:
    """void scale(double* v, double a) { for i < n: v[i] = a * v[i]; }"""
    c = spf.Computation("scale")
    c.add_parameter("v", "double*")
    c.add_parameter("a", "double")
    c.add_stmt(spf.Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", f"{{[i]->[{first},i,0]}}"))
    return c


def test_a_call_refused_halfway_adds_nothing() -> None:
    main = spf.Computation("main")
    main.add_data_space("A", "double", shape=("n", "n"))
    main.add_data_space("x", "double", shape=("n",))
    before = main.to_json()
    with pytest.raises(spf.ArityError, match="rank 2") as err:
        main.append_computation(scale(), "{[]}", "{[]->[0]}", ["A", "2.0"])
    assert any("append_computation(scale)" in note for note in err.value.__notes__)
    assert main.to_json() == before  # no local _i0_a, no statement `_i0_a = 2.0;`
    main.append_computation(scale(), "{[]}", "{[]->[0]}", ["x", "2.0"])
    assert [n for n, ds in main.data_spaces.items() if ds.role == "local"] == ["_i0_a"]


def test_a_computation_appended_into_itself_is_refused() -> None:
    f = scale()
    before = f.to_json()
    with pytest.raises(spf.ArgumentError, match="recursion"):
        f.append_computation(f, "{[]}", "{[]->[1]}", ["v", "a"])
    assert f.to_json() == before


@pytest.mark.parametrize("operation", ["barrier", "host_to_device"])
def test_a_callee_s_operations_are_refused_not_dropped(operation: str) -> None:
    f = scale()
    if operation == "barrier":
        f.barrier_at("s0", "i")
    else:
        f.host_to_device("v")
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    with pytest.raises(spf.ArgumentError, match=f"operation s1 \\({operation}"):
        main.append_computation(f, "{[]}", "{[]->[0]}", ["x", "2.0"])
    assert main.stmts == ()


@pytest.mark.parametrize("first", [-5, -1, 0, 3])
def test_a_callee_starting_at_a_negative_position_runs_after_what_precedes_the_call(
    first: int, tmp_path: Path
) -> None:
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    main.add_stmt(spf.Stmt("$x$(i) = 1.0;", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    done = main.append_computation(scale(first), "{[]}", "{[]->[1]}", ["x", "3.0"])
    main.add_stmt(
        spf.Stmt("$x$(i) += 1.0;", "{[i]: 0 <= i < n}", f"{{[i]->[{done.tuple_position + 1},i,0]}}")
    )
    x, xi = np.zeros(4), np.zeros(4)
    main.compile(cache_dir=str(tmp_path))(x=x, n=4)
    main.interpret(x=xi, n=4)
    assert x.tolist() == xi.tolist() == [4.0] * 4  # 1, times 3, plus 1


def test_the_callee_s_declared_constants_come_along(tmp_path: Path) -> None:
    f = spf.Computation("f")
    f.add_parameter("v", "double*")
    f.add_constant("alpha", "double")
    f.add_stmt(spf.Stmt("$v$(i) = alpha * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(f, "{[]}", "{[]->[0]}", ["x"])
    assert main.constants == {"alpha": "double"}
    x = np.ones(3)
    main.compile(cache_dir=str(tmp_path))(x=x, n=3, alpha=0.5)
    assert x.tolist() == [0.5] * 3
    other = spf.Computation("other")
    other.add_data_space("x", "double", shape=("n",))
    other.add_constant("alpha", "int64_t")
    with pytest.raises(spf.ArgumentError, match="declare it alike"):
        other.append_computation(f, "{[]}", "{[]->[0]}", ["x"])


def permute() -> spf.Computation:
    """A callee computing a run-time index array p and reading x through it."""
    c = spf.Computation("perm")
    c.add_parameter("x", "double*")
    c.add_parameter("y", "double*")
    c.add_data_space("p", "int32_t", shape=("N",), index=True, range="{[k]: 0 <= k < N}")
    c.add_stmt(spf.Stmt("$p$(i) = N - 1 - i;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    c.add_stmt(spf.Stmt("$y$(i) = $x$(p(i));", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    return c


def test_a_callee_s_run_time_index_array_is_bound_by_name_or_refused(tmp_path: Path) -> None:
    main = spf.Computation("main")
    main.add_data_space("a", "double", shape=("N",))
    main.add_data_space("b", "double", shape=("N",))
    # renamed to _i0_p, the computed array was no longer what p(i) read: an input instead
    with pytest.raises(spf.ArgumentError, match="bind it by name"):
        main.append_computation(permute(), "{[]}", "{[]->[0]}", ["a", "b"])
    assert main.stmts == ()
    main.add_local("p", "int32_t", ("N",), index=True, range="{[k]: 0 <= k < N}")
    main.append_computation(permute(), "{[]}", "{[]->[0]}", {"x": "a", "y": "b", "p": "p"})
    b = np.zeros(5)
    main.compile(cache_dir=str(tmp_path))(a=np.arange(5.0), b=b, N=5)
    assert b.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


@pytest.mark.parametrize("args", [None, (a for a in ["x", "2.0"]), "x", 3])
def test_args_that_are_no_list_nor_mapping_are_refused(args: object) -> None:
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    with pytest.raises(spf.ArgumentError, match="args is a list of argument texts"):
        main.append_computation(scale(), "{[]}", "{[]->[0]}", args)  # type: ignore[arg-type]


def test_an_array_of_other_elements_is_refused_as_c_refuses_it() -> None:
    main = spf.Computation("main")
    main.add_data_space("k", "int32_t", shape=("n",))
    main.add_data_space("f", "float", shape=("n",))
    for array in ("k", "f"):  # scale(k, 2.5) stored 2.5 * k truncated into k
        with pytest.raises(spf.ArgumentError, match=f"argument '{array}' of main holds"):
            main.append_computation(scale(), "{[]}", "{[]->[0]}", [array, "2.5"])
    assert main.stmts == ()
