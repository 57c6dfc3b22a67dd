"""Tuning records on disk: ``<cache dir>/tune/<key>.json``, plain readable JSON.

The key is a SHA-256 of the computation's digest (its ``to_json()`` text: statements,
schedules and commands), the arguments' shapes and dtypes (scalars by value), the machine
(CPU model, cores, architecture, spf's version) and the space searched. A record holds the
chosen commands as trace data, which :meth:`spf.schedule.Trace.replay` applies to a copy of
the computation, and what the search measured.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spf._cachedir import default_cache_dir
from spf._version import __version__
from spf.runtime.cache import atomic_write

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.tuning.space import Space

VERSION = 1
"""The record format; a record of another format is ignored (and overwritten)."""


def digest(comp: Computation) -> str:
    """SHA-256 of ``comp.to_json()``: changes whenever the computation or its schedule does."""
    return hashlib.sha256(comp.to_json().encode()).hexdigest()


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the timings depend on besides the code: CPU model, cores, architecture, spf."""
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count() or 1,
        "arch": platform.machine(),
        "spf": __version__,
        "threads": os.environ.get("OMP_NUM_THREADS", ""),  # candidates run at the default
    }


def arg_shapes(args: Mapping[str, Any]) -> dict[str, Any]:
    """``{"A": ["float64", [64, 64]], "N": 64}``: arrays by dtype and shape, scalars by value."""
    out: dict[str, Any] = {}
    for name in sorted(args):
        v = args[name]
        shape = getattr(v, "shape", None)
        if shape == () and hasattr(v, "item"):  # a numpy scalar or 0-d array: its value
            item = v.item()
            out[name] = item if isinstance(item, (int, float, bool)) else repr(item)
        elif shape is not None and hasattr(v, "dtype"):
            out[name] = [str(v.dtype), [int(n) for n in shape]]
        else:
            out[name] = v if isinstance(v, (int, float, str, bool)) else repr(type(v).__name__)
    return out


def _candidate_key(c: object, comp: Computation | None = None) -> str:
    """A user candidate as the key sees it: trace data as JSON; a function by the commands it
    applies to a copy of ``comp`` (the same text closing over another tile size applies
    other commands), else by the hash of its source and the values it closes over, or by its
    identity when the source is unavailable (then no later process reuses the record)."""
    if not callable(c):
        return json.dumps(c, sort_keys=True, default=str)
    if comp is not None:
        try:
            copy = comp.clone()
            c(copy)
            applied = json.dumps(copy.trace.to_data(), sort_keys=True, default=str)
        except Exception:  # a candidate that fails here is keyed by its source
            pass
        else:
            return "applies:" + hashlib.sha256(applied.encode()).hexdigest()[:16]
    try:
        source = inspect.getsource(c)
    except (OSError, TypeError):
        return f"{getattr(c, '__qualname__', type(c).__name__)}@{id(c)}"
    # the values it closes over and its defaults too: one lambda tiling by a captured T
    # is another candidate for T=4 than for T=8
    cells = [cell.cell_contents for cell in getattr(c, "__closure__", None) or ()]
    bound = (cells, getattr(c, "__defaults__", None), getattr(c, "__kwdefaults__", None))
    return hashlib.sha256((source + repr(bound)).encode()).hexdigest()[:16]


def space_data(space: Space, comp: Computation | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {k: [repr(v) for v in vs] for k, vs in sorted(space.options.items())}
    data["candidates"] = [_candidate_key(c, comp) for c in space.candidates]
    if space.cflags is not None:
        data["cflags"] = list(space.cflags)
    return data


def key(comp: Computation, args: Mapping[str, Any], space: Space) -> tuple[str, dict[str, Any]]:
    """The record's key and the data it is the hash of."""
    what = {
        "computation": comp.name,
        "digest": digest(comp),
        "args": arg_shapes(args),
        "machine": machine(),
        "space": space_data(space, comp),
    }
    text = json.dumps(what, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32], what


def directory(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    return Path(cache_dir) if cache_dir is not None else default_cache_dir() / "tune"


def load(name: str, cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The record ``name`` (None when missing, unreadable or of another format)."""
    path = directory(cache_dir) / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != VERSION:
        return None
    return data


def save(
    name: str, record: dict[str, Any], cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Write the record atomically (a concurrent reader sees the old or the new file);
    ``OSError`` where it cannot be written (the caller keeps its result unrecorded)."""
    folder = directory(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    # a temporary file of its own per call (two threads saving one record at once must not
    # move each other's half-written file), removed when the write fails (a full disk)
    atomic_write(path, json.dumps({"format": VERSION, **record}, indent=2, default=str) + "\n")
    return path
