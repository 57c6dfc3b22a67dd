"""``convert(src, SELL(C, sigma))``: the SELL-C-sigma inspector synthesized from its relation.

A destination is SELL-like when its storage relation reads (names as in
:func:`spf.formats.SELL`; any names work)::

    {[i, j] -> [k]: exists ch, w, r: 0 <= ch < NC && 0 <= w < cl(ch) && 0 <= r < C &&
                    C*ch + r < N && k = cs(ch) + C*w + r && i = perm(C*ch + r) && j = scol(k)}

(``i = C*ch + r`` without a permutation). Entry ``w`` of the row at sorted position
``p = C*ch + r`` sits at ``cs(ch) + C*w + r``; so the conversion must build, from any source
storing each entry once at one position ``k`` (COO, CSR, CSC):

1. the row lengths ``len(i)``: ``ptr(i+1) - ptr(i)`` when the source's rows are
   ``ptr(i) <= k < ptr(i+1)`` (CSR), else a count over the source's scan;
2. ``perm`` (when the relation has one and the format sorts rows, ``Format.window``): rows
   by decreasing length within each window of ``sigma`` rows, stable. Two counting sorts:
   by length (descending, ``CV_LONG + 2`` counters: ``min(M, NNZ)`` for a source whose
   order rules out duplicates, else ``NNZ``) into ``ord``, then, stably, by window
   (``win(i)``, a cursor per window), which leaves each window sorted by length;
3. the chunk widths ``cl(ch) = max len(perm(C*ch + r))`` (the ``w < cl(ch)`` bound) and the
   chunk pointers ``cs(ch+1) = cs(ch) + C*cl(ch)`` (a prefix sum);
4. a cursor per row at its first slot, ``cur(perm(C*ch + r)) = cs(ch) + r``, and the
   placement of every source entry at its row's cursor (``scol = j``, ``val = A``), the
   cursor moving ``C`` slots on: entries keep the source's order within each row.
   Padding slots keep value 0 and column 0 (in range whenever a row is padded).

The stored size ``NV = cs(NC)`` is only known after step 3, and the caller allocates
``val`` and ``scol``: the Computation has a size parameter ``PHASE``; statements of steps
1-3 run when ``PHASE = 0``, those of step 4 when ``PHASE = 1``, and the compiled kernel
calls it twice (sizing, then the fill once ``val[NV]`` and ``scol[NV]`` exist), the index
arrays of the first call feeding the second. Every array it computes and reads back as a
UF is a run-time index array (``index=True``) with a declared range, so a bad source value
can never make it write out of bounds. Duplicate entries of a COO source are kept (SELL
assumes no order; its SpMV sums them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError, FormatError
from spf.formats.convert import Conversion, ConversionKernel, _Builder, _compressed

if TYPE_CHECKING:
    from spf.formats.format import Format

__all__ = ["SellConversion", "SellConversionKernel", "SellLayout", "sell_layout", "to_sell"]

_SLOT = re.compile(
    r"^\s*(?P<ptr>\w+)\(\s*(?P<ch>\w+)\s*\)\s*\+\s*(?P<c>\d+)\s*\*\s*(?P<w>\w+)\s*\+\s*(?P<r>\w+)"
    r"\s*$"
)


@dataclass(frozen=True)
class SellLayout:
    """What the synthesis reads off a SELL-like relation: ``C``, the arrays' names (chunk
    pointers, chunk widths, columns, values, the row permutation or ``None``) and the
    sorting window (``Format.window``; ``None``: rows keep their order)."""

    C: int
    ptr: str
    width: str
    idx: str
    value: str
    perm: str | None
    window: int | None


def sell_layout(fmt: Format) -> SellLayout | None:
    """The :class:`SellLayout` of ``fmt`` when its relation is SELL-like, else ``None``."""
    if len(fmt.positions) != 1 or len(fmt.exists) != 3 or len(fmt.coords) != 2:
        return None
    k = fmt.positions[0]
    slot = _SLOT.match(fmt._defined.get(k, ""))
    if slot is None:
        return None
    ch, w, r, c = slot.group("ch"), slot.group("w"), slot.group("r"), int(slot.group("c"))
    if {ch, w, r} != set(fmt.exists) or c < 1:
        return None
    i, j = fmt.coords
    pos = rf"{c}\s*\*\s*{ch}\s*\+\s*{r}"
    row = fmt._defined.get(i, "")
    direct = re.fullmatch(rf"\s*{pos}\s*", row)
    permuted = re.fullmatch(rf"\s*(\w+)\(\s*{pos}\s*\)\s*", row)
    idx = re.fullmatch(rf"\s*(\w+)\(\s*{k}\s*\)\s*", fmt._defined.get(j, ""))
    width = next(
        (
            m.group(1)
            for a in fmt._atoms
            if a.lhs == w
            and a.op == "<"
            and (m := re.fullmatch(rf"\s*(\w+)\(\s*{ch}\s*\)\s*", a.rhs))
        ),
        None,
    )
    if (direct is None and permuted is None) or idx is None or width is None:
        return None
    # the chunk is C rows (r < C), the chunks cover NC, the last one stops at row N
    bounds = {(a.lhs.replace(" ", ""), a.rhs.replace(" ", "")) for a in fmt._atoms if a.op == "<"}
    if not {(r, str(c)), (ch, "NC"), (f"{c}*{ch}+{r}", "N")} <= bounds:
        return None
    if fmt.value_shape != ("NV",) or "NC" not in fmt.sizes:
        return None
    perm = permuted.group(1) if permuted is not None else None
    return SellLayout(c, slot.group("ptr"), width, idx.group(1), fmt.value, perm, fmt.window)


class SellConversion(Conversion):
    """``convert(src, SELL(...))``: one spf Computation (both phases); :meth:`compile` gives
    a :class:`SellConversionKernel`."""

    layout: SellLayout
    longest: str
    has_windows: bool

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> SellConversionKernel:
        """Generate, build (cached) and load the conversion kernel (C only)."""
        built = super().compile(target, name, check, **options)
        return SellConversionKernel(self, built.kernel, check)


class SellConversionKernel(ConversionKernel):
    """``kernel(**source arrays and sizes)`` -> the SELL arrays and sizes: the chunk
    pointers, widths, columns and values, ``perm`` when the format has one, and ``N, M, NC,
    NV`` (what ``spf.kernels.spmv(dst)`` takes besides ``x`` and ``y``).

    Two calls of the one compiled kernel: ``PHASE=0`` sizes (row lengths, ``perm``, chunk
    widths and pointers); then, with ``val`` and ``scol`` allocated (zeros: the padding),
    ``PHASE=1`` places the entries. Both calls run with the caller's ``check``: index values
    are checked inside the loops that load them, and the column indices are loaded only by
    the second call.
    """

    conv: SellConversion

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        lay = conv.layout
        sizes = self._sizes(args)
        n = sizes["N"]
        sizes["NC"] = -(-n // lay.C)
        if conv.has_windows:
            sizes["NW"] = -(-n // (lay.window or 1))
        # the longest row: at most M entries where the source rules out duplicates
        sizes["CV_LONG"] = min(sizes["M"], sizes["NNZ"]) if conv.longest == "M" else sizes["NNZ"]
        env: dict[str, Any] = dict(args)
        self._zeros(env, conv.allocate, sizes)
        self._alloc(env, sizes, 0)
        extra = {s: sizes[s] for s in ("NC", "NW", "CV_LONG") if s in sizes}
        self._run(check=check, PHASE=0, NV=0, **extra, **env)
        if conv.longest != "M" and sizes["NC"]:
            self._rows_fit(env[lay.width], sizes["M"])
        nv = self._slots(env[lay.width])
        self._alloc(env, sizes, nv)
        if nv:
            self._run(check=check, PHASE=1, NV=nv, **extra, **env)
        out: dict[str, Any] = {a: env[a] for a in (lay.ptr, lay.width, lay.idx, lay.value)}
        if lay.perm is not None:
            out[lay.perm] = env[lay.perm]
        out.update(N=n, M=sizes["M"], NC=sizes["NC"], NV=nv)
        return out

    def _slots(self, widths: Any) -> int:
        """``NV``, the slots padding included (``C`` times the chunk widths' sum), summed in
        int64 before anything is allocated: ``ArgumentError`` when it passes what the
        format's index arrays hold, where the chunk pointers (``cs(NC) = NV``) and the row
        cursors computed in them would have wrapped (a negative size, or a small one and
        entries placed outside the arrays)."""
        conv = self.conv
        lay = conv.layout
        nv = lay.C * int(np.asarray(widths, dtype=np.int64).sum())
        most = int(np.iinfo(conv.index_dtype).max)
        if nv > most:
            raise ArgumentError(
                f"convert({conv.src.name} -> {conv.dst.name}): NV = {nv} stored slots "
                f"(C = {lay.C} times the chunk widths' sum, padding included) is more than "
                f"{conv.index_dtype} index arrays hold ({lay.ptr}(NC) = NV); convert with "
                f"index_dtype='int64' (spf.formats.convert(..., index_dtype='int64'), the "
                f"source's index arrays in int64)"
            )
        return nv

    def _rows_fit(self, widths: Any, m: int) -> None:
        """``ArgumentError`` for a chunk wider than the ``M`` columns: rows of a source
        that may repeat entries (COO keeps duplicates) can hold more entries than columns,
        which SELL's declared chunk widths (``0 <= cl <= M``) rule out, so spf's checked
        SELL kernels would refuse the result (O(chunks))."""
        wide = int(widths.max())
        if wide > m:
            ch = int(widths.argmax())
            conv = self.conv
            raise ArgumentError(
                f"convert({conv.src.name} -> {conv.dst.name}): chunk {ch} holds a row of "
                f"{wide} entries, more than the {m} columns (repeated coordinates): SELL "
                f"stores at most M per row; convert {conv.src.name} to CSR first, which sums "
                "duplicates"
            )

    def _alloc(self, env: dict[str, Any], sizes: dict[str, int], nv: int) -> None:
        """The values and columns (zeros: the padding) for ``nv`` stored slots."""
        lay = self.conv.layout
        shapes = {lay.value: ("NV",), lay.idx: ("NV",)}
        self._zeros(env, shapes, {**sizes, "NV": nv}, {"NV": "the slots, padding included"})


def _phase(domain: str, phase: int) -> str:
    """``domain`` (``{[..]: ...}``) restricted to ``PHASE = phase``."""
    head, _, body = domain.partition(":")
    return f"{head}: PHASE = {phase} && {body.strip()}"


class _SellBuilder:
    """The statements of one phase at a time, in order (a :class:`_Builder` underneath)."""

    def __init__(self, conv: SellConversion, src: Format, index_dtype: str) -> None:
        self.b = _Builder(conv, src, index_dtype)
        self.src = src
        self.phase = 0

    def loop(self, sources: list[str], domain: str, loops: tuple[str, ...] = ("p",)) -> None:
        self.b.loop(sources, _phase(domain, self.phase), loops)

    def scan(self, sources: list[str]) -> None:
        self.loop(sources, self.src.scan(), self.src.loops)


def to_sell(src: Format, dst: Format, lay: SellLayout, index_dtype: str) -> SellConversion:
    """The conversion ``src -> dst`` for a SELL-like ``dst`` (see the module docstring)."""
    if src.value_shape != ("NNZ",) or len(src.positions) != 1:
        raise FormatError(
            f"convert({src.name} -> {dst.name}): the SELL inspector is synthesized from formats "
            f"storing each entry once at one position 0 <= k < NNZ (COO, CSR, CSC); convert "
            f"{src.name} to CSR first"
        )
    if src.shape != ("N", "M") or dst.shape != ("N", "M"):
        raise FormatError(
            f"convert({src.name} -> {dst.name}): the SELL inspector is synthesized over N x M "
            f"coordinates, but {src.name} is {src.shape} and {dst.name} is {dst.shape}"
        )
    conv = SellConversion(f"convert_{src.name.lower()}_{dst.name.lower()}")
    conv.src, conv.dst, conv.index_dtype, conv.trim = src, dst, index_dtype, None
    conv.layout = lay
    # a row holds at most M entries when the source's order rules out duplicates (CSR), so
    # the kernel sizes the histogram of lengths by CV_LONG = min(M, NNZ), else by NNZ
    conv.longest = "M" if src.ordered and src.loops[0] == src.coords[0] else "NNZ"
    conv.add_constant("CV_LONG")
    conv.has_windows = lay.perm is not None and lay.window is not None and lay.window > 1
    sb = _SellBuilder(conv, src, index_dtype)
    sb.b.data(src.value, ("NNZ",), "value")
    _lengths(sb, "CV_LONG")
    if conv.has_windows and lay.perm is not None and lay.window is not None:
        _sort_rows(sb, lay.perm, lay.window, "CV_LONG")
    elif lay.perm is not None:
        sb.b.index(lay.perm, "N", "0 <= v < N")
        sb.loop([f"${lay.perm}$(p) = p;"], "{[p]: 0 <= p < N}")
    _chunks(sb, lay)
    sb.phase = 1
    _place(sb, lay)
    conv.outputs = {}
    conv.allocate = {
        name: tuple(str(e) for e in ds.shape or ())
        for name, ds in conv.data_spaces.items()
        if ds.shape and ds.role != "local" and name not in (src.value, lay.value, lay.idx, *src.ufs)
    }
    return conv


def _lengths(sb: _SellBuilder, longest: str) -> None:
    """``cv_len(i)``: the number of source entries in row ``i``; for a source whose rows
    are ``ptr(i) <= k < ptr(i+1)`` (CSR) the difference of the pointers, else a count over
    the source's scan."""
    sb.b.index("cv_len", "N", f"0 <= v <= {longest}")
    rows = _compressed(sb.src)
    if rows is not None and rows.outer == 0:
        sb.loop([f"$cv_len$(p) = {rows.ptr}(p + 1) - {rows.ptr}(p);"], "{[p]: 0 <= p < N}")
        return
    sb.loop(["$cv_len$(p) = 0;"], "{[p]: 0 <= p < N}")
    sb.scan([f"$cv_len$({sb.src.coords[0]}) += 1;"])


def _sort_rows(sb: _SellBuilder, perm: str, sigma: int, longest: str) -> None:
    """``perm``: rows by decreasing length within each window of ``sigma`` rows, stable.
    A counting sort by ``longest - len`` into ``cv_ord``, then a stable counting sort of
    that order by window (``cv_win``, a cursor ``cv_wcur`` per window)."""
    b = sb.b
    b.index(perm, "N", "0 <= v < N")
    b.index("cv_hist", f"{longest} + 2", "0 <= v < N")
    b.index("cv_ord", "N", "0 <= v < N")
    b.index("cv_win", "N", "0 <= v < NW")
    b.index("cv_wcur", "NW", "0 <= v < N")
    key = f"{longest} - cv_len(p)"
    sb.loop(["$cv_hist$(h) = 0;"], f"{{[h]: 0 <= h < {longest} + 2}}", ("h",))
    sb.loop([f"$cv_hist$({key} + 1) += 1;"], "{[p]: 0 <= p < N}")
    sb.loop(["$cv_hist$(h + 1) += $cv_hist$(h);"], f"{{[h]: 0 <= h <= {longest}}}", ("h",))
    sb.loop([f"$cv_ord$(cv_hist({key})) = p;", f"$cv_hist$({key}) += 1;"], "{[p]: 0 <= p < N}")
    sb.loop(
        [f"$cv_win$({sigma}*q + s) = q;"],
        f"{{[q, s]: 0 <= q < NW && 0 <= s < {sigma} && {sigma}*q + s < N}}",
        ("q", "s"),
    )
    sb.loop([f"$cv_wcur$(q) = {sigma}*q;"], "{[q]: 0 <= q < NW}", ("q",))
    sb.loop(
        [f"${perm}$(cv_wcur(cv_win(cv_ord(t)))) = cv_ord(t);",
         "$cv_wcur$(cv_win(cv_ord(t))) += 1;"],
        "{[t]: 0 <= t < N}",
        ("t",),
    )  # fmt: skip


def _chunk_row(lay: SellLayout) -> str:
    """The row at sorted position ``C*ch + r``."""
    pos = f"{lay.C}*ch + r"
    return f"{lay.perm}({pos})" if lay.perm is not None else pos


def _chunk_domain(lay: SellLayout) -> str:
    return f"{{[ch, r]: 0 <= ch < NC && 0 <= r < {lay.C} && {lay.C}*ch + r < N}}"


def _chunks(sb: _SellBuilder, lay: SellLayout) -> None:
    """Chunk widths ``cl(ch)`` (the longest row of the chunk, a max-reduction) and chunk
    pointers ``cs`` (a prefix sum of ``C*cl``)."""
    cl, cs = lay.width, lay.ptr
    sb.b.data(cl, ("NC",))
    sb.b.data(cs, ("NC + 1",))
    sb.loop([f"${cl}$(ch) = 0;"], "{[ch]: 0 <= ch < NC}", ("ch",))
    row = _chunk_row(lay)
    # the lengths are values here, not subscripts: read as data, not through the UF's range
    sb.loop([f"${cl}$(ch) = max(${cl}$(ch), $cv_len$({row}));"], _chunk_domain(lay), ("ch", "r"))
    sb.loop([f"${cs}$(0) = 0;"], "{[z]: z = 0}", ("z",))
    sb.loop([f"${cs}$(ch + 1) = ${cs}$(ch) + {lay.C} * ${cl}$(ch);"], "{[ch]: 0 <= ch < NC}",
            ("ch",))  # fmt: skip


def _place(sb: _SellBuilder, lay: SellLayout) -> None:
    """A cursor per row at its first slot ``cs(ch) + r``; every source entry stored at its
    row's cursor, which then moves ``C`` slots on."""
    src = sb.src
    i, j = src.coords
    sb.b.index("cv_cur", "N", "0 <= v < NV")
    sb.b.data(lay.value, ("NV",), "value")
    sb.b.data(lay.idx, ("NV",))
    row = _chunk_row(lay)
    sb.loop([f"$cv_cur$({row}) = ${lay.ptr}$(ch) + r;"], _chunk_domain(lay), ("ch", "r"))
    sb.scan(
        [
            f"${lay.value}$(cv_cur({i})) = ${src.value}$({src.positions[0]});",
            f"${lay.idx}$(cv_cur({i})) = {j};",
            f"$cv_cur$({i}) += {lay.C};",
        ]
    )
