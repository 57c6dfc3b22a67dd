"""Order-preserving ranks of a key over a conversion's source entries: buckets sized by the
entries, not by the key's extent.

A conversion that buckets entries by a coordinate (a counting sort by column, a marker per
block column, a flag per diagonal) needs arrays as long as that coordinate's extent ``K``:
37 GB of counters for a 3 x 5*10^9 matrix with a handful of entries. The buckets here are
*ranks* instead: ``rank(k)`` is entry ``k``'s key among the distinct keys, in increasing
order, so bucketing by rank orders entries as bucketing by key would, and ``cv_kv(r)`` gives
the key back. Which of two cases holds is known before the call (:func:`rank_sizes`):

* ``K <= NNZ + KEY_SLACK`` (nearly every matrix): the key is its own rank (``CV_KR = K``
  buckets, sized by the entries already), written by the caller's own scan
  (:func:`own_rank`), and ``cv_kv(t) = t``;
* otherwise (``CV_NB = NNZ``): a least-significant-digit radix sort of the entries by key,
  2 passes of ``CV_RB <= 16`` bits each for keys below ``2^32``, 4 for larger ones (a
  histogram of ``CV_NH = 2^CV_RB`` counters, a prefix sum and a stable scatter per pass,
  keys and entry numbers moving between two buffers), then a walk along the sorted keys
  numbering the distinct ones: ``CV_KR = NNZ`` buckets at most.

Every array is sized by ``NNZ``, ``CV_KR <= NNZ + KEY_SLACK`` or ``CV_NH + 1 <= 2^16 + 1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.formats.convert import _Builder

__all__ = ["KEY_SLACK", "SIZES", "add_ranks", "own_rank", "rank_sizes"]

KEY_SLACK = 1 << 16
"""Keys whose extent exceeds the entry count by more than this are ranked by a sort."""

SIZES = ("CV_KR", "CV_NB", "CV_NH", "CV_RB", "CV_RQ")
"""The sizes :func:`rank_sizes` gives the kernel: buckets, entries sorted (0 or NNZ),
counters per pass, bits per digit, pairs of passes."""


def rank_sizes(extent: int, nnz: int) -> dict[str, int]:
    """The ``SIZES`` for keys ``0 <= key < extent`` over ``nnz`` entries."""
    extent = max(extent, 0)
    if extent <= nnz + KEY_SLACK:
        return {"CV_KR": extent, "CV_NB": 0, "CV_NH": 0, "CV_RB": 0, "CV_RQ": 0}
    bits = (extent - 1).bit_length()
    pairs = 1 if bits <= 32 else 2
    per = -(-bits // (2 * pairs))
    return {"CV_KR": nnz, "CV_NB": nnz, "CV_NH": 1 << per, "CV_RB": per, "CV_RQ": pairs}


def own_rank(rank: str, key: str, k: str) -> str:
    """The caller's scan statement writing entry ``k``'s key as its rank when keys are their
    own ranks (``CV_NB = 0``; otherwise :func:`add_ranks` wrote it already)."""
    return f"${rank}$({k}) = CV_NB == 0 ? {key} : ${rank}$({k});"


def _where(domain: str, extra: str) -> str:
    if not extra:
        return domain
    head, sep, body = domain.rstrip().rstrip("}").partition(":")
    return f"{head}{sep}{body} && {extra}}}" if sep else f"{head}: {extra}}}"


def add_ranks(b: _Builder, key: str, rank: str, where: str = "") -> None:
    """Statements (at the builder's next top-level positions) that, for keys spread wider
    than the entries (``CV_NB = NNZ``), sort the entries by ``key`` (a C expression over
    the source's scan) and write each one's rank into the run-time index array ``rank``
    (``NNZ`` entries, declared here) and the key of each rank into ``cv_kv``; for keys that
    are their own ranks, ``cv_kv(t) = t``. ``where``: a condition every statement runs
    under (``cv_path(0) = 2``).

    Each pass scatters from ``cv_xa``/``cv_pa`` (keys, entry numbers) into ``cv_xb``/
    ``cv_pb`` and copies them back; ``cv_xa`` has one slot more than the entries, so that
    the walk compares each key with the next one."""
    comp, src = b.comp, b.src
    k = src.positions[0]
    for name in SIZES:
        if name not in comp.params:
            comp.add_constant(name)
    b.index(rank, "NNZ", "0 <= v < CV_KR")
    comp.add_data_space("cv_kv", "int64_t", shape=("CV_KR",))
    comp.add_data_space("cv_xa", "int64_t", shape=("CV_NB + 1",))
    comp.add_data_space("cv_xb", "int64_t", shape=("CV_NB",))
    b.index("cv_pa", "CV_NB", "0 <= v < NNZ")
    b.data("cv_pb", ("CV_NB",))
    b.index("cv_hh", "CV_NH + 1", "0 <= v < CV_NB")
    comp.add_local("cv_dg", "int64_t", (1,), index=True)
    comp.declare_uf("cv_dg", range="{[v]: 0 <= v < CV_NH}")
    comp.add_local("cv_ru", f"{b.dtype}_t", (1,), index=True)
    comp.declare_uf("cv_ru", range="{[v]: 0 <= v < CV_KR}")
    b.loop(["$cv_kv$(t) = t;"], _where("{[t]: 0 <= t < CV_KR && CV_NB = 0}", where), ("t",))
    b.loop(
        [f"$cv_xa$({k}) = {key};", f"$cv_pa$({k}) = {k};", "$cv_ru$(0) = 0;"],
        _where(src.scan(), f"{k} < CV_NB" + (f" && {where}" if where else "")),
        src.loops,
    )
    digit = "$cv_dg$(0) = ($cv_xa$(t) >> (p * CV_RB)) & (CV_NH - 1);"
    steps = (
        ("$cv_hh$(h) = 0;", "h", "h <= CV_NH"),
        (f"{digit} $cv_hh$(cv_dg(0) + 1) += 1;", "t", "t < CV_NB"),
        ("$cv_hh$(h + 1) += $cv_hh$(h);", "h", "h < CV_NH"),
        (f"{digit} $cv_xb$(cv_hh(cv_dg(0))) = $cv_xa$(t); $cv_pb$(cv_hh(cv_dg(0))) = "
         "$cv_pa$(t); $cv_hh$(cv_dg(0)) += 1;", "t", "t < CV_NB"),
        ("$cv_xa$(t) = $cv_xb$(t); $cv_pa$(t) = $cv_pb$(t);", "t", "t < CV_NB"),
    )  # fmt: skip
    top = b.top
    for n, (source, v, bound) in enumerate(steps):
        dom = _where(f"{{[p, {v}]: 0 <= p < 2 * CV_RQ && 0 <= {v} && {bound}}}", where)
        b.add(source, dom, f"{{[p, {v}] -> [{top}, p, {n}, {v}, 0]}}")
    b.top += 1
    b.loop(
        [
            f"${rank}$(cv_pa(t)) = cv_ru(0); $cv_kv$(cv_ru(0)) = $cv_xa$(t);",
            "$cv_ru$(0) += $cv_xa$(t + 1) != $cv_xa$(t);",
        ],
        _where("{[t]: 0 <= t < CV_NB}", where),
        ("t",),
    )
