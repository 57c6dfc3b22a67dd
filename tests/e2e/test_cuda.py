"""The CUDA backend end to end: every generated ``.cu`` builds with nvcc, and the same text
runs in spf's CPU emulator against numpy / scipy (transpose with partial blocks, a GEMM whose
shared-memory tiles need their barriers, CSR SpMV with empty rows); on a machine with a GPU
the same kernels run there too.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.codegen import generate
from spf.codegen.program import signature
from spf.codegen.unit import TranslationUnit
from spf.errors import ArgumentError, CodegenError, IllegalScheduleError, SpfError
from spf.runtime import threads
from spf.runtime.cuda import build_nvcc, compile_kernel, emulation_source
from spf.runtime.gpu import DEVICE_TO_HOST, HOST_TO_DEVICE
from spf.sparse import csr_args, read_matrix_market
from spf.testing import HostMemoryGpu

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


transpose = example("cuda_transpose")
gemm = example("cuda_gemm")
spmv = example("cuda_spmv")


def examples_case() -> spf.Computation:
    """EXAMPLES.md, "CUDA without a GPU"."""
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
    s.tile_gpu("i", "j", 16, 16)
    return comp


def csr(n: int, m: int, density: float, seed: int, empty_rows: tuple[int, ...] = ()) -> Any:
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, m), density=density, format="lil", rng=rng)
    for r in empty_rows:
        A[r, :] = 0
    return sp.csr_array(A)


def mixed_case() -> spf.Computation:
    comp = spf.Computation("mixed")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("z", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    g = comp.add_stmt(spf.Stmt("$y$(i) = $y$(i) + 1.0;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0,0,0]}"))
    comp.add_stmt(spf.Stmt("$z$(i) = 3.0 * $y$(i);", "{[i]: 0 <= i < N}", "{[i]->[2,i,0,0,0]}"))
    g.split("i", 8, "i0", "i1")
    g.gpu(("i0",), ("i1",))
    return comp


def two_nests_case() -> spf.Computation:
    comp = spf.Computation("two")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("u", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    s0 = comp.add_stmt(
        spf.Stmt(
            "$u$(8*b+t) = 2.0 * $x$(8*b+t);",
            "{[b,t]: 0 <= b && 0 <= t < 8 && 8*b+t < N}",
            "{[b,t]->[0,b,0,t,0]}",
        )
    )
    s1 = comp.add_stmt(
        spf.Stmt(
            "$y$(8*b+t) = $u$(8*b+7-t);",
            "{[b,t]: 0 <= b && 0 <= t < 8 && 8*b+8 <= N}",
            "{[b,t]->[0,b,1,t,0]}",
        )
    )
    s0.gpu(("b",), ("t",))
    s1.gpu(("b",), ("t",))
    return comp


def dims_case() -> spf.Computation:
    comp = spf.Computation("dims")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("c", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", 4))
    s0 = comp.add_stmt(
        spf.Stmt(
            "$c$(4*b+t) += 1.0;",
            "{[b,t]: 0 <= b && 0 <= t < 4 && 4*b+t < N}",
            "{[b,t]->[0,b,0,t,0,0,0]}",
        )
    )
    s1 = comp.add_stmt(
        spf.Stmt(
            "$A$(4*b+t, j) = $x$(4*b+t) + j;",
            "{[b,t,j]: 0 <= b && 0 <= t < 4 && 4*b+t < N && 0 <= j < 4}",
            "{[b,t,j]->[0,b,1,t,0,j,0]}",
        )
    )
    s0.gpu(("b",), ("t",))
    s1.gpu(("b",), ("t", "j"))
    return comp


def pipe_case() -> spf.Computation:
    comp = spf.Computation("pipe")
    for name in ("x", "y", "z"):
        comp.add_data_space(name, "double", shape=("N",))
    a = comp.add_stmt(spf.Stmt("$y$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    b = comp.add_stmt(spf.Stmt("$z$(i) = $y$(i) + 1.0;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    for s, size in ((a, 16), (b, 5)):
        s.split("i", size, "i0", "i1")
        s.gpu(("i0",), ("i1",))
    return comp


# ----------------------------------------------------------------------------- nvcc builds


@pytest.mark.requires_nvcc
@pytest.mark.parametrize(
    "make",
    [
        examples_case,
        lambda: transpose.build(16),
        lambda: spmv.build(32),
        lambda: spmv.build(64, index_dtype="int64"),
        lambda: gemm.build(8),
        mixed_case,
        two_nests_case,
        dims_case,
        pipe_case,
    ],
    ids=[
        "examples-md",
        "transpose",
        "spmv",
        "spmv-int64",
        "gemm-shared",
        "host-statements",
        "two-thread-nests",
        "nests-of-two-ranks",
        "two-kernels",
    ],
)
def test_generated_cuda_builds_with_nvcc(make: Any) -> None:
    comp = make()
    source = comp.codegen("cuda")
    built = build_nvcc(source, name=comp.name)
    assert built.path.is_file()
    assert "error" not in built.stderr.lower()


# ----------------------------------------------------------------------------- transpose


def test_examples_md_case_emulated() -> None:
    comp = examples_case()
    src = comp.codegen("cuda")
    k = comp.compile(target="cuda", emulate=True)
    assert k.source == src
    assert k.mode == "emulate"
    rng = np.random.default_rng(0)
    A = rng.random((40, 40), dtype=np.float32)
    B = np.zeros_like(A)
    k(A=A, B=B)
    assert np.array_equal(B, A.T)


@pytest.mark.parametrize("n", [0, 1, 5, 16, 17, 31, 33, 50])
def test_transpose_partial_blocks(n: int) -> None:
    k = transpose.build(16).compile(target="cuda", emulate=True)
    rng = np.random.default_rng(n)
    A = rng.random((n, n), dtype=np.float32)
    B = np.full((n, n), -1.0, dtype=np.float32)
    k(A=A, B=B)
    assert np.array_equal(B, A.T)


def test_transpose_rectangular_tiles_and_without_openmp() -> None:
    comp = spf.Computation("tr")
    comp.add_data_space("B", "double", shape=("M", "N"))
    comp.add_data_space("A", "double", shape=("N", "M"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j]->[0,i,0,j,0]}",
        )
    )
    s.tile_gpu("i", "j", 4, 8)
    k = comp.compile(target="cuda", emulate=True, openmp=False)
    for n, m in [(7, 13), (4, 8), (1, 30), (9, 1)]:
        A = np.random.default_rng(n * m).random((n, m))
        B = np.zeros((m, n))
        k(A=A, B=B)
        assert np.array_equal(B, A.T)


def test_last_threads_counts_the_cpu_threads_the_blocks_ran_on() -> None:
    """Emulated: the OpenMP threads a launch spread its blocks over (at most one per block);
    without OpenMP, and on a GPU (the host thread), 1; None before the first call."""
    k = transpose.build(16).compile(target="cuda", emulate=True)
    assert k.last_threads is None
    for n, blocks in [(50, 16), (16, 1), (0, 0)]:
        A = np.ones((n, n), dtype=np.float32)
        for team in (1, 2):
            with threads.openmp_threads(team):
                k(A=A, B=np.zeros_like(A))
            assert k.last_threads == max(1, min(team, blocks)), (n, team)
    serial = transpose.build(16).compile(target="cuda", emulate=True, openmp=False)
    A = np.ones((50, 50), dtype=np.float32)
    serial(A=A, B=np.zeros_like(A))
    assert serial.last_threads == 1
    on_gpu = examples_case().compile(target="cuda", gpu=FakeGpu())
    assert on_gpu.last_threads is None
    A = np.ones((37, 37), dtype=np.float32)
    on_gpu(A=A, B=np.zeros_like(A))
    assert on_gpu.last_threads == 1


def test_kernel_arguments_are_checked_like_c_kernels() -> None:
    k = examples_case().compile(target="cuda", emulate=True)
    A = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(ArgumentError, match="dtype"):
        k(A=A.astype(np.float64), B=np.zeros((4, 4), dtype=np.float32))
    with pytest.raises(ArgumentError, match="shape"):
        k(A=A, B=np.zeros((4, 5), dtype=np.float32), N=4)


def test_too_many_threads_per_block_is_a_launch_error() -> None:
    """Without the host code's check (tests/e2e/test_cuda_edges.py), the emulator refuses
    the launch itself and gives the block's shape."""
    comp = transpose.build(64)  # 64 x 64 = 4096 threads
    source = comp.codegen("cuda")
    checks = [line for line in source.splitlines() if "threads per block" in line]
    assert len(checks) == 1
    source = source.replace(checks[0], "")
    opts: dict[str, Any] = {"openmp": True, "cflags": None, "cache_dir": None}
    k = compile_kernel(source, signature(comp.ir, comp.name), comp.name, emulate=True, **opts)
    A = np.zeros((70, 70), dtype=np.float32)
    with pytest.raises(SpfError, match=r"invalid configuration argument \(block of 64 x 64 x 1"):
        k(A=A, B=np.zeros_like(A))
    B = np.zeros((20, 20), dtype=np.float32)  # 20 x 20 threads: fine
    k(A=np.ones_like(B), B=B)
    assert (B == 1).all()


def test_unknown_compile_option_is_refused() -> None:
    with pytest.raises(SpfError, match="unknown option"):
        examples_case().compile(target="cuda", emulate=True, blocks=3)


# ----------------------------------------------------------------------------- GEMM


@pytest.mark.parametrize(("n", "m", "k"), [(1, 1, 1), (8, 8, 8), (13, 17, 11), (20, 9, 30)])
def test_gemm_shared_tiles(n: int, m: int, k: int) -> None:
    kernel = gemm.build(8).compile(target="cuda", emulate=True)
    rng = np.random.default_rng(n + m + k)
    A, B, C = rng.random((n, k)), rng.random((k, m)), rng.random((n, m))
    expected = C + A @ B
    kernel(A=A, B=B, C=C)
    np.testing.assert_allclose(C, expected, rtol=1e-12)


def test_gemm_is_wrong_without_its_barriers() -> None:
    """The emulator honours __syncthreads: the same source minus its barriers computes
    garbage (threads read tile elements others have not loaded yet)."""
    comp = gemm.build(8)
    source = comp.codegen("cuda")
    assert source.count("__syncthreads();") == 2
    sig = signature(comp.ir, comp.name)
    opts: dict[str, Any] = {"openmp": True, "cflags": None, "cache_dir": None}
    with_barriers = compile_kernel(source, sig, comp.name, emulate=True, **opts)
    without = compile_kernel(
        source.replace("__syncthreads();", ";"), sig, comp.name, emulate=True, **opts
    )
    rng = np.random.default_rng(7)
    A, B = rng.random((13, 19)), rng.random((19, 17))
    C1, C2 = np.zeros((13, 17)), np.zeros((13, 17))
    with_barriers(A=A, B=B, C=C1)
    without(A=A, B=B, C=C2)
    np.testing.assert_allclose(C1, A @ B, rtol=1e-12)
    assert not np.allclose(C2, A @ B)


def test_gemm_shared_buffers_are_shared_and_not_arguments() -> None:
    comp = gemm.build(4)
    src = comp.codegen("cuda")
    assert "__shared__ double sA[16];" in src
    assert "__shared__ double sB[16];" in src
    assert [a.name for a in signature(comp.ir, comp.name).args] == ["K", "M", "N", "C", "A", "B"]


def classic_gemm(tile: int, barriers: bool) -> spf.Computation:
    """The textbook CUDA form: thread loops outside ``kk``, barriers inside the threads' own
    ``kk`` loop. Its sequential reading (thread by thread) is not what the GPU computes."""
    T = tile
    comp = spf.Computation("gemm_classic")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    comp.add_data_space("As", "double", shape=(T, T))
    comp.add_data_space("Bs", "double", shape=(T, T))
    tiles = (
        f"0 <= bi && {T}*bi < N && 0 <= bj && {T}*bj < M && 0 <= ti < {T} && 0 <= tj < {T} "
        f"&& 0 <= kk && {T}*kk < K"
    )
    load_a = comp.add_stmt(
        spf.Stmt(
            f"$As$(ti,tj) = ({T}*bi+ti < N && {T}*kk+tj < K) ? $A$({T}*bi+ti, {T}*kk+tj) : 0.0;",
            f"{{[bi,bj,ti,tj,kk]: {tiles}}}",
            "{[bi,bj,ti,tj,kk]->[0,bi,0,bj,0,ti,0,tj,0,kk,0,0,0]}",
        )
    )
    load_b = comp.add_stmt(
        spf.Stmt(
            f"$Bs$(ti,tj) = ({T}*kk+ti < K && {T}*bj+tj < M) ? $B$({T}*kk+ti, {T}*bj+tj) : 0.0;",
            f"{{[bi,bj,ti,tj,kk]: {tiles}}}",
            "{[bi,bj,ti,tj,kk]->[0,bi,0,bj,0,ti,0,tj,0,kk,1,0,0]}",
        )
    )
    multiply = comp.add_stmt(
        spf.Stmt(
            f"$C$({T}*bi+ti, {T}*bj+tj) += $As$(ti,k) * $Bs$(k,tj);",
            f"{{[bi,bj,ti,tj,kk,k]: {tiles} && 0 <= k < {T}}}",
            "{[bi,bj,ti,tj,kk,k]->[0,bi,0,bj,0,ti,0,tj,0,kk,3,k,0]}",
        )
    )
    load_a.store_in(comp.add_buffer("sA", (T, T), "double", scope="shared"), ["ti", "tj"])
    load_b.store_in(comp.add_buffer("sB", (T, T), "double", scope="shared"), ["ti", "tj"])
    for s in (load_a, load_b, multiply):
        s.gpu(("bi", "bj"), ("ti", "tj"))
    if barriers:
        comp.barrier_at(load_b, "kk")
        comp.barrier_at(load_a, "kk").after(multiply, "kk")
    return comp


def test_gemm_legal_form_passes_the_check() -> None:
    """Shared tiles are private to a block: no dependence through them is carried by a gpu
    loop; the loads reach the multiplication between thread nests, inside ``kk``."""
    comp = gemm.build(4)
    comp.check_legality()
    gpu_loops = {"bi", "bj", "ti", "tj"}
    tiles = [d for d in comp.dependences() if d.data_space in ("As", "Bs", "sA", "sB")]
    assert {d.kind for d in tiles} == {"flow", "anti", "output"}
    for d in tiles:
        assert not gpu_loops & set(d.carried_by), d
    # memory-based: the loads reach the multiplication of their slice between the thread
    # nests (schedule position 6), and those of later slices across kk (position 5)
    assert {(d.carried_by, d.levels) for d in tiles if d.kind == "flow"} == {(("kk",), (5, 6))}


@pytest.mark.parametrize("barriers", [True, False], ids=["with-barriers", "barrier-free"])
def test_gemm_with_thread_loops_outside_kk_is_refused(barriers: bool) -> None:
    """With the thread loops outside ``kk`` a thread reads tile elements that other threads
    load: a dependence carried by the thread loops, refused with or without barriers (the
    legal form puts ``kk`` between the block and the thread loops)."""
    comp = classic_gemm(4, barriers)
    with pytest.raises(IllegalScheduleError, match=r"gpu_thread\(\d\)") as info:
        comp.codegen("cuda")
    assert "'As'" in str(info.value) or "'Bs'" in str(info.value)
    with pytest.raises(IllegalScheduleError):
        comp.compile(target="cuda", emulate=True)


def test_gemm_tiles_in_global_memory_are_refused() -> None:
    """The same schedule with the tiles in one global array: every block would overwrite the
    others' tiles, a dependence carried by the block loops."""
    comp = gemm.build(4)
    for space, buffer in (("As", "gA"), ("Bs", "gB")):
        stmt = next(s for s in comp.stmts if s.writes and s.writes[0][0] == space)
        stmt.store_in(comp.add_buffer(buffer, (4, 4), "double", scope="global"), ["ti", "tj"])
    with pytest.raises(IllegalScheduleError, match=r"gpu_block\(\d\)"):
        comp.codegen("cuda")


def test_gpu_thread_loop_carrying_a_dependence_is_refused() -> None:
    """A running sum along each row: rows on blocks are fine, columns on threads are not."""
    comp = spf.Computation("rows")
    comp.add_data_space("A", "double", shape=("N", 8))
    s = comp.add_stmt(
        spf.Stmt(
            "$A$(b,t) = $A$(b,t-1) + 1.0;",
            "{[b,t]: 0 <= b < N && 1 <= t < 8}",
            "{[b,t]->[0,b,0,t,0]}",
        )
    )
    s.gpu(("b",), ("t",))
    with pytest.raises(IllegalScheduleError, match=r"loop 't' of s0 cannot run in parallel"):
        comp.codegen("cuda")


def shared_exchange(same_nest: bool, scope: str = "shared", size: int = 8) -> spf.Computation:
    """Each thread writes one element of a block's tile; the next statement reads the
    element another thread wrote (reversed), in the same thread nest or the next one."""
    comp = spf.Computation("xchg")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("tile", "double", shape=(8,))
    dom = "0 <= b && 0 <= t < 8 && 8*b+8 <= N"
    w = comp.add_stmt(
        spf.Stmt("$tile$(t) = $x$(8*b+t);", f"{{[b,t]: {dom}}}", "{[b,t]->[0,b,0,t,0]}")
    )
    nest = 0 if same_nest else 1
    r = comp.add_stmt(
        spf.Stmt(
            "$y$(8*b+t) = $tile$(7-t);",
            f"{{[b,t]: {dom}}}",
            f"{{[b,t]->[0,b,{nest},t,{1 - nest}]}}",
        )
    )
    w.store_in(comp.add_buffer("sh", (size,), "double", scope=scope), ["t"])
    for s in (w, r):
        s.gpu(("b",), ("t",))
    return comp


def test_shared_tile_read_by_another_thread_of_the_same_nest_is_refused() -> None:
    with pytest.raises(IllegalScheduleError, match=r"loop 't' of s\d cannot run in parallel"):
        shared_exchange(same_nest=True).codegen("cuda")


@pytest.mark.parametrize("n", [0, 8, 13, 32])
def test_shared_tile_read_in_the_next_nest_is_legal_and_right(n: int) -> None:
    comp = shared_exchange(same_nest=False)
    src = comp.codegen("cuda")
    assert "__shared__ double sh[8];" in src
    assert src.count("__syncthreads();") == 1
    k = comp.compile(target="cuda", emulate=True)
    x, y = np.arange(float(n)) + 1.0, np.zeros(n)
    k(x=x, y=y)
    full = n // 8 * 8
    expected = np.zeros(n)
    expected[:full] = x[:full].reshape(-1, 8)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(y, expected)
    with pytest.raises(IllegalScheduleError, match=r"gpu_block\(0\)"):
        shared_exchange(same_nest=False, scope="global").codegen("cuda")
    # in local memory each thread has its own tile: the element is not the one written
    with pytest.raises(IllegalScheduleError, match=r"reads 'tile' \(local memory"):
        shared_exchange(same_nest=False, scope="local").codegen("cuda")


def test_shared_memory_does_not_outlive_its_kernel() -> None:
    """The reader runs in a second kernel (another sequence position): its block's shared
    memory no longer holds what the first kernel wrote."""
    comp = shared_exchange(same_nest=False)
    comp.stmt("s1").set_schedule("{[b,t]->[1,b,0,t,0]}")
    with pytest.raises(IllegalScheduleError, match="shared memory"):
        comp.codegen("cuda")


def test_local_buffers_are_private_to_each_thread() -> None:
    """Every thread keeps its own ``w`` (local memory): writing all of it in every thread is
    no dependence between threads; in a global buffer it would be one."""

    def build(scope: str) -> spf.Computation:
        comp = spf.Computation("priv")
        comp.add_data_space("y", "double", shape=("N",))
        comp.add_data_space("w", "double", shape=(3,))
        dom = "0 <= i < N && 0 <= k < 3"
        s0 = comp.add_stmt(
            spf.Stmt("$w$(k) = 1.0 * i + k;", f"{{[i,k]: {dom}}}", "{[i,k]->[0,i,0,k,0]}")
        )
        s1 = comp.add_stmt(
            spf.Stmt("$y$(i) += $w$(k);", f"{{[i,k]: {dom}}}", "{[i,k]->[0,i,1,k,0]}")
        )
        s0.store_in(comp.add_buffer("loc", (3,), "double", scope=scope), ["k"])
        for s in (s0, s1):
            s.split("i", 4, "i0", "i1")
            s.gpu(("i0",), ("i1",))
        return comp

    k = build("local").compile(target="cuda", emulate=True)
    y = np.zeros(10)
    k(y=y)
    np.testing.assert_array_equal(y, 3.0 * np.arange(10) + 3.0)
    with pytest.raises(IllegalScheduleError, match="cannot run in parallel"):
        build("global").codegen("cuda")


_BIG_LOCAL = """
import numpy as np, spf
def case(count, scope="local"):
    comp = spf.Computation(f"big{scope}{count}")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("w", "double", shape=(count,))
    dom = f"0 <= i < N && 0 <= k < {count}"
    s0 = comp.add_stmt(
        spf.Stmt("$w$(k) = 1.0 * i + k;", f"{{[i,k]: {dom}}}", "{[i,k]->[0,i,0,k,0]}")
    )
    s1 = comp.add_stmt(spf.Stmt("$y$(i) += $w$(k);", f"{{[i,k]: {dom}}}", "{[i,k]->[0,i,1,k,0]}"))
    s0.store_in(comp.add_buffer("loc", (count,), "double", scope=scope), ["k"])
    for s in (s0, s1):
        s.split("i", 4, "i0", "i1")
        s.gpu(("i0",), ("i1",))
    return comp
"""
"""A kernel whose threads each fill and sum ``count`` doubles of a per-thread buffer."""


def big_local_case(count: int, scope: str = "local") -> spf.Computation:
    space: dict[str, Any] = {}
    exec(_BIG_LOCAL, space)  # the same case the child process of the next test builds
    comp: spf.Computation = space["case"](count, scope)
    return comp


def test_local_buffer_larger_than_the_emulators_default_stack_runs(
    fresh_python: Callable[..., list[str]],
) -> None:
    """320 KB of doubles per thread, more than the emulator's default 256 KiB fiber stack
    (which it overflowed: a segfault, hence the child process): the unit records the local
    bytes and the emulated build's stack fits them. 512 KiB, CUDA's limit, runs too."""
    code = _BIG_LOCAL + (
        "for count in (40000, 65536):\n"
        "    y = np.zeros(6)\n"
        "    case(count).compile(target='cuda', emulate=True)(y=y)\n"
        "    ref = count * np.arange(6) + count * (count - 1) / 2\n"
        "    print(count, np.array_equal(y, ref))\n"
    )
    assert fresh_python(code) == ["40000 True", "65536 True"]


def test_unit_records_the_local_bytes_of_its_kernels() -> None:
    assert generate(big_local_case(40000), "cuda")[0].local_bytes == 320000
    assert generate(examples_case(), "cuda")[0].local_bytes == 0
    unit = generate(big_local_case(40000), "cuda")[0]
    assert TranslationUnit.from_data(unit.to_data()) == unit
    older = {k: v for k, v in unit.to_data().items() if k != "local_bytes"}
    with pytest.raises(KeyError):  # a cached record without it is generated again
        TranslationUnit.from_data(older)
    stack = emulation_source("", "x", local_bytes=320000)
    assert stack.startswith("#define SPF_EMU_STACK 389120\n")  # 320000 + 64 KiB, in pages
    assert "#define SPF_EMU_STACK" not in emulation_source("", "x", local_bytes=1000)[:40]


def test_local_memory_over_cudas_limit_is_refused() -> None:
    with pytest.raises(CodegenError, match=r"buffer 'loc' \(local memory, 65537 x double"):
        big_local_case(65537).codegen("cuda")


def test_static_shared_memory_over_48_kib_is_refused() -> None:
    shared_exchange(same_nest=False, size=6144).codegen("cuda")  # 48 KiB: nvcc takes it
    with pytest.raises(CodegenError, match=r"buffer 'sh' \(shared memory.*49160 bytes"):
        shared_exchange(same_nest=False, size=6145).codegen("cuda")


@pytest.mark.requires_nvcc
def test_nvcc_takes_48_kib_of_static_shared_memory(tmp_path: Path) -> None:
    """The limit spf checks is nvcc's: 6144 doubles build (6145 fail in ptxas)."""
    comp = shared_exchange(same_nest=False, size=6144)
    build_nvcc(comp.codegen("cuda"), name="shared48k", cache_dir=str(tmp_path))


def tall_transpose(tile: int) -> spf.Computation:
    comp = spf.Computation(f"tall{tile}")
    comp.add_data_space("A", "float", shape=("N", "M"))
    comp.add_data_space("B", "float", shape=("M", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s.tile_gpu("i", "j", tile, tile)
    return comp


def test_more_than_65535_blocks_on_y_is_refused_naming_the_loop() -> None:
    """The outer block loop runs on grid dimension y, which takes 65535 blocks: the host code
    says so before the launch (the emulator said 'more than 1024 threads per block?')."""
    k = tall_transpose(2).compile(target="cuda", emulate=True)
    A = np.arange(2 * 65536, dtype=np.float32).reshape(-1, 1)
    with pytest.raises(SpfError, match="block loop i0 has 65536 blocks on grid dimension y"):
        k(A=A, B=np.zeros((1, 2 * 65536), np.float32))
    B = np.zeros((1, 2 * 65535), np.float32)
    k(A=A[: 2 * 65535], B=B)
    np.testing.assert_array_equal(B, A[: 2 * 65535].T)


def test_emulator_names_the_grid_limit_a_launch_breaks() -> None:
    """Without the host code's check, the emulator refuses the launch itself and says why."""
    comp = tall_transpose(2)
    source = comp.codegen("cuda")
    checks = [line for line in source.splitlines() if "grid dimension" in line]
    assert len(checks) == 2  # x and y
    for line in checks:
        source = source.replace(line, "")
    opts: dict[str, Any] = {"openmp": True, "cflags": None, "cache_dir": None}
    k = compile_kernel(source, signature(comp.ir, comp.name), comp.name, emulate=True, **opts)
    A = np.zeros((2 * 65536, 1), dtype=np.float32)
    grid = r"\(grid of 1 x 65536 x 1 blocks; CUDA allows at most 2147483647 on x and 65535"
    with pytest.raises(SpfError, match=grid):
        k(A=A, B=np.zeros((1, 2 * 65536), np.float32))


# ----------------------------------------------------------------------------- SpMV


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize(
    ("n", "m", "density", "empty"),
    [
        (0, 5, 0.1, ()),
        (3, 0, 0.1, ()),
        (1, 1, 1.0, ()),
        (70, 40, 0.1, (0, 31, 69)),
        (5, 5, 0.0, ()),
    ],
    ids=["no-rows", "no-columns", "one", "empty-rows", "all-empty"],
)
def test_spmv_one_row_per_thread(
    n: int, m: int, density: float, empty: tuple[int, ...], index_dtype: str
) -> None:
    comp = spmv.build(32, index_dtype=index_dtype)
    k = comp.compile(target="cuda", emulate=True)
    A = csr(n, m, density, n + m, empty)
    rng = np.random.default_rng(3)
    x, y = rng.random(m), rng.random(n)
    expected = y + A @ x
    k(y=y, x=x, **csr_args(A, index_dtype=index_dtype))
    np.testing.assert_allclose(y, expected, rtol=1e-12)


def test_spmv_on_suitesparse(suitesparse_dir: Path) -> None:
    path = suitesparse_dir / "west0067.mtx"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    A = read_matrix_market(path)
    k = spmv.build(32).compile(target="cuda", emulate=True)
    x = np.random.default_rng(0).random(A.shape[1])
    y = np.zeros(A.shape[0])
    k(y=y, x=x, **csr_args(A))
    np.testing.assert_allclose(y, A @ x, rtol=1e-12)


# ----------------------------------------------------------------------------- host code


def test_host_statements_around_a_kernel_see_its_results() -> None:
    """A host statement before the kernel and one after: copies go around each launch."""
    comp = mixed_case()
    k = comp.compile(target="cuda", emulate=True)
    x = np.arange(21.0)
    y, z = np.zeros(21), np.zeros(21)
    k(x=x, y=y, z=z)
    np.testing.assert_array_equal(y, 2 * x + 1)
    np.testing.assert_array_equal(z, 3 * (2 * x + 1))


def test_thread_nests_sharing_block_loops_are_separated_by_a_barrier() -> None:
    """Two statements share the block loop but not the thread loops: the second reads what
    other threads of the block wrote in the first, so the printer puts a barrier between."""
    comp = two_nests_case()
    src = comp.codegen("cuda")
    assert src.count("__syncthreads();") == 1
    k = comp.compile(target="cuda", emulate=True)
    sig = signature(comp.ir, comp.name)
    opts: dict[str, Any] = {"openmp": False, "cflags": None, "cache_dir": None}
    racy = compile_kernel(src.replace("__syncthreads();", ";"), sig, "two", emulate=True, **opts)
    for n in (8, 13, 30):
        x = np.arange(float(n))
        u, y, y_racy = np.zeros(n), np.zeros(n), np.zeros(n)
        k(x=x, u=u, y=y)
        full = n // 8 * 8
        expected = np.zeros(n)
        expected[:full] = (2 * x[:full]).reshape(-1, 8)[:, ::-1].reshape(-1)
        np.testing.assert_array_equal(y, expected)
        racy(x=x, u=np.zeros(n), y=y_racy)
        assert not np.array_equal(y_racy, expected)


def test_thread_nests_of_different_rank_share_the_block() -> None:
    """A 1-d thread nest next to a 2-d one runs on the threads with threadIdx.y == 0 only."""
    comp = dims_case()
    assert "if (threadIdx.y == 0)" in comp.codegen("cuda")
    k = comp.compile(target="cuda", emulate=True)
    for n in (3, 9):
        x = np.arange(float(n))
        c, A = np.zeros(n), np.zeros((n, 4))
        k(x=x, c=c, A=A)
        np.testing.assert_array_equal(c, np.ones(n))
        np.testing.assert_array_equal(A, x[:, None] + np.arange(4))


def test_two_kernels_in_one_function() -> None:
    comp = pipe_case()
    src = comp.codegen("cuda")
    assert "void pipe_k0(" in src
    assert "void pipe_k1(" in src
    k = comp.compile(target="cuda", emulate=True)
    x = np.arange(23.0)
    y, z = np.zeros(23), np.zeros(23)
    k(x=x, y=y, z=z)
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(z, 2 * x + 1)


# ----------------------------------------------------------------------------- GPU bridge


class FakeGpu(HostMemoryGpu):
    """A GpuRuntime whose "device" is host memory and whose launches are interpreted here:
    it checks what the bridge passes (grid, block, argument values) without a GPU."""

    name = "fake"

    def __init__(self) -> None:
        super().__init__()
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...], list[int]]] = []

    def launch(
        self, module: Any, kernel: str, grid: Any, block: Any, args: Any, params: int
    ) -> None:
        values = [int.from_bytes(a, "little") for a in args]
        self.launches.append((kernel, tuple(grid), tuple(block), values))
        n, dst, src = values  # transpose: N, B (device), A (device)
        assert dst in self.memory
        assert src in self.memory
        view = (ctypes.c_float * (n * n)).from_address
        b = np.frombuffer(view(dst), dtype=np.float32).reshape(n, n)
        a = np.frombuffer(view(src), dtype=np.float32).reshape(n, n)
        b[...] = a.T


def test_gpu_bridge_marshals_copies_and_launches() -> None:
    comp = examples_case()
    fake = FakeGpu()
    k = comp.compile(target="cuda", gpu=fake)
    assert k.mode == "fake"
    assert fake.kernels == ["t_k0"]
    A = np.random.default_rng(0).random((37, 37), dtype=np.float32)
    B = np.zeros_like(A)
    k(A=A, B=B)
    np.testing.assert_array_equal(B, A.T)
    ((name, grid, block, values),) = fake.launches
    assert (name, grid, block, values[0]) == ("t_k0", (3, 3, 1), (16, 16, 1), 37)
    assert fake.copies == [HOST_TO_DEVICE, HOST_TO_DEVICE, DEVICE_TO_HOST]
    assert not fake.memory  # everything freed


def test_gpu_bridge_reports_runtime_failures() -> None:
    class Failing(FakeGpu):
        def malloc(self, nbytes: int) -> int:
            raise MemoryError("device full")

    k = examples_case().compile(target="cuda", gpu=Failing())
    A = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(SpfError, match="cudaMalloc") as info:
        k(A=A, B=np.zeros_like(A))
    assert isinstance(info.value.__cause__, MemoryError)


def test_bridge_source_compiles_kernels_as_host_stubs() -> None:
    text = emulation_source(gemm.build(4).codegen("cuda"), "g", bridge=True)
    assert text.index("#define SPF_CUDA_BRIDGE 1") < text.index("spf_cuda_set_bridge")


def test_unknown_gpu_runtime_is_named() -> None:
    with pytest.raises(SpfError, match="unknown GPU runtime"):
        examples_case().compile(target="cuda", gpu="opencl")


# ----------------------------------------------------------------------------- examples


@pytest.mark.slow  # run first (tests/conftest.py): among the longest in the suite
@pytest.mark.parametrize("name", ["cuda_transpose", "cuda_gemm", "cuda_spmv"])
def test_example_runs_emulated(name: str, tmp_path: Path) -> None:
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "emulated on the CPU" in done.stdout


@pytest.mark.requires_nvcc
def test_nvcc_route_runs_on_a_gpu_or_says_why_not() -> None:
    """``compile(target="cuda")`` with nvcc on PATH builds the whole .cu with nvcc; without a
    usable GPU the call fails with the CUDA runtime's reason, not a crash."""
    k = examples_case().compile(target="cuda")
    assert k.mode == "nvcc"
    assert "-Xcompiler -fPIC" in k.command
    A = np.random.default_rng(0).random((20, 20), dtype=np.float32)
    B = np.zeros_like(A)
    try:
        gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode
    except OSError:
        gpu = 1
    if gpu == 0:
        k(A=A, B=B)
        np.testing.assert_array_equal(B, A.T)
    else:
        with pytest.raises(SpfError, match=r"CUDA kernel t \(nvcc\) failed: cudaMalloc"):
            k(A=A, B=B)


# ----------------------------------------------------------------------------- a real GPU


@pytest.mark.requires_gpu
def test_kernels_on_a_gpu() -> None:
    rng = np.random.default_rng(0)
    k = transpose.build(16).compile(target="cuda")
    A = rng.random((100, 100), dtype=np.float32)
    B = np.zeros_like(A)
    k(A=A, B=B)
    np.testing.assert_array_equal(B, A.T)
    g = gemm.build(8).compile(target="cuda")
    A2, B2, C2 = rng.random((37, 29)), rng.random((29, 41)), np.zeros((37, 41))
    g(A=A2, B=B2, C=C2)
    np.testing.assert_allclose(C2, A2 @ B2, rtol=1e-10)
    s = spmv.build(32).compile(target="cuda")
    M = csr(300, 200, 0.05, 1, (5, 100))
    x, y = rng.random(200), np.zeros(300)
    s(y=y, x=x, **csr_args(M))
    np.testing.assert_allclose(y, M @ x, rtol=1e-10)


def _twice(copies_last: bool) -> spf.Computation:
    """``a = 2 a`` on the GPU between an explicit copy in and copy out; ``copies_last``:
    created after the statement and then ordered around it (Tiramisu's order)."""
    comp = spf.Computation("twice")
    comp.add_data_space("a", "double", shape=("N",))
    if not copies_last:
        comp.host_to_device("a")
    body = comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}", name="body"))
    if copies_last:
        copy_in = comp.host_to_device("a")
    copy_out = comp.device_to_host("a")
    if copies_last:
        body.after(copy_in, spf.ROOT)  # the copy in, created last, runs first
        copy_out.after(body, spf.ROOT)
    body.split("i", 64, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_copies_created_last_and_ordered_first_run_emulated() -> None:
    """Layer IV operations have no program order until ordered (API.md section 10): the copy
    in, created after the statement that overwrites ``a``, is ordered before it; the code is
    the creation-order code (the copies named s1/s2 instead of s0/s2) and runs."""
    late, early = _twice(copies_last=True), _twice(copies_last=False)
    assert late.loop_structure().replace("s1", "s0") == early.loop_structure()
    assert late.codegen("cuda").replace("s1", "s0") == early.codegen("cuda")
    a = np.arange(100.0)
    late.compile(target="cuda", emulate=True)(a=a)
    np.testing.assert_array_equal(a, 2 * np.arange(100.0))


def test_nvcc_targets_the_gpus_nvidia_smi_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a GPU, nvcc builds its machine code (no PTX compiled at the first launch); without
    one, or for a GPU nvcc cannot target, nvcc's default target."""
    from spf.runtime import cuda

    def fake(smi: str, code: int, arches: str) -> Any:
        def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
            if argv[0] == "nvidia-smi":
                return subprocess.CompletedProcess(argv, code, smi, "")
            return subprocess.CompletedProcess(argv, 0, arches, "")

        return run

    arches = "compute_75\ncompute_80\ncompute_90\n"
    cases = [
        (("9.0\n", 0), ("-gencode=arch=compute_90,code=[sm_90,compute_90]",)),
        (
            ("9.0\n8.0\n9.0\n", 0),
            tuple(f"-gencode=arch=compute_{c},code=[sm_{c},compute_{c}]" for c in ("80", "90")),
        ),
        (("", 9), ()),  # nvidia-smi fails: no GPU
        (("12.1\n", 0), ()),  # a GPU this nvcc cannot target
    ]
    for (out, code), want in cases:
        monkeypatch.setattr(cuda, "_ARCH_FLAGS", {})
        monkeypatch.setattr(cuda.subprocess, "run", fake(out, code, arches))
        assert cuda.gpu_arch_flags("nvcc") == want


def test_cupy_runtime_launches_cupy_13_and_later_raw_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CuPy >= 13's ``RawModule.get_function`` returns a ``RawKernel``, whose driver function
    (with the pointer ``launchKernel`` takes) is ``.kernel``; older CuPy returned the
    ``Function`` itself. Both launch (the first failed at every launch on a GPU with CuPy 14)."""
    import sys
    import types

    from spf.runtime.gpu import CupyRuntime

    launched: list[int] = []

    class Function:
        def __init__(self, ptr: int) -> None:
            self.ptr = ptr

    class RawKernel:  # no .ptr of its own
        def __init__(self, ptr: int) -> None:
            self.kernel = Function(ptr)

    class RawModule:
        def __init__(self, code: str, options: tuple[str, ...]) -> None:
            self.code = code

        def get_function(self, name: str) -> object:
            return RawKernel(1234) if name == "new" else Function(5678)

    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(),
        driver=types.SimpleNamespace(launchKernel=lambda f, *rest: launched.append(f)),
        get_current_stream=lambda: types.SimpleNamespace(ptr=0),
    )
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(RawModule=RawModule, cuda=cuda))
    rt = CupyRuntime()
    module = rt.load("source", ["new", "old"])
    rt.launch(module, "new", (1, 1, 1), (32, 1, 1), [], 0)
    rt.launch(module, "old", (1, 1, 1), (32, 1, 1), [], 0)
    assert launched == [1234, 5678]


def test_cupy_runtime_copies_on_the_stream_kernels_launch_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Copies in and out go on CuPy's current stream, the one launches use, so they are
    ordered with the kernels on a non-blocking stream too (a plain ``cudaMemcpy`` runs on the
    legacy default stream, which such a stream does not wait for); a copy out waits for
    that stream before it returns."""
    import sys
    import types

    from spf.runtime.gpu import DEVICE_TO_HOST, HOST_TO_DEVICE, CupyRuntime

    events: list[tuple[object, ...]] = []

    class Stream:
        ptr = 77

        def synchronize(self) -> None:
            events.append(("sync", self.ptr))

    class Module:
        def get_global(self, name: str) -> object:
            return types.SimpleNamespace(ptr=1000)

    def memcpy(*args: object) -> None:
        events.append(("memcpy", *args))  # the legacy default stream: must not be used

    def memcpy_async(dst: int, src: int, n: int, kind: int, stream: int) -> None:
        events.append(("async", dst, src, n, kind, stream))

    cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(memcpy=memcpy, memcpyAsync=memcpy_async),
        driver=types.SimpleNamespace(),
        get_current_stream=Stream,
    )
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda))
    rt = CupyRuntime()
    rt.copy(10, 20, 8, HOST_TO_DEVICE)
    rt.copy(30, 40, 16, DEVICE_TO_HOST)
    rt.to_symbol(Module(), "spf_sym", 50, 4, 8)
    assert events == [
        ("async", 10, 20, 8, HOST_TO_DEVICE, 77),
        ("async", 30, 40, 16, DEVICE_TO_HOST, 77),
        ("sync", 77),
        ("async", 1008, 50, 4, HOST_TO_DEVICE, 77),
    ]
