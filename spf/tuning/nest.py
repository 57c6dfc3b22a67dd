"""What the search and its cost model know about a computation: its main loop nest.

The *main* statement is the one with the most real loops (a loop bound by an equality, like
``j = col(k)`` in CSR SpMV, is no loop of the generated code); scheduling commands name the
main statement's loops and are applied to every statement that has the same loops. A loop is
*dense* when no index array bounds it (``0 <= k < K``); only dense loops are tiled or
interchanged. Extents come from the arguments the search runs on (the shapes of the arrays a
loop variable indexes, and the statement's instance count for sparse loops).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt


@dataclass(frozen=True)
class Access:
    """One array access of a statement: its output expressions (text) and element size."""

    data_space: str
    exprs: tuple[str, ...]
    itemsize: int
    write: bool


@dataclass(frozen=True)
class Nest:
    """The main loop nest: real loops outer first, dense flags, extents, accesses."""

    stmts: tuple[str, ...]  # the statements that share the main statement's outer loop
    loops: tuple[str, ...]
    dense: tuple[bool, ...]
    extents: tuple[float, ...]
    bound: Mapping[str, str]  # variable bound by an equality -> the loop variables it reads
    accesses: tuple[Access, ...]
    reads: tuple[str, ...]  # data spaces read by the main statement (packing candidates)
    instances: float  # statement instances of the whole computation
    footprint: float  # bytes of every data space the computation touches (priced PDFG)
    outer_parallel: bool = True  # the outermost loop carries no dependence as given

    def index(self, loop: str) -> int:
        return self.loops.index(loop)


_EQ = re.compile(r"(?<![<>=!])\b([A-Za-z_]\w*)\s*=\s*([^&}]+)")


def _equalities(domain: str) -> dict[str, str]:
    """``{"j": "col(k)"}`` for a domain ``... && j = col(k) && ...``."""
    return {m.group(1): m.group(2).strip() for m in _EQ.finditer(domain)}


_CALL = re.compile(r"\b\w+\((?:[^()]|\([^()]*\))*\)")


def _bounded_by_uf(domain: str, var: str) -> bool:
    """Whether an index array bounds ``var``: a constraint has ``var`` outside any UF call
    and a UF call besides."""
    body = domain.split(":", 1)[1] if ":" in domain else ""
    for c in body.replace("}", "").split("&&"):
        outside = _CALL.sub("", c)
        if re.search(rf"\b{var}\b", outside) and outside != c:
            return True
    return False


def _outputs(relation: str) -> tuple[str, ...]:
    """``("k", "j")`` for ``{[i, j, k] -> [k, j]}``: the output expressions, split at
    top-level commas."""
    text = relation.split("->", 1)[1] if "->" in relation else ""
    text = text.split("[", 1)[1].rsplit("]", 1)[0] if "[" in text else ""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "(["
        depth -= ch in ")]"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return tuple(out)


def _real_loops(stmt: Stmt) -> tuple[list[str], dict[str, str]]:
    eqs = _equalities(str(stmt.domain))
    return [v for v in stmt.loops if v not in eqs], eqs


def main_stmt(comp: Computation) -> Stmt:
    """The statement with the most real loops (the first of those)."""
    return max(comp.stmts, key=lambda s: (len(_real_loops(s)[0]), -comp.stmts.index(s)))


def priced(comp: Computation, sizes: Mapping[str, int]) -> tuple[dict[str, float], float]:
    """Statement instances and the bytes of every data space, from the priced PDFG
    (``comp.pdfg(params=...)``); empty when the parameters do not price it."""
    from spf.errors import SpfError

    try:
        graph = comp.pdfg(params={p: sizes[p] for p in comp.params if p in sizes}).graph
    except SpfError:
        return {}, 0.0
    inst = {
        str(n): float(d["instances"])
        for n, d in graph.nodes(data=True)
        if d.get("kind") == "stmt" and isinstance(d.get("instances"), (int, float))
    }
    data = sum(
        float(d["bytes"])
        for _, d in graph.nodes(data=True)
        if d.get("kind") == "data" and isinstance(d.get("bytes"), (int, float))
    )
    return inst, data


def sizes_of(comp: Computation, args: Mapping[str, Any]) -> dict[str, int]:
    """The symbolic constants: those given in ``args``, and those a declared extent names
    alone (``shape=("N",)``) read off the array passed for it."""
    sizes = {k: int(v) for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)}
    for name, ds in comp.data_spaces.items():
        shape, arr = ds.shape, getattr(args.get(name), "shape", None)
        if shape is None or arr is None or len(arr) != len(shape):
            continue
        for extent, got in zip(shape, arr, strict=True):
            if isinstance(extent, str) and extent.isidentifier() and extent not in sizes:
                sizes[extent] = int(got)
    return sizes


def analyze(comp: Computation, args: Mapping[str, Any]) -> Nest:
    """The :class:`Nest` of ``comp`` for the arguments ``args``."""
    main = main_stmt(comp)
    sizes0 = sizes_of(comp, args)
    counts, footprint = priced(comp, sizes0) if comp.params <= set(sizes0) else ({}, 0.0)
    instances = counts.get(main.name, 0.0) or float(
        max((getattr(args.get(ds), "size", 0) for ds, _ in main.reads), default=1)
    )
    if not footprint:
        footprint = float(sum(getattr(a, "nbytes", 0) for a in args.values()))
    loops, eqs = _real_loops(main)
    domain = str(main.domain)
    dense = tuple(not _bounded_by_uf(domain, v) for v in loops)
    sizes = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)}
    accesses: list[Access] = []
    first = loops[0] if loops else None
    group = [s for s in comp.stmts if first is not None and first in s.loops]
    for stmt in group:
        for kind, pairs in (("r", stmt.reads), ("w", stmt.writes)):
            for ds, rel in pairs:
                arr = args.get(ds)
                item = int(getattr(getattr(arr, "dtype", None), "itemsize", 8))
                accesses.append(Access(ds, _outputs(str(rel)), item, kind == "w"))
    extents = _extents(main, loops, args, sizes, instances)
    bound = dict(eqs.items())
    reads = tuple(
        dict.fromkeys(ds for ds, _ in main.reads if ds not in {d for d, _ in main.writes})
    )
    return Nest(
        stmts=tuple(s.name for s in group),
        loops=tuple(loops),
        dense=dense,
        extents=extents,
        bound=bound,
        accesses=tuple(accesses),
        reads=reads,
        instances=max(instances, 1.0),
        footprint=max(footprint, 1.0),
        outer_parallel=first is not None
        and all(comp.is_parallel_legal(s, first) for s in group if s.loops[:1] == (first,)),
    )


def _extents(
    main: Stmt,
    loops: list[str],
    args: Mapping[str, Any],
    sizes: Mapping[str, int],
    instances: float,
) -> tuple[float, ...]:
    """Each loop's trip count: the extent of an array dimension it indexes alone, then capped
    so that the product of the trip counts stays the statement's instance count."""
    guess: dict[str, float] = {}
    for ds, rel in (*main.reads, *main.writes):
        shape = getattr(args.get(ds), "shape", None)
        if shape is None:
            continue
        for dim, expr in enumerate(_outputs(str(rel))):
            base = expr.split("+")[0].split("-")[0].strip()
            if base in loops and dim < len(shape):
                guess[base] = max(guess.get(base, 0.0), float(shape[dim]))
    out: list[float] = []
    done = 1.0
    total = max(instances, 1.0)
    for v in loops:
        g = guess.get(v, float(max(sizes.values(), default=1)))
        g = max(1.0, min(g, total / done))
        out.append(g)
        done *= g
    return tuple(math.ceil(e) for e in out)
