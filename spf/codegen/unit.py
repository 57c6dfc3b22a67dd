"""The translation-unit record: a generated source with what it defines, as data.

The printers fill it as they print (:class:`~spf.codegen.emitter.Emitter`'s notes), so no
later stage reads the generated text back: combining several units into one
(:mod:`spf.runtime.combine`), deciding whether a kernel opens an OpenMP parallel region
(:class:`spf.runtime.Kernel`), loading a CUDA module's ``__global__`` kernels
(:mod:`spf.runtime.cuda`). It travels with the source through ``compile``, ``build_many``
and the on-disk caches (:meth:`TranslationUnit.to_data`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT = 1
"""The layout of :meth:`TranslationUnit.to_data` (a record of another layout is refused)."""


@dataclass(frozen=True)
class Function:
    """A function the unit defines at file scope."""

    name: str
    prototype: str
    """Its C prototype as printed, without ``static`` and without the closing ``;``."""
    static: bool = False
    """Internal to the unit (a helper such as ``spf_fault_note``), not exported."""


@dataclass(frozen=True)
class Chunk:
    """Lines printed at file scope and what they define: the functions and the macros
    (a printer's helper functions return one; :meth:`Emitter.chunk` prints it)."""

    lines: tuple[str, ...]
    functions: tuple[Function, ...] = ()
    macros: tuple[str, ...] = ()


@dataclass(frozen=True)
class TranslationUnit:
    """A generated translation unit: its ``source`` and what the printer put in it."""

    source: str
    target: str = "c"
    functions: tuple[Function, ...] = ()
    """The functions defined at file scope, in order (exported and ``static``)."""
    macros: tuple[str, ...] = ()
    """The macros still defined at the end of the unit (statement, access, UF and helper
    macros, include guards), in order of first definition."""
    shareable: bool = False
    """Its file scope holds only the functions and macros named here (no type, no
    variable), so it may share one translation unit with others (``combine``)."""
    openmp: bool = False
    """It has OpenMP pragmas (``parallel``, ``for``, ``simd``, ``atomic`` ...)."""
    parallel: bool = False
    """It opens an OpenMP parallel region (a ``simd`` loop alone does not)."""
    kernels: tuple[str, ...] = field(default=())
    """The ``__global__`` kernels of a CUDA unit, in order."""
    bounds: tuple[tuple[str, int, int], ...] = ()
    """``(parameter, lowest, highest)`` of the ``hls_bounds`` an HLS unit was printed for,
    by parameter name."""
    local_bytes: int = 0
    """The most bytes of local arrays one thread of a CUDA unit's kernels declares: spf's
    emulator sizes each CUDA thread's stack from it (:mod:`spf.codegen.cuda_limits`)."""
    dropped_tags: tuple[tuple[str, str, str], ...] = ()
    """``(statement, loop, tag)`` of each HLS loop directive on a loop code generation
    removed (:mod:`spf.codegen.hls_tags`): an HLS unit has no pragma for it."""
    agreed: tuple[str, ...] = ()
    """The parameters of an MPI unit that decide which ranks post which messages (those of
    the loops and conditions around its sends, receives and barriers, and of their peers):
    every rank must pass the same values (:class:`spf.runtime.mpi.MPIKernel` checks)."""

    @classmethod
    def hand_written(cls, source: str, target: str = "c") -> TranslationUnit:
        """A source spf did not print (a test's C, a user's): nothing is known of its
        structure, so it shares no unit and may open a parallel region."""
        return cls(source, target, openmp=True, parallel=True)

    @property
    def exported(self) -> tuple[str, ...]:
        """The names of the functions other units may call."""
        return tuple(f.name for f in self.functions if not f.static)

    @property
    def statics(self) -> tuple[str, ...]:
        """The names of the ``static`` functions."""
        return tuple(f.name for f in self.functions if f.static)

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form (the on-disk caches hold it)."""
        return {
            "format": FORMAT,
            "source": self.source,
            "target": self.target,
            "functions": [[f.name, f.prototype, f.static] for f in self.functions],
            "macros": list(self.macros),
            "shareable": self.shareable,
            "openmp": self.openmp,
            "parallel": self.parallel,
            "kernels": list(self.kernels),
            "bounds": [list(b) for b in self.bounds],
            "local_bytes": self.local_bytes,
            "agreed": list(self.agreed),
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TranslationUnit:
        """What :meth:`to_data` wrote (``ValueError``, ``KeyError`` or ``TypeError`` for
        anything else: a cache entry of another version is a miss, rebuilt)."""
        if data["format"] != FORMAT:
            raise ValueError(f"translation-unit record of format {data['format']!r}")
        functions = tuple(
            Function(str(name), str(proto), bool(static))
            for name, proto, static in data["functions"]
        )
        return cls(
            source=str(data["source"]),
            target=str(data["target"]),
            functions=functions,
            macros=tuple(str(m) for m in data["macros"]),
            shareable=bool(data["shareable"]),
            openmp=bool(data["openmp"]),
            parallel=bool(data["parallel"]),
            kernels=tuple(str(k) for k in data["kernels"]),
            bounds=tuple((str(n), int(lo), int(hi)) for n, lo, hi in data["bounds"]),
            local_bytes=int(data["local_bytes"]),
            agreed=tuple(str(a) for a in data.get("agreed", ())),
        )


__all__ = ["FORMAT", "Chunk", "Function", "TranslationUnit"]
