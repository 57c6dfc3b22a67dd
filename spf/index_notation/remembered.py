"""Remembered einsum kernels: a warm ``spf.einsum(...).compile()`` builds no Computation.

``Computation.compile`` already loads a state compiled before without analysis or code
generation (:mod:`spf.runtime.warm`), but its key is the whole state of the Computation,
so the formula's Computation must be built first (statements, their sets, the row
workspaces' and merges' checks): a tenth of a second to a second for a sparse output, where
the kernel itself loads in milliseconds. An einsum whose Computations were never looked at
(nothing was printed, scheduled or asked of them since ``spf.einsum``) is the same state
every time for the same formula, formats, sizes, index type, name and ``parallel``: its
compiled phases are remembered under the sha256 of those (the bound formula's whole
content), of the phases' names (a sparse output's two groups, the two phases and the single
pass, each compiled when first needed, are separate entries) and of what the build depends
on (spf's version and source digest, the compiler, the flags, the machine for
``-march=native``, ``check`` and the function name):
``<cache>/einsum/<key[:2]>/<key>.pickle``, each phase's signature with its source,
build-cache key and the plan of its checked call's facts (how each is verified: analysis a
first call would otherwise redo), and a ``.sha256`` of the entry beside it. A hit loads
the libraries straight away; anything else (no entry, a digest that does not match, a
library that is missing or not trusted, a Computation the user touched) takes the ordinary
path, which rewrites the entry.

The signatures are pickled (they hold the parsed facts a checked call verifies, which
would otherwise need the Computation): the entry lives in the same cache directory as the
shared libraries it names, which spf loads and runs, so it asks for no more trust than
they do.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.errors import SpfError
from spf.index_notation.decoded import DecodedEntries
from spf.runtime.cache import atomic_write, resolve_cache_dir

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from spf.computation.products import CompiledKernel
    from spf.index_notation.formula import Formula
    from spf.runtime.compile import UnitKind
    from spf.runtime.kernel import Kernel

__all__ = ["Remembered", "load_or_compile", "remembered"]

FORMAT = 4
"""The entry layout; part of the key (layout 2 held each phase's source without its
translation-unit record, layout 3 either that record or the shared library's name, not
both: such an entry is a miss, compiled again and rewritten)."""

LOADS = 0
"""How many compiles were answered from an entry (the tests count them)."""

_DECODED = DecodedEntries()
"""The entries this process wrote or read, by the sha256 of their bytes."""


@dataclass(frozen=True)
class Remembered:
    """Where one einsum compile is remembered: ``key`` and what loading needs."""

    key: str
    argv: tuple[str, ...]
    flags: tuple[str, ...]
    cache_dir: str | os.PathLike[str] | None

    def _path(self) -> Path:
        return resolve_cache_dir(self.cache_dir) / "einsum" / self.key[:2] / f"{self.key}.pickle"

    def load(self) -> list[Kernel] | None:
        """The phases' kernels remembered under the key, or None."""
        global LOADS
        from spf.runtime.warm import load_library

        try:
            path = self._path()
            blob = path.read_bytes()
            digest = hashlib.sha256(blob).hexdigest()
            if path.with_suffix(".sha256").read_text().strip() != digest:
                return None
            data = _DECODED.get(digest)
            if data is None:
                data = pickle.loads(blob)  # as trusted as the libraries beside it (docstring)
                _DECODED.put(digest, data)
            if data["format"] != FORMAT:
                return None
            kernels = []
            for sig, unit, library_key, plans, library in data["phases"]:
                kernel = load_library(
                    sig,
                    unit,
                    library_key,
                    argv=self.argv,
                    flags=self.flags,
                    cache_dir=self.cache_dir,
                    library=library,
                )
                if kernel is None:
                    return None
                facts = kernel._binder._facts
                if facts is not None and plans is not None:
                    facts.adopt_plans(plans)
                kernels.append(kernel)
        except (
            OSError,
            SpfError,
            ValueError,
            KeyError,
            TypeError,
            EOFError,
            pickle.UnpicklingError,
        ):
            return None
        LOADS += 1
        return kernels

    def store(self, kernels: Sequence[object], library: str | None = None) -> None:
        """Remember ``kernels`` (the phases, in order); skipped where one is not a plain C
        kernel built in this cache, or the cache is not writable. ``library``: the name
        the phases were built under together (one translation unit,
        :func:`spf.runtime.compile.compile_kernels`), if they were."""
        from spf.runtime.kernel import Kernel

        phases = []
        try:
            root = resolve_cache_dir(self.cache_dir)
        except SpfError:
            return
        built = [k for k in kernels if type(k) is Kernel]
        if len(built) != len(kernels):
            return
        together = _together(built, library, self.argv, self.flags)
        for kernel in built:
            sig = kernel._binder.signature
            found = _built_as(kernel, root, self.argv, self.flags, together)
            if found is None:
                return
            key, shared = found
            facts = kernel._binder._facts
            plans = None if facts is None or facts.quiet else facts.plans()
            phases.append((sig, kernel.unit, key, plans, shared))
        entry = {"format": FORMAT, "phases": _shared(phases)}
        try:
            blob = pickle.dumps(entry)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        digest = hashlib.sha256(blob).hexdigest()
        try:
            path = self._path()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)  # the digest, written last, makes the entry valid
            atomic_write(path.with_suffix(".sha256"), digest + "\n")
        except (OSError, SpfError):
            return
        _DECODED.put(digest, entry)  # what the blob decodes to: a load here need not


def _shared(phases: list[Any]) -> object:
    """``phases`` with each distinct UF and set one object (a load builds each once:
    :mod:`spf.index_notation.shared_values`), or as they are where they cannot be copied."""
    import copy

    from spf.index_notation.shared_values import shared_values

    try:
        return shared_values(phases)
    except (copy.Error, TypeError, AttributeError, RecursionError):
        return phases


def _together(
    kernels: Sequence[Kernel], library: str | None, argv: Sequence[str], flags: Sequence[str]
) -> tuple[str, str, str] | None:
    """The name, whole source and build-cache key of the library ``kernels`` were built
    in together under the name ``library``, or None (not built together)."""
    from spf.runtime.combine import combine
    from spf.runtime.warm import library_key

    if library is None:
        return None
    unit = combine([k.unit for k in kernels])
    if unit is None:
        return None
    return library, unit.source, library_key(unit.source, argv=argv, flags=flags)


def _built_as(
    kernel: Kernel, root: Path, argv: Sequence[str], flags: Sequence[str],
    together: tuple[str, str, str] | None,
) -> tuple[str, tuple[str, str] | None] | None:  # fmt: skip
    """The build-cache key of the library ``kernel`` was loaded from, and that library's
    name and source where it is shared (:func:`spf.runtime.warm.load_library`); None where
    it is neither its own library nor the shared one in this cache."""
    from spf.runtime.cache import CacheEntry
    from spf.runtime.warm import library_key

    sig = kernel._binder.signature
    own = library_key(kernel.source, argv=argv, flags=flags)
    if CacheEntry(root, sig.function, own).library == kernel.path:
        return own, None
    if together is not None:
        name, source, key = together
        if CacheEntry(root, name, key).library == kernel.path:
            return key, (name, source)
    return None


def remembered(
    f: Formula,
    label: str,
    parallel: bool,
    call: tuple[str, str | None, bool],
    options: Mapping[str, Any],
    kind: UnitKind = "kernel",
) -> Remembered | None:
    """Where the compile of formula ``f`` (named ``label``) with ``call`` (target, function
    name, check) and ``options`` is remembered; None where it is not (another target,
    options other than ``openmp``, ``cflags`` and ``cache_dir``, a formula whose content
    cannot be keyed, no compiler). The flags are those a unit of ``kind`` is built with
    (:func:`spf.runtime.compile.optimisation_flags`)."""
    from spf.runtime.build import compile_flags, compiler_argv
    from spf.runtime.compile import optimisation_flags
    from spf.runtime.key_text import key_text
    from spf.runtime.warm import UnkeyableError, build_identity

    target, name, check = call
    if target != "c" or set(options) - {"openmp", "cflags", "cache_dir"}:
        return None
    openmp = options.get("openmp", True)
    cflags = optimisation_flags(options.get("cflags"), kind)
    if not isinstance(openmp, bool):
        return None  # let compile() report it
    try:
        argv = compiler_argv(None, "c")
        flags = compile_flags(openmp=openmp, cflags=cflags)
        build = build_identity(argv, flags)
        state = key_text(f)  # its dicts' items sorted: filled in set order
    except (UnkeyableError, RecursionError, SpfError, OSError):
        return None  # a bad cflags: compile() raises the error users should see
    if build is None:
        return None
    parts = [f"spf-einsum {FORMAT}", *build, repr((label, parallel, name, check)), state]
    key = hashlib.sha256("\0\0".join(parts).encode()).hexdigest()
    return Remembered(key, tuple(argv), tuple(flags), options.get("cache_dir"))


def load_or_compile(
    f: Formula,
    ident: tuple[tuple[str, ...], bool],
    call: tuple[str, str | None, bool],
    options: Mapping[str, Any],
    compile_: Callable[[], list[CompiledKernel]],
    *,
    remember: bool,
    library: str | None = None,
    kind: UnitKind = "kernel",
) -> list[CompiledKernel]:
    """The kernels of the phases named ``ident[0]`` (``ident[1]``: ``parallel``): remembered
    ones where ``remember`` (the Computations were not touched) and an entry is found,
    otherwise ``compile_()``'s, then remembered (``library``: the name ``compile_`` builds
    the phases under together, if it does; ``kind``: what it builds them as,
    :func:`spf.runtime.compile.optimisation_flags`)."""
    from spf.analysis.preconditions import warn_preconditions

    names, parallel = ident
    rem = remembered(f, "\0".join(names), parallel, call, options, kind) if remember else None
    if rem is not None:
        hit = rem.load()
        if hit is not None and len(hit) == len(names):
            for phase, kernel in zip(names, hit, strict=True):
                warn_preconditions(phase, kernel.preconditions)
            return list(hit)
    kernels = compile_()
    if rem is not None:
        rem.store(kernels, library)
    return kernels
