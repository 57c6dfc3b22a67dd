"""One small interface to a CUDA GPU from Python, with two implementations.

:class:`GpuRuntime` is what spf's CUDA kernels need from a GPU: compile the device part of a
generated ``.cu`` into a module, allocate and free device memory, copy, fill ``__constant__``
symbols, launch a kernel with a ``void **`` array of argument addresses, synchronize.

* :class:`PyCudaRuntime` (``pycuda``): the module is built by ``pycuda.compiler.SourceModule``
  (nvcc, with ``-DSPF_DEVICE_ONLY``), kernels launch through ``Function._launch_kernel``.
* :class:`CupyRuntime` (CuPy): the module is ``cupy.RawModule`` (NVRTC; the host part of the
  text is skipped under ``__CUDACC_RTC__``), kernels launch through
  ``cupy.cuda.driver.launchKernel``.

:func:`spf.runtime.cuda.compile_kernel` builds with nvcc when it is on ``PATH`` and uses
one of these otherwise. :func:`runtime` picks pycuda where it imports and CuPy otherwise
(pycuda ships no wheels and does not build on machines without the CUDA driver; GPU
machines carry CuPy). Neither is a dependency of spf: nothing here is imported before a GPU
kernel is compiled.
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Sequence
from typing import Any, Protocol

from spf.errors import ArgumentError, ToolchainError
from spf.runtime.device_arrays import DEVICE_MEMORY, HOST_MEMORY, MANAGED_MEMORY, Placement

HOST_TO_DEVICE = 1
DEVICE_TO_HOST = 2
DEVICE_TO_DEVICE = 3
"""``cudaMemcpyKind`` values (``cudaMemcpyHostToHost`` is 0)."""


class GpuRuntime(Protocol):
    """What spf's CUDA runtime uses; addresses are ints (device or host)."""

    name: str

    def load(self, source: str, kernels: Sequence[str]) -> Any:
        """Compile the device part of ``source`` and return a module handle."""
        ...

    def malloc(self, nbytes: int) -> int: ...

    def free(self, ptr: int) -> None: ...

    def copy(self, dst: int, src: int, nbytes: int, kind: int) -> None:
        """``cudaMemcpy(dst, src, nbytes, kind)``."""
        ...

    def to_symbol(self, module: Any, symbol: str, src: int, nbytes: int, offset: int) -> None:
        """``cudaMemcpyToSymbol`` for a ``__constant__`` of ``module``."""
        ...

    def launch(
        self,
        module: Any,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[bytes],
        params: int,
    ) -> None:
        """Run ``kernel``; ``args`` are the 8-byte argument values, ``params`` the address
        of the ``void *[]`` array that points at them (for launch APIs that take one)."""
        ...

    def synchronize(self) -> None: ...

    # Optional: ``placement(ptr) -> Placement`` (spf.runtime.device_arrays), where CUDA finds
    # a device array's memory and which GPU is current; a runtime with it has device arrays
    # a kernel on the current GPU cannot read refused before the launch (CuPy's does).


class CupyRuntime:
    """CuPy: ``RawModule`` (NVRTC) and the CUDA runtime/driver calls CuPy exposes."""

    name = "cupy"

    def __init__(self) -> None:
        self.cupy: Any = importlib.import_module("cupy")
        self.rt: Any = self.cupy.cuda.runtime
        self.driver: Any = self.cupy.cuda.driver
        self._functions: dict[tuple[int, str], Any] = {}

    def load(self, source: str, kernels: Sequence[str]) -> Any:
        module = self.cupy.RawModule(code=source, options=("-DSPF_DEVICE_ONLY",))
        for k in kernels:  # compile now: errors belong to compile(), not the first call
            self._functions[(id(module), k)] = _driver_function(module.get_function(k))
        return module

    def malloc(self, nbytes: int) -> int:
        return int(self.rt.malloc(nbytes))

    def free(self, ptr: int) -> None:
        self.rt.free(ptr)

    def copy(self, dst: int, src: int, nbytes: int, kind: int) -> None:
        """Copy on the stream the kernels launch on (CuPy's current one), so a copy in is
        ordered before the kernel that reads it and a copy out after the kernel that wrote
        it even on a non-blocking stream, which the legacy default stream of a plain
        ``cudaMemcpy`` does not wait for (nor the DMA of a staged copy from pageable memory
        wait for a kernel on it); a copy to the host waits for that stream before it returns."""
        stream = self.cupy.cuda.get_current_stream()
        self.rt.memcpyAsync(dst, src, nbytes, kind, int(stream.ptr))
        if kind != HOST_TO_DEVICE:
            stream.synchronize()

    def to_symbol(self, module: Any, symbol: str, src: int, nbytes: int, offset: int) -> None:
        pointer = module.get_global(symbol)
        self.copy(int(pointer.ptr) + offset, src, nbytes, HOST_TO_DEVICE)

    def launch(
        self,
        module: Any,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[bytes],
        params: int,
    ) -> None:
        key = (id(module), kernel)
        if key not in self._functions:
            self._functions[key] = _driver_function(module.get_function(kernel))
        fn = self._functions[key]
        stream = int(self.cupy.cuda.get_current_stream().ptr)
        self.driver.launchKernel(int(fn.ptr), *grid, *block, 0, stream, params, 0)

    def synchronize(self) -> None:
        self.rt.deviceSynchronize()

    def placement(self, ptr: int) -> Placement:
        """``cudaPointerGetAttributes(ptr)`` and ``cudaGetDevice()`` (CuPy resets the error
        state a failed call leaves, and old CUDA fails on pageable host memory)."""
        current = int(self.rt.getDevice())
        try:
            found = self.rt.pointerGetAttributes(ptr)
        except self.rt.CUDARuntimeError:
            return Placement(HOST_MEMORY, -1, current, False)
        return placement(found, current)


def _driver_function(fn: Any) -> Any:
    """The driver function (with the ``ptr`` ``launchKernel`` takes) of what CuPy's
    ``RawModule.get_function`` gave: a ``RawKernel`` from CuPy 13 on (its ``.kernel``), the
    ``Function`` itself before."""
    return fn.kernel if hasattr(fn, "kernel") else fn


class PyCudaRuntime:
    """pycuda: ``SourceModule`` (nvcc) and ``pycuda.driver``. ``pycuda.autoinit`` makes a
    context of its own, where CuPy's and PyTorch's device pointers are not valid and whose
    synchronize does not wait for theirs: kernels on this runtime refuse device arrays
    (:meth:`spf.runtime.cuda.CudaKernel._usable`)."""

    name = "pycuda"

    def __init__(self) -> None:
        importlib.import_module("pycuda.autoinit")  # creates the context on device 0
        self.drv: Any = importlib.import_module("pycuda.driver")
        self.compiler: Any = importlib.import_module("pycuda.compiler")
        self._allocations: dict[int, Any] = {}

    def load(self, source: str, kernels: Sequence[str]) -> Any:
        module = self.compiler.SourceModule(
            source, no_extern_c=True, options=["-DSPF_DEVICE_ONLY", "-std=c++17"]
        )
        for k in kernels:
            module.get_function(k)
        return module

    def malloc(self, nbytes: int) -> int:
        allocation = self.drv.mem_alloc(nbytes)
        ptr = int(allocation)
        self._allocations[ptr] = allocation
        return ptr

    def free(self, ptr: int) -> None:
        allocation = self._allocations.pop(ptr, None)
        if allocation is not None:
            allocation.free()

    def copy(self, dst: int, src: int, nbytes: int, kind: int) -> None:
        import ctypes

        if kind == HOST_TO_DEVICE:
            self.drv.memcpy_htod(dst, (ctypes.c_char * nbytes).from_address(src))
        elif kind == DEVICE_TO_HOST:
            self.drv.memcpy_dtoh((ctypes.c_char * nbytes).from_address(dst), src)
        elif kind == DEVICE_TO_DEVICE:
            self.drv.memcpy_dtod(dst, src, nbytes)
        else:
            ctypes.memmove(dst, src, nbytes)

    def to_symbol(self, module: Any, symbol: str, src: int, nbytes: int, offset: int) -> None:
        import ctypes

        pointer, _ = module.get_global(symbol)
        self.drv.memcpy_htod(int(pointer) + offset, (ctypes.c_char * nbytes).from_address(src))

    def launch(
        self,
        module: Any,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[bytes],
        params: int,
    ) -> None:
        fn = module.get_function(kernel)
        fn._launch_kernel(grid, block, b"".join(args), 0, None)

    def synchronize(self) -> None:
        self.drv.Context.synchronize()


_RUNTIMES: dict[str, type[CupyRuntime] | type[PyCudaRuntime]] = {
    "pycuda": PyCudaRuntime,
    "cupy": CupyRuntime,
}
_CHOSEN: dict[str, GpuRuntime] = {}


def runtime(name: str | None = None) -> GpuRuntime:
    """The GPU runtime ``name`` (``"pycuda"`` or ``"cupy"``), or the first that works."""
    if name is not None and name not in _RUNTIMES:
        raise ArgumentError(f"unknown GPU runtime {name!r}; available: {', '.join(_RUNTIMES)}")
    names = [name] if name is not None else list(_RUNTIMES)
    reasons = []
    for n in names:
        if n in _CHOSEN:
            return _CHOSEN[n]
        try:
            chosen: GpuRuntime = _RUNTIMES[n]()
        except Exception as err:  # ImportError, or a driver error creating the context
            reasons.append(f"{n}: {type(err).__name__}: {err}")
            continue
        _CHOSEN[n] = chosen
        return chosen
    raise ToolchainError(
        "no GPU runtime for compile(target='cuda'): "
        + "; ".join(reasons)
        + ". On a machine with a CUDA GPU put nvcc on PATH (gpu='nvcc') or install CuPy "
        "(pip install cupy-cuda12x) or pycuda; without one pass emulate=True to run the "
        "same CUDA source on the CPU"
    )


def placement(found: Any, current: int) -> Placement:
    """A :class:`~spf.runtime.device_arrays.Placement` from CuPy's ``PointerAttributes``,
    whose fields changed over versions: ``type`` (newest), ``memoryType`` and ``isManaged``
    (oldest), or neither (then device memory is what has a device address and no host one)."""
    device_pointer = int(found.devicePointer or 0)
    memory = getattr(found, "type", None)
    if memory is None or int(memory) < 0:
        memory = getattr(found, "memoryType", None)
        if getattr(found, "isManaged", 0):
            memory = MANAGED_MEMORY
    if memory is None or int(memory) < 0:
        host_pointer = int(found.hostPointer or 0)
        if not device_pointer:
            memory = HOST_MEMORY
        else:
            memory = DEVICE_MEMORY if not host_pointer else MANAGED_MEMORY
    return Placement(int(memory), int(found.device), current, bool(device_pointer))


def pack(values: Sequence[int]) -> list[bytes]:
    """8-byte little-endian images of kernel argument values."""
    return [struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF) for v in values]


__all__ = [
    "DEVICE_TO_DEVICE",
    "DEVICE_TO_HOST",
    "HOST_TO_DEVICE",
    "CupyRuntime",
    "GpuRuntime",
    "PyCudaRuntime",
    "pack",
    "placement",
    "runtime",
]
