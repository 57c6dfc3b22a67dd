"""A compiled C function bound to numpy arrays by name (docs/backends/c.md).

The library is loaded with cffi's ABI mode (``ffi.dlopen``); arrays are bound with
``ffi.from_buffer`` (a fraction of a microsecond each). Every call checks dtypes, ranks,
shapes, contiguity and writeability; ``check=True`` (the default) also checks the declared UF
facts (domain length, range, monotonicity) and that no written array overlaps another, so a
bad index array is an :class:`~spf.errors.ArgumentError`, not a segfault.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cffi

from spf.errors import ArgumentError, CompileError, SpfError
from spf.runtime.binding import Binder
from spf.runtime.build import build
from spf.runtime.threads import GOVERNOR, openmp_library

if TYPE_CHECKING:
    import os

    from spf.codegen.signature import Arg, Signature

_RESTRICT = re.compile(r"\b(?:__)?restrict(?:__)?\b")


_LOADED: dict[tuple[str, str], tuple[cffi.FFI, Any]] = {}
"""Libraries stay loaded for the life of the process: unloading a library whose OpenMP
region has run can pull libgomp from under its still-spinning worker threads (a crash seen
here), and reloading the same path is then free."""


def _load(path: Path, prototype: str, command: str, extra: str = "") -> tuple[cffi.FFI, Any]:
    key = (str(path), prototype + extra)
    if "-fopenmp" in command:
        openmp_library()  # before the kernel's own dependency loads it (wait policy)
    if key not in _LOADED:
        ffi = cffi.FFI()
        try:
            ffi.cdef(_RESTRICT.sub("", prototype) + ";" + extra)
        except cffi.CDefError as err:
            raise SpfError(f"cannot declare {prototype!r} to cffi: {err}") from None
        try:
            lib = ffi.dlopen(str(path))
        except OSError as err:
            raise CompileError(f"cannot load {path}: {err}", command=command) from None
        _LOADED[key] = (ffi, lib)
    return _LOADED[key]


class Kernel:
    """A compiled function: ``kernel(y=y, A=A, x=x, N=n, M=m, check=True)``.

    Attributes: ``name`` (the C function), ``signature`` (its C prototype), ``source``,
    ``path`` (the shared library), ``command`` (the compiler command line), ``arguments``
    (the :class:`~spf.codegen.signature.Arg` list), ``compiler_output`` (warnings).
    """

    def __init__(
        self,
        signature: Signature,
        source: str,
        path: str | os.PathLike[str],
        command: str,
        *,
        compiler_output: str = "",
    ) -> None:
        self.source = source
        self.signature = signature.c_prototype()
        self.name = signature.function
        self.path = Path(path)
        self.command = command
        self.compiler_output = compiler_output
        self.arguments: tuple[Arg, ...] = signature.args
        fault = f"{self.name}_spf_index_fault"
        has_fault = f"int {fault}(void)" in source
        extra = f"int {fault}(void);" if has_fault else ""
        self._ffi, self._lib = ffi, lib = _load(self.path, self.signature, command, extra)
        self._fault = getattr(lib, fault) if has_fault else None
        try:
            self._fn = getattr(lib, self.name)
        except AttributeError as err:
            raise CompileError(
                f"cannot load {self.name!r} from {self.path}: {err}", command=command
            ) from None
        self._from_buffer = ffi._backend.from_buffer  # ffi.from_buffer minus one Python frame
        for a in signature.args:
            if a.name == "check":
                raise SpfError(
                    "an argument named 'check' clashes with kernel(check=...); rename it"
                )
        self._binder = binder = Binder(signature)
        self._bind = binder.bind
        self._ctypes = tuple(ffi.typeof(f"{d.arg.ctype}[]") for d in binder.data)
        self._no_require = (False,) * len(self._ctypes)  # from_buffer's require_writable
        self._param_order = binder.param_order
        kinds = [a.kind == "param" for a in signature.args]
        self._params_first = kinds == sorted(kinds, reverse=True)
        self._openmp = "-fopenmp" in command
        """OpenMP calls run with no more threads than cores are free (spf.runtime.threads)."""

    @classmethod
    def build(
        cls,
        signature: Signature,
        source: str,
        *,
        openmp: bool = True,
        cflags: Sequence[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        compiler: str | None = None,
        language: str = "c",
    ) -> Kernel:
        """Compile ``source`` (cached, see :func:`~spf.runtime.build.build_c`) and load it.

        A cached library that fails to load (damaged after its digest was recorded) is
        compiled again once; only a freshly built library's load failure is an error.
        """
        options: dict[str, Any] = {
            "name": signature.function,
            "openmp": openmp,
            "cflags": cflags,
            "cache_dir": cache_dir,
            "compiler": compiler,
            "language": language,
        }
        result = build(source, **options)
        try:
            return cls(
                signature, source, result.path, result.command, compiler_output=result.stderr
            )
        except CompileError:
            if not result.cached:
                raise
        result = build(source, rebuild=True, **options)
        return cls(signature, source, result.path, result.command, compiler_output=result.stderr)

    def __repr__(self) -> str:
        return f"<Kernel {self.signature} from {self.path}>"

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None:
        """Run the function on arrays bound by name; outputs are written in place."""
        if positional:
            raise self._binder.positional(len(positional))
        params, arrays = self._bind(args, check)
        bound = list(map(self._from_buffer, self._ctypes, arrays, self._no_require))
        previous = GOVERNOR.restrict(cap) if self._openmp and (cap := GOVERNOR.cap()) else 0
        try:
            self._invoke(params, bound)
        finally:
            if previous:
                GOVERNOR.restore(previous)
        if self._fault is not None and self._fault():
            raise ArgumentError(
                f"kernel {self.name}: a run-time index array held a value outside the range "
                "its UF declares when a statement read it (the read used the lowest value "
                "instead, so nothing was accessed out of bounds, but the outputs are not "
                "valid): check the arguments the index arrays are computed from"
            )

    def _invoke(self, params: dict[str, Any], bound: list[Any]) -> None:
        if self._params_first:
            self._fn(*[params[n] for n in self._param_order], *bound)
            return
        it, cargs = iter(bound), []
        for a in self.arguments:
            cargs.append(params[a.name] if a.kind == "param" else next(it))
        self._fn(*cargs)
