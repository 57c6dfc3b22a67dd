"""Checked calls remembered by the contents of their index arrays (API.md §16).

Everything a ``check=True`` call of a C kernel verifies about its index arrays (UF
arguments) depends on their contents and the parameter values only: each value read in its
UF's declared range, the declared orders, the assumptions and the bounds obligations. A
kernel therefore remembers the contents its checked calls verified, as a
:class:`~spf.runtime.plan.Plan` remembers the arrays it was inspected on: the parameter
values, and each index array's 64-bit hash (XXH3, or XXH64 for an array under 16 KiB:
:func:`hasher`; it covers the length, and the binding fixes dtypes and trailing extents).
A later checked call whose index arrays hash the same runs the unchecked loops, after
testing that no written array overlaps another (that depends on where the arrays are, not
on what they hold): one C call of the checked function with the known-contents word of
its bounds set (:func:`spf.codegen.arg_checks.known_lines`), which tests the overlap and
calls the unchecked function. Any other contents (new arrays, or the same arrays changed in
place, one entry or many) are checked in full, and remembered
once they passed; a call that fails is not remembered.

The rule, measured on the shared 2-core machine (CPU time, fastest and median of 25
interleaved batches, checked/unchecked; docs/backends/c.md): XXH3 reads an index array at
10-50 GB/s (it shares the caches with other processes), about 0.1-0.4 ns an entry, plus
about 1 us of Python per call for the key (0.15-0.2 us once a look's calls are settled:
:func:`key_function`); a fact tested inside a kernel's loop (sorted rows,
the diagonal's place, ``col(k) <= i``: a compare and a branch per entry that also keep the
loop from being vectorized) or in a pass of its own costs 0.3-1.1x of the unchecked kernel
(``spmv(CSR)``, ``sptrsv_csr``, ``gauss_seidel_csr``, ``ilu0_csr``: 1.3-2.1x checked calls on
the SuiteSparse matrices of 100k entries and more, 1.0-1.3x remembered), and so do the
per-row facts on small matrices (``ilu0_csr``, ``gauss_seidel_csr`` on 2,000 rows of one
entry: 3-4 us of checks against a kernel of 3-5 us, while the key costs about 1 us). So a
kernel with facts over index arrays remembers the contents its checked calls verified, at
any size (``kernel.check_cost`` says ``"remembered"``, with where a call on new contents
checks them), and which way is cheaper is measured per size, except:

* a kernel with no such fact: the range and order tests of the values it reads cost less
  than the key (remembering every kernel was measured on the whole ``scale`` table, both
  versions run at once on the loaded machine: cells of kernels without facts under 30 us
  went from a median 1.135x to 1.211x, those over 300 us from 1.063x to 1.077x), so it
  checks every call;

* a size class (the index arrays' bytes, to a power of two) where checking is faster: the
  first calls on known contents of each size class time both ways (:data:`TRIALS` each:
  hashing and the unchecked loops, or the checked call; in pairs of calls the same way, the
  second of each counted, on the calling thread's CPU time), and the faster is kept for that
  size class; where checking wins, nothing is hashed any more (``spmv(CSR)`` on a few
  hundred entries: its one in-loop test costs less than the key's Python; with int64 indices
  on larger ones, the hash of int64 arrays costs more than its test);
* a size class whose checked calls pass :data:`MISSES` new contents in a row (no call on
  contents verified before between them) while its trials are undecided: calls that never
  repeat their arrays would pay the hashes for nothing, so that size class checks every call
  and hashes no more;
* a kernel with a fault record (run-time index arrays, arrays it allocates: spf.codegen.
  faults), and one that writes an index array: its checks do not depend on the index
  arguments alone, so it remembers nothing (its superlinear facts excepted,
  :mod:`spf.runtime.fact_check`).

The last :data:`REMEMBERED` contents are kept per kernel (the oldest forgotten first).

**In C.** A kernel whose checked function hashes its index arrays itself
(:mod:`spf.codegen.contents_hash`, ``spf.runtime.kernel.Kernel._hashed``: one thread, no
fault record, no index array written, the overlap test in C) keys no call in Python, and the
rule above changes with the price of the key. Each look's bounds (``Slot.hashed``) hold the
hash of the contents it verified last; the checked function, asked for the hash (the
known-contents word 2: :func:`spf.codegen.arg_checks.known_lines`), hashes the index arrays
after the overlap test and runs the unchecked loops when the hash is that one, and otherwise
returns the hash having run nothing: the kernel then checks the contents in full and
remembers ``(parameter values, hash)`` once they passed (:class:`VerifiedHashes`, the last
:data:`REMEMBERED`), or runs the unchecked function on contents verified before, and the
look's bounds take the new hash. That hash read ~55-62 GB/s from the caches here (0.15 us on
8 KB, 1.1-2.0 us on 70-120 KB) where XXH3 from Python cost the kernel after it 1-2 us more
than its own time, and a call on known contents is one C call with no Python look-up
(measured on the shared 2-core machine, loaded: docs/backends/c.md, "Hashed in C"). So it
pays for kernels without facts too (the ranges and orders their loops test, remembered the
same way): each look of arguments (``spf.runtime.binding.Slot``: the parameter values and
the arrays' shapes) times the hashed way against the checked loops in the same trials
(:data:`TRIALS`, :data:`WARMUP`, :data:`_ORDER`; both ways are one C call; ``TRIALS = 0``
hashes always) and keeps the faster for itself: not per size class, since index arrays of
one size favour either way by their matrix (SELL(8, 1)'s checked loops cost about the
hashed way on ``arrow`` and 1.15x it (1.26x the unchecked loops) on a 10k dense row of
the same size class, which took the way ``arrow``'s trials kept). :data:`MISSES` does not
apply: on new contents the hash is a small part of a checked call.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from spf.runtime.checksum import digest, xxh3, xxh64

if TYPE_CHECKING:
    from spf.runtime.binding import Binder, Slot

REMEMBERED = 32
"""Contents remembered per kernel (the oldest is forgotten first)."""
MISSES = 16
"""Checked calls on new contents a size class of index arrays takes, with none on known
contents, before it stops hashing (calls that never repeat their arrays)."""

TRIALS = 5
"""Calls on known contents timed each way (hashed and unchecked, or checked) before a size
class of index arrays keeps the faster way (0: always the unchecked loops). The trials run
in pairs of calls the same way, and only the second of a pair counts
(:meth:`KnownContents.timed`). Measured on the loaded 2-core machine (8 fresh kernels per
cell against the two ways' C time, interleaved): with 3 of each, the trials kept the way
6-19% slower in 4 of 8 kernels of int32 ``spmv(SELL(8, 32))`` on ``cryg2500`` and 1 of 8
of int64 ``spmv(BDIA(4))`` there (10-20 us calls), with 5 in none; cells with the ways
further apart were right with either (4 more calls a way, once per kernel and size)."""

_ORDER = (True, False, False, True)
"""The ways of successive pairs of trials (True: hashed and unchecked), repeated: each way
as often early as late (A B B A), so calls that get faster as the caches warm favour
neither."""
WARMUP = 4
"""Trial calls of a size class not counted at all: the first pair each way (on known contents
the first counted calls measured 1.4-1.8x the later ones, the checked call's 1.1-1.4x here:
counting them made trials keep checking where the hashed way was faster)."""

Key = tuple[Any, ...]
_NBYTES = operator.attrgetter("nbytes")

SMALL = 16384
"""Bytes below which an index array's hash in a key is XXH64 instead of XXH3
(:func:`hasher`)."""


def hasher(nbytes: int) -> Callable[[Any], int]:
    """The hash of an index array of ``nbytes`` bytes in a key, one C call on its buffer as it
    is (an index array the binding accepted is C-contiguous): XXH64 below :data:`SMALL`
    bytes, XXH3 from there (:func:`~spf.runtime.checksum.digest` without ``xxhash``).

    XXH3 reads 3-4x faster than XXH64 but, on arrays past a few hundred bytes, runs wide
    vector code whose cost lands on the code after it: measured on the shared 2-core
    machine (AVX-512, loaded by others; CPU time of batches, each a hash of ``col`` and
    ``rowptr`` then the kernel), an XXH3 hash cost the batch 2-4x its own time (1.3-2.6 us
    more on ``spmv(CSR)`` of ``olm1000``, ``cryg2500``, ``jagmesh7``), XXH64 about its own
    time; a checked ``gauss_seidel_csr`` call on known contents on ``karate`` and
    ``west0067`` (three index arrays of 0.1-1 KiB) went from 1.42-1.48x the unchecked call
    to 1.23-1.26x with XXH64. Past about 16-32 KiB per array XXH3's speed wins again
    (``cryg2500``'s 49 KiB ``col``: 13.2 us against 14.2 us a call). Both cover the length;
    which one a content's key holds follows from its size, so equal contents give equal
    keys."""
    if xxh3 is None or xxh64 is None:
        return digest
    return xxh64 if nbytes < SMALL else xxh3


def _digest(a: Any) -> int:
    return hasher(a.nbytes)(a)


_DIGEST: Callable[[Any], int] = _digest
"""Each index array's hash in a key (:func:`hasher` of its bytes)."""

KeyOf = Callable[[tuple[Any, ...], Sequence[Any]], Key]
"""``(values, arrays) -> key`` of the calls of one look (:func:`key_function`)."""


def key_function(
    uf: tuple[int, ...], size_class: int, hashers: tuple[Callable[[Any], int], ...]
) -> KeyOf:
    """The :meth:`KnownContents.key` of a look's calls (index arrays at positions ``uf`` of
    a binding's arrays, of ``size_class``, each hashed by its ``hashers`` entry), as one
    function made for one, two or three index arrays: the look-up of every checked call on
    known contents runs it (measured on the shared 2-core machine, CPU time of interleaved
    loops: 0.58 us a look-up of two small arrays in the general form, of which 0.15 us
    the hashes)."""
    if len(uf) == 1:
        ((u,), (h,)) = uf, hashers
        return lambda values, a: (size_class, values, h(a[u]))
    if len(uf) == 2:
        ((u, v), (h, g)) = uf, hashers
        return lambda values, a: (size_class, values, h(a[u]), g(a[v]))
    if len(uf) == 3:
        ((u, v, w), (h, g, f)) = uf, hashers
        return lambda values, a: (size_class, values, h(a[u]), g(a[v]), f(a[w]))
    pairs = tuple(zip(hashers, uf, strict=True))
    return lambda values, a: (size_class, values, *[h(a[u]) for h, u in pairs])


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
        self._misses: dict[int, int] = {}
        """Per size class still undecided: the checked calls on new contents since the last
        call on known contents (:data:`MISSES`)."""
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
        if not binder.has_array_facts:  # range and order tests only: cheaper than the key
            return None
        return cls(uf)

    def key(self, values: tuple[Any, ...], arrays: Sequence[Any]) -> Key | None:
        """What a call's checks depend on: the size class of the index arrays, the parameter
        ``values`` and each index array's hash; None when calls of their size were found to
        check faster than they hash (:meth:`timed`) or never to repeat their contents
        (:data:`MISSES`)."""
        picked = self._pick(arrays)
        if len(self.uf) == 1:
            picked = (picked,)
        size_class = sum(map(_NBYTES, picked)).bit_length()
        if self._verdict.get(size_class) is False:
            return None
        # a hash covers the length; the binding fixed each array's dtype and its trailing
        # extents for these parameter values: the shapes need not be part of the key
        return (size_class, values, *map(_DIGEST, picked))

    def seen(self, slot: Slot, values: tuple[Any, ...], arrays: Sequence[Any]) -> bool:
        """Whether a call of ``slot``'s look (its index arrays' bytes) passes contents
        verified before (:meth:`key` in one step, for a size class that :meth:`hashes`: no
        count of new contents to reset, :data:`MISSES` applies to undecided ones only)."""
        key_of = slot.key_of  # the look fixes each array's bytes, and so its hash
        if key_of is None:
            hashers = tuple(hasher(arrays[u].nbytes) for u in self.uf)
            key_of = slot.key_of = key_function(self.uf, slot.size.bit_length(), hashers)
        return key_of(values, arrays) in self._seen

    def hashes(self, size: int) -> bool:
        """Whether checked calls on contents of index arrays of ``size`` bytes verified
        before run the unchecked loops, for good (the trials of their size class kept that
        way)."""
        return self._verdict.get(size.bit_length()) is True

    def checks(self, size: int) -> bool:
        """Whether every checked call on index arrays of ``size`` bytes in all checks them
        (their size class was found to check faster than it hashes, or never to repeat its
        contents): for good, a size class never takes another way."""
        return self._verdict.get(size.bit_length()) is False

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
        The first :data:`WARMUP` trial calls do not count. After :data:`TRIALS` of each,
        the faster way is kept for that size class."""
        size_class = key[0]
        if TRIALS <= 0 or size_class in self._verdict:
            return
        done, checked, calls = self._trials.setdefault(size_class, ([], [], [0]))
        calls[0] += 1
        if calls[0] % 2 == 0 and calls[0] > WARMUP:  # the second of its pair, warm
            (done if unchecked else checked).append(seconds)
        if len(done) >= TRIALS and len(checked) >= TRIALS:
            self._verdict[size_class] = min(done) < min(checked)
            self._trials.pop(size_class, None)  # another thread may have decided too
            self.settled = not self._trials and all(k[0] in self._verdict for k in self._seen)

    def __contains__(self, key: Key) -> bool:
        if key not in self._seen:
            return False
        if self._misses:
            self._misses.pop(key[0], None)  # contents repeat in this size class
        return True

    def add(self, key: Key) -> None:
        """Remember ``key`` as verified (forgetting the oldest past :data:`REMEMBERED`); the
        :data:`MISSES`-th new contents in a row of an undecided size class (no call on known
        contents between them) stops hashing that size class instead."""
        size_class = key[0]
        if size_class not in self._verdict:
            misses = self._misses[size_class] = self._misses.get(size_class, 0) + 1
            if misses >= MISSES:  # contents never repeat: checking alone is cheaper
                self._verdict[size_class] = False
                self._misses.pop(size_class, None)
                self._trials.pop(size_class, None)
                self.settled = not self._trials and all(k[0] in self._verdict for k in self._seen)
                return
        seen = self._seen
        seen[key] = None
        if TRIALS > 0 and size_class not in self._verdict:
            self.settled = False  # its calls on known contents are timed until decided
        _forget_oldest(seen)


class VerifiedHashes:
    """The ``(parameter values, hash)`` of the index-array contents that checked calls
    verified, for a kernel whose checked function hashes them itself (the module docstring,
    "In C"): the last :data:`REMEMBERED`, the oldest forgotten first."""

    def __init__(self) -> None:
        self._seen: dict[Hashable, None] = {}

    def __contains__(self, key: Hashable) -> bool:
        return key in self._seen

    def add(self, key: Hashable) -> None:
        """Remember ``key`` as verified (a call that failed never gets here)."""
        seen = self._seen
        seen[key] = None
        _forget_oldest(seen)


def _forget_oldest(seen: dict[Any, None]) -> None:
    """Drop the oldest keys of ``seen`` beyond :data:`REMEMBERED` (another thread's change
    of ``seen`` meanwhile ends the loop)."""
    while len(seen) > REMEMBERED:
        try:
            del seen[next(iter(seen))]
        except (KeyError, RuntimeError, StopIteration):  # another thread's change
            break
