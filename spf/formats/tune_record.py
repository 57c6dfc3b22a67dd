"""Records of :func:`spf.formats.tune`: one readable JSON file per matrix pattern, kernel,
dtypes, search space and machine, under ``<spf cache dir>/formats_tune/``.

The key hashes the pattern (shape, nnz, the canonical ``indptr`` and ``indices``), never the
values: the best format depends on where the entries are, not on what they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

import numpy as np

from spf._cachedir import default_cache_dir
from spf.runtime.cache import atomic_write

__all__ = ["load_record", "machine", "record_key", "record_path", "save_record"]

VERSION = 1


def machine() -> dict[str, object]:
    """What identifies this machine's speed: host, architecture, CPU model, usable CPUs."""
    model = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "host": platform.node(),
        "arch": platform.machine(),
        "cpu": model,
        "cpus": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
    }


def record_key(
    shape: tuple[int, int],
    indptr: np.ndarray[Any, Any],
    indices: np.ndarray[Any, Any],
    settings: dict[str, object],
) -> tuple[str, dict[str, object]]:
    """``(hex digest, the readable fields it hashes)``."""
    pattern = hashlib.sha256()
    pattern.update(np.ascontiguousarray(indptr, dtype=np.int64).tobytes())
    pattern.update(np.ascontiguousarray(indices, dtype=np.int64).tobytes())
    fields: dict[str, object] = {
        "version": VERSION,
        "shape": list(shape),
        "nnz": len(indices),
        "pattern_sha256": pattern.hexdigest(),
        **settings,
        "machine": machine(),
    }
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    return digest[:32], fields


def record_path(digest: str, record_dir: str | os.PathLike[str] | None) -> Path:
    base = Path(record_dir) if record_dir is not None else default_cache_dir() / "formats_tune"
    return base / f"{digest}.json"


def load_record(path: Path, key: dict[str, object]) -> dict[str, Any] | None:
    """The record at ``path`` when it is readable and made for ``key``; else None."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    return record


def save_record(path: Path, record: dict[str, Any]) -> None:
    """Write ``record`` atomically (a reader never sees half a file); a cache directory that
    cannot be written is not an error (the result is simply not remembered)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
