"""BLIS's blocking of GEMM-like statements as one candidate of :func:`spf.tune` (the space's
``blocking`` key, docs/tune.md).

A statement is *GEMM-like* when it has three dense loops over a rectangular domain, writes
one 2-D array at ``(i, j)`` (two of its loops, the third, ``k``, a reduction) and reads two
other 2-D arrays at ``(i, k)`` and ``(k, j)`` (``C(i, j) += A(i, k) * B(k, j)`` in any loop
order). A blocking ``(mc, kc, nc, mr, nr)`` schedules each such statement as BLIS does
(``spf.bench.gemm.schedule`` is the same sequence): ``j`` split by ``nc`` and ``nr``, ``k``
by ``kc``, ``i`` by ``mc`` and ``mr``, the loops ordered ``j0, k0, i0, j2, i2, k1, i3, j3``,
the ``kc x nc`` panel of ``B`` packed at ``k0`` as ``kc x nr`` slivers, the ``mc x kc`` block
of ``A`` packed at ``i0`` as ``kc x mr`` slivers (allocated per ``i0`` iteration), ``j3``
vectorized by the machine's vector width, the ``mr x nr`` register tile unrolled, and ``i0``
parallel (a blocked candidate is a parallel one: on one thread the same code; spf's scanner
keeps a parallel loop whole, which here gives the tight micro-kernel, while the serial
``i0`` loop is split into full and partial blocks and ran 4-5x slower). A statement that
shares its outer loops with statements before it (``C(i, j) *= beta`` first) is first moved
to a loop nest of its own (``after(..., ROOT)``); one followed by statements in its nest is
not GEMM-like (moving it would reorder them).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt

BLOCKINGS = {
    "avx512": [(96, 384, 1536, 6, 32), (96, 256, 1536, 4, 32), (96, 384, 1536, 12, 16),
               (120, 256, 1024, 8, 16), (144, 256, 2048, 6, 16)],
    "avx2": [(96, 384, 1536, 6, 8), (96, 256, 1536, 4, 8), (96, 256, 1536, 8, 8),
             (120, 256, 1024, 4, 12), (144, 256, 2048, 6, 12)],
}  # fmt: skip
"""The default ``blocking`` parameters ``(mc, kc, nc, mr, nr)`` per instruction set: BLIS's
shapes, register tiles of 12 to 24 vector accumulators (AVX-512: 32 registers; AVX2: 16),
``mc`` a multiple of ``mr`` and ``nc`` of ``nr``; the first is ``spf.bench.gemm``'s."""

VECTOR_BYTES = {"avx512": 64, "avx2": 32}
REGISTERS = {"avx512": 32, "avx2": 16}


@functools.cache
def native_isa() -> str:
    """``"avx512"`` where this CPU has AVX-512F, else ``"avx2"`` (read once a process: the
    cost model asks for every candidate it ranks)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "avx2"
    return "avx512" if re.search(r"\bavx512f\b", flags) else "avx2"


def lanes(nr: int, itemsize: int) -> int:
    """The vector width for a register tile ``nr`` wide: the most elements of ``itemsize``
    bytes a vector register holds, halved until it divides ``nr`` (1: no vector)."""
    width = max(VECTOR_BYTES[native_isa()] // max(itemsize, 1), 1)
    while width > 1 and nr % width:
        width //= 2
    return width


@dataclass(frozen=True)
class Block:
    """A GEMM-like statement: its loops by role (``i`` row and ``j`` column of the output,
    ``k`` the reduction), the arrays read at ``(i, k)`` and ``(k, j)``, the statement of its
    nest it must be moved after (None: it has a nest of its own) and the element size."""

    stmt: str
    i: str
    j: str
    k: str
    a: str
    b: str
    before: str | None
    itemsize: int


def _outputs(relation: str) -> tuple[str, ...]:
    from spf.tuning.nest import _outputs as outputs

    return outputs(relation)


def _rectangular(stmt: Stmt) -> bool:
    """Whether each constraint of the domain bounds one loop by constants (no index array)."""
    text = str(stmt.domain)
    body = text.split(":", 1)[1] if ":" in text else ""
    if "(" in body or " or " in body:
        return False
    loops = set(stmt.loops)
    for chain in body.replace("}", "").split("&&"):
        if len({v for v in re.findall(r"[A-Za-z_]\w*", chain) if v in loops}) > 1:
            return False
    return True


def order(stmt: Stmt) -> tuple[int, ...]:
    """The schedule's constants (``[2, i, 0, j, 1, k, 0]`` -> ``(2, 0, 1, 0)``): statements
    of one nest sort by them in execution order."""
    return tuple(int(e) for e in _outputs(str(stmt.schedule)) if e.lstrip("-").isdigit())


def nest_key(stmt: Stmt) -> tuple[str, ...]:
    """The first constant and the outermost loop of the schedule: equal for statements that
    share their outermost loop."""
    return _outputs(str(stmt.schedule))[:2]


def _roles(stmt: Stmt) -> tuple[str, str, str, str, str] | None:
    """``(i, j, k, a, b)`` of a GEMM-like statement, else None."""
    loops = stmt.loops
    if len(loops) != 3 or len(stmt.writes) != 1 or not _rectangular(stmt):
        return None
    out, wrel = stmt.writes[0]
    w = _outputs(str(wrel))
    if len(w) != 2 or w[0] == w[1] or not set(w) <= set(loops):
        return None
    i, j = w
    k = next(v for v in loops if v not in w)
    a = b = None
    for ds, rel in stmt.reads:
        exprs = _outputs(str(rel))
        if ds == out and exprs == w:
            continue
        if exprs == (i, k) and a is None:
            a = ds
        elif exprs == (k, j) and b is None:
            b = ds
        else:
            return None
    if a is None or b is None or len({a, b, out}) < 3:
        return None
    return i, j, k, a, b


def find(comp: Computation) -> tuple[Block, ...]:
    """The GEMM-like statements of ``comp`` (module docstring), in program order."""
    from spf.tuning.nest import _real_loops

    out = []
    for stmt in comp.stmts:
        roles = _roles(stmt)
        if roles is None or len(_real_loops(stmt)[0]) != 3:
            continue
        mates = sorted(
            (s for s in comp.stmts if s is not stmt and nest_key(s) == nest_key(stmt)), key=order
        )
        if any(order(s) > order(stmt) for s in mates):
            continue  # statements after it in its nest: moving it out would reorder them
        ds = comp.data_spaces.get(stmt.writes[0][0])
        item = int(np.dtype(str(ds.dtype)).itemsize) if ds is not None else 8
        out.append(Block(stmt.name, *roles, mates[-1].name if mates else None, item))
    return tuple(out)


def names(block: Block, taken: set[str]) -> dict[str, str]:
    """The loop names of the blocked statement by role (``j0, jj, j2, j3, j30, j31, k0, k1,
    i0, ii, i2, i3`` for loops ``i, j, k``), none in ``taken``."""
    roles = {"j0": block.j + "0", "jj": block.j * 2, "j2": block.j + "2", "j3": block.j + "3",
             "j30": block.j + "30", "j31": block.j + "31", "k0": block.k + "0",
             "k1": block.k + "1", "i0": block.i + "0", "ii": block.i * 2, "i2": block.i + "2",
             "i3": block.i + "3"}  # fmt: skip
    out = {}
    for role, name in roles.items():
        while name in taken:
            name += "_"
        taken.add(name)
        out[role] = name
    return out


def apply(comp: Computation, block: Block, param: tuple[int, int, int, int, int]) -> None:
    """Block the statement ``block.stmt`` of ``comp`` with ``(mc, kc, nc, mr, nr)``."""
    from spf.schedule import ROOT

    mc, kc, nc, mr, nr = param
    s = comp.stmt(block.stmt)
    if block.before is not None:
        s.after(block.before, ROOT)
    n = names(block, set(s.loops))
    s.split(block.j, nc, n["j0"], n["jj"])
    s.split(n["jj"], nr, n["j2"], n["j3"])
    s.split(block.k, kc, n["k0"], n["k1"])
    s.split(block.i, mc, n["i0"], n["ii"])
    s.split(n["ii"], mr, n["i2"], n["i3"])
    for pos, role in enumerate(("j0", "k0", "i0", "j2", "i2", "k1", "i3", "j3")):
        if s.loops[pos] != n[role]:
            s.interchange(s.loops[pos], n[role])
    s.cache_read(block.b, n["k0"], layout=[n["j2"], n["k1"], n["j3"]])
    packed_a = s.cache_read(block.a, n["i0"], layout=[n["i2"], n["k1"], n["i3"]])
    comp.buffer(packed_a.writes[0][0] + "_buf").allocate_at(s, n["i0"])
    vec = lanes(nr, block.itemsize)
    if vec > 1 and (n["j30"], n["j31"]) == (n["j3"] + "0", n["j3"] + "1"):
        s.vectorize(n["j3"], vec)  # the default names: the trace of spf.bench.gemm.schedule
    elif vec > 1:
        s.vectorize(n["j3"], vec, n["j30"], n["j31"])
    if mr > 1:
        s.unroll(n["i3"], mr)
    if vec > 1 and nr // vec > 1:
        s.unroll(n["j30"], nr // vec)
    elif vec == 1 and nr > 1:
        s.unroll(n["j3"], nr)
    s.parallelize(n["i0"])


def tie_rank(param: tuple[int, int, int, int, int]) -> int:
    """Which of two blockings the model prefers when their register tiles keep the vector
    units equally busy (AVX2's 6 x 8 and 4 x 12 both hold 12 accumulators): the lower rank.
    :data:`BLOCKINGS` lists each instruction set's with ``spf.bench.gemm``'s first (BLIS's own
    micro-kernel tile: Haswell's 6 x 8 on AVX2), so a listed blocking ranks by its place
    there; any other after them, by its rows (fewer rows, less code to build). Ties had gone
    to fewer rows alone, which put AVX2's 4 x 12 (every vector register taken) first."""
    listed = BLOCKINGS[native_isa()]
    return listed.index(param) if param in listed else len(listed) + param[3]


def efficiency(param: tuple[int, int, int, int, int], itemsize: int) -> float:
    """The cost model's share of the vector units a blocking keeps busy: accumulators
    ``mr x nr / vec`` up to 24 (hiding the multiply-add latency), a register tile that does
    not fit the registers (accumulators, one row of ``B``, one broadcast) a fifth of it, an
    ``A`` block beyond 1 MiB (L2) or a ``B`` sliver beyond 256 KiB less; times the vector
    width. Ties go by :func:`tie_rank`."""
    mc, kc, _, mr, nr = param
    vec = lanes(nr, itemsize)
    acc = mr * nr / vec
    eff = min(acc, 24.0) / 24.0 * (1.0 - 0.01 * tie_rank(param))
    if acc + nr / vec + 1 > REGISTERS[native_isa()]:
        eff *= 0.2
    if mc * kc * itemsize > 1 << 20:
        eff *= 0.7
    if kc * nr * itemsize > 1 << 18:
        eff *= 0.8
    return eff * vec
