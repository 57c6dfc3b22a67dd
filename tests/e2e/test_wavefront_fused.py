"""Fused sparse kernels through one inspector (API.md section 18, docs/inspection.md):
kernels appended with ``append_computation`` whose row loops are fused with ``comp.fuse``
(statically illegal: the second kernel reads rows the first writes later) run as one
wavefront, ``comp.wavefront(loop)``, whose inspector orders the dependences within each
kernel and between them. Each fused kernel equals the kernels run one after the other
(compiled on their own, serially) bitwise, at 1 and 2 OpenMP threads, by levels and coarse
levels, on random and SuiteSparse matrices, int32 and int64 indices, an empty matrix and
one row: (a) a lower solve then ``y = A·x``, (b) a Gauss-Seidel sweep then ``r = b - A·x``,
(c) ILU(0) then the unit-lower and the upper solves of its factors."""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args, read_matrix_market

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime.kernel import Kernel

RANDOM = [(1, 1.0, 0), (2, 0.5, 1), (7, 0.3, 3), (33, 0.1, 4), (250, 0.02, 5), (0, 0.0, 6)]
"""(rows, density, seed): one row, odd sizes, an empty matrix."""
SUITESPARSE = ["cryg2500.mtx", "bcsstk13.mtx", "olm1000.mtx"]
VECTORS = ("x", "b", "y", "r", "z")


def residual() -> spf.Computation:
    """``r = b - A·x``, ``A`` in CSR."""
    c = spf.Computation("residual")
    for name in ("r", "x", "b"):
        c.add_data_space(name, "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(spf.Stmt("$r$(i) = $b$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    c.add_stmt(
        spf.Stmt(
            "$r$(i) -= $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [0,i,1,k,0,j,0]}",
        )
    )
    return c


def pieces(kind: str, dtype: str) -> list[tuple[spf.Computation, dict[str, str]]]:
    """The kernels of each example and how their data spaces bind to the fused one's."""
    if kind == "solve_mv":
        return [
            (kernels.trsv_diag_csr(index_dtype=dtype), {"x": "x", "A": "A", "b": "b"}),
            (kernels.spmv_csr(index_dtype=dtype), {"y": "y", "A": "A", "x": "x"}),
        ]
    if kind == "gs_residual":
        return [
            (kernels.gauss_seidel_csr(index_dtype=dtype), {"x": "x", "A": "A", "b": "b"}),
            (residual(), {"r": "r", "A": "A", "x": "x", "b": "b"}),
        ]
    return [
        (kernels.ilu0_csr(index_dtype=dtype), {"A": "A"}),
        (kernels.trsv_diag_csr(unit=True, index_dtype=dtype), {"x": "y", "A": "A", "b": "b"}),
        (kernels.trsv_diag_csr(upper=True, index_dtype=dtype), {"x": "z", "A": "A", "b": "y"}),
    ]


def fused(kind: str, dtype: str = "int32") -> spf.Computation:
    """The kernels of ``kind`` appended one after the other, every statement of each fused
    into the first kernel's row loop (one ``fuse`` per statement)."""
    comp = spf.Computation(kind)
    for name in VECTORS:
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    last = ""
    for k, (kernel, binding) in enumerate(pieces(kind, dtype)):
        before = len(comp.stmts)
        comp.append_computation(kernel, "{[]}", f"{{[] -> [{k}]}}", binding)
        for stmt in comp.stmts[before:] if k else ():
            comp.fuse(last, stmt, 1)
            last = stmt.name
        last = last if k else comp.stmts[-1].name
    return comp


@pytest.fixture(scope="module")
def separate() -> dict[str, list[Kernel]]:
    """Each example's kernels compiled on their own (int32 indices: the index type does not
    change the floating-point operations)."""
    return {kind: [k.compile() for k, _ in pieces(kind, "int32")] for kind in KINDS}


KINDS = ("solve_mv", "gs_residual", "ilu_solves")
FUSED = [
    ("solve_mv", "int32", "levels"),
    ("solve_mv", "int64", "auto"),  # the default: coarse levels of the fused nodes
    ("gs_residual", "int64", "levels"),
    ("gs_residual", "int32", "coarse"),
    ("ilu_solves", "int32", "coarse"),
    ("ilu_solves", "int64", "auto"),
]
COARSE_STRATEGIES = ("coarse", "levels")
"""What a plan of a coarse (or auto) fused kernel runs as, each checked against the kernels
run one after the other."""


@pytest.fixture(scope="module", params=FUSED, ids=["-".join(p) for p in FUSED])
def fused_kernel(request: pytest.FixtureRequest) -> tuple[str, str, WavefrontKernel]:
    kind, dtype, method = request.param
    comp = fused(kind, dtype)
    comp.wavefront(comp.stmts[0].loops[0], method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return kind, dtype, k


def random_matrix(n: int, density: float, seed: int) -> sps.csr_array:
    """A random square matrix with a dominant diagonal, sorted columns."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng, format="csr")
    m = sps.csr_array(m + sps.diags_array(2.0 + rng.random(n) * max(n, 1) * density))
    m.sum_duplicates()
    m.sort_indices()
    return m


def run_separately(kind: str, ks: list[Kernel], m: Any, b: np.ndarray) -> dict[str, np.ndarray]:
    args = gauss_seidel_args(m)
    n = m.shape[0]
    out = {name: np.zeros(n) for name in VECTORS if name != "b"}
    out["A"] = args.pop("A").copy()
    if kind == "solve_mv":
        ks[0](x=out["x"], A=out["A"], b=b, **args)
        ks[1](y=out["y"], A=out["A"], x=out["x"], rowptr=args["rowptr"], col=args["col"])
    elif kind == "gs_residual":
        ks[0](x=out["x"], A=out["A"], b=b, **args)
        ks[1](r=out["r"], A=out["A"], x=out["x"], b=b, rowptr=args["rowptr"], col=args["col"])
    else:
        ks[0](A=out["A"], **args)
        ks[1](x=out["y"], A=out["A"], b=b, **args)
        ks[2](x=out["z"], A=out["A"], b=out["y"], **args)
    return out


def run_fused(k: WavefrontKernel, dtype: str, m: Any, b: np.ndarray, strategy: str) -> Any:
    args = gauss_seidel_args(m, index_dtype=dtype)
    out = {name: np.zeros(m.shape[0]) for name in VECTORS if name != "b"}
    out["A"] = args.pop("A").copy()
    threads = {"threads": 2} if k._coarse else {}
    plan = k.inspect(strategy=strategy, **threads, **args)
    k(**out, b=b, plan=plan, **args)
    return out, plan


def check(fk: tuple[str, str, WavefrontKernel], ks: dict[str, list[Kernel]], m: Any) -> Any:
    """The fused kernel's plans (levels; a coarse kernel's coarse and levels plans, for two
    threads: parts a team of one or two runs alike) equal the kernels one after the other."""
    kind, dtype, k = fk
    b = np.random.default_rng(m.shape[0]).standard_normal(m.shape[0])
    want = run_separately(kind, ks[kind], m, b)
    strategies = COARSE_STRATEGIES if k._coarse else ("wavefront",)
    for strategy in strategies:
        got, plan = run_fused(k, dtype, m, b, strategy)
        assert plan.strategy == strategy
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"{kind} {strategy}: {name}")
    return plan


@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_fused_equals_kernels_one_after_the_other_random(
    fused_kernel: Any, separate: Any, omp_threads: int, n: int, density: float, seed: int
) -> None:
    check(fused_kernel, separate, random_matrix(n, density, seed))


@pytest.mark.parametrize("name", SUITESPARSE)
def test_fused_equals_kernels_one_after_the_other_suitesparse(
    fused_kernel: Any, separate: Any, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = sps.csr_array(read_matrix_market(path))
    m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))  # every diagonal
    m.sum_duplicates()
    m.sort_indices()
    check(fused_kernel, separate, m)


def test_fused_serial_strategy_runs_the_kernels_one_after_the_other(
    fused_kernel: Any, separate: Any
) -> None:
    """A plan whose levels are too narrow runs the kernels in program order, unfused (the
    fused loop alone would break their dependences)."""
    kind, dtype, k = fused_kernel
    m = random_matrix(120, 0.05, 11)
    b = np.ones(120)
    got, plan = run_fused(k, dtype, m, b, "serial")
    assert plan.strategy == "serial"
    for name, value in run_separately(kind, separate[kind], m, b).items():
        np.testing.assert_array_equal(got[name], value, err_msg=f"{kind}: {name}")


def test_fused_levels_give_each_kernel_its_own_nodes(fused_kernel: Any, separate: Any) -> None:
    """Iteration ``i`` of kernel ``g`` is node ``g * N + i``: a row of the second kernel can
    run before a later row of the first (the plan orders nodes, not rows)."""
    kind, _, _k = fused_kernel
    m = random_matrix(200, 0.03, 12)
    plan = check(fused_kernel, separate, m)
    groups = len(pieces(kind, "int32"))
    assert len(plan.order) == groups * 200
    level = plan.level_of.reshape(groups, 200)
    assert (level[-1] > 0).all()  # every row of the last kernel waits on an earlier one
    assert plan.levels < groups * 200


def test_fused_without_wavefront_is_refused_naming_the_dependence() -> None:
    comp = fused("solve_mv")
    with pytest.raises(spf.IllegalScheduleError) as err:
        comp.codegen()
    text = str(err.value)
    assert "flow dependence on 'x'" in text
    assert "comp.wavefront('_i0_i') orders this dependence at run time" in text


def test_fusing_one_statement_of_a_kernel_is_kept_until_compile() -> None:
    """``fuse`` moves one statement: the rest of the upper solve stays in its own loop
    (fuse keeps that half-done fusion, which the next fuse would finish); compile refuses
    the dependence the fused statement breaks until a wavefront orders it."""
    comp = spf.Computation("half")
    for name in VECTORS:
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    for k, (kernel, binding) in enumerate(pieces("ilu_solves", "int32")[1:]):
        comp.append_computation(kernel, "{[]}", f"{{[] -> [{k}]}}", binding)
    comp.fuse("s1", "s2", 1)  # the upper solve's first statement only
    with pytest.raises(spf.IllegalScheduleError, match=r"comp\.wavefront"):
        comp.codegen()


def test_dense_illegal_fusion_is_still_refused_by_fuse() -> None:
    """No index array: a fusion that breaks a dependence is refused at once, as before."""
    comp = spf.Computation("dense")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("c", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(spf.Stmt("$c$(i) = $a$(N-1-i);", "{[i]: 0 <= i < N}", "{[i] -> [1,i,0]}"))
    with pytest.raises(spf.IllegalScheduleError, match="flow dependence on 'a'"):
        comp.fuse("s0", "s1", 1)
    assert comp.stmt("s1").schedule == comp.stmt("s1").original_schedule


def test_fused_kernels_refuse_p2p_naming_the_methods_that_run() -> None:
    comp = fused("solve_mv")
    with pytest.raises(spf.CodegenError, match="use method='auto', 'coarse' or 'levels'"):
        comp.wavefront("_i0_i", method="p2p")


def test_fused_coarse_parts_stream_each_kernels_rows() -> None:
    """On a 2-D grid the coarse levels of the fused solve and product hold runs of
    consecutive rows of each kernel (pieces of blocks of nodes) where the levels hold rows a
    grid row apart, and far fewer coarse levels than levels;
    every dependence lies inside a part or reaches a later coarse level (the part check
    passes on a plan rebuilt from the same arrays)."""
    comp = fused("solve_mv")
    comp.wavefront("_i0_i", method="coarse")
    k = comp.compile()
    m = sps.csr_array(spf.sparse.poisson2d(200))
    args = gauss_seidel_args(m)
    a = args.pop("A")
    plan = k.inspect(threads=2, **args)
    assert plan.strategy == "coarse"
    assert plan.coarse_levels < plan.levels / 1.5
    order = np.asarray(plan.coarse_order)
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]

    def runs(nodes: np.ndarray) -> int:  # maximal runs of consecutive nodes
        return int(np.count_nonzero(np.diff(nodes) != 1)) + 1

    assert runs(order) < runs(np.asarray(plan.order)) / 8  # the levels: each node alone
    assert all((np.diff(order[lo:hi]) > 0).all() for lo, hi in itertools.pairwise(ptr))
    rebuilt = dataclasses.replace(plan, coarse_order=order.copy())
    out = {name: np.zeros(m.shape[0]) for name in VECTORS if name != "b"}
    k(**out, A=a.copy(), b=np.ones(m.shape[0]), plan=rebuilt, **args)  # checked, accepted
    n = 2 * m.shape[0]
    racing = dataclasses.replace(  # the solve's rows and the product's as two parallel parts
        plan,
        coarse_levels=1,
        coarse_ptr=np.array([0, 2, *[2] * (n - 1)]),
        part_ptr=np.array([0, n // 2, *[n] * (n - 1)]),
        coarse_order=np.arange(n),
    )
    with pytest.raises(spf.ArgumentError, match="two parts of one coarse level"):
        k(**out, A=a.copy(), b=np.ones(m.shape[0]), plan=racing, **args)


def test_fused_coarse_parts_keep_the_product_off_the_solves_chain() -> None:
    """On a 2-D grid the wide blocks' coarse level runs one chain of solve rows (a block
    that one thread runs in order) and the product rows that wait on the rows before it;
    weighed by kind (``coarse.CHAIN_WEIGHT``: a solve row's dependences cost about twice a
    product row's), the solve's part takes almost none of the product's rows, which go to
    the other thread, where counted by dependences alone (every unit alike) the solve's
    part took about a quarter of them (docs/inspection.md)."""
    comp = fused("solve_mv")
    comp.wavefront("_i0_i", method="coarse")
    k = comp.compile()
    m = sps.csr_array(spf.sparse.poisson2d(200))
    args = gauss_seidel_args(m)
    args.pop("A")
    plan = k.inspect(threads=2, **args)
    n = m.shape[0]
    order = np.asarray(plan.coarse_order)
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    shared = sum(
        int(np.count_nonzero(order[lo:hi] >= n))
        for lo, hi in itertools.pairwise(ptr)
        if (order[lo:hi] < n).any()
    )
    assert plan.coarse_levels < 20  # the wide blocks' plan (4096 rows: 20 grid rows)
    assert shared < n // 20, f"{shared:,} of {n:,} product rows share a part with solve rows"


def test_fused_run_blocks_cut_by_rows_equal_the_kernels(
    monkeypatch: pytest.MonkeyPatch, separate: dict[str, list[Kernel]]
) -> None:
    """The plan of run blocks cut by rows (what ``auto`` plans on 2-D Poisson 1M; forced here
    on a smaller grid with shorter runs by making its estimate win) gives most parts rows of both kernels over
    one range of rows; the fused kernel on it equals the kernels one after the other
    bitwise, and rebuilt from its arrays the part check accepts it."""
    from spf.runtime import coarse

    seen: list[coarse.Parts] = []

    def first_wins(parts: coarse.Parts, total: int, unit: float = 1.0) -> float:
        seen.append(parts)
        return 10.0 if len(seen) == 1 else 1.0  # the run blocks' candidate comes first

    monkeypatch.setattr(coarse, "estimate", first_wins)
    monkeypatch.setattr(coarse, "RUN_SHIFT", 4)  # 16-row runs: ~8 per grid row, as 128 on 1M
    comp = fused("solve_mv", "int64")
    comp.wavefront("_i0_i", method="coarse")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    m = sps.csr_array(spf.sparse.poisson2d(120))
    b = np.random.default_rng(9).standard_normal(m.shape[0])
    got, plan = run_fused(k, "int64", m, b, "coarse")
    n = m.shape[0]
    order = np.asarray(plan.coarse_order)
    ptr = np.asarray(plan.part_ptr)[: plan.parts + 1]
    mixed = sum(
        1
        for lo, hi in itertools.pairwise(ptr)
        if (order[lo:hi] < n).any() and (order[lo:hi] >= n).any()
    )
    assert mixed > plan.parts * 9 // 10, f"{mixed} of {plan.parts} parts hold both kernels' rows"
    want = run_separately("solve_mv", separate["solve_mv"], m, b)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    args = gauss_seidel_args(m, index_dtype="int64")
    out = {name: np.zeros(n) for name in VECTORS if name != "b"}
    out["A"] = args.pop("A").copy()
    rebuilt = dataclasses.replace(plan, coarse_order=order.copy())
    k(**out, b=b, plan=rebuilt, **args)  # checked against the dependences, accepted
    for name, value in want.items():
        np.testing.assert_array_equal(out[name], value, err_msg=f"rebuilt: {name}")


def test_append_computation_binds_a_kernels_data_spaces_by_name() -> None:
    comp = spf.Computation("mv")
    comp.add_data_space("out", "double", shape=("N",))
    comp.add_data_space("vals", "double", shape=("NNZ",))
    comp.add_data_space("v", "double", shape=("M",))
    comp.append_computation(
        kernels.spmv_csr(), "{[]}", "{[] -> [0]}", {"y": "out", "A": "vals", "x": "v"}
    )
    assert sorted(comp.data_spaces) == ["out", "v", "vals"]
    with pytest.raises(spf.SpfError, match="no data space 'w'"):
        comp.append_computation(kernels.spmv_csr(), "{[]}", "{[] -> [1]}", {"w": "out"})


@pytest.mark.parametrize("name", ["olm1000.mtx", "jagmesh7.mtx"])
def test_fused_auto_runs_small_suitesparse_matrices_serially(
    separate: Any, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    """On a matrix of a thousand rows the default plan of the fused solve and SpMV is
    ``"serial"``: starting the parallel region (``coarse.REGION_WORK``) costs more than two
    threads gain; the results are the kernels' one after the other."""
    assert auto_plan_of(separate, suitesparse_dir / name, 3).strategy == "serial"


def auto_plan_of(separate: Any, path: Path, seed: int) -> Any:
    """The default plan (for 2 threads) of the fused solve and SpMV (int64) on the matrix
    at ``path`` (its pattern with a dominant diagonal), after checking that its call equals
    the kernels one after the other bitwise."""
    comp = fused("solve_mv", "int64")
    comp.wavefront(comp.stmts[0].loops[0])
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    m = sps.csr_array(read_matrix_market(path))
    m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    b = np.random.default_rng(seed).standard_normal(m.shape[0])
    got, plan = run_fused(k, "int64", m, b, "auto")
    for key, value in run_separately("solve_mv", separate["solve_mv"], m, b).items():
        np.testing.assert_array_equal(got[key], value, err_msg=f"{path.name}: {key}")
    return plan


@pytest.mark.parametrize(
    ("name", "want"),
    [("pushpull.mtx", 3), ("bcsstk13.mtx", 9), ("arrow.mtx", 0)],
)
def test_fused_auto_weighs_small_loops_against_the_serial_kernels(
    separate: Any, omp_threads: int, suitesparse_dir: Path, name: str, want: int
) -> None:
    """A fused loop of fewer than ``coarse.IN_ORDER_NODES`` nodes runs the two serial
    kernels when its plan is ``"serial"``, so ``auto`` weighs its coarse plan against them
    (``coarse.over_kernels``: the executor's costs per node and per stretch, barriers from
    cache). pushpull (309 coarse levels of 26 nodes, 3,169 stretches: estimated 1.41x
    against the loop in order, 0.92x against the kernels) and bcsstk13 (1.49x, 1.22x) would
    run serially; their pipeline parts (``spf.runtime.pipeline``: the solve's rows in order
    beside the product's, ``want`` coarse levels, two parts each) are estimated 1.56x and
    1.47x against the kernels and run instead. arrow (3 coarse levels of 93,000 nodes:
    1.94x, 1.50x) keeps its coarse plan (``want`` 0: not a pipeline). Either way the
    results are the kernels' one after the other."""
    plan = auto_plan_of(separate, suitesparse_dir / name, 4)
    assert plan.strategy == "coarse"
    pipelined = plan.parts == 2 * plan.coarse_levels and plan.coarse_levels == want
    assert pipelined == (want > 0), (plan.coarse_levels, plan.parts)


def fused_levels_by_hand(m: Any, shift: int, fixed: dict[str, int]) -> dict[str, np.ndarray]:
    """The levels, work and coarse levels of the fused solve and product's nodes (solve row
    ``i``: node ``i``, product row ``i``: node ``n + i``), row by row in Python: ``clev`` of
    run blocks of at most ``2**shift`` rows (a row with an edge from the row before joins
    its stretch's block ``s + ((i - s) >> shift << shift)``, its coarse level the max of
    ``clev(j) + (j < block)``; another begins a stretch at ``clev(j) + 1``; an edge between
    kernels always adds 1), and each of ``fixed`` (name: shift) of fixed blocks."""
    n = m.shape[0]
    level, clev = np.zeros(2 * n, dtype=np.int64), np.zeros(2 * n, dtype=np.int64)
    blocks = {name: np.zeros(2 * n, dtype=np.int64) for name in fixed}
    work = np.ones(2 * n, dtype=np.int64)
    segment = 0
    for i in range(n):
        srcs = [int(j) for j in m.indices[m.indptr[i] : m.indptr[i + 1]] if j < i]
        near = i - 1 in srcs
        segment = segment if near else i
        block = segment + ((i - segment) >> shift << shift)
        work[i] += len(srcs)
        for j in srcs:
            level[i] = max(level[i], level[j] + 1)
            clev[i] = max(clev[i], clev[j] + (j < block if near else 1))
            for name, w in fixed.items():
                blocks[name][i] = max(blocks[name][i], blocks[name][j] + ((j >> w) != (i >> w)))
    for i in range(n):
        srcs = [int(j) for j in m.indices[m.indptr[i] : m.indptr[i + 1]]]
        work[n + i] += len(srcs)
        for j in srcs:
            level[n + i] = max(level[n + i], level[j] + 1)
            clev[n + i] = max(clev[n + i], clev[j] + 1)
            for name in fixed:
                blocks[name][n + i] = max(blocks[name][n + i], blocks[name][j] + 1)
    return {"level": level, "clev": clev, "work": work, **blocks}


def test_fused_pass_computes_every_candidate_in_one_pass() -> None:
    """With a free kernel (the product after the solve) the coarse inspector's one pass over
    the dependences computes the coarse levels of run blocks (each kernel's runs of rows, as
    for one kernel; an edge between kernels always raises the level), of the wide fixed
    blocks (``coarse.PIPELINE_SHIFT``) and of the fixed blocks (``coarse.BLOCK_SHIFT``),
    with the levels and the work: each equals the same computed row by row in Python; and
    each node's ``coarse_after``: a solve row itself, a product row the last solve row it
    reads (its highest column)."""
    from spf.runtime import coarse

    comp = fused("solve_mv")
    comp.wavefront("_i0_i", method="auto")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    assert k._runs  # the pass grows run blocks; the caller counts the levels
    grid = sps.csr_array(spf.sparse.poisson2d(30))
    for m, shift, wide, small in (
        (random_matrix(700, 0.01, 3), coarse.RUN_SHIFT, coarse.PIPELINE_SHIFT, coarse.BLOCK_SHIFT),
        (random_matrix(700, 0.01, 3), 2, 4, 3),
        (grid, 3, 6, 2),
    ):
        args = gauss_seidel_args(m)
        args.pop("A")
        n = 2 * args["N"]
        names = ("level", "clev", "clev_wide", "clev_fixed")
        out = {name: np.zeros(n, dtype=np.int32) for name in names}  # 32-bit (LEVEL_TYPE)
        out["work"] = np.zeros(n, dtype=np.int64)
        out["coarse_after"] = np.full(n, -1, dtype=np.int32)
        counts = ("nlevels", "nclev", "nclev_wide", "nclev_fixed")
        out |= {name: np.zeros((), dtype=np.int64) for name in counts}
        k._stages[0](
            coarse_shift=shift, coarse_shift_wide=wide, coarse_shift_fixed=small, **out, **args
        )
        want = fused_levels_by_hand(m, shift, {"clev_wide": wide, "clev_fixed": small})
        for name, value in want.items():
            np.testing.assert_array_equal(out[name], value, err_msg=f"{name} ({shift}, {wide})")
        rowptr, col = args["rowptr"], args["col"]
        last = [int(col[rowptr[i] : rowptr[i + 1]].max(initial=0)) for i in range(n // 2)]
        np.testing.assert_array_equal(
            out["coarse_after"], np.concatenate([np.arange(n // 2), last])
        )
    assert want["clev"].max() < want["level"].max()  # on the grid, the runs merge levels


@pytest.mark.parametrize("name", ["random", *SUITESPARSE])
def test_fused_in_order_equals_kernels_one_after_the_other(
    fused_kernel: Any,
    separate: Any,
    omp_threads: int,
    monkeypatch: pytest.MonkeyPatch,
    suitesparse_dir: Path,
    name: str,
) -> None:
    """The order one thread runs a fused loop in (each later kernel's node right after the
    first kernel's row that completes it), taken by a ``"serial"`` plan and by a coarse plan
    on a team of one thread, equals the kernels one after the other bitwise (forced here
    on small matrices: ``coarse.IN_ORDER_NODES`` 0)."""
    from spf.runtime import coarse
    from spf.runtime.plan import IN_ORDER

    monkeypatch.setattr(coarse, "IN_ORDER_NODES", 0)
    kind, dtype, k = fused_kernel
    if kind == "solve_mv" and k._coarse:
        assert k._after  # the run-block pass of the solve and product writes coarse_after
    if name == "random":
        m = random_matrix(300, 0.02, 8)
    else:
        m = sps.csr_array(read_matrix_market(suitesparse_dir / name))
        m = sps.csr_array(m + sps.diags_array(np.abs(m).sum(axis=1) + 1.0))
        m.sum_duplicates()
        m.sort_indices()
    b = np.random.default_rng(5).standard_normal(m.shape[0])
    want = run_separately(kind, separate[kind], m, b)
    for strategy in ("serial", *COARSE_STRATEGIES) if k._coarse else ("serial",):
        got, plan = run_fused(k, dtype, m, b, strategy)
        assert (IN_ORDER in plan.__dict__) == (k._coarse and k._after)
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, err_msg=f"{kind} {strategy}: {key}")


def test_fused_in_order_runs_each_product_row_after_the_solve_row_completing_it() -> None:
    """On a 2-D grid the order of the solve and product for one thread puts product row
    ``p`` right after solve row ``c``, its highest column (the grid row above), before solve
    row ``c + 1``; the plan is ``"serial"`` on this small grid (its parts do not pay) and runs
    that order."""
    from spf.runtime import coarse
    from spf.runtime.plan import IN_ORDER

    comp = fused("solve_mv")
    comp.wavefront("_i0_i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    m = sps.csr_array(spf.sparse.poisson2d(30))
    n = m.shape[0]
    args = gauss_seidel_args(m)
    a = args.pop("A")
    small = k.inspect(threads=2, **args)
    assert IN_ORDER not in small.__dict__  # below coarse.IN_ORDER_NODES: unfused
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(coarse, "IN_ORDER_NODES", 2 * n)
        plan = k.inspect(threads=2, **args)
    order = np.asarray(plan.__dict__[IN_ORDER].get().order)
    assert plan.strategy == "serial"
    assert sorted(order.tolist()) == list(range(2 * n))
    where = np.empty(2 * n, dtype=np.int64)
    where[order] = np.arange(2 * n)
    last = np.array([m.indices[m.indptr[p] : m.indptr[p + 1]].max() for p in range(n)])
    assert (where[n + np.arange(n)] > where[last]).all()
    after = last + 1 < n
    assert (where[n + np.arange(n)][after] < where[last[after] + 1]).all()
    x, y = np.zeros(n), np.zeros(n)
    b = np.ones(n)
    k(x=x, y=y, r=np.zeros(n), z=np.zeros(n), b=b, A=a, plan=plan, **args)
    x2, y2 = np.zeros(n), np.zeros(n)
    kernels.trsv_diag_csr().compile()(x=x2, b=b, A=a, **args)
    kernels.spmv_csr().compile()(y=y2, x=x2, A=a, rowptr=args["rowptr"], col=args["col"])
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
