"""Where spf keeps what it caches on disk (docs/backends/c.md): ``$SPF_CACHE_DIR`` when set,
else ``~/.cache/spf``. Used by the build cache (:mod:`spf.runtime.cache`) and by the set
parser's stored tables (:mod:`spf.sets.parse`)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "SPF_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$SPF_CACHE_DIR`` when set, else ``~/.cache/spf``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "spf"
