"""``convert(src, ELL)`` and ``convert(src, DIA)``: padded layouts synthesized from their
relations.

The destination is recognised from its relation, not its name (any array names work):

* ELL-like: positions ``[p, w]`` with ``i = p && j = col(p, w)`` and values of shape
  ``(N, W)``: row ``p`` keeps its entries in slots ``0 <= w < W``;
* DIA-like: positions ``[d, p]`` with ``i = p && j = p + offsets(d)`` and values of shape
  ``(ND, N)``: diagonal ``d`` (offset ``offsets(d) = j - i``) keeps entry ``(p, p +
  offsets(d))`` at ``A[d, p]``.

The source stores each entry once at one position ``k < NNZ`` (COO, CSR, CSC). The
conversion is one spf Computation with a size parameter ``PHASE``: ``PHASE = 0`` sizes the
destination, the wrapper allocates its arrays (zeros: the padding), ``PHASE = 1`` fills
them. ELL: the row lengths ``cv_len`` (pointer differences for a CSR source, else a count
over the scan) and ``W`` (their maximum); then a cursor per row places each entry at the
row's next slot, in the source's order (CSR, CSC: columns increasing). Padding slots keep
value 0 and column 0. Duplicate entries of a COO source take a slot each (an ELL SpMV sums
them). DIA: each entry's diagonal ``j - i + N - 1`` (``-N < j - i < M``) as its rank
``cv_dr(k)`` (:mod:`spf.formats.ranks`: the diagonal itself unless ``N + M`` dwarfs the
entries; ``cv_kv`` maps a rank back), a flag per rank set by every entry and an in-place
prefix sum ``cv_dp`` (the number of each present diagonal: ``offsets`` are the distinct
``j - i``, increasing; ``ND = cv_dp(CV_KR)``); then ``offsets(cv_dp(t)) = cv_kv(t) - N + 1``
for each present diagonal and ``A[cv_dp(cv_dr(k)), i] += value`` (duplicates summed). Slots
of a diagonal outside the matrix hold 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.errors import FormatError
from spf.formats.convert import _compressed
from spf.formats.phased import PhasedBuilder, PhasedConversion, PhasedKernel
from spf.formats.ranks import add_ranks, own_rank

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["PaddedConversion", "PaddedConversionKernel", "PaddedLayout", "padded_layout"]


@dataclass(frozen=True)
class PaddedLayout:
    """What the synthesis reads off an ELL- or DIA-like relation: ``kind`` (``"ELL"`` or
    ``"DIA"``), the index array (ELL's columns, DIA's offsets), the value array and the
    size the destination adds (``W`` or ``ND``)."""

    kind: str
    idx: str
    value: str
    size: str


def padded_layout(fmt: Format) -> PaddedLayout | None:
    """The :class:`PaddedLayout` of ``fmt`` when its relation is ELL- or DIA-like."""
    if len(fmt.positions) != 2 or fmt.exists or len(fmt.coords) != 2:
        return None
    a, b = fmt.positions
    i, j = fmt.coords
    row = fmt._defined.get(i, "").strip()
    col = fmt._defined.get(j, "")
    shape = fmt.value_shape
    ell = re.fullmatch(rf"\s*(\w+)\(\s*{a}\s*,\s*{b}\s*\)\s*", col)
    if row == a and ell and shape[0] == fmt.shape[0] and str(shape[1]).isidentifier():
        return PaddedLayout("ELL", ell.group(1), fmt.value, str(shape[1]))
    dia = re.fullmatch(rf"\s*{b}\s*\+\s*(\w+)\(\s*{a}\s*\)\s*", col)
    if row == b and dia and shape[1] == fmt.shape[0] and str(shape[0]).isidentifier():
        return PaddedLayout("DIA", dia.group(1), fmt.value, str(shape[0]))
    return None


class PaddedConversionKernel(PhasedKernel):
    """``kernel(**source arrays and sizes)`` -> the ELL arrays ``col[N, W], A[N, W]`` and
    ``N, M, W``, or the DIA arrays ``offsets[ND], A[ND, N]`` and ``N, M, ND`` (the
    destination's names).

    Two calls of the one compiled kernel, both with the caller's ``check`` (index values
    are checked in the loops that load them; from CSR the sizing call reads no column):
    ``PHASE=0`` sizes, ``PHASE=1`` fills the arrays allocated in between (zeros)."""

    conv: PaddedConversion

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        lay = conv.layout
        sizes = self._ranked(self._sizes(args))
        n, m = sizes["N"], sizes["M"]
        env: dict[str, Any] = dict(args)
        self._zeros(env, conv.allocate, sizes)
        ranks = self._rank_args(sizes)
        self._alloc(env, sizes, 0)
        self._run(check=check, PHASE=0, **{lay.size: 0}, **ranks, **env)
        # W: the longest row; ND: the last prefix sum (none when N + M = 0)
        size = int(env["cv_w"][0] if lay.kind == "ELL" else env["cv_dp"][-1:].sum())
        self._alloc(env, sizes, size)
        if size:
            self._run(check=check, PHASE=1, **{lay.size: size}, **ranks, **env)
        return {
            lay.idx: env["cv_pi"],
            lay.value: env["cv_pv"],
            "N": n,
            "M": m,
            lay.size: size,
        }

    def _alloc(self, env: dict[str, Any], sizes: dict[str, int], size: int) -> None:
        """The destination's arrays (zeros) for ``W`` or ``ND`` = ``size``."""
        lay = self.conv.layout
        ell = lay.kind == "ELL"
        shapes = {
            "cv_pv": ("N", lay.size) if ell else (lay.size, "N"),
            "cv_pi": ("N", lay.size) if ell else (lay.size,),
        }
        why = "the longest row" if ell else "the diagonals holding an entry"
        self._zeros(env, shapes, {**sizes, lay.size: size}, {lay.size: why})


class PaddedConversion(PhasedConversion):
    """``convert(src, ELL/DIA)``: one spf Computation (both phases); :meth:`compile` gives a
    :class:`PaddedConversionKernel`."""

    kernel_type = PaddedConversionKernel
    layout: PaddedLayout


def to_padded(src: Format, dst: Format, index_dtype: str) -> PaddedConversion | None:
    """The conversion ``src -> dst`` when ``dst`` is ELL- or DIA-like, else ``None``."""
    lay = padded_layout(dst)
    if lay is None:
        return None
    if src.value_shape != ("NNZ",) or len(src.positions) != 1:
        raise FormatError(
            f"convert({src.name} -> {dst.name}): the {lay.kind} inspector is synthesized from "
            f"formats storing each entry once at one position 0 <= k < NNZ (COO, CSR, CSC); "
            f"convert {src.name} to CSR first"
        )
    if src.shape != ("N", "M") or dst.shape != ("N", "M"):
        raise FormatError(
            f"convert({src.name} -> {dst.name}): the {lay.kind} inspector is synthesized over "
            f"N x M coordinates, but {src.name} is {src.shape} and {dst.name} is {dst.shape}"
        )
    conv = PaddedConversion.start(src, dst, index_dtype)
    conv.layout = lay
    b = PhasedBuilder(conv, src, index_dtype)
    b.data(src.value, ("NNZ",), "value")
    if lay.kind == "ELL":
        _ell(b, lay)
    else:
        _dia(b, lay)
    conv.allocate = conv.shapes(lambda a: a.startswith("cv_") and a not in ("cv_pv", "cv_pi"))
    return conv


def _ell(b: PhasedBuilder, lay: PaddedLayout) -> None:
    """Row lengths and ``W`` (``PHASE = 0``); each entry at its row's cursor (``PHASE = 1``)."""
    src = b.src
    i, j = src.coords
    w = lay.size
    b.data("cv_w", ("1",))
    b.loop(["$cv_w$(0) = 0;"], "{[z]: z = 0}", ("z",))
    rows = _compressed(src)
    if rows is not None and rows.outer == 0:
        length = f"{rows.ptr}(p + 1) - {rows.ptr}(p)"
    else:
        b.data("cv_len", ("N",))
        b.range(["$cv_len$(p) = 0;"], "p", "0", "N")
        b.scan([f"$cv_len$({i}) += 1;"])
        length = "$cv_len$(p)"
    b.range([f"$cv_w$(0) = max($cv_w$(0), {length});"], "p", "0", "N")
    b.phase = 1
    b.index("cv_cur", "N", f"0 <= v < {w}")
    b.data("cv_pv", ("N", w), "value")
    b.data("cv_pi", ("N", w))
    b.range(["$cv_cur$(p) = 0;"], "p", "0", "N")
    b.scan(
        [
            f"$cv_pv$({i}, cv_cur({i})) = ${src.value}$({src.positions[0]});",
            f"$cv_pi$({i}, cv_cur({i})) = {j};",
            f"$cv_cur$({i}) += 1;",
        ]
    )


def _dia(b: PhasedBuilder, lay: PaddedLayout) -> None:
    """Offset flags and their prefix sum ``cv_dp`` (``PHASE = 0``); ``offsets`` and the
    values (``PHASE = 1``)."""
    src = b.src
    i, j = src.coords
    k = src.positions[0]
    nd = lay.size
    key = f"{j} - {i} + N - 1"
    conv = b.comp
    assert isinstance(conv, PaddedConversion)
    conv.rank_extent = "N + M"
    add_ranks(b, key, "cv_dr")
    b.index("cv_dp", "CV_KR + 1", f"0 <= v <= {nd}", monotonic=True)
    b.range(["$cv_dp$(t) = 0;"], "t", "0", "CV_KR + 1")
    b.scan([own_rank("cv_dr", key, k), f"$cv_dp$(cv_dr({k}) + 1) = 1;"])
    b.range(["$cv_dp$(t + 1) += $cv_dp$(t);"], "t", "0", "CV_KR")
    b.phase = 1
    b.data("cv_pi", (nd,))
    b.data("cv_pv", (nd, "N"), "value")
    b.loop(
        ["$cv_pi$(cv_dp(t)) = $cv_kv$(t) - N + 1;"],
        "{[t]: 0 <= t < CV_KR && cv_dp(t) < cv_dp(t + 1)}",
        ("t",),
    )
    # every entry's diagonal is present; saying so proves the row index of A below ND
    b.scan(
        [f"$cv_pv$(cv_dp(cv_dr({k})), {i}) += ${src.value}$({k});"],
        where=f"cv_dp(cv_dr({k})) < cv_dp(cv_dr({k}) + 1)",
    )
