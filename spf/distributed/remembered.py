"""Remembered row-distributed compiles: a :class:`~spf.distributed.kernel.DistributedKernel`
rebuilt from disk without analysis, code generation or a compiler run.

``comp.compile(target="mpi")`` of a computation with ``distribute_rows`` records, under
``<cache>/warm/<key[:2]>/<key>.json`` (beside the C compiles' entries,
:mod:`spf.runtime.warm`), what the kernel's construction produced: the layout the analysis
found, the rank-local and inspector computations (their IR), the local function's signature,
the prefix split, the executor's C + MPI source and arguments (:class:`Generated`, pickled,
as spf's own values are pickled for worker processes) and the build-cache key of the
executor's library. Every rank of every launch that compiles the same state after the first
loads that entry and the library it names: no analysis, no printing, and no ``mpicc`` run
(not even ``mpicc --version``).

The key (:func:`key`) is the sha256 of everything the entry depends on: the fingerprint of the
computation's IR, its distribution (loop, data dimensions, owner), the function name,
``check``, ``openmp``, ``cflags``, the MPI compiler (its resolved path, size and modification
time, and the variables that make the wrapper run another compiler or add flags:
:data:`spf.runtime.mpi.WRAPPER_ENVIRONMENT`), the machine for ``-march=native`` and spf's
version and source files. An entry whose recorded digest does not match its content, that
does not unpickle, or whose library is missing or not trusted is a miss (the kernel is then
generated and built as on a first compile, and the entry written again); ranks writing the
same entry at once each write a temporary file and rename it into place.
"""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from spf.codegen.signature import Arg, Signature
    from spf.distributed.analysis import Layout
    from spf.distributed.distribution import Distribution
    from spf.distributed.prefix import Lowered
    from spf.ir import ComputationIR

FORMAT = 1
"""The entry layout; part of the key."""


@dataclass(frozen=True)
class Generated:
    """What constructing a distributed kernel produces before its library is built."""

    layout: Layout
    local: ComputationIR
    inspector: ComputationIR
    local_sig: Signature
    split: Lowered | None
    source: str
    args: tuple[Arg, ...]
    parallel: bool
    """Whether a generated function has a parallel loop (with ``openmp``)."""


@dataclass(frozen=True)
class Remembered:
    """A remembered entry: the generated state and its executor's build-cache key."""

    generated: Generated
    library_key: str


def key(
    ir: ComputationIR,
    dist: Distribution,
    name: str,
    check: bool,
    *,
    argv: Sequence[str],
    flags: Sequence[str],
) -> str | None:
    """The entry's key (module docstring), or None when the compiler is not found."""
    from spf.runtime.mpi import remembered_parts
    from spf.runtime.warm import build_identity

    build = build_identity(argv, flags)
    if build is None:
        return None
    parts = [f"spf-distributed {FORMAT}", *build, *remembered_parts(" ".join(argv)), repr(name),
             str(check), ir.fingerprint, repr(dist)]  # fmt: skip
    return hashlib.sha256("\0\0".join(parts).encode()).hexdigest()


def load(entry_key: str, cache_dir: str | os.PathLike[str] | None) -> Remembered | None:
    """The entry remembered under ``entry_key``, or None (none, or one that cannot be
    trusted)."""
    from spf.runtime.warm import entry_path, payload_digest

    try:
        data = json.loads(entry_path(entry_key, cache_dir).read_text(encoding="utf-8"))
        payload = data["payload"]
        if data["sha256"] != payload_digest(payload) or payload["format"] != FORMAT:
            return None
        generated = pickle.loads(base64.b64decode(payload["generated"]))  # spf's own entry
        if not isinstance(generated, Generated):
            return None
        return Remembered(generated, str(payload["library_key"]))
    except (OSError, ValueError, KeyError, TypeError, pickle.UnpicklingError, AttributeError,
            ImportError, EOFError):  # fmt: skip
        return None


def store(
    entry_key: str,
    generated: Generated,
    library_key: str,
    cache_dir: str | os.PathLike[str] | None,
) -> None:
    """Record ``generated`` and its library's key (skipped silently where the cache is not
    writable: remembering is an optimisation); written through a temporary file and an
    atomic rename, so ranks storing the same entry at once never leave a torn one."""
    from spf.runtime.cache import atomic_write
    from spf.runtime.warm import entry_path, payload_digest

    blob = pickle.dumps(generated, protocol=pickle.HIGHEST_PROTOCOL)
    payload: dict[str, Any] = {
        "format": FORMAT,
        "generated": base64.b64encode(blob).decode("ascii"),
        "library_key": library_key,
    }
    path = entry_path(entry_key, cache_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"payload": payload, "sha256": payload_digest(payload)}))
    except OSError:
        pass


__all__ = ["Generated", "Remembered", "key", "load", "store"]
