"""The range pass's fallback (:mod:`spf.codegen.range_pass`), built when a call first needs it.

A kernel's checked function tests its ranged index arrays whole before its loops; when a
value is out of range it returns with :data:`~spf.codegen.range_pass.FAULT_READS` and the
kernel runs ``<name>_spf_checked_reads`` on the same arguments, the loops with every read
checked. The kernel's own build leaves that function out (it is printed between ``#ifdef``
:data:`~spf.codegen.range_pass.READS_MACRO` and ``#else``); :func:`build_fallback` builds
the kernel's unit again with the macro defined, the fallback alone, with the kernel's own
compiler and flags, cached like any build.
"""

from __future__ import annotations

import shlex
import threading
from typing import TYPE_CHECKING, Any

from spf.codegen.range_pass import READS_MACRO, READS_SUFFIX
from spf.errors import InternalError
from spf.runtime.build import WARNING_FLAGS, BuildResult, build

if TYPE_CHECKING:
    from pathlib import Path

_LOCK = threading.Lock()
"""One build at a time: two threads whose calls both need a fallback build it once."""

_FIXED = ("-fPIC", "-shared", "-fopenmp", *WARNING_FLAGS)
"""Flags :func:`~spf.runtime.build.build` adds itself (not passed as ``cflags``)."""


def options(command: str, library: Path) -> dict[str, Any]:
    """The :func:`~spf.runtime.build.build` options of the fallback's build, read from the
    kernel's compiler ``command`` (``<compiler> -std=... <flags> -o <library> <source>
    -lm``) and its ``library`` (in its cache directory's ``<digest prefix>/``): the same
    compiler, language, optimisation flags and OpenMP, plus ``-D``:data:`READS_MACRO` and
    ``-w`` (the unit's helpers that the fallback does not call are unused there)."""
    words = shlex.split(command)
    std = next((k for k, w in enumerate(words) if w.startswith("-std=")), None)
    if std is None or "-o" not in words:
        raise InternalError(f"cannot read the compiler command {command!r} of a kernel")
    flags = words[std + 1 : words.index("-o")]
    return {
        "compiler": shlex.join(words[:std]),
        "language": "c++" if "c++" in words[std] else "c",
        "openmp": "-fopenmp" in flags,
        "cflags": [*(f for f in flags if f not in _FIXED), f"-D{READS_MACRO}", "-w"],
        "cache_dir": library.parent.parent,
    }


def build_fallback(name: str, source: str, command: str, library: Path) -> BuildResult:
    """Build the fallback of kernel ``name`` (its unit's ``source``, which ``command``
    built into ``library``); cached on disk like the kernel's own library."""
    with _LOCK:
        return build(source, name=name + READS_SUFFIX, **options(command, library))
