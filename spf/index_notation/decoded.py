"""The remembered einsum entries this process has decoded, by the sha256 of their bytes.

An entry (:mod:`spf.index_notation.remembered`) holds the phases' signatures, translation
units and fact plans: immutable values, unpickled into ~350 containers for
``spgemm_csr()``'s single pass. A warm ``compile()`` of a formula this process compiled or
loaded before (a fresh ``spf.einsum`` of the same formula, or a second SparseEinsum of it)
reads the entry's bytes and checks their digest as before, then takes the values decoded
from the same bytes instead of unpickling them again: the kernels are still built afresh
(their own binders, fact checkers and call state), only the immutable values they are
built from are shared, as the libraries are (``spf.runtime.kernel``'s loaded libraries).
Keyed by content, an entry can never be stale; at most :data:`LIMIT` are kept (the one used
longest ago dropped first).
"""

from __future__ import annotations

import threading
from typing import Any, Final

__all__ = ["LIMIT", "DecodedEntries"]

LIMIT: Final = 64
"""How many decoded entries a process keeps."""


class DecodedEntries:
    """Decoded entries by digest, the :data:`LIMIT` most recently put."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._entries: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> dict[str, Any] | None:
        """The entry decoded from the bytes of sha256 ``digest``, or None (a hit becomes the
        latest: the entries kept are those used last)."""
        with self._lock:
            entry = self._entries.pop(digest, None)
            if entry is not None:
                self._entries[digest] = entry
            return entry

    def put(self, digest: str, entry: dict[str, Any]) -> None:
        """Keep ``entry``, what the bytes of sha256 ``digest`` decode to."""
        with self._lock:
            self._entries.pop(digest, None)
            self._entries[digest] = entry
            while len(self._entries) > self._limit:
                del self._entries[next(iter(self._entries))]

    def clear(self) -> None:
        """Forget every entry (a test's fresh start)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
