"""Sparse formats as relations: SpMV over every built-in format, a format of your own,
and conversions synthesized from two relations, the SELL-C-sigma inspector among them
(docs/formats.md).

Run: ``python examples/format_relations.py``; every result is checked against scipy.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert
from spf.sparse import csr_args


def main() -> None:
    rng = np.random.default_rng(0)
    m = sp.random_array((300, 200), density=0.05, rng=rng, format="csr")
    x = rng.standard_normal(200)
    want = m @ x

    # 1. SpMV generated from each format's storage relation
    for fmt in (COO, CSR, CSC, DIA, ELL, BCSR(2, 2), SELL(8, 32)):
        args = spf.sparse.format_args(m, fmt)
        rows = 2 * args["NB"] if "NB" in args else 300
        xs = np.zeros(2 * args["MB"] if "MB" in args else 200)
        xs[:200] = x
        y = np.zeros(rows)
        spf.kernels.spmv(fmt).compile()(y=y, x=xs, **args)
        assert np.allclose(y[:300], want), fmt.name
        print(f"{fmt.name:8s} loops {', '.join(fmt.loops)}")

    # 2. a format of your own: CSR with its arrays named otherwise
    mine = spf.Format(
        "ROWS",
        coords="[r, c]",
        storage="{[r, c] -> [e]: start(r) <= e < start(r+1) && c = colidx(e)}",
        ufs=[spf.UF("start", monotonic="nondecreasing"), spf.UF("colidx")],
        assume=["forall r, e1, e2: start(r) <= e1 < e2 < start(r+1) => colidx(e1) < colidx(e2)"],
        value="vals",
    )
    args = spf.sparse.csr_args(m, names={"rowptr": "start", "col": "colidx", "A": "vals"})
    y = np.zeros(300)
    spf.kernels.spmv(mine).compile()(y=y, x=x, **args)
    assert np.allclose(y, want)

    # 3. conversions, one spf Computation each; duplicates summed as scipy does
    coo = sp.coo_array(m)
    dup = sp.coo_array(
        (np.concatenate([coo.data, coo.data]), (np.tile(coo.row, 2), np.tile(coo.col, 2))),
        shape=m.shape,
    )
    conv = convert(COO, CSR)
    print(f"COO -> CSR: {len(conv.stmts)} statements in one Computation")
    out = conv.compile()(**spf.sparse.coo_args(dup))
    assert np.array_equal(out["rowptr"], m.indptr)
    assert np.array_equal(out["col"], m.indices)
    assert np.allclose(out["A"], 2 * m.data)
    csc = convert(CSR, CSC).compile()(**out)
    ref = (2 * m).tocsc()
    assert np.array_equal(csc["colptr"], ref.indptr)
    assert np.array_equal(csc["row"], ref.indices)
    back = convert(CSC, COO).compile()(**csc)
    y = np.zeros(300)
    spf.kernels.spmv(COO).compile()(y=y, x=x, **back)
    assert np.allclose(y, 2 * want)
    print(f"COO -> CSR -> CSC -> COO: {back['NNZ']} entries, SpMV matches scipy")

    # 4. the SELL-C-sigma inspector, synthesized from the SELL relation: row lengths, rows
    #    sorted by length within windows of sigma, chunk widths and pointers, placement
    to_sell = convert(CSR, SELL(8, 32))
    print(f"CSR -> SELL(8, 32): {len(to_sell.stmts)} statements in one Computation")
    packed = to_sell.compile()(**spf.sparse.csr_args(m))
    reference = spf.sparse.sell_args(m, 8, 32)
    assert all(np.array_equal(packed[key], reference[key]) for key in reference)
    y = np.zeros(300)
    spf.kernels.spmv(SELL(8, 32)).compile()(y=y, x=x, **packed)
    assert np.allclose(y, want)
    built = spf.formats.sell(8, 32).inspect_matrix(m)  # the same conversion underneath
    assert np.array_equal(built.val, packed["val"])
    print(f"SELL(8, 32): {packed['NV']} slots for {m.nnz} entries, SpMV matches scipy")
    for fmt in (ELL, DIA, SELL(8, 32), BCSR(2, 2)):  # laid out and back, padding dropped
        out = convert(fmt, CSR).compile()(**convert(CSR, fmt).compile()(**csr_args(m)))
        assert np.array_equal(out["col"], m.indices), fmt.name


if __name__ == "__main__":
    main()
