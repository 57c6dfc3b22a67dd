"""Compile one translation unit to a shared library, with flags spf controls (docs/backends/c.md).

The compiler is run directly (never through cffi's API mode, which adds Python's own flags
such as ``-fwrapv``, measured 2.3x slower here), and the library is cached on disk by a hash of the
compiler version, the flags and the source (:mod:`spf.runtime.cache`)::

    gcc -std=c99 -O3 -march=native -fPIC -shared -Wall -Wextra -fopenmp -o K.so K.c -lm
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from spf.errors import ArgumentError, CompileError
from spf.runtime.cache import CacheEntry, atomic_write, cache_key, remove_quietly, resolve_cache_dir

if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_OPT_FLAGS = ("-O3", "-march=native")
LIGHT_OPT_FLAGS = ("-O2", "-march=native")
"""The default flags of a wavefront's inspector stages (code run once per content of the index
arrays, :func:`spf.runtime.plan.compile_wavefront`): gcc compiles them in ~70% of the time
``-O3`` takes, and ``inspect()`` runs as fast within measurement noise (``-O1`` would halve
the compile time but slow the coarse inspector down; ``docs/inspection.md``)."""
TEST_OPT_LEVEL_ENV = "SPF_TEST_OPT_LEVEL"
"""Names gcc's optimisation level (``1`` for ``-O1``) that replaces ``-O3`` in
:data:`DEFAULT_OPT_FLAGS` (and :data:`LIGHT_OPT_FLAGS`: :func:`light_opt_flags`) when set:
``make test`` sets it to ``0`` for the test suite only,
where gcc's ``-O3`` time is a fifth of the suite's CPU, ``-O1`` compiles spf's kernels in
under half of it and ``-O0`` in about 60% of ``-O1``'s. Without ``-ffast-math`` (and with
``-std=c99``'s ``-ffp-contract=off``) every level computes the same bits: no level may
reorder floating-point operations, and spf tags
``vector`` (``#pragma omp simd``) only on loops that carry no dependence, a reduction included
(``tests/e2e/test_opt_level_bitwise.py``)."""
WARNING_FLAGS = ("-Wall", "-Wextra")
_LANGUAGES = {
    # language: (standard flag, source suffix, default compiler)
    "c": ("-std=c99", ".c", "gcc"),
    "c++": ("-std=c++17", ".cpp", "g++"),
}
_LANGUAGE_ALIASES = {"c": "c", "c99": "c", "c++": "c++", "cpp": "c++", "cxx": "c++"}


@dataclass(frozen=True)
class BuildResult:
    """What :func:`build` produced."""

    path: Path
    """The shared library."""
    command: str
    """The command line that builds it (``-o`` names the cached library)."""
    source_path: Path
    """The source file kept next to the library."""
    stderr: str
    """The compiler's diagnostics (warnings) from the build that made the library."""
    cached: bool
    """True when the library was already in the cache (no compiler run)."""


def _language(language: str) -> str:
    try:
        return _LANGUAGE_ALIASES[language.lower()]
    except (KeyError, AttributeError):
        raise ArgumentError(f"language must be 'c' or 'c++', got {language!r}") from None


def compiler_argv(compiler: str | None, language: str) -> list[str]:
    """The compiler command as an argument list (the language's default when None)."""
    if compiler is None:
        compiler = _LANGUAGES[language][2]
    if not isinstance(compiler, str) or not compiler.strip():
        raise ArgumentError(f"compiler must be a command such as 'gcc', got {compiler!r}")
    return shlex.split(compiler)


def default_opt_flags() -> tuple[str, ...]:
    """The optimisation flags of a build given no ``cflags``: :data:`DEFAULT_OPT_FLAGS`, with
    ``-O<level>`` instead of ``-O3`` when :data:`TEST_OPT_LEVEL_ENV` names a level (the
    test suite's setting; read at each build, so a test can unset it for itself)."""
    level = os.environ.get(TEST_OPT_LEVEL_ENV, "").strip()
    if not level:
        return DEFAULT_OPT_FLAGS
    if level not in ("0", "1", "2", "3", "s", "g"):
        raise ArgumentError(
            f"{TEST_OPT_LEVEL_ENV}={level!r} is not a gcc optimisation level; "
            "set it to 0, 1, 2, 3, s or g, or unset it for spf's -O3"
        )
    return (f"-O{level}", *DEFAULT_OPT_FLAGS[1:])


def light_opt_flags() -> tuple[str, ...]:
    """The flags of the units spf builds at :data:`LIGHT_OPT_FLAGS` (a wavefront's inspector
    stages, a sparse einsum output's phases), or :func:`default_opt_flags` when
    :data:`TEST_OPT_LEVEL_ENV` names a level: the test suite's level reaches every unit whose
    flags spf chooses (``-O1`` compiles them in about 2/3 of ``-O2``'s time, to the same
    bits: ``tests/e2e/test_opt_level_bitwise.py``)."""
    if os.environ.get(TEST_OPT_LEVEL_ENV, "").strip():
        return default_opt_flags()
    return LIGHT_OPT_FLAGS


def _opt_flags(cflags: Sequence[str] | None) -> list[str]:
    if cflags is None:
        return list(default_opt_flags())
    if isinstance(cflags, str):  # "-O2 -g" is a common slip for ["-O2", "-g"]
        return shlex.split(cflags)
    flags = list(cflags)
    for flag in flags:
        if not isinstance(flag, str):
            raise ArgumentError(f"cflags must be strings, got {flag!r} in {cflags!r}")
    return flags


def compile_flags(
    *, openmp: bool = True, cflags: Sequence[str] | None = None, language: str = "c"
) -> list[str]:
    """The flags :func:`build_c` passes before ``-o`` (``cflags`` replaces ``-O3 -march=native``).

    >>> compile_flags(openmp=False, cflags=["-O1"])
    ['-std=c99', '-O1', '-fPIC', '-shared', '-Wall', '-Wextra']
    """
    std = _LANGUAGES[_language(language)][0]
    flags = [std, *_opt_flags(cflags), "-fPIC", "-shared", *WARNING_FLAGS]
    if openmp:
        flags.append("-fopenmp")
    return flags


@functools.cache
def compiler_version(argv: tuple[str, ...]) -> str:
    """The command and what ``--version`` prints (part of the cache key; run once)."""
    try:
        done = subprocess.run(
            [*argv, "--version"], capture_output=True, text=True, errors="replace", timeout=120
        )
    except FileNotFoundError:
        raise CompileError(
            f"compiler command {argv[0]!r} not found on PATH; install it or pass compiler=...",
            command=shlex.join([*argv, "--version"]),
        ) from None
    except (OSError, subprocess.SubprocessError) as err:
        raise CompileError(
            f"cannot run compiler command {argv[0]!r}: {err}",
            command=shlex.join([*argv, "--version"]),
        ) from None
    return f"{shlex.join(argv)}\n{done.stdout}{done.stderr}"


def build(
    source: str,
    *,
    name: str,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    compiler: str | None = None,
    language: str = "c",
    rebuild: bool = False,
) -> BuildResult:
    """Compile ``source`` to a cached shared library; see :func:`build_c`.

    A cached library is reused only when :meth:`~spf.runtime.cache.CacheEntry.trusted`;
    ``rebuild=True`` compiles again regardless (a cached library that failed to load).
    """
    if not isinstance(source, str):
        raise ArgumentError(f"source must be a str, got {type(source).__name__}")
    lang = _language(language)
    argv = compiler_argv(compiler, lang)
    flags = compile_flags(openmp=openmp, cflags=cflags, language=lang)
    version = compiler_version(tuple(argv))
    key = cache_key(version, [*argv, *flags, "-lm"], source)
    root = resolve_cache_dir(cache_dir)
    entry = CacheEntry(root, name, key, _LANGUAGES[lang][1])
    canonical = shlex.join([*argv, *flags, "-o", str(entry.library), str(entry.source), "-lm"])
    if not rebuild and entry.trusted(source):
        return BuildResult(entry.library, canonical, entry.source, entry.read_log(), True)
    try:
        entry.directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _unwritable(root, err) from None
    with entry.building():
        if not rebuild and entry.trusted(source):  # built by another process meanwhile
            return BuildResult(entry.library, canonical, entry.source, entry.read_log(), True)
        try:
            atomic_write(entry.source, source)
            tmp_lib = entry.temp_path(".so")
        except OSError as err:
            raise _unwritable(root, err) from None
        cmd = [*argv, *flags, "-o", str(tmp_lib), str(entry.source), "-lm"]
        try:
            stderr = _run_compiler(cmd, name, entry)
            try:
                entry.install(tmp_lib)
            except OSError as err:  # a full disk, the directory removed meanwhile
                raise _unwritable(root, err) from None
        finally:
            remove_quietly(tmp_lib)
    return BuildResult(entry.library, canonical, entry.source, stderr, False)


def _unwritable(root: Path, err: OSError) -> CompileError:
    """The error of a cache directory that a build cannot write its files to."""
    return CompileError(
        f"cannot write to the spf cache directory {root}: {err}; "
        f"pass cache_dir=... or set $SPF_CACHE_DIR to a writable directory"
    )


def _run_compiler(cmd: list[str], name: str, entry: CacheEntry) -> str:
    command = shlex.join(cmd)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except FileNotFoundError:
        raise CompileError(
            f"compiler command {cmd[0]!r} not found on PATH; install it or pass compiler=...",
            command=command,
            source_path=str(entry.source),
        ) from None
    except OSError as err:
        raise CompileError(
            f"cannot run compiler command {cmd[0]!r}: {err}",
            command=command,
            source_path=str(entry.source),
        ) from None
    output = done.stderr + done.stdout
    with contextlib.suppress(OSError):
        atomic_write(entry.log, output)
    if done.returncode != 0:
        raise CompileError(
            f"{cmd[0]} failed (exit status {done.returncode}) building {name!r}",
            command=command,
            source_path=str(entry.source),
            stderr=output,
        )
    return output


def build_c(
    source: str,
    *,
    name: str,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    compiler: str | None = None,
    language: str = "c",
) -> Path:
    """Compile one translation unit to a shared library and return its path.

    Flags: ``-std=c99`` (``-std=c++17`` for ``language="c++"``), then ``-O3 -march=native``
    (or ``cflags`` instead), ``-fPIC -shared -Wall -Wextra``, ``-fopenmp`` when ``openmp``, and
    ``-lm``. ``compiler`` defaults to ``gcc`` (``g++`` for C++). The library is cached in
    ``cache_dir`` (default :func:`~spf.runtime.cache.default_cache_dir`) by a hash of spf's
    version, the compiler version, the flags and the source; a hit runs no compiler, and a
    cached library whose digest or kept source does not match is rebuilt. Raises
    :class:`~spf.errors.CompileError` (with ``command``, ``source_path`` and ``stderr``) when
    the compiler fails or is missing.
    """
    return build(
        source,
        name=name,
        openmp=openmp,
        cflags=cflags,
        cache_dir=cache_dir,
        compiler=compiler,
        language=language,
    ).path


_Loaded = TypeVar("_Loaded")
_LOADED: dict[tuple[str, str, tuple[str, ...] | None], Any] = {}
_LOADED_LOCK = threading.Lock()


def load_once(
    source: str,
    name: str,
    flags: Sequence[str] | None,
    cache_dir: str | None,
    load: Callable[[str], _Loaded],
) -> _Loaded:
    """Fixed C ``source`` (no OpenMP) built with ``flags`` (None: spf's default flags) into
    ``cache_dir`` (a cached library runs no compiler) and loaded by ``load`` (given the
    library's path), once per process for each ``name``, cache directory and flags: the
    inspector's fixed loops (:mod:`spf.runtime.run_scan`, :mod:`spf.runtime.chain_scan`)."""
    key = (name, str(cache_dir), None if flags is None else tuple(flags))
    with _LOADED_LOCK:
        got = _LOADED.get(key)
        if got is None:
            path = build(source, name=name, openmp=False, cflags=flags, cache_dir=cache_dir).path
            got = _LOADED[key] = load(str(path))
    return cast("_Loaded", got)
