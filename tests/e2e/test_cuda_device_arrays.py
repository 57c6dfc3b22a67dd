"""CUDA kernels on arrays already on the GPU (``__cuda_array_interface__``), without a GPU.

In the emulator and through a fake GPU runtime "device" memory is host memory, so numpy-backed
objects that expose ``__cuda_array_interface__`` stand for CuPy / PyTorch arrays: the kernel
must use their memory in place (no allocation, no copy), write outputs there, check them like
numpy arrays, and refuse them where the host code needs the argument on the host.
"""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.errors import ArgumentError, SpfError
from spf.runtime.cuda import build_nvcc
from spf.runtime.device_arrays import (
    DEVICE_MEMORY,
    HOST_MEMORY,
    MANAGED_MEMORY,
    PINNED_MEMORY,
    Placement,
    c_contiguous,
    is_stand_in,
    misplaced,
    read,
    stand_in,
)
from spf.runtime.gpu import DEVICE_TO_HOST, HOST_TO_DEVICE
from spf.runtime.gpu import placement as gpu_placement
from spf.sparse import csr_args
from spf.testing import HostMemoryGpu

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cuda_spmv = _example("cuda_spmv")
cuda_transpose = _example("cuda_transpose")


class Device:
    """A numpy-backed stand-in for a CuPy array: ``__cuda_array_interface__``, and numpy's
    ``__array_interface__`` at the same address (host memory seen as device memory, which
    is all an emulated kernel takes)."""

    def __init__(self, a: np.ndarray[Any, Any], **override: Any) -> None:
        self.host = a
        self.iface: dict[str, Any] = {
            "shape": a.shape,
            "typestr": a.dtype.str,
            "data": (a.ctypes.data, False),
            "version": 3,
            "strides": None,
        }
        self.iface.update(override)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self.iface

    @property
    def __array_interface__(self) -> dict[str, Any]:
        return self.host.__array_interface__


def random_csr(n: int, m: int, seed: int) -> Any:
    A = sp.random_array((n, m), density=0.1, format="lil", rng=np.random.default_rng(seed))
    if n > 3:
        A[n // 2, :] = 0  # an empty row
    return sp.csr_array(A)


@pytest.fixture(scope="module")
def spmv() -> Any:
    return cuda_spmv.build(32).compile(target="cuda", emulate=True)


def _call(kernel: Any, matrix: Any, x: Any, y: Any, device: set[str], check: bool = True) -> None:
    args: dict[str, Any] = {**csr_args(matrix), "x": x, "y": y}
    for name in device:
        args[name] = Device(args[name])
    kernel(check=check, **args)


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize(
    "device",
    [{"A", "col", "rowptr", "x", "y"}, {"y"}, {"x", "A"}, {"rowptr"}, set()],
    ids=["all", "output", "inputs", "index", "none"],
)
def test_spmv_on_device_arrays_equals_scipy(spmv: Any, device: set[str], check: bool) -> None:
    rng = np.random.default_rng(0)
    for n, m in ((0, 4), (1, 1), (70, 50), (300, 200)):
        A = random_csr(n, m, n)
        x, y = rng.random(m), rng.random(n)
        want = y + A @ x
        _call(spmv, A, x, y, device, check)
        np.testing.assert_allclose(y, want, rtol=1e-12)  # written in place on the "device"


def test_the_host_function_uses_the_device_memory_as_given(spmv: Any) -> None:
    assert spmv._device_codes == "ddddd"  # col, rowptr, y, A, x may all be device arrays
    src = spmv.source
    assert "if (spf_on_device[2]) spf_d_y = (double *)y;" in src
    assert "if (!spf_on_device[2]) SPF_CHECK(cudaMemcpy(y, spf_d_y" in src
    assert "if (!spf_on_device[2]) cudaFree(spf_d_y);" in src


class CountingGpu(HostMemoryGpu):
    """A GPU runtime whose device is host memory: counts allocations and copies, and runs
    the transpose kernel's launch itself (any pointer it is given: device arrays too)."""

    name = "counting"

    def __init__(self) -> None:
        super().__init__()
        self.launched: list[list[int]] = []

    def launch(
        self, module: Any, kernel: str, grid: Any, block: Any, args: Any, params: int
    ) -> None:
        n, dst, src = (int.from_bytes(a, "little") for a in args)  # N, B, A
        self.launched.append([dst, src])
        view = (ctypes.c_float * (n * n)).from_address
        b = np.frombuffer(view(dst), dtype=np.float32).reshape(n, n)
        b[...] = np.frombuffer(view(src), dtype=np.float32).reshape(n, n).T


@pytest.mark.parametrize("device", [{"A", "B"}, {"A"}, {"B"}, set()])
def test_bridge_makes_no_allocation_or_copy_for_device_arrays(device: set[str]) -> None:
    gpu = CountingGpu()
    k = cuda_transpose.build(16).compile(target="cuda", gpu=gpu)
    A = np.random.default_rng(0).random((37, 37), dtype=np.float32)
    B = np.zeros_like(A)
    args: dict[str, Any] = {"A": A, "B": B}
    k(**{n: Device(v) if n in device else v for n, v in args.items()})
    np.testing.assert_array_equal(B, A.T)
    assert gpu.mallocs == 2 - len(device)
    want = [] if "A" in device else [HOST_TO_DEVICE]  # A: in only (read-only)
    if "B" not in device:
        want = [HOST_TO_DEVICE, *want, DEVICE_TO_HOST]  # B: in (signature order) and out
    assert gpu.copies == want
    ((dst, src),) = gpu.launched
    assert (dst == B.ctypes.data) == ("B" in device)  # the kernel got the array's own memory
    assert (src == A.ctypes.data) == ("A" in device)
    assert gpu.synchronized == (2 if device else 1)  # before (other streams' work) and after
    assert not gpu.memory  # everything spf allocated was freed


def test_checked_device_index_arrays_are_copied_to_the_host_every_call() -> None:
    """check=True verifies the index arrays' contents, so device ones are copied to the host
    for it, on every call (the device memory may have changed since: nothing is remembered
    by address); check=False copies nothing."""
    k = cuda_spmv.build(32).compile(target="cuda", emulate=True)
    A = random_csr(40, 30, 1)
    x, y = np.ones(30), np.zeros(40)
    args: dict[str, Any] = {**csr_args(A), "x": x, "y": y}
    rowptr = Device(args["rowptr"].copy())
    col = Device(args["col"].copy())
    k(**{**args, "rowptr": rowptr, "col": col})
    np.testing.assert_allclose(y, A @ x)
    rowptr.host[5] = 10**6  # the same device memory, changed between calls
    with pytest.raises(ArgumentError, match=r"rowptr\[5\] = 1000000 is outside"):
        k(**{**args, "rowptr": rowptr, "col": col})
    col.host[0] = -1
    rowptr.host[5] = args["rowptr"][5]
    with pytest.raises(ArgumentError, match=r"col\[0\] = -1 is outside"):
        k(**{**args, "rowptr": rowptr, "col": col})


def test_checked_call_copies_device_index_arrays_through_the_gpu_runtime() -> None:
    """Through the GPU bridge the check's host copies are the runtime's device-to-host copies
    (one per device index array; none for device data and none with check=False)."""

    class Spmv(CountingGpu):
        def launch(self, *a: Any) -> None:  # nothing to compute: counting copies only
            pass

    gpu = Spmv()
    k = cuda_spmv.build(32).compile(target="cuda", gpu=gpu)
    A = random_csr(20, 10, 2)
    x, y = np.ones(10), np.zeros(20)
    given = {**csr_args(A), "x": x, "y": y}
    device = {n: Device(v) for n, v in given.items() if isinstance(v, np.ndarray)}
    params = {n: v for n, v in csr_args(A).items() if not isinstance(v, np.ndarray)}
    k(**device, **params)
    assert gpu.copies == [DEVICE_TO_HOST, DEVICE_TO_HOST]  # col, rowptr for the checks
    assert gpu.mallocs == 0
    gpu.copies.clear()
    k(**device, **params, check=False)
    assert gpu.copies == []


def _refused(kernel: Any, match: str, **args: Any) -> None:
    with pytest.raises(ArgumentError, match=match):
        kernel(**args)


def test_wrong_device_arrays_are_refused_like_numpy_ones(spmv: Any) -> None:
    A = random_csr(30, 20, 3)
    base: dict[str, Any] = {**csr_args(A), "x": np.ones(20)}
    y = np.zeros(30)
    cases = [
        (Device(y.astype(np.float32)), r"y: expected dtype float64 \(double\), got float32"),
        (Device(y[:10]), r"y: expected shape \(30,\)"),
        (Device(np.zeros((30, 1))), r"y: expected 1-d, got a 2-d array"),
        (
            Device(np.zeros(60), shape=(30,), strides=(16,)),
            r"y: the device array is not C-contiguous \(strides \(16,\)\); pass a contiguous",
        ),
        (Device(y, data=(y.ctypes.data, True)), r"y: the array is read-only but the kernel"),
        (Device(y, mask=object()), r"y: masked device arrays are not supported"),
        (Device(y, version=9), r"y: __cuda_array_interface__ version 9"),
        (Device(y, data=(y.ctypes.data + 1, False)), r"y: the device array's data .* aligned"),
        (Device(y, typestr="nonsense"), r"y: the __cuda_array_interface__ of this Device"),
    ]
    for value, match in cases:
        _refused(spmv, match, y=value, **base)
    # contiguous strides given explicitly are fine, as numpy decides
    spmv(y=Device(y, strides=(8,)), **base)
    # overlap: a written device array sharing memory with another argument
    x = np.zeros(30)
    _refused(spmv, r"y and x share memory", **{**base, "x": x[:20], "y": Device(x)})


def test_c_contiguity_matches_numpy() -> None:
    for shape, order in (((3, 4), "C"), ((3, 4), "F"), ((1, 5), "F"), ((0, 3), "F"), ((), "C")):
        a = np.zeros(shape, order=order)
        want = a.flags.c_contiguous
        assert c_contiguous(a.shape, a.strides, a.itemsize) == want, (shape, order)
    b = np.zeros((4, 6))[:, ::2]
    assert not c_contiguous(b.shape, b.strides, b.itemsize)


def test_empty_device_arrays_with_null_pointers(spmv: Any) -> None:
    """Empty device arrays may have a null pointer (CuPy's do); a non-empty one may not."""
    matrix = random_csr(0, 0, 4)
    args = dict(csr_args(matrix))
    empty = {n: Device(v, data=(0, False)) for n, v in args.items() if n in ("A", "col")}
    y = np.zeros(0)
    spmv(**{**args, **empty, "x": Device(np.zeros(0), data=(0, False)), "y": Device(y)})
    rowptr = Device(args["rowptr"], data=(0, False))
    _refused(
        spmv,
        "rowptr: the device array has 1 elements but a null data pointer",
        **{**args, "rowptr": rowptr, "x": np.zeros(0), "y": y},
    )


def _mixed() -> spf.Computation:
    comp = spf.Computation("mixed")
    for name in ("x", "y", "z", "w"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0,0,0]}"))
    g = comp.add_stmt(spf.Stmt("$w$(i) = $y$(i) + 1.0;", "{[i]: 0 <= i < N}", "{[i]->[1,i,0,0,0]}"))
    comp.add_stmt(spf.Stmt("$z$(i) = 3.0 * $y$(i);", "{[i]: 0 <= i < N}", "{[i]->[2,i,0,0,0]}"))
    g.split("i", 8, "i0", "i1").gpu(("i0",), ("i1",))
    return comp


def test_arguments_host_statements_use_must_be_numpy_arrays() -> None:
    """x, y, z are read or written by statements on the host; w only by the kernel."""
    k = _mixed().compile(target="cuda", emulate=True)
    assert k._device_codes == "hhhd"
    x, y, z, w = np.arange(21.0), np.zeros(21), np.zeros(21), np.zeros(21)
    k(x=x, y=y, z=z, w=Device(w))
    np.testing.assert_array_equal(w, 2 * x + 1)
    np.testing.assert_array_equal(z, 6 * x)
    for name in "xyz":
        args: dict[str, Any] = {"x": x, "y": y, "z": z, "w": w, name: Device(np.zeros(21))}
        _refused(
            k,
            rf"{name}: a device array \(Device\), but statements that run on the host read or "
            r"write it in CUDA kernel mixed, so it must be a numpy array; pass",
            **args,
        )


def test_arrays_explicit_copies_name_must_be_numpy_arrays() -> None:
    comp = spf.Computation("twice")
    comp.add_data_space("a", "double", shape=("N",))
    comp.host_to_device("a")
    body = comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    comp.device_to_host("a")
    body.split("i", 64, "i0", "i1").gpu(("i0",), ("i1",))
    k = comp.compile(target="cuda", emulate=True)
    _refused(
        k,
        r"a: .*a Layer IV copy \(host_to_device / device_to_host\) names it",
        a=Device(np.zeros(3)),
    )


def test_c_kernels_refuse_device_arrays_clearly() -> None:
    k = spf.kernels.spmv_csr().compile()
    A = random_csr(10, 10, 5)
    with pytest.raises(
        ArgumentError,
        match=r"x: a device array \(Device, with "
        r"__cuda_array_interface__\) for data space 'x', but this kernel runs on "
        r"the host; pass a numpy array",
    ):
        k(x=Device(np.ones(10)), y=np.zeros(10), **csr_args(A))


def test_a_failing_device_interface_is_named(spmv: Any) -> None:
    class Grad:
        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")

    A = random_csr(5, 5, 6)
    _refused(
        spmv,
        r"y: reading its __cuda_array_interface__ failed \(RuntimeError",
        y=Grad(),
        x=np.ones(5),
        **csr_args(A),
    )


# ----------------------------------------------------------------------------- where memory is


class CudaOnly:
    """Device memory as CuPy and PyTorch present it: ``__cuda_array_interface__`` only (no
    ``__array_interface__``: the CPU cannot read it)."""

    def __init__(self, shape: tuple[int, ...], typestr: str, ptr: int) -> None:
        self.iface = {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3}

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self.iface


def test_emulated_kernels_take_only_memory_the_cpu_can_read(spmv: Any) -> None:
    """An emulated kernel runs on the CPU: a device array whose memory the CPU may not read
    (a CuPy array's; the review's reproducer: 0x7f0000000000, a segfault) is refused before
    anything reads it; host memory seen as device memory (``__array_interface__`` at the
    same address) is taken, and so is an empty array at any address."""
    A = random_csr(16, 16, 9)
    base: dict[str, Any] = {**csr_args(A), "x": np.ones(16)}
    y = np.zeros(16)
    elsewhere = Device(y)
    elsewhere.host = np.zeros(16)  # __array_interface__ at another address
    for value in (
        CudaOnly((16,), "<f8", 0x7F0000000000),
        CudaOnly((16,), "<f8", y.ctypes.data),
        elsewhere,
    ):
        for check in (True, False):
            with pytest.raises(
                ArgumentError,
                match=r"y: a device array \(\w+\) at 0x[0-9a-f]+, memory the CPU cannot read "
                r"\(it has no __array_interface__ at that address\); emulated kernels run on the "
                r"CPU: pass a numpy array, or compile without emulate=True to run on the GPU",
            ):
                spmv(y=value, check=check, **base)
    with pytest.raises(ArgumentError, match=r"rowptr: a device array \(CudaOnly\)"):
        spmv(**{**base, "y": y, "rowptr": CudaOnly((17,), "<i4", 0x7F0000000000)})
    empty = random_csr(0, 16, 10)
    spmv(**{**csr_args(empty), "x": np.ones(16), "y": CudaOnly((0,), "<f8", 0)})


class Placed(CountingGpu):
    """A GPU runtime that says where memory is (``placement``, as CuPy's does)."""

    def __init__(self, where: dict[int, Placement]) -> None:
        super().__init__()
        self.where = where
        self.asked: list[int] = []

    def placement(self, ptr: int) -> Placement:
        self.asked.append(ptr)
        return self.where.get(ptr, Placement(DEVICE_MEMORY, 0, 0, True))


def test_gpu_routes_refuse_memory_the_current_gpu_cannot_read() -> None:
    """On a GPU, host memory or another GPU's memory behind the interface would fault in the
    kernel and leave the CUDA context unusable: the runtime's answer (CuPy's
    pointerGetAttributes; under nvcc the host code's ``name_spf_where``) refuses it before
    the host function allocates or launches anything."""
    A = np.random.default_rng(1).random((9, 9), dtype=np.float32)
    B = np.zeros_like(A)
    a, b = A.ctypes.data, B.ctypes.data
    refused = [
        (
            {b: Placement(HOST_MEMORY, -1, 0, False)},
            r"B: its __cuda_array_interface__ gives "
            rf"0x{b:x}, which is not GPU memory .*pass B as a numpy array \(spf copies it\), or "
            r"copy it to the GPU first",
        ),
        ({b: Placement(PINNED_MEMORY, 0, 0, False)}, r"B: .* which is not GPU memory"),
        (
            {a: Placement(DEVICE_MEMORY, 1, 0, True)},
            r"A: device memory of GPU 1, but the kernel "
            r"runs on GPU 0 \(the current device\); call it with GPU 1 current .* or copy A to GPU 0",
        ),
    ]
    for where, match in refused:
        gpu = Placed(where)
        k = cuda_transpose.build(16).compile(target="cuda", gpu=gpu)
        with pytest.raises(ArgumentError, match=match):
            k(A=Device(A), B=Device(B))
        assert (gpu.mallocs, gpu.launched, gpu.copies) == (0, [], [])
    taken = {
        a: Placement(MANAGED_MEMORY, 1, 0, True),  # managed memory: any GPU reads it
        b: Placement(PINNED_MEMORY, 0, 0, True),  # page-locked, mapped for the device
    }
    gpu = Placed(taken)
    k = cuda_transpose.build(16).compile(target="cuda", gpu=gpu)
    k(A=Device(A), B=Device(B))
    np.testing.assert_array_equal(B, A.T)
    assert sorted(gpu.asked) == sorted([a, b])
    gpu.asked.clear()
    k(A=Device(np.zeros((0, 0), np.float32), data=(0, False)), B=np.zeros((0, 0), np.float32))
    assert gpu.asked == []  # an empty array is never read: not asked about

    class Failing(Placed):
        def placement(self, ptr: int) -> Placement:
            raise RuntimeError("cudaErrorNoDevice")

    k = cuda_transpose.build(16).compile(target="cuda", gpu=Failing({}))
    with pytest.raises(SpfError, match=r"cannot ask CUDA where A's memory is \(RuntimeError: "):
        k(A=Device(A), B=B)


def test_cupy_pointer_attributes_of_every_version() -> None:
    """CuPy's PointerAttributes has ``type`` (new), ``memoryType``/``isManaged`` (old), or
    neither; each reads as the same Placement."""
    new = SimpleNamespace(device=1, devicePointer=64, hostPointer=0, type=DEVICE_MEMORY)
    assert gpu_placement(new, 0) == Placement(DEVICE_MEMORY, 1, 0, True)
    old = SimpleNamespace(device=0, devicePointer=64, hostPointer=64, memoryType=2, isManaged=1)
    assert gpu_placement(old, 0) == Placement(MANAGED_MEMORY, 0, 0, True)
    bare = SimpleNamespace(device=0, devicePointer=64, hostPointer=0)
    assert gpu_placement(bare, 0) == Placement(DEVICE_MEMORY, 0, 0, True)
    host = SimpleNamespace(device=-2, devicePointer=0, hostPointer=0)
    assert gpu_placement(host, 0) == Placement(HOST_MEMORY, -2, 0, False)
    unregistered = SimpleNamespace(device=-2, devicePointer=0, hostPointer=0, type=0)
    assert misplaced_error(unregistered) is not None


def misplaced_error(attributes: Any) -> Any:
    found = read("y", None, {"shape": (4,), "typestr": "<f8", "data": (64, False)})
    return misplaced(found, gpu_placement(attributes, 0))


def test_the_pycuda_route_refuses_device_arrays() -> None:
    """pycuda.autoinit makes a context of its own, where CuPy's and PyTorch's pointers are
    not valid: device arrays are refused there."""

    class PyCudaLike(CountingGpu):
        name = "pycuda"

    gpu = PyCudaLike()
    k = cuda_transpose.build(16).compile(target="cuda", gpu=gpu)
    assert k.mode == "pycuda"
    A = np.ones((4, 4), np.float32)
    with pytest.raises(
        ArgumentError,
        match=r"B: a device array \(Device\), but this kernel runs through pycuda, whose "
        r"context \(pycuda.autoinit\) .* compile with gpu='nvcc' or gpu='cupy'",
    ):
        k(A=A, B=Device(np.zeros_like(A)))
    assert gpu.mallocs == 0
    B = np.zeros_like(A)
    k(A=A, B=B)  # numpy arrays as before
    np.testing.assert_array_equal(B, A.T)


def test_the_emulator_and_bridge_headers_define_where() -> None:
    """``name_spf_where`` builds behind both headers: the emulator's device memory is host
    memory (managed, device 0); the bridge leaves the question to the GPU runtime."""
    comp = cuda_transpose.build(16)
    emulated = comp.compile(target="cuda", emulate=True)
    ffi = emulated._ffi
    where = ffi.new("int[4]")
    assert emulated._lib.transpose_spf_where(ffi.cast("void *", 4096), where) == 0
    assert list(where) == [MANAGED_MEMORY, 0, 0, 1]
    bridged = comp.compile(target="cuda", gpu=CountingGpu())
    assert bridged._lib.transpose_spf_where(ffi.cast("void *", 4096), where) == 1
    assert b"cudaGetDevice" in bridged._ffi.string(bridged._lib.transpose_spf_error())


def _grid_from_an_index_array() -> spf.Computation:
    comp = spf.Computation("ufgrid")
    comp.add_data_space("y", "double", shape=("NNZ",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.declare_uf(
        "rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}", dtype="int32"
    )
    s = comp.add_stmt(spf.Stmt("$y$(k) = 2.0 * $A$(k);", "{[k]: 0 <= k < rowptr(N)}"))
    s.split("k", 8, "k0", "k1").gpu(("k0",), ("k1",))
    return comp


def test_an_index_array_the_host_reads_for_the_grid_is_named_so() -> None:
    """rowptr is read only by host code (the grid size), not by a statement on the host."""
    k = _grid_from_an_index_array().compile(target="cuda", emulate=True)
    assert k._device_codes == "bdd"
    rowptr = np.array([0, 2, 3, 5], dtype=np.int32)
    y, A = np.zeros(5), np.arange(5.0)
    k(y=Device(y), A=Device(A), rowptr=rowptr, N=3, NNZ=5)
    np.testing.assert_array_equal(y, 2 * A)
    _refused(
        k,
        r"rowptr: a device array \(Device\), but host code \(loop bounds / grid size\) reads "
        r"it in CUDA kernel ufgrid, so it must be a numpy array; pass rowptr on the host",
        y=y,
        A=A,
        rowptr=Device(rowptr),
        N=3,
        NNZ=5,
    )


class Ordered(CountingGpu):
    """Records the order of launches, synchronizations and copies (launches do nothing)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def copy(self, dst: int, src: int, nbytes: int, kind: int) -> None:
        self.events.append({HOST_TO_DEVICE: "in", DEVICE_TO_HOST: "out"}.get(kind, "copy"))
        super().copy(dst, src, nbytes, kind)

    def launch(self, *a: Any) -> None:
        self.events.append("launch")

    def synchronize(self) -> None:
        self.events.append("sync")


def _copies_out_wait(events: list[str]) -> bool:
    """Whether no copy to the host follows a launch without a synchronize between."""
    pending = False
    for e in events:
        if e == "launch":
            pending = True
        elif e == "sync":
            pending = False
        elif e == "out" and pending:
            return False
    return "out" in events


def test_copies_to_the_host_wait_for_the_launches() -> None:
    """Kernels may run on a stream a copy does not wait for (CuPy's current one), so the host
    code synchronizes before each copy out: after each launch when statements run on the
    host, and at an explicit device_to_host."""
    gpu = Ordered()
    k = _mixed().compile(target="cuda", gpu=gpu)
    k(x=np.arange(21.0), y=np.zeros(21), z=np.zeros(21), w=np.zeros(21))
    assert gpu.events.count("launch") == 1
    assert _copies_out_wait(gpu.events), gpu.events

    comp = spf.Computation("twice")
    comp.add_data_space("a", "double", shape=("N",))
    comp.host_to_device("a")
    body = comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    comp.device_to_host("a")
    body.split("i", 64, "i0", "i1").gpu(("i0",), ("i1",))
    gpu = Ordered()
    comp.compile(target="cuda", gpu=gpu)(a=np.ones(100))
    assert _copies_out_wait(gpu.events), gpu.events


def test_stand_ins_are_recognised() -> None:
    found = read("y", None, {"shape": (3, 4), "typestr": "<f8", "data": (64, False)})
    assert is_stand_in(stand_in(found))
    assert not is_stand_in(np.zeros(12)[::2])
    assert not is_stand_in(np.zeros(12).reshape(3, 4))


# ----------------------------------------------------------------------------- nvcc, a GPU


@pytest.mark.requires_nvcc
def test_nvcc_builds_the_device_array_host_code() -> None:
    """The host function with device-array flags builds with nvcc; without a GPU a call with a
    device array fails asking CUDA where its memory is (before any launch), not a crash."""
    comp = cuda_spmv.build(32)
    built = build_nvcc(comp.codegen("cuda"), name=comp.name)
    assert "error" not in built.stderr.lower()
    k = comp.compile(target="cuda", gpu="nvcc")
    assert k._device_codes == "ddddd"
    try:
        gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode
    except OSError:
        gpu = 1
    if gpu == 0:
        pytest.skip("a GPU is present: test_spmv_on_cupy_arrays runs the real thing")
    A = random_csr(8, 8, 7)
    with pytest.raises(SpfError, match=r"cannot ask CUDA where y's memory is \(cudaGetDevice: "):
        k(y=Device(np.zeros(8)), x=np.ones(8), **csr_args(A), check=False)


@pytest.mark.requires_gpu
@pytest.mark.parametrize("route", ["nvcc", "cupy"])
def test_spmv_on_cupy_arrays(route: str) -> None:
    cupy = pytest.importorskip("cupy")
    if route == "nvcc" and shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    k = cuda_spmv.build(32).compile(target="cuda", gpu=route)
    A = random_csr(3000, 2000, 8)
    x = np.random.default_rng(0).random(2000)
    dev = {n: cupy.asarray(v) if isinstance(v, np.ndarray) else v for n, v in csr_args(A).items()}
    y = cupy.zeros(3000)
    for check in (True, False):
        y.fill(0)
        k(y=y, x=cupy.asarray(x), check=check, **dev)
        np.testing.assert_allclose(cupy.asnumpy(y), A @ x, rtol=1e-12)


@pytest.mark.requires_gpu
@pytest.mark.parametrize("route", ["nvcc", "cupy"])
def test_gpu_refuses_host_memory_and_stays_usable(route: str) -> None:
    """Host memory behind the interface is refused before the launch (no fault, no sticky
    CUDA error: the next calls work); managed and page-locked host memory are taken; with
    two GPUs, memory of the one that is not current is refused."""
    cupy = pytest.importorskip("cupy")
    if route == "nvcc" and shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    k = cuda_spmv.build(32).compile(target="cuda", gpu=route)
    A = random_csr(300, 200, 11)
    x = np.random.default_rng(1).random(200)
    args = csr_args(A)
    dev = {n: cupy.asarray(v) if isinstance(v, np.ndarray) else v for n, v in args.items()}
    with pytest.raises(ArgumentError, match=r"y: its __cuda_array_interface__ gives 0x"):
        k(y=Device(np.zeros(300)), x=cupy.asarray(x), check=False, **dev)
    y = cupy.zeros(300)
    k(y=y, x=cupy.asarray(x), check=False, **dev)  # nothing sticky was left behind
    np.testing.assert_allclose(cupy.asnumpy(y), A @ x, rtol=1e-12)
    cupy.cuda.runtime.deviceSynchronize()

    managed = cupy.ndarray((300,), dtype=np.float64, memptr=cupy.cuda.malloc_managed(300 * 8))
    managed.fill(0)
    k(y=managed, x=cupy.asarray(x), check=False, **dev)
    np.testing.assert_allclose(cupy.asnumpy(managed), A @ x, rtol=1e-12)
    pinned = np.frombuffer(cupy.cuda.alloc_pinned_memory(300 * 8), dtype=np.float64, count=300)
    pinned[:] = 0
    k(y=Device(pinned), x=cupy.asarray(x), check=False, **dev)
    np.testing.assert_allclose(pinned, A @ x, rtol=1e-12)

    if cupy.cuda.runtime.getDeviceCount() > 1:
        with cupy.cuda.Device(1):
            other = cupy.zeros(300)
        with pytest.raises(ArgumentError, match=r"y: device memory of GPU 1, but the kernel"):
            k(y=other, x=cupy.asarray(x), check=False, **dev)
