"""CUDA's fixed limits that the generated ``.cu`` checks, and the emulator's fiber stack.

* Local memory (``local``/``stack`` buffers a kernel declares): at most 512 KiB per thread
  (the CUDA C++ Programming Guide's table of compute capabilities). nvcc builds a larger
  frame and the launch fails on the GPU; spf refuses it at codegen, naming the buffer.
* Static ``__shared__`` arrays: at most 48 KiB per block (ptxas refuses more: "uses too
  much shared data (0xc008 bytes, 0xc000 max)"); refused at codegen too.
* ``__constant__`` arrays (``constant`` buffers): at most 64 KiB in all (ptxas: "File uses
  too much global constant data (0x13880 bytes, 0x10000 max)"); refused at codegen, naming
  the buffer that goes over (:func:`check_constant_memory`).
* Grid: at most 2^31 - 1 blocks on x and 65535 on y and z. The extents are known only at
  run time, so the host code checks them before each launch (:func:`grid_checks`) and
  names the block loop and its count.
* Block: at most 1024 threads, 1024 on x and y and 64 on z; checked by the host code before
  each launch too (:func:`block_checks`), naming the thread loops (a launch CUDA refuses says
  only "invalid configuration argument", and a count above 2^32 would wrap in ``dim3``).

The emulator (``spf_cuda_emu.h``) runs each CUDA thread on a fiber with its own stack of
``SPF_EMU_STACK`` bytes (256 KiB unless defined); a unit whose kernels declare more local
memory than fits records it (``TranslationUnit.local_bytes``) and its emulated build
defines a larger stack (:func:`emulator_stack`), which is part of the build's cache key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.clang import NUMPY_OF_C
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import BufferDecl

LOCAL_BYTES = 512 * 1024
"""CUDA's local memory per thread."""
STATIC_SHARED_BYTES = 48 * 1024
"""CUDA's static ``__shared__`` memory per block."""
CONSTANT_BYTES = 64 * 1024
"""CUDA's ``__constant__`` memory per translation unit."""
GRID_BLOCKS = (2**31 - 1, 65535, 65535)
"""The most blocks on each grid dimension (x, y, z)."""
BLOCK_THREADS = (1024, 1024, 64)
"""The most threads on each block dimension (x, y, z)."""
THREADS_PER_BLOCK = 1024
"""The most threads in one block."""
EMULATOR_STACK = 256 * 1024
"""The emulator's fiber stack when the unit defines none (``spf_cuda_emu.h``)."""
STACK_MARGIN = 64 * 1024
"""Stack a fiber needs beyond its local arrays: the kernel's frame, the launch's calls."""

_ITEM_BYTES = {"bool": 1, "char": 1, "long": 8, "int": 4, "float": 4, "double": 8}


def item_bytes(ctype: str) -> int:
    """The size of one element of C type ``ctype`` (a data-space element type)."""
    if ctype in _ITEM_BYTES:
        return _ITEM_BYTES[ctype]
    digits = "".join(ch for ch in ctype if ch.isdigit())
    if ctype in NUMPY_OF_C and digits:  # int8_t .. uint64_t
        return int(digits) // 8
    return 8  # an unknown type: assume the widest scalar


def buffer_bytes(b: BufferDecl, count: int) -> int:
    """The bytes of ``count`` elements of ``b``."""
    return count * item_bytes(b.ctype)


class KernelMemory:
    """The local and static shared memory one kernel declares, checked against CUDA's
    limits as each buffer is declared (the buffer that goes over is named)."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        self.local = 0
        self.shared = 0
        self._local_names: list[str] = []
        self._shared_names: list[str] = []

    def declare(self, b: BufferDecl, count: int) -> None:
        """``b``, of ``count`` elements, is declared in the kernel (local, stack or shared)."""
        size = buffer_bytes(b, count)
        shared = b.scope == "shared"
        names = self._shared_names if shared else self._local_names
        names.append(b.name)
        if shared:
            self.shared += size
            total, limit, what = self.shared, STATIC_SHARED_BYTES, "static shared memory per block"
            hint = "use smaller tiles, or a global buffer"
        else:
            self.local += size
            total, limit, what = self.local, LOCAL_BYTES, "local memory per thread"
            hint = "make it smaller, or use a shared or global buffer"
        if total <= limit:
            return
        others = [n for n in names[:-1] if n != b.name]
        with_others = f" (with {', '.join(repr(n) for n in others)})" if others else ""
        raise CodegenError(
            f"buffer {b.name!r} ({b.scope} memory, {count} x {b.ctype} = {size} bytes) makes "
            f"kernel {self.kernel} declare {total} bytes of {what}{with_others}; CUDA allows "
            f"at most {limit} ({limit // 1024} KiB): {hint}"
        )


def check_constant_memory(buffers: list[tuple[BufferDecl, int]]) -> None:
    """Refuse ``constant`` buffers (each with its element count) of more than 64 KiB in all,
    naming the buffer that goes over."""
    total = 0
    for k, (b, count) in enumerate(buffers):
        size = buffer_bytes(b, count)
        total += size
        if total > CONSTANT_BYTES:
            others = [repr(o.name) for o, _ in buffers[:k]]
            with_others = f" (with {', '.join(others)})" if others else ""
            raise CodegenError(
                f"buffer {b.name!r} (constant memory, {count} x {b.ctype} = {size} bytes) makes "
                f"{total} bytes of __constant__ memory{with_others}; CUDA allows at most "
                f"{CONSTANT_BYTES} ({CONSTANT_BYTES // 1024} KiB): use a global buffer"
            )


def emulator_stack(local_bytes: int) -> int:
    """The fiber stack (bytes) the emulator needs for kernels declaring ``local_bytes`` of
    local memory per thread; 0 when its default does."""
    need = local_bytes + STACK_MARGIN
    if need <= EMULATOR_STACK:
        return 0
    return -(-need // 4096) * 4096


def grid_checks(kernel: str, grid: list[tuple[str, str]]) -> list[str]:
    """Host C lines that refuse a launch of ``kernel`` whose grid is too large: ``grid``
    gives, per dimension (x first), the block loops and the variable holding the count."""
    lines = []
    for dim, ((loops, var), most) in enumerate(zip(grid, GRID_BLOCKS, strict=False)):
        axis = "xyz"[dim]
        hint = (
            "make it the innermost gpu block loop (grid dimension x takes 2147483647) or "
            "use larger tiles"
            if dim
            else "use larger tiles"
        )
        message = (
            f"kernel {kernel}: gpu block loop {loops} has %lld blocks on grid dimension "
            f"{axis}, more than CUDA's {most}; {hint}"
        )
        lines.append(
            f'if ({var} > {most}) {{ snprintf(spf_message, sizeof spf_message, "{message}", '
            f"(long long){var}); spf_status = 1; goto spf_done; }}"
        )
    return lines


def block_checks(kernel: str, block: list[tuple[str, str]]) -> list[str]:
    """Host C lines that refuse a launch of ``kernel`` whose blocks have more threads than
    CUDA allows: ``block`` gives, per dimension (x first), the thread loops and the variable
    holding their count."""
    if not block:
        return []
    too_many = [f"{var} > {most}" for (_, var), most in zip(block, BLOCK_THREADS, strict=False)]
    product = " * ".join(var for _, var in block)
    shape = " x ".join("%lld" for _ in block)
    loops = ", ".join(f"{loops} on {'xyz'[dim]}" for dim, (loops, _) in enumerate(block))
    message = (
        f"kernel {kernel}: gpu thread loops {loops} make blocks of {shape} threads; CUDA "
        f"allows at most {THREADS_PER_BLOCK} threads per block ({BLOCK_THREADS[0]} on x and y, "
        f"{BLOCK_THREADS[2]} on z): use smaller tiles"
    )
    values = ", ".join(f"(long long){var}" for _, var in block)
    if len(block) > 1:
        too_many.append(f"{product} > {THREADS_PER_BLOCK}")
    return [
        f"if ({' || '.join(too_many)}) {{ "
        f'snprintf(spf_message, sizeof spf_message, "{message}", {values}); spf_status = 1; '
        "goto spf_done; }"
    ]


__all__ = [
    "BLOCK_THREADS",
    "CONSTANT_BYTES",
    "EMULATOR_STACK",
    "GRID_BLOCKS",
    "LOCAL_BYTES",
    "STACK_MARGIN",
    "STATIC_SHARED_BYTES",
    "THREADS_PER_BLOCK",
    "KernelMemory",
    "block_checks",
    "buffer_bytes",
    "check_constant_memory",
    "emulator_stack",
    "grid_checks",
    "item_bytes",
]
