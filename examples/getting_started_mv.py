"""The getting-started tutorial (docs/getting_started.md) as one script.

The SPF Computation API paper's running example: a dense matrix-vector product, then the
CSR sparse one whose domain has the uninterpreted functions ``rowptr`` and ``col``. Each is
built from data spaces and a statement, its dependences are inspected, the row loop is
parallelized, C is generated, compiled and run, and the result is checked against numpy /
scipy. ``python examples/getting_started_mv.py [MATRIX.mtx]`` (default: a random matrix).
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

import spf


def dense_mv() -> spf.Computation:
    """``y(i) += A(i, j) * x(j)`` over ``0 <= i < N``, ``0 <= j < M``."""
    comp = spf.Computation("dense_mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(i, j) * $x$(j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    return comp


def sparse_mv() -> spf.Computation:
    """The same product with ``A`` in CSR: the nonzeros of row ``i`` are ``rowptr(i) <= k <
    rowptr(i+1)`` and ``col(k)`` is the column of nonzero ``k``."""
    comp = spf.Computation("spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    )
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,0,k,0,j,0]}",
        )
    )
    return comp


def show(comp: spf.Computation) -> None:
    """Dependences and whether the row loop may run in parallel."""
    print(comp)
    for dep in comp.dependences():
        print(f"  {dep.kind} dependence on {dep.data_space}, carried by {dep.carried_by}")
    row = comp.stmt(0)
    print(f"  row loop parallel? {comp.is_parallel_legal(row, 'i')}")


def main(argv: list[str]) -> None:
    dense = dense_mv()
    show(dense)
    dense.stmt(0).parallelize("i")
    print(dense.loop_structure())
    A = np.random.default_rng(0).random((300, 200))
    x = np.random.default_rng(1).random(200)
    y = np.zeros(300)
    dense.compile()(y=y, A=A, x=x)
    assert np.allclose(y, A @ x)
    print("dense MV matches numpy")

    sparse = sparse_mv()
    show(sparse)
    sparse.stmt(0).parallelize("i")  # legal: a nondecreasing rowptr keeps rows disjoint
    print(sparse.loop_structure())
    print(sparse.codegen("c"))
    if argv:
        M = spf.sparse.read_matrix_market(argv[0])
    else:
        M = sp.random_array((2000, 1500), density=0.005, format="csr", rng=0)
    x = np.random.default_rng(2).random(M.shape[1])
    y = np.zeros(M.shape[0])
    sparse.compile()(y=y, x=x, **spf.sparse.csr_args(M))
    assert np.allclose(y, M @ x)
    print(f"sparse MV on a {M.shape[0]}x{M.shape[1]} matrix with {M.nnz} nonzeros matches scipy")


if __name__ == "__main__":
    main(sys.argv[1:])
