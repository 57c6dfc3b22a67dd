"""Checked calls remembered by the contents of their index arrays (API.md §16).

Everything a ``check=True`` call of a C kernel verifies about its index arrays (UF
arguments) depends on their contents and the parameter values only: each value read in its
UF's declared range, the declared orders, the assumptions and the bounds obligations. A
kernel therefore remembers the contents its checked calls verified, as a
:class:`~spf.runtime.plan.Plan` remembers the arrays it was inspected on: the parameter
values, and each index array's 64-bit XXH3 hash (:func:`spf.runtime.checksum.digest`; it
covers the length, and the binding fixes dtypes and trailing extents). A later checked call
whose index arrays hash the same runs the unchecked loops, after testing that no written
array overlaps another (that depends on where the arrays are, not on what they hold): one C
call of the checked function with the known-contents word of its bounds set
(:func:`spf.codegen.arg_checks.known_lines`), which tests the overlap and calls the
unchecked function. Any other contents (new arrays, or
the same arrays changed in place, one entry or many) are checked in full, and remembered
once they passed; a call that fails is not remembered.

The rule, measured on the shared 2-core machine (CPU time, fastest and median of 25
interleaved batches, checked/unchecked; docs/backends/c.md): XXH3 reads an index array at
10-50 GB/s (it shares the caches with other processes), about 0.1-0.4 ns an entry, plus
about 2 us of Python per call for the key; a fact tested inside a kernel's loop (sorted rows,
the diagonal's place, ``col(k) <= i``: a compare and a branch per entry that also keep the
loop from being vectorized) or in a pass of its own costs 0.3-1.1x of the unchecked kernel
(``spmv(CSR)``, ``sptrsv_csr``, ``gauss_seidel_csr``, ``ilu0_csr``: 1.3-2.1x checked calls on
the SuiteSparse matrices of 100k entries and more, 1.0-1.3x remembered). So a fact over index
arrays is remembered (``kernel.check_cost`` says ``"remembered"``, with where a call on new
contents checks it), except:

* a kernel with no such fact: the range and order tests of the values it reads cost less
  than the hash (``spmv_csr``: 1.02-1.08x checked, 1.06-1.22x hashed), so it checks every call;
* index arrays of fewer than :data:`MIN_BYTES` bytes in all: the key's fixed cost is more
  than the checks (at 20-70 KiB the remembered call was 0-30% slower than the checked one,
  from 280 KiB on 15-45% faster), so every call checks them;
* a size class (the index arrays' bytes, to a power of two) where checking is faster: the
  first calls on known contents of each size class time both ways (:data:`TRIALS` each:
  hashing and the unchecked loops, or the checked call; in pairs of calls the same way, the
  second of each counted, on the calling thread's CPU time), and the faster is kept for that
  size class; where checking wins, nothing is hashed any more
  (``spmv(CSR)`` with int64 indices: its one in-loop test is cheap next to an int64 kernel,
  the hash of int64 arrays is not);
* a kernel with a fault record (run-time index arrays, arrays it allocates: spf.codegen.
  faults), and one that writes an index array: its checks do not depend on the index
  arguments alone, so it remembers nothing (its superlinear facts excepted,
  :mod:`spf.runtime.fact_check`).

The last :data:`REMEMBERED` contents are kept per kernel (the oldest forgotten first).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from spf.runtime.checksum import digest

if TYPE_CHECKING:
    from spf.runtime.binding import Binder

REMEMBERED = 32
"""Contents remembered per kernel (the oldest is forgotten first)."""
MIN_BYTES = 131072
"""Index arrays of fewer bytes in all (128 KiB) are checked every call: below this, the
key's hashes and its Python cost more than the checks in the loops (measured: the module
docstring)."""

TRIALS = 3
"""Calls on known contents timed each way (hashed and unchecked, or checked) before a size
class of index arrays keeps the faster way (0: always the unchecked loops). The trials run
in pairs of calls the same way, and only the second of a pair counts
(:meth:`KnownContents.timed`)."""

_ORDER = (True, False, False, True)
"""The ways of successive pairs of trials (True: hashed and unchecked), repeated: each way
as often early as late (A B B A), so calls that get faster as the caches warm favour
neither."""

Key = tuple[Any, ...]
_NBYTES = operator.attrgetter("nbytes")


class KnownContents:
    """The contents of the index arrays (positions ``uf`` among a binding's arrays) that
    checked calls verified: :meth:`key` of a call, ``key in known``, :meth:`add`; and, per
    size of the index arrays (a power of two), whether calls on known contents pay
    (:meth:`route`, :meth:`timed`)."""

    def __init__(self, uf: Sequence[int]) -> None:
        self.uf = tuple(uf)
        self._pick: Callable[[Sequence[Any]], Any] = operator.itemgetter(*self.uf)
        """The index arrays among a binding's arrays, in one C call (one array: itself)."""
        self._seen: dict[Key, None] = {}
        self._verdict: dict[int, bool] = {}
        """Per size class: True, known contents run the unchecked loops; False, every call
        checks (and nothing is hashed)."""
        self._trials: dict[int, tuple[list[float], list[float], list[int]]] = {}
        """Per size class still undecided: the seconds of the known-contents calls (hashes
        included) and of the checked calls on known contents counted so far, and how many
        trial calls ran (counted or not)."""
        self.settled = True
        """No size class of remembered contents is in its trials: a call on known contents
        need not read the clock (:meth:`add` of a new size class clears it)."""

    @classmethod
    def of(cls, binder: Binder) -> KnownContents | None:
        """The contents a kernel of ``binder``'s signature remembers, or None when it has no
        index array, writes one (its checks then depend on more than the arguments) or has
        no fact over index arrays to check (module docstring: the rule)."""
        uf = [n for n, d in enumerate(binder.data) if d.is_uf]
        if not uf or any(not binder.data[n].arg.const for n in uf):
            return None
        if not binder.has_array_facts:  # range and order tests only: cheaper than a hash
            return None
        return cls(uf)

    def key(self, values: tuple[Any, ...], arrays: Sequence[Any]) -> Key | None:
        """What a call's checks depend on: the size class of the index arrays, the parameter
        ``values`` and each index array's hash; None when the index arrays are too small to
        be worth hashing (:data:`MIN_BYTES`) or calls of their size were found to check
        faster than they hash (:meth:`timed`)."""
        picked = self._pick(arrays)
        if len(self.uf) == 1:
            picked = (picked,)
        size = sum(map(_NBYTES, picked))
        if size < MIN_BYTES:
            return None
        size_class = size.bit_length()
        if self._verdict.get(size_class) is False:
            return None
        # a hash covers the length; the binding fixed each array's dtype and its trailing
        # extents for these parameter values: the shapes need not be part of the key
        return (size_class, values, *map(digest, picked))

    def decided(self, key: Key) -> bool:
        """Whether calls on known contents of ``key``'s size class take one way for good
        (no trial to time: the caller need not read the clock)."""
        return TRIALS <= 0 or key[0] in self._verdict

    def route(self, key: Key) -> bool:
        """For a call on known contents ``key``: True, run the unchecked loops; False, check
        it anyway (a trial of the checked call, while its size class is undecided: the
        known-contents call goes first, then the ways follow :data:`_ORDER`)."""
        verdict = self._verdict.get(key[0])
        if TRIALS <= 0 or verdict is not None:
            return TRIALS <= 0 or verdict is True
        trial = self._trials.get(key[0])
        calls = trial[2][0] if trial is not None else 0
        return _ORDER[calls // 2 % len(_ORDER)]

    def timed(self, key: Key, unchecked: bool, seconds: float) -> None:
        """Note a call on known contents of ``key``'s size class that took ``seconds``
        (hashes included for an ``unchecked`` one); only the second call of each pair
        (:meth:`route`) counts: the first of a pair runs after the other way's loops (its
        branch history and caches are the other function's; the first calls on new arrays
        measured 2-6x the later ones, and alternating calls favoured the checked way here).
        After :data:`TRIALS` of each, the faster way is kept for that size class."""
        size_class = key[0]
        if TRIALS <= 0 or size_class in self._verdict:
            return
        done, checked, calls = self._trials.setdefault(size_class, ([], [], [0]))
        calls[0] += 1
        if calls[0] % 2 == 0:  # the second of its pair
            (done if unchecked else checked).append(seconds)
        if len(done) >= TRIALS and len(checked) >= TRIALS:
            self._verdict[size_class] = min(done) < min(checked)
            self._trials.pop(size_class, None)  # another thread may have decided too
            self.settled = not self._trials and all(k[0] in self._verdict for k in self._seen)

    def __contains__(self, key: Key) -> bool:
        return key in self._seen

    def add(self, key: Key) -> None:
        """Remember ``key`` as verified (forgetting the oldest past :data:`REMEMBERED`)."""
        seen = self._seen
        seen[key] = None
        if TRIALS > 0 and key[0] not in self._verdict:
            self.settled = False  # its calls on known contents are timed until decided
        while len(seen) > REMEMBERED:
            try:
                del seen[next(iter(seen))]
            except (KeyError, RuntimeError, StopIteration):  # another thread's change
                break
