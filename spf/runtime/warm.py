"""Remembered compiles: a C kernel rebuilt from disk without analysis or code generation.

``Computation.compile(target="c")`` records, under ``<cache>/warm/<key[:2]>/<key>.json``, what
it produced for one state of the computation: the generated translation unit (the source
with its record, :class:`~spf.codegen.unit.TranslationUnit`), the kernel's signature
(its arguments and the texts of the bounds obligations and preconditions checked with
``check=True``) and the build-cache key of the library (and, for kernels built together in one
library, its name and the translation unit they share: ``spf.runtime.compile.compile_kernels``).
A later compile of the same state, in this process or a fresh interpreter, loads the library
straight from that entry: no legality check, no bounds proofs, no scanning or printing, and no
compiler run.

The key (:func:`warm_key`) is the sha256 of everything the entry depends on:

* the whole state of the computation: the fingerprint of its IR (``comp.ir``, what
  compiling reads: its data spaces, UFs and their declarations, facts, constants, locals,
  statements and their schedules and tags, buffers, operations and layout, and the trace
  of scheduling commands);
* the function name, ``check``, ``openmp``, ``cflags`` and the compiler (its resolved path,
  size and modification time), the machine for ``-march=native``;
* spf's version and a digest of spf's own source files (size and modification time), so an
  edited or upgraded spf never reuses an entry.

The remembered einsum kernels (:mod:`spf.index_notation.remembered`) key their values with
this module's generic walk of attributes, which raises :class:`UnkeyableError` for a value
it cannot key faithfully (an object that is not one of spf's own, such as a function or a
numpy array, or one whose state is not in its attributes).

An entry is used only when it parses, its recorded digest matches its content and the cached
library is trusted (:meth:`~spf.runtime.cache.CacheEntry.trusted`); anything else is a miss
and is rewritten.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import shutil
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spf.errors import SpfError
from spf.runtime.cache import (
    CacheEntry,
    atomic_write,
    machine_tag,
    resolve_cache_dir,
    spf_version,
)
from spf.sets.set_like import _SetLike

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.codegen.signature import Signature
    from spf.codegen.unit import TranslationUnit
    from spf.ir import ComputationIR
    from spf.runtime.build import BuildResult
    from spf.runtime.kernel import Kernel

FORMAT = 2
"""The entry layout; part of the key (an entry of layout 1, which held the source without
its record, is a miss: that compile takes the ordinary path and writes a new entry)."""

_SKIP = frozenset({"_comp", "_memo", "_repr"})
"""Back references, the analysis cache and text derived from the fields (``UF._repr``)."""


class UnkeyableError(SpfError):
    """A value whose content the key cannot capture faithfully (the caller then remembers
    nothing; an ``SpfError`` so that one escaping is still in the family)."""


_ATOMS = (str, int, float, bool, type(None))


def _key(value: object, path: set[int]) -> object:
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, _SetLike):
        ufs = tuple(_key(u, path) for _, u in sorted(value._ufs.items()))
        source = value._source  # the parsed text decides the set with its UFs: no printing
        return (type(value).__name__, str(value) if source is None else source, ufs)
    ident = id(value)
    if ident in path:
        return ("cycle", type(value).__qualname__)
    path.add(ident)
    try:
        return _compound(value, path)
    finally:
        path.discard(ident)


def _compound(value: object, path: set[int]) -> object:
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, (tuple, list)):
        return (kind, *(_key(v, path) for v in value))
    if isinstance(value, dict):
        return (kind, *((_key(k, path), _key(v, path)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (kind, *sorted(repr(_key(v, path)) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if not kind.startswith("spf."):
            raise UnkeyableError(kind)
        # the fields, and any attribute set beside them
        names = [f.name for f in dataclasses.fields(value)]
        extra = [k for k in getattr(value, "__dict__", {}) if k not in names and k not in _SKIP]
        return (kind, *((n, _key(getattr(value, n), path)) for n in [*names, *extra]))
    if isinstance(value, type):
        return ("class", f"{value.__module__}.{value.__qualname__}")
    if isinstance(value, functools.partial):
        return (kind, _key(value.func, path), _key(value.args, path), _key(value.keywords, path))
    if _spf_function(value):
        return ("function", f"{value.__module__}.{value.__qualname__}")  # type: ignore[attr-defined]
    import enum

    if isinstance(value, enum.Enum):
        return (kind, value.name)
    attrs = getattr(value, "__dict__", None)
    if (
        attrs is None
        or not kind.startswith("spf.")  # a function, a foreign object: its state is not keyed
        or any(vars(c).get("__slots__") for c in type(value).__mro__)
    ):
        raise UnkeyableError(kind)
    return (kind, *((k, _key(v, path)) for k, v in attrs.items() if k not in _SKIP))


def _spf_function(value: object) -> bool:
    """``value`` is a module-level function of spf (a format's packer): its code is part of the
    source digest, so its name keys it; any other function's behaviour is not captured."""
    return (
        isinstance(value, types.FunctionType)
        and value.__module__.startswith("spf.")
        and "<" not in value.__qualname__  # no lambda, no function defined in a function
    )


@functools.cache
def _spf_source_digest() -> str:
    """Size and modification time of every source file of the installed spf."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".h", ".c")):
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{dirpath}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def source_identity() -> str:
    """spf's version and the digest of its source files (what generated code depends on)."""
    from spf._version import __version__

    return f"{__version__}:{_spf_source_digest()}"


def _compiler_identity(argv: Sequence[str]) -> str | None:
    """The compiler's resolved path, size and modification time (None: not found)."""
    found = shutil.which(argv[0])
    if found is None:
        return None
    real = os.path.realpath(found)
    st = os.stat(real)
    return f"{' '.join(argv)}\0{real}\0{st.st_size}\0{st.st_mtime_ns}"


def warm_key(
    ir: ComputationIR,
    name: str,
    check: bool,
    *,
    argv: Sequence[str],
    flags: Sequence[str],
    extra: Sequence[str] = (),
) -> str | None:
    """The entry's key, or None when this compile cannot be remembered (``name``: the
    function's name as asked for; the C name follows from it; ``extra``: what else the
    entry depends on, such as another target and its compiler's environment)."""
    build = build_identity(argv, flags)
    if build is None:
        return None
    parts = [f"spf-warm {FORMAT}", *build, repr(name), str(check), ir.fingerprint, *extra]
    return hashlib.sha256("\0\0".join(parts).encode()).hexdigest()


def build_identity(argv: Sequence[str], flags: Sequence[str]) -> list[str] | None:
    """What a built library depends on besides its source: spf's version and source digest,
    the compiler (None when it is not found), the machine for ``-march=native``, the flags."""
    compiler = _compiler_identity(argv)
    if compiler is None:
        return None
    machine = machine_tag() if any("native" in f for f in flags) else ""
    return [spf_version(), _spf_source_digest(), compiler, machine, "\0".join(flags)]


def entry_path(key: str, cache_dir: str | os.PathLike[str] | None) -> Path:
    """Where the remembered entry of ``key`` is kept."""
    return resolve_cache_dir(cache_dir) / "warm" / key[:2] / f"{key}.json"


def payload_digest(payload: dict[str, Any]) -> str:
    """The sha256 an entry records of its payload (a mismatch makes the entry a miss)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def store(
    key: str,
    kernel: Kernel,
    sig: Signature,
    library_key: str,
    obligations: Sequence[tuple[str, str]],
    cache_dir: str | os.PathLike[str] | None,
    *,
    library: tuple[str, str] | None = None,
) -> None:
    """Record what a compile produced under ``key`` (silently skipped when the cache is not
    writable: remembering is an optimisation). ``library``: the name and source of the
    library the kernel shares with others (``Kernel.build_many``), when it does."""
    lib_name = sig.function if library is None else library[0]
    if CacheEntry(resolve_cache_dir(cache_dir), lib_name, library_key).library != kernel.path:
        return  # not the library this key names (never expected): remember nothing
    payload: dict[str, Any] = {
        "format": FORMAT,
        "function": sig.function,
        "unit": kernel.unit.to_data(),
        "library_key": library_key,
        "args": [_arg_data(a) for a in sig.args],
        "obligations": [list(o) for o in obligations],
        "preconditions": [p.to_data() for p in sig.preconditions],
    }
    if library is not None:
        payload["library"] = {"name": library[0], "source": library[1]}
    data = {"payload": payload, "sha256": payload_digest(payload)}
    path = entry_path(key, cache_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(data))
    except OSError:
        pass


def _arg_data(arg: Any) -> dict[str, Any]:
    return {
        "name": arg.name,
        "kind": arg.kind,
        "ctype": arg.ctype,
        "const": arg.const,
        "shape": None if arg.shape is None else list(arg.shape),
        "rank": arg.rank,
        "inner": list(arg.inner),
    }


def load(
    key: str,
    ir: ComputationIR,
    *,
    argv: Sequence[str],
    flags: Sequence[str],
    cache_dir: str | os.PathLike[str] | None,
    kind: type[Kernel] | None = None,
) -> Kernel | None:
    """The kernel remembered under ``key``, or None (no entry, or one that cannot be trusted);
    ``kind``: the kernel class to load it as (:class:`~spf.runtime.kernel.Kernel` when None)."""
    from spf.codegen.unit import TranslationUnit

    try:
        data = json.loads(entry_path(key, cache_dir).read_text(encoding="utf-8"))
        payload = data["payload"]
        if data["sha256"] != payload_digest(payload) or payload["format"] != FORMAT:
            return None
        unit = TranslationUnit.from_data(payload["unit"])
        library_key: str = payload["library_key"]
        shared = payload.get("library") or {"name": payload["function"], "source": unit.source}
        library = (str(shared["name"]), str(shared["source"]))
        sig = _signature(ir, payload)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return load_library(
        sig,
        unit,
        library_key,
        argv=argv,
        flags=flags,
        cache_dir=cache_dir,
        library=library,
        kind=kind,
    )


def load_library(
    sig: Signature,
    unit: TranslationUnit,
    library_key: str,
    *,
    argv: Sequence[str],
    flags: Sequence[str],
    cache_dir: str | os.PathLike[str] | None,
    library: tuple[str, str] | None = None,
    kind: type[Kernel] | None = None,
) -> Kernel | None:
    """The kernel of ``sig`` from the library built earlier from ``unit`` (build-cache key
    ``library_key``), or None where that library is missing or not trusted. ``library``:
    the shared library's name and whole source when the kernel was built in one translation
    unit with others (a wavefront's parts), else the kernel's own; ``kind``: the kernel
    class (:class:`~spf.runtime.kernel.Kernel` when None)."""
    from spf.errors import CompileError
    from spf.runtime.kernel import Kernel

    lib_name, lib_source = library or (sig.function, unit.source)
    built = cached_build(lib_name, lib_source, library_key, argv=argv, flags=flags,
                         cache_dir=cache_dir)  # fmt: skip
    if built is None:
        return None
    try:
        return (kind or Kernel)(
            sig, unit, built.path, built.command, compiler_output=built.stderr, validated=True
        )
    except CompileError:
        return None


def cached_build(
    name: str,
    source: str,
    library_key: str,
    *,
    argv: Sequence[str],
    flags: Sequence[str],
    cache_dir: str | os.PathLike[str] | None,
) -> BuildResult | None:
    """The library built earlier from ``source`` under ``name`` (build-cache key
    ``library_key``), as :func:`~spf.runtime.build.build` reports a cached one, without
    running the compiler (not even ``--version``); None where it is missing or not trusted."""
    import shlex

    from spf.runtime.build import BuildResult

    entry = CacheEntry(resolve_cache_dir(cache_dir), name, library_key)
    if not entry.trusted(source):
        return None
    command = shlex.join([*argv, *flags, "-o", str(entry.library), str(entry.source), "-lm"])
    return BuildResult(entry.library, command, entry.source, entry.read_log(), True)


def _signature(ir: ComputationIR, payload: dict[str, Any]) -> Signature:
    """The signature the entry describes; UF declarations and assumptions come from ``ir``
    (the keyed computation's), the bounds obligations and preconditions are parsed from
    their texts."""
    from spf.analysis.preconditions import Precondition
    from spf.codegen.signature import Arg, Signature

    args = []
    for a in payload["args"]:
        shape = a["shape"]
        args.append(
            Arg(
                name=a["name"],
                kind=a["kind"],
                ctype=a["ctype"],
                const=bool(a["const"]),
                shape=None if shape is None else tuple(shape),
                rank=a["rank"],
                uf=ir.uf_decls[a["name"]] if a["kind"] == "uf" else None,
                inner=tuple(a["inner"]),
            )
        )
    from spf.runtime.compile import with_obligations

    preconditions = tuple(Precondition.from_data(p) for p in payload["preconditions"])
    sig = Signature(
        function=payload["function"],
        args=tuple(args),
        facts=ir.facts,
        preconditions=preconditions,
    )
    return with_obligations(sig, [(t, n) for t, n in payload["obligations"]], ir)


def library_key(source: str, *, argv: Sequence[str], flags: Sequence[str]) -> str:
    """The build-cache key of ``source`` built by ``argv`` with ``flags`` (as ``build``)."""
    from spf.runtime.build import compiler_version
    from spf.runtime.cache import cache_key

    return cache_key(compiler_version(tuple(argv)), [*argv, *flags, "-lm"], source)
