"""Inlining function Computations (API.md section 6), run against plain Python semantics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import spf
from spf import ArityError, SpfError


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> str:
    return str(shared_cache)


def scale() -> spf.Computation:
    """void scale(double* v, double a) { for i < n: v[i] = a * v[i]; }"""
    c = spf.Computation("scale")
    c.add_parameter("v", "double*")
    c.add_parameter("a", "double")
    c.add_stmt(spf.Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    return c


def axpy_into_tmp() -> spf.Computation:
    """double* f(double* x): tmp[i] = 2 x[i]; x[i] += tmp[i]; returns tmp."""
    c = spf.Computation("twice")
    c.add_parameter("x", "double*")
    c.add_data_space("tmp", "double", shape=("n",))
    c.add_stmt(spf.Stmt("$tmp$(i) = 2 * $x$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    c.add_stmt(spf.Stmt("$x$(i) += $tmp$(i);", "{[i]: 0 <= i < n}", "{[i]->[1,i,0]}"))
    c.add_return_value("tmp")
    return c


def test_example_from_the_spec(cache: str) -> None:
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    res = main.append_computation(scale(), "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x", "2.0"])
    assert res.return_values == []
    assert res.tuple_position == 1
    kernel = main.compile(cache_dir=cache)
    assert [a.name for a in kernel.arguments] == ["T", "n", "x"]  # `a` is a local
    x = np.ones(5)
    kernel(x=x, n=5, T=3)
    assert np.array_equal(x, np.full(5, 8.0))


def test_names_are_prefixed_uniquely_for_each_copy() -> None:
    main = spf.Computation("m")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(scale(), "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x", "2.0"])
    main.append_computation(scale(), "{[t]: 0 <= t < T}", "{[t]->[0,t,2]}", ["x", "3.0"])
    locals_ = sorted(n for n, ds in main.data_spaces.items() if ds.role == "local")
    assert locals_ == ["_i0_a", "_i1_a"]
    iterators = [s.domain.tuple_vars for s in main.stmts]
    assert iterators == [("t",), ("t", "_i0_i"), ("t",), ("t", "_i1_i")]
    assert "_i1_a" in main.stmts[3].source


def test_callee_twice_in_a_time_loop_matches_python(cache: str) -> None:
    main = spf.Computation("twice_in_t")
    main.add_data_space("x", "double", shape=("n",))
    first = main.append_computation(scale(), "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x", "2.0"])
    main.append_computation(
        scale(), "{[t]: 0 <= t < T}", f"{{[t]->[0,t,{first.tuple_position + 1}]}}", ["x", "0.5"]
    )
    print(main.loop_structure())
    x = np.arange(1.0, 6.0)
    want = x.copy()
    for _ in range(4):
        want *= 2.0
        want *= 0.5
    main.compile(cache_dir=cache)(x=x, n=5, T=4)
    assert np.allclose(x, want)


def test_return_values_and_callee_locals(cache: str) -> None:
    main = spf.Computation("ret")
    main.add_data_space("x", "double", shape=("n",))
    res = main.append_computation(axpy_into_tmp(), "{[]}", "{[]->[0]}", ["x"])
    assert res.return_values == ["_i0_tmp"]
    assert main.data_spaces["_i0_tmp"].role == "local"
    x = np.arange(4.0)
    main.compile(cache_dir=cache)(x=x, n=4)
    assert np.allclose(x, 3 * np.arange(4.0))


def test_two_level_nest(cache: str) -> None:
    """inner scales a vector; middle calls inner R times; main calls middle T times."""
    inner = spf.Computation("vec_scale")
    inner.add_parameter("m", "double*")
    inner.add_parameter("s", "double")
    inner.add_stmt(spf.Stmt("$m$(j) = $s$ * $m$(j);", "{[j]: 0 <= j < M}", "{[j]->[0,j,0]}"))
    middle = spf.Computation("repeat")
    middle.add_parameter("g", "double*")
    middle.append_computation(inner, "{[r]: 0 <= r < R}", "{[r]->[0,r,0]}", ["g", "3.0"])
    main = spf.Computation("nest")
    main.add_data_space("A", "double", shape=("M",))
    main.append_computation(middle, "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["A"])
    assert main.loop_structure() == "for t:\n  for _i0_r:\n    s0\n    for _i0__i0_j:\n      s1"
    a = np.ones(4)
    main.compile(cache_dir=cache)(A=a, M=4, R=2, T=2)
    assert np.allclose(a, 81.0)


def test_empty_callee() -> None:
    main = spf.Computation("e")
    res = main.append_computation(spf.Computation("nothing"), "{[]}", "{[]->[0]}", [])
    assert res.return_values == []
    assert main.stmts == ()


def test_argument_errors() -> None:
    main = spf.Computation("bad")
    main.add_data_space("x", "double", shape=("n",))
    with pytest.raises(ArityError, match="takes 2 argument"):
        main.append_computation(scale(), "{[]}", "{[]->[0]}", ["x"])
    with pytest.raises(SpfError, match="by reference"):
        main.append_computation(scale(), "{[]}", "{[]->[0]}", ["2.0", "2.0"])
    with pytest.raises(SpfError, match="by-value parameter 'a'"):
        main.append_computation(scale(), "{[]}", "{[]->[0]}", ["x", "x + 1"])
    assert main.stmts == ()


def test_example_script_runs() -> None:
    script = Path(__file__).resolve().parents[2] / "examples" / "inline_functions.py"
    namespace: dict[str, object] = {"__name__": "__main__"}
    exec(compile(script.read_text(), str(script), "exec"), namespace)


def test_interpret_runs_inlined_computations() -> None:
    main = spf.Computation("interp")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(axpy_into_tmp(), "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x"])
    main.append_computation(scale(), "{[]}", "{[]->[1]}", ["x", "0.5"])
    x = np.arange(4.0)
    main.interpret(x=x, n=4, T=2)
    assert np.allclose(x, 0.5 * 9 * np.arange(4.0))


def bounded_fill() -> spf.Computation:
    """void fill(double* v, int k) { for i < k: v[i] = 5.0; } (k bounds the loop)."""
    c = spf.Computation("fill")
    c.add_parameter("v", "double*")
    c.add_parameter("k", "int")
    c.add_stmt(spf.Stmt("$v$(i) = 5.0;", "{[i]: 0 <= i < k}", "{[i]->[0,i,0]}"))
    return c


@pytest.mark.parametrize(("arg", "filled"), [("2", 2), ("n - 1", 4), ("n", 5)])
def test_by_value_parameter_bounding_a_loop_gets_the_argument(
    cache: str, arg: str, filled: int
) -> None:
    main = spf.Computation("bounded")
    main.add_data_space("x", "double", shape=("n",))
    main.assume("n >= 2")
    main.append_computation(bounded_fill(), "{[]}", "{[]->[0]}", ["x", arg])
    assert "k" not in main.params  # never a new argument of the caller
    assert [s.source for s in main.stmts] == [f"$_i0_k$ = {arg};", "$x$(_i0_i) = 5.0;"]
    kernel = main.compile(cache_dir=cache)
    assert [a.name for a in kernel.arguments] == ["n", "x"]
    x = np.zeros(5)
    kernel(x=x, n=5)
    assert x.tolist() == [5.0] * filled + [0.0] * (5 - filled)


def test_by_value_parameter_in_a_bound_and_a_statement(cache: str) -> None:
    """k bounds the loop and is read as a value; a callee local is k long."""
    c = spf.Computation("ramp")
    c.add_parameter("v", "double*")
    c.add_parameter("k", "int")
    c.add_local("w", "double", shape=("k",))
    c.add_stmt(spf.Stmt("$w$(i) = $k$ + i;", "{[i]: 0 <= i < k}", "{[i]->[0,i,0]}"))
    c.add_stmt(spf.Stmt("$v$(i) = $w$(i);", "{[i]: 0 <= i < k}", "{[i]->[1,i,0]}"))
    main = spf.Computation("ramp_caller")
    main.add_data_space("x", "double", shape=("n",))
    main.assume("n >= 3")
    main.append_computation(c, "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x", "3"])
    assert main.data_spaces["_i0_w"].shape == (3,)
    kernel = main.compile(cache_dir=cache)
    assert [a.name for a in kernel.arguments] == ["T", "n", "x"]
    x = np.zeros(5)
    kernel(x=x, n=5, T=2)
    assert x.tolist() == [3.0, 4.0, 5.0, 0.0, 0.0]


def test_by_value_parameter_bounding_a_loop_refuses_what_is_not_a_constant() -> None:
    main = spf.Computation("bad_bound")
    main.add_data_space("x", "double", shape=("n",))
    main.add_data_space("r", "int64_t")
    for arg, why in (
        ("t", "iterator of the surrounding domain"),
        ("r", "data space of bad_bound"),
        ("2.0", "not an affine integer expression"),
        ("n * n", "not an affine integer expression"),
    ):
        with pytest.raises(spf.ArgumentError, match=f"by-value parameter 'k'.*{why}"):
            main.append_computation(
                bounded_fill(), "{[t]: 0 <= t < 3}", "{[t]->[0,t,0]}", ["x", arg]
            )
    main.add_constant("alpha", "double")
    with pytest.raises(spf.ArgumentError, match="'alpha' is a double constant"):
        main.append_computation(bounded_fill(), "{[]}", "{[]->[0]}", ["x", "alpha"])
    assert main.stmts == ()
    assert sorted(main.data_spaces) == ["r", "x"]


def test_by_value_parameter_passed_on_to_a_nested_call(cache: str) -> None:
    """middle(y, int p) calls fill(y, p); main calls middle(x, 4): p, then k, become 4."""
    middle = spf.Computation("middle")
    middle.add_parameter("y", "double*")
    middle.add_parameter("p", "int")
    middle.append_computation(bounded_fill(), "{[]}", "{[]->[0]}", ["y", "p"])
    assert middle.params == {"p"}
    main = spf.Computation("nested_bound")
    main.add_data_space("x", "double", shape=("n",))
    main.assume("n >= 4")
    main.append_computation(middle, "{[]}", "{[]->[0]}", ["x", "4"])
    kernel = main.compile(cache_dir=cache)
    assert [a.name for a in kernel.arguments] == ["n", "x"]
    x = np.zeros(6)
    kernel(x=x, n=6)
    assert x.tolist() == [5.0] * 4 + [0.0] * 2


def dot() -> spf.Computation:
    c = spf.Computation("dot")
    c.add_data_space("x", "double", shape=("N",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("s", "double")
    c.add_stmt(spf.Stmt("$s$ += $x$(i) * $y$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    return c


def test_scalar_the_callee_writes_is_bound_by_reference(cache: str) -> None:
    main = spf.Computation("dot_caller")
    for name in ("x", "y"):
        main.add_data_space(name, "double", shape=("N",))
    main.add_data_space("r", "double")
    main.add_data_space("out", "double", shape=(1,))
    main.append_computation(dot(), "{[]}", "{[]->[0]}", {"x": "x", "y": "y", "s": "r"})
    main.add_stmt(spf.Stmt("$out$(0) = 2.0 * $r$;", "{[]}", "{[]->[1]}"))
    assert main.stmts[0].source == "$r$ += $x$(_i0_i) * $y$(_i0_i);"
    x, y, r, out = np.arange(4.0), np.full(4, 2.0), np.full((), 1.0), np.zeros(1)
    main.compile(cache_dir=cache)(x=x, y=y, r=r, out=out)
    assert float(r) == 1.0 + x @ y
    assert out.tolist() == [2.0 * (1.0 + x @ y)]


def test_scalar_the_callee_writes_needs_a_scalar_of_the_caller() -> None:
    main = spf.Computation("dot_bad")
    for name in ("x", "y"):
        main.add_data_space(name, "double", shape=("N",))
    for arg in ("0.0", "x"):
        with pytest.raises(spf.ArgumentError, match="writes the 0-d data space 's'"):
            main.append_computation(dot(), "{[]}", "{[]->[0]}", {"x": "x", "y": "y", "s": arg})
    assert main.stmts == ()


def test_by_value_bound_named_like_the_callers_constant(cache: str) -> None:
    """fill(v, int n) bounded by i < n, called with the caller's own n - 1 (review: refused
    as 'could not substitute', the caller's n taken for a leftover of the callee's)."""
    c = spf.Computation("fill_n")
    c.add_parameter("v", "double*")
    c.add_parameter("n", "int")
    c.add_stmt(spf.Stmt("$v$(i) = 5.0;", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    main = spf.Computation("own_n")
    main.add_data_space("x", "double", shape=("n",))
    main.assume("n >= 1")
    main.append_computation(c, "{[]}", "{[]->[0]}", ["x", "n - 1"])
    x = np.zeros(4)
    main.compile(cache_dir=cache)(x=x, n=4)
    assert x.tolist() == [5.0, 5.0, 5.0, 0.0]


def test_by_value_bound_substituted_under_an_exists_of_the_same_name() -> None:
    """The callee's domain binds e (exists e: idx(e) = i); the argument names the caller's
    constant e: the bound name is renamed first (it captured the argument, and the domain
    became false: the loop never ran)."""
    c = spf.Computation("scatter1")
    c.add_parameter("v", "double*")
    c.add_parameter("k", "int")
    c.add_stmt(spf.Stmt("$v$(i) += 1.0;", "{[i]: exists e: 0 <= e < k and idx(e) = i}",
                        "{[i]->[0,i,0]}"))  # fmt: skip
    main = spf.Computation("scatter_caller")
    main.add_data_space("x", "double", shape=("n",))
    main.add_constant("e", "int")
    main.append_computation(c, "{[]}", "{[]->[0]}", ["x", "e - 1"])
    domain = main.stmts[1].domain
    assert "e" in domain.params
    assert not domain.is_empty()
    assert "false" not in str(domain)


def test_by_value_bound_the_callee_assigns_or_an_unknown_constant_is_refused() -> None:
    """k bounds the loop and a callee statement assigns it (the loop ran to the value at
    the call while the body read the assigned one); an argument naming no constant of the
    caller was refused only after the caller had gained the callee's local."""
    c = spf.Computation("bump")
    c.add_parameter("v", "double*")
    c.add_parameter("k", "int")
    c.add_stmt(spf.Stmt("$k$ = $k$ + 1;", "{[]}", "{[]->[0]}"))
    c.add_stmt(spf.Stmt("$v$(i) = $k$;", "{[i]: 0 <= i < k}", "{[i]->[1,i,0]}"))
    main = spf.Computation("bump_caller")
    main.add_data_space("x", "double", shape=("n",))
    with pytest.raises(spf.ArgumentError, match=r"'k' of bump bounds .* s0 assigns it"):
        main.append_computation(c, "{[]}", "{[]->[0]}", ["x", "2"])
    with pytest.raises(spf.ArgumentError, match="'m' is no symbolic constant"):
        main.append_computation(bounded_fill(), "{[]}", "{[]->[0]}", ["x", "m - 1"])
    assert main.stmts == ()
    assert sorted(main.data_spaces) == ["x"]
