"""C simulation of HLS kernels: build the Vitis-style C++ with g++ and call it like a C kernel.

``comp.compile(target="hls")`` generates the HLS source (:mod:`spf.codegen.hls`) and
:func:`compile_kernel` builds that same source as C++ (the HLS pragmas are unknown to g++
and ignored; everything else must compile cleanly)::

    g++ -std=c++17 -O2 -Werror -Wno-unknown-pragmas -fPIC -shared -Wall -Wextra -o K.so K.cpp -lm

cached by content hash like C kernels (:mod:`spf.runtime.cache`). The result is an
:class:`HlsKernel`, a :class:`~spf.runtime.kernel.Kernel` (same call convention: numpy arrays
bound by name, outputs written in place) that also refuses parameters outside the
``hls_bounds`` the source was generated for (its fixed-size local arrays hold no more).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from spf.errors import ArgumentError, CodegenError
from spf.runtime.build import build
from spf.runtime.kernel import Kernel

if TYPE_CHECKING:
    import os

    from spf.analysis.memo import HasIR
    from spf.codegen.signature import Signature
    from spf.codegen.unit import TranslationUnit
    from spf.ir import ComputationIR

DEFAULT_OPT_FLAGS = ("-O2",)
STRICT_FLAGS = ("-Werror", "-Wno-unknown-pragmas")
"""Always added: the C simulation must be warning-free, and only HLS pragmas are unknown."""


class HlsKernel(Kernel):
    """A C-simulation kernel; ``bounds`` are the ``hls_bounds`` its source was made for."""

    def __init__(
        self,
        signature: Signature,
        source: str | TranslationUnit,
        path: str | os.PathLike[str],
        command: str,
        *,
        compiler_output: str = "",
        bounds: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        from spf.codegen.hls import local_bytes

        super().__init__(signature, source, path, command, compiler_output=compiler_output)
        self.signature = signature.c_prototype(restrict=False)  # as the source has it
        self.bounds: dict[str, tuple[int, int]] = dict(bounds or {})
        self._stack = local_bytes(source) if isinstance(source, str) else source.local_bytes
        """The local arrays' bytes, on the stack of the thread that runs the C simulation
        (read from the declarations of a source given as text: 0 there segfaulted a 9.6 MB
        line buffer on the calling thread)."""

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None:
        if positional:
            raise self._binder.positional(len(positional))
        if self.bounds:
            params, _ = self._binder.bind(args, False)
            for name, (lo, hi) in sorted(self.bounds.items()):
                value = params[name]
                if not lo <= value <= hi:
                    raise ArgumentError(
                        f"{name}={value} is outside {lo}..{hi}, the hls_bounds the HLS kernel "
                        f"{self.name} was generated for (its local arrays and trip counts are "
                        f"sized by them); generate it again with hls_bounds={{'{name}': "
                        f"{max(value, hi)}}}"
                    )
        if self._stack <= STACK_SPARE:
            super().__call__(check=check, **args)
            return
        try:
            _on_a_stack(
                self._stack + STACK_SPARE, lambda: Kernel.__call__(self, check=check, **args)
            )
        except _NoThreadError as err:
            raise MemoryError(
                f"kernel {self.name}: the C simulation needs a thread whose stack holds the "
                f"function's local arrays ({self._stack} bytes at the sizes of its hls_bounds "
                f"{self.bounds}), and none could be started ({err}); generate it with smaller "
                "hls_bounds"
            ) from None


STACK_SPARE = 2 << 20
"""Stack bytes a C simulation leaves the calling thread for its own: one whose local arrays
need more (an HLS function declares them at full size, ``hls_bounds``'s: a 9.6 MB local
segfaulted the process on the calling thread's 8 MiB stack) runs on a thread of its own,
with a stack that holds them."""


def _on_a_stack(size: int, call: Callable[[], None]) -> None:
    """``call()`` on a new thread with a stack of ``size`` bytes (rounded up to pages);
    its exception raised here."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as err:  # re-raised on the caller
            failed.append(err)

    with _STACK_LOCK:  # the size applies to threads created while it is set
        try:
            old = threading.stack_size(-(-size // 65536) * 65536)
        except (ValueError, OverflowError) as err:
            raise _NoThreadError(str(err)) from None
        try:
            worker = threading.Thread(target=run, name="spf-hls-csim")
            worker.start()
        except RuntimeError as err:  # "can't start new thread": no memory for its stack
            raise _NoThreadError(str(err)) from None
        finally:
            threading.stack_size(old)
    worker.join()
    if failed:
        raise failed[0]


class _NoThreadError(Exception):
    """No thread with the stack a C simulation needs could be started."""


_STACK_LOCK = threading.Lock()
"""Held while ``threading.stack_size`` is set for one new thread (process-wide)."""


def hls_flags(cflags: Sequence[str] | None = None) -> list[str]:
    """The flags passed to :func:`~spf.runtime.build.build` as ``cflags`` (which replace its
    optimisation flags): ``cflags`` (default ``-O2``) plus ``-Werror -Wno-unknown-pragmas``."""
    if cflags is None:
        opt = list(DEFAULT_OPT_FLAGS)
    elif isinstance(cflags, str):
        opt = cflags.split()
    else:
        opt = list(cflags)
    return [*opt, *STRICT_FLAGS]


def compile_kernel(
    source: str | TranslationUnit,
    signature: Signature,
    name: str,
    *,
    openmp: bool = False,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> HlsKernel:
    """Build the HLS ``source`` as C++ (C simulation) and load it.

    ``openmp`` is ignored (HLS code has no OpenMP). ``options`` may repeat the printer options
    ``hls_bounds`` / ``hls_tripcounts``; ``hls_bounds`` must then equal the bounds the source
    was generated for (a mismatch means it was generated without them): those of its record
    for a generated unit, those of its header line for a text.
    """
    from spf.codegen.hls import bounds_option, parse_bounds_header

    del openmp
    unit = source
    if isinstance(source, str):
        bounds = parse_bounds_header(source)
    else:
        bounds = {name: (lo, hi) for name, lo, hi in source.bounds}
        source = source.source
    params = {a.name for a in signature.args if a.kind == "param"}
    strangers = sorted(set(bounds) - params)
    if strangers:
        raise CodegenError(
            f"compile(target='hls'): the source of {name!r} records hls_bounds for "
            f"{', '.join(strangers)}, which {signature.function} does not take (its "
            f"parameters: {', '.join(sorted(params)) or 'none'}); generate the source again"
        )
    unknown = sorted(set(options) - {"hls_bounds", "hls_tripcounts"})
    if unknown:
        raise ArgumentError(
            f"compile(target='hls'): unknown option(s) {', '.join(unknown)}; "
            "known: hls_bounds, hls_tripcounts"
        )
    given = options.get("hls_bounds")
    if given is not None and bounds_option(given) != bounds:
        raise CodegenError(
            f"compile(target='hls'): hls_bounds={dict(given)!r} were not used to generate "
            f"the source of {name!r} (it records {bounds or 'no bounds'}); generate with "
            "spf.codegen.hls.generate(comp, hls_bounds=...) or "
            "spf.runtime.hls.compile_hls(comp, hls_bounds=...)"
        )
    built = build(
        source,
        name=name,
        openmp=False,
        cflags=hls_flags(cflags),
        cache_dir=cache_dir,
        language="c++",
    )
    return HlsKernel(
        signature,
        unit,
        built.path,
        built.command,
        compiler_output=built.stderr,
        bounds=bounds,
    )


def compile_hls(
    comp: ComputationIR | HasIR,
    name: str | None = None,
    check: bool = True,
    *,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    hls_bounds: Mapping[str, int | tuple[int, int]] | None = None,
    hls_tripcounts: Mapping[str, int | tuple[int, int]] | None = None,
) -> HlsKernel:
    """``comp.compile(target="hls")`` with the printer options ``hls_bounds`` and
    ``hls_tripcounts`` (see :mod:`spf.codegen.hls`; ``comp``: a computation or its IR)."""
    from spf.analysis.memo import as_ir
    from spf.codegen.hls import generate_unit
    from spf.codegen.program import c_function_name, signature

    ir = as_ir(comp, "spf.runtime.hls.compile_hls")
    fname = c_function_name(name or ir.name)
    unit = generate_unit(ir, fname, check, hls_bounds=hls_bounds, hls_tripcounts=hls_tripcounts)
    return compile_kernel(unit, signature(ir, fname), fname, cflags=cflags, cache_dir=cache_dir)


__all__ = ["HlsKernel", "compile_hls", "compile_kernel", "hls_flags"]
