"""What spf checks for you: accesses in bounds, assumptions, constants and locals.

1. An off-by-one stencil is refused at codegen, naming the statement, the access and an
   offending instance; a parameter assumption (``N >= 1``) is what lets another one through.
2. A lower-triangular solve with the assumption that every column index lies below the
   diagonal (``forall i, k: ... => col(k) < i``): the analysis drops the dependences the fact
   rules out, and the compiled kernel checks the fact on its arguments (``check=True``).
3. An access spf cannot prove in bounds statically (the diagonal read ``L(rowptr(i+1) - 1)``
   needs non-empty rows) becomes a run-time check of the kernel's index arrays.
4. ``add_constant`` and ``add_local``: a PolyBench-style scalar temporary and a time step.

Run: ``python examples/checked_contract.py`` (checks its results and fails loudly).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import scipy.sparse as sp

import spf


def off_by_one() -> None:
    comp = spf.Computation("shift")
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$B$(i) = $A$(i + 1);", "{[i]: 0 <= i < N}"))
    try:
        comp.codegen("c")
    except spf.CodegenError as err:
        print("refused:", str(err).split(";")[0])
    else:
        raise AssertionError("the off-by-one read was not refused")

    last = spf.Computation("last_column")
    last.add_data_space("b", "double", shape=("N",))
    last.add_data_space("A", "double", shape=("N", "M"))
    last.add_stmt(spf.Stmt("$b$(i) = $A$(i, M - 1);", "{[i]: 0 <= i < N}"))
    # A(i, M-1) is out of bounds only when M = 0 (and N >= 1): a precondition, not a refusal
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        unchecked = last.compile()
    assert any(issubclass(w.category, spf.PreconditionWarning) for w in seen), "M = 0 unnoticed"
    print("precondition:", unchecked.preconditions)
    try:
        unchecked(b=np.zeros(2), A=np.zeros((2, 0)), check=True)
    except spf.ArgumentError as err:
        print("refused at the call:", str(err).splitlines()[0])
    else:
        raise AssertionError("a call with M = 0 was not refused")
    last.assume("M >= 1")  # a proof aid, and checked on every call with check=True
    b, a = np.zeros(3), np.arange(12.0).reshape(3, 4)
    kernel = last.compile()
    kernel(b=b, A=a)
    assert np.array_equal(b, a[:, -1])
    print("with assume('M >= 1'): b = last column of A")


def triangular_solve() -> None:
    comp = spf.kernels.sptrsv_csr()  # declares the fact spf.kernels.TRIANGULAR
    data = json.loads(comp.to_json())
    data["assumptions"] = []  # the same solve without it
    before = len(spf.Computation.from_json(json.dumps(data)).dependences())
    after = len(comp.dependences())
    print(f"forward solve: {before} dependences, {after} with the triangular assumption")
    assert after < before

    n = 200
    rng = np.random.default_rng(0)
    lower = sp.tril(sp.random_array((n, n), density=0.05, rng=1), k=-1) + sp.diags_array(
        rng.uniform(1.0, 2.0, n)
    )
    L = sp.csr_matrix(lower)
    L.sort_indices()
    f = rng.standard_normal(n)
    u = np.zeros(n)
    kernel = comp.compile()
    args = spf.sparse.sptrsv_args(L)
    kernel(u=u, f=f, **args)
    assert np.allclose(L @ u, f)
    print("forward solve matches scipy: |L u - f| =", float(np.abs(L @ u - f).max()))

    upper = dict(args)
    upper["col"] = args["col"].copy()
    upper["col"][upper["rowptr"][1] - 1] = n - 1  # row 0 now has an entry above the diagonal
    try:
        kernel(u=u, f=f, **upper)
    except spf.ArgumentError as err:
        print("refused at run time:", str(err).split(";")[0])
    else:
        raise AssertionError("the violated assumption was not caught")

    empty_row = {"rowptr": np.array([0, 0, 1], dtype=np.int32), "col": np.zeros(1, np.int32)}
    try:  # row 0 is empty: the diagonal read L(rowptr(1) - 1) would be L(-1)
        kernel(u=np.zeros(2), f=np.ones(2), L=np.ones(1), N=2, NNZ=1, **empty_row)
    except spf.ArgumentError as err:
        print("refused at run time:", str(err).split(";")[0])
    else:
        raise AssertionError("the out-of-bounds diagonal read was not caught")


def constants_and_locals() -> None:
    comp = spf.Computation("heat")
    comp.add_constant("TSTEPS")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("dt", "double")  # a temporary of the generated function, no argument
    comp.add_stmt(spf.Stmt("$dt$ = 1.0 / (double)TSTEPS;", "{[]}"))
    comp.add_stmt(spf.Stmt("$x$(i) = $x$(i) * (1.0 - $dt$);", "{[i]: 0 <= i < N}"))
    x = np.ones(4)
    comp.compile()(x=x, TSTEPS=4)
    assert np.allclose(x, 0.75)
    source = comp.codegen("c")
    assert "double dt[1] = {0};" in source  # on the stack, not an argument
    print("signature:", next(line for line in source.splitlines() if line.startswith("void")))


if __name__ == "__main__":
    off_by_one()
    triangular_solve()
    constants_and_locals()
