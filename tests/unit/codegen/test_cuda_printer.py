"""The CUDA printer (``spf.codegen.cuda``): kernels from gpu-tagged loops, grid extents from
loop bounds, buffers by scope, Layer IV copies and barriers, and the errors it raises."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

import spf
from spf.codegen.cuda import _Bounds, _upper, print_cuda
from spf.codegen.loop_ast import Expr, For, Int, Op, Var
from spf.codegen.program import Program, lower
from spf.errors import CodegenError, IllegalScheduleError, SpfError
from spf.runtime.cuda import build_nvcc, compile_kernel
from spf.schedule.tags import validate

GEMM_TAGS = {
    "b0": ("gpu_block(0)",),
    "b1": ("gpu_block(1)",),
    "t0": ("gpu_thread(0)",),
    "t1": ("gpu_thread(1)",),
}


def transpose(ti: int = 16, tj: int = 16) -> spf.Computation:
    comp = spf.Computation("t")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);",
            "{[i,j]: 0 <= i < N && 0 <= j < N}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    s.tile_gpu("i", "j", ti, tj)
    return comp


def vector_kernel(name: str = "v") -> tuple[spf.Computation, spf.Stmt]:
    comp = spf.Computation(name)
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt("$y$(i) = $y$(i) + $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}")
    )
    s.split("i", 32, "i0", "i1")
    s.gpu(("i0",), ("i1",))
    return comp, s


def steps_case() -> spf.Computation:
    comp = spf.Computation("steps")
    comp.add_data_space("x", "double", shape=("T",))  # read as x(t), 0 <= t < T
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt(
            "$y$(i) = $y$(i) + $x$(t);",
            "{[t,i]: 0 <= t < T && 0 <= i < N}",
            "{[t,i]->[0,t,0,i,0]}",
        )
    )
    s.split("i", 8, "i0", "i1")
    s.gpu(("i0",), ("i1",))
    return comp


def copies_case() -> spf.Computation:
    comp = spf.Computation("ops")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.host_to_device("x")  # [0]
    comp.host_to_device("y")  # [1]
    g = comp.add_stmt(
        spf.Stmt("$y$(i) = $y$(i) + $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[2,i,0,0,0]}")
    )
    g.split("i", 8, "i0", "i1")
    g.gpu(("i0",), ("i1",))
    return comp


def host_buffer_case() -> spf.Computation:
    comp, _ = vector_kernel("hb")
    comp.add_data_space("z", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    s0 = comp.add_stmt(
        spf.Stmt("$t$(i) = $x$(i) + 1.0;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0,0,0]}")
    )
    comp.add_stmt(spf.Stmt("$z$(i) = 3.0 * $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[2,i,0,0,0]}"))
    s0.store_in(comp.add_buffer("st", ("N",), "double", scope="stack"), ["i"])
    return comp


def global_buffer_case() -> spf.Computation:
    comp = spf.Computation("gb")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    s = comp.add_stmt(spf.Stmt("$t$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    s.store_in(comp.add_buffer("g", ("N",), "double", scope="global"), ["i"])
    s.split("i", 4, "i0", "i1")
    s.gpu(("i0",), ("i1",))
    return comp


def evaluate(e: Expr, env: dict[str, int]) -> int:
    """A loop-AST expression's value (C semantics of the operations the scanner emits)."""
    if isinstance(e, Int):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    assert isinstance(e, Op)
    a = [evaluate(x, env) for x in e.args]
    ops = {
        "+": lambda: a[0] + a[1],
        "-": lambda: a[0] - a[1],
        "*": lambda: a[0] * a[1],
        "neg": lambda: -a[0],
        "floord": lambda: a[0] // a[1],
        "/": lambda: int(a[0] / a[1]),
        "min": lambda: min(a),
        "max": lambda: max(a),
    }
    return ops[e.op]()


# ----------------------------------------------------------------------------- structure


def test_kernel_maps_innermost_loops_to_x_and_guards_partial_blocks() -> None:
    src = transpose().codegen("cuda")
    kernel = src[src.index('extern "C" __global__') : src.index("#if !defined(__CUDACC_RTC__) &&")]
    assert "void t_k0(int64_t N, float *__restrict__ B, const float *__restrict__ A)" in kernel
    assert "const int64_t i0 = 0 + (int64_t)blockIdx.y;" in kernel
    assert "const int64_t j0 = 0 + (int64_t)blockIdx.x;" in kernel
    assert "const int64_t i1 = 0 + (int64_t)threadIdx.y;" in kernel
    assert "const int64_t j1 = 0 + (int64_t)threadIdx.x;" in kernel
    # each gpu loop's own condition guards what follows (partial blocks)
    assert len(re.findall(r"if \(([ij][01]) <=", kernel)) == 4
    assert "cudaMalloc" not in kernel
    assert "__syncthreads" not in kernel


def test_one_launch_macro_and_a_host_function_with_counts() -> None:
    src = transpose().codegen("cuda")
    assert "#ifndef SPF_LAUNCH" in src
    assert "kernel<<<(grid), (block)>>>(__VA_ARGS__)" in src
    assert "SPF_LAUNCH(t_k0, spf_grid, spf_block, N, spf_d_B, spf_d_A);" in src
    assert (
        'extern "C" int t(int64_t N, float *__restrict__ B, const float *__restrict__ A, '
        "const int64_t *spf_count, const unsigned char *spf_on_device)" in src
    )
    assert 'extern "C" const char *t_spf_error(void)' in src
    # whole-program copies: everything used in, only what is written out
    host = src[src.index('extern "C" int t(') :]
    assert host.count("cudaMemcpyHostToDevice") == 2
    assert "SPF_CHECK(cudaMemcpy(B, spf_d_B" in host
    assert "SPF_CHECK(cudaMemcpy(A, spf_d_A" not in host
    assert host.count("cudaFree(") == 2


def test_nvrtc_sees_no_host_code() -> None:
    src = transpose().codegen("cuda")
    host = src.index("#if !defined(__CUDACC_RTC__) && !defined(SPF_DEVICE_ONLY)")
    assert src.index("cudaMalloc") > host
    assert src.index("#include <stdint.h>") > src.index("#if defined(__CUDACC_RTC__)")


def test_host_loop_variable_is_a_kernel_argument() -> None:
    comp = steps_case()
    src = comp.codegen("cuda")
    assert "void steps_k0(int64_t N, int64_t T, int64_t t, const double" in src
    assert "SPF_LAUNCH(steps_k0, spf_grid, spf_block, N, T, t, spf_d_x, spf_d_y);" in src
    k = comp.compile(target="cuda", emulate=True)
    x, y = np.arange(4.0), np.ones(12)
    k(x=x, y=y, T=4)
    np.testing.assert_array_equal(y, np.full(12, 1 + x[:4].sum()))


# ----------------------------------------------------------------------------- extents


def test_upper_bound_forms() -> None:
    i = Var("i")
    n = Var("N")
    assert _upper(For("i", Int(0), Op("<", (i, n)), 1, Int(0), 0)) == Op("-", (n, Int(1)))
    assert _upper(For("i", Int(0), Op(">=", (n, i)), 1, Int(0), 0)) == n
    both = Op("&&", (Op("<=", (i, n)), Op("<=", (i, Int(9)))))
    assert _upper(For("i", Int(0), both, 1, Int(0), 0)) == Op("min", (n, Int(9)))
    with pytest.raises(CodegenError, match="upper bound"):
        _upper(For("i", Int(0), Op("==", (i, n)), 1, Int(0), 0))


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100])
def test_thread_extent_bounds_every_block(n: int) -> None:
    """Interval bounds of ``min(15, N - 16*i0 - 1)`` over the block loop's range cover the
    real thread count of every block, and are exact for the largest."""
    bounds = _Bounds()
    i0 = Var("i0")
    bounds.lo["i0"], bounds.hi["i0"] = Int(0), Op("floord", (Op("-", (Var("N"), Int(1))), Int(16)))
    upper = Op("min", (Int(15), Op("-", (Op("-", (Var("N"), Op("*", (Int(16), i0)))), Int(1)))))
    bound = bounds.bound(upper, True)
    assert bound is not None
    value = evaluate(bound, {"N": n})
    per_block = [min(15, n - 16 * b - 1) for b in range(0, (n - 1) // 16 + 1)]
    assert value == max(per_block)
    assert bounds.bound(Op("max", (upper, Var("unknown_uf_value"))), True) is not None
    bounds.unknown.add("v")
    assert bounds.bound(Op("+", (Var("v"), Int(1))), True) is None


# ----------------------------------------------------------------------------- host code


def test_host_statements_get_copies_around_each_launch() -> None:
    comp, _ = vector_kernel()
    comp.add_stmt(spf.Stmt("$x$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0,0,0]}"))
    src = comp.codegen("cuda")
    host = src[src.index('extern "C" int v(') :]
    launch = host.index("SPF_LAUNCH")
    assert host.index("cudaMemcpy(spf_d_x, x") < launch
    assert host.index("cudaMemcpy(y, spf_d_y") > launch
    assert "x(i) = 2.0" not in host  # the host statement is the macro call
    assert "s1(i);" in host


def test_explicit_copies_replace_the_implicit_ones() -> None:
    comp = copies_case()
    src = comp.codegen("cuda")
    host = src[src.index('extern "C" int ops(') :]
    assert host.count("cudaMemcpyHostToDevice") == 2
    assert "cudaMemcpyDeviceToHost" not in host  # no device_to_host: y stays on the device
    k = comp.compile(target="cuda", emulate=True)
    x, y = np.arange(5.0), np.ones(5)
    k(x=x, y=y)
    np.testing.assert_array_equal(y, np.ones(5))  # not copied back, as the program says
    comp.device_to_host("y")
    k = comp.compile(target="cuda", emulate=True)
    k(x=x, y=y)
    np.testing.assert_array_equal(y, 1 + x)


def test_send_has_no_meaning_in_cuda() -> None:
    comp, _ = vector_kernel()
    comp.add_data_space("z", "double", shape=("N",))
    comp.send("{[r]: 0 <= r < 1}", "z", ["0"], "N", "r")
    with pytest.raises(CodegenError, match="target='mpi'"):
        comp.codegen("cuda")


# ----------------------------------------------------------------------------- buffers


def gemm_like(barrier_after_multiply: bool) -> spf.Computation:
    """Shared tiles loaded by every thread, a guarded multiply, and barriers."""
    comp = spf.Computation("g")
    comp.add_data_space("C", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("As", "double", shape=(4,))
    dom = "0 <= b && 4*b < N && 0 <= t < 4"
    load = comp.add_stmt(
        spf.Stmt(
            "$As$(t) = (4*b+t < N) ? $A$(4*b+t) : 0.0;",
            f"{{[b,t]: {dom}}}",
            "{[b,t]->[0,b,0,t,0,0,0]}",
        )
    )
    mul = comp.add_stmt(
        spf.Stmt(
            "$C$(4*b+t) += $As$(k);",
            f"{{[b,t,k]: {dom} && 0 <= k < 4 && 4*b+t < N}}",
            "{[b,t,k]->[0,b,0,t,2,k,0]}",
        )
    )
    load.store_in(comp.add_buffer("sh", (4,), "double", scope="shared"), ["t"])
    for s in (load, mul):
        s.gpu(("b",), ("t",))
    comp.barrier_at(load, "t")
    if barrier_after_multiply:
        comp.barrier_at(mul, "t")
    return comp


def test_shared_buffer_and_barrier() -> None:
    comp = gemm_like(barrier_after_multiply=False)
    src = comp.codegen("cuda", check=False)
    assert "__shared__ double sh[4];" in src
    assert src.count("__syncthreads();") == 1
    k = comp.compile(target="cuda", emulate=True, check=False)
    for n in (1, 4, 7, 9):
        A = np.random.default_rng(n).random(n)
        C = np.zeros(n)
        k(A=A, C=C)
        sums = [A[4 * (i // 4) : 4 * (i // 4) + 4].sum() for i in range(n)]
        np.testing.assert_allclose(C, sums)


def test_barrier_inside_thread_loops_is_refused_by_the_check() -> None:
    """Sequentially, thread 0 multiplies before thread 1 loads: what the barrier makes the
    GPU compute is not what the loops mean, so only check=False prints it."""
    with pytest.raises(IllegalScheduleError, match=r"loop 't' of s\d cannot run in parallel"):
        gemm_like(barrier_after_multiply=False).codegen("cuda")


def test_gpu_tags_allow_sequential_loops_between_blocks_and_threads() -> None:
    validate("gpu", "s0", ["b0", "b1", "kk", "t0", "t1"], GEMM_TAGS)
    validate("gpu", "s0", ["b0", "b1", "t0", "t1", "kk"], GEMM_TAGS)
    with pytest.raises(SpfError, match="consecutive block loops"):
        validate("gpu", "s0", ["b0", "kk", "b1", "t0", "t1"], GEMM_TAGS)
    with pytest.raises(SpfError, match="consecutive thread loops"):
        validate("gpu", "s0", ["b0", "b1", "t0", "kk", "t1"], GEMM_TAGS)
    with pytest.raises(SpfError, match="outside consecutive thread loops"):
        validate("gpu", "s0", ["t0", "t1", "kk", "b0", "b1"], GEMM_TAGS)
    with pytest.raises(SpfError, match="in the order of their indices"):
        validate("gpu", "s0", ["b1", "b0", "t0", "t1"], GEMM_TAGS)


def test_gpu_command_accepts_a_loop_between_blocks_and_threads() -> None:
    comp = spf.Computation("mid")
    comp.add_data_space("y", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt(
            "$y$(4*b+t) += 1.0;",
            "{[b,k,t]: 0 <= b && 0 <= t < 4 && 4*b+t < N && 0 <= k < 3}",
            "{[b,k,t]->[0,b,0,k,0,t,0]}",
        )
    )
    s.gpu(("b",), ("t",))
    assert comp.loop_structure() == (
        "for b [gpu_block(0)]:\n  for k:\n    for t [gpu_thread(0)]:\n      s0"
    )
    with pytest.raises(SpfError, match="outside consecutive thread loops"):
        s.interchange("b", "t")
    k = comp.compile(target="cuda", emulate=True)
    y = np.zeros(7)
    k(y=y)
    np.testing.assert_array_equal(y, np.full(7, 3.0))


def test_barrier_under_a_thread_dependent_condition_is_refused() -> None:
    comp = gemm_like(barrier_after_multiply=True)  # the multiply's guard is per thread
    with pytest.raises(CodegenError, match="differs between the threads"):
        comp.codegen("cuda", check=False)


def test_constant_and_local_buffers() -> None:
    """``W`` lives in a buffer written on the host and read by the kernel, printed here with
    the buffer in constant memory; ``tmp`` lives in a per-thread local array."""
    src, program = constant_case()
    assert "__constant__ double spf_c_w[3];" in src
    assert "const double *w = spf_c_w;" in src
    host = src[src.index('extern "C" int cl(') :]
    assert host.index("s0(k);") < host.index("cudaMemcpyToSymbol(spf_c_w, w,")
    assert host.index("cudaMemcpyToSymbol(spf_c_w, w,") < host.index("SPF_LAUNCH")
    assert re.search(r"^\s+double loc\[3\];", src, re.M)
    assert "spf_d_w" not in src
    opts: dict[str, Any] = {"openmp": False, "cflags": None, "cache_dir": None}
    k = compile_kernel(src, program.signature, "cl", emulate=True, **opts)
    y, w = np.zeros(10), np.zeros(3)
    k(y=y, w=w)
    np.testing.assert_array_equal(w, [1.0, 2.0, 5.0])
    np.testing.assert_array_equal(y, 8.0 * np.arange(10))


def test_shared_buffer_needs_static_extents() -> None:
    comp = spf.Computation("dyn")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    s0 = comp.add_stmt(spf.Stmt("$t$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    s1 = comp.add_stmt(spf.Stmt("$y$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,1]}"))
    s0.store_in(comp.add_buffer("sh", ("N",), "double", scope="shared"), ["i"])
    for s in (s0, s1):
        s.split("i", 4, "i0", "i1")
        s.gpu(("i0",), ("i1",))
    with pytest.raises(CodegenError, match="integer extents"):
        comp.codegen("cuda")


def test_host_buffers_live_on_the_host() -> None:
    """A ``stack`` buffer only host statements use is a host array of the function."""
    comp = host_buffer_case()
    src = comp.codegen("cuda")
    kernel = src[src.index("__global__") : src.index("#if !defined(__CUDACC_RTC__) &&")]
    assert "st" not in re.findall(r"\w+", kernel)
    assert "double *st = (double *)calloc" in src
    k = comp.compile(target="cuda", emulate=True)
    x, y, z = np.arange(6.0), np.ones(6), np.zeros(6)
    k(x=x, y=y, z=z)
    np.testing.assert_array_equal(y, 1 + x)
    np.testing.assert_array_equal(z, 3 * (x + 1))


def test_global_buffer_is_device_memory() -> None:
    comp = global_buffer_case()
    src = comp.codegen("cuda")
    assert "cudaMalloc((void **)&spf_d_g" in src
    assert "SPF_CHECK(cudaMemcpy(g, spf_d_g" in src
    k = comp.compile(target="cuda", emulate=True)
    x, g = np.arange(7.0), np.zeros(7)
    k(x=x, g=g)
    np.testing.assert_array_equal(g, 2 * x)


def constant_case() -> tuple[str, Program]:
    comp = spf.Computation("cl")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("W", "double", shape=(3,))
    comp.add_data_space("tmp", "double", shape=("N", 3))
    init = comp.add_stmt(
        spf.Stmt("$W$(k) = 1.0 + k * k;", "{[k]: 0 <= k < 3}", "{[k]->[0,k,0,0,0]}")
    )
    s0 = comp.add_stmt(
        spf.Stmt(
            "$tmp$(i,k) = $W$(k) * i;",
            "{[i,k]: 0 <= i < N && 0 <= k < 3}",
            "{[i,k]->[1,i,0,k,0]}",
        )
    )
    s1 = comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $tmp$(i,k);",
            "{[i,k]: 0 <= i < N && 0 <= k < 3}",
            "{[i,k]->[1,i,1,k,0]}",
        )
    )
    init.store_in(comp.add_buffer("w", (3,), "double", scope="global"), ["k"])
    s0.store_in(comp.add_buffer("loc", (3,), "double", scope="local"), ["k"])
    for s in (s0, s1):
        s.split("i", 4, "i0", "i1")
        s.gpu(("i0",), ("i1",))
    program = lower(comp.ir)
    buffers = tuple(
        dataclasses.replace(b, scope="constant") if b.name == "w" else b for b in program.buffers
    )
    src = print_cuda(dataclasses.replace(program, buffers=buffers))
    return src, program


@pytest.mark.requires_nvcc
@pytest.mark.parametrize(
    "make",
    [steps_case, copies_case, host_buffer_case, global_buffer_case, lambda: gemm_like(False)],
    ids=["host-loop", "explicit-copies", "host-buffer", "global-buffer", "shared-barrier"],
)
def test_printed_cases_build_with_nvcc(make: Any) -> None:
    comp = make()
    # the barrier inside the thread loops is a printer feature the check refuses (below)
    built = build_nvcc(comp.codegen("cuda", check=comp.name != "g"), name=comp.name)
    assert built.path.is_file()


@pytest.mark.requires_nvcc
def test_constant_memory_builds_with_nvcc() -> None:
    src, _ = constant_case()
    assert build_nvcc(src, name="cl").path.is_file()


# ----------------------------------------------------------------------------- device arrays


def _device_codes(src: str) -> str:
    found = re.search(r'_spf_device_args\(void\) \{ return "(\w*)"; \}', src)
    assert found is not None
    return found[1]


def test_which_arguments_may_be_device_arrays() -> None:
    """``d``: only kernels use it; ``m``: constant memory; ``x``: an explicit copy names it;
    ``h``: a statement on the host uses it; ``b``: only other host code reads it (loop bounds,
    grid sizes: the golden spmv_csr's rowptr, and tests/e2e/test_cuda_device_arrays.py) (per
    array argument, in signature order)."""
    assert _device_codes(constant_case()[0]) == "dm"  # y, w
    assert _device_codes(copies_case().codegen("cuda")) == "xx"
    assert _device_codes(host_buffer_case().codegen("cuda")) == "hdh"  # x, y, z
    assert _device_codes(global_buffer_case().codegen("cuda")) == "dd"


class _OnDevice:
    def __init__(self, host: np.ndarray[Any, Any]) -> None:
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "typestr": host.dtype.str,
            "data": (host.ctypes.data, False),
            "version": 2,
        }
        self.__array_interface__ = host.__array_interface__  # host memory: emulated kernels


def test_launches_in_a_host_loop_run_on_device_arrays() -> None:
    """Kernels launched from a host loop (``t``) read and update device arrays in place
    across the launches, as they do their own device copies."""
    k = steps_case().compile(target="cuda", emulate=True)
    x, y = np.arange(5.0), np.ones(19)
    for device in ({"x", "y"}, {"y"}, {"x"}):
        mine = {"x": x, "y": y.copy()}
        k(**{n: _OnDevice(v) if n in device else v for n, v in mine.items()})
        np.testing.assert_array_equal(mine["y"], 1 + x.sum())
