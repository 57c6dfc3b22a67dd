"""Co-iteration end to end (API.md section 20, docs/coiteration.md): loops over two sorted
coordinate lists that share an index run as one merge, intersection or union.

Every merge is checked against a reference: the same computation without the ordering facts
(which codegen scans as the guarded nest: bitwise equal), scipy, and the interpreter, on
random matrices with empty rows, no common coordinates, all common, one list empty, one row,
empty matrices, int32 and int64 indices. Kernels are compiled once per module.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf.analysis.coiteration import NotMergeableError
from spf.errors import CodegenError, SpfError, UndeclaredError

SORTED = "forall v, k: {p}(v) <= k < {p}(v + 1) - 1 => {c}(k) < {c}(k + 1)"
ROW_A = "0 <= i < N && A_rowptr(i) <= p < A_rowptr(i+1)"
ROW_B = "0 <= i < N && B_rowptr(i) <= q < B_rowptr(i+1)"
BOTH = f"{{[i,p,q]: {ROW_A} && B_rowptr(i) <= q < B_rowptr(i+1) && A_col(p) = B_col(q)}}"
MERGE = "while (p < spf_end_p && q < spf_end_q)"


def operands(comp: spf.Computation, dtype: str = "int32", *, sorted_rows: bool = True) -> None:
    """``A`` and ``B`` (``N x M``, CSR): ``A_rowptr``, ``A_col``, ``B_rowptr``, ``B_col``;
    with ``sorted_rows`` the facts that their rows are sorted without duplicates."""
    for m in ("A", "B"):
        comp.declare_uf(
            f"{m}_rowptr",
            domain="{[i]: 0 <= i <= N}",
            range=f"{{[v]: 0 <= v <= {m}_NNZ}}",
            monotonic="nondecreasing",
            dtype=dtype,
        )
        comp.declare_uf(
            f"{m}_col", domain=f"{{[k]: 0 <= k < {m}_NNZ}}", range="{[v]: 0 <= v < M}", dtype=dtype
        )
        if sorted_rows:
            comp.assume(SORTED.format(p=f"{m}_rowptr", c=f"{m}_col"))


def row_dot(dtype: str = "int32", *, sorted_rows: bool = True) -> spf.Computation:
    """``y(i) += A(i,j) * B(i,j)`` summed over the common columns ``j`` of row ``i``."""
    comp = spf.Computation("row_dot")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    comp.add_data_space("B", "double", shape=("B_NNZ",))
    operands(comp, dtype, sorted_rows=sorted_rows)
    comp.add_stmt(spf.Stmt("$y$(i) += $A$(p) * $B$(q);", BOTH, "{[i,p,q] -> [0,i,0,p,0,q,0]}"))
    return comp


def union(comp: spf.Computation, both: str, left: str, right: str | None) -> list[spf.Stmt]:
    """The union of rows ``i`` of A and B: ``both``, ``left`` (A only), ``right`` (B only)."""
    s = [comp.add_stmt(spf.Stmt(both, BOTH, "{[i,p,q] -> [0,i,1,p,0,q,0]}"))]
    s.append(comp.add_stmt(spf.Stmt(left, f"{{[i,p]: {ROW_A}}}", "{[i,p] -> [0,i,1,p,1,0,0]}")))
    if right is not None:
        s.append(
            comp.add_stmt(spf.Stmt(right, f"{{[i,q]: {ROW_B}}}", "{[i,q] -> [0,i,1,q,2,0,0]}"))
        )
    s[0].coiterate("p", "q", left=s[1], right=s[2] if right is not None else None)
    return s


def spadd_size(dtype: str) -> spf.Computation:
    """``C = A + B`` in CSR, phase 1: the row pointers of C (a count per row of the union of
    the two rows' columns, then a prefix sum)."""
    comp = spf.Computation("spadd_size")
    comp.add_data_space("C_rowptr", f"{dtype}_t", shape=("N+1",))
    operands(comp, dtype)
    comp.add_stmt(spf.Stmt("$C_rowptr$(i+1) = 0;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0,0,0,0,0]}"))
    union(comp, *["$C_rowptr$(i+1) += 1;"] * 3)
    comp.add_stmt(
        spf.Stmt("$C_rowptr$(0) = 0;", "{[z]: z = 0 && N >= 0}", "{[z] -> [1,0,0,0,0,0,0]}")
    )
    comp.add_stmt(
        spf.Stmt(
            "$C_rowptr$(i+1) += $C_rowptr$(i);", "{[i]: 0 <= i < N}", "{[i] -> [2,i,0,0,0,0,0]}"
        )
    )
    return comp


def spadd_fill(dtype: str) -> spf.Computation:
    """Phase 2: the columns and values of C, in coordinate order (a cursor ``pos``)."""
    comp = spf.Computation("spadd_fill")
    comp.add_data_space("C_col", f"{dtype}_t", shape=("C_NNZ",))
    comp.add_data_space("C", "double", shape=("C_NNZ",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    comp.add_data_space("B", "double", shape=("B_NNZ",))
    operands(comp, dtype)
    comp.declare_uf(
        "C_rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= C_NNZ}",
        monotonic="nondecreasing",
        dtype=dtype,
    )
    comp.add_local("pos", f"{dtype}_t", (1,), index=True)
    comp.declare_uf("pos", range="{[v]: 0 <= v < C_NNZ}", dtype=dtype)
    comp.add_stmt(
        spf.Stmt("$pos$(0) = C_rowptr(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0,0,0,0,0]}")
    )
    put = "$C_col$(pos(0)) = {c}; $C$(pos(0)) = {v}; $pos$(0) += 1;"
    union(
        comp,
        put.format(c="A_col(p)", v="$A$(p) + $B$(q)"),
        put.format(c="A_col(p)", v="$A$(p)"),
        put.format(c="B_col(q)", v="$B$(q)"),
    )
    return comp


def csr_pair(n: int, m: int, case: str, seed: int) -> tuple[sps.csr_array, sps.csr_array]:
    """Two sorted CSR matrices: ``random``, ``disjoint`` (no common column: A even, B odd),
    ``same`` (one pattern), ``b_empty_rows`` (B's odd rows empty)."""
    rng = np.random.default_rng(seed)

    def rand(mask: Callable[[np.ndarray], np.ndarray] | None = None) -> sps.csr_array:
        d = sps.random_array((n, m), density=0.3, rng=rng, format="csr").toarray()
        if mask is not None:
            d = d * mask(np.indices((n, m)))
        out = sps.csr_array(d)
        out.sort_indices()
        return out

    if case == "disjoint":
        return rand(lambda ix: ix[1] % 2 == 0), rand(lambda ix: ix[1] % 2 == 1)
    if case == "same":
        a = rand()
        b = a.copy()
        b.data = rng.random(b.nnz)
        return a, b
    if case == "b_empty_rows":
        return rand(), rand(lambda ix: ix[0] % 2 == 0)
    return rand(), rand()


CASES = [
    (n, m, case, seed)
    for seed, (n, m) in enumerate([(0, 0), (1, 1), (1, 9), (7, 5), (40, 33), (3, 120)])
    for case in ("random", "disjoint", "same", "b_empty_rows")
]


def index_args(a: sps.csr_array, b: sps.csr_array, dtype: str) -> dict[str, Any]:
    t = np.dtype(dtype)
    return {
        "A_rowptr": a.indptr.astype(t),
        "A_col": a.indices.astype(t),
        "B_rowptr": b.indptr.astype(t),
        "B_col": b.indices.astype(t),
        "N": a.shape[0],
        "M": a.shape[1],
        "A_NNZ": a.nnz,
        "B_NNZ": b.nnz,
    }


# ============================================================================ intersection
@pytest.fixture(scope="module", params=["int32", "int64"])
def dots(request: pytest.FixtureRequest) -> tuple[str, spf.Kernel, spf.Kernel]:
    """(dtype, the merged kernel, the guarded nest of the same loops)."""
    dtype = request.param
    merged, nest = row_dot(dtype), row_dot(dtype, sorted_rows=False)
    assert MERGE in merged.codegen()
    assert MERGE not in nest.codegen()
    return dtype, merged.compile(), nest.compile()


@pytest.mark.parametrize(("n", "m", "case", "seed"), CASES)
def test_intersection_equals_the_guarded_nest(
    dots: tuple[str, spf.Kernel, spf.Kernel], n: int, m: int, case: str, seed: int
) -> None:
    dtype, merged, nest = dots
    a, b = csr_pair(n, m, case, seed)
    args = index_args(a, b, dtype)
    y, ref = np.zeros(n), np.zeros(n)
    merged(y=y, A=a.data, B=b.data, **args)
    nest(y=ref, A=a.data, B=b.data, **args)
    np.testing.assert_array_equal(y, ref)  # the same pairs in the same order: bitwise
    np.testing.assert_allclose(y, (a * b).sum(axis=1), rtol=1e-13, atol=0)


def test_intersection_interpreted_equals_compiled(
    dots: tuple[str, spf.Kernel, spf.Kernel],
) -> None:
    dtype, merged, _ = dots
    for case in ("random", "disjoint", "same", "b_empty_rows"):
        a, b = csr_pair(9, 7, case, 3)
        args = index_args(a, b, dtype)
        y, ref = np.zeros(9), np.zeros(9)
        merged(y=y, A=a.data, B=b.data, **args)
        row_dot(dtype).interpret(y=ref, A=a.data, B=b.data, **args)
        np.testing.assert_array_equal(y, ref)


def test_intersection_in_parallel_rows() -> None:
    comp = row_dot()
    comp.stmts[0].parallelize("i")
    src = comp.codegen()
    assert "#pragma omp parallel for" in src
    assert MERGE in src
    a, b = csr_pair(60, 50, "random", 8)
    y = np.zeros(60)
    comp.compile()(y=y, A=a.data, B=b.data, **index_args(a, b, "int32"))
    np.testing.assert_allclose(y, (a * b).sum(axis=1), rtol=1e-13, atol=0)


def test_intersection_in_cuda_threads_emulated() -> None:
    comp = row_dot()
    comp.stmts[0].split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    src = comp.codegen("cuda")
    kernel = src[src.index("__global__") :]
    assert MERGE in kernel
    a, b = csr_pair(37, 30, "b_empty_rows", 2)
    y = np.zeros(37)
    comp.compile(target="cuda", emulate=True)(y=y, A=a.data, B=b.data, **index_args(a, b, "int32"))
    np.testing.assert_allclose(y, (a * b).sum(axis=1), rtol=1e-13, atol=0)


def test_intersection_hls_simulation() -> None:
    comp = row_dot()
    assert "// merge of loops p and q" in comp.codegen("hls")
    a, b = csr_pair(21, 30, "random", 3)
    y = np.zeros(21)
    comp.compile(target="hls")(y=y, A=a.data, B=b.data, **index_args(a, b, "int32"))
    np.testing.assert_allclose(y, (a * b).sum(axis=1), rtol=1e-13, atol=0)


def test_hls_refuses_a_merge_in_a_pipelined_loop() -> None:
    comp = row_dot()
    comp.stmts[0].pipeline("i")
    with pytest.raises(CodegenError, match="merge of loops p and q inside it"):
        comp.codegen("hls")


@pytest.mark.requires_mpi
def test_intersection_in_a_distributed_loop_builds_for_mpi() -> None:
    comp = row_dot()
    comp.stmts[0].distribute("i")
    src = comp.codegen("mpi")
    assert "const int64_t i = spf_rank;" in src
    assert MERGE in src
    comp.compile(target="mpi")  # mpicc, warning-free


def sparse_dot() -> spf.Computation:
    """``s += x(p) * y(q)`` where ``xi(p) = yi(q)``: sparse vectors whose index lists are
    declared strictly increasing (no outer loop)."""
    comp = spf.Computation("sparse_dot")
    comp.add_data_space("s", "double")
    comp.add_data_space("x", "double", shape=("NX",))
    comp.add_data_space("y", "double", shape=("NY",))
    for v in ("x", "y"):
        comp.declare_uf(
            f"{v}i",
            domain=f"{{[k]: 0 <= k < N{v.upper()}}}",
            range="{[v]: 0 <= v < M}",
            monotonic="increasing",
        )
    comp.add_stmt(
        spf.Stmt(
            "$s$ += $x$(p) * $y$(q);",
            "{[p,q]: 0 <= p < NX && 0 <= q < NY && xi(p) = yi(q)}",
            "{[p,q] -> [0,p,0,q,0]}",
        )
    )
    return comp


def test_sorted_lists_by_declaration_merge_at_the_top_level() -> None:
    comp = sparse_dot()
    assert "while (p < spf_end_p" in comp.codegen()
    xi, yi = np.array([0, 3, 4, 9], np.int32), np.array([1, 3, 9, 11, 12], np.int32)
    x, y = np.arange(1.0, 5.0), np.arange(1.0, 6.0)
    s = np.zeros(())
    comp.compile()(s=s, x=x, y=y, xi=xi, yi=yi, M=13)
    assert float(s) == 2.0 * 2.0 + 4.0 * 3.0
    s2 = np.zeros(())
    comp.interpret(s=s2, x=x, y=y, xi=xi, yi=yi, M=13)
    assert float(s2) == float(s)
    empty = np.zeros(())
    kernel = comp.compile()
    kernel(s=empty, x=x[:0], y=y, xi=xi[:0], yi=yi, M=13)
    assert float(empty) == 0.0


@pytest.mark.parametrize(
    "short",
    [[0], [999], [5, 6, 500, 998], [1000, 1001], list(range(0, 1000, 97)), []],
    ids=["first", "last", "scattered", "past_the_end", "strided", "empty"],
)
def test_intersection_gallops_over_a_long_list(short: list[int]) -> None:
    """A short list against a long one: the cursor behind jumps (doubling, then bisection)
    and must land on every common coordinate, from either side."""
    kernel = sparse_dot().compile()
    long_ = np.arange(0, 1000, dtype=np.int32)
    short_ = np.array(short, np.int32)
    rng = np.random.default_rng(len(short))
    xl, xs = rng.random(long_.size), rng.random(short_.size)
    want = sum(xl[c] * xs[k] for k, c in enumerate(short) if c < 1000)
    for xi, yi, x, y in ((long_, short_, xl, xs), (short_, long_, xs, xl)):
        s = np.zeros(())
        kernel(s=s, x=x, y=y, xi=xi, yi=yi, M=1002)
        assert float(s) == pytest.approx(want, rel=1e-14)


# ============================================================================ ILU(0)
def test_ilu0_update_is_a_merge() -> None:
    comp = spf.kernels.ilu0_csr()
    src = comp.codegen()
    assert "while (j1 < spf_end_j1 && j2 < spf_end_j2)" in src
    assert "if (col_j2 ==" not in src
    assert "for (int64_t j2" not in src
    assert "for j1 [coiterate(j2)]:" in comp.loop_structure()
    assert len(comp.trace) == 0  # found by codegen: the kernel's schedule is as before


@pytest.fixture(scope="module")
def ilu0_pair() -> tuple[spf.Kernel, spf.Kernel]:
    """(ilu0_csr() with its merge, the same kernel as the guarded nest), int32 indices."""
    nest = ilu0_without_sorted_columns()
    assert "while" not in nest.codegen()
    return spf.kernels.ilu0_csr().compile(), nest.compile()


def diagonally_dominant(n: int, density: float, seed: int) -> sps.csr_array:
    """Random ``n x n`` CSR with a stored, dominant diagonal and some empty off-diagonal rows."""
    rng = np.random.default_rng(seed)
    off = sps.random_array((n, n), density=density, rng=rng, format="csr").toarray()
    off[:: max(2, n // 3)] = 0.0  # rows with the diagonal alone
    out = sps.csr_array(off + np.diag(2.0 + off.sum(axis=1)))
    out.sort_indices()
    return out


def test_ilu0_merge_is_bitwise_the_guarded_nest(
    ilu0_pair: tuple[spf.Kernel, spf.Kernel], suitesparse_dir: Any
) -> None:
    from spf.sparse import ilu0_args, read_matrix_market

    merged, nest = ilu0_pair
    mats = [diagonally_dominant(n, d, n) for n, d in [(1, 1.0), (2, 0.5), (17, 0.3), (90, 0.1)]]
    mats.append(read_matrix_market(suitesparse_dir / "olm1000.mtx"))
    for a in mats:
        args, ref = ilu0_args(a), ilu0_args(a)
        merged(**args)
        nest(**ref)
        np.testing.assert_array_equal(args["A"], ref["A"])


# ============================================================================ union
@pytest.fixture(scope="module", params=["int32", "int64"])
def spadd(request: pytest.FixtureRequest) -> tuple[str, spf.Kernel, spf.Kernel]:
    dtype = request.param
    return dtype, spadd_size(dtype).compile(), spadd_fill(dtype).compile()


def run_spadd(
    a: sps.csr_array, b: sps.csr_array, dtype: str, size: Any, fill: Any
) -> sps.csr_array:
    """C = A + B with the two phases (``size``/``fill``: kernels or ``interpret``)."""
    args = index_args(a, b, dtype)
    rowptr = np.zeros(a.shape[0] + 1, dtype)
    size(C_rowptr=rowptr, **args)
    nnz = int(rowptr[-1])
    col, val = np.zeros(nnz, dtype), np.zeros(nnz)
    fill(C_rowptr=rowptr, C_col=col, C=val, A=a.data, B=b.data, C_NNZ=nnz, **args)
    return sps.csr_array((val, col, rowptr), shape=a.shape)


@pytest.mark.parametrize(("n", "m", "case", "seed"), CASES)
def test_union_spadd_equals_scipy(
    spadd: tuple[str, spf.Kernel, spf.Kernel], n: int, m: int, case: str, seed: int
) -> None:
    dtype, size, fill = spadd
    a, b = csr_pair(n, m, case, seed)
    c = run_spadd(a, b, dtype, size, fill)
    want = sps.csr_array(a + b)
    want.sort_indices()
    assert c.has_sorted_indices
    np.testing.assert_array_equal(c.indptr, want.indptr)  # the union of the patterns
    np.testing.assert_array_equal(c.indices, want.indices)
    np.testing.assert_array_equal(c.data, want.data)


def test_union_interpreted_equals_compiled(spadd: tuple[str, spf.Kernel, spf.Kernel]) -> None:
    dtype, size, fill = spadd
    sizes, fills = spadd_size(dtype), spadd_fill(dtype)
    for case in ("random", "disjoint", "same", "b_empty_rows"):
        a, b = csr_pair(8, 11, case, 5)
        c = run_spadd(a, b, dtype, size, fill)
        ref = run_spadd(a, b, dtype, sizes.interpret, fills.interpret)
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(c, name), getattr(ref, name))


def test_union_with_one_side() -> None:
    """A left join: ``A + B`` on A's pattern (B's other entries are dropped)."""
    comp = spf.Computation("masked_add")
    comp.add_data_space("C", "double", shape=("A_NNZ",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    comp.add_data_space("B", "double", shape=("B_NNZ",))
    operands(comp)
    union(comp, "$C$(p) = $A$(p) + $B$(q);", "$C$(p) = $A$(p);", None)
    src = comp.codegen()
    assert "for (; p < spf_end_p; p++)" in src
    assert "for (; q < spf_end_q" not in src
    a, b = csr_pair(12, 10, "random", 9)
    args = index_args(a, b, "int32")
    c, ref = np.zeros(a.nnz), np.zeros(a.nnz)
    comp.compile()(C=c, A=a.data, B=b.data, **args)
    comp.interpret(C=ref, A=a.data, B=b.data, **args)
    dense = (a + b).toarray()
    rows = np.repeat(np.arange(12), np.diff(a.indptr))
    np.testing.assert_array_equal(c, dense[rows, a.indices])
    np.testing.assert_array_equal(c, ref)


def test_union_loop_structure_and_json_round_trip() -> None:
    comp = spadd_fill("int32")
    text = "for p [coiterate(q, left=s2, right=s3)]:\n    for q:\n      s1\n    s2\n    s3"
    assert text in comp.loop_structure()
    assert 'comp.stmt("s1").coiterate("p", "q", left="s2", right="s3")' in comp.trace.as_python()
    again = spf.Computation.from_json(comp.to_json())
    assert again.codegen() == comp.codegen()


# ============================================================================ refusals
def ilu0_without_sorted_columns() -> spf.Computation:
    """ilu0_csr with every fact but the sorted columns."""
    data = json.loads(spf.kernels.ilu0_csr().to_json())
    data["assumptions"] = [a for a in data["assumptions"] if "col(k+1)" not in a]
    assert len(data["assumptions"]) == 4
    return spf.Computation.from_json(json.dumps(data))


def test_unproved_order_stays_a_guarded_nest() -> None:
    src = ilu0_without_sorted_columns().codegen()
    assert "while" not in src
    assert "== col_" in src


def test_coiterate_names_the_missing_fact() -> None:
    comp = ilu0_without_sorted_columns()
    with pytest.raises(NotMergeableError, match=r"do not prove that col\(j1\) increases") as err:
        comp.stmt("s1").coiterate("j1", "j2")
    assert "comp.assume('forall v, k: rowptr(v) <= k < rowptr(v + 1) - 1 =>" in str(err.value)
    assert comp.stmt("s1").tags == {}  # refused: nothing changed
    comp.assume("forall v, k: rowptr(v) <= k < rowptr(v + 1) - 1 => col(k) < col(k + 1)")
    comp.stmt("s1").coiterate("j1", "j2")  # the suggested fact proves it
    assert "while (j1 < spf_end_j1" in comp.codegen()


def test_nondecreasing_keys_are_not_merged() -> None:
    """Duplicates in a list would make the two cursors miss pairs."""
    comp = row_dot(sorted_rows=False)
    for m in ("A", "B"):
        comp.assume(
            f"forall v, k: {m}_rowptr(v) <= k < {m}_rowptr(v + 1) - 1 => {m}_col(k) <= {m}_col(k + 1)"
        )
    assert MERGE not in comp.codegen()
    with pytest.raises(NotMergeableError, match=r"A_col\(p\) increases strictly"):
        comp.stmts[0].coiterate("p", "q")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.stmts[0].coiterate("q", "p"), "must be its two innermost loops"),
        (lambda c: c.stmts[0].coiterate("i", "p"), "relates i and p by"),
        (lambda c: c.stmts[0].unroll("q", 2).coiterate("p", "q"), "loop q is tagged unroll"),
        (
            lambda c: (
                c.add_stmt(
                    spf.Stmt("$y$(i) += 1.0;", f"{{[i,p]: {ROW_A}}}", "{[i,p] -> [0,i,0,p,1]}")
                )
                and c.stmts[0].coiterate("p", "q")
            ),
            "statement s1 shares the loops around p",
        ),
    ],
)
def test_coiterate_refusals(change: Callable[[spf.Computation], object], message: str) -> None:
    comp = row_dot()
    with pytest.raises(NotMergeableError, match=message):
        change(comp)


def test_coiterate_unknown_loop() -> None:
    with pytest.raises(UndeclaredError, match="unknown loop 'r'"):
        row_dot().stmts[0].coiterate("p", "r")


def test_union_branch_over_another_range_is_refused() -> None:
    comp = row_dot()
    left = comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(p);", f"{{[i,p]: {ROW_A} && p > A_rowptr(i)}}", "{[i,p] -> [0,i,0,p,1]}"
        )
    )
    with pytest.raises(NotMergeableError, match="must run over the range of p"):
        comp.stmts[0].coiterate("p", "q", left=left)


def test_union_branch_filter_is_a_guard() -> None:
    """A condition on the position alone only filters a branch's instances."""
    comp = row_dot()
    left = comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(p);", f"{{[i,p]: {ROW_A} && A_col(p) < i}}", "{[i,p] -> [0,i,0,p,1]}"
        )
    )
    comp.stmts[0].coiterate("p", "q", left=left)
    a, b = csr_pair(15, 15, "random", 4)
    args = index_args(a, b, "int32")
    y, ref = np.zeros(15), np.zeros(15)
    comp.compile()(y=y, A=a.data, B=b.data, **args)
    comp.interpret(y=ref, A=a.data, B=b.data, **args)
    np.testing.assert_array_equal(y, ref)
    only_a = (a.toarray() != 0) & (b.toarray() == 0) & np.tril(np.ones((15, 15)), -1).astype(bool)
    np.testing.assert_allclose(y, (a * b).sum(axis=1) + (a.toarray() * only_a).sum(axis=1))


def test_union_branch_scheduled_elsewhere_is_refused() -> None:
    comp = row_dot()
    left = comp.add_stmt(
        spf.Stmt("$y$(i) += $A$(p);", f"{{[i,p]: {ROW_A}}}", "{[i,p] -> [1,i,0,p,0]}")
    )
    with pytest.raises(NotMergeableError, match="must be scheduled like s0 up to the merge"):
        comp.stmts[0].coiterate("p", "q", left=left)


def test_codegen_refuses_a_merge_a_later_command_broke() -> None:
    comp = row_dot()
    comp.stmts[0].coiterate("p", "q").split("q", 4, "q0", "q1")
    with pytest.raises(CodegenError, match="cannot run as the merge coiterate"):
        comp.codegen()
    assert "for q0" in comp.loop_structure()  # still shown, as scheduled


def test_interpret_refuses_a_broken_union() -> None:
    comp = spadd_size("int32")
    comp.stmt("s2").split("p", 2, "p0", "p1")
    a, b = csr_pair(3, 3, "random", 1)
    with pytest.raises(SpfError, match="interpret"):
        comp.interpret(C_rowptr=np.zeros(4, np.int32), **index_args(a, b, "int32"))


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize(
    ("acol", "bcol"),
    [([3, 1, 1], [3, 1, 1]), ([3, 1], [3, 1]), ([1, 2, 2], [2, 2]), ([2, 2], [2, 2, 3])],
)
def test_checked_union_refuses_unsorted_rows_where_both_lists_hold_the_column(
    acol: list[int], bcol: list[int], team: int
) -> None:
    # the union's one-sided bodies run only where the other list lacks the coordinate, so
    # they do not cover the ordering facts' points: rows out of order or with duplicates
    # where A and B share the column were accepted by the single pass (one thread) and
    # returned C's columns unsorted; now refused on both paths, as the two phases refuse them
    from spf.formats import CSR
    from spf.testing import fixed_team

    k = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR, index_dtype="int32")
    args: dict[str, Any] = {"I": 1, "J": 4}
    for m, col in (("A", acol), ("B", bcol)):
        args |= {m: np.arange(1.0, len(col) + 1), f"{m}_col": np.array(col, np.int32),
                 f"{m}_rowptr": np.array([0, len(col)], np.int32)}  # fmt: skip
    with fixed_team(team), pytest.raises(spf.ArgumentError, match=r"_col\(k1\) < \w_col\(k2\)"):
        k.compile()(**args)


def test_a_checked_union_with_sides_named_crosswise_checks_each_cursor_in_the_loops() -> None:
    # the sides name their positions any way (left over [i, q] is A's, right over [i, p]
    # B's): each fact is checked at every advance of its own cursor, in its side and in the
    # both body (before: in a pass before the loops), and broken rows are refused wherever
    # A and B hold the column
    comp = spf.Computation("crosswise")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("A_NNZ",))
    comp.add_data_space("B", "double", shape=("B_NNZ",))
    operands(comp)
    both = comp.add_stmt(
        spf.Stmt("$y$(i) += $A$(p) * $B$(q);", BOTH, "{[i,p,q] -> [0,i,0,p,0,q,0]}")
    )
    rows = (("A", "q", "{[i,q] -> [0,i,0,q,1,0,0]}"), ("B", "p", "{[i,p] -> [0,i,0,p,2,0,0]}"))
    row = "{{[i,{k}]: 0 <= i < N && {m}_rowptr(i) <= {k} < {m}_rowptr(i+1)}}"
    left, right = (
        comp.add_stmt(spf.Stmt(f"$y$(i) += ${m}$({k});", row.format(m=m, k=k), sched))
        for m, k, sched in rows
    )
    both.coiterate("p", "q", left=left, right=right)
    k = comp.compile()
    assert all(c.first == "in loop" for c in k.check_cost), str(k.check_cost)
    for acol, bcol, broken in (([3, 1], [3, 1], "A"), ([1, 2, 2], [2, 2], "A"),
                               ([2, 1], [3], "A"), ([3], [2, 1], "B"), ([2], [2, 2], "B")):  # fmt: skip
        args: dict[str, Any] = {"N": 1, "M": 5, "y": np.zeros(1)}
        for m, col in (("A", acol), ("B", bcol)):
            args |= {m: np.ones(len(col)), f"{m}_col": np.array(col, np.int32),
                     f"{m}_rowptr": np.array([0, len(col)], np.int32)}  # fmt: skip
        with pytest.raises(spf.ArgumentError, match=rf"{broken}_col\(k\) < {broken}_col\(k \+ 1\)"):
            k(**args)
    sorted_rows = {"N": 1, "M": 5, "y": np.zeros(1), "A": np.ones(2), "B": np.ones(2)}
    for m, col in (("A", [1, 2]), ("B", [2, 3])):
        sorted_rows |= {
            f"{m}_col": np.array(col, np.int32),
            f"{m}_rowptr": np.array([0, 2], np.int32),
        }
    k(**sorted_rows)
    assert sorted_rows["y"][0] == 3.0  # 1 * 1 at column 2, 1 at columns 1 and 3
