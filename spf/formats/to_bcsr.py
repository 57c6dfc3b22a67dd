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

``PHASE = 0``: each row's block row ``cv_ib(i) = i / r`` and offset ``cv_ri(i)``, each
entry's block column ``cv_jb(k) = j / c`` and offset ``cv_ci(k)``; a marker per block
column (the last block row that used it) tells an entry that opens a block (``cv_fp(k+1)
= 1``), counted per block row (``browptr``, a prefix sum gives ``NNZB``) and per block
column (``cv_jn``); ``cv_fp``, prefix-summed, numbers the blocks in scan order.

``PHASE = 1`` (``bcol`` and ``A`` allocated, zeros): the blocks bucketed by block column
(a counting sort), then read bucket by bucket and given the next slot of their block row:
block columns come out increasing within each block row (``bcol``, and ``cv_slot``: the
slot of each block). Every entry is then added at ``A[slot, ri, ci]`` (its block's number
found through the marker again). Blocks at the matrix's edge (``N``, ``M`` not multiples
of ``r``, ``c``) are zero-filled past it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import SpfError
from spf.formats.convert import _compressed, _extent
from spf.formats.phased import PhasedBuilder, PhasedConversion, PhasedKernel

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

    def _convert(self, **args: Any) -> dict[str, Any]:
        conv = self.conv
        lay = conv.layout
        sizes = self._sizes(args)
        sizes[lay.nb] = -(-sizes["N"] // lay.r)
        sizes[lay.mb] = -(-sizes["M"] // lay.c)
        blocks = {lay.nb: sizes[lay.nb], lay.mb: sizes[lay.mb]}
        dtype = np.dtype(conv.index_dtype)
        env: dict[str, Any] = dict(args)
        for arr, shape in conv.allocate.items():
            env[arr] = np.zeros([_extent(e, sizes) for e in shape], dtype=dtype)
        self._alloc(env, sizes, 0)
        self._run(check=self.check, PHASE=0, **{lay.nnzb: 0}, **blocks, **env)
        nnzb = int(env["cv_bp"][-1])
        self._alloc(env, sizes, nnzb)
        if nnzb:
            self._run(check=self.check, PHASE=1, **{lay.nnzb: nnzb}, **blocks, **env)
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
        env["cv_bi"] = np.zeros(nnzb, dtype=conv.index_dtype)
        env["cv_bv"] = np.zeros((nnzb, lay.r, lay.c))
        known = {**sizes, lay.nnzb: nnzb}
        for arr, shape in conv.phase1.items():
            env[arr] = np.zeros([_extent(e, known) for e in shape], dtype=conv.index_dtype)


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
        raise SpfError(
            f"convert({src.name} -> {dst.name}): the BCSR inspector is synthesized from "
            f"formats whose rows are rowptr(i) <= k < rowptr(i+1) over N x M coordinates "
            f"(CSR); convert {src.name} to CSR first"
        )
    conv = BcsrConversion.start(src, dst, index_dtype)
    conv.layout = lay
    b = PhasedBuilder(conv, src, index_dtype)
    b.data(src.value, ("NNZ",), "value")
    _pattern(b, lay)
    before = set(conv.data_spaces)
    b.phase = 1
    _fill(b, lay)
    out = {src.value, "cv_bi", "cv_bv"}
    conv.allocate = conv.shapes(lambda a: a in before and a not in out)
    conv.phase1 = conv.shapes(lambda a: a not in before and a not in out)
    return conv


def _pattern(b: PhasedBuilder, lay: BcsrLayout) -> None:
    """``PHASE = 0``: block rows and columns of rows and entries, the blocks' count per
    block row (``cv_bp``) and block column (``cv_jn``), ``cv_fp`` numbering them."""
    i, j = b.src.coords
    k = b.src.positions[0]
    nb, mb, nnzb = lay.nb, lay.mb, lay.nnzb
    b.index("cv_ib", "N", f"0 <= v < {nb}")
    b.index("cv_ri", "N", f"0 <= v < {lay.r}")
    b.index("cv_jb", "NNZ", f"0 <= v < {mb}")
    b.index("cv_ci", "NNZ", f"0 <= v < {lay.c}")
    b.index("cv_fp", "NNZ + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.index("cv_bp", f"{nb} + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.index("cv_jn", f"{mb} + 1", f"0 <= v <= {nnzb}", monotonic=True)
    b.data("cv_mark", (mb,))
    b.range([f"$cv_ib$(p) = p / {lay.r};", f"$cv_ri$(p) = p % {lay.r};"], "p", "0", "N")
    b.range(["$cv_mark$(t) = 0;"], "t", "0", mb)
    b.range(["$cv_bp$(t) = 0;"], "t", "0", f"{nb} + 1")
    b.range(["$cv_jn$(t) = 0;"], "t", "0", f"{mb} + 1")
    b.loop(["$cv_fp$(z) = 0;"], "{[z]: z = 0}", ("z",))
    b.scan(
        [
            f"$cv_jb$({k}) = {j} / {lay.c};",
            f"$cv_ci$({k}) = {j} % {lay.c};",
            f"$cv_fp$({k} + 1) = $cv_mark$(cv_jb({k})) != cv_ib({i}) + 1 ? 1 : 0;",
            f"$cv_mark$(cv_jb({k})) = cv_ib({i}) + 1;",
            f"$cv_bp$(cv_ib({i}) + 1) += $cv_fp$({k} + 1);",
            f"$cv_jn$(cv_jb({k}) + 1) += $cv_fp$({k} + 1);",
        ]
    )
    b.range(["$cv_fp$(t + 1) += $cv_fp$(t);"], "t", "0", "NNZ")
    b.range(["$cv_bp$(t + 1) += $cv_bp$(t);"], "t", "0", nb)
    b.range(["$cv_jn$(t + 1) += $cv_jn$(t);"], "t", "0", mb)


def _fill(b: PhasedBuilder, lay: BcsrLayout) -> None:
    """``PHASE = 1``: blocks sorted by block column into their block rows' slots
    (``cv_bi``, ``cv_slot``), then every entry added into its block (``cv_bv``)."""
    src = b.src
    i = src.coords[0]
    k = src.positions[0]
    nb, mb, nnzb = lay.nb, lay.mb, lay.nnzb
    b.index("cv_jcur", mb, f"0 <= v < {nnzb}")
    b.index("cv_bcur", nb, f"0 <= v < {nnzb}")
    b.index("cv_tib", nnzb, f"0 <= v < {nb}")
    b.index("cv_tpair", nnzb, f"0 <= v < {nnzb}")
    b.index("cv_slot", nnzb, f"0 <= v < {nnzb}")
    b.index("cv_pid", mb, f"0 <= v < {nnzb}")
    b.data("cv_bi", (nnzb,))
    b.data("cv_bv", (nnzb, str(lay.r), str(lay.c)), "value")
    b.range(["$cv_jcur$(t) = cv_jn(t);"], "t", "0", mb)
    b.range(["$cv_bcur$(t) = cv_bp(t);"], "t", "0", nb)
    b.scan(
        [
            f"$cv_tib$(cv_jcur(cv_jb({k}))) = cv_ib({i});",
            f"$cv_tpair$(cv_jcur(cv_jb({k}))) = cv_fp({k});",
            f"$cv_jcur$(cv_jb({k})) += 1;",
        ],
        where=f"cv_fp({k}) < cv_fp({k} + 1)",
    )
    b.loop(
        [
            "$cv_slot$(cv_tpair(u)) = cv_bcur(cv_tib(u));",
            "$cv_bi$(cv_bcur(cv_tib(u))) = t;",
            "$cv_bcur$(cv_tib(u)) += 1;",
        ],
        f"{{[t, u]: 0 <= t < {mb} && cv_jn(t) <= u < cv_jn(t + 1)}}",
        ("t", "u"),
    )
    b.scan(
        [
            f"$cv_pid$(cv_jb({k})) = $cv_fp$({k}) < $cv_fp$({k} + 1) ? $cv_fp$({k}) : "
            f"$cv_pid$(cv_jb({k}));",
            f"$cv_bv$(cv_slot(cv_pid(cv_jb({k}))), cv_ri({i}), cv_ci({k})) += ${src.value}$({k});",
        ]
    )
