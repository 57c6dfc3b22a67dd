"""``convert(src, dst)``: a format conversion synthesized from two storage relations.

The source is read through its scan (:meth:`Format.scan`: every stored entry ``k`` with its
coordinates); the destination's relation says what to build:

* a coordinate destination (``i = row(k) && j = col(k)``, COO): one pass writes each entry's
  coordinates and value at its source position;
* a compressed destination (``ptr(o) <= k < ptr(o+1) && n = idx(k)``, CSR, CSC): counts per
  outer coordinate ``o``, a prefix sum into ``ptr``, the placement of every entry at the next
  free slot of its ``o`` (a cursor), and the copy of inner coordinates and values. When the
  destination assumes an order within ``o`` (CSR: columns increasing) and the source does not
  already visit entries in that order without duplicates, the counting pass picks one of
  three generated paths (:func:`_sorted`): entries already in order stay where they are;
  short rows are rank-sorted row by row after the placement; long rows take a counting sort
  by ``n`` before the stable placement by ``o``, its buckets ``n``'s ranks among the distinct
  values (:mod:`spf.formats.ranks`: ``n`` itself unless its extent dwarfs the entries, so
  that no scratch is sized by the columns). Duplicates (same ``o`` and ``n``) are then
  summed, as ``scipy.sparse`` does, when the sort found some. Every path is linear in the
  entries and rows (the rank sort runs only within its budget, ``RANK_COST``).

The conversion is one spf Computation: the arrays it computes and then reads as UFs
(``ptr``, the cursors, the column buckets, the path chosen) are run-time index arrays
(``index=True``).
Coordinates out of range are refused before anything is written (the kernel checks the
source UFs' declared ranges on entry; with ``check=False`` a vectorised pass per source
index array does, :meth:`ConversionKernel._source_ranges`), as is, with ``check=True``,
source data violating the source's assumptions (an unsorted CSR row).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spf.analysis.memo import remember
from spf.computation import Computation, Stmt
from spf.dtypes import numpy_name
from spf.errors import ArgumentError, FormatError, SpfError
from spf.formats.format import Format
from spf.formats.ranks import SIZES, add_ranks, own_rank, rank_sizes
from spf.formats.sizing import Ties, allocate, check_ties, extent
from spf.formats.spanning import fibers_spanning, spanning

__all__ = ["Conversion", "ConversionKernel", "convert"]


@dataclass(frozen=True)
class _Compressed:
    """Destination ``ptr(o) <= k < ptr(o+1) && n = idx(k)``: coordinate indices ``o``, ``n``."""

    outer: int
    inner: int
    ptr: str
    idx: str


def _uf_of_k(expr: str, k: str) -> str | None:
    """``U`` when ``expr`` is ``U(k)``."""
    m = re.fullmatch(rf"\s*(\w+)\s*\(\s*{k}\s*\)\s*", expr)
    return m.group(1) if m else None


def _single_position(fmt: Format, role: str) -> str:
    if len(fmt.positions) != 1 or fmt.value_shape != ("NNZ",):
        raise FormatError(
            f"convert: the {role} format {fmt.name} stores entries at [{', '.join(fmt.positions)}]"
            f" with values of shape {fmt.value_shape}; conversions are synthesized for formats "
            "storing each entry once at one position 0 <= k < NNZ (COO, CSR, CSC and formats "
            "like them)"
        )
    return fmt.positions[0]


def _compressed(fmt: Format) -> _Compressed | None:
    k = fmt.positions[0]
    for n, c in enumerate(fmt.coords):
        idx = _uf_of_k(fmt._defined.get(c, ""), k)
        if idx is None:
            continue
        o = 1 - n
        oc = fmt.coords[o]
        if oc in fmt._defined:
            continue
        m = re.search(
            rf"(\w+)\(\s*{oc}\s*\)\s*<=\s*{k}\s*<\s*(\w+)\(\s*{oc}\s*\+\s*1\s*\)", fmt.storage
        )
        if m and m.group(1) == m.group(2):
            return _Compressed(o, n, m.group(1), idx)
    return None


def _coordinate(fmt: Format) -> tuple[str, str] | None:
    k = fmt.positions[0]
    names = [_uf_of_k(fmt._defined.get(c, ""), k) for c in fmt.coords]
    if len(names) == 2 and names[0] and names[1]:
        return names[0], names[1]
    return None


class _Builder:
    """Adds statements with 2d+1 schedules, in order, to the conversion Computation."""

    def __init__(self, comp: Computation, src: Format, dtype: str, *, joined: bool = False) -> None:
        self.comp = comp
        self.src = src
        self.dtype = dtype
        self.top = 0
        self.joined = joined
        src.declare(comp, dtype)

    def data(self, name: str, shape: tuple[str, ...], kind: str = "index") -> None:
        if name not in self.comp.data_spaces:
            ctype = f"{self.dtype}_t" if kind == "index" else "double"
            self.comp.add_data_space(name, ctype, shape=shape)

    def index(self, name: str, count: str, rng: str, *, monotonic: bool = False) -> None:
        """A run-time index array ``name[count]`` (written here, read as a UF later)."""
        if name in self.comp.data_spaces:
            return
        self.comp.add_data_space(name, f"{self.dtype}_t", shape=(count,), index=True)
        self.comp.declare_uf(
            name, range=f"{{[v]: {rng}}}", monotonic="nondecreasing" if monotonic else None
        )

    def loop(self, sources: list[str], domain: str, loops: tuple[str, ...]) -> None:
        """Statements ``sources`` in one loop nest over ``domain``; with ``joined``, one
        statement running them in order (the legality check before code generation compares
        every pair of statements, so fewer statements generate faster)."""
        sched = ", ".join(f"{self.top}, {v}" if n == 0 else f"0, {v}" for n, v in enumerate(loops))
        texts = [" ".join(sources)] if self.joined else sources
        for n, text in enumerate(texts):
            self.add(text, domain, f"{{[{', '.join(loops)}] -> [{sched}, {n}]}}")
        self.top += 1

    def restrict(self, domain: str) -> str:
        """``domain`` as the statements added here run it (a phase adds ``PHASE = n``)."""
        return domain

    def add(self, source: str, domain: str, schedule: str) -> None:
        """One statement with its own schedule (placed by the caller)."""
        self.comp.add_stmt(Stmt(source, self.restrict(domain), schedule))

    order: tuple[str, ...] | None = None
    """The order the source is scanned in (``None``: its :attr:`Format.loops`)."""

    def scan(self, sources: list[str]) -> None:
        self.loop(sources, self.src.scan(self.order), self.order or self.src.loops)

    def range(self, sources: list[str], var: str, lo: str, hi: str) -> None:
        self.loop(sources, f"{{[{var}]: {lo} <= {var} < {hi}}}", (var,))


def _prefix(b: _Builder, arr: str, extent: str) -> None:
    b.range([f"${arr}$(o) = 0;"], "o", "0", f"{extent} + 1")


class Conversion(Computation):
    """A synthesized conversion: one spf :class:`~spf.Computation` (inspector and copy)
    whose :meth:`compile` gives a :class:`ConversionKernel` returning the new arrays."""

    src: Format
    dst: Format
    outputs: dict[str, str]
    allocate: dict[str, tuple[str, ...]]
    trim: tuple[str, str, str] | None
    index_dtype: str
    rank_extent: str | None = None
    """The extent of the key :mod:`spf.formats.ranks` ranks (``None``: no ranks)."""

    def compile(  # type: ignore[override]
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> ConversionKernel:
        """Generate, build (cached) and load the conversion kernel (C only)."""
        if target != "c":
            raise FormatError(
                f"convert({self.src.name} -> {self.dst.name}): conversions compile for the "
                f"'c' target only, got {target!r}"
            )
        return ConversionKernel(self, super().compile(target, name, check, **options), check)


@dataclass
class ConversionKernel:
    """``kernel(**source arrays and sizes, check=True)`` -> dict of the destination's arrays
    and sizes. ``check`` is as for every kernel (the argument checks of this call; its
    default is the ``check`` the conversion was compiled with)."""

    conv: Conversion
    kernel: Any
    check: bool = True
    _ties: Ties | None = field(default=None, init=False, repr=False)

    def _ranked(self, sizes: dict[str, int]) -> dict[str, int]:
        """``sizes`` with the sizes of the conversion's ranks (:mod:`spf.formats.ranks`)."""
        ext = self.conv.rank_extent
        if ext is None:
            return sizes
        return {**sizes, **rank_sizes(extent(ext, sizes), sizes["NNZ"])}

    def _rank_args(self, sizes: Mapping[str, int]) -> dict[str, int]:
        """The rank sizes the kernel takes (none for a conversion without ranks)."""
        return {s: sizes[s] for s in SIZES} if self.conv.rank_extent is not None else {}

    def _zeros(
        self,
        env: dict[str, Any],
        shapes: Mapping[str, Sequence[object]],
        sizes: Mapping[str, int],
        derived: Mapping[str, str] | None = None,
    ) -> None:
        """Allocate ``shapes`` into ``env`` once they are known to fit in memory."""
        env.update(allocate(self.conv, shapes, sizes, derived=derived))

    def _check(self, check: object) -> bool:
        """The ``check`` of a call: the compiled default, or ``True``/``False``."""
        if check is None:
            return self.check
        if not isinstance(check, bool):
            conv = self.conv
            raise ArgumentError(
                f"convert({conv.src.name} -> {conv.dst.name}): check must be True or False, "
                f"got {check!r}"
            )
        return check

    def _sizes(self, args: dict[str, Any]) -> dict[str, int]:
        """The source's sizes, checked: non-negative ints that agree with the arrays
        recording them (:func:`spf.formats.sizing.check_ties`), before any allocation."""
        conv = self.conv
        src = conv.src
        need = set(src.ufs) | {src.value} | set(src.sizes)
        missing = sorted(need - set(args))
        if missing:
            raise ArgumentError(
                f"convert({src.name} -> {conv.dst.name}): missing argument(s) "
                f"{', '.join(missing)}; pass the {src.name} arrays and sizes by name"
            )
        extra = sorted(set(args) - need)
        if extra:
            raise ArgumentError(
                f"convert({src.name} -> {conv.dst.name}): unknown argument(s) "
                f"{', '.join(extra)}; it takes {', '.join(sorted(need))}"
            )
        sizes: dict[str, int] = {}
        for s in src.sizes:
            v = args[s]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ArgumentError(
                    f"convert({src.name} -> {conv.dst.name}): size {s} must be a "
                    f"non-negative int, got {v!r}"
                )
            sizes[s] = int(v)
        if self._ties is None:
            self._ties = Ties(conv)
        check_ties(self._ties, args, sizes)
        return sizes

    def _run(self, **args: Any) -> None:
        """One call of the compiled kernel (a phase of a phased conversion); its argument
        errors name the conversion."""
        try:
            if args.get("check") is False and not args.get("PHASE"):  # once a conversion
                self._source_ranges(args)
            self.kernel(**args)
        except ArgumentError as err:
            conv = self.conv
            raise ArgumentError(
                f"convert({conv.src.name} -> {conv.dst.name}): {self._cause(err, args)}"
            ) from err

    def _cause(self, err: ArgumentError, args: Mapping[str, Any]) -> ArgumentError:
        """``err``, or, where it is about an array the conversion computes (a run-time
        index array such as SELL's row lengths) and a source index array is out of its
        declared range, that array's error: the cause, in the caller's own terms (a
        checked phase can compute from a bad coordinate before it loads the coordinate
        itself)."""
        if "run-time index array" not in str(err):
            return err
        try:  # the ranges, then the pointers' order (check=False leaves it unchecked)
            self._source_ranges(args, order=True)
        except ArgumentError as source:
            return source
        return err

    def __call__(
        self, *positional: object, check: bool | None = None, **args: Any
    ) -> dict[str, Any]:
        """The destination's arrays and sizes from the source's, all passed by name (a
        positional call is an ``ArgumentError`` listing the names); ``check`` as the class
        says."""
        if positional:
            src = self.conv.src
            raise ArgumentError.positional(
                f"convert({src.name} -> {self.conv.dst.name})",
                len(positional),
                "kernel",
                [*src.ufs, src.value, *src.sizes],
            )
        check = self._check(check)
        used, note = self._spanned(args)
        try:
            return self._convert(check=check, **used)
        except ArgumentError as err:
            if not note:
                raise
            raise ArgumentError(f"{err} ({note})") from err

    def _spanned(self, args: dict[str, Any]) -> tuple[Mapping[str, Any], str]:
        """``args`` over the positions a compressed source's pointers cover
        (:mod:`spf.formats.spanning`), and how an error then counts positions (empty:
        as the caller's arrays do)."""
        src = self.conv.src
        rows = self._rows
        if rows is None:
            return args, ""
        if isinstance(rows, int):  # CSF(rows)
            used, first = fibers_spanning(args, rows, src.value)
            if not first:
                return used, ""
            return used, "positions counted from each level's first entry the pointers reach"
        ptr, idx, outer = rows
        spanned, first = spanning(args, ptr, idx, src.value, outer)
        if not first:
            return spanned, ""
        return spanned, (
            f"positions counted from {ptr}[0] = {first}: the conversion read {idx} and "
            f"{src.value} from entry {first} on"
        )

    @functools.cached_property
    def _rows(self) -> tuple[str, str, str] | int | None:
        """``(pointer array, index array, outer extent)`` of a compressed source (CSR,
        CSC), the order of a CSF source (:mod:`spf.formats.spanning`), or None; looked up
        once per kernel."""
        from spf.formats.tensor import csf_order

        src = self.conv.src
        rows: tuple[str, str, str] | int | None = csf_order(src)
        if rows is None and len(src.coords) == 2 and len(src.positions) == 1:
            comp = _compressed(src) if src.value_shape == ("NNZ",) else None
            if comp is not None and src.shape[comp.outer].isidentifier():
                rows = (comp.ptr, comp.idx, src.shape[comp.outer])
        return rows

    def _convert(self, *, check: bool, **args: Any) -> dict[str, Any]:
        conv = self.conv
        sizes = self._sizes(args)
        ranks = self._ranked(sizes)
        env: dict[str, Any] = dict(args)
        self._zeros(env, conv.allocate, ranks)
        env.update(self._rank_args(ranks))
        self._run(check=check, **env)  # with check=False, the source's ranges first
        out = {key: env[name] for key, name in conv.outputs.items()}
        out.update({s: sizes.get(s, s) for s in conv.dst.sizes})
        if conv.trim is not None:
            ptr, idx, value = conv.trim
            nnz = int(out[ptr][-1])
            out[idx] = out[idx][:nnz]
            out[value] = out[value][:nnz]
            out["NNZ"] = nnz
        return out

    def _source_ranges(self, env: Mapping[str, Any], *, order: bool = False) -> None:
        """With ``check=False`` too, the source format's index arrays in their declared
        ranges, one vectorised pass each, ``ArgumentError`` otherwise: the conversion
        writes through them (counts, cursors, slots), so a coordinate out of range would
        write out of bounds; their other facts (orders) are left unchecked, but for
        ``order``: the pointers' monotonicity too (to name a decreasing ``rowptr`` as the
        cause of the error an unchecked call met on the scratch computed from it)."""
        binder = getattr(self.kernel, "_binder", None)
        if binder is None:
            return
        source = self.conv.src.ufs
        params, arrays = binder.bind({k: v for k, v in env.items() if k != "check"}, check=False)
        for d, arr in zip(binder.data, arrays, strict=True):
            if d.uf_check is not None and d.name in source:
                d.uf_check.check(arr, params, order=order)


def _extent(expr: str, sizes: Mapping[str, int]) -> int:
    """The value of an extent ``"N + 1"`` / ``"NNZ"`` (a sum of sizes and integers)."""
    return extent(expr, sizes)


def _index_name(index_dtype: object) -> str:
    try:
        name = numpy_name(index_dtype, what="convert: index_dtype")
    except SpfError:
        name = ""
    if name not in ("int32", "int64"):
        raise FormatError(f"convert: index_dtype must be 'int32' or 'int64', got {index_dtype!r}")
    return name


def convert(src: Format, dst: Format, *, index_dtype: object = "int32") -> Conversion:
    """The conversion from ``src`` to ``dst`` (see the module docstring).

    >>> import numpy as np
    >>> from spf.formats import COO, CSR
    >>> out = convert(COO, CSR).compile()(row=np.array([1, 0, 1], dtype=np.int32),
    ...     col=np.array([0, 1, 0], dtype=np.int32), A=np.array([1.0, 2.0, 3.0]), N=2, M=2, NNZ=3)
    >>> out["rowptr"], out["col"], out["A"], out["NNZ"]
    (array([0, 1, 2], dtype=int32), array([1, 0], dtype=int32), array([2., 4.]), 2)
    """
    for role, f in (("src", src), ("dst", dst)):
        if not isinstance(f, Format):
            raise ArgumentError(
                f"convert: {role} must be an spf.Format (spf.formats.CSR, ...), got {f!r}"
            )
    from spf.formats.to_csf import tensor_conversion

    if (tensor := tensor_conversion(src, dst, _index_name(index_dtype))) is not None:
        return tensor
    for f in (src, dst):
        if len(f.coords) != 2:
            raise FormatError(f"convert: {f.name} has {len(f.coords)} coordinates; matrices have 2")
    conv = _synthesize(src, dst, _index_name(index_dtype))
    # The statements run in the order they were added: the schedule is program order, which
    # no dependence can contradict, so the legality verdict is known without computing the
    # dependences (most of the code generation time). Any scheduling command changes the
    # computation's IR, and the check runs again.
    remember(conv.ir, ("legality",), None)
    return conv


def _synthesize(src: Format, dst: Format, name: str) -> Conversion:
    """The conversion ``src -> dst`` with ``name`` index arrays, from the synthesis that
    fits the two relations."""
    from spf.formats.layouts import laid_out

    if (other := laid_out(src, dst, name)) is not None:
        return other
    _single_position(src, "source")
    from spf.formats.to_sell import sell_layout, to_sell

    if (layout := sell_layout(dst)) is not None:
        return to_sell(src, dst, layout, name)
    _single_position(dst, "destination")
    if src.shape != dst.shape:
        raise FormatError(
            f"convert: {src.name} is {src.shape} and {dst.name} is {dst.shape}; the coordinate "
            "extents must agree"
        )
    if not all(e.isidentifier() for e in src.shape):
        raise FormatError(
            f"convert: {src.name}'s extents {src.shape} are not plain sizes; conversions are "
            "synthesized for formats over N x M coordinates"
        )
    coo = _coordinate(dst)
    comp = _compressed(dst)
    if coo is None and comp is None:
        raise FormatError(
            f"convert: cannot synthesize a conversion from {src.name} into {dst.name}: its "
            "relation is neither coordinate (i = row(k) && j = col(k)), compressed "
            "(ptr(i) <= k < ptr(i+1) && j = idx(k)) nor SELL-like (k = cs(ch) + C*w + r); "
            "build its arrays another way (spf.sparse.format_args for the built-ins)"
        )
    conv = Conversion(f"convert_{src.name.lower()}_{dst.name.lower()}")
    conv.src, conv.dst, conv.index_dtype, conv.trim = src, dst, name, None
    b = _Builder(conv, src, name, joined=True)
    if coo is not None:
        _to_coordinate(b, dst, coo)
    else:
        assert comp is not None
        _to_compressed(b, dst, comp)
    return conv


def _to_coordinate(b: _Builder, dst: Format, ufs: tuple[str, str]) -> None:
    conv, src = b.comp, b.src
    assert isinstance(conv, Conversion)
    k = src.positions[0]
    conv.allocate = {"cv_c0": ("NNZ",), "cv_c1": ("NNZ",), "cv_val": ("NNZ",)}
    b.data(src.value, ("NNZ",), "value")
    b.data("cv_c0", ("NNZ",))
    b.data("cv_c1", ("NNZ",))
    b.data("cv_val", ("NNZ",), "value")
    b.scan(
        [
            f"$cv_c0$({k}) = {src.coords[0]};",
            f"$cv_c1$({k}) = {src.coords[1]};",
            f"$cv_val$({k}) = ${src.value}$({k});",
        ]
    )
    conv.outputs = {ufs[0]: "cv_c0", ufs[1]: "cv_c1", dst.value: "cv_val"}


def _ordered_unique(src: Format, n: int) -> bool:
    """The source's scan visits entries in nondecreasing coordinate ``n`` and its assumed
    order rules out duplicates (CSR read for CSC: rows increasing, columns strictly)."""
    return bool(src.ordered) and src.loops[0] == src.coords[n]


def _coord_of(src: Format, c: int, entry: str) -> str | None:
    """Coordinate ``c`` of entry ``entry`` as a UF expression of it, when the source defines
    it as ``U(k)``."""
    uf = _uf_of_k(src._defined.get(src.coords[c], ""), src.positions[0])
    return f"{uf}({entry})" if uf else None


def _to_compressed(b: _Builder, dst: Format, d: _Compressed) -> None:
    conv, src = b.comp, b.src
    assert isinstance(conv, Conversion)
    k = src.positions[0]
    o_var, n_var = src.coords[d.outer], src.coords[d.inner]
    eo = dst.shape[d.outer]
    sort = bool(dst.ordered) and not _ordered_unique(src, d.inner)
    b.data(src.value, ("NNZ",), "value")
    # counts per outer coordinate, prefix sums, cursors
    b.index("cv_ptr", f"{eo} + 1", "0 <= v <= NNZ", monotonic=True)
    b.index("cv_cur", f"{eo} + 1", "0 <= v < NNZ")
    b.data("cv_idx", ("NNZ",))
    b.data("cv_val", ("NNZ",), "value")
    _prefix(b, "cv_ptr", eo)
    if sort:
        _sorted(b, dst, d)
    else:
        b.scan([f"$cv_ptr$({o_var} + 1) += 1;"])
        b.range(["$cv_ptr$(o + 1) += $cv_ptr$(o);", "$cv_cur$(o) = $cv_ptr$(o);"], "o", "0", eo)
        b.scan(
            [
                f"$cv_idx$(cv_cur({o_var})) = {n_var};",
                f"$cv_val$(cv_cur({o_var})) = ${src.value}$({k});",
                f"$cv_cur$({o_var}) += 1;",
            ]
        )
        conv.outputs = {d.ptr: "cv_ptr", d.idx: "cv_idx", dst.value: "cv_val"}
    conv.allocate = {
        name: tuple(str(e) for e in ds.shape or ())
        for name, ds in conv.data_spaces.items()
        if name.startswith("cv_") and ds.shape and ds.role != "local"
    }


RANK_COST = 16
"""The per-row rank sort runs when the sum of the squared row lengths is at most
``RANK_COST * NNZ`` (each comparison costs about 1/16 of the random write the column
counting sort adds per entry); longer rows take the counting sort."""


def _where(domain: str, extra: str) -> str:
    """``domain`` (``{[...]: ...}``) with the constraint ``extra`` added."""
    head, sep, body = domain.rstrip().rstrip("}").partition(":")
    return f"{head}{sep}{body} && {extra}}}" if sep else f"{head}: {extra}}}"


def _sorted(b: _Builder, dst: Format, d: _Compressed) -> None:
    """Placement sorted within each outer coordinate ``o``, duplicates summed. One of three
    paths, chosen at run time by ``cv_path(0)`` from what the counting pass saw:

    0. the source visits its entries in strictly increasing (outer, inner) order (only
       tested where both coordinates are UFs of the position, COO): each entry stays where
       it is, no sort, no duplicates;
    1. rows short enough (sum of squared lengths <= ``RANK_COST * NNZ``): entries placed by
       outer coordinate, then each moved to its rank within its row (inner coordinate, ties
       by position: stable);
    2. otherwise: a counting sort by inner coordinate, read bucket by bucket into the stable
       placement by outer coordinate.

    Paths 1 and 2 then count equal neighbours; only when there are some are they summed
    (:func:`_sum_duplicates`)."""
    conv, src = b.comp, b.src
    assert isinstance(conv, Conversion)
    k = src.positions[0]
    o_var, n_var = src.coords[d.outer], src.coords[d.inner]
    eo, en = dst.shape[d.outer], dst.shape[d.inner]
    prev_o, prev_n = _coord_of(src, d.outer, f"{k} - 1"), _coord_of(src, d.inner, f"{k} - 1")
    detect = prev_o is not None and prev_n is not None and src.loops[0] == k
    conv.add_local("cv_path", f"{b.dtype}_t", (1,), index=True)
    conv.declare_uf("cv_path", range="{[v]: 0 <= v <= 2}")
    conv.add_local("cv_dup", f"{b.dtype}_t", (1,), index=True)
    conv.declare_uf("cv_dup", range="{[v]: 0 <= v <= 1}")
    conv.add_local("cv_sq", "double")
    conv.add_local("cv_uns", "int64_t")
    conv.add_local("cv_nd", "int64_t")
    conv.add_local("cv_r", "int64_t")
    one = "{[z]: z = 0}"
    b.loop(["$cv_sq$ = 0;", "$cv_uns$ = 0;", "$cv_nd$ = 0;"], one, ("z",))
    scan = src.scan()
    t = b.top
    sched = ", ".join(f"{t}, {v}" if n == 0 else f"0, {v}" for n, v in enumerate(src.loops))
    loops = ", ".join(src.loops)
    conv.add_stmt(Stmt(f"$cv_ptr$({o_var} + 1) += 1;", scan, f"{{[{loops}] -> [{sched}, 0]}}"))
    if detect:
        conv.add_stmt(
            Stmt(
                f"$cv_uns$ += ({o_var} < {prev_o}) + ({o_var} == {prev_o}) * "
                f"({n_var} <= {prev_n});",
                _where(scan, f"{k} >= 1"),
                f"{{[{loops}] -> [{sched}, 1]}}",
            )
        )
    b.top += 1
    b.range(
        [
            "$cv_sq$ += (double)$cv_ptr$(o + 1) * $cv_ptr$(o + 1);",
            "$cv_ptr$(o + 1) += $cv_ptr$(o);",
            "$cv_cur$(o) = $cv_ptr$(o);",
        ],
        "o",
        "0",
        eo,
    )
    rank = f"$cv_sq$ <= {RANK_COST}.0 * NNZ ? 1 : 2"
    choose = f"$cv_uns$ == 0 ? 0 : ({rank})" if detect else rank
    b.loop([f"$cv_path$(z) = {choose};"], one, ("z",))
    if detect:  # path 0: already in order
        b.loop(
            [f"$cv_idx$({k}) = {n_var};", f"$cv_val$({k}) = ${src.value}$({k});"],
            _where(scan, "cv_path(0) = 0"),
            src.loops,
        )
    _rank_sort(b, dst, d)
    _counting_sort(b, dst, d, en)
    # equal neighbours within a row (path 2; path 1 counts them while ranking)
    rest = f"{{[o, k]: 0 <= o < {eo} && cv_ptr(o) < k < cv_ptr(o + 1) && cv_path(0) = 2}}"
    b.loop(["$cv_nd$ += $cv_idx$(k) == $cv_idx$(k - 1) ? 1 : 0;"], rest, ("o", "k"))
    b.loop(["$cv_dup$(z) = $cv_nd$ > 0 ? 1 : 0;"], one, ("z",))
    conv.outputs = {d.ptr: "cv_dptr", d.idx: "cv_idx", dst.value: "cv_val"}
    conv.trim = (d.ptr, d.idx, dst.value)
    _sum_duplicates(b, eo)


def _rank_sort(b: _Builder, dst: Format, d: _Compressed) -> None:
    """Path 1: placement by outer coordinate, then row by row: the row copied to a buffer
    (``cv_bc``, ``cv_bv``: only a row's worth of it is touched), the rank of each entry
    within the row (inner coordinate, ties by position: stable) and the entry written back
    at its rank. Equal inner coordinates within a row are counted on the way (``cv_nd``)."""
    src = b.src
    k = src.positions[0]
    o_var, n_var = src.coords[d.outer], src.coords[d.inner]
    eo = dst.shape[d.outer]
    conv = b.comp
    conv.add_local("cv_bc", f"{b.dtype}_t", ("NNZ",))
    conv.add_local("cv_bv", "double", ("NNZ",))
    conv.add_local("cv_rk", f"{b.dtype}_t", ("NNZ",), index=True)
    conv.declare_uf("cv_rk", range="{[v]: 0 <= v < NNZ}")
    b.loop(
        [
            f"$cv_idx$(cv_cur({o_var})) = {n_var};",
            f"$cv_val$(cv_cur({o_var})) = ${src.value}$({k});",
            f"$cv_cur$({o_var}) += 1;",
        ],
        _where(src.scan(), "cv_path(0) = 1"),
        src.loops,
    )
    rows = f"0 <= o < {eo} && cv_path(0) = 1"
    length = "cv_ptr(o + 1) - cv_ptr(o)"
    t = b.top
    entries = f"{{[o, k]: {rows} && cv_ptr(o) <= k < cv_ptr(o + 1)}}"
    conv.add_stmt(
        Stmt(
            "$cv_bc$(k - cv_ptr(o)) = $cv_idx$(k); $cv_bv$(k - cv_ptr(o)) = $cv_val$(k);",
            entries,
            f"{{[o, k] -> [{t}, o, 0, k]}}",
        )
    )
    at = f"{{[o, a]: {rows} && 0 <= a < {length}}}"
    pairs = f"{{[o, a, c]: {rows} && 0 <= a < {length} && 0 <= c < {length}}}"
    conv.add_stmt(Stmt("$cv_r$ = $cv_ptr$(o);", at, f"{{[o, a] -> [{t}, o, 1, a, 0]}}"))
    conv.add_stmt(
        Stmt(
            "$cv_r$ += $cv_bc$(c) < $cv_bc$(a) + (c < a); "
            "$cv_nd$ += (c < a) * ($cv_bc$(c) == $cv_bc$(a));",
            pairs,
            f"{{[o, a, c] -> [{t}, o, 1, a, 1, c]}}",
        )
    )
    conv.add_stmt(
        Stmt(
            "$cv_rk$(a) = $cv_r$; $cv_idx$(cv_rk(a)) = $cv_bc$(a); "
            "$cv_val$(cv_rk(a)) = $cv_bv$(a);",
            at,
            f"{{[o, a] -> [{t}, o, 1, a, 2]}}",
        )
    )
    b.top += 1


def _counting_sort(b: _Builder, dst: Format, d: _Compressed, en: str) -> None:
    """Path 2: a counting sort by the inner coordinate's rank (:mod:`spf.formats.ranks`:
    the coordinate itself unless its extent ``en`` dwarfs the entries) into buckets, read
    bucket by bucket, each entry placed at its outer coordinate's cursor: stable, so sorted
    within each outer coordinate."""
    src, conv = b.src, b.comp
    assert isinstance(conv, Conversion)
    k = src.positions[0]
    o_var, n_var = src.coords[d.outer], src.coords[d.inner]
    two = "cv_path(0) = 2"
    conv.rank_extent = en
    add_ranks(b, n_var, "cv_nr", two)
    b.index("cv_nptr", "CV_KR + 1", "0 <= v < NNZ")
    b.index("cv_nbeg", "CV_KR + 1", "0 <= v <= NNZ", monotonic=True)
    b.index("cv_to", "NNZ", f"0 <= v < {dst.shape[d.outer]}")
    b.data("cv_tv", ("NNZ",), "value")
    b.loop(["$cv_nptr$(o) = 0;"], f"{{[o]: 0 <= o <= CV_KR && {two}}}", ("o",))
    b.loop(
        [own_rank("cv_nr", n_var, k), f"$cv_nptr$(cv_nr({k}) + 1) += 1;"],
        _where(src.scan(), two),
        src.loops,
    )
    b.loop(
        ["$cv_nptr$(o + 1) += $cv_nptr$(o);", "$cv_nbeg$(o) = $cv_nptr$(o);"],
        f"{{[o]: 0 <= o < CV_KR && {two}}}",
        ("o",),
    )
    b.loop(["$cv_nbeg$(o) = $cv_nptr$(o);"], f"{{[o]: o = CV_KR && o >= 0 && {two}}}", ("o",))
    b.loop(
        [
            f"$cv_to$(cv_nptr(cv_nr({k}))) = {o_var};",
            f"$cv_tv$(cv_nptr(cv_nr({k}))) = ${src.value}$({k});",
            f"$cv_nptr$(cv_nr({k})) += 1;",
        ],
        _where(src.scan(), two),
        src.loops,
    )
    b.loop(
        [
            "$cv_idx$(cv_cur(cv_to(t))) = $cv_kv$(n);",
            "$cv_val$(cv_cur(cv_to(t))) = $cv_tv$(t);",
            "$cv_cur$(cv_to(t)) += 1;",
        ],
        f"{{[n, t]: 0 <= n < CV_KR && cv_nbeg(n) <= t < cv_nbeg(n + 1) && {two}}}",
        ("n", "t"),
    )


def _sum_duplicates(b: _Builder, eo: str) -> None:
    """Merge equal neighbours within each outer coordinate (sorted already), summing them,
    in place and in one pass, when the sort found some (``cv_dup(0) = 1``; otherwise the
    row pointers are copied): ``cv_u`` counts the entries kept so far and ``cv_l(0)`` is the
    slot of the last one kept (never after the entry read, so every slot is read before it
    is written)."""
    b.data("cv_dptr", (f"{eo} + 1",))
    conv = b.comp
    conv.add_local("cv_u", "int64_t")
    conv.add_local("cv_l", f"{b.dtype}_t", (1,), index=True)
    conv.declare_uf("cv_l", range="{[v]: 0 <= v < NNZ}")
    b.loop(["$cv_u$ = 0;"], "{[z]: z = 0}", ("z",))
    b.loop(["$cv_dptr$(o) = cv_ptr(o);"], f"{{[o]: 0 <= o <= {eo} && cv_dup(0) = 0}}", ("o",))
    merge = "cv_dup(0) = 1"
    row = f"{{[o]: 0 <= o < {eo} && {merge}}}"
    first = f"{{[o, k]: 0 <= o < {eo} && k = cv_ptr(o) && cv_ptr(o) < cv_ptr(o + 1) && {merge}}}"
    rest = f"{{[o, k]: 0 <= o < {eo} && cv_ptr(o) < k < cv_ptr(o + 1) && {merge}}}"
    t = b.top
    conv.add_stmt(Stmt("$cv_dptr$(o) = $cv_u$;", row, f"{{[o] -> [{t}, o, 0]}}"))
    keep = [
        "$cv_l$(0) = $cv_u$;",
        "$cv_idx$(cv_l(0)) = $cv_idx$(k);",
        "$cv_val$(cv_l(0)) = $cv_val$(k);",
        "$cv_u$ += 1;",
    ]
    conv.add_stmt(Stmt(" ".join(keep), first, f"{{[o, k] -> [{t}, o, 1, k]}}"))
    new = "$cv_idx$(k) != $cv_idx$(k - 1)"
    fold = [
        f"$cv_l$(0) += {new};",
        f"$cv_u$ += {new};",
        f"$cv_val$(cv_l(0)) = {new} ? $cv_val$(k) : $cv_val$(cv_l(0)) + $cv_val$(k);",
        "$cv_idx$(cv_l(0)) = $cv_idx$(k);",
    ]
    conv.add_stmt(Stmt(" ".join(fold), rest, f"{{[o, k] -> [{t}, o, 2, k]}}"))
    b.top += 1
    b.loop(["$cv_dptr$(o) = $cv_u$;"], f"{{[o]: o = {eo} && o >= 0 && {merge}}}", ("o",))
