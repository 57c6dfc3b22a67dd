"""The C runtime: cached builds (spf.runtime.build) and kernels bound by name (spf.runtime.kernel).

Hand-written C sources and Signatures, checked against numpy / scipy.
"""

from __future__ import annotations

import functools
import multiprocessing
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import scipy.sparse as sp

from spf.codegen.signature import Arg, Signature
from spf.errors import ArgumentError, CompileError, SpfError
from spf.runtime import Kernel, build_c, default_cache_dir
from spf.sets import UF

F64 = npt.NDArray[np.float64]
RNG = np.random.default_rng(7)

# ------------------------------------------------------------------------------- kernels
DENSE_MV_SRC = r"""
#include <stdint.h>
void dense_mv(int64_t M, int64_t N, double *restrict y, const double *restrict A,
              const double *restrict x) {
  #pragma omp parallel for
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < M; j++)
      y[i] += A[i * M + j] * x[j];
}
"""
DENSE_MV = Signature(
    function="dense_mv",
    args=(
        Arg(name="M", kind="param", ctype="int64_t"),
        Arg(name="N", kind="param", ctype="int64_t"),
        Arg(name="y", kind="data", ctype="double", shape=("N",)),
        Arg(name="A", kind="data", ctype="double", const=True, shape=("N", "M")),
        Arg(name="x", kind="data", ctype="double", const=True, shape=("M",)),
    ),
)

SPMV_SRC = r"""
#include <stdint.h>
void spmv(int64_t M, int64_t N, int64_t NNZ, const IDX *restrict col,
          const IDX *restrict rowptr, double *restrict y, const double *restrict A,
          const double *restrict x) {
  (void)M; (void)NNZ;
  for (int64_t i = 0; i < N; i++)
    for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
      y[i] += A[k] * x[col[k]];
}
"""


def spmv_signature(
    dtype: str = "int32", monotonic: str = "nondecreasing", col_range: bool = True
) -> Signature:
    ctype = f"{dtype}_t"
    rowptr = UF(
        "rowptr",
        domain="{[i]: 0 <= i <= N}",
        range="{[v]: 0 <= v <= NNZ}",
        monotonic=monotonic,  # type: ignore[arg-type]
        dtype=dtype,
    )
    col = UF(
        "col",
        domain="{[k]: 0 <= k < NNZ}",
        range="{[v]: 0 <= v < M}" if col_range else None,
        dtype=dtype,
    )
    return Signature(
        function="spmv",
        args=(
            Arg(name="M", kind="param", ctype="int64_t"),
            Arg(name="N", kind="param", ctype="int64_t"),
            Arg(name="NNZ", kind="param", ctype="int64_t"),
            Arg(name="col", kind="uf", ctype=ctype, const=True, uf=col),
            Arg(name="rowptr", kind="uf", ctype=ctype, const=True, uf=rowptr),
            Arg(name="y", kind="data", ctype="double", shape=("N",)),
            Arg(name="A", kind="data", ctype="double", const=True, shape=("NNZ",)),
            Arg(name="x", kind="data", ctype="double", const=True, shape=("M",)),
        ),
    )


DOT_SRC = r"""
#include <stdint.h>
void dot(int64_t N, const double *restrict x, const double *restrict y, double *restrict s) {
  for (int64_t i = 0; i < N; i++) *s += x[i] * y[i];
}
"""
DOT = Signature(
    function="dot",
    args=(
        Arg(name="N", kind="param", ctype="int64_t"),
        Arg(name="x", kind="data", ctype="double", const=True, shape=("N",)),
        Arg(name="y", kind="data", ctype="double", const=True, shape=("N",)),
        Arg(name="s", kind="data", ctype="double", shape=(), rank=0),
    ),
)

SHIFT_SRC = r"""
#include <stdint.h>
void shift(int64_t K, int64_t N, double *restrict y) {
  for (int64_t i = 0; i < N - 2; i++) y[i] += (double)K;
}
"""
SHIFT = Signature(
    function="shift",
    args=(
        Arg(name="K", kind="param", ctype="int64_t"),
        Arg(name="N", kind="param", ctype="int64_t"),
        Arg(name="y", kind="data", ctype="double", shape=("N - 2",)),
    ),
)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def mv(cache: Path) -> Kernel:
    return Kernel.build(DENSE_MV, DENSE_MV_SRC, cache_dir=cache, openmp=False)


@pytest.fixture
def spmv32(cache: Path) -> Kernel:
    return Kernel.build(
        spmv_signature("int32"), SPMV_SRC.replace("IDX", "int32_t"), cache_dir=cache
    )


def csr(n: int, m: int, density: float, dtype: Any = np.int32) -> dict[str, Any]:
    mat = sp.random(n, m, density=density, format="csr", random_state=RNG)
    return {
        "rowptr": mat.indptr.astype(dtype),
        "col": mat.indices.astype(dtype),
        "A": mat.data.copy(),
        "x": RNG.random(m),
        "y": np.zeros(n),
        "matrix": mat,
    }


# ------------------------------------------------------------------------------- results
def test_dense_mv_matches_numpy(mv: Kernel) -> None:
    A, x, y = RNG.random((5, 7)), RNG.random(7), RNG.random(5)
    expect = y + A @ x
    mv(y=y, A=A, x=x, N=5, M=7)
    np.testing.assert_allclose(y, expect)


def test_parameters_inferred_from_shapes(mv: Kernel) -> None:
    A, x, y = RNG.random((4, 3)), RNG.random(3), np.zeros(4)
    mv(y=y, A=A, x=x)
    np.testing.assert_allclose(y, A @ x)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("n", "m", "density"), [(50, 40, 0.1), (7, 9, 0.0), (0, 3, 0.0)])
def test_spmv_csr_matches_scipy(cache: Path, dtype: str, n: int, m: int, density: float) -> None:
    kernel = Kernel.build(
        spmv_signature(dtype), SPMV_SRC.replace("IDX", f"{dtype}_t"), cache_dir=cache
    )
    a = csr(n, m, density, np.dtype(dtype))
    kernel(y=a["y"], A=a["A"], x=a["x"], rowptr=a["rowptr"], col=a["col"])
    np.testing.assert_allclose(a["y"], a["matrix"] @ a["x"])


def test_zero_d_accumulator(cache: Path) -> None:
    kernel = Kernel.build(DOT, DOT_SRC, cache_dir=cache)
    x, y = RNG.random(11), RNG.random(11)
    s = np.zeros(())
    kernel(x=x, y=y, s=s)
    assert s[()] == pytest.approx(x @ y)
    one = np.array([1.0])
    kernel(x=x, y=y, s=one)
    assert one[0] == pytest.approx(1.0 + x @ y)
    with pytest.raises(ArgumentError, match="0-d"):
        kernel(x=x, y=y, s=np.zeros(2))


def test_parameter_in_expression_extent(cache: Path) -> None:
    kernel = Kernel.build(SHIFT, SHIFT_SRC, cache_dir=cache)
    y = np.zeros(3)
    kernel(y=y, N=5, K=np.int32(2))
    np.testing.assert_array_equal(y, [2.0, 2.0, 2.0])
    with pytest.raises(ArgumentError, match=r"missing parameter\(s\) K"):
        kernel(y=y, N=5)
    with pytest.raises(ArgumentError, match=r"expected shape \(4,\)"):
        kernel(y=y, N=6, K=1)


def test_openmp_build(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    kernel = Kernel.build(DENSE_MV, DENSE_MV_SRC, cache_dir=cache, openmp=True)
    assert "-fopenmp" in kernel.command
    A, x, y = RNG.random((301, 17)), RNG.random(17), np.zeros(301)
    kernel(y=y, A=A, x=x)
    np.testing.assert_allclose(y, A @ x)


@pytest.mark.default_flags  # spf's own flags in the command
def test_kernel_attributes(mv: Kernel) -> None:
    assert mv.name == "dense_mv"
    assert mv.signature == DENSE_MV.c_prototype()
    assert mv.source == DENSE_MV_SRC
    assert mv.path.is_file()
    assert mv.path.suffix == ".so"
    assert mv.command.startswith("gcc ")
    assert str(mv.path) in mv.command
    assert "-O3 -march=native" in mv.command
    assert "-Wall -Wextra" in mv.command
    assert "dense_mv" in repr(mv)


def test_arguments_in_any_order(cache: Path) -> None:
    src = "#include <stdint.h>\nvoid k(double *restrict y, int64_t N) { y[N - 1] = 1.0; }\n"
    sig = Signature(
        function="k",
        args=(
            Arg(name="y", kind="data", ctype="double", shape=("N",)),
            Arg(name="N", kind="param", ctype="int64_t"),
        ),
    )
    y = np.zeros(4)
    Kernel.build(sig, src, cache_dir=cache)(y=y)
    np.testing.assert_array_equal(y, [0, 0, 0, 1])


# ------------------------------------------------------------------------------- builds
def test_cache_hit_runs_no_compiler(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = build_c(DOT_SRC, name="dot", cache_dir=cache)
    assert first.parent.parent == cache
    assert first.name.startswith("dot-")
    mtime = first.stat().st_mtime_ns

    def no_compiler(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"compiler called on a cache hit: {args}")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert build_c(DOT_SRC, name="dot", cache_dir=cache) == first
    assert first.stat().st_mtime_ns == mtime
    assert first.with_suffix(".c").read_text() == DOT_SRC


def test_key_depends_on_flags_and_source(cache: Path) -> None:
    base = build_c(DOT_SRC, name="dot", cache_dir=cache)
    assert build_c(DOT_SRC, name="dot", cache_dir=cache, openmp=False) != base
    assert build_c(DOT_SRC, name="dot", cache_dir=cache, cflags=["-O1"]) != base
    assert build_c(DOT_SRC + "\n", name="dot", cache_dir=cache) != base


def test_cflags_replace_optimisation_flags(cache: Path) -> None:
    kernel = Kernel.build(DOT, DOT_SRC, cache_dir=cache, cflags=["-O1", "-g"], openmp=False)
    words = kernel.command.split()
    assert "-O1" in words
    assert "-g" in words
    assert "-O3" not in words
    assert {"-std=c99", "-fPIC", "-shared", "-Wall", "-Wextra"} <= set(words)
    assert "-fopenmp" not in words
    x = RNG.random(3)
    s = np.zeros(())
    kernel(x=x, y=x, s=s)
    assert s[()] == pytest.approx(x @ x)


def test_default_cache_dir_from_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    path = build_c(DOT_SRC, name="dot")
    assert path.is_relative_to(tmp_path / "env")
    monkeypatch.delenv("SPF_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "spf"


def test_concurrent_builds_from_two_processes(cache: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    sources = [DENSE_MV_SRC + f"\n/* round {r} */\n" for r in range(3)]
    with ctx.Pool(2) as pool:
        for src in sources:
            job = functools.partial(build_c, name="dense_mv", cache_dir=str(cache))
            paths = pool.map(job, [src, src])
            assert paths[0] == paths[1]
            assert paths[0].is_file()
            kernel = Kernel(DENSE_MV, src, paths[0], "")
            A, x, y = RNG.random((6, 5)), RNG.random(5), np.zeros(6)
            kernel(y=y, A=A, x=x)
            np.testing.assert_allclose(y, A @ x)
    leftovers = list(cache.rglob(".*"))
    assert leftovers == []
    assert len(list(cache.rglob("*.so"))) == len(sources)


def test_builds_of_one_library_at_once_run_the_compiler_once(cache: Path, tmp_path: Path) -> None:
    """The ranks of an MPI job (or a test run's workers) asking for one library at the same
    time: one compiles under the entry's lock, the others wait, then load its library."""
    runs = tmp_path / "runs"
    wrapper = tmp_path / "slow-gcc"
    wrapper.write_text(
        f'#!/bin/sh\ncase " $* " in *" -o "*) echo run >> {runs}; sleep 0.5;; esac\nexec gcc "$@"\n'
    )
    wrapper.chmod(0o755)
    job = functools.partial(build_c, name="dense_mv", cache_dir=str(cache), compiler=str(wrapper))
    with ThreadPoolExecutor(3) as pool:
        paths = list(pool.map(job, [DENSE_MV_SRC] * 3))
    assert len(set(paths)) == 1
    assert runs.read_text().splitlines() == ["run"]
    kernel = Kernel(DENSE_MV, DENSE_MV_SRC, paths[0], "")
    A, x, y = RNG.random((6, 5)), RNG.random(5), np.zeros(6)
    kernel(y=y, A=A, x=x)
    np.testing.assert_allclose(y, A @ x)


def test_compile_error_carries_command_source_and_stderr(cache: Path) -> None:
    broken = "void broken(void) { int x = ; }\n"
    with pytest.raises(CompileError) as info:
        build_c(broken, name="broken", cache_dir=cache)
    err = info.value
    assert err.command.startswith("gcc ")
    assert "-shared" in err.command
    assert "error" in err.stderr
    assert Path(err.source_path).read_text() == broken
    assert err.source_path in err.command
    assert "error" in str(err)
    assert err.command in str(err)
    assert list(cache.rglob("*.so")) == []


def test_missing_compiler(cache: Path) -> None:
    with pytest.raises(CompileError, match="spf-no-such-cc"):
        build_c(DOT_SRC, name="dot", cache_dir=cache, compiler="spf-no-such-cc")


def test_warnings_are_kept_not_fatal(cache: Path) -> None:
    src = DOT_SRC.replace("for (", "int unused; for (")
    kernel = Kernel.build(DOT, src, cache_dir=cache)
    assert "unused" in kernel.compiler_output
    again = Kernel.build(DOT, src, cache_dir=cache)  # cache hit: the log is read back
    assert "unused" in again.compiler_output


def test_cplusplus_build(cache: Path) -> None:
    src = 'extern "C" void dot(long N, const double *x, const double *y, double *s) {\n'
    src += "  for (long i = 0; i < N; i++) *s += x[i] * y[i];\n}\n"
    kernel = Kernel.build(DOT, src, cache_dir=cache, language="c++")
    assert kernel.command.startswith("g++ ")
    assert "-std=c++17" in kernel.command
    s = np.zeros(())
    kernel(x=np.ones(4), y=np.ones(4), s=s)
    assert s[()] == 4.0


def test_unknown_language_and_missing_function(cache: Path) -> None:
    with pytest.raises(SpfError, match="language"):
        build_c(DOT_SRC, name="dot", cache_dir=cache, language="fortran")
    path = build_c(DOT_SRC, name="dot", cache_dir=cache)
    other = Signature(function="not_there", args=DOT.args)
    with pytest.raises(CompileError, match="not_there"):
        Kernel(other, DOT_SRC, path, "")


def test_name_is_sanitised(cache: Path) -> None:
    path = build_c(DOT_SRC, name="../weird name", cache_dir=cache)
    assert path.is_file()
    assert path.parent.parent == cache
    assert path.name.startswith("_weird_name-")


# ------------------------------------------------------------------------------- arguments
def _mv_args(n: int = 4, m: int = 3) -> dict[str, Any]:
    return {"y": np.zeros(n), "A": RNG.random((n, m)), "x": RNG.random(m)}


def _readonly(a: F64) -> F64:
    a.flags.writeable = False
    return a


BAD_MV_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown name", {**_mv_args(), "z": 1}, r"unknown argument\(s\) z.*expected: M, N, y, A, x"),
    ("missing array", {"y": np.zeros(4), "A": RNG.random((4, 3))}, r"missing array.* x"),
    ("bool param", {**_mv_args(), "N": True}, "must be an integer"),
    ("float param", {**_mv_args(), "N": 4.0}, "must be an integer"),
    ("huge param", {**_mv_args(), "N": 2**70}, "does not fit"),
    ("N disagrees", {**_mv_args(), "N": 5}, r"y: expected shape \(5,\).*got \(4,\)"),
    ("shapes disagree", {**_mv_args(), "y": np.zeros(6)}, r"A: expected shape.*taken from y"),
    ("dtype", {**_mv_args(), "x": np.ones(3, np.float32)}, r"float64.*astype\(np.float64\)"),
    ("not an array", {**_mv_args(), "x": [1.0, 2.0, 3.0]}, "numpy array"),
    ("non-contiguous", {**_mv_args(), "x": RNG.random(6)[::2]}, "np.ascontiguousarray"),
    ("fortran order", {**_mv_args(), "A": np.asfortranarray(RNG.random((4, 3)))}, "contiguous"),
    ("rank", {**_mv_args(), "A": RNG.random(12)}, r"expected 2-d, got a 1-d"),
    ("read-only output", {**_mv_args(), "y": _readonly(np.zeros(4))}, "read-only"),
]


@pytest.mark.parametrize(
    ("args", "pattern"), [c[1:] for c in BAD_MV_CALLS], ids=[c[0] for c in BAD_MV_CALLS]
)
def test_bad_arguments(mv: Kernel, args: dict[str, Any], pattern: str) -> None:
    with pytest.raises(ArgumentError, match=pattern) as info:
        mv(**args)
    assert isinstance(info.value, TypeError)


def test_read_only_input_is_fine(mv: Kernel) -> None:
    args = _mv_args()
    args["A"] = _readonly(args["A"])
    mv(**args)


def test_numpy_integer_parameters(mv: Kernel) -> None:
    args = _mv_args()
    mv(**args, N=np.int64(4), M=np.int32(3))
    np.testing.assert_allclose(args["y"], args["A"] @ args["x"])


def test_check_must_be_bool(mv: Kernel) -> None:
    with pytest.raises(ArgumentError, match="check"):
        mv(**_mv_args(), check="yes")  # type: ignore[arg-type]


def test_overlapping_output_rejected(cache: Path) -> None:
    kernel = Kernel.build(DOT, DOT_SRC, cache_dir=cache)
    buf = np.zeros(5)
    with pytest.raises(ArgumentError, match="share memory"):
        kernel(x=buf[:4], y=buf[:4], s=buf[3:4])
    kernel(x=buf[:4], y=buf[:4], s=buf[4:])  # inputs may alias each other, not the output


def test_uf_dtype_is_never_converted(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.3, np.int64)
    with pytest.raises(ArgumentError, match=r"int32.*astype\(np.int32\)"):
        spmv32(y=a["y"], A=a["A"], x=a["x"], rowptr=a["rowptr"], col=a["col"])


def test_uf_rank_checked(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.3)
    with pytest.raises(ArgumentError, match="col: expected 1-d"):
        spmv32(y=a["y"], A=a["A"], x=a["x"], rowptr=a["rowptr"], col=a["col"][None, :])


# ------------------------------------------------------------------------------- UF facts
def _spmv_call(kernel: Kernel, a: dict[str, Any], check: bool = True, **extra: Any) -> None:
    args = {k: a[k] for k in ("y", "A", "x", "rowptr", "col")}
    kernel(check=check, **{**args, **extra})


def test_decreasing_rowptr_rejected(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.5)
    a["rowptr"][2], a["rowptr"][3] = a["rowptr"][3], a["rowptr"][2] - 1
    with pytest.raises(ArgumentError, match=r"nondecreasing.*rowptr\[2\]"):
        _spmv_call(spmv32, a)
    _spmv_call(spmv32, a, check=False)  # unchecked: the loop just skips the bad row


def test_column_out_of_range_rejected(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.5)
    a["col"][3] = 5
    with pytest.raises(ArgumentError, match=r"col\[3\] = 5 is outside the declared range"):
        _spmv_call(spmv32, a)
    a["col"][3] = -1
    with pytest.raises(ArgumentError, match=r"col\[3\] = -1"):
        _spmv_call(spmv32, a)


def test_rowptr_beyond_nnz_rejected(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.5)
    a["rowptr"][-1] += 1
    with pytest.raises(ArgumentError, match=r"rowptr\[6\] = .* outside the declared range"):
        _spmv_call(spmv32, a)


def test_too_short_index_arrays_rejected(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.5)
    with pytest.raises(ArgumentError, match=r"rowptr: length 6 is too short.*index 6"):
        _spmv_call(spmv32, a, rowptr=a["rowptr"][:-1].copy())
    with pytest.raises(ArgumentError, match=r"col: length .* too short"):
        _spmv_call(spmv32, a, col=a["col"][:-1].copy())


def test_longer_index_arrays_are_fine(spmv32: Kernel) -> None:
    a = csr(6, 5, 0.5)
    col = np.concatenate([a["col"], np.array([99, -7], np.int32)])  # beyond the domain
    _spmv_call(spmv32, a, col=col, NNZ=len(a["A"]))
    np.testing.assert_allclose(a["y"], a["matrix"] @ a["x"])


def test_increasing_uf_rejects_repeats(cache: Path) -> None:
    sig = spmv_signature("int64", monotonic="increasing")
    kernel = Kernel.build(sig, SPMV_SRC.replace("IDX", "int64_t"), cache_dir=cache)
    a = csr(4, 4, 0.0, np.int64)  # empty rows: rowptr repeats
    with pytest.raises(ArgumentError, match="declared increasing"):
        _spmv_call(kernel, a)


def test_undeclared_range_is_not_invented(cache: Path) -> None:
    sig = spmv_signature("int32", col_range=False)
    kernel = Kernel.build(sig, SPMV_SRC.replace("IDX", "int32_t"), cache_dir=cache)
    a = csr(8, 6, 0.4)
    _spmv_call(kernel, a)
    np.testing.assert_allclose(a["y"], a["matrix"] @ a["x"])
