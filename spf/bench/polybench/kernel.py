"""One PolyBench kernel: how to build it, its inputs and its reference loop nest."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

import spf

#: A kernel's arguments by name: sizes (``int``), scalar constants (``float``), arrays.
Args = dict[str, Any]

#: One statement: C source, domain ``"[i,j]: ..."`` (braces added), 2d+1 schedule ``"[...]"``.
StmtSpec = tuple[str, str, str]


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A PolyBench/C 4.2 kernel written as an spf Computation.

    ``build`` returns a fresh Computation in the original loop order; ``inputs(sizes)`` the
    arguments besides the sizes (arrays and scalar constants, PolyBench-style values);
    ``reference(args)`` runs the same loop nest in Python on ``args`` (sizes included),
    updating its arrays in place; ``outputs`` names the arrays the kernel writes; ``sizes``
    are small odd test sizes.
    """

    name: str
    build: Callable[[], spf.Computation]
    inputs: Callable[[Mapping[str, int]], Args]
    reference: Callable[[Args], None]
    outputs: tuple[str, ...]
    sizes: Mapping[str, int]

    def arguments(self, sizes: Mapping[str, int] | None = None) -> Args:
        """Sizes plus fresh inputs: the keyword arguments of the compiled kernel."""
        sz = dict(self.sizes if sizes is None else sizes)
        return {**sz, **self.inputs(sz)}

    def expected(self, args: Args) -> Args:
        """The reference's result on a copy of ``args`` (``args`` itself is left alone)."""
        out = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        self.reference(out)
        return out


def computation(
    name: str,
    spaces: Mapping[str, tuple[str, ...]],
    stmts: Iterable[StmtSpec],
    *,
    constants: Iterable[str] = (),
    sizes: Iterable[str] = (),
    local: Mapping[str, tuple[str, ...]] | None = None,
) -> spf.Computation:
    """A Computation of double data spaces ``spaces`` (name -> shape, ``()`` for 0-d),
    double constants, ``int64_t`` size constants used only in sources, double locals and
    the statements in order. No assumption: an access PolyBench writes in bounds only for
    some sizes (``durbin``'s ``r(0)``) is a precondition the kernel checks (API.md 10)."""
    comp = spf.Computation(name)
    for size in sizes:
        comp.add_constant(size)
    for const in constants:
        comp.add_constant(const, "double")
    for space, shape in spaces.items():
        comp.add_data_space(space, "double", shape=shape or None)
    for space, shape in (local or {}).items():
        comp.add_local(space, "double", shape)
    for source, domain, schedule in stmts:
        tup = domain.split(":", 1)[0].strip()
        comp.add_stmt(spf.Stmt(source, f"{{{domain}}}", f"{{{tup} -> {schedule}}}"))
    return comp


def grid(shape: tuple[int, ...], k: int) -> np.ndarray:
    """Deterministic PolyBench-style values in ``(0, 1]``: ``(((1 + i*j + k*(i + 2j + 3l))
    mod m) + 1) / m`` over the indices ``(i, j, l)``, ``m`` a small prime chosen by ``k``."""
    idx = np.indices(shape, dtype=np.int64)
    mod = (13, 17, 19, 23, 29, 31)[k % 6]
    value = np.ones(shape, dtype=np.int64)
    for d in range(len(shape)):
        value += k * (d + 1) * idx[d]
    if len(shape) >= 2:
        value += idx[0] * idx[1]
    return np.ascontiguousarray((value % mod + 1) / mod, dtype=np.float64)
