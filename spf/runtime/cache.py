"""The on-disk cache of compiled libraries (docs/backends/c.md).

Layout: ``<cache>/<key[:2]>/<name>-<key[:16]>.{c,so,sha256,log}`` where ``key`` is the sha256
of spf's version, the compiler's version, the machine (when ``-march=native`` is used), the
compiler flags and the source. Every file is written to a temporary name in the same directory
and moved into place with :func:`os.replace`, so readers never see a partial file and
concurrent writers of the same key both succeed (they write the same bytes); a build holds
the entry's lock (:meth:`CacheEntry.building`), so processes asking for one library at once
run the compiler once.

A cached library is used only when it can be trusted (:meth:`CacheEntry.trusted`): the source
kept next to it is exactly the source asked for, and the library's sha256 is the one recorded
when it was built (``.sha256``). A truncated, corrupted or replaced library, an edited source,
or an entry from a version of spf that wrote no digest is rebuilt, never loaded.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import platform
import re
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from spf._cachedir import CACHE_ENV as CACHE_ENV
from spf._cachedir import default_cache_dir as default_cache_dir
from spf._version import __version__
from spf.errors import ArgumentError


def spf_version() -> str:
    """The version of spf that cache keys include."""
    return __version__


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    """The cache directory to use: the argument, else :func:`default_cache_dir`;
    :class:`~spf.errors.ArgumentError` for an argument that is not a directory path (another
    type, or an empty string, which would be the current directory)."""
    if cache_dir is None:
        return default_cache_dir()
    try:
        text = os.fspath(cache_dir) if not isinstance(cache_dir, bytes) else None
    except TypeError:
        text = None
    if not isinstance(text, str) or not text:
        raise ArgumentError(
            f"cache_dir must be a directory path (a str or os.PathLike), got "
            f"{type(cache_dir).__name__} {cache_dir!r}; pass None for $SPF_CACHE_DIR or "
            "~/.cache/spf"
        )
    return Path(text).expanduser()


@functools.cache
def machine_tag() -> str:
    """What ``-march=native`` depends on: the architecture and the CPU's feature flags."""
    parts = [platform.machine()]  # not platform.processor(): it runs ``uname -p`` (~10 ms)
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in ("flags", "Features", "model name", "isa"):
            parts.append(line.split(":", 1)[-1].strip())
            if key in ("flags", "Features"):
                break
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def cache_key(
    version: str, flags: Sequence[str], source: str, *, spf_version: str | None = None
) -> str:
    """sha256 hex digest of spf's version (``spf.__version__``), the compiler version, the
    flags (and machine) and the source: a new spf never reuses an older spf's libraries."""
    h = hashlib.sha256()
    h.update(f"spf {__version__ if spf_version is None else spf_version}".encode())
    h.update(b"\0")
    h.update(version.encode())
    h.update(b"\0")
    h.update("\0".join(flags).encode())
    h.update(b"\0")
    if any("native" in f for f in flags):
        h.update(machine_tag().encode())
    h.update(b"\0")
    h.update(source.encode())
    return h.hexdigest()


_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_name(name: str) -> str:
    """``name`` usable in a file name (other characters become ``_``)."""
    cleaned = _SAFE.sub("_", name).lstrip(".")
    return cleaned[:64] or "kernel"


class CacheEntry:
    """The paths of one cached build (they may not exist yet)."""

    def __init__(self, root: Path, name: str, key: str, source_suffix: str = ".c") -> None:
        self.key = key
        self.directory = root / key[:2]
        stem = f"{safe_name(name)}-{key[:16]}"
        self.stem = stem
        self.library = self.directory / f"{stem}.so"
        self.source = self.directory / f"{stem}{source_suffix}"
        self.log = self.directory / f"{stem}.log"
        self.digest = self.directory / f"{stem}.sha256"

    def temp_path(self, suffix: str) -> Path:
        """A fresh, empty temporary file next to the entry (the caller removes or renames it)."""
        fd, name = tempfile.mkstemp(dir=self.directory, prefix=f".{self.stem}.", suffix=suffix)
        os.close(fd)
        return Path(name)

    def trusted(self, source: str) -> bool:
        """True when the cached library may be loaded: it exists, the source next to it is
        ``source`` byte for byte, and its sha256 is the digest recorded when it was built."""
        try:
            kept = self.source.read_text(encoding="utf-8")
            recorded = self.digest.read_text(encoding="ascii").strip()
            actual = file_sha256(self.library)
        except (OSError, UnicodeDecodeError):
            return False
        return kept == source and recorded == actual

    def building(self) -> contextlib.AbstractContextManager[None]:
        """Hold the entry's build lock (:func:`file_lock` on ``<stem>.lock``) while a process
        builds it: the ranks of an MPI job or the workers of a test run asking for one
        library at once run the compiler once, the others waiting, then finding it
        :meth:`trusted`."""
        return file_lock(self.directory / f"{self.stem}.lock")

    def install(self, built: Path) -> None:
        """Record ``built``'s digest, then move it into place as the cached library."""
        atomic_write(self.digest, file_sha256(built) + "\n")
        os.replace(built, self.library)

    def read_log(self) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created, with its folder, when missing) for
    the block: processes making one cached thing at once make it once, the others waiting.
    Where the lock cannot be taken (a folder that cannot be written, a file system without
    ``flock``) the block runs unlocked, as concurrent writers of the cache always could."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a")  # noqa: SIM115
    except OSError:
        yield
        return
    with handle:
        with contextlib.suppress(OSError):
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield  # closing the file releases the lock


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and :func:`os.replace`."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(name, path)
    except BaseException:
        remove_quietly(Path(name))
        raise


def file_sha256(path: Path) -> str:
    """sha256 hex digest of the file at ``path``."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
