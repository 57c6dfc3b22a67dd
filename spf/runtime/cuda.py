"""Running generated CUDA: ``compile(target="cuda")`` (docs/backends/c.md).

One ``.cu`` text (:mod:`spf.codegen.cuda`), three ways to run it, one call convention (the C
kernels': numpy arrays and parameters by name, outputs written in place; any array argument
no host statement uses may instead be a device array, an object with
``__cuda_array_interface__``, used in place: :mod:`spf.runtime.device_arrays`):

* ``emulate=True``: the text is compiled as C++ by g++ behind ``spf_cuda_emu.h`` (kernels
  run on the CPU, one fiber per CUDA thread, ``__syncthreads`` a barrier of the block's
  fibers, blocks spread over OpenMP threads) and its host function is called through cffi.
* ``gpu="nvcc"`` (the default when ``nvcc`` is on ``PATH``): the text is built by
  ``nvcc -shared -Xcompiler -fPIC`` and its host function runs on the CUDA runtime.
* ``gpu="pycuda"`` / ``gpu="cupy"`` (default without nvcc: pycuda where it imports, else
  CuPy; or any object implementing :class:`~spf.runtime.gpu.GpuRuntime`): the device part
  is compiled by the GPU runtime (:mod:`spf.runtime.gpu`; NVRTC for CuPy), and the host
  part by g++ behind ``spf_cuda_bridge.h``, whose ``cudaMalloc``, ``cudaMemcpy`` and launch
  macro call back into that runtime.

The host function is ``int name(<signature>, const int64_t *spf_count, const unsigned char
*spf_on_device)``: ``spf_count`` holds the element count of each array argument, so device
buffers have the arrays' real sizes, and ``spf_on_device`` flags the arguments passed as
device memory; a non-zero return raises :class:`~spf.errors.SpfError` with
``name_spf_error()``. With ``check=True``, device index arrays are copied to the host for
the checks on every call (through ``name_spf_to_host``); ``check=False`` copies nothing.
Before the call each device array is checked for memory the kernel can use
(:meth:`CudaKernel._usable`): host memory seen as device memory when emulated; memory of the
current GPU (``name_spf_where`` under nvcc, the runtime's ``placement`` for CuPy); none
through pycuda, whose context is its own.
:func:`build_nvcc` compiles a ``.cu`` with nvcc, cached by content hash like C builds.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import cffi
import numpy as np

from spf.codegen.cuda_limits import emulator_stack
from spf.errors import ArgumentError, CodegenError, CompileError, ToolchainError
from spf.runtime import device_arrays
from spf.runtime.binding import Binder
from spf.runtime.build import BuildResult, build
from spf.runtime.cache import CacheEntry, atomic_write, cache_key, remove_quietly, resolve_cache_dir

if TYPE_CHECKING:
    import os
    from pathlib import Path

    from spf.codegen.signature import Arg, Signature
    from spf.codegen.unit import TranslationUnit
    from spf.runtime.device_arrays import DeviceArray
    from spf.runtime.gpu import GpuRuntime

_WHY = {
    "h": "statements that run on the host read or write it",
    "b": "host code (loop bounds / grid size) reads it",
    "x": "a Layer IV copy (host_to_device / device_to_host) names it",
    "m": "it lives in constant, shared or local memory",
}
"""Why an argument must be a host array (the host function's codes, spf.codegen.cuda)."""
_HOW = {
    "h": ", or map those statements to the GPU too (gpu / tile_gpu)",
    "x": ", or leave out the explicit copies (the data is already on the device)",
}
EMULATOR_HEADER = "spf_cuda_emu.h"
BRIDGE_HEADER = "spf_cuda_bridge.h"
NVCC_FLAGS = ("-O3", "-shared", "-Xcompiler", "-fPIC")
_BRIDGE_CDEF = """
struct spf_bridge {
  int (*malloc)(void **ptr, size_t bytes);
  int (*free)(void *ptr);
  int (*memcpy)(void *dst, const void *src, size_t bytes, int kind);
  int (*to_symbol)(const char *symbol, const void *src, size_t bytes, size_t offset);
  int (*launch)(const char *kernel, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, int nargs, void **args);
  int (*synchronize)(void);
};
void spf_cuda_set_bridge(const struct spf_bridge *table);
"""


def header(name: str) -> str:
    """The text of one of spf's CUDA headers (shipped inside the package)."""
    return resources.files("spf.runtime").joinpath(name).read_text(encoding="utf-8")


def emulation_source(source: str, name: str, bridge: bool = False, local_bytes: int = 0) -> str:
    """``source`` behind the emulation (and bridge) header: what g++ compiles.
    ``local_bytes``: the local memory one thread of its kernels declares (the unit's
    record); the emulator's fiber stacks are made large enough for it."""
    parts = []
    stack = emulator_stack(local_bytes)
    if stack and not bridge:  # behind the bridge the kernels run on the GPU
        parts.append(f"#define SPF_EMU_STACK {stack}")
    if bridge:
        parts.append("#define SPF_CUDA_BRIDGE 1")
    parts.append(header(EMULATOR_HEADER))
    if bridge:
        parts.append(header(BRIDGE_HEADER))
    parts.append(f'#line 1 "{name}.cu"')
    parts.append(source)
    return "\n".join(parts)


def host_prototype(signature: Signature) -> str:
    """``int name(<args>, const int64_t *spf_count, const unsigned char *spf_on_device)``
    (no restrict: cffi declares it)."""
    decls = []
    for a in signature.args:
        if a.kind == "param":
            decls.append(f"{a.ctype} {a.name}")
        else:
            decls.append(f"{'const ' if a.const else ''}{a.ctype} *{a.name}")
    decls += ["const int64_t *spf_count", "const unsigned char *spf_on_device"]
    return f"int {signature.function}({', '.join(decls)})"


# ----------------------------------------------------------------------------- nvcc


def nvcc_available() -> bool:
    return shutil.which("nvcc") is not None


def _nvcc_version(nvcc: str) -> str:
    try:
        done = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        raise CompileError(
            f"cannot run {nvcc!r}: {err}; install the CUDA toolkit or pass emulate=True",
            command=f"{nvcc} --version",
        ) from None
    return done.stdout + done.stderr


_ARCH_FLAGS: dict[str, tuple[str, ...]] = {}


def gpu_arch_flags(nvcc: str = "nvcc") -> tuple[str, ...]:
    """``-gencode`` flags for this machine's GPUs (machine code for each one's compute
    capability, and its PTX), when ``nvidia-smi`` names them and ``nvcc`` can target them;
    ``()`` otherwise (nvcc's default target, whose PTX the driver compiles at the first
    launch: ~30 ms on an H200, against ~2 ms with the GPU's own machine code). Asked once per
    process."""
    if nvcc in _ARCH_FLAGS:
        return _ARCH_FLAGS[nvcc]
    flags: tuple[str, ...] = ()
    smi: subprocess.CompletedProcess[str] | None
    known: subprocess.CompletedProcess[str] | None
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        known = subprocess.run(
            [nvcc, "--list-gpu-arch"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        smi = known = None
    if smi is not None and known is not None and smi.returncode == 0 and known.returncode == 0:
        targets = set(known.stdout.split())
        caps = sorted({line.strip().replace(".", "") for line in smi.stdout.splitlines()})
        if caps and all(c.isdigit() and f"compute_{c}" in targets for c in caps):
            flags = tuple(f"-gencode=arch=compute_{c},code=[sm_{c},compute_{c}]" for c in caps)
    _ARCH_FLAGS[nvcc] = flags
    return flags


def build_nvcc(
    source: str,
    *,
    name: str,
    flags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    nvcc: str = "nvcc",
) -> BuildResult:
    """Compile ``source`` with ``nvcc -O3 -shared -Xcompiler -fPIC`` and this machine's GPU
    targets (:func:`gpu_arch_flags`), or with ``flags``, into a shared library, cached on disk
    by a hash of nvcc's version, the flags and the source."""
    argv = [nvcc, *((*NVCC_FLAGS, *gpu_arch_flags(nvcc)) if flags is None else flags)]
    key = cache_key(_nvcc_version(nvcc), argv, source)
    root = resolve_cache_dir(cache_dir)
    entry = CacheEntry(root, name, key, ".cu")
    canonical = shlex.join([*argv, "-o", str(entry.library), str(entry.source)])
    if entry.trusted(source):
        return BuildResult(entry.library, canonical, entry.source, entry.read_log(), True)
    try:
        entry.directory.mkdir(parents=True, exist_ok=True)
        atomic_write(entry.source, source)
        tmp = entry.temp_path(".so")
    except OSError as err:
        raise CompileError(
            f"cannot write to the spf cache directory {root}: {err}; pass cache_dir=... or "
            "set $SPF_CACHE_DIR to a writable directory"
        ) from None
    cmd = [*argv, "-o", str(tmp), str(entry.source)]
    try:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        except OSError as err:
            raise CompileError(
                f"cannot run {nvcc!r}: {err}",
                command=shlex.join(cmd),
                source_path=str(entry.source),
            ) from None
        output = done.stderr + done.stdout
        with contextlib.suppress(OSError):
            atomic_write(entry.log, output)
        if done.returncode != 0:
            raise CompileError(
                f"nvcc failed (exit status {done.returncode}) building {name!r}",
                command=shlex.join(cmd),
                source_path=str(entry.source),
                stderr=output,
            )
        entry.install(tmp)
    finally:
        remove_quietly(tmp)
    return BuildResult(entry.library, canonical, entry.source, output, False)


# ----------------------------------------------------------------------------- kernels

_LOADED: dict[tuple[str, str], tuple[cffi.FFI, Any]] = {}
"""Libraries stay loaded for the life of the process (as C kernels do)."""


def _load(path: Path, cdef: str, command: str) -> tuple[cffi.FFI, Any]:
    key = (str(path), cdef)
    if key not in _LOADED:
        ffi = cffi.FFI()
        try:
            ffi.cdef(cdef)
        except cffi.CDefError as err:
            raise CodegenError(f"cannot declare the CUDA host function to cffi: {err}") from None
        try:
            lib = ffi.dlopen(str(path))
        except OSError as err:
            raise CompileError(f"cannot load {path}: {err}", command=command) from None
        _LOADED[key] = (ffi, lib)
    return _LOADED[key]


class CudaKernel:
    """A compiled CUDA computation: ``kernel(B=B, A=A, N=n, check=True)``.

    Attributes as :class:`~spf.runtime.kernel.Kernel` (``name``, ``signature``, ``source``
    (the ``.cu`` text), ``path``, ``command``, ``arguments``, ``compiler_output``,
    ``preconditions``), plus ``mode``: ``"emulate"``, ``"nvcc"``, ``"pycuda"`` or ``"cupy"``,
    and :attr:`last_threads`.
    """

    def __init__(
        self,
        signature: Signature,
        source: str,
        built: BuildResult,
        mode: str,
        gpu: GpuRuntime | None = None,
        module: Any = None,
    ) -> None:
        self.source = source
        self.name = signature.function
        self.signature = host_prototype(signature)
        self.path = built.path
        self.command = built.command
        self.compiler_output = built.stderr
        self.mode = mode
        self.arguments: tuple[Arg, ...] = signature.args
        self.preconditions = signature.preconditions
        for a in signature.args:
            if a.name == "check":
                raise ArgumentError(
                    "an argument named 'check' clashes with kernel(check=...); rename it"
                )
        cdef = (
            f"{self.signature};\nconst char *{self.name}_spf_error(void);\n"
            f"const char *{self.name}_spf_device_args(void);\n"
            f"int {self.name}_spf_to_host(void *dst, const void *src, size_t bytes);\n"
            f"int {self.name}_spf_where(const void *ptr, int *where);\n"
        )
        if gpu is not None:
            cdef += _BRIDGE_CDEF
        if mode == "emulate":
            cdef += "int spf_emu_take_threads(void);\n"
        self._ffi, self._lib = _load(self.path, cdef, self.command)
        self._fn = getattr(self._lib, self.name)
        self._error_fn = getattr(self._lib, f"{self.name}_spf_error")
        self._to_host_fn = getattr(self._lib, f"{self.name}_spf_to_host")
        self._where_fn = getattr(self._lib, f"{self.name}_spf_where") if mode == "nvcc" else None
        codes = self._ffi.string(getattr(self._lib, f"{self.name}_spf_device_args")())
        self._device_codes: str = codes.decode()
        """Per array argument: ``d`` when it may be a device array (spf.codegen.cuda)."""
        self._stand_ins: dict[tuple[Any, ...], np.ndarray[Any, Any]] = {}
        self._binder = Binder(signature)
        self._ctypes = tuple(self._ffi.typeof(f"{d.arg.ctype}[]") for d in self._binder.data)
        self._pointers = tuple(self._ffi.typeof(f"{d.arg.ctype} *") for d in self._binder.data)
        self._gpu = gpu
        self._module = module
        self._failure: BaseException | None = None
        self._table: Any = None
        self._callbacks: list[Any] = []
        if gpu is not None:
            self._table = self._bridge_table(gpu)
        self._take_threads: Any = self._lib.spf_emu_take_threads if mode == "emulate" else None
        self._last_threads: int | None = None

    def __repr__(self) -> str:
        return f"<CudaKernel {self.signature} ({self.mode}) from {self.path}>"

    @property
    def last_threads(self) -> int | None:
        """The CPU threads the last call ran on: emulated (``emulate=True``), the most OpenMP
        threads one of its launches spread its blocks over (at most one per block; 1 when built
        with ``openmp=False`` or when nothing was launched); on a GPU, 1 (the host thread that
        copies and launches: the GPU's threads are the launch configuration, ``tile_gpu``);
        ``None`` before the first call."""
        return self._last_threads

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None:
        """Run the host function on arrays bound by name; outputs are written in place."""
        if positional:
            raise self._binder.positional(len(positional))
        ffi = self._ffi
        self._failure = None
        if self._table is not None:
            self._lib.spf_cuda_set_bridge(self._table)
        devices = self._devices(args)
        if devices:
            params, arrays = self._bind_devices(args, devices, check)
        else:
            params, arrays = self._binder.bind(args, check)
        counts = np.array([a.size for a in arrays], dtype=np.int64)
        on_device = np.zeros(len(arrays), dtype=np.uint8)
        bound = []
        data = self._binder.data
        for k, (t, d, a) in enumerate(zip(self._ctypes, data, arrays, strict=True)):
            found = devices.get(d.name)
            if found is None:
                bound.append(ffi.from_buffer(t, a))
            else:  # the device memory as given: the host function neither copies nor frees it
                bound.append(ffi.cast(self._pointers[k], found.ptr))
                on_device[k] = 1
        it, cargs = iter(bound), []
        for a in self.arguments:
            cargs.append(params[a.name] if a.kind == "param" else next(it))
        cargs.append(ffi.from_buffer("int64_t[]", counts))
        cargs.append(ffi.from_buffer("unsigned char[]", on_device))
        try:
            status = self._fn(*cargs)
        finally:
            take = self._take_threads
            self._last_threads = max(1, int(take())) if take is not None else 1
        if status != 0:
            message = ffi.string(self._error_fn()).decode(errors="replace")
            failure, self._failure = self._failure, None
            raise ToolchainError(
                f"CUDA kernel {self.name} ({self.mode}) failed: {message}"
            ) from failure

    # ------------------------------------------------------------------ device arrays

    def _devices(self, args: dict[str, object]) -> dict[str, DeviceArray]:
        """The arguments given as device arrays (``__cuda_array_interface__``), read and
        checked for what the interface alone decides; refused where the host function
        needs the argument on the host."""
        found: dict[str, DeviceArray] = {}
        for k, d in enumerate(self._binder.data):
            value = args.get(d.name)
            iface = device_arrays.interface(d.name, value)
            if iface is None:
                continue
            code = self._device_codes[k] if k < len(self._device_codes) else "h"
            if code != "d":
                raise ArgumentError(
                    f"{d.name}: a device array ({type(value).__name__}), but {_WHY[code]} in "
                    f"CUDA kernel {self.name}, so it must be a numpy array; pass "
                    f"{d.name} on the host (e.g. cupy.asnumpy({d.name}), "
                    f"{d.name}.cpu().numpy()){_HOW.get(code, '')}"
                )
            found[d.name] = device_arrays.read(d.name, value, iface)
            self._usable(found[d.name], value)
        return found

    def _usable(self, found: DeviceArray, value: object) -> None:
        """Refuse device array ``found`` (given as ``value``) when this kernel cannot use
        its memory: an emulated kernel runs on the CPU (host memory seen as device memory
        only); pycuda launches in a context of its own; on a GPU (nvcc, or a runtime with
        ``placement``: CuPy) the memory must be readable by kernels on the current GPU,
        else the launch faults and leaves the CUDA context unusable for the process."""
        if self.mode == "emulate":
            refused = device_arrays.emulated(found, value)
        elif self.mode == "pycuda":
            refused = ArgumentError(
                f"{found.name}: a device array ({type(value).__name__}), but this kernel runs "
                "through pycuda, whose context (pycuda.autoinit) is not the one CuPy or "
                "PyTorch allocate in, so their device pointers are not valid in it; pass a "
                "numpy array, or compile with gpu='nvcc' or gpu='cupy'"
            )
        elif not found.size:
            return  # nothing is read (CuPy gives empty arrays a null pointer)
        else:
            where = self._placement(found)
            refused = None if where is None else device_arrays.misplaced(found, where)
        if refused is not None:
            raise refused

    def _placement(self, found: DeviceArray) -> device_arrays.Placement | None:
        """Where CUDA finds ``found``'s memory: asked by the host code's
        ``name_spf_where`` (nvcc) or the GPU runtime's ``placement`` (CuPy); None for a
        runtime that cannot tell (its memory is its own)."""
        failed = (
            f"CUDA kernel {self.name} ({self.mode}): cannot ask CUDA where {found.name}'s "
            "memory is ({}); is a GPU present? Pass numpy arrays, or emulate=True without one"
        )
        if self._where_fn is not None:
            ffi = self._ffi
            where = ffi.new("int[4]")
            if self._where_fn(ffi.cast("void *", found.ptr), where) != 0:
                message = ffi.string(self._error_fn()).decode(errors="replace")
                raise ToolchainError(failed.format(message))
            return device_arrays.Placement(where[0], where[1], where[2], bool(where[3]))
        ask = getattr(self._gpu, "placement", None)
        if ask is None:
            return None
        try:
            return device_arrays.Placement(*ask(found.ptr))
        except Exception as err:  # the runtime's own error (CuPy's CUDARuntimeError)
            raise ToolchainError(failed.format(f"{type(err).__name__}: {err}")) from err

    def _bind_devices(
        self, args: dict[str, object], devices: dict[str, DeviceArray], check: bool
    ) -> tuple[dict[str, Any], list[Any]]:
        """Bind a call with device arrays: the binder checks dtypes and shapes on stand-ins
        (:func:`spf.runtime.device_arrays.stand_in`); with ``check=True`` the index arrays
        are copied to the host, on every call, for the facts and range checks, and device
        arrays are checked for overlap by address."""
        if check is not True and check is not False:
            raise ArgumentError(f"check must be True or False, got {check!r}")
        binder = self._binder
        given: dict[str, object] = dict(args)
        stand_ins = self._stand_ins
        for d in binder.data:
            found = devices.get(d.name)
            if found is not None:
                look = (found.dtype, found.shape, found.readonly)
                if look not in stand_ins:  # they hold no data: one per look will do
                    if len(stand_ins) > 64:
                        stand_ins.clear()
                    stand_ins[look] = device_arrays.stand_in(found)
                given[d.name] = stand_ins[look]
        params, arrays = binder.bind(given, False)
        if not check:
            return params, arrays
        skip = frozenset(k for k, d in enumerate(binder.data) if d.name in devices)
        checked = list(arrays)
        for k, d in enumerate(binder.data):
            found = devices.get(d.name)
            if found is not None and d.is_uf:
                checked[k] = self._to_host(found).reshape(arrays[k].shape)
        # the check reads index arrays: no device one may still be a stand-in (one element)
        assert not any(device_arrays.is_stand_in(checked[k]) for k in skip if binder.data[k].is_uf)
        binder.check(checked, params, skip_overlap=skip)
        ranges = []
        for d, a in zip(binder.data, arrays, strict=True):
            found = devices.get(d.name)
            start = found.ptr if found is not None else int(a.ctypes.data)
            ranges.append((start, start + (found.nbytes if found is not None else a.nbytes)))
        clash = device_arrays.overlaps(
            [d.name for d in binder.data],
            ranges,
            [d.writes for d in binder.data],
            [d.name in devices for d in binder.data],
        )
        if clash is not None:
            raise clash
        return params, arrays

    def _to_host(self, found: DeviceArray) -> np.ndarray[Any, Any]:
        """A host copy of device array ``found`` (through the host code's cudaMemcpy)."""
        out = np.empty(found.shape, dtype=found.dtype)
        if found.nbytes:
            ffi = self._ffi
            dst = ffi.from_buffer("char[]", out)
            status = self._to_host_fn(dst, ffi.cast("void *", found.ptr), found.nbytes)
            if status != 0:
                failure, self._failure = self._failure, None
                raise ToolchainError(
                    f"CUDA kernel {self.name} ({self.mode}): copying {found.name} to the host "
                    "for check=True failed; pass check=False to skip the checks"
                ) from failure
        return out

    # ------------------------------------------------------------------ GPU bridge

    def _bridge_table(self, gpu: GpuRuntime) -> Any:
        ffi = self._ffi
        module = self._module

        def guard(fn: Any) -> Any:
            def call(*a: Any) -> int:
                try:
                    fn(*a)
                except Exception as err:
                    self._failure = err
                    return 1
                return 0

            return call

        def address(p: Any) -> int:
            return int(ffi.cast("uintptr_t", p))

        def malloc(ptr: Any, nbytes: int) -> None:
            ptr[0] = ffi.cast("void *", gpu.malloc(int(nbytes)))

        def launch(kernel: Any, *dims_and_args: Any) -> None:
            gx, gy, gz, bx, by, bz, nargs, argv = dims_and_args
            values = [int(ffi.cast("uint64_t *", argv[k])[0]) for k in range(nargs)]
            from spf.runtime.gpu import pack

            gpu.launch(
                module,
                ffi.string(kernel).decode(),
                (int(gx), int(gy), int(gz)),
                (int(bx), int(by), int(bz)),
                pack(values),
                address(argv),
            )

        table = ffi.new("struct spf_bridge *")
        specs: list[tuple[str, str, Any]] = [
            ("malloc", "int(void **, size_t)", malloc),
            ("free", "int(void *)", lambda p: gpu.free(address(p))),
            (
                "memcpy",
                "int(void *, const void *, size_t, int)",
                lambda d, s, n, k: gpu.copy(address(d), address(s), int(n), int(k)),
            ),
            (
                "to_symbol",
                "int(const char *, const void *, size_t, size_t)",
                lambda sym, s, n, off: gpu.to_symbol(
                    module, ffi.string(sym).decode(), address(s), int(n), int(off)
                ),
            ),
            (
                "launch",
                "int(const char *, unsigned int, unsigned int, unsigned int, unsigned int, "
                "unsigned int, unsigned int, int, void **)",
                launch,
            ),
            ("synchronize", "int(void)", lambda: gpu.synchronize()),
        ]
        for field, ctype, fn in specs:
            cb = ffi.callback(ctype, guard(fn))
            self._callbacks.append(cb)
            setattr(table, field, cb)
        return table


def compile_kernel(
    source: str | TranslationUnit,
    signature: Signature,
    name: str,
    *,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    emulate: bool = False,
    gpu: str | GpuRuntime | None = None,
    nvcc_flags: Sequence[str] | None = None,
    **options: Any,
) -> CudaKernel:
    """Build ``source`` (a generated ``.cu``: its unit, or the text as it is for the
    emulator and nvcc, which find its kernels themselves) and load its host function.

    ``compile(target="cuda")`` runs on a GPU: through ``nvcc`` when it is on ``PATH``, else
    through pycuda or CuPy (``gpu="nvcc"``/``"pycuda"``/``"cupy"`` or a
    :class:`~spf.runtime.gpu.GpuRuntime` picks one); ``emulate=True`` runs the same text on
    the CPU instead (see the module docstring). ``openmp``/``cflags`` apply to g++ builds,
    ``nvcc_flags`` to nvcc builds."""
    if options:
        raise ArgumentError(
            f"compile(target='cuda'): unknown option(s) {', '.join(sorted(options))}; "
            "known: emulate, gpu, nvcc_flags, openmp, cflags, cache_dir"
        )
    if not isinstance(emulate, bool):
        raise ArgumentError(f"emulate must be True or False, got {emulate!r}")
    unit = source if not isinstance(source, str) else None
    source = source if isinstance(source, str) else source.source
    if emulate:
        if gpu is not None:
            raise ArgumentError("compile(target='cuda'): pass emulate=True or gpu=..., not both")
        built = build(
            emulation_source(source, name, local_bytes=0 if unit is None else unit.local_bytes),
            name=f"{name}_emu",
            openmp=openmp,
            cflags=cflags,
            cache_dir=cache_dir,
            compiler="g++",
            language="c++",
        )
        return CudaKernel(signature, source, built, "emulate")
    if gpu is None:
        gpu = "nvcc" if nvcc_available() else None
    if gpu == "nvcc":
        built = build_nvcc(source, name=name, flags=nvcc_flags, cache_dir=cache_dir)
        return CudaKernel(signature, source, built, "nvcc")
    from spf.runtime.gpu import runtime

    backend = gpu if gpu is not None and not isinstance(gpu, str) else runtime(gpu)
    if unit is None:
        raise ArgumentError(
            f"compile(target='cuda'): {backend.name} loads the kernels the generated unit "
            f"names; pass the TranslationUnit of {name!r} (spf.codegen.generate), not its text"
        )
    try:
        module = backend.load(source, unit.kernels)
    except Exception as err:
        raise CompileError(
            f"{backend.name} could not compile the kernels of {name!r}: {type(err).__name__}",
            command=f"{backend.name} module build",
            stderr=str(err),
        ) from None
    built = build(
        emulation_source(source, name, bridge=True),
        name=f"{name}_host",
        openmp=False,
        cflags=cflags,
        cache_dir=cache_dir,
        compiler="g++",
        language="c++",
    )
    return CudaKernel(signature, source, built, backend.name, backend, module)


__all__ = [
    "CudaKernel",
    "build_nvcc",
    "compile_kernel",
    "emulation_source",
    "gpu_arch_flags",
    "header",
    "host_prototype",
    "nvcc_available",
]
