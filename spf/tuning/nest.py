"""What the search and its cost model know about a computation: its main loop nest.

The *main* statement is the one with the most real loops (a loop bound by an equality, like
``j = col(k)`` in CSR SpMV, is no loop of the generated code); scheduling commands name the
main statement's loops and are applied to every statement that has the same loops. A loop is
*dense* when no index array bounds it (``0 <= k < K``); only dense loops are tiled or
interchanged. Extents come from the arguments the search runs on (the shapes of the arrays a
loop variable indexes, and the statement's instance count for sparse loops).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt
    from spf.tuning.blocking import Block
    from spf.tuning.pipeline import Pipe
    from spf.tuning.skew import Stencil


@dataclass(frozen=True)
class Access:
    """One array access of a statement: its output expressions (text) and element size."""

    data_space: str
    exprs: tuple[str, ...]
    itemsize: int
    write: bool
    weight: float = 1.0  # its statement's instances per main statement instance (at most 1)


@dataclass(frozen=True)
class Nest:
    """The main loop nest: real loops outer first, dense flags, extents, accesses; its
    statements are those that share the main statement's outermost loop (the same first
    schedule constant and loop), not every statement with a loop of the same name."""

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
    blocks: tuple[Block, ...] = ()  # the GEMM-like statements (spf.tuning.blocking)
    fission: tuple[tuple[str, str, str], ...] = ()  # (stmt, other, loop): stmt.after(other, loop)
    chain: tuple[tuple[str, str, int], ...] = ()  # (stmt, the one before it, loops they share)
    pipe: Pipe | None = None  # the main statement and its consumer (spf.tuning.pipeline)
    consumer: Nest | None = None  # the consumer's nest, which the main nest's commands leave
    stencil: Stencil | None = None  # a time-stepped stencil (spf.tuning.skew)
    fixed: int = 0  # outer loops shared with statements outside the nest: never moved

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


_SHIFTED = re.compile(
    r"\s*(?:(?P<a>[A-Za-z_]\w*)\s*(?:(?P<s>[+-])\s*(?P<c>\d+))?"
    r"|(?P<d>-?\d+)\s*\+\s*(?P<b>[A-Za-z_]\w*))\s*"
)


def shifted(expr: str) -> tuple[str, int] | None:
    """``(x, c)`` for an index expression ``x + c`` (``x``, ``x - 1``, ``2 + x``), else None."""
    m = _SHIFTED.fullmatch(expr)
    if m is None:
        return None
    if m.group("b") is not None:
        return m.group("b"), int(m.group("d"))
    c = 0 if m.group("c") is None else int(m.group("c"))
    return m.group("a"), -c if m.group("s") == "-" else c


def _real_loops(stmt: Stmt) -> tuple[list[str], dict[str, str]]:
    eqs = _equalities(str(stmt.domain))
    return [v for v in stmt.loops if v not in eqs], eqs


def main_stmt(comp: Computation) -> Stmt:
    """The statement with the most real loops (the first of those)."""
    return max(comp.stmts, key=lambda s: (len(_real_loops(s)[0]), -comp.stmts.index(s)))


def main_stmts(comp: Computation) -> list[Stmt]:
    """Every statement with the most real loops, in program order: the first is
    :func:`main_stmt`, the others are main nests of their own for the search (PolyBench lu's
    ``s2``, the update right of the diagonal, next to ``s0`` left of it)."""
    most = len(_real_loops(main_stmt(comp))[0])
    return [s for s in comp.stmts if len(_real_loops(s)[0]) == most]


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


def size_params(comp: Computation) -> frozenset[str]:
    """The integer symbolic constants, which price the PDFG: a floating-point constant
    (gemm's ``alpha``) bounds no loop, so its value does not matter to the counts."""
    from spf.clang import NUMPY_OF_C

    def floating(ctype: str) -> bool:
        dtype = NUMPY_OF_C.get(ctype)
        return dtype is not None and np.dtype(dtype).kind in "fc"

    return frozenset(p for p in comp.params if not floating(comp.constants.get(p, "")))


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


def analyze(
    comp: Computation, args: Mapping[str, Any], main: Stmt | None = None, alone: bool = False
) -> Nest:
    """The :class:`Nest` of ``comp`` for the arguments ``args`` (of the statement ``main``
    when given, without its pipeline); ``alone``: its statements are only those that share
    more than the outermost loop with ``main`` (a second main nest, scheduled apart from the
    first main statement's, which shares that outermost loop)."""
    piped = main is None
    main = main_stmt(comp) if main is None else main
    sizes0 = sizes_of(comp, args)
    counts, footprint = priced(comp, sizes0) if size_params(comp) <= set(sizes0) else ({}, 0.0)
    instances = counts.get(main.name, 0.0) or float(
        max((getattr(args.get(ds), "size", 0) for ds, _ in main.reads), default=1)
    )
    if not footprint:
        footprint = float(sum(getattr(a, "nbytes", 0) for a in args.values()))
    loops, eqs = _real_loops(main)
    domain = str(main.domain)
    dense = tuple(not _bounded_by_uf(domain, v) for v in loops)
    sizes = {k: v for k, v in args.items() if isinstance(v, int) and not isinstance(v, bool)}
    from spf.tuning.blocking import find, nest_key

    accesses: list[Access] = []
    first = loops[0] if loops else None
    key = nest_key(main)
    group = [s for s in comp.stmts if first is not None and first in s.loops and nest_key(s) == key]
    fixed = 0
    if alone:
        group = [s for s in group if s is main or len(_shared(main, s)) > 1]
        fixed = max((len(_shared(main, s)) for s in comp.stmts if s not in group), default=0)
    extents = _extents(main, loops, args, sizes, instances, dense)
    for stmt in group:
        # a statement without some of the main loops runs once per their iterations
        weight = 1.0 / math.prod(e for v, e in zip(loops, extents, strict=True)
                                 if v not in stmt.loops)  # fmt: skip
        for kind, pairs in (("r", stmt.reads), ("w", stmt.writes)):
            for ds, rel in pairs:
                arr = args.get(ds)
                item = int(getattr(getattr(arr, "dtype", None), "itemsize", 8))
                accesses.append(Access(ds, _outputs(str(rel)), item, kind == "w", weight))
    bound = dict(eqs.items())
    written = {d for d, _ in main.writes}
    reads = tuple(  # what cache_read can pack: one read access per data space, not written
        dict.fromkeys(
            ds
            for ds, rel in main.reads
            if ds not in written and all(r.is_equal(rel) for d, r in main.reads if d == ds)
        )
    )
    from spf.tuning.pipeline import find as pipes
    from spf.tuning.skew import find as stencil

    pipe = next((p for p in pipes(comp) if p.producer == main.name), None) if piped else None
    outer_parallel = first is not None and all(
        comp.is_parallel_legal(s, first) for s in group if s.loops[:1] == (first,)
    )
    return Nest(
        fixed=fixed,
        stencil=None if fixed else stencil(comp, main, outer_parallel),
        pipe=pipe,
        consumer=None if pipe is None else analyze(comp, args, comp.stmt(pipe.consumer)),
        stmts=tuple(s.name for s in group),
        loops=tuple(loops),
        dense=dense,
        extents=extents,
        bound=bound,
        accesses=tuple(accesses),
        reads=reads,
        instances=max(instances, 1.0),
        footprint=max(footprint, 1.0),
        outer_parallel=outer_parallel,
        blocks=find(comp),
        fission=fission(main, group),
        chain=chain(group),
    )


def chain(group: list[Stmt]) -> tuple[tuple[str, str, int], ...]:
    """Each statement of the nest after the first, in execution order, with the one before
    it and how many loops the two share."""
    from spf.tuning.blocking import order

    ordered = sorted(group, key=order)
    return tuple((b.name, a.name, len(_shared(a, b))) for a, b in itertools.pairwise(ordered))


def _shared(a: Stmt, b: Stmt) -> list[str]:
    """The loops statements ``a`` and ``b`` share, outer first (their schedules' common
    prefix: equal constants, then equal loops)."""
    sa, sb = _outputs(str(a.schedule)), _outputs(str(b.schedule))
    out: list[str] = []
    for p in range(0, min(len(sa), len(sb)) - 1, 2):
        if sa[p] != sb[p] or sa[p + 1] != sb[p + 1] or sa[p + 1].lstrip("-").isdigit():
            break
        out.append(sa[p + 1])
    return out


def fission(main: Stmt, group: list[Stmt]) -> tuple[tuple[str, str, str], ...]:
    """The ``after`` calls that give ``main`` loops of its own inside the outermost loop it
    shares with the other statements of ``group`` (so that interchanging or tiling its inner
    loops moves no other statement): ``main`` after the statement before it, the first one
    after it after ``main``, and each later one after the one before it at the loops those
    two shared. Empty when no statement shares more than the outermost loop with ``main``."""
    from spf.tuning.blocking import order

    mates = sorted(group, key=order)
    if not any(len(_shared(main, s)) > 1 for s in mates if s is not main):
        return ()
    m = mates.index(main)
    outer = main.loops[0]
    calls = []
    if m > 0:
        calls.append((main.name, mates[m - 1].name, outer))
    prev = main
    for k, s in enumerate(mates[m + 1 :]):
        level = outer if k == 0 else _shared(mates[m + k], s)[-1]
        calls.append((s.name, prev.name, level))
        prev = s
    return tuple(calls)


def _extents(
    main: Stmt,
    loops: list[str],
    args: Mapping[str, Any],
    sizes: Mapping[str, int],
    instances: float,
    dense: tuple[bool, ...],
) -> tuple[float, ...]:
    """Each loop's trip count: a dense loop's constant upper bound in the domain (``t <
    TSTEPS``), else the extent of an array dimension it indexes alone; a loop that index
    arrays bound is capped so that the product of the trip counts stays the statement's
    instance count."""
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
    domain = str(main.domain)
    for v, d in zip(loops, dense, strict=True):
        bound = _upper(domain, v, sizes) if d else None
        g = bound if bound is not None else guess.get(v, float(max(sizes.values(), default=1)))
        g = max(1.0, g if bound is not None else min(g, total / done))
        out.append(g)
        done *= g
    return tuple(math.ceil(e) for e in out)


def _upper(domain: str, var: str, sizes: Mapping[str, int]) -> float | None:
    """The smallest constant upper bound of ``var`` in ``domain`` (``var < N``, ``var <= 7``),
    None when it has none."""
    found = []
    for op, rhs in re.findall(rf"\b{re.escape(var)}\s*(<=?)\s*([A-Za-z_]\w*|\d+)\b", domain):
        value = sizes.get(rhs) if not rhs.isdigit() else int(rhs)
        if value is not None:
            found.append(float(value) + (op == "<="))
    return min(found) if found else None
