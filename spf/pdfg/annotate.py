"""Sizes for given parameter values: ``comp.pdfg(params={"N": 1000})`` (docs/pdfg.md).

With parameter values, data-space nodes carry ``bytes`` (the declared shape times the
element size), statement nodes ``instances`` (the points of the domain) and read and write
edges ``footprint`` (the bytes the statement touches in the data space: the elements of the
image of its accesses, times the element size). Counting is exact: the set with the
parameters fixed is cut into disjoint convex pieces; a box counts as the product of its
extents, another piece by isl's enumeration (by rows, when there are not too many). A set
whose constraints call UFs (the rows of a CSR matrix) is not countable without the UFs'
values, so that annotation is left out, as it is when the work would be too large.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import islpy as isl
import numpy as np

from spf.clang import NUMPY_OF_C
from spf.errors import ArgumentError, UndeclaredError
from spf.sets.linear import DT

if TYPE_CHECKING:
    import networkx as nx
    import sympy as sp

    from spf.ir import ComputationIR
    from spf.ir.reading import StmtReading
    from spf.sets import Set
else:
    from spf._lazy import sympy as sp

_ROWS = 200_000
"""The most rows (points of all but the last dimension) a piece that is not a box may have
to be counted (isl takes about a second per million)."""


def check_params(
    known: frozenset[str],
    params: object,
    where: str = "pdfg(params=...)",
) -> dict[str, int]:
    """``params`` as ``{name: int}`` of the symbolic constants ``known`` (a computation's),
    or an error naming the bad entry and ``where`` it was given."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ArgumentError(
            f"{where} takes a dict of parameter values such as {{'N': 1000}}, got "
            f"{type(params).__name__}"
        )
    out: dict[str, int] = {}
    for name, value in params.items():
        if not isinstance(name, str) or name not in known:
            raise UndeclaredError(
                "parameter", str(name), known, hint=f"{where} takes values of these"
            )
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ArgumentError(f"{where}: the value of {name!r} must be an integer, got {value!r}")
        out[name] = int(value)
    return out


def annotate(g: nx.DiGraph[str], ir: ComputationIR, params: Mapping[str, int]) -> None:
    """Add ``bytes``, ``instances`` and ``footprint`` to ``g``, the graph of the computation
    ``ir``, for ``params``."""
    g.graph["params"] = dict(params)
    # an element's type: the declared type without IEGenLib's pointer form's ``*``
    item = {ds.name: _itemsize(ds.type.removesuffix("*")) for ds in ir.data_spaces}
    sizes: list[tuple[str, tuple[int | str, ...] | None, int | None]] = [
        (ds.name, ds.shape, item[ds.name]) for ds in ir.data_spaces
    ]
    sizes += [(b.name, b.shape, _itemsize(b.dtype)) for b in ir.buffers]
    sizes += [  # data spaces of an inspector (spf.pdfg.inspection), not of comp
        (node, a["shape"], _itemsize(a["ctype"])) for node, a in g.nodes(data=True) if "ctype" in a
    ]
    for name, shape, width in sizes:
        node = _node_of(g, name)
        if node is None or shape is None or width is None or "bytes" in g.nodes[node]:
            continue
        size = extent_product(shape, params)
        if size is not None:
            g.nodes[node]["bytes"] = size * width
    for s in ir.parsed_stmts:
        instances = count_points(s.domain, params)
        if instances is not None:
            g.nodes[s.name]["instances"] = instances
        _footprints(g, s, item, params)


def _footprints(
    g: nx.DiGraph[str],
    s: StmtReading,
    item: Mapping[str, int | None],
    params: Mapping[str, int],
) -> None:
    """``footprint`` of the read and write edges of statement ``s``."""
    for kind, accesses in (("read", s.reads), ("write", s.writes)):
        images: dict[str, Set] = {}
        for ds, rel in accesses:
            image = rel.apply(s.domain)
            images[ds] = images[ds].union(image) if ds in images else image
        for ds, image in images.items():
            node, width = _node_of(g, ds), item.get(ds)
            if node is None or width is None:
                continue
            edge = (node, s.name) if kind == "read" else (s.name, node)
            count = count_points(image, params) if g.has_edge(*edge) else None
            if count is not None:
                g.edges[edge]["footprint"] = count * width


def _node_of(g: nx.DiGraph[str], name: str) -> str | None:
    for node in (f"data:{name}", name):
        if node in g and g.nodes[node].get("kind") == "data":
            return node
    return None


def _itemsize(ctype: str) -> int | None:
    dtype = NUMPY_OF_C.get(ctype)
    return None if dtype is None else int(np.dtype(dtype).itemsize)


def _symbols(text: str) -> dict[str, object]:
    """Every name of ``text`` not called as a function, as a sympy symbol: a size named
    ``N``, ``S``, ``E``, ``I``, ``O`` or ``Q`` must not become one of sympy's own objects."""
    return {name: sp.Symbol(name) for name in re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*\()", text)}


def extent_product(shape: tuple[int | str, ...], params: Mapping[str, int]) -> int | None:
    """The number of elements of ``shape`` (extents as ints or parameter expressions) for
    ``params``; None when an extent names a parameter without a value."""
    total = 1
    for extent in shape:
        if isinstance(extent, int):
            total *= extent
            continue
        try:
            value = sp.sympify(extent, locals=_symbols(str(extent)))
            value = value.subs({sp.Symbol(p): v for p, v in params.items()})
        except (sp.SympifyError, TypeError, SyntaxError):
            return None
        if not value.is_Integer:
            return None
        total *= int(value)
    return max(total, 0)


def count_points(s: Set, params: Mapping[str, int]) -> int | None:
    """The number of points of ``s`` for ``params``; None when it calls UFs, a parameter
    has no value, it is unbounded, or counting would take too long."""
    if s.uf_calls:
        return None
    iset = s.body_iset()
    extra = iset.dim(DT.set) - s.arity
    if extra:
        iset = iset.project_out(DT.set, s.arity, extra)
    names = [str(iset.get_dim_name(DT.param, k)) for k in range(iset.dim(DT.param))]
    for k, name in enumerate(names):
        if name not in params:
            return None
        iset = iset.fix_val(DT.param, k, _val(iset, params[name]))
    try:
        return _count(iset)
    except isl.Error:
        return None


def _count(iset: isl.Set) -> int | None:
    if not iset.is_bounded():
        return None
    if iset.is_empty():
        return 0
    if iset.dim(DT.set) == 0:
        return 1
    total = 0
    for bset in iset.make_disjoint().get_basic_sets():
        part = _count_basic(isl.Set.from_basic_set(bset))
        if part is None:
            return None
        total += part
    return total


def _count_basic(piece: isl.Set) -> int | None:
    """Points of one convex piece: the product of the extents when it is a box, else isl's
    count (which scans the last dimension as ranges) when it has at most :data:`_ROWS`
    rows."""
    n = piece.dim(DT.set)
    ranges: list[tuple[int, int]] = []
    for k in range(n):
        line = piece.project_out(DT.set, k + 1, n - k - 1).project_out(DT.set, 0, k)
        lo, hi = _value(line.lexmin()), _value(line.lexmax())
        if lo is None or hi is None:
            return 0
        ranges.append((lo, hi))
    box = isl.Set.universe(piece.get_space()).intersect_params(piece.params())
    for k, (lo, hi) in enumerate(ranges):
        box = box.lower_bound_val(DT.set, k, _val(piece, lo)).upper_bound_val(
            DT.set, k, _val(piece, hi)
        )
    rows = 1
    for lo, hi in ranges[:-1]:
        rows *= hi - lo + 1
    if box.is_subset(piece):
        return rows * (ranges[-1][1] - ranges[-1][0] + 1)
    if rows > _ROWS:
        return None
    return int(piece.count_val().to_python())


def _val(piece: isl.Set, v: int) -> isl.Val:
    """``v`` as an isl value, however large."""
    return isl.Val.read_from_str(piece.get_ctx(), str(v))


def _value(point_set: isl.Set) -> int | None:
    if point_set.is_empty():
        return None
    point = point_set.sample_point()
    value: Any = point.get_coordinate_val(DT.set, 0).to_python()
    return int(value)


def human_bytes(n: int) -> str:
    """``8000`` -> ``7.8 KiB``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
