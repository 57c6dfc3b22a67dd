"""Edges of the CUDA backend an adversarial audit found (emulated, checked against numpy
and the C target): symbolic constants of every type reach the kernels unchanged, explicit
copies leave the arrays they do not name to the implicit ones, a block of more threads than
CUDA allows is refused naming its loops, names CUDA takes are refused at codegen, and gpu
loops with strided bounds get their grid.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf.runtime.cuda import build_nvcc
from spf.testing import HostMemoryGpu


def scaled(ctype: str) -> spf.Computation:
    """``y = alpha * x`` with ``alpha`` a symbolic constant of C type ``ctype``, on a grid."""
    comp = spf.Computation("scaled")
    comp.add_constant("alpha", ctype)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    s = comp.add_stmt(spf.Stmt("$y$(i) = alpha * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    s.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


@pytest.mark.parametrize(
    ("ctype", "alpha"),
    [("double", 2.5), ("float", -0.75), ("int32_t", -3), ("uint64_t", 2**63 + 5), ("int8_t", -7)],
)
def test_symbolic_constants_reach_the_kernel_with_their_type(ctype: str, alpha: Any) -> None:
    """Kernels took every scalar as int64_t: a double constant 2.5 was 2 on the GPU, and a
    uint64_t above 2**63 negative, where the C target (the oracle) computes the value given."""
    comp = scaled(ctype)
    x = np.random.default_rng(0).random(21)
    y, expected = np.zeros(21), np.zeros(21)
    comp.compile()(x=x, y=expected, alpha=alpha)
    comp.compile(target="cuda", emulate=True)(x=x, y=y, alpha=alpha)
    np.testing.assert_array_equal(y, expected)


class _Launches(HostMemoryGpu):
    """A GPU runtime that records the 8-byte argument images the bridge passes."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.args: list[list[bytes]] = []

    def launch(
        self, module: Any, kernel: str, grid: Any, block: Any, args: Any, params: int
    ) -> None:
        self.args.append(list(args))


def test_the_gpu_bridge_passes_constants_of_any_type() -> None:
    """The bridge takes 8-byte kernel arguments only: an int32_t or float constant did not
    build (g++: 'spf kernels take 8-byte arguments')."""
    for ctype, alpha, image in (
        ("int32_t", -3, (-3).to_bytes(8, "little", signed=True)),
        ("float", 0.5, np.float64(0.5).tobytes()),
    ):
        gpu = _Launches()
        k = scaled(ctype).compile(target="cuda", gpu=gpu)
        k(x=np.zeros(3), y=np.zeros(3), alpha=alpha)
        ((n, value, *_),) = gpu.args
        assert int.from_bytes(n, "little") == 3
        assert value == image


@pytest.mark.requires_nvcc
def test_typed_constants_build_with_nvcc() -> None:
    comp = scaled("float")
    built = build_nvcc(comp.codegen("cuda"), name=comp.name)
    assert built.path.is_file()


def explicit_copies_of_a() -> spf.Computation:
    """``a = 2 a + x; z = a`` on the GPU with explicit copies of ``a`` only."""
    comp = spf.Computation("copies")
    for name in ("a", "x", "z"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.host_to_device("a")
    body = comp.add_stmt(
        spf.Stmt("$a$(i) = 2 * $a$(i) + $x$(i); $z$(i) = $a$(i);", "{[i]: 0 <= i < N}")
    )
    comp.device_to_host("a")
    body.split("i", 16, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_explicit_copies_leave_other_arrays_to_the_implicit_copies() -> None:
    """With a host_to_device / device_to_host anywhere, no array was copied implicitly: the
    kernel read ``x`` from device memory nothing had written (garbage) and ``z`` never came
    back. The arrays no copy names keep the implicit copies."""
    comp = explicit_copies_of_a()
    src = comp.codegen("cuda")
    host = src[src.index('extern "C" int copies(') :]
    assert host.count("cudaMemcpyHostToDevice") == 3  # a (explicit), x and z (implicit)
    assert host.count("cudaMemcpyDeviceToHost") == 2  # a (explicit), z (implicit)
    k = comp.compile(target="cuda", emulate=True)
    a, x, z = np.arange(40.0), np.full(40, 0.5), np.zeros(40)
    k(a=a, x=x, z=z)
    np.testing.assert_array_equal(a, 2 * np.arange(40.0) + 0.5)
    np.testing.assert_array_equal(z, a)


def test_explicit_copies_with_host_statements_copy_the_others_around_each_launch() -> None:
    comp = explicit_copies_of_a()
    comp.add_data_space("w", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$w$(i) = $z$(i) + 1.0;", "{[i]: 0 <= i < N}"))  # on the host
    k = comp.compile(target="cuda", emulate=True)
    a, x, z, w = np.arange(9.0), np.ones(9), np.zeros(9), np.zeros(9)
    k(a=a, x=x, z=z, w=w)
    np.testing.assert_array_equal(z, 2 * np.arange(9.0) + 1)
    np.testing.assert_array_equal(w, z + 1)


def tiled_transpose(tile: int) -> spf.Computation:
    comp = spf.Computation("tt")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s.tile_gpu("i", "j", tile, tile)
    return comp


def test_a_block_of_too_many_threads_is_refused_naming_the_thread_loops() -> None:
    """The launch failed with 'invalid configuration argument' (on a GPU, nothing more); the
    host code now checks the block before the launch, as it does the grid."""
    k = tiled_transpose(64).compile(target="cuda", emulate=True)  # 64 x 64 = 4096 threads
    A = np.zeros((70, 70), dtype=np.float32)
    message = (
        r"kernel tt_k0: gpu thread loops j1 on x, i1 on y make blocks of 64 x 64 threads; "
        r"CUDA allows at most 1024 threads per block"
    )
    with pytest.raises(spf.SpfError, match=message):
        k(A=A, B=np.zeros_like(A))
    B = np.zeros((20, 20), dtype=np.float32)  # 20 x 20 threads: fine
    k(A=np.ones_like(B), B=B)
    assert (B == 1).all()


def test_more_than_64_threads_on_z_is_refused() -> None:
    comp = spf.Computation("deep")
    comp.add_data_space("A", "double", shape=("N", "M", "K"))
    s = comp.add_stmt(
        spf.Stmt(
            "$A$(i,j,k) = 1.0;",
            "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
            "{[i,j,k]->[0,i,0,j,0,k,0]}",
        )
    )
    s.split("i", 128, "i0", "i1").split("j", 2, "j0", "j1").split("k", 2, "k0", "k1")
    s.interchange("i1", "j0").interchange("i1", "k0").interchange("j1", "i1")
    s.gpu(("i0", "j0", "k0"), ("i1", "j1", "k1"))
    k = comp.compile(target="cuda", emulate=True)
    with pytest.raises(spf.SpfError, match=r"i1 on z make blocks of 2 x 2 x 128 threads"):
        k(A=np.zeros((130, 3, 3)))
    A = np.zeros((64, 3, 3))
    k(A=A)
    assert (A == 1).all()


def copy_kernel(
    name: str = "nm", a: str = "A", n: str = "N", outer: str = "i0", inner: str = "i1"
) -> spf.Computation:
    comp = spf.Computation(name)
    comp.add_data_space("B", "double", shape=(n,))
    comp.add_data_space(a, "double", shape=(n,))
    s = comp.add_stmt(spf.Stmt(f"$B$(i) = 2.0 * ${a}$(i);", f"{{[i]: 0 <= i < {n}}}"))
    s.split("i", 8, outer, inner).gpu((outer,), (inner,))
    return comp


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda: copy_kernel(a="threadIdx"), "data space 'threadIdx' is a CUDA built-in"),
        (lambda: copy_kernel(a="dim3"), "data space 'dim3' is a name of the CUDA runtime"),
        (lambda: copy_kernel(a="cudaMalloc"), "data space 'cudaMalloc'"),
        (lambda: copy_kernel(a="nm_k0"), "data space 'nm_k0' is the name of a kernel of nm"),
        (lambda: copy_kernel(n="blockIdx"), "param 'blockIdx' is a CUDA built-in"),
        (lambda: copy_kernel(inner="blockDim"), "loop 'blockDim' is a CUDA built-in"),
        (lambda: copy_kernel(name="cudaFree"), "computation \\(function\\) 'cudaFree'"),
        (lambda: copy_kernel(name="threadIdx"), "computation \\(function\\) 'threadIdx'"),
    ],
)
def test_names_cuda_takes_are_refused_at_codegen(make: Any, what: str) -> None:
    """g++ or nvcc failed on them (a computation named cudaMalloc built emulated, and not with
    nvcc): codegen names them instead."""
    comp = make()
    with pytest.raises(spf.CodegenError, match=what):
        comp.codegen("cuda")
    comp.codegen("c")  # the C target has none of these names


@pytest.mark.parametrize("name", ["cuda", "cuda_x", "cudamalloc"])
def test_names_close_to_cudas_are_fine(name: str) -> None:
    k = copy_kernel(a=name, n="threads").compile(target="cuda", emulate=True)
    x, y = np.arange(5.0), np.zeros(5)
    k(**{name: x}, B=y)
    np.testing.assert_array_equal(y, 2 * x)


def test_a_strided_gpu_loop_gets_its_grid() -> None:
    """A thread loop starting at ``(i0 + 1) % 3`` (every third element) was refused as
    'depending on values the host cannot bound (UF values read inside the kernel)'."""
    comp = spf.Computation("strided")
    comp.add_data_space("a", "double", shape=("N",))
    s = comp.add_stmt(spf.Stmt("$a$(i) = $a$(i) + i;", "{[i]: 0 <= i < N && exists k: i = 3k + 1}"))
    s.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    k = comp.compile(target="cuda", emulate=True)
    rng = np.random.default_rng(1)
    for n in (1, 2, 5, 8, 9, 30, 100):
        a = rng.random(n)
        expected = a.copy()
        expected[1::3] += np.arange(n)[1::3]
        k(a=a)
        np.testing.assert_array_equal(a, expected)


def test_thread_loops_of_one_iteration_are_named_as_the_cause() -> None:
    """tile_gpu(i, j, 1, 1): the point loops have one iteration and are left out of the
    code, so the statement lies outside any thread loop; the error said only 'map its loops
    to threads too', which the user had done."""
    comp = tiled_transpose(1)
    with pytest.raises(spf.CodegenError, match="a tile or split of size 1"):
        comp.codegen("cuda")


def stack_buffer(same_thread: bool) -> spf.Computation:
    """``t = 2 x`` in one kernel, ``y = t`` (reversed unless ``same_thread``) in the next,
    with ``t`` stored in a ``stack`` buffer: in a kernel, one array per thread."""
    comp = spf.Computation("stk")
    for name in ("x", "y", "t"):
        comp.add_data_space(name, "double", shape=(20,))
    s0 = comp.add_stmt(spf.Stmt("$t$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < 20}"))
    read = "$t$(i)" if same_thread else "$t$(19-i)"
    s1 = comp.add_stmt(spf.Stmt(f"$y$(i) = {read};", "{[i]: 0 <= i < 20}"))
    s0.store_in(comp.add_buffer("tb", (20,), "double", scope="stack"), ["i"])
    for s in (s0, s1):
        s.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_a_stack_buffer_is_private_to_each_thread_in_the_check_too() -> None:
    """CUDA declares a stack buffer a kernel uses per thread, as a local one, but the check
    took it for one array: a kernel read its own uninitialized copy of what the previous
    kernel wrote (garbage). It is judged as what it is, refused like a local buffer."""
    with pytest.raises(spf.IllegalScheduleError, match=r"s1 reads 't' \(local memory"):
        stack_buffer(same_thread=False).codegen("cuda")
    with pytest.raises(spf.IllegalScheduleError, match=r"s1 reads 't'"):
        stack_buffer(same_thread=True).codegen("cuda")  # another kernel: another copy
    x, y = np.arange(20.0), np.zeros(20)
    stack_buffer(same_thread=False).compile()(x=x, y=y)  # C: one array on the stack
    np.testing.assert_array_equal(y, 2 * x[::-1])


@pytest.mark.parametrize("scope", ["stack", "local"])
def test_a_stack_buffer_allocated_around_kernels_is_theirs(scope: str) -> None:
    """A stack buffer allocated at a host loop whose kernels use it was a host array the
    kernels could not name (g++ failed); like a local one, each thread of them has its own."""
    comp = spf.Computation("around")
    comp.add_data_space("x", "double", shape=("T", 16))
    comp.add_data_space("y", "double", shape=("T", 16))
    comp.add_data_space("t", "double", shape=(16,))
    dom = "{[r,i]: 0 <= r < T && 0 <= i < 16}"
    s0 = comp.add_stmt(spf.Stmt("$t$(i) = 2.0 * $x$(r, i);", dom, "{[r,i]->[0,r,0,i,0]}"))
    s1 = comp.add_stmt(spf.Stmt("$y$(r, i) = $t$(i) + r;", dom, "{[r,i]->[0,r,0,i,1]}"))
    buffer = comp.add_buffer("tb", (16,), "double", scope=scope)
    s0.store_in(buffer, ["i"])
    buffer.allocate_at(s0, "r")
    for s in (s0, s1):
        s.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    x, y = np.random.default_rng(2).random((3, 16)), np.zeros((3, 16))
    comp.compile(target="cuda", emulate=True)(x=x, y=y)
    np.testing.assert_array_equal(y, 2 * x + np.arange(3)[:, None])


def row_sums(mapping: str) -> spf.Computation:
    """``y(i, j) = sum_j A(i, j)`` through ``t``, a local private to loop ``i``: ``t`` sums
    the row, then every ``j`` reads it."""
    comp = spf.Computation("rows")
    comp.add_data_space("y", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_local("t", "double", private="i")
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s0 = comp.add_stmt(spf.Stmt("$t$ += $A$(i, j);", dom, "{[i,j] -> [0,i,0,j,0]}"))
    s1 = comp.add_stmt(spf.Stmt("$y$(i, j) = $t$;", dom, "{[i,j] -> [0,i,1,j,0]}"))
    if mapping == "block":  # a row per block, a column per thread: t is the block's
        for s in (s0, s1):
            s.gpu(("i",), ("j",))
        s0.parallelize("j", reduction="atomic")
    else:  # a row per thread, j sequential in it: t is the thread's
        for s in (s0, s1):
            s.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


@pytest.mark.parametrize("mapping", ["block", "thread"])
def test_a_local_private_to_a_block_loop_is_the_blocks(mapping: str) -> None:
    """A local private to a gpu block loop has one (zeroed) copy per block, which its
    threads share; the kernel declared one per thread, so each thread summed only its own
    column and y came out as A (no error)."""
    comp = row_sums(mapping)
    k = comp.compile(target="cuda", emulate=True)
    for n, m in ((9, 7), (3, 40), (1, 1)):
        A, y = np.random.default_rng(3).random((n, m)), np.zeros((n, m))
        k(A=A, y=y)
        np.testing.assert_allclose(y, np.repeat(A.sum(axis=1)[:, None], m, axis=1))


def test_a_local_private_to_an_outer_thread_loop_is_refused() -> None:
    """Private to thread loop ``i`` with thread loop ``j`` inside: the ``j`` threads of one
    ``i`` share it, and no CUDA memory is per ``i``; it was declared per thread."""
    comp = spf.Computation("outer")
    comp.add_data_space("A", "double", shape=("N", 4, 4))
    comp.add_local("t", "double", private="i")
    s = comp.add_stmt(
        spf.Stmt(
            "$t$ += $A$(b, i, j);",
            "{[b,i,j]: 0 <= b < N && 0 <= i < 4 && 0 <= j < 4}",
            "{[b,i,j] -> [0,b,0,i,0,j,0]}",
        )
    )
    s.gpu(("b",), ("i", "j"))
    s.parallelize("j", reduction="atomic")
    with pytest.raises(spf.CodegenError, match="local 't' is private to a gpu thread loop"):
        comp.codegen("cuda")


def test_a_local_private_to_a_host_loop_is_refused_in_kernels() -> None:
    comp = spf.Computation("hostloop")
    comp.add_data_space("y", "double", shape=("T", 8))
    comp.add_data_space("x", "double", shape=("T", 8))
    comp.add_local("t", "double", shape=(8,), private="r")
    dom = "{[r,i]: 0 <= r < T && 0 <= i < 8}"
    s0 = comp.add_stmt(spf.Stmt("$t$(i) = 2.0 * $x$(r, i);", dom, "{[r,i]->[0,r,0,i,0]}"))
    s1 = comp.add_stmt(spf.Stmt("$y$(r, i) = $t$(7 - i);", dom, "{[r,i]->[0,r,1,i,0]}"))
    for s in (s0, s1):
        s.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
    with pytest.raises(spf.CodegenError, match="local 't' is private to a loop that runs on"):
        comp.codegen("cuda")


def host_loop_with_stack_buffer(kernel_reads_it: bool) -> spf.Computation:
    """In each iteration of host loop ``r``: ``t = 2 x(r)`` into a stack buffer allocated
    there (on the host), ``y(r) = t + r`` on the host, and a kernel computing ``z``."""
    comp = spf.Computation("mixedstack")
    for name in ("x", "y", "z"):
        comp.add_data_space(name, "double", shape=("T", 16))
    comp.add_data_space("t", "double", shape=(16,))
    dom = "{[r,i]: 0 <= r < T && 0 <= i < 16}"
    s0 = comp.add_stmt(spf.Stmt("$t$(i) = 2.0 * $x$(r, i);", dom, "{[r,i]->[0,r,0,i,0]}"))
    comp.add_stmt(spf.Stmt("$y$(r, i) = $t$(i) + r;", dom, "{[r,i]->[0,r,1,i,0]}"))
    read = "$t$(i)" if kernel_reads_it else "$x$(r, i)"
    s2 = comp.add_stmt(spf.Stmt(f"$z$(r, i) = {read};", dom, "{[r,i]->[0,r,2,i,0]}"))
    buffer = comp.add_buffer("tb", (16,), "double", scope="stack")
    s0.store_in(buffer, ["i"])
    buffer.allocate_at(s0, "r")
    s2.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_a_stack_buffer_of_host_statements_stays_on_the_host() -> None:
    comp = host_loop_with_stack_buffer(kernel_reads_it=False)
    x = np.random.default_rng(4).random((3, 16))
    y, z = np.zeros((3, 16)), np.zeros((3, 16))
    comp.compile(target="cuda", emulate=True)(x=x, y=y, z=z)
    np.testing.assert_array_equal(y, 2 * x + np.arange(3)[:, None])
    np.testing.assert_array_equal(z, x)
    with pytest.raises(spf.SpfError, match="'t'"):  # the kernel's copy is not the host's
        host_loop_with_stack_buffer(kernel_reads_it=True).codegen("cuda")


def constant_weights(n: int) -> spf.Computation:
    """``W(k) = 1 + k`` on the host into a ``constant`` buffer of ``n`` doubles, then
    ``y(i) = W(i % n) x(i)`` on the GPU."""
    comp = spf.Computation("weights")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("W", "double", shape=(n,))
    init = comp.add_stmt(spf.Stmt("$W$(k) = 1.0 + k;", f"{{[k]: 0 <= k < {n}}}"))
    s = comp.add_stmt(spf.Stmt(f"$y$(i) = $W$(i % {n}) * $x$(i);", "{[i]: 0 <= i < N}"))
    init.store_in(comp.add_buffer("w", (n,), "double", scope="constant"), ["k"])
    s.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_constant_memory_over_64_kib_is_refused() -> None:
    """10000 doubles of __constant__ memory built and ran emulated, and ptxas refused them
    ('File uses too much global constant data (0x13880 bytes, 0x10000 max)')."""
    with pytest.raises(spf.CodegenError, match=r"buffer 'w' \(constant memory.*at most 65536"):
        constant_weights(10000).codegen("cuda")
    k = constant_weights(8192).compile(target="cuda", emulate=True)  # 64 KiB: fine
    x, y = np.arange(20.0), np.zeros(20)
    k(x=x, y=y, w=np.zeros(8192))
    np.testing.assert_array_equal(y, (1.0 + np.arange(20)) * x)


@pytest.mark.requires_nvcc
def test_64_kib_of_constant_memory_builds_with_nvcc() -> None:
    comp = constant_weights(8192)
    assert build_nvcc(comp.codegen("cuda"), name=comp.name).path.is_file()


def test_an_array_only_a_device_to_host_names_is_still_copied_in() -> None:
    """``a = 2 a`` with only a device_to_host of ``a``: the kernel read device memory nothing
    had copied in (garbage). (With only a host_to_device, the result stays on the device, as
    the program says: tests/unit/codegen/test_cuda_printer.py.)"""
    comp = spf.Computation("oneway")
    comp.add_data_space("a", "double", shape=("N",))
    body = comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    comp.device_to_host("a")
    body.split("i", 16, "i0", "i1").gpu(("i0",), ("i1",))
    src = comp.codegen("cuda")
    host = src[src.index('extern "C" int oneway(') :]
    assert host.count("cudaMemcpyHostToDevice") == 1
    assert host.count("cudaMemcpyDeviceToHost") == 1
    a = np.arange(40.0)
    comp.compile(target="cuda", emulate=True)(a=a)
    np.testing.assert_array_equal(a, 2 * np.arange(40.0))


def test_an_array_only_a_device_to_host_names_is_copied_in_once() -> None:
    """With statements on the host the implicit copies go around each launch; an array only
    a device_to_host names is copied in once, at the start: copied in again before the second
    kernel, the host's stale copy would overwrite what the first kernel wrote there."""
    comp = spf.Computation("twokernels")
    for name in ("a", "x", "w"):
        comp.add_data_space(name, "double", shape=("N",))
    k0 = comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$w$(i) = $x$(i) + 1.0;", "{[i]: 0 <= i < N}"))  # on the host
    k1 = comp.add_stmt(spf.Stmt("$a$(i) = $a$(i) + 1.0;", "{[i]: 0 <= i < N}"))
    comp.device_to_host("a")
    for s in (k0, k1):
        s.split("i", 16, "i0", "i1").gpu(("i0",), ("i1",))
    a, x, w = np.arange(40.0), np.ones(40), np.zeros(40)
    comp.compile(target="cuda", emulate=True)(a=a, x=x, w=w)
    np.testing.assert_array_equal(a, 2 * np.arange(40.0) + 1)
    np.testing.assert_array_equal(w, x + 1)


def copy_after_kernel(host_reader: bool, copy_first: bool = False) -> spf.Computation:
    """``b = 2 a`` on the GPU, then (on the host with ``host_reader``) ``a = b + 1``, with a
    ``host_to_device("a")`` created after the statements (so it runs after the kernel), or
    before them with ``copy_first``."""
    comp = spf.Computation("lateh2d")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    if copy_first:
        comp.host_to_device("a")
    k = comp.add_stmt(spf.Stmt("$b$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    s1 = comp.add_stmt(spf.Stmt("$a$(i) = $b$(i) + 1;", "{[i]: 0 <= i < N}", "{[i]->[2,i,0]}"))
    k.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    if not host_reader:
        s1.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    if not copy_first:
        comp.host_to_device("a")
    return comp


@pytest.mark.parametrize("host_reader", [True, False])
def test_a_kernel_reading_an_array_before_its_host_to_device_is_refused(
    host_reader: bool,
) -> None:
    """An array a host_to_device names has no implicit copy in: a kernel that read it before
    that copy (here one created after the statements, so placed last) read device memory
    nothing wrote, and the emulated run gave a = 1 everywhere (a = 2 a + 1 in C)."""
    comp = copy_after_kernel(host_reader)
    with pytest.raises(
        spf.CodegenError,
        match=r"kernel lateh2d_k0 \(statement s0\) reads 'a' on the device "
        r"before the host_to_device\(a\) of statement s2",
    ):
        comp.codegen("cuda")
    comp = copy_after_kernel(host_reader, copy_first=True)  # copied in, then read
    a, b = np.arange(21.0), np.zeros(21)
    comp.compile(target="cuda", emulate=True)(a=a, b=b)
    np.testing.assert_array_equal(b, 2 * np.arange(21.0))
    if host_reader:  # a stays on the device otherwise (no copy back of a, as the copies say)
        np.testing.assert_array_equal(a, 2 * np.arange(21.0) + 1)


def test_a_copy_of_a_data_space_stored_in_a_buffer_names_the_buffer() -> None:
    """device_to_host('b') of a b that store_in put in the global buffer T said only that b
    is no argument; the refusal now names the buffer to copy instead, which is right."""

    def build(copy_buffer: bool) -> spf.Computation:
        comp = spf.Computation("tr")
        comp.add_data_space("a", "double", shape=("N", "M"))
        comp.add_data_space("b", "double", shape=("N", "M"))
        dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
        s = comp.add_stmt(spf.Stmt("$b$(i, j) = 2.0 * $a$(i, j);", dom))
        t = comp.add_buffer("T", ("M", "N"), "double")
        s.store_in(t, ["j", "i"])
        s.tile_gpu("i", "j", 4, 4)
        comp.device_to_host(t if copy_buffer else "b")
        return comp

    with pytest.raises(
        spf.CodegenError,
        match=r"device_to_host\(b\) names no array argument .* 'b' is stored in buffer 'T' "
        r"\(store_in\): name the buffer, comp.device_to_host\(comp.buffer\('T'\)\)",
    ):
        build(False).codegen("cuda")
    a, t = np.random.default_rng(0).random((13, 7)), np.zeros((7, 13))
    build(True).compile(target="cuda", emulate=True)(a=a, T=t)
    np.testing.assert_array_equal(t, 2 * a.T)


def test_a_device_to_host_of_a_read_only_argument_is_refused() -> None:
    """g++ / nvcc failed on the copy into a const pointer."""
    comp = spf.Computation("readonly")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("b", "double", shape=("N",))
    body = comp.add_stmt(spf.Stmt("$b$(i) = $a$(i);", "{[i]: 0 <= i < N}"))
    comp.device_to_host("a")
    body.split("i", 16, "i0", "i1").gpu(("i0",), ("i1",))
    with pytest.raises(spf.CodegenError, match=r"device_to_host\(a\): no statement writes a"):
        comp.codegen("cuda")


def test_private_to_a_tile_gpu_loop_names_the_program_order_loops() -> None:
    """``private="j1"`` (a loop tile_gpu made) said the statement 'does not run inside a
    loop j1 (its loops: i0, j0, i1, j1, k)', listing j1 among them; private= names a loop of
    the program order, and the message now says so and which loops those are."""

    def build(private: str) -> spf.Computation:
        comp = spf.Computation("rows3")
        comp.add_data_space("y", "double", shape=("N", "M"))
        comp.add_data_space("A", "double", shape=("N", "M", "K"))
        comp.add_local("t", "double", private=private)
        dom = "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}"
        s0 = comp.add_stmt(spf.Stmt("$t$ += $A$(i, j, k);", dom, "{[i,j,k]->[0,i,0,j,0,k,0]}"))
        s1 = comp.add_stmt(
            spf.Stmt(
                "$y$(i, j) = $t$;", "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j]->[0,i,0,j,1]}"
            )
        )
        for s in (s0, s1):
            s.tile_gpu("i", "j", 4, 4)
        return comp

    words = (
        r"loop 'j1', which is a loop of its current schedule \(i0, j0, i1, j1, k\) but not of "
        r"its program order \(i, j, k\), the loops private= names; name the loop of the "
        r"program order that 'j1' came from"
    )
    with pytest.raises(spf.VerifyError, match=words):
        build("j1").codegen("cuda")
    k = build("j").compile(target="cuda", emulate=True)
    A, y = np.random.default_rng(0).random((5, 6, 3)), np.zeros((5, 6))
    k(A=A, y=y)
    np.testing.assert_allclose(y, A.sum(axis=2))


def test_atomic_reduction_on_a_sequential_loop_says_what_to_do() -> None:
    """The message said target 'cuda' 'does not run [it] on the host (map the loop with
    gpu(...))' for a loop that runs inside a kernel's threads."""
    comp = spf.Computation("rsum")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s = comp.add_stmt(spf.Stmt("$y$(i) += $A$(i, j);", dom, "{[i,j]->[0,i,0,j,0]}"))
    s.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
    s.parallelize("j", reduction="atomic")
    words = (
        r"target 'cuda' runs it sequentially inside each gpu thread of the kernel of loop "
        r"i0: .*Map loop j to gpu blocks or threads .*do not parallelize loop j"
    )
    with pytest.raises(spf.CodegenError, match=words):
        comp.codegen("cuda")


@pytest.mark.parametrize("scope", ["local", "stack"])
def test_cache_read_inside_gpu_loops_is_each_threads_copy(scope: str) -> None:
    """``cache_read("A", "i1", scope=...)`` of a statement mapped to gpu loops: the copy
    statement stayed unmapped (a host loop over every thread's rows), so its writes of the
    pack crossed the gpu loops and the mapping was refused. The copy now takes the
    statement's gpu tags on the loops it shares: each thread packs its own row of A into its
    own copy and reads it (checked against numpy in the emulator)."""
    comp = spf.Computation("packrow")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", 8))
    dom = "{[i,k]: 0 <= i < N && 0 <= k < 8}"
    s = comp.add_stmt(spf.Stmt("$y$(i) += 2.0 * $A$(i, k);", dom, "{[i,k]->[0,i,0,k,0]}"))
    s.split("i", 4, "i0", "i1").gpu(("i0",), ("i1",))
    s.cache_read("A", "i1", scope=scope)
    assert comp.stmt("A_pack_copy").tags == {"i0": ("gpu_block(0)",), "i1": ("gpu_thread(0)",)}
    k = comp.compile(target="cuda", emulate=True)
    for n in (10, 4, 1):
        A, y = np.random.default_rng(n).random((n, 8)), np.zeros(n)
        k(A=A, y=y)
        np.testing.assert_allclose(y, 2.0 * A.sum(axis=1))
