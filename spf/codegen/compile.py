"""``Computation.compile``: generate, build with the target's compiler, load a ``Kernel``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from spf.errors import CodegenError, SpfError

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.runtime import Kernel


def compile_kernel(
    comp: Computation,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    *,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> Kernel:
    """Generate ``comp`` for ``target``, compile it (cached on disk) and load it."""
    from spf.codegen import codegen
    from spf.codegen.program import signature
    from spf.runtime.build import build
    from spf.runtime.kernel import Kernel

    if options:
        raise SpfError(f"compile: unknown option(s) {', '.join(sorted(options))}")
    if target != "c":
        raise CodegenError(f"compile: target {target!r} is not available yet; use 'c'")
    fname = name or comp.name
    source = codegen(comp, target, fname, check)
    built = build(source, name=fname, openmp=openmp, cflags=cflags, cache_dir=cache_dir)
    return Kernel(
        signature(comp, fname), source, built.path, built.command, compiler_output=built.stderr
    )
