"""End to end: code generation (API.md sections 3, 7, 8; EXAMPLES.md), compiled and run.

* the hand-built paper SpMV of API.md section 3 and EXAMPLES.md's "Paper SpMV" example;
* every generated translation unit compiles warning-free (``-Wall -Wextra -Werror``);
* the generated signature follows section 7 (parameters, UF arrays, data spaces, ``const``);
* schedules: hand-written loop interchanges give identical results, legal ``parallelize``
  gives identical results with ``OMP_NUM_THREADS=2``, illegal ones raise
  ``IllegalScheduleError`` unless ``check=False``;
* bad arguments at call time raise ``ArgumentError``;
* ``loop_structure()`` of multi-statement kernels, mixed schedule arities and 0-d statements.

The ready-made kernels themselves are run against numpy / scipy in ``test_codegen_kernels.py``.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import ArgumentError, Computation, IllegalScheduleError, Stmt, kernels
from spf.sparse import csr_args
from spf.testing import random_csr

if TYPE_CHECKING:
    from spf.runtime import Kernel

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def spf_cache_dir(shared_cache: Path) -> Path:
    return shared_cache


@pytest.fixture(scope="session")
def build(spf_cache_dir: Path) -> Callable[[Computation], Kernel]:
    def _build(comp: Computation) -> Kernel:
        return comp.compile(cache_dir=str(spf_cache_dir))

    return _build


# ============================================================================== builders
def paper_spmv() -> Computation:
    """API.md section 3, verbatim."""
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
            reads=[("y", "{[i,k,j]->[i]}"), ("A", "{[i,k,j]->[k]}"), ("x", "{[i,k,j]->[j]}")],
            writes=[("y", "{[i,k,j]->[i]}")],
        )
    )
    return comp


def dense_mv_scheduled(schedule: str) -> Computation:
    """``kernels.dense_mv`` with another schedule."""
    comp = Computation("dense_mv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(
        Stmt("$y$(i) += $A$(i, j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}", schedule)
    )
    return comp


def gemm_order(order: tuple[str, ...]) -> Computation:
    """``kernels.gemm`` with its loops in ``order`` (outer first)."""
    comp = Computation("gemm")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    a, b, c = order
    comp.add_stmt(
        Stmt(
            "$C$(i, j) += $A$(i, k) * $B$(k, j);",
            "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
            f"{{[i,j,k] -> [0,{a},0,{b},0,{c},0]}}",
        )
    )
    return comp


def mixed_arity() -> Computation:
    """A 1-d statement ``[0,i,0]``, a 2-d one ``[0,i,1,j,0]`` and a 1-d one ``[0,i,2]``."""
    comp = Computation("mixed")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(
        Stmt(
            "$y$(i) += $t$(i) * $A$(i, j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j] -> [0,i,1,j,0]}",
        )
    )
    comp.add_stmt(Stmt("$y$(i) = $y$(i) - $t$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,2]}"))
    return comp


def zero_d(domain: str, shape: tuple[()] | None = None) -> Computation:
    """A 0-d statement on a 0-d data space, a 1-d accumulation into it, another 0-d one."""
    comp = Computation("zero_d")
    comp.add_data_space("t", "double", shape=shape)
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(Stmt("$t$ = 1.5;", domain))
    comp.add_stmt(Stmt("$t$ += $x$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$t$ = $t$ * 2.0;", domain))
    return comp


def arg_order() -> Computation:
    """Names declared out of alphabetical order; one int64 UF; read-only and written spaces."""
    comp = Computation("order")
    comp.add_data_space("zeta", "double", shape=("Q",))
    comp.add_data_space("beta", "double", shape=("Q",))
    comp.add_data_space("alpha", "double", shape=("P",))
    comp.declare_uf("perm", domain="{[i]: 0 <= i < Q}", range="{[v]: 0 <= v < Q}", dtype="int64")
    comp.declare_uf("idx", domain="{[i]: 0 <= i < Q}", range="{[v]: 0 <= v < Q}")
    comp.add_stmt(Stmt("$zeta$(perm(i)) = $beta$(idx(i));", "{[i]: 0 <= i < Q}"))
    comp.add_stmt(Stmt("$alpha$(i) += 1.0;", "{[i]: 0 <= i < P}"))
    return comp


def parallel(make: Callable[[], Computation], *tags: tuple[int, str]) -> Computation:
    comp = make()
    for stmt, loop in tags:
        comp.stmts[stmt].parallelize(loop)
    return comp


# ========================================================== 2. API.md section 3 and EXAMPLES.md
@pytest.mark.parametrize(("n", "m", "density"), [(37, 23, 0.2), (1, 5, 0.8), (4, 3, 0.0)])
def test_api_section3_spmv_runs(
    build: Callable[[Computation], Kernel], n: int, m: int, density: float
) -> None:
    a = random_csr(n, m, density, rng=n + m, empty_rows=range(1, n, 3))  # every third row
    rng = np.random.default_rng(0)
    x, y = rng.random(m), rng.random(n)
    want = y + a @ x
    build(paper_spmv())(y=y, x=x, **csr_args(a))
    np.testing.assert_allclose(y, want, rtol=1e-12)


EXAMPLE_PAPER_SPMV = """
import numpy as np, scipy.sparse as sp, spf
from spf import kernels

comp = kernels.spmv_csr()                      # y += A x, CSR, UFs rowptr / col
row = [s for s in comp.stmts if s.loops][-1]
row.parallelize(row.loops[0])                  # legal: rows write disjoint y(i)
print(comp.loop_structure())                   # for i [parallel]: / for k: ... / s0
A = sp.random(1000, 800, density=0.01, format="csr", random_state=0)
x = np.ones(800); y = np.zeros(1000)
comp.compile()(y=y, x=x, **spf.sparse.csr_args(A))   # csr_args gives A, rowptr, col, N, M, NNZ
assert np.allclose(y, A @ x)
print(comp.codegen("c"))                       # macros: #define rowptr(t0) rowptr[t0], ...
"""


def run_python(script: str, cache_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh interpreter: libgomp reads ``OMP_*`` once, when it is loaded, and
    the default cache dir comes from ``$SPF_CACHE_DIR``."""
    return subprocess.run(
        [sys.executable, "-c", script, str(cache_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "SPF_CACHE_DIR": str(cache_dir), "OMP_NUM_THREADS": "2", **env},
        cwd=REPO,
        check=False,
        timeout=240,
    )


def test_examples_paper_spmv() -> None:
    """EXAMPLES.md "Paper SpMV": the schedule, the loop structure and the macros."""
    comp = kernels.spmv_csr()
    row = [s for s in comp.stmts if s.loops][-1]
    row.parallelize(row.loops[0])
    assert row.tags == {"i": ("parallel",)}
    assert comp.loop_structure() == "for i [parallel]:\n  for k:\n    s0"
    source = comp.codegen("c")
    assert "#define rowptr(t0) rowptr[t0]" in source
    assert "#define col(t0) col[t0]" in source
    assert "#pragma omp parallel for" in source


def test_examples_paper_spmv_runs_verbatim(spf_cache_dir: Path) -> None:
    """The example as written (``comp.compile()`` with ``$SPF_CACHE_DIR`` set, two threads)."""
    done = run_python(EXAMPLE_PAPER_SPMV, spf_cache_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("for i [parallel]:\n  for k:\n    s0\n#include")
    assert "#define rowptr(t0) rowptr[t0]" in done.stdout


# ======================================================================== 3. warning-free C
def _kernel_factories() -> dict[str, Callable[[], Computation]]:
    out: dict[str, Callable[[], Computation]] = {
        "dense_mv": kernels.dense_mv,
        "gemm": kernels.gemm,
        "blur2d": kernels.blur2d,
        "jacobi2d": kernels.jacobi2d,
    }
    for dt in ("int32", "int64"):
        out |= {
            f"spmv_csr_{dt}": functools.partial(kernels.spmv_csr, index_dtype=dt),
            f"spmv_coo_{dt}": functools.partial(kernels.spmv_coo, index_dtype=dt),
            f"spmv_csc_{dt}": functools.partial(kernels.spmv_csc, index_dtype=dt),
            f"spmv_bcsr_2x3_{dt}": functools.partial(kernels.spmv_bcsr, 2, 3, index_dtype=dt),
            f"spmv_bcsr_1x1_{dt}": functools.partial(kernels.spmv_bcsr, 1, 1, index_dtype=dt),
            f"sptrsv_csr_{dt}": functools.partial(kernels.sptrsv_csr, index_dtype=dt),
            f"spmm_csr_{dt}": functools.partial(kernels.spmm_csr, index_dtype=dt),
        }
    return out


KERNELS = _kernel_factories()
WARNING_FREE: dict[str, Callable[[], Computation]] = {
    **KERNELS,
    "paper_spmv": paper_spmv,
    "spmv_csr_parallel_rows": lambda: parallel(kernels.spmv_csr, (0, "i")),
    "dense_mv_parallel_rows": lambda: parallel(kernels.dense_mv, (0, "i")),
    "gemm_parallel_i": lambda: parallel(kernels.gemm, (0, "i")),
    "gemm_kji": lambda: gemm_order(("k", "j", "i")),
    "dense_mv_interchanged": lambda: dense_mv_scheduled("{[i,j] -> [0,j,0,i,0]}"),
    "dense_mv_reversed_rows": lambda: dense_mv_scheduled("{[i,j] -> [0,-i,0,j,0]}"),
    "blur2d_parallel": lambda: parallel(kernels.blur2d, (0, "i"), (1, "i")),
    "jacobi2d_parallel": lambda: parallel(kernels.jacobi2d, (0, "i"), (0, "j")),
    "spmm_csr_parallel_rows": lambda: parallel(kernels.spmm_csr, (0, "i")),
    "mixed_arity": mixed_arity,
    "arg_order": arg_order,
    "zero_d": lambda: zero_d("{[]}"),
}


@functools.cache
def generated(name: str) -> str:
    """``codegen("c")`` of ``WARNING_FREE[name]``, generated once per session."""
    return WARNING_FREE[name]().codegen("c")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found on PATH")
@pytest.mark.parametrize("name", list(WARNING_FREE))
def test_generated_c_is_warning_free(name: str, tmp_path: Path) -> None:
    source = generated(name)
    path = tmp_path / f"{name}.c"
    path.write_text(source)
    cmd = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fopenmp", "-c", str(path)]
    done = subprocess.run(
        [*cmd, "-o", str(tmp_path / f"{name}.o")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}\n{source}"
    assert done.stderr == ""


# ============================================================================ 4. signatures
def _protos(dt: str) -> dict[str, str]:
    ix = f"const {dt}_t *restrict"
    vec = "double *restrict y, const double *restrict A, const double *restrict x"
    return {
        f"spmv_csr_{dt}": f"void spmv_csr(int64_t M, int64_t N, int64_t NNZ, {ix} col, {ix} rowptr, {vec})",
        f"spmv_coo_{dt}": f"void spmv_coo(int64_t M, int64_t N, int64_t NNZ, {ix} col, {ix} row, {vec})",
        f"spmv_csc_{dt}": f"void spmv_csc(int64_t M, int64_t N, int64_t NNZ, {ix} colptr, {ix} row, {vec})",
        f"spmv_bcsr_2x3_{dt}": f"void spmv_bcsr_2x3(int64_t MB, int64_t NB, int64_t NNZB, {ix} bcol, {ix} browptr, {vec})",
        f"spmv_bcsr_1x1_{dt}": f"void spmv_bcsr_1x1(int64_t MB, int64_t NB, int64_t NNZB, {ix} bcol, {ix} browptr, {vec})",
        f"sptrsv_csr_{dt}": f"void sptrsv_csr(int64_t N, int64_t NNZ, {ix} col, {ix} rowptr, double *restrict u, const double *restrict L, const double *restrict f)",
        f"spmm_csr_{dt}": f"void spmm_csr(int64_t K, int64_t M, int64_t N, int64_t NNZ, {ix} col, {ix} rowptr, double *restrict C, const double *restrict A, const double *restrict B)",
    }


PROTOTYPES = {
    "dense_mv": "void dense_mv(int64_t M, int64_t N, double *restrict y, const double *restrict A, const double *restrict x)",
    "gemm": "void gemm(int64_t K, int64_t M, int64_t N, double *restrict C, const double *restrict A, const double *restrict B)",
    "blur2d": "void blur2d(int64_t M, int64_t N, double *restrict out, double *restrict bx, const double *restrict img)",
    "jacobi2d": "void jacobi2d(int64_t N, double *restrict B, const double *restrict A)",
    **_protos("int32"),
    **_protos("int64"),
    "paper_spmv": "void spmv(int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, double *restrict y, const double *restrict A, const double *restrict x)",
    "arg_order": "void order(int64_t P, int64_t Q, const int32_t *restrict idx, const int64_t *restrict perm, double *restrict zeta, const double *restrict beta, double *restrict alpha)",
}


def test_prototypes_cover_every_kernel() -> None:
    assert set(KERNELS) <= set(PROTOTYPES)


@pytest.mark.parametrize("name", list(PROTOTYPES))
def test_signature_order(name: str) -> None:
    source = generated(name)
    prototype = PROTOTYPES[name]
    assert re.search(re.escape(prototype) + r"\s*\{", source), source


def test_spmv_csr_prototype_exact(
    build: Callable[[Computation], Kernel], golden: Callable[[str, str], None]
) -> None:
    want = (
        "void spmv_csr(int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, "
        "const int32_t *restrict rowptr, double *restrict y, const double *restrict A, "
        "const double *restrict x)"
    )
    comp = kernels.spmv_csr()
    golden("codegen/c/spmv_csr.c", comp.codegen("c"))  # the prototype is `want`
    kernel = build(comp)
    assert kernel.signature == want
    # what compile builds: the function, then its copy with in-loop argument checks
    assert kernel.source == comp.codegen("c", arg_checks=True)
    assert kernel.source.startswith(comp.codegen("c").rstrip())


def test_codegen_name_renames_function() -> None:
    source = kernels.jacobi2d().codegen("c", name="sweep")
    assert "void sweep(int64_t N, double *restrict B, const double *restrict A)" in source
    assert "void jacobi2d(" not in source


def test_arg_order_runs(build: Callable[[Computation], Kernel]) -> None:
    rng = np.random.default_rng(3)
    q, p = 9, 4
    perm = rng.permutation(q).astype(np.int64)
    idx = rng.integers(0, q, q).astype(np.int32)
    beta, zeta, alpha = rng.random(q), np.zeros(q), rng.random(p)
    want_alpha = alpha + 1.0
    build(arg_order())(zeta=zeta, beta=beta, alpha=alpha, perm=perm, idx=idx)
    want_zeta = np.zeros(q)
    want_zeta[perm] = beta[idx]
    np.testing.assert_array_equal(zeta, want_zeta)
    np.testing.assert_array_equal(alpha, want_alpha)


# ============================================================================ 5. schedules
DENSE_MV_SCHEDULES = {
    "ij": ("{[i,j] -> [0,i,0,j,0]}", "for i:\n  for j:\n    s0"),
    "ji": ("{[i,j] -> [0,j,0,i,0]}", "for j:\n  for i:\n    s0"),
    "reversed_i": ("{[i,j] -> [0,-i,0,j,0]}", None),
    "shifted_root": ("{[i,j] -> [3,i,1,j,2]}", "for i:\n  for j:\n    s0"),
}


@pytest.mark.parametrize("order", list(DENSE_MV_SCHEDULES))
@pytest.mark.parametrize(("n", "m"), [(7, 5), (1, 9), (16, 1)])
def test_dense_mv_loop_orders_agree(
    build: Callable[[Computation], Kernel], order: str, n: int, m: int
) -> None:
    schedule, structure = DENSE_MV_SCHEDULES[order]
    comp = dense_mv_scheduled(schedule)
    if structure is not None:
        assert comp.loop_structure() == structure
    rng = np.random.default_rng(n * m)
    A, x, y0 = rng.random((n, m)), rng.random(m), rng.random(n)
    reference, y = y0.copy(), y0.copy()
    build(kernels.dense_mv())(y=reference, A=A, x=x)
    build(comp)(y=y, A=A, x=x)
    # every y(i) sums its terms in the same order (j ascending): bit-identical results
    np.testing.assert_array_equal(y, reference)
    np.testing.assert_allclose(y, y0 + A @ x, rtol=1e-12)


GEMM_ORDERS = list(itertools.permutations("ijk"))


@pytest.mark.parametrize("order", GEMM_ORDERS, ids=["".join(o) for o in GEMM_ORDERS])
def test_gemm_loop_orders_agree(
    build: Callable[[Computation], Kernel], order: tuple[str, ...]
) -> None:
    comp = gemm_order(order)
    a, b, c = order
    assert comp.loop_structure() == f"for {a}:\n  for {b}:\n    for {c}:\n      s0"
    assert comp.stmts[0].loops == order
    rng = np.random.default_rng(11)
    n, m, k = 9, 7, 5
    A, B, C0 = rng.random((n, k)), rng.random((k, m)), rng.random((n, m))
    reference, C = C0.copy(), C0.copy()
    build(kernels.gemm())(C=reference, A=A, B=B)
    build(comp)(C=C, A=A, B=B)
    np.testing.assert_array_equal(C, reference)  # k ascending for every C(i,j) in all orders
    np.testing.assert_allclose(C, C0 + A @ B, rtol=1e-12)


PARALLEL_SCRIPT = r"""
import ctypes, json, sys
import numpy as np, scipy.sparse as sp
from spf import kernels
from spf.sparse import csr_args, spmm_args

cache = sys.argv[1]
rng = np.random.default_rng(0)
report = {"mismatch": [], "pragmas": {}}
keep = []  # dropping a parallel kernel can unload libgomp under its threads: see
           # test_dropping_a_parallel_kernel_does_not_crash

def pair(name, make, tags):
    comp = make()
    for stmt, loop in tags:
        comp.stmts[stmt].parallelize(loop)
    report["pragmas"][name] = comp.codegen("c").count("#pragma omp parallel for")
    return make().compile(cache_dir=cache), comp.compile(cache_dir=cache)

def compare(name, make, tags, outputs, inputs):
    serial, par = pair(name, make, tags)
    keep.extend((serial, par))
    a = {k: v.copy() for k, v in outputs.items()}
    b = {k: v.copy() for k, v in outputs.items()}
    serial(**a, **inputs)
    par(**b, **inputs)
    for k in outputs:
        if not np.array_equal(a[k], b[k]):
            report["mismatch"].append(f"{name}:{k}")

A = sp.random_array((3001, 2003), density=0.004, format="csr", rng=rng)
compare("spmv_csr", kernels.spmv_csr, [(0, "i")], {"y": rng.random(3001)},
        {"x": rng.random(2003), **csr_args(A)})
compare("spmm_csr", kernels.spmm_csr, [(0, "i")], {"C": rng.random((3001, 3))},
        {"B": rng.random((2003, 3)), **spmm_args(A)})
compare("dense_mv", kernels.dense_mv, [(0, "i")], {"y": rng.random(301)},
        {"A": rng.random((301, 203)), "x": rng.random(203)})
compare("gemm", kernels.gemm, [(0, "i")], {"C": rng.random((61, 47))},
        {"A": rng.random((61, 33)), "B": rng.random((33, 47))})
compare("jacobi2d", kernels.jacobi2d, [(0, "i")], {"B": rng.random((101, 101))},
        {"A": rng.random((101, 101))})
compare("blur2d", kernels.blur2d, [(0, "i"), (1, "i")],
        {"out": rng.random((97, 45)), "bx": rng.random((99, 45))}, {"img": rng.random((99, 47))})
report["threads"] = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
print(json.dumps(report))
"""


def test_parallel_rows_agree_with_two_threads(spf_cache_dir: Path) -> None:
    """Legal ``parallelize`` gives bit-identical results with ``OMP_NUM_THREADS=2``."""
    done = run_python(PARALLEL_SCRIPT, spf_cache_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["threads"] == 2
    assert report["mismatch"] == []
    assert report["pragmas"] == {
        "spmv_csr": 1,
        "spmm_csr": 1,
        "dense_mv": 1,
        "gemm": 1,
        "jacobi2d": 1,
        "blur2d": 2,
    }


DROP_PARALLEL_KERNEL = """
import gc, sys
import numpy as np
from spf import kernels

comp = kernels.dense_mv()
comp.stmts[0].parallelize("i")
kernel = comp.compile(cache_dir=sys.argv[1])
y = np.zeros(64)
kernel(y=y, A=np.ones((64, 8)), x=np.ones(8))
del kernel
gc.collect()
total = sum(range(3_000_000))  # the OpenMP worker threads are still spinning
print("ok", y[0])
"""


def test_dropping_a_parallel_kernel_does_not_crash(spf_cache_dir: Path) -> None:
    """A Kernel whose library brought in libgomp is garbage collected while the OpenMP
    workers spin (``OMP_WAIT_POLICY=active`` makes it deterministic): the process survives."""
    done = run_python(DROP_PARALLEL_KERNEL, spf_cache_dir, OMP_WAIT_POLICY="active")
    assert done.returncode == 0, f"exit status {done.returncode}\n{done.stderr}"
    assert done.stdout.split() == ["ok", "8.0"]


ILLEGAL = {
    "spmv_csr_k": (kernels.spmv_csr, 0, "k", "y"),
    "dense_mv_j": (kernels.dense_mv, 0, "j", "y"),
    "gemm_k": (kernels.gemm, 0, "k", "C"),
    "sptrsv_csr_i": (kernels.sptrsv_csr, 1, "i", "u"),
}


@pytest.mark.parametrize("name", list(ILLEGAL))
def test_illegal_parallelize_is_refused(name: str, spf_cache_dir: Path) -> None:
    make, stmt, loop, data = ILLEGAL[name]
    comp = make()
    assert not comp.is_parallel_legal(comp.stmts[stmt], loop)
    comp.stmts[stmt].parallelize(loop)
    with pytest.raises(IllegalScheduleError) as info:
        comp.codegen("c")
    message = str(info.value)
    assert repr(data) in message or f" {data} " in message, message
    with pytest.raises(IllegalScheduleError):
        comp.compile(cache_dir=str(spf_cache_dir))
    source = comp.codegen("c", check=False)
    assert "#pragma omp parallel for" in source


def test_spmv_csr_k_loop_message_names_the_dependence() -> None:
    comp = kernels.spmv_csr()
    assert comp.is_parallel_legal("s0", "i")
    comp.stmts[0].parallelize("k")
    with pytest.raises(IllegalScheduleError, match="'k'") as info:
        comp.check_legality()
    assert "s0" in str(info.value)
    assert "y" in str(info.value)


# ========================================================================= 6. bad arguments
@pytest.fixture(scope="session")
def spmv32(build: Callable[[Computation], Kernel]) -> Kernel:
    return build(kernels.spmv_csr())


@pytest.fixture
def spmv_args() -> dict[str, Any]:
    a = sp.csr_array(np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]))
    return {"y": np.zeros(3), "x": np.ones(3), **csr_args(a)}


IN_LOOP = {"col_out_of_range"}
"""Bad index values the compiled kernel's loops check as they read them
(spf.codegen.arg_checks), after the other checks and not before the call; a monotonic
array (rowptr) is tested whole before the loops, so its faults leave ``y`` untouched."""


def _decreasing(args: dict[str, Any]) -> dict[str, Any]:
    return {**args, "rowptr": np.array([0, 2, 1, 4], dtype=np.int32)}


BAD_ARGS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "x_float32": lambda a: {**a, "x": a["x"].astype(np.float32)},
    "y_int64": lambda a: {**a, "y": np.zeros(3, dtype=np.int64)},
    "rowptr_int64": lambda a: {**a, "rowptr": a["rowptr"].astype(np.int64)},
    "col_float": lambda a: {**a, "col": a["col"].astype(np.float64)},
    "x_list": lambda a: {**a, "x": [1.0, 1.0, 1.0]},
    "missing_x": lambda a: {k: v for k, v in a.items() if k != "x"},
    "missing_rowptr": lambda a: {k: v for k, v in a.items() if k != "rowptr"},
    "missing_y": lambda a: {k: v for k, v in a.items() if k != "y"},
    "unknown_arg": lambda a: {**a, "z": np.zeros(3)},
    "decreasing_rowptr": _decreasing,
    "col_out_of_range": lambda a: {**a, "col": np.array([0, 2, 0, 3], dtype=np.int32)},
    "rowptr_beyond_nnz": lambda a: {**a, "rowptr": np.array([0, 2, 2, 5], dtype=np.int32)},
    "y_wrong_shape": lambda a: {**a, "y": np.zeros(4)},
    "y_2d": lambda a: {**a, "y": np.zeros((3, 1))},
    "x_non_contiguous": lambda a: {**a, "x": np.ones(6)[::2]},
    "N_float": lambda a: {**a, "N": 3.0},
}


@pytest.mark.parametrize("case", list(BAD_ARGS))
def test_bad_arguments_raise_argument_error(
    spmv32: Kernel, spmv_args: dict[str, Any], case: str
) -> None:
    args = BAD_ARGS[case](spmv_args)
    y = args.get("y")
    before = y.copy() if isinstance(y, np.ndarray) else None
    with pytest.raises(ArgumentError) as err:
        spmv32(**args, check=True)
    if case in IN_LOOP:  # found where the loops read the index: y may be partially written
        assert "partially written" in str(err.value)
    elif isinstance(y, np.ndarray) and before is not None:
        np.testing.assert_array_equal(y, before)  # the kernel did not run


def test_read_only_output_raises(spmv32: Kernel, spmv_args: dict[str, Any]) -> None:
    spmv_args["y"].setflags(write=False)
    with pytest.raises(ArgumentError):
        spmv32(**spmv_args)


def test_good_arguments_after_bad(spmv32: Kernel, spmv_args: dict[str, Any]) -> None:
    with pytest.raises(ArgumentError):
        spmv32(**_decreasing(spmv_args), check=True)
    spmv_args["y"][:] = 0.0  # found by the loops: y may be partially written (IN_LOOP)
    spmv32(**spmv_args, check=True)  # no fault left over from the bad call
    np.testing.assert_array_equal(spmv_args["y"], [3.0, 0.0, 7.0])


def test_dense_bad_dtype_and_missing(build: Callable[[Computation], Kernel]) -> None:
    kernel = build(kernels.dense_mv())
    y, A, x = np.zeros(2), np.ones((2, 3)), np.ones(3)
    with pytest.raises(ArgumentError):
        kernel(y=y, A=A.astype(np.int64), x=x)
    with pytest.raises(ArgumentError):
        kernel(y=y, x=x)
    with pytest.raises(ArgumentError):
        kernel(y=y, A=A, x=np.ones(4))  # M from A disagrees with x


# ======================================================================= 7. loop_structure
def test_loop_structure_forward_solve() -> None:
    """s0 (u = f), the k loop of s1 and s2 (the divide) inside one row loop; j is bound by
    ``col(k)`` so it is no loop."""
    assert kernels.sptrsv_csr().loop_structure() == "for i:\n  s0\n  for k:\n    s1\n  s2"


def test_loop_structure_blur2d() -> None:
    comp = kernels.blur2d()
    assert comp.loop_structure() == "for i:\n  for j:\n    s0\nfor i:\n  for j:\n    s1"
    comp.stmts[1].parallelize("i")
    assert comp.loop_structure() == "for i:\n  for j:\n    s0\nfor i [parallel]:\n  for j:\n    s1"


@pytest.mark.parametrize(
    ("name", "structure"),
    [
        ("dense_mv", "for i:\n  for j:\n    s0"),
        ("gemm", "for i:\n  for j:\n    for k:\n      s0"),
        ("spmv_csr_int32", "for i:\n  for k:\n    s0"),
        ("spmv_coo_int32", "for k:\n  s0"),
        ("spmv_csc_int32", "for j:\n  for k:\n    s0"),
        ("spmv_bcsr_2x3_int32", "for i:\n  for k:\n    for ii:\n      for jj:\n        s0"),
        ("spmm_csr_int32", "for i:\n  for k:\n    for c:\n      s0"),
        ("jacobi2d", "for i:\n  for j:\n    s0"),
    ],
)
def test_loop_structure_kernels(name: str, structure: str) -> None:
    assert KERNELS[name]().loop_structure() == structure


# ===================================================== 8. mixed arities and 0-d statements
@pytest.mark.parametrize(("n", "m"), [(6, 4), (1, 1), (5, 0), (0, 3)])
def test_mixed_arity_runs(build: Callable[[Computation], Kernel], n: int, m: int) -> None:
    comp = mixed_arity()
    assert comp.loop_structure() == "for i:\n  s0\n  for j:\n    s1\n  s2"
    rng = np.random.default_rng(n + m)
    A, x, y0 = rng.random((n, m)), rng.random(n), rng.random(n)
    want = y0 + 2.0 * x * A.sum(axis=1) - 2.0 * x
    y, t = y0.copy(), np.zeros(n)
    build(comp)(y=y, t=t, A=A, x=x)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(t, 2.0 * x)
    y_ref, t_ref = y0.copy(), np.zeros(n)
    comp.interpret(y=y_ref, t=t_ref, A=A, x=x)
    np.testing.assert_array_equal(y, y_ref)


def test_mixed_arity_different_depths_in_one_nest(build: Callable[[Computation], Kernel]) -> None:
    """A 3-d statement next to a 1-d one at the root: ``[0,i,0,j,0,k,0]`` and ``[1,i,0]``."""
    comp = Computation("depths")
    comp.add_data_space("s", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N", "N", "N"))
    comp.add_stmt(
        Stmt(
            "$s$(i) += $B$(i, j, k);",
            "{[i,j,k]: 0 <= i < N && 0 <= j < N && 0 <= k < N}",
            "{[i,j,k] -> [0,i,0,j,0,k,0]}",
        )
    )
    comp.add_stmt(Stmt("$s$(i) = $s$(i) * 0.5;", "{[i]: 0 <= i < N}", "{[i] -> [1,i,0]}"))
    assert comp.loop_structure() == "for i:\n  for j:\n    for k:\n      s0\nfor i:\n  s1"
    B = np.random.default_rng(0).random((5, 5, 5))
    s = np.ones(5)
    build(comp)(s=s, B=B)
    np.testing.assert_allclose(s, 0.5 * (1.0 + B.sum(axis=(1, 2))), rtol=1e-12)


@pytest.mark.parametrize("domain", ["{[]}", "{[0]}"])
def test_zero_d_statement_runs(build: Callable[[Computation], Kernel], domain: str) -> None:
    comp = zero_d(domain)
    assert comp.loop_structure() == "s0\nfor i:\n  s1\ns2"
    kernel = build(comp)
    for x in (np.random.default_rng(0).random(7), np.zeros(0)):
        t = np.zeros(())
        kernel(t=t, x=x)
        assert t.shape == ()
        np.testing.assert_allclose(t, 2.0 * (1.5 + x.sum()), rtol=1e-12)


def test_zero_d_with_empty_shape_runs(build: Callable[[Computation], Kernel]) -> None:
    """``shape=()`` declares the same 0-d data space as no shape."""
    x = np.arange(4.0)
    t = np.zeros(())
    build(zero_d("{[]}", shape=()))(t=t, x=x)
    assert float(t) == 2.0 * (1.5 + 6.0)


def test_zero_d_only(build: Callable[[Computation], Kernel]) -> None:
    """A computation whose only statement is 0-d: no parameters at all."""
    comp = Computation("seven")
    comp.add_data_space("t", "double")
    comp.add_stmt(Stmt("$t$ = 7.0;", "{[]}"))
    assert comp.loop_structure() == "s0"
    t = np.zeros(())
    build(comp)(t=t)
    assert float(t) == 7.0


def test_a_private_local_used_outside_its_loop_after_scanning_is_a_codegen_error() -> None:
    """A statement of a private local that runs at one value of its loop is taken out of the
    loop by isl (``if (n >= 1) s1(0);`` before ``for (i ...)``): it used no copy of the
    local and gcc failed on the generated C. It is a ``CodegenError`` naming the local."""
    comp = spf.Computation("peeled")
    comp.add_constant("n")
    comp.add_data_space("x", "double", shape=("n",))
    comp.add_data_space("y", "double", shape=("n",))
    comp.add_local("t", "double", (), private="i")
    comp.add_stmt(spf.Stmt("$t$ = $x$(i);", "{[i]: 1 <= i < n}", "{[i] -> [0, i, 0]}"))
    comp.add_stmt(spf.Stmt("$t$ = 0.0;", "{[i]: i = 0 && n >= 1}", "{[i] -> [0, i, 1]}"))
    comp.add_stmt(spf.Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < n}", "{[i] -> [0, i, 2]}"))
    with pytest.raises(spf.CodegenError, match=r"private local 't': statement\(s\) s1 run outside"):
        comp.codegen("c")
