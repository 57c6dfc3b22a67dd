"""Wavefront Gauss-Seidel and ILU(0) end to end (API.md section 11, docs/inspection.md):
``comp.wavefront("i")`` on ``spf.kernels.gauss_seidel_csr`` (flow dependences pulled, anti
dependences pushed) and ``spf.kernels.ilu0_csr`` (``levels`` and ``p2p``) equals the serial
kernel bitwise at 1 and 2 OpenMP threads on random and SuiteSparse matrices, int32 and
int64 indices, with every argument check on. The textbook C of both, imported with
``spf.from_c`` (its scalar temporaries private to the row), runs as a wavefront bitwise equal
to the same C compiled by gcc."""

from __future__ import annotations

import ctypes
import inspect
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.runtime.kernel import Kernel
from spf.runtime.plan import Plan, WavefrontKernel
from spf.sparse import gauss_seidel_args, ilu0_args, read_matrix_market

GS_SUITESPARSE = ["cryg2500.mtx", "bcsstk13.mtx", "jagmesh7.mtx", "arrow.mtx"]
ILU0_SUITESPARSE = ["olm1000.mtx", "cryg2500.mtx", "bcsstk13.mtx"]
"""As tests/e2e/test_gauss_seidel_ilu0.py chooses them (diagonal stored, finite results)."""

RANDOM = [(1, 1.0, 0), (2, 0.5, 1), (5, 0.0, 2), (7, 0.3, 3), (33, 0.1, 4), (101, 0.05, 5)]
RANDOM += [(999, 0.005, 6), (250, 0.0, 7)]
"""(rows, density, seed): one row, diagonal only (density 0), odd sizes."""


def random_matrix(n: int, density: float, seed: int) -> sps.csr_array:
    """A random square matrix with a dominant diagonal, sorted columns."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng, format="csr")
    m = sps.csr_array(m + sps.diags_array(2.0 + rng.random(n) * n * density))
    m.sum_duplicates()
    m.sort_indices()
    return m


def plan_for(k: WavefrontKernel, **args: Any) -> Plan:
    """A plan that runs the executor (a kernel that may choose the serial order for few rows
    per level is told not to, so that the executor is what is compared)."""
    if "strategy" in inspect.signature(k.inspect).parameters:
        return k.inspect(strategy="wavefront", **args)
    return k.inspect(**args)


Pair = tuple[WavefrontKernel, Kernel, str]


def _pair(factory: Callable[..., spf.Computation], dtype: str, method: str) -> Pair:
    comp = factory(index_dtype=dtype)
    comp.wavefront("i", method=method)
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    return k, factory(index_dtype=dtype).compile(), dtype


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "levels"), ("int64", "p2p")])
def gs(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair(kernels.gauss_seidel_csr, dtype, method)


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "levels"), ("int32", "p2p")])
def ilu0(request: pytest.FixtureRequest) -> Pair:
    dtype, method = request.param
    return _pair(kernels.ilu0_csr, dtype, method)


def sweep_both(pair: Pair, m: Any, seed: int) -> None:
    k, serial, dtype = pair
    args = gauss_seidel_args(m, index_dtype=dtype)
    rng = np.random.default_rng(seed)
    b, x0 = rng.standard_normal(m.shape[0]), rng.standard_normal(m.shape[0])
    x, ref = x0.copy(), x0.copy()
    k(x=x, b=b, plan=plan_for(k, **args), **args)
    serial(x=ref, b=b, **args)
    np.testing.assert_array_equal(x, ref)


def factor_both(pair: Pair, m: Any) -> None:
    k, serial, dtype = pair
    args, ref = ilu0_args(m, index_dtype=dtype), ilu0_args(m, index_dtype=dtype)
    index = {name: v for name, v in args.items() if name != "A"}
    k(plan=plan_for(k, **index), **args)
    serial(**ref)
    np.testing.assert_array_equal(args["A"], ref["A"])


def mtx(suitesparse_dir: Path, name: str) -> sps.csr_array:
    path = suitesparse_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    m = sps.csr_array(read_matrix_market(path))
    m.sum_duplicates()
    m.sort_indices()
    return m


# ============================================================================= Gauss-Seidel
@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_gauss_seidel_random(gs: Pair, omp_threads: int, n: int, density: float, seed: int) -> None:
    sweep_both(gs, random_matrix(n, density, seed), seed)


@pytest.mark.parametrize("name", GS_SUITESPARSE)
def test_gauss_seidel_suitesparse(
    gs: Pair, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    sweep_both(gs, mtx(suitesparse_dir, name), 3)


def test_gauss_seidel_plan_is_reusable_over_sweeps(gs: Pair) -> None:
    """One plan, many sweeps: converges on 2-D Poisson like the serial sweep, bit for bit."""
    k, serial, dtype = gs
    a = spf.sparse.poisson2d(9)
    args = gauss_seidel_args(a, index_dtype=dtype)
    plan = plan_for(k, **args)
    assert plan.levels > 1
    b, x, ref = np.ones(a.shape[0]), np.zeros(a.shape[0]), np.zeros(a.shape[0])
    for _ in range(40):
        k(x=x, b=b, plan=plan, **args)
        serial(x=ref, b=b, **args)
    np.testing.assert_array_equal(x, ref)


def test_gauss_seidel_levels_order_both_triangles() -> None:
    """Row ``i`` comes after every row ``j < i`` it reads (flow) and every row ``j < i`` that
    reads it (anti): on a pattern whose upper triangle differs from its lower one."""
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i")
    k = comp.compile()
    assert isinstance(k, WavefrontKernel)
    # 0 reads x(2) (anti: 0 before 2); 1 reads nothing; 2 reads nothing below it
    a = sps.csr_array(np.array([[4.0, 0.0, 1.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]))
    plan = plan_for(k, **gauss_seidel_args(a))
    np.testing.assert_array_equal(plan.level_of, [0, 0, 1])


def test_gauss_seidel_p2p_counts_pushed_edges() -> None:
    """p2p: each row waits on the flags of the rows ``col(k) < i`` it reads (pull) and until
    every earlier row that reads its ``x`` has added one back to its ``pending`` counter,
    which a serial prologue set to minus their number (push)."""
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method="p2p")
    code = comp.codegen()
    assert "spf_wait_flag(&done_i(j), 1)" in code
    assert "spf_wait_flag(&pending_i(i), 0)" in code
    assert "spf_post_add(&pending_i(j))" in code
    assert "__atomic_fetch_add((p), 1, __ATOMIC_RELEASE)" in code
    region = code.index("#pragma omp parallel")
    head = "void gauss_seidel_csr_spf_faults("  # the loops' function when it has a fault record
    prologue = code.index("{", code.index(head if head in code else "void gauss_seidel_csr("))
    assert code.index("pending_i(j) -= 1") < region
    assert "s8(i, k, col_k" in code[prologue:region]  # the prologue runs before the region
    body = code[region:]
    assert body.index("wait_i0(") < body.index("wait_i1(") < body.index("s0(")
    # s3 divides the row's x(i), kept in a local (spf.codegen.row_scalar) stored before posts
    post = body.index("post_i2(")
    assert body.index("spf_row = spf_row / A(diag_i);") < body.rindex("= spf_row;", 0, post)
    # the waits, the statements and the posts all read diag(i): bound once in the row's block
    assert body.count("const int64_t diag_i = diag(order_i_i_pos);") == 1


def test_gauss_seidel_assumption_checked_before_inspecting(gs: Pair) -> None:
    k, _, dtype = gs
    args = gauss_seidel_args(random_matrix(6, 0.5, 2), index_dtype=dtype)
    args["diag"] = args["diag"].copy()
    args["diag"][3] = (
        args["rowptr"][3] if args["diag"][3] != args["rowptr"][3] else args["rowptr"][4] - 1
    )
    with pytest.raises(spf.ArgumentError, match=r"col\(diag\(i\)\) = i"):
        k.inspect(**args)


# ===================================================================================== ILU0
@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_ilu0_random(ilu0: Pair, omp_threads: int, n: int, density: float, seed: int) -> None:
    factor_both(ilu0, random_matrix(n, density, seed + 100))


@pytest.mark.parametrize("name", ILU0_SUITESPARSE)
def test_ilu0_suitesparse(ilu0: Pair, omp_threads: int, suitesparse_dir: Path, name: str) -> None:
    factor_both(ilu0, mtx(suitesparse_dir, name))


def test_ilu0_levels_are_those_of_the_lower_triangle(ilu0: Pair) -> None:
    """ILU(0) row ``i`` waits on the rows ``col(k)``, ``k`` left of its diagonal: the levels
    of SpTRSV on its lower triangle."""
    k, _, dtype = ilu0
    m = random_matrix(300, 0.02, 9)
    args = ilu0_args(m, index_dtype=dtype)
    plan = plan_for(k, **{n: v for n, v in args.items() if n != "A"})
    level = np.zeros(300, dtype=np.int64)
    for i in range(300):
        for p in range(m.indptr[i], m.indptr[i + 1]):
            if m.indices[p] < i:
                level[i] = max(level[i], level[m.indices[p]] + 1)
    np.testing.assert_array_equal(plan.level_of, level)


# ============================================== the textbook C, imported with spf.from_c
# API.md section 15: a scalar declared in the row loop (or written before it is read in each
# row) is private to the row, so the loop runs as a wavefront as written; ILU(0) reads
# val[diag[col[k]]] directly and runs with the facts of spf.kernels.ilu0_csr().
C_SOURCES = Path(__file__).parent / "c_sources"
C_FLAGS = ["-O2", "-ffp-contract=off"]
"""Both sides compile with these flags, so the operation order decides every bit."""

GS_FUNCTION_LEVEL_SUM = """
void gs_long(long n, const long *rowptr, const long *col, const long *diag,
             const double *val, const double *b, double *x)
{
  long i, k;
  double sum;
  for (i = 0; i < n; i++) {
    sum = b[i];
    for (k = rowptr[i]; k < rowptr[i + 1]; k++)
      if (col[k] != i)
        sum -= val[k] * x[col[k]];
    x[i] = sum / val[diag[i]];
  }
}
"""
"""A function-level ``sum`` written before it is read in each row, ``long`` indices."""

ILU0_PIVOT = """
void ilu0_pivot(long n, const long *rowptr, const long *col, const long *diag, double *val)
{
  for (long i = 0; i < n; i++)
    for (long k = rowptr[i]; k < diag[i]; k++) {
      double pivot = val[k] / val[diag[col[k]]];
      val[k] = pivot;
      for (long j = k + 1; j < rowptr[i + 1]; j++)
        for (long m = diag[col[k]] + 1; m < rowptr[col[k] + 1]; m++)
          if (col[m] == col[j])
            val[j] -= pivot * val[m];
    }
}
"""
"""ILU(0) with the pivot in a scalar declared in loop ``k`` (private to it), ``long``."""

TEXTBOOK_UFS = {
    "rowptr": {"domain": "{[a]: 0 <= a <= n}", "range": "{[v]: 0 <= v <= NNZ}",
               "monotonic": "nondecreasing"},
    "col": {"domain": "{[a]: 0 <= a < NNZ}", "range": "{[v]: 0 <= v < n}"},
    "diag": {"domain": "{[a]: 0 <= a < n}", "range": "{[v]: 0 <= v < NNZ}",
             "monotonic": "increasing"},
}  # fmt: skip
"""What ``spf.kernels.ilu0_csr()`` declares of its index arrays, in the C names."""

CNAMES = {"A": "val", "N": "n"}


@dataclass(frozen=True)
class Textbook:
    kernel: WavefrontKernel
    gcc: Callable[..., None]
    dtype: str


def gcc_function(text: str, function: str, folder: Path) -> Callable[..., None]:
    """``function`` of ``text`` compiled by gcc, called with numpy arrays and sizes."""
    c_file, lib = folder / f"{function}.c", folder / f"lib{function}.so"
    c_file.write_text(text)
    subprocess.run(["gcc", *C_FLAGS, "-std=c99", "-shared", "-fPIC", str(c_file), "-o", str(lib)],
                   check=True, capture_output=True)  # fmt: skip
    fn = getattr(ctypes.CDLL(str(lib)), function)
    fn.restype = None
    size = ctypes.c_long if "long n" in text else ctypes.c_int

    def call(*args: Any) -> None:
        fn(*(ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else size(a)
             for a in args))  # fmt: skip

    return call


def textbook(text: str, function: str, dtype: str, method: str, folder: Path) -> Textbook:
    vectors = {"x": ("n",), "b": ("n",)} if "*x" in text else {}
    comp = spf.from_c(text, function=function, ufs=TEXTBOOK_UFS,
                      shapes={"val": ("NNZ",), **vectors})  # fmt: skip
    for fact in kernels.ilu0_csr().assumptions:
        comp.assume(fact.text)
    comp.wavefront("i", method=method)
    k = comp.compile(cflags=C_FLAGS)
    assert isinstance(k, WavefrontKernel)
    return Textbook(k, gcc_function(text, function, folder), dtype)


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "p2p")])
def textbook_gs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Textbook:
    dtype, method = request.param
    folder = tmp_path_factory.mktemp("gs")
    if dtype == "int32":
        return textbook((C_SOURCES / "gauss_seidel_csr.c").read_text(), "gauss_seidel_csr",
                        dtype, method, folder)  # fmt: skip
    return textbook(GS_FUNCTION_LEVEL_SUM, "gs_long", dtype, method, folder)


@pytest.fixture(scope="module", params=[("int32", "levels"), ("int64", "p2p")])
def textbook_ilu0(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Textbook:
    dtype, method = request.param
    folder = tmp_path_factory.mktemp("ilu0")
    if dtype == "int32":
        return textbook((C_SOURCES / "ilu0_csr.c").read_text(), "ilu0_csr", dtype, method,
                        folder)  # fmt: skip
    return textbook(ILU0_PIVOT, "ilu0_pivot", dtype, method, folder)


def textbook_sweep(tb: Textbook, m: Any, seed: int) -> None:
    args = gauss_seidel_args(m, index_dtype=tb.dtype, names=CNAMES)
    rng = np.random.default_rng(seed)
    b, x0 = rng.standard_normal(m.shape[0]), rng.standard_normal(m.shape[0])
    x, ref = x0.copy(), x0.copy()
    tb.kernel(x=x, b=b, plan=plan_for(tb.kernel, **args), **args)
    tb.gcc(args["n"], args["rowptr"], args["col"], args["diag"], args["val"], b, ref)
    assert x.tobytes() == ref.tobytes()


def textbook_factor(tb: Textbook, m: Any) -> None:
    args = ilu0_args(m, index_dtype=tb.dtype, names=CNAMES)
    ref = args["val"].copy()
    index = {name: v for name, v in args.items() if name != "val"}
    tb.kernel(plan=plan_for(tb.kernel, **index), **args)
    tb.gcc(args["n"], args["rowptr"], args["col"], args["diag"], ref)
    assert args["val"].tobytes() == ref.tobytes()


@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_textbook_gauss_seidel_c_random(
    textbook_gs: Textbook, omp_threads: int, n: int, density: float, seed: int
) -> None:
    textbook_sweep(textbook_gs, random_matrix(n, density, seed), seed)


@pytest.mark.parametrize("name", GS_SUITESPARSE)
def test_textbook_gauss_seidel_c_suitesparse(
    textbook_gs: Textbook, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    textbook_sweep(textbook_gs, mtx(suitesparse_dir, name), 3)


@pytest.mark.parametrize(("n", "density", "seed"), RANDOM)
def test_textbook_ilu0_c_random(
    textbook_ilu0: Textbook, omp_threads: int, n: int, density: float, seed: int
) -> None:
    textbook_factor(textbook_ilu0, random_matrix(n, density, seed + 100))


@pytest.mark.parametrize("name", ILU0_SUITESPARSE)
def test_textbook_ilu0_c_suitesparse(
    textbook_ilu0: Textbook, omp_threads: int, suitesparse_dir: Path, name: str
) -> None:
    textbook_factor(textbook_ilu0, mtx(suitesparse_dir, name))


def test_textbook_sum_is_declared_inside_the_rows_of_the_executor(textbook_gs: Textbook) -> None:
    """Each row (each thread) has its own ``sum``: declared in the body of the rows loop."""
    code = textbook_gs.kernel.source
    rows = code.index("for (int64_t i_pos")
    assert "double sum[1] = {0};" in code[rows:]
    assert "double sum[1]" not in code[:rows]


SHARED_SUM = """
void gs_damped(int n, const int *rowptr, const int *col, const double *val,
               const double *diag, const double *b, double *x)
{
  double sum = 0.0;
  for (int i = 0; i < n; i++) {
    sum = 0.5 * sum + b[i];
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      if (col[k] != i)
        sum -= val[k] * x[col[k]];
    x[i] = sum / diag[i];
  }
}
"""
"""``sum`` carries a value from one row to the next: it stays shared."""


def test_shared_scalar_wavefront_error_names_it_and_says_how_to_privatize() -> None:
    comp = spf.from_c(SHARED_SUM, shapes={"val": ("NNZ",), "x": ("n",), "b": ("n",),
                                          "diag": ("n",)})  # fmt: skip
    assert comp.data_spaces["sum"].private is None
    with pytest.raises(spf.IllegalScheduleError) as err:
        comp.wavefront("i")
    text = str(err.value)
    assert "'sum' is a scalar shared by every iteration of loop 'i'" in text
    assert "declaring it inside the loop body" in text
    assert "writing it before reading it in every iteration" in text
    assert "triangular" not in text
