"""Checked calls remembered by the contents of their index arrays (API.md §16).

Everything a ``check=True`` call of a C kernel verifies about its index arrays (UF
arguments) depends on their contents and the parameter values only: each value read in its
UF's declared range, the declared orders, the assumptions and the bounds obligations. A
kernel therefore remembers the contents its checked calls verified, as a
:class:`~spf.runtime.plan.Plan` remembers the arrays it was inspected on: the parameter
values, and each index array's shape and 64-bit XXH3 hash
(:func:`spf.runtime.checksum.digest`). A later checked call whose index arrays hash the
same runs the unchecked function, after testing that no written array overlaps another (that
depends on where the arrays are, not on what they hold). Any other contents (new arrays, or
the same arrays changed in place, one entry or many) are checked in full, and remembered
once they passed; a call that fails is not remembered.

The rule (measured on the shared 2-core machine, docs/backends/c.md): XXH3 reads an index
array at 25-50 GB/s (0.1-0.3 ns per entry, in cache or not), while the cheapest test of an
entry inside a kernel's loop, a compare and a branch that also keeps the loop from being
vectorized, cost 0.1-0.9x of the whole unchecked kernel (1.1-1.9x calls: ``sptrsv_csr``,
``gauss_seidel_csr``, ``spmv(CSR)``), and a pass of its own over the arrays (``ilu0_csr``'s
facts, checked before its loops) as much. So every fact over index arrays is remembered,
with the range and order tests of the values, and ``kernel.check_cost`` says
``"remembered"`` for each (with where a call on new contents checks it). Two exceptions:

* index arrays of fewer than :data:`MIN_BYTES` bytes in all: hashing them (about a
  microsecond of Python per array) costs more than their checks, so every call checks them;
* a kernel with a fault record (run-time index arrays, arrays it allocates: spf.codegen.
  faults), and one that writes an index array: its checks do not depend on the index
  arguments alone, so it remembers nothing (its superlinear facts excepted,
  :mod:`spf.runtime.fact_check`).

The last :data:`REMEMBERED` contents are kept per kernel (the oldest forgotten first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from spf.runtime.checksum import digest

if TYPE_CHECKING:
    from spf.runtime.binding import Binder

REMEMBERED = 32
"""Contents remembered per kernel (the oldest is forgotten first)."""
MIN_BYTES = 16384
"""Index arrays of fewer bytes in all are checked every call: below this, hashing them
(about 1 us of Python per array) costs more than the checks in the loops."""

Key = tuple[Any, ...]


class KnownContents:
    """The contents of the index arrays (positions ``uf`` among a binding's arrays) that
    checked calls verified: :meth:`key` of a call, ``key in known``, :meth:`add`."""

    def __init__(self, uf: Sequence[int]) -> None:
        self.uf = tuple(uf)
        self._seen: dict[Key, None] = {}

    @classmethod
    def of(cls, binder: Binder) -> KnownContents | None:
        """The contents a kernel of ``binder``'s signature remembers, or None when it has no
        index array or writes one (its checks then depend on more than the arguments)."""
        uf = [n for n, d in enumerate(binder.data) if d.is_uf]
        if not uf or any(not binder.data[n].arg.const for n in uf):
            return None
        return cls(uf)

    def key(self, values: tuple[Any, ...], arrays: Sequence[Any]) -> Key | None:
        """What a call's checks depend on: the parameter ``values`` and each index array's
        shape and hash (the binding fixed their dtypes); None when the index arrays are too
        small to be worth hashing (:data:`MIN_BYTES`)."""
        picked = [arrays[n] for n in self.uf]
        if sum(a.nbytes for a in picked) < MIN_BYTES:
            return None
        return (values, *[(a.shape, digest(a)) for a in picked])

    def __contains__(self, key: Key) -> bool:
        return key in self._seen

    def add(self, key: Key) -> None:
        """Remember ``key`` as verified (forgetting the oldest past :data:`REMEMBERED`)."""
        seen = self._seen
        seen[key] = None
        while len(seen) > REMEMBERED:
            try:
                del seen[next(iter(seen))]
            except (KeyError, RuntimeError, StopIteration):  # another thread's change
                break
