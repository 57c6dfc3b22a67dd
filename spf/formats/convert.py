"""``convert(src, dst)``: a format conversion synthesized from two storage relations.

The source is read through its scan (:meth:`Format.scan`: every stored entry ``k`` with its
coordinates); the destination's relation says what to build:

* a coordinate destination (``i = row(k) && j = col(k)``, COO): one pass writes each entry's
  coordinates and value at its source position;
* a compressed destination (``ptr(o) <= k < ptr(o+1) && n = idx(k)``, CSR, CSC): counts per
  outer coordinate ``o``, a prefix sum into ``ptr``, the placement of every entry at the next
  free slot of its ``o`` (a cursor), and the copy of inner coordinates and values. When the
  destination assumes an order within ``o`` (CSR: columns increasing) and the source does not
  already visit entries in that order without duplicates, entries are first placed by their
  inner coordinate ``n`` (a counting sort), so that the stable placement by ``o`` leaves them
  sorted; duplicates (same ``o`` and ``n``) are then summed, as ``scipy.sparse`` does.

The conversion runs as a short sequence of generated spf Computations (``phases``): an array
one phase computes (positions, an order) is a UF of the next. Coordinates out of range are
refused before anything is written (the source UFs' declared ranges are checked by every
kernel), as is source data violating the source's assumptions (an unsorted CSR row).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spf.computation import Computation, Stmt
from spf.dtypes import numpy_name
from spf.errors import ArgumentError, SpfError
from spf.formats.format import Format

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
        raise SpfError(
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
    """Adds statements with 2d+1 schedules to one phase Computation."""

    def __init__(self, name: str, src: Format, dtype: str, *, source_ufs: bool = True) -> None:
        self.comp = Computation(name)
        self.src = src
        self.dtype = dtype
        self.top = 0
        if source_ufs:
            src.declare(self.comp, dtype)

    def data(self, name: str, shape: tuple[str, ...], kind: str = "index") -> None:
        if name not in self.comp.data_spaces:
            ctype = f"{self.dtype}_t" if kind == "index" else "double"
            self.comp.add_data_space(name, ctype, shape=shape)

    def uf(self, name: str, count: str, rng: str, *, monotonic: bool = False) -> None:
        self.comp.declare_uf(
            name,
            domain=f"{{[t]: 0 <= t < {count}}}",
            range=f"{{[v]: {rng}}}",
            monotonic="nondecreasing" if monotonic else None,
            dtype=self.dtype,
        )

    def loop(self, sources: list[str], domain: str, loops: tuple[str, ...]) -> None:
        """Statements ``sources`` in one loop nest over ``domain``."""
        sched = ", ".join(f"{self.top}, {v}" if n == 0 else f"0, {v}" for n, v in enumerate(loops))
        for n, text in enumerate(sources):
            self.comp.add_stmt(
                Stmt(text, domain, f"{{[{', '.join(loops)}] -> [{sched}, {n}]}}")
                if loops
                else Stmt(text, domain, f"{{[] -> [{self.top}, {n}]}}")
            )
        self.top += 1

    def scan(self, sources: list[str]) -> None:
        self.loop(sources, self.src.scan(), self.src.loops)

    def range(self, sources: list[str], var: str, lo: str, hi: str) -> None:
        self.loop(sources, f"{{[{var}]: {lo} <= {var} < {hi}}}", (var,))


def _prefix(b: _Builder, arr: str, extent: str) -> None:
    b.range([f"${arr}$(o) = 0;"], "o", "0", f"{extent} + 1")


@dataclass
class Conversion:
    """A synthesized conversion: ``phases`` (spf Computations run in order) and what they
    return. ``compile()`` gives a :class:`ConversionKernel`."""

    src: Format
    dst: Format
    phases: list[Computation]
    outputs: dict[str, str]
    sizes: dict[str, str]
    allocate: dict[str, tuple[str, ...]] = field(default_factory=dict)
    finish: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    index_dtype: str = "int32"

    def __str__(self) -> str:
        return "\n\n".join(str(p) for p in self.phases)

    def codegen(self, target: str = "c") -> str:
        """The generated code of every phase, in order."""
        return "\n".join(p.codegen(target) for p in self.phases)

    def compile(self, **options: Any) -> ConversionKernel:
        """Compile every phase (cached like any kernel)."""
        return ConversionKernel(self, [p.compile(**options) for p in self.phases])


@dataclass
class ConversionKernel:
    """``kernel(**source arrays and sizes)`` -> dict of the destination's arrays and sizes."""

    conv: Conversion
    kernels: list[Any]

    def __call__(self, **args: Any) -> dict[str, Any]:
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
        env: dict[str, Any] = dict(args)
        dtype = np.dtype(conv.index_dtype)
        for name, shape in conv.allocate.items():
            dims = [_extent(e, sizes) for e in shape]
            env[name] = np.zeros(dims, dtype=np.float64 if name.endswith("val") else dtype)
        for comp, kernel in zip(conv.phases, self.kernels, strict=True):
            names = set(comp.params) | set(comp.ufs) | set(comp.data_spaces)
            kernel(**{n: env[n] for n in names})
        out = {key: env[name] for key, name in conv.outputs.items()}
        out.update({k: sizes.get(v, v) for k, v in conv.sizes.items()})
        return conv.finish(out) if conv.finish else out


def _extent(expr: str, sizes: dict[str, int]) -> int:
    """The value of an extent ``"N + 1"`` / ``"NNZ"`` (a sum of sizes and integers)."""
    total = 0
    for term in expr.split("+"):
        term = term.strip()
        total += int(term) if term.isdigit() else sizes[term]
    return total


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
            raise SpfError(
                f"convert: {role} must be an spf.Format (spf.formats.CSR, ...), got {f!r}"
            )
        if len(f.coords) != 2:
            raise SpfError(f"convert: {f.name} has {len(f.coords)} coordinates; matrices have 2")
    try:
        name = numpy_name(index_dtype, what="convert: index_dtype")
    except SpfError:
        name = ""
    if name not in ("int32", "int64"):
        raise SpfError(f"convert: index_dtype must be 'int32' or 'int64', got {index_dtype!r}")
    _single_position(src, "source")
    _single_position(dst, "destination")
    if src.shape != dst.shape:
        raise SpfError(
            f"convert: {src.name} is {src.shape} and {dst.name} is {dst.shape}; the coordinate "
            "extents must agree"
        )
    if not all(e.isidentifier() for e in src.shape):
        raise SpfError(
            f"convert: {src.name}'s extents {src.shape} are not plain sizes; conversions are "
            "synthesized for formats over N x M coordinates"
        )
    coo = _coordinate(dst)
    if coo is not None:
        return _to_coordinate(src, dst, coo, name)
    comp = _compressed(dst)
    if comp is not None:
        return _to_compressed(src, dst, comp, name)
    raise SpfError(
        f"convert: cannot synthesize a conversion into {dst.name}: its relation is neither "
        "coordinate (i = row(k) && j = col(k)) nor compressed (ptr(i) <= k < ptr(i+1) && "
        "j = idx(k)); build that format with its own inspector (spf.formats.sell for SELL)"
    )


def _tag(src: Format, dst: Format) -> str:
    return f"convert_{src.name.lower()}_{dst.name.lower()}"


def _to_coordinate(src: Format, dst: Format, ufs: tuple[str, str], dtype: str) -> Conversion:
    b = _Builder(f"{_tag(src, dst)}_copy", src, dtype)
    k = src.positions[0]
    for n in range(len(ufs)):
        b.data(f"cv_c{n}", ("NNZ",))
    b.data("cv_val", ("NNZ",), "value")
    b.data(src.value, ("NNZ",), "value")
    b.scan(
        [
            f"$cv_c0$({k}) = {src.coords[0]};",
            f"$cv_c1$({k}) = {src.coords[1]};",
            f"$cv_val$({k}) = ${src.value}$({k});",
        ]
    )
    outputs = {ufs[0]: "cv_c0", ufs[1]: "cv_c1", dst.value: "cv_val"}
    sizes = {s: s for s in dst.sizes}
    allocate: dict[str, tuple[str, ...]] = {
        "cv_c0": ("NNZ",),
        "cv_c1": ("NNZ",),
        "cv_val": ("NNZ",),
    }
    return Conversion(src, dst, [b.comp], outputs, sizes, allocate, None, dtype)


def _ordered_unique(src: Format, n: int) -> bool:
    """The source's scan visits entries in nondecreasing coordinate ``n`` and its assumed
    order rules out duplicates (CSR read for CSC: rows increasing, columns strictly)."""
    return bool(src.assume) and src.loops[0] == src.coords[n]


def _coord_of(src: Format, c: int, entry: str) -> str | None:
    """Coordinate ``c`` of entry ``entry`` as a UF expression of it, when the source defines
    it as ``U(k)``."""
    uf = _uf_of_k(src._defined.get(src.coords[c], ""), src.positions[0])
    return f"{uf}({entry})" if uf else None


def _to_compressed(src: Format, dst: Format, d: _Compressed, dtype: str) -> Conversion:
    tag = _tag(src, dst)
    k = src.positions[0]
    o_var, n_var = src.coords[d.outer], src.coords[d.inner]
    eo, en = dst.shape[d.outer], dst.shape[d.inner]
    sort = bool(dst.assume) and not _ordered_unique(src, d.inner)
    phases: list[Computation] = []
    allocate: dict[str, tuple[str, ...]] = {
        "cv_ptr": (f"{eo} + 1",),
        "cv_cur": (f"{eo} + 1",),
        "cv_pos": ("NNZ",),
        "cv_idx": ("NNZ",),
        "cv_val": ("NNZ",),
    }
    # Phase 1: counts per outer (and inner, when sorting) coordinate, prefix sums, cursors.
    b = _Builder(f"{tag}_count", src, dtype)
    b.data("cv_ptr", (f"{eo} + 1",))
    b.data("cv_cur", (f"{eo} + 1",))
    _prefix(b, "cv_ptr", eo)
    counts = [f"$cv_ptr$({o_var} + 1) += 1;"]
    if sort:
        allocate.update({"cv_nptr": (f"{en} + 1",), "cv_npos": ("NNZ",)})
        b.data("cv_nptr", (f"{en} + 1",))
        b.data("cv_npos", ("NNZ",))
        _prefix(b, "cv_nptr", en)
        counts.append(f"$cv_nptr$({n_var} + 1) += 1;")
    b.scan(counts)
    b.range(["$cv_ptr$(o + 1) += $cv_ptr$(o);", "$cv_cur$(o) = $cv_ptr$(o);"], "o", "0", eo)
    o_of = _coord_of(src, d.outer, "cv_ord(t)")
    if sort:
        b.range(["$cv_nptr$(o + 1) += $cv_nptr$(o);"], "o", "0", en)
        b.scan([f"$cv_npos$({k}) = $cv_nptr$({n_var});", f"$cv_nptr$({n_var}) += 1;"])
        if o_of is None:
            allocate["cv_o"] = ("NNZ",)
            b.data("cv_o", ("NNZ",))
            b.scan([f"$cv_o$({k}) = {o_var};"])
    else:
        b.data("cv_pos", ("NNZ",))
        b.scan([f"$cv_pos$({k}) = $cv_cur$({o_var});", f"$cv_cur$({o_var}) += 1;"])
    phases.append(b.comp)
    if sort:
        # Phase 2: the order of entries by inner coordinate.
        allocate["cv_ord"] = ("NNZ",)
        b = _Builder(f"{tag}_order", src, dtype, source_ufs=False)
        b.uf("cv_npos", "NNZ", "0 <= v < NNZ")
        b.data("cv_ord", ("NNZ",))
        b.range(["$cv_ord$(cv_npos(t)) = t;"], "t", "0", "NNZ")
        phases.append(b.comp)
        # Phase 3: stable placement by outer coordinate, in inner order.
        b = _Builder(f"{tag}_place", src, dtype, source_ufs=o_of is not None)
        b.uf("cv_ord", "NNZ", "0 <= v < NNZ")
        if o_of is None:
            b.uf("cv_o", "NNZ", f"0 <= v < {eo}")
            o_of = "cv_o(cv_ord(t))"
        b.data("cv_pos", ("NNZ",))
        b.data("cv_cur", (f"{eo} + 1",))
        b.range(
            [f"$cv_pos$(cv_ord(t)) = $cv_cur$({o_of});", f"$cv_cur$({o_of}) += 1;"],
            "t",
            "0",
            "NNZ",
        )
        phases.append(b.comp)
    # Phase 4: the copy of inner coordinates and values to their places.
    b = _Builder(f"{tag}_copy", src, dtype)
    b.uf("cv_pos", "NNZ", "0 <= v < NNZ")
    b.data("cv_idx", ("NNZ",))
    b.data("cv_val", ("NNZ",), "value")
    b.data(src.value, ("NNZ",), "value")
    b.scan([f"$cv_idx$(cv_pos({k})) = {n_var};", f"$cv_val$(cv_pos({k})) = ${src.value}$({k});"])
    outputs = {d.ptr: "cv_ptr", d.idx: "cv_idx", dst.value: "cv_val"}
    if sort:
        phases.append(b.comp)
        phases.extend(_sum_duplicates(tag, src, dst, eo, dtype, allocate))
        outputs = {d.ptr: "cv_dptr", d.idx: "cv_didx", dst.value: "cv_dval"}
    else:
        phases.append(b.comp)
    sizes = {s: s for s in dst.sizes}
    ptr = outputs[d.ptr]
    return Conversion(
        src, dst, phases, outputs, sizes, allocate, _trim(d.ptr, d.idx, dst.value, ptr), dtype
    )


def _sum_duplicates(
    tag: str, src: Format, dst: Format, eo: str, dtype: str, allocate: dict[str, tuple[str, ...]]
) -> list[Computation]:
    """Phases merging equal neighbours within each outer coordinate (sorted already)."""
    allocate.update(
        {
            "cv_first": ("NNZ",),
            "cv_new": ("NNZ",),
            "cv_dptr": (f"{eo} + 1",),
            "cv_didx": ("NNZ",),
            "cv_dval": ("NNZ",),
        }
    )
    b = _Builder(f"{tag}_unique", src, dtype, source_ufs=False)
    b.uf("cv_ptr", f"{eo} + 1", "0 <= v <= NNZ", monotonic=True)
    for name in ("cv_idx", "cv_first", "cv_new"):
        b.data(name, ("NNZ",))
    b.data("cv_dptr", (f"{eo} + 1",))
    _prefix(b, "cv_dptr", eo)
    b.loop(
        [
            "$cv_first$(k) = (k == cv_ptr(o) || $cv_idx$(k) != $cv_idx$(k - 1)) ? 1 : 0;",
            "$cv_dptr$(o + 1) += $cv_first$(k);",
        ],
        f"{{[o, k]: 0 <= o < {eo} && cv_ptr(o) <= k < cv_ptr(o + 1)}}",
        ("o", "k"),
    )
    b.range(["$cv_dptr$(o + 1) += $cv_dptr$(o);"], "o", "0", eo)
    b.loop(["$cv_new$(k) = $cv_first$(k) - 1;"], "{[k]: 0 <= k < 1 && k < NNZ}", ("k",))
    b.range(["$cv_new$(k) = $cv_new$(k - 1) + $cv_first$(k);"], "k", "1", "NNZ")
    first = b.comp
    b = _Builder(f"{tag}_merge", src, dtype, source_ufs=False)
    b.uf("cv_new", "NNZ", "0 <= v < NNZ")
    for name in ("cv_idx", "cv_didx"):
        b.data(name, ("NNZ",))
    for name in ("cv_val", "cv_dval"):
        b.data(name, ("NNZ",), "value")
    b.range(
        ["$cv_didx$(cv_new(k)) = $cv_idx$(k);", "$cv_dval$(cv_new(k)) += $cv_val$(k);"],
        "k",
        "0",
        "NNZ",
    )
    return [first, b.comp]


def _trim(
    ptr: str, idx: str, value: str, ptr_key: str
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    del ptr_key

    def finish(out: dict[str, Any]) -> dict[str, Any]:
        nnz = int(out[ptr][-1]) if len(out[ptr]) else 0
        out[idx] = out[idx][:nnz].copy() if len(out[idx]) != nnz else out[idx]
        out[value] = out[value][:nnz].copy() if len(out[value]) != nnz else out[value]
        if "NNZ" in out:
            out["NNZ"] = nnz
        return out

    return finish
