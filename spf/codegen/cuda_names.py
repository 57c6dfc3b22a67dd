"""Names the CUDA target's generated code takes for itself, refused at codegen.

A ``.cu`` unit names CUDA's built-in variables (``threadIdx``, ``blockIdx``, ...), the
runtime API of its host function (``cudaMalloc``, ``cudaMemcpy``, ``dim3``; its
``snprintf`` is reserved on every target), ``atomicAdd`` (atomic reductions) and its own
kernels (``<function>_k0``, ...). A data space, UF, parameter, buffer, statement or loop of
one of those names makes a macro or a variable that hides what the code means there: g++
(the emulator) or nvcc then failed with a compiler error, or, for a computation named
``cudaMalloc``, the emulator built what nvcc refuses. :func:`check_cuda_names` refuses them
with the name, what it names and why.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spf.codegen.loop_ast import Bind, For, Merge, walk
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import Program

BUILT_INS = frozenset(["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"])
"""CUDA's built-in variables."""
HOST_NAMES = frozenset(["dim3", "uint3", "atomicAdd"])
"""Types and functions the generated host code and kernels call (besides ``cuda*``)."""
_RUNTIME = re.compile(r"cuda[A-Z]")
"""The CUDA runtime API's names (``cudaMalloc``, ``cudaSuccess``, ``cudaError_t``, ...)."""


def cuda_reason(name: str, function: str) -> str | None:
    """Why ``name`` cannot be used in the CUDA unit of function ``function``, or None.

    >>> cuda_reason("threadIdx", "f")
    'a CUDA built-in variable'
    >>> cuda_reason("f_k0", "f") is not None, cuda_reason("rowptr", "f")
    (True, None)
    """
    if name in BUILT_INS:
        return "a CUDA built-in variable"
    if name in HOST_NAMES or _RUNTIME.match(name):
        return "a name of the CUDA runtime or of the C library the generated code calls"
    if re.fullmatch(rf"{re.escape(function)}_k[0-9]+", name):
        return f"the name of a kernel of {function} (its kernels are {function}_k0, _k1, ...)"
    return None


def check_cuda_names(program: Program) -> None:
    """Raise CodegenError for the first name of ``program`` that :func:`cuda_reason` refuses:
    its function, data spaces, buffers, arguments (parameters, UFs), statements and loops."""
    function = program.signature.function
    named: list[tuple[str, str]] = [("computation (function)", function)]
    named += [("data space", d.name) for d in program.data]
    named += [("buffer", b.name) for b in program.buffers]
    named += [(a.kind if a.kind != "uf" else "UF", a.name) for a in program.signature.args]
    named += [("UF", name) for name, _ in program.ufs]
    named += [("statement", s.name) for s in program.stmts]
    for n in walk(program.body):
        if isinstance(n, (For, Bind)):
            named.append(("loop" if isinstance(n, For) else "variable", n.var))
        elif isinstance(n, Merge):
            named += [("loop", n.left.var), ("loop", n.right.var)]
    for what, name in named:
        why = cuda_reason(name, function)
        if why is not None:
            raise CodegenError(
                f"{what} {name!r} is {why}, which target 'cuda' uses in the code it "
                "generates; rename it (or generate another target)"
            )


__all__ = ["BUILT_INS", "HOST_NAMES", "check_cuda_names", "cuda_reason"]
