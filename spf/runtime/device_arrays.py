"""Arrays already on the GPU as CUDA kernel arguments (docs/backends/cuda.md).

A CUDA kernel (:class:`spf.runtime.cuda.CudaKernel`) takes, per array argument, a numpy array
or any object exposing ``__cuda_array_interface__`` (CuPy, PyTorch, numba; version 0-3 of
the interface). This module reads that interface into a :class:`DeviceArray` and checks what
numpy's flags give for host arrays: a dtype, a shape, C-contiguous strides, alignment, and
whether it is read-only. The binder (:mod:`spf.runtime.binding`) then checks the dtype and
shape against the signature on a :func:`stand_in`: a numpy array of the same dtype, shape and
writeability over one element of memory, which nothing may read. Index arrays whose facts
``check=True`` verifies are copied to the host for that check instead, on every checked call:
device memory can change between calls, so nothing is remembered by address.

Where the memory is, the kernel decides by its mode (:class:`spf.runtime.cuda.CudaKernel`): an
emulated kernel runs on the CPU, so it takes only host memory presented as device memory
(:func:`host_view`: the object's ``__array_interface__`` gives the same address); on a GPU each
pointer must be memory the current GPU's kernels can read, as ``cudaPointerGetAttributes``
tells (:class:`Placement`, :func:`misplaced`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from spf.errors import ArgumentError

INTERFACE = "__cuda_array_interface__"


class DeviceArray(NamedTuple):
    """One argument's device memory, as its ``__cuda_array_interface__`` describes it (a
    named tuple: made on every call with a device array, so cheap to build)."""

    name: str
    ptr: int
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    readonly: bool
    size: int
    """The number of elements."""

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize


def interface(name: str, value: object) -> Mapping[str, Any] | None:
    """``value``'s ``__cuda_array_interface__`` (None for numpy arrays, numbers and other
    objects without one)."""
    if isinstance(value, np.ndarray | int | float):
        return None
    try:
        found = getattr(value, INTERFACE, None)
    except Exception as err:  # e.g. PyTorch: a tensor that requires grad
        raise ArgumentError(
            f"{name}: reading its {INTERFACE} failed ({type(err).__name__}: {err}); pass a "
            "plain device array (e.g. tensor.detach() in PyTorch) or a numpy array"
        ) from None
    if found is None:
        return None
    if not isinstance(found, Mapping):
        raise ArgumentError(
            f"{name}: its {INTERFACE} is a {type(found).__name__}, not a dict; pass a CuPy, "
            "PyTorch or numba device array, or a numpy array"
        )
    return found


def has_interface(value: object) -> bool:
    """Whether ``value`` is a device array (has a ``__cuda_array_interface__``), for
    messages: never raises."""
    if isinstance(value, np.ndarray | int | float):
        return False
    try:
        return getattr(value, INTERFACE, None) is not None
    except Exception:
        return True


def read(name: str, value: object, iface: Mapping[str, Any]) -> DeviceArray:
    """The :class:`DeviceArray` ``iface`` describes; ArgumentError naming ``name`` for an
    interface spf cannot use (a mask, strides that are not C-contiguous, misalignment)."""
    try:
        shape = tuple(map(int, iface["shape"]))
        dtype = np.dtype(iface["typestr"])
        data = iface["data"]
        ptr, readonly = (int(data[0] or 0), bool(data[1]))
        version = int(iface.get("version", 0))
        strides = iface.get("strides")
        mask = iface.get("mask")
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ArgumentError(
            f"{name}: the {INTERFACE} of this {type(value).__name__} is not one spf can "
            f"read ({err!r}); it needs 'shape', 'typestr' and 'data' (version 0-3)"
        ) from None
    if version > 3:
        raise ArgumentError(
            f"{name}: {INTERFACE} version {version}; spf reads versions 0-3, pass the array "
            "from a library that exports one of those"
        )
    if mask is not None:
        raise ArgumentError(
            f"{name}: masked device arrays are not supported; pass the data without a mask"
        )
    if any(e < 0 for e in shape):
        raise ArgumentError(f"{name}: the {INTERFACE} gives a negative extent {shape}")
    if strides is not None and not c_contiguous(shape, tuple(strides), dtype.itemsize):
        raise ArgumentError(
            f"{name}: the device array is not C-contiguous (strides {tuple(strides)}); pass "
            f"a contiguous copy (cupy.ascontiguousarray({name}), {name}.contiguous() in "
            "PyTorch) and read any result from the copy"
        )
    size = 1
    for extent in shape:
        size *= extent
    if size and not ptr:
        raise ArgumentError(f"{name}: the device array has {size} elements but a null data pointer")
    if size and ptr % dtype.alignment:
        raise ArgumentError(
            f"{name}: the device array's data (0x{ptr:x}) is not aligned for {dtype}; copy it"
        )
    return DeviceArray(name, ptr, dtype, shape, readonly, size)


def c_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Whether ``strides`` (bytes) lay ``shape`` out row-major without gaps, as numpy's
    ``C_CONTIGUOUS`` flag decides (extents of 1 may have any stride; empty arrays are)."""
    if len(strides) != len(shape):
        return False
    if 0 in shape:
        return True
    step = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides), strict=True):
        if extent != 1 and stride != step:
            return False
        step *= extent
    return True


def stand_in(found: DeviceArray) -> np.ndarray[Any, Any]:
    """A numpy array with ``found``'s dtype, shape and writeability, for the binder's checks
    of dtype and shape (``check=False``: the binder reads no contents). Its strides are the
    C-contiguous strides of that shape, but its memory is ONE element: any read past the
    first element would read outside it, so it must never reach code that reads an array
    (:meth:`spf.runtime.cuda.CudaKernel._bind_devices` copies device index arrays to the
    host for the checks that do). Its ``base`` is a one-element array (:func:`is_stand_in`)."""
    strides = []
    step = found.dtype.itemsize
    for extent in reversed(found.shape):
        strides.append(step)
        step *= max(1, extent)
    base = np.zeros(1, dtype=found.dtype)
    return np.lib.stride_tricks.as_strided(
        base, shape=found.shape, strides=tuple(reversed(strides)), writeable=not found.readonly
    )


def is_stand_in(a: np.ndarray[Any, Any]) -> bool:
    """Whether ``a`` may be a :func:`stand_in` (more than one element over memory of one):
    for asserting that none reaches a reader."""
    owner: object = a
    while getattr(owner, "base", None) is not None:  # as_strided's view: through its wrapper
        owner = owner.base  # type: ignore[attr-defined]
    return a.size > 1 and isinstance(owner, np.ndarray) and owner.size == 1


ARRAY_INTERFACE = "__array_interface__"


def host_view(value: object) -> int | None:
    """The data address ``value``'s ``__array_interface__`` (numpy's: host memory) gives,
    or None without one (a CuPy or PyTorch CUDA array: memory the CPU cannot read).
    Never raises."""
    try:
        found = getattr(value, ARRAY_INTERFACE, None)
        data = found.get("data") if isinstance(found, Mapping) else None
        if isinstance(data, tuple) and data and isinstance(data[0], int):
            return int(data[0])
    except Exception:
        return None
    return None


def emulated(found: DeviceArray, value: object) -> ArgumentError | None:
    """The error for device array ``found`` (given as ``value``) in an emulated kernel,
    which runs on the CPU: None when it is host memory seen as device memory (its
    ``__array_interface__`` gives the same address) or has no elements."""
    if not found.size or host_view(value) == found.ptr:
        return None
    return ArgumentError(
        f"{found.name}: a device array ({type(value).__name__}) at 0x{found.ptr:x}, memory "
        "the CPU cannot read (it has no __array_interface__ at that address); emulated "
        "kernels run on the CPU: pass a numpy array, or compile without emulate=True to run "
        "on the GPU"
    )


class Placement(NamedTuple):
    """Where CUDA finds a pointer (``cudaPointerGetAttributes``) and which GPU the calling
    thread uses (``cudaGetDevice``)."""

    memory: int
    """``cudaMemoryType``: 0 pageable host memory (or none CUDA knows), 1 page-locked host
    memory, 2 device memory, 3 managed memory."""
    device: int
    """The device the memory belongs to."""
    current: int
    """The current device: the one spf's launches run on."""
    mapped: bool
    """Whether kernels can address it (its ``devicePointer`` is not null)."""


HOST_MEMORY = 0
PINNED_MEMORY = 1
DEVICE_MEMORY = 2
MANAGED_MEMORY = 3


def misplaced(found: DeviceArray, where: Placement) -> ArgumentError | None:
    """The error for device array ``found`` at ``where`` when a kernel on the current GPU
    cannot read it (a launch on it would fault and leave the CUDA context unusable): host
    memory, or device memory of another GPU. None for device memory of the current GPU,
    managed memory, and page-locked host memory mapped into the device's address space."""
    name = found.name
    if not where.mapped or where.memory == HOST_MEMORY:
        return ArgumentError(
            f"{name}: its __cuda_array_interface__ gives 0x{found.ptr:x}, which is not GPU "
            "memory (CUDA knows it as host memory, or not at all: freed?); kernels on the GPU "
            f"cannot read it: pass {name} as a numpy array (spf copies it), or copy it to the "
            f"GPU first (cupy.asarray({name}), torch.as_tensor({name}, device='cuda'))"
        )
    if where.memory == DEVICE_MEMORY and where.device != where.current:
        d, c = where.device, where.current
        return ArgumentError(
            f"{name}: device memory of GPU {d}, but the kernel runs on GPU {c} (the current "
            f"device); call it with GPU {d} current (with cupy.cuda.Device({d}): ..., "
            f"torch.cuda.set_device({d})), or copy {name} to GPU {c}"
        )
    return None


def overlaps(
    names: Sequence[str],
    ranges: Sequence[tuple[int, int]],
    written: Sequence[bool],
    device: Sequence[bool],
) -> ArgumentError | None:
    """The error for a written argument whose bytes ``[start, end)`` share memory with
    another argument's, where one of the two is a device array (numpy's own arrays are
    compared by the binder); None when none does. Device and host memory share one
    virtual address space (CUDA's unified addressing), so address ranges decide."""
    for i, (start, end) in enumerate(ranges):
        if not written[i] or start == end:
            continue
        for j, (other_start, other_end) in enumerate(ranges):
            if j == i or not (device[i] or device[j]) or other_start == other_end:
                continue
            if start < other_end and other_start < end:
                return ArgumentError(
                    f"{names[i]} and {names[j]} share memory, but {names[i]} is written and "
                    "the CUDA kernel's arguments are restrict; pass a copy of one"
                )
    return None


__all__ = [
    "DEVICE_MEMORY",
    "HOST_MEMORY",
    "MANAGED_MEMORY",
    "PINNED_MEMORY",
    "DeviceArray",
    "Placement",
    "c_contiguous",
    "emulated",
    "has_interface",
    "host_view",
    "interface",
    "is_stand_in",
    "misplaced",
    "overlaps",
    "read",
    "stand_in",
]
