"""C simulation of the HLS backend: GEMM, the two-stage blur and CSR SpMV against numpy/scipy.

Each kernel is generated for Vitis HLS, its pragmas are checked with
:mod:`spf.codegen.hls_check`, and the same source is built with
``g++ -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas`` and run on numpy arrays.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.kernels
from spf.codegen.hls import generate
from spf.codegen.hls_check import check
from spf.errors import ArgumentError, CodegenError
from spf.runtime.hls import HlsKernel, compile_hls
from spf.sparse import csr_args, read_matrix_market
from spf.testing import random_csr

ROOT = Path(__file__).resolve().parents[2]
BOUNDS = {"N": 64, "M": 64, "K": 64}


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> str:
    return str(shared_cache)


def strict_flags(kernel: HlsKernel) -> None:
    argv = shlex.split(kernel.command)
    assert argv[0] == "g++"
    for flag in ("-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas"):
        assert flag in argv
    assert "-fopenmp" not in argv
    assert kernel.path.suffix == ".so"
    assert kernel.compiler_output.strip() == ""


# ----------------------------------------------------------------------------- GEMM
def gemm_schedules() -> dict[str, spf.Computation]:
    plain = spf.kernels.gemm()
    inner = spf.kernels.gemm()
    inner.stmts[0].pipeline("k", ii=2)
    ikj = spf.kernels.gemm()
    ikj.stmts[0].interchange("j", "k")
    ikj.stmts[0].pipeline("j")
    ikj.stmts[0].unroll("k", 2)
    tiled = spf.kernels.gemm()
    tiled.stmts[0].tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    tiled.stmts[0].pipeline("k")
    return {"plain": plain, "pipeline_k": inner, "ikj_pipeline_j": ikj, "tiled": tiled}


@pytest.mark.parametrize("schedule", ["plain", "pipeline_k", "ikj_pipeline_j", "tiled"])
@pytest.mark.parametrize(("n", "m", "k"), [(5, 7, 3), (9, 1, 17), (0, 4, 4), (6, 6, 0)])
def test_gemm_csim_matches_numpy(schedule: str, n: int, m: int, k: int, cache: str) -> None:
    comp = gemm_schedules()[schedule]
    check(generate(comp, hls_bounds=BOUNDS))
    kernel = compile_hls(comp, hls_bounds=BOUNDS, cache_dir=cache)
    strict_flags(kernel)
    rng = np.random.default_rng(n * 100 + m * 10 + k)
    A, B = rng.standard_normal((n, k)), rng.standard_normal((k, m))
    C = rng.standard_normal((n, m))
    want = C + A @ B
    kernel(C=C, A=A, B=B)
    np.testing.assert_allclose(C, want, rtol=1e-12, atol=1e-12)


def test_gemm_through_compile_target_hls(cache: str) -> None:
    comp = gemm_schedules()["ikj_pipeline_j"]
    kernel = comp.compile(target="hls", cache_dir=cache)
    assert isinstance(kernel, HlsKernel)
    assert kernel.source == comp.codegen("hls")
    assert f'extern "C" {kernel.signature}' in kernel.source
    assert "restrict" not in kernel.signature
    assert kernel.path.with_suffix(".cpp").read_text() == kernel.source
    strict_flags(kernel)
    A, B, C = np.ones((3, 2)), np.ones((2, 4)), np.zeros((3, 4))
    kernel(C=C, A=A, B=B)
    assert np.array_equal(C, np.full((3, 4), 2.0))


def test_parameters_beyond_bounds_are_refused(cache: str) -> None:
    kernel = compile_hls(
        spf.kernels.gemm(), hls_bounds={"N": 4, "M": 4, "K": (1, 4)}, cache_dir=cache
    )
    C, A, B = np.zeros((5, 4)), np.zeros((5, 4)), np.zeros((4, 4))
    with pytest.raises(ArgumentError, match=r"N=5 is outside 0\.\.4.*hls_bounds=\{'N': 5\}"):
        kernel(C=C, A=A, B=B)
    with pytest.raises(ArgumentError, match=r"K=0 is outside 1\.\.4"):
        kernel(C=np.zeros((4, 4)), A=np.zeros((4, 0)), B=np.zeros((0, 4)))


def test_runtime_refuses_bounds_the_source_was_not_generated_with(cache: str) -> None:
    from spf.codegen.program import signature
    from spf.runtime.hls import compile_kernel

    comp = spf.kernels.gemm()
    source = comp.codegen("hls")
    with pytest.raises(CodegenError, match="were not used to generate the source"):
        compile_kernel(
            source, signature(comp.ir, "gemm"), "gemm", hls_bounds={"N": 4}, cache_dir=cache
        )
    with pytest.raises(spf.SpfError, match="unknown option"):
        compile_kernel(source, signature(comp.ir, "gemm"), "gemm", emulate=True, cache_dir=cache)
    # bounds that are not a dict of ints or pairs: a CodegenError, not a raw TypeError
    for bad in ([("N", 4)], {"N": "4"}, {"N": (1, 2, 3)}):
        with pytest.raises(CodegenError, match="hls_bounds"):
            compile_kernel(
                source, signature(comp.ir, "gemm"), "gemm", hls_bounds=bad, cache_dir=cache
            )
    bounded = generate(comp, hls_bounds={"N": 4})
    # a header edited by hand: a CodegenError, not a KeyError/ValueError at the call
    for header, message in [
        ("Q=0..4", "records hls_bounds for Q, which gemm does not take"),
        ("N=0..x", "'N=0..x' is not NAME=MIN..MAX"),
    ]:
        with pytest.raises(CodegenError, match=message):
            compile_kernel(
                bounded.replace("N=0..4", header),
                signature(comp.ir, "gemm"),
                "gemm",
                cache_dir=cache,
            )
    kernel = compile_kernel(
        bounded, signature(comp.ir, "gemm"), "gemm", hls_bounds={"N": np.int64(4)}, cache_dir=cache
    )
    assert kernel.bounds == {"N": (0, 4)}


def test_generated_source_compiles_standalone_with_strict_warnings(tmp_path: Path) -> None:
    comp = gemm_schedules()["tiled"]
    path = tmp_path / "gemm.cpp"
    path.write_text(generate(comp, hls_bounds=BOUNDS))
    cmd = [
        "g++",
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wno-unknown-pragmas",
        "-c",
        str(path),
        "-o",
        str(tmp_path / "gemm.o"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------------- blur
def blur_reference(img: np.ndarray) -> np.ndarray:
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3.0
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3.0


def line_buffered_blur() -> spf.Computation:
    """Both stages in one row loop; bx lives in a 3-row line buffer, rows partitioned."""
    comp = spf.kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", 2)
    s1.after(s0, "i")
    s0.storage_fold("i", 3)
    comp.buffer("bx_buf").partition(0, 3, "complete")
    s0.pipeline("j")
    s1.pipeline("j")
    return comp


@pytest.mark.parametrize(("n", "m"), [(3, 3), (9, 13), (17, 4), (2, 5), (2, 2)])
def test_blur_two_stage_csim_matches_numpy(n: int, m: int, cache: str) -> None:
    comp = spf.kernels.blur2d()
    comp.stmts[0].pipeline("j")
    comp.stmts[1].pipeline("j")
    report = check(generate(comp))
    assert [loop.var for loop in report.loops] == ["i", "j", "i", "j"]
    kernel = comp.compile(target="hls", cache_dir=cache)
    strict_flags(kernel)
    img = np.random.default_rng(n + m).random((n, m))
    out, bx = np.zeros((max(n - 2, 0), max(m - 2, 0))), np.zeros((n, max(m - 2, 0)))
    kernel(out=out, bx=bx, img=img, N=n, M=m)
    if n >= 3 and m >= 3:
        np.testing.assert_allclose(out, blur_reference(img), rtol=1e-14)


@pytest.mark.parametrize(("n", "m"), [(3, 3), (9, 13), (40, 31), (64, 64), (2, 7)])
def test_line_buffered_blur_csim_matches_numpy(n: int, m: int, cache: str) -> None:
    comp = line_buffered_blur()
    source = generate(comp, hls_bounds={"N": 64, "M": 64})
    report = check(source)
    assert "double bx_buf[3][62] = {};" in source
    assert [p.directive for p in report.pragmas if p.directive == "ARRAY_PARTITION"] == [
        "ARRAY_PARTITION"
    ]
    assert [loop.var for loop in report.loops] == ["i", "j", "j"]
    assert all(loop.pragmas[0].directive == "PIPELINE" for loop in report.loops_of("j"))
    kernel = compile_hls(comp, hls_bounds={"N": 64, "M": 64}, cache_dir=cache)
    strict_flags(kernel)
    assert [a.name for a in kernel.arguments] == ["M", "N", "out", "img"]
    img = np.random.default_rng(n * m).random((n, m))
    out = np.zeros((max(n - 2, 0), m - 2))
    kernel(out=out, img=img, N=n, M=m)
    if n >= 3:
        np.testing.assert_allclose(out, blur_reference(img), rtol=1e-14)


# ----------------------------------------------------------------------------- SpMV
def spmv_hls(index_dtype: str, cache: str) -> HlsKernel:
    comp = spf.kernels.spmv_csr(index_dtype=index_dtype)
    comp.stmts[0].pipeline("k")
    check(generate(comp, hls_bounds={"N": 10_000}, hls_tripcounts={"k": (0, 64)}))
    return compile_hls(
        comp, hls_bounds={"N": 10_000}, hls_tripcounts={"k": (0, 64)}, cache_dir=cache
    )


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("n", "m", "density"), [(50, 40, 0.1), (7, 300, 0.05), (1, 1, 1.0), (0, 5, 0.0), (6, 9, 0.0)]
)
def test_spmv_csr_csim_matches_scipy(
    index_dtype: str, n: int, m: int, density: float, cache: str
) -> None:
    kernel = spmv_hls(index_dtype, cache)
    strict_flags(kernel)
    mat = random_csr(n, m, density, rng=n + m, empty_rows=[n // 2] if n > 2 else [])  # middle row
    x = np.random.default_rng(1).standard_normal(m)
    y = np.random.default_rng(2).standard_normal(n)
    want = y + mat @ x
    kernel(y=y, x=x, **csr_args(mat, index_dtype=index_dtype))
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_spmv_csr_unsorted_columns(cache: str) -> None:
    kernel = spmv_hls("int32", cache)
    rowptr = np.array([0, 3, 3, 5], dtype=np.int32)
    col = np.array([2, 0, 1, 1, 0], dtype=np.int32)
    A = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    x = np.array([10.0, 100.0, 1000.0])
    y = np.zeros(3)
    kernel(y=y, A=A, x=x, rowptr=rowptr, col=col, N=3, M=3, NNZ=5)
    assert np.array_equal(y, [1000.0 + 20.0 + 300.0, 0.0, 400.0 + 50.0])


def test_spmv_csr_on_suitesparse_matrices(suitesparse_dir: Path, cache: str) -> None:
    kernel = spmv_hls("int32", cache)
    paths = sorted(suitesparse_dir.glob("*.mtx"))[:4]
    assert paths
    for path in paths:
        mat = sp.csr_matrix(read_matrix_market(path))
        if mat.shape[0] > 10_000:
            continue
        mat.sum_duplicates()
        x = np.random.default_rng(0).standard_normal(mat.shape[1])
        y = np.zeros(mat.shape[0])
        kernel(y=y, x=x, **csr_args(mat))
        np.testing.assert_allclose(y, mat @ x, rtol=1e-10, atol=1e-10)


# ----------------------------------------------------------------------------- locals
def test_local_data_spaces_csim(cache: str) -> None:
    twice = spf.Computation("twice")
    twice.add_parameter("x", "double*")
    twice.add_data_space("tmp", "double", shape=("n",))
    twice.add_stmt(spf.Stmt("$tmp$(i) += 2 * $x$(i);", "{[i]: 0 <= i < n}", "{[i]->[0,i,0]}"))
    twice.add_stmt(spf.Stmt("$x$(i) += $tmp$(i);", "{[i]: 0 <= i < n}", "{[i]->[1,i,0]}"))
    main = spf.Computation("hls_locals")
    main.add_data_space("x", "double", shape=("n",))
    main.append_computation(twice, "{[t]: 0 <= t < 2}", "{[t]->[0,t,0]}", ["x"])
    kernel = compile_hls(main, hls_bounds={"n": 32}, cache_dir=cache)
    strict_flags(kernel)
    x, want = np.arange(5.0), np.arange(5.0)
    main.compile(cache_dir=cache)(x=want, n=5)
    kernel(x=x, n=5)
    assert np.array_equal(x, want)
    # tmp is zero on entry (as C's calloc) and accumulates across t:
    # t=0: tmp = 2x, x = 3x; t=1: tmp = 2x + 6x, x = 3x + 8x
    assert np.array_equal(x, np.arange(5.0) * 11)


def test_a_constant_named_like_a_python_keyword_csim(cache: str) -> None:
    """``lambda`` is a C name: the HLS printer read extents with Python's parser and refused
    the local ``t[lambda]`` ('not an integer expression') where the C target ran it."""
    comp = spf.Computation("hls_lambda")
    comp.add_data_space("x", "double", shape=("lambda",))
    comp.add_local("t", "double", shape=("lambda",))
    comp.add_stmt(spf.Stmt("$t$(i) = 3 * $x$(i);", "{[i]: 0 <= i < lambda}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt("$x$(i) += $t$(i);", "{[i]: 0 <= i < lambda}", "{[i]->[1,i,0]}"))
    source = generate(comp, hls_bounds={"lambda": 16})
    assert "double t[16] = {};" in source
    assert "depth=16" in source
    kernel = compile_hls(comp, hls_bounds={"lambda": 16}, cache_dir=cache)
    x = np.arange(5.0)
    kernel(x=x)
    np.testing.assert_array_equal(x, 4 * np.arange(5.0))


def test_buffer_allocated_inside_a_loop_csim(cache: str) -> None:
    """A row buffer allocated per ``i`` (``allocate_at``), partitioned cyclically."""
    comp = spf.Computation("rowtmp")
    for name in ("y", "tmp", "x"):
        comp.add_data_space(name, "double", shape=("N", "M"))
    s0 = comp.add_stmt(
        spf.Stmt(
            "$tmp$(i,j) = 2.0 * $x$(i,j);", "{[i,j]: 0<=i<N && 0<=j<M}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s1 = comp.add_stmt(
        spf.Stmt(
            "$y$(i,j) = $tmp$(i,j) + 1.0;", "{[i,j]: 0<=i<N && 0<=j<M}", "{[i,j]->[0,i,1,j,0]}"
        )
    )
    row = comp.add_buffer("row", ("M",), "double", scope="stack")
    s0.store_in(row, ["j"])
    row.allocate_at(s0, "i")
    row.partition(0, 2, "cyclic")
    s0.pipeline("j")
    s1.pipeline("j")
    report = check(generate(comp, hls_bounds={"M": 16}))
    (part,) = [p for p in report.pragmas if p.directive == "ARRAY_PARTITION"]
    assert part.get("variable") == "row"
    assert [loop.var for loop in report.loops] == ["i", "j", "j"]
    kernel = compile_hls(comp, hls_bounds={"M": 16}, cache_dir=cache)
    strict_flags(kernel)
    for n, m in [(5, 7), (1, 16), (0, 3), (3, 0)]:
        x = np.random.default_rng(n).random((n, m))
        y = np.zeros((n, m))
        kernel(y=y, x=x)
        np.testing.assert_array_equal(y, 2.0 * x + 1.0)


def test_math_calls_csim(cache: str) -> None:
    comp = spf.Computation("hls_math")
    comp.add_data_space("a", "double", shape=("N",))
    body = "$a$(i) = sqrt(fabs($a$(i))) + exp(0.0) + labs(i) + powf(2.0f, 1.0f) + fmax(1.0, 2.0);"
    comp.add_stmt(spf.Stmt(body, "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    kernel = compile_hls(comp, cache_dir=cache)
    strict_flags(kernel)
    a = np.array([4.0, 9.0, -16.0])
    kernel(a=a)
    np.testing.assert_array_equal(
        a, [2.0 + 1 + 0 + 2 + 2, 3.0 + 1 + 1 + 2 + 2, 4.0 + 1 + 2 + 2 + 2]
    )


# ----------------------------------------------------------------------------- example
def test_hls_gemm_example_runs(tmp_path: Path) -> None:
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "error"}
    out_file = tmp_path / "gemm_hls.cpp"
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "hls_gemm.py"), str(out_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "matches numpy" in done.stdout
    source = out_file.read_text()
    report = check(source)
    assert next(p.directive for p in report.loops_of("j")[0].pragmas) == "PIPELINE"


_BIG_LOCAL = """
import numpy as np, spf
from spf.runtime.hls import compile_hls
blur = spf.kernels.blur2d()
s0, s1 = blur.stmts
s1.shift("i", 2).after(s0, "i")
s0.storage_fold("i", 3)
line = compile_hls(blur, hls_bounds={"N": 64, "M": 400000})
img = np.random.default_rng(0).random((40, 31))
out = np.zeros((38, 29))
line(out=out, img=img, N=40, M=31)
bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
print(line.source.count("bx_buf[3][399998]") > 0, np.allclose(out, (bx[:-2] + bx[1:-1] + bx[2:]) / 3))
"""


def test_c_simulation_of_local_arrays_larger_than_a_threads_stack(fresh_python: Any) -> None:
    """An HLS function declares its local arrays at their hls_bounds size on the stack:
    9.6 MB of folded rows segfaulted the process on the calling thread's 8 MiB stack (a
    fresh interpreter, so that a crash fails this test, not the run); the C simulation of
    such a kernel runs on a thread with a stack that holds them."""
    assert fresh_python(_BIG_LOCAL) == ["True True"]


_BIG_LOCAL_TEXT = """
import numpy as np, spf
from spf.codegen.hls import generate
from spf.codegen.program import signature
from spf.runtime.hls import compile_kernel
blur = spf.kernels.blur2d()
s0, s1 = blur.stmts
s1.shift("i", 2).after(s0, "i")
s0.storage_fold("i", 3)
source = generate(blur, hls_bounds={"N": 64, "M": 400000})
line = compile_kernel(source, signature(blur.ir, "blur2d"), "blur2d")
img = np.random.default_rng(0).random((40, 31))
out = np.zeros((38, 29))
line(out=out, img=img, N=40, M=31)
bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
print(np.allclose(out, (bx[:-2] + bx[1:-1] + bx[2:]) / 3))
"""


def test_c_simulation_of_a_source_text_with_large_local_arrays(fresh_python: Any) -> None:
    """compile_kernel takes the source as text too: its local arrays (9.6 MB of folded
    rows) were counted as 0 bytes, so the call ran on the calling thread and segfaulted the
    process; they are now read from the declarations (spf.codegen.hls.local_bytes)."""
    assert fresh_python(_BIG_LOCAL_TEXT) == ["True"]


def test_c_simulation_without_a_thread_for_its_locals_is_a_memory_error(
    cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no thread with the stack the local arrays need can be started (hls_bounds of
    2**35 columns: 768 GiB of folded rows; here 4.8 MB, with thread starts failing), the
    call is a MemoryError naming the kernel and the bounds, not a raw
    RuntimeError("can't start new thread")."""
    blur = spf.kernels.blur2d()
    s0, s1 = blur.stmts
    s1.shift("i", 2).after(s0, "i")
    s0.storage_fold("i", 3)
    line = compile_hls(blur, hls_bounds={"N": 64, "M": 200000}, cache_dir=cache)

    def no_thread(self: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    with pytest.raises(MemoryError, match=r"kernel blur2d: .*local arrays.*smaller hls_bounds"):
        line(out=np.zeros((2, 2)), img=np.zeros((4, 4)))
