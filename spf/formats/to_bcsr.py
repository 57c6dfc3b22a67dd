"""``convert(CSR, BCSR(r, c))``: the block pattern and the blocks, synthesized from the
BCSR relation.

A destination is BCSR-like when its relation reads (names as in :func:`spf.formats.BCSR`;
any names work)::

    {[i, j] -> [kb, ri, ci]: exists ib: 0 <= ib < NB && browptr(ib) <= kb < browptr(ib+1)
                             && 0 <= ri < r && 0 <= ci < c && i = r*ib + ri
                             && j = c*bcol(kb) + ci}

with values ``A[NNZB, r, c]`` over ``r*NB`` by ``c*MB`` coordinates. The source is a
format whose scan visits rows in order (CSR: ``rowptr(i) <= k < rowptr(i+1)``), so every
block row's entries come together. One spf Computation with a size parameter ``PHASE``:

``PHASE = 0``: each entry's block column ``j / c`` as its rank ``cv_jb(k)``
(:mod:`spf.formats.ranks`: the block column itself unless there are far more block columns
than entries; ``cv_kv`` maps a rank back) and its block row ``i / r``; a marker per block
column rank (the last block row that used it) tells an entry that opens a block, counted
per block row (``browptr``, a prefix sum gives ``NNZB``) and numbered in scan order as the
scan goes (``cv_fp(k + 1)``: the openers up to ``k``). The scan also notes whether every
block row meets its blocks in increasing block column order (``cv_bpath(0) = 0``).

``PHASE = 1`` (``bcol`` and ``A`` allocated, zeros): each block's slot ``cv_slot``: its
scan-order number when the blocks came in order (no sort), else the blocks are bucketed by
block column (a counting sort) and read bucket by bucket, each given the next slot of its
block row, so block columns come out increasing within each block row. Every entry is then
added at ``A[slot, i % r, j % c]`` (its block's number found through the marker again) and
its block's column written to ``bcol``. Blocks at the matrix's edge (``N``, ``M`` not
multiples of ``r``, ``c``) are zero-filled past it. Linear: ``NNZ + N + NNZB*r*c`` and the
ranks' cost.
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

__all__ = ["BcsrConversion", "BcsrConversionKernel", "BcsrLayout", "bcsr_layout"]


@dataclass(frozen=True)
class BcsrLayout:
    """What the synthesis reads off a BCSR-like relation: the block size ``r`` by ``c``,
    the arrays' names (block row pointers, block columns, values) and the sizes (block
    rows, block columns, blocks)."""

    r: int
    c: int
    ptr: str
    idx: str
    value: str
    nb: str
    mb: str
    nnzb: str


def bcsr_layout(fmt: Format) -> BcsrLayout | None:
    """The :class:`BcsrLayout` of ``fmt`` when its relation is BCSR-like, else ``None``."""
    if len(fmt.positions) != 3 or len(fmt.exists) != 1 or len(fmt.coords) != 2:
        return None
    kb, ri, ci = fmt.positions
    ib = fmt.exists[0]
    i, j = fmt.coords
    row = re.fullmatch(rf"\s*(\d+)\s*\*\s*{ib}\s*\+\s*{ri}\s*", fmt._defined.get(i, ""))
    col = re.fullmatch(rf"\s*(\d+)\s*\*\s*(\w+)\(\s*{kb}\s*\)\s*\+\s*{ci}\s*",
                       fmt._defined.get(j, ""))  # fmt: skip
    ptr = re.search(rf"(\w+)\(\s*{ib}\s*\)\s*<=\s*{kb}\s*<\s*(\w+)\(\s*{ib}\s*\+\s*1\s*\)",
                    fmt.storage)  # fmt: skip
    if row is None or col is None or ptr is None or ptr.group(1) != ptr.group(2):
        return None
    r, c = int(row.group(1)), int(col.group(1))
    bounds = {(a.lhs.replace(" ", ""), a.rhs.replace(" ", "")) for a in fmt._atoms if a.op == "<"}
    if not {(ri, str(r)), (ci, str(c))} <= bounds:
        return None
    shape = [
        re.fullmatch(rf"\s*{n}\s*\*\s*(\w+)\s*", str(e))
        for n, e in zip((r, c), fmt.shape, strict=True)
    ]
    vals = tuple(str(e) for e in fmt.value_shape)
    if shape[0] is None or shape[1] is None or vals[1:] != (str(r), str(c)):
        return None
    nb, mb = shape[0].group(1), shape[1].group(1)
    if not {(ib, nb)} <= bounds:
        return None
    return BcsrLayout(r, c, ptr.group(1), col.group(2), fmt.value, nb, mb, vals[0])


class BcsrConversionKernel(PhasedKernel):
    """``kernel(**source arrays and sizes)`` -> the BCSR arrays (``browptr``, ``bcol``,
    ``A[NNZB, r, c]``: the destination's names) and ``NB, MB, NNZB``.

    Two calls of the one compiled kernel, both with the caller's ``check`` (index values
    are checked in the loops that load them): ``PHASE=0`` finds the blocks, ``PHASE=1``
    fills ``bcol`` and ``A``, allocated in between (zeros)."""

    conv: BcsrConversion

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        lay = conv.layout
        sizes = self._sizes(args)
        sizes[lay.nb] = -(-sizes["N"] // lay.r)
        sizes[lay.mb] = -(-sizes["M"] // lay.c)
        blocks = {lay.nb: sizes[lay.nb], lay.mb: sizes[lay.mb]}
        sizes = self._ranked(sizes)
        env: dict[str, Any] = dict(args)
        self._zeros(env, conv.allocate, sizes)
        self._alloc(env, sizes, 0)
        extra = {lay.nb: sizes[lay.nb], **self._rank_args(sizes)}
        self._run(check=check, PHASE=0, **{lay.nnzb: 0}, **extra, **env)
        nnzb = int(env["cv_bp"][-1])
        self._alloc(env, sizes, nnzb)
        if nnzb:
            self._run(check=check, PHASE=1, **{lay.nnzb: nnzb}, **extra, **env)
        return {
            lay.ptr: env["cv_bp"],
            lay.idx: env["cv_bi"],
            lay.value: env["cv_bv"],
            **blocks,
            lay.nnzb: nnzb,
        }

    def _alloc(self, env: dict[str, Any], sizes: dict[str, int], nnzb: int) -> None:
        """``bcol``, ``A`` and the arrays sized by the blocks (zeros) for ``nnzb`` blocks."""
        conv = self.conv
        lay = conv.layout
        shapes = {"cv_bi": (lay.nnzb,), "cv_bv": (lay.nnzb, lay.r, lay.c), **conv.phase1}
        derived = {lay.nnzb: "the blocks holding an entry"}
        self._zeros(env, shapes, {**sizes, lay.nnzb: nnzb}, derived)


class BcsrConversion(PhasedConversion):
    """``convert(CSR, BCSR(r, c))``: one spf Computation (both phases); :meth:`compile`
    gives a :class:`BcsrConversionKernel`."""

    kernel_type = BcsrConversionKernel
    layout: BcsrLayout
    phase1: dict[str, tuple[str, ...]]  # arrays sized by the blocks, allocated for PHASE=1


def to_bcsr(src: Format, dst: Format, index_dtype: str) -> BcsrConversion | None:
    """The conversion ``src -> dst`` when ``dst`` is BCSR-like, else ``None``."""
    lay = bcsr_layout(dst)
    if lay is None:
        return None
    rows = _compressed(src) if src.value_shape == ("NNZ",) and len(src.positions) == 1 else None
    if rows is None or rows.outer != 0 or src.shape != ("N", "M"):
        raise FormatError(
            f"convert({src.name} -> {dst.name}): the BCSR inspector is synthesized from "
            f"formats whose rows are rowptr(i) <= k < rowptr(i+1) over N x M coordinates "
            f"(CSR); convert {src.name} to CSR first"
        )
    conv = BcsrConversion.start(src, dst, index_dtype)
    conv.layout = lay
    conv.rank_extent = lay.mb
    b = PhasedBuilder(conv, src, index_dtype)
    b.data(src.value, ("NNZ",), "value")
    add_ranks(b, f"{src.coords[1]} / {lay.c}", "cv_jb")
    _pattern(b, lay)
    before = set(conv.data_spaces)
    b.phase = 1
    _fill(b, lay)
    out = {src.value, "cv_bi", "cv_bv"}
    by_blocks = conv.shapes(lambda a: a not in before and a not in out)
    # arrays sized by the blocks are allocated once NNZB is known, the others up front
    conv.phase1 = {a: s for a, s in by_blocks.items() if lay.nnzb in s}
    conv.allocate = conv.shapes(lambda a: a not in out and a not in conv.phase1)
    return conv


def _pattern(b: PhasedBuilder, lay: BcsrLayout) -> None:
    """``PHASE = 0``: block rows and columns of rows and entries, the blocks' count per
    block row (``cv_bp``), ``cv_fp`` numbering them in scan order, and whether each block
    row's blocks come in increasing block column order (``cv_bpath(0) = 0``)."""
    i, j = b.src.coords
    k = b.src.positions[0]
    nb, nnzb = lay.nb, lay.nnzb
    conv = b.comp
    b.index("cv_fp", "NNZ + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.index("cv_bp", f"{nb} + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.index("cv_bpath", "1", "0 <= v <= 1")
    b.index("cv_jn", "CV_KR + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.data("cv_mark", ("CV_KR",))
    for name in ("cv_op", "cv_uns", "cv_lb", "cv_lj"):
        conv.add_local(name, "int64_t")
    # an entry's block row, row within it and column within its block (locals: one value
    # per entry, recomputed where needed rather than stored per row or entry)
    for name, extent in (("cv_ib", nb), ("cv_ri", str(lay.r)), ("cv_ci", str(lay.c))):
        conv.add_local(name, f"{b.dtype}_t", (1,), index=True)
        conv.declare_uf(name, range=f"{{[v]: 0 <= v < {extent}}}")
    b.range(["$cv_mark$(t) = 0;"], "t", "0", "CV_KR")
    b.range(["$cv_bp$(t) = 0;"], "t", "0", f"{nb} + 1")
    b.range(["$cv_jn$(t) = 0;"], "t", "0", "CV_KR + 1")
    b.loop(["$cv_fp$(z) = 0; $cv_uns$ = 0; $cv_lb$ = -1; $cv_lj$ = 0;"], "{[z]: z = 0}", ("z",))
    # the scan visits entries in increasing k (rows in order): fp(k + 1) counts the
    # openers up to k as it goes; an opener's block column below the previous opener's in
    # the same block row means the blocks need sorting
    b.scan(
        [
            own_rank("cv_jb", f"{j} / {lay.c}", k),
            f"$cv_ib$(0) = {i} / {lay.r};",
            f"$cv_op$ = $cv_mark$(cv_jb({k})) != cv_ib(0) + 1;",
            f"$cv_mark$(cv_jb({k})) = cv_ib(0) + 1;",
            f"$cv_fp$({k} + 1) = $cv_fp$({k}) + $cv_op$;",
            "$cv_bp$(cv_ib(0) + 1) += $cv_op$;",
            f"$cv_jn$(cv_jb({k}) + 1) += $cv_op$;",
            f"$cv_uns$ += $cv_op$ * (cv_ib(0) == $cv_lb$) * (cv_jb({k}) < $cv_lj$);",
            "$cv_lb$ = $cv_op$ ? cv_ib(0) : $cv_lb$;",
            f"$cv_lj$ = $cv_op$ ? cv_jb({k}) : $cv_lj$;",
        ]
    )
    b.range(["$cv_bp$(t + 1) += $cv_bp$(t);"], "t", "0", nb)
    b.loop(["$cv_bpath$(z) = $cv_uns$ > 0 ? 1 : 0;"], "{[z]: z = 0}", ("z",))


def _fill(b: PhasedBuilder, lay: BcsrLayout) -> None:
    """``PHASE = 1``: each block's slot (``cv_slot``): its scan-order number when every
    block row's blocks came in increasing block column order, else from a counting sort of
    the blocks by block column handed out to their block rows' slots in that order; then
    every entry added into its block (``cv_bv``) and the block's column written (``cv_bi``)."""
    src = b.src
    i = src.coords[0]
    k = src.positions[0]
    nb, mb, nnzb = lay.nb, "CV_KR", lay.nnzb
    b.index("cv_jcur", mb, f"0 <= v < {nnzb}")
    b.index("cv_bcur", nb, f"0 <= v < {nnzb}")
    b.index("cv_tib", nnzb, f"0 <= v < {nb}")
    b.index("cv_tpair", nnzb, f"0 <= v < {nnzb}")
    b.index("cv_slot", nnzb, f"0 <= v < {nnzb}")
    b.index("cv_pid", mb, f"0 <= v < {nnzb}")
    b.data("cv_bi", (nnzb,))
    b.data("cv_bv", (nnzb, str(lay.r), str(lay.c)), "value")
    opener = f"cv_fp({k}) < cv_fp({k} + 1)"
    b.loop(["$cv_slot$(t) = t;"], f"{{[t]: 0 <= t < {nnzb} && cv_bpath(0) = 0}}", ("t",))
    sort = "cv_bpath(0) = 1"
    b.loop(
        ["$cv_jn$(t + 1) += $cv_jn$(t);", "$cv_jcur$(t) = $cv_jn$(t);"],
        f"{{[t]: 0 <= t < {mb} && {sort}}}",
        ("t",),
    )
    b.loop(["$cv_bcur$(t) = cv_bp(t);"], f"{{[t]: 0 <= t < {nb} && {sort}}}", ("t",))
    b.scan(
        [
            f"$cv_ib$(0) = {i} / {lay.r};",
            f"$cv_tib$(cv_jcur(cv_jb({k}))) = cv_ib(0);",
            f"$cv_tpair$(cv_jcur(cv_jb({k}))) = cv_fp({k});",
            f"$cv_jcur$(cv_jb({k})) += 1;",
        ],
        where=f"{opener} && {sort}",
    )
    b.loop(
        [
            "$cv_slot$(cv_tpair(u)) = cv_bcur(cv_tib(u));",
            "$cv_bcur$(cv_tib(u)) += 1;",
        ],
        f"{{[t, u]: 0 <= t < {mb} && cv_jn(t) <= u < cv_jn(t + 1) && {sort}}}",
        ("t", "u"),
    )
    slot = f"cv_slot(cv_pid(cv_jb({k})))"
    b.scan(
        [
            f"$cv_ri$(0) = {i} % {lay.r};",
            f"$cv_ci$(0) = {src.coords[1]} % {lay.c};",
            f"$cv_pid$(cv_jb({k})) = $cv_fp$({k}) < $cv_fp$({k} + 1) ? $cv_fp$({k}) : "
            f"$cv_pid$(cv_jb({k}));",
            f"$cv_bi$({slot}) = $cv_kv$(cv_jb({k}));",
            f"$cv_bv$({slot}, cv_ri(0), cv_ci(0)) += ${src.value}$({k});",
        ]
    )
