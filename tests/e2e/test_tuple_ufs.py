"""A tuple-valued UF in generated code: COO SpMV whose coordinates are one UF ``coord``
returning (row, column), read as the 2-d index array ``coord[k][c]``; against scipy on
random matrices (empty, one row, odd sizes), int32 and int64 coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

from spf import ArgumentError, Computation, Stmt


def coo_spmv(dtype: str) -> Computation:
    comp = Computation(f"coo_pairs_{dtype}")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "coord",
        domain="{[k]: 0 <= k < NNZ}",
        range="{[r, c]: 0 <= r < N && 0 <= c < M}",
        out_arity=2,
        dtype=dtype,
    )
    comp.add_stmt(
        Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[k, i, j]: 0 <= k < NNZ && i = coord(k)[0] && j = coord(k)[1]}",
            "{[k, i, j] -> [0, k, 0, i, 0, j, 0]}",
        )
    )
    return comp


@pytest.fixture(scope="module")
def kernels() -> dict[str, Any]:
    return {dt: coo_spmv(dt).compile() for dt in ("int32", "int64")}


def arguments(m: sps.coo_matrix, dtype: str) -> dict[str, Any]:
    coord = np.stack([m.row, m.col], axis=1).astype(dtype).reshape(m.nnz, 2)
    n, cols = m.shape
    return {"A": m.data, "coord": np.ascontiguousarray(coord), "N": n, "M": cols, "NNZ": m.nnz}


SHAPES = [(0, 0, 0.0), (1, 7, 0.5), (7, 5, 0.4), (13, 1, 0.3), (9, 11, 0.0), (31, 17, 0.2)]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("rows", "cols", "density"), SHAPES)
def test_generated_code_matches_scipy(
    kernels: dict[str, Any], dtype: str, rows: int, cols: int, density: float
) -> None:
    m = sps.random(rows, cols, density=density, format="coo", random_state=rows + cols)
    x = np.random.default_rng(rows).random(cols)
    y = np.zeros(rows)
    kernels[dtype](y=y, x=x, check=True, **arguments(m, dtype))
    assert np.allclose(y, m @ x)


def test_tuple_uf_reads_are_kept_in_its_domain_without_the_component() -> None:
    """The scanner's and the self-check's domain guard for ``coord(k)[c]`` take ``k`` (the
    declared domain's one argument), not the component too: the kernel compiles with the
    default self-check (it crashed on an isl space mismatch) and matches scipy, empty rows
    and an empty matrix included."""
    comp = coo_spmv("int64")
    comp.add_data_space("z", "double", shape=("N",))
    comp.add_stmt(
        Stmt(
            "$z$(i) += $A$(k);",
            "{[k, i]: 0 <= k < NNZ && i = coord(k)[0]}",
            "{[k, i] -> [0, k, 1, i, 0]}",
        )
    )
    kernel = comp.compile()
    for rows, cols, density in [(9, 6, 0.3), (5, 3, 0.0), (0, 0, 0.0)]:
        m = sps.random(rows, cols, density=density, format="coo", random_state=rows)
        x = np.random.default_rng(cols).random(cols)
        y, z = np.zeros(rows), np.zeros(rows)
        kernel(y=y, z=z, x=x, **arguments(m, "int64"))
        assert np.allclose(y, m @ x)
        assert np.allclose(z, m @ np.ones(cols))


def test_generated_code_reads_the_2d_coordinate_array() -> None:
    src = coo_spmv("int32").codegen("c")
    assert "#define coord(t0, t1) coord[(t0) * (int64_t) 2 + (t1)]" in src
    assert "coord(k, 0)" in src
    assert "coord(k, 1)" in src


def test_interpreter_agrees() -> None:
    m = sps.random(6, 4, density=0.5, format="coo", random_state=3)
    x, y = np.arange(4.0), np.zeros(6)
    coo_spmv("int32").interpret(y=y, x=x, **arguments(m, "int32"))
    assert np.allclose(y, m @ x)


@pytest.mark.parametrize(("component", "value"), [(0, 6), (1, 4), (1, -1)])
def test_check_finds_a_component_outside_its_range(
    kernels: dict[str, Any], component: int, value: int
) -> None:
    """Each component is checked against its own part of the declared range (a column 4
    is a valid row, but not a valid column of a 6 x 4 matrix)."""
    m = sps.random(6, 4, density=0.5, format="coo", random_state=4)
    args = arguments(m, "int32")
    args["coord"][2, component] = value
    with pytest.raises(ArgumentError, match=rf"coord\[2, {component}\] = {value} .*component"):
        kernels["int32"](y=np.zeros(6), x=np.zeros(4), check=True, **args)


def coo_in_text() -> Computation:
    """The same kernel with the components in the statement's accesses."""
    comp = Computation("coo_pairs_text")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "coord",
        domain="{[k]: 0 <= k < NNZ}",
        range="{[r, c]: 0 <= r < N && 0 <= c < M}",
        out_arity=2,
    )
    comp.add_stmt(
        Stmt(
            "$y$(coord(k)[0]) += $A$(k) * $x$(coord(k)[1]);",
            "{[k]: 0 <= k < NNZ}",
            "{[k] -> [0, k, 0]}",
        )
    )
    return comp


def test_components_in_statement_text() -> None:
    comp = coo_in_text()
    (write,) = comp.stmts[0].writes
    assert str(write[1]) == "{[k] -> [coord(k)[0]]}"
    assert "y(coord(k, 0)) += A(k) * x(coord(k, 1))" in comp.codegen("c")
    assert not comp.is_parallel_legal(comp.stmts[0], "k")  # rows repeat across k
    m = sps.random(8, 6, density=0.4, format="coo", random_state=5)
    x = np.arange(6.0)
    for run in (comp.compile(), comp.interpret):
        y = np.zeros(8)
        run(y=y, x=x, **arguments(m, "int32"))
        assert np.allclose(y, m @ x)


def test_assumption_over_components_is_checked_at_run_time() -> None:
    """An assumption relating two components of an undeclared tuple-valued UF: the UF is
    inferred (two components), and ``check=True`` finds the first violating index."""
    comp = Computation("ordered_pairs")
    comp.assume("forall k: 0 <= k < NNZ => coord(k)[0] <= coord(k)[1]")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(
        Stmt(
            "$y$(i) += 1.0;",
            "{[k, i]: 0 <= k < NNZ && i = coord(k)[0]}",
            "{[k, i] -> [0, k, 0, i, 0]}",
        )
    )
    assert comp.ufs["coord"].out_arity == 2
    kernel = comp.compile()
    y = np.zeros(4)
    kernel(y=y, coord=np.array([[0, 1], [2, 3]], dtype=np.int32), N=4, NNZ=2, check=True)
    assert y.tolist() == [1.0, 0.0, 1.0, 0.0]
    with pytest.raises(ArgumentError, match="fails first at k = 1"):
        kernel(y=y, coord=np.array([[0, 1], [3, 2]], dtype=np.int32), N=4, NNZ=2, check=True)
