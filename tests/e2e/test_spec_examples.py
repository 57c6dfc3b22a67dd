"""Every example of the binding spec ``EXAMPLES.md``, run as written.

Each test holds the example's code verbatim, up to ruff's layout (the spec lives outside the
repository, so the code is copied here; keep the two in step) and asserts what the spec says it must do: the
printed ``loop_structure``, the values, the errors. The MPI example runs on two real ranks
under :func:`spf.mpi.run`; the CUDA example builds with nvcc (``requires_nvcc``) and runs
emulated on the CPU. "Ordering at a loop level" has no code in the spec, only the commands
and the structure they give; its test spells the four statements out.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    import networkx as nx

    from spf.runtime import Kernel

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_cache(kernel_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The examples call ``compile()`` without a cache_dir: keep their builds in the test's
    (which shares the run's compiled kernels)."""
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))


# ------------------------------------------------------------------ Paper SpMV
def test_paper_spmv_generated_and_run_on_a_scipy_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np, scipy.sparse as sp, spf  # noqa: E401, I001 (as the spec writes it)
    from spf import kernels

    comp = kernels.spmv_csr()  # y += A x, CSR, UFs rowptr / col
    row = [s for s in comp.stmts if s.loops][-1]
    row.parallelize(row.loops[0])  # legal: rows write disjoint y(i)
    print(comp.loop_structure())  # for i [parallel]: / for k: ... / s0
    A = sp.random(1000, 800, density=0.01, format="csr", random_state=0)
    x = np.ones(800)
    y = np.zeros(1000)
    comp.compile()(y=y, x=x, **spf.sparse.csr_args(A))  # csr_args gives A, rowptr, col, N, M, NNZ
    assert np.allclose(y, A @ x)
    print(comp.codegen("c"))  # macros: #define rowptr(t0) rowptr[t0], ...

    out = capsys.readouterr().out
    assert out.startswith("for i [parallel]:\n  for k:\n    s0\n")
    assert "#define rowptr(t0) rowptr[t0]" in out
    assert "#define col(t0) col[t0]" in out
    assert "#pragma omp parallel for" in out
    assert y.any()  # the random matrix has nonzeros: the check above is not vacuous
    args = spf.sparse.csr_args(A)
    assert set(args) == {"A", "rowptr", "col", "N", "M", "NNZ"}


# ------------------------------------------------------------------ tiling, odd size
def test_tiling_with_an_odd_size_parallel_outer_tile_loop() -> None:
    comp = spf.Computation("fill")
    comp.add_data_space("buf", "int32_t", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt("$buf$(i,j) = 7;", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}")
    )
    s.tile("i", "j", 2, 2, "i0", "j0", "i1", "j1").parallelize("i0")
    buf = np.zeros((9, 9), dtype=np.int32)
    comp.compile()(buf=buf, N=9)  # every element 7, nothing written outside

    assert np.array_equal(buf, np.full((9, 9), 7, dtype=np.int32))
    assert comp.loop_structure() == textwrap.dedent(
        """\
        for i0 [parallel]:
          for j0:
            for i1:
              for j1:
                s0"""
    )
    # nothing written outside: buf as the first 81 elements of a larger array
    memory = np.full(81 + 40, -1, dtype=np.int32)
    view = memory[:81].reshape(9, 9)
    comp.compile()(buf=view, N=9)
    assert (memory[:81] == 7).all()
    assert (memory[81:] == -1).all()


# ------------------------------------------------------------------ ordering
def test_ordering_at_a_loop_level() -> None:
    """Four statements over ``[0,10)^2`` into four buffers; ``s1.after(s0, "i")``,
    ``s2.after(s1, "j")``, ``s3.after(s2, "i")``."""
    comp = spf.Computation("order")
    for k in range(4):
        comp.add_data_space(f"b{k}", "double", shape=(10, 10))
    for k in range(4):
        comp.add_stmt(spf.Stmt(f"$b{k}$(i,j) = {k};", "{[i,j]: 0 <= i < 10 && 0 <= j < 10}"))
    s0, s1, s2, s3 = comp.stmts
    s1.after(s0, "i")
    s2.after(s1, "j")
    s3.after(s2, "i")

    assert comp.loop_structure() == textwrap.dedent(
        """\
        for i:
          for j:
            s0
          for j:
            s1
            s2
          for j:
            s3"""
    )
    arrays = {f"b{k}": np.zeros((10, 10)) for k in range(4)}
    comp.compile()(**arrays)
    for k in range(4):
        assert (arrays[f"b{k}"] == k).all()


# ------------------------------------------------------------------ illegal schedule
def test_an_illegal_schedule_is_refused() -> None:
    comp = spf.Computation("wave")
    comp.add_data_space("A", "int64_t", shape=(10, 10))
    s = comp.add_stmt(
        spf.Stmt(
            "$A$(i,j) = $A$(i-1,j-1) + $A$(i,j) + $A$(i-1,j+1);",
            "{[i,j]: 1 <= i < 9 && 1 <= j < 8}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    s.tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    with pytest.raises(spf.IllegalScheduleError) as info:
        comp.codegen("c")  # raises spf.IllegalScheduleError: the flow dependence of A from
        # (i-1, j+1) to (i, j) would run backwards across j0 tiles
    src = comp.codegen("c", check=False)  # generates anyway, on the user's responsibility

    message = str(info.value)
    assert "flow dependence on 'A'" in message
    assert "across loop 'j0'" in message
    assert "j = jp + 1" in message  # the (i-1, j+1) -> (i, j) pair
    assert "tile(" in message  # names the command to blame
    assert "void wave(" in src
    assert "s0(i1 + 0, j1 + 4);" in src  # the tiles, scanned with constant bounds


# ------------------------------------------------------------------ forward solve PDFG
@pytest.mark.requires_graphviz
def test_forward_solve_pdfg_with_its_loop_carried_dependence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    comp = spf.Computation("fs")
    for d in ("u", "f", "l", "diag"):
        comp.add_data_space(d, "double*")
    comp.add_stmt(spf.Stmt("$u$(i) = $f$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$u$(i) -= $l$(k) * $u$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k) && j < i}",
            "{[i,k,j]->[0,i,1,k,0]}",
        )
    )
    comp.add_stmt(spf.Stmt("$u$(i) /= $diag$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,2,0,0]}"))
    g = comp.pdfg()  # nodes s0 s1 s2 (kind "stmt"), u f l diag (kind "data")
    g.render("fs.svg")  # i-loop cluster containing s0, a k-loop cluster with s1, then s2;
    # a dependence edge on u carried by i

    graph: nx.DiGraph = g.graph
    kinds = dict(graph.nodes(data="kind"))
    assert {n for n, k in kinds.items() if k == "stmt"} == {"s0", "s1", "s2"}
    assert {n for n, k in kinds.items() if k == "data"} == {"u", "f", "l", "diag"}
    svg = (tmp_path / "fs.svg").read_text()
    assert svg.lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))
    dot = g.to_dot()
    i_cluster = dot.index('subgraph "cluster_0_i"')
    k_cluster = dot.index('subgraph "cluster_0_1_k"')
    assert i_cluster < dot.index('"s0" [') < k_cluster < dot.index('"s1" [') < dot.index('"s2" [')
    # s2 comes after the k cluster closes, still inside the i cluster
    assert dot.index('"s2" [') < dot.index('"diag" [')
    carried = [
        (a, b)
        for a, b, d in graph.edges(data=True)
        if d["kind"] == "dependence" and d["data_space"] == "u" and "i" in d["carried_by"]
    ]
    assert ("s2", "s1") in carried  # u(i) /= diag(i) feeds later rows' u(j)
    assert ("s0", "s1") in carried


# ------------------------------------------------------------------ inlining a function
def test_inlining_a_function_computation_in_a_loop() -> None:
    scale = spf.Computation("scale")  # void scale(double* v, double a)
    scale.add_parameter("v", "double*")
    scale.add_parameter("a", "double")
    scale.add_stmt(spf.Stmt("$v$(i) = $a$ * $v$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    main = spf.Computation("main")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(scale, "{[t]: 0 <= t < T}", "{[t]->[0,t,0]}", ["x", "2.0"])
    x = np.ones(5)
    main.compile()(x=x, n=5, T=3)  # x == 8; scale's `a` is a local, not an argument

    assert np.array_equal(x, np.full(5, 8.0))
    kernel: Kernel = main.compile()
    assert "double a" not in kernel.signature
    assert kernel.signature.endswith("(int64_t T, int64_t n, double *restrict x)")


# ------------------------------------------------------------------ MPI
MPI_PROGRAM = """\
import numpy as np, spf
from mpi4py import MPI
comp = spf.Computation("dscale")
comp.add_data_space("a", "double", shape=(4, 8))     # each rank's local block
s = comp.add_stmt(spf.Stmt("$a$(i,j) = 2.0 * $a$(i,j) + q;",
                           "{[q,i,j]: 0 <= q < P && 0 <= i < 4 && 0 <= j < 8}",
                           "{[q,i,j]->[0,q,0,i,0,j,0]}"))
s.distribute("q")                                    # rank r runs the iterations with q = r
k = comp.compile(target="mpi")
a = np.ones((4, 8))
k(comm=MPI.COMM_WORLD, a=a, P=MPI.COMM_WORLD.Get_size())   # a == 2 + rank on every rank
rank = MPI.COMM_WORLD.Get_rank()
assert np.array_equal(a, np.full((4, 8), 2.0 + rank)), a
print(f"rank {rank}: a == {a[0, 0]} everywhere", flush=True)
"""


@pytest.mark.requires_mpi
def test_mpi_rows_distributed_over_ranks(tmp_path: Path) -> None:
    import os

    from spf.mpi import run

    script = tmp_path / "dscale.py"
    script.write_text(MPI_PROGRAM)
    cache = tmp_path / "cache"
    cache.mkdir()
    # rank 0 and rank 1 compile the same kernel into one cache at once: the cache makes that
    # safe (API.md section 8), so the example runs as written without a barrier
    env = {**os.environ, "SPF_CACHE_DIR": str(cache)}
    done = run(script, 2, timeout=240, env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert "rank 0: a == 2.0 everywhere" in output, output[-4000:]
    assert "rank 1: a == 3.0 everywhere" in output, output[-4000:]


# ------------------------------------------------------------------ CUDA
def _transpose() -> tuple[spf.Computation, str]:
    comp = spf.Computation("t")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s.tile_gpu("i", "j", 16, 16)
    src = comp.codegen("cuda")  # builds with nvcc
    return comp, src


@pytest.mark.requires_nvcc
def test_cuda_source_builds_with_nvcc(tmp_path: Path) -> None:
    import subprocess

    _, src = _transpose()
    assert "__global__" in src
    path = tmp_path / "t.cu"
    path.write_text(src)
    done = subprocess.run(
        ["nvcc", "-c", str(path), "-o", str(tmp_path / "t.o")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_cuda_without_a_gpu_runs_emulated() -> None:
    comp, _ = _transpose()
    k = comp.compile(target="cuda", emulate=True)  # same source, run on the CPU

    for n in (1, 16, 37):  # a partial 16x16 tile at the edges
        a = np.random.default_rng(n).random((n, n)).astype(np.float32)
        b = np.zeros((n, n), dtype=np.float32)
        k(B=b, A=a, N=n)
        assert np.array_equal(b, a.T)
