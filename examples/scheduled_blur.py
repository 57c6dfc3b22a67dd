"""A two-stage blur scheduled Tiramisu-style: tiled, the producer computed at the consumer's
tile (``compute_at``), or inlined into it (``inline``), vectorized with a scalar remainder,
and Halide's line buffer as ``spf bench`` runs it (row strips, a three-row buffer per strip,
both stages fused in one vector loop).

Each variant is built from ``spf.kernels.blur2d``, scheduled, printed, compiled, run on a
random image with odd sizes (partial tiles, vector remainders) and checked against numpy.
"""

from __future__ import annotations

import numpy as np

import spf
from spf import kernels
from spf.bench.blur import schedule as line_buffer_schedule


def reference(img: np.ndarray) -> np.ndarray:
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def computed_at_tiles() -> spf.Computation:
    """out in 16x32 tiles; each tile computes the rows of bx it needs (2 halo rows, computed
    twice: by this tile and the next; bx is shared, so the tile loop stays sequential)."""
    comp = kernels.blur2d()
    bx, out = comp.stmts
    out.tile("i", "j", 16, 32, "i0", "j0", "i1", "j1")
    bx.compute_at(out, "j0")
    return comp


def inlined_and_vectorized() -> spf.Computation:
    """bx inlined (no buffer at all), rows in parallel, columns in vectors of 8."""
    comp = kernels.blur2d()
    comp.stmt("s0").inline()
    comp.stmt("s1").parallelize("i").vectorize("j", 8)
    return comp


def fused_with_a_shift() -> spf.Computation:
    """bx row i+2 is computed in the same i iteration that needs it (shift, then after)."""
    comp = kernels.blur2d()
    comp.stmt("s1").shift("i", 2).after("s0", "i")
    return comp


def line_buffered_strips() -> spf.Computation:
    """out in parallel strips of 64 rows; each strip computes its rows of bx (and 2 halo rows)
    into a three-row line buffer of its own, and each vector of bx is used at once by the
    output row two rows up (the schedule ``spf bench`` compares with Halide's)."""
    return line_buffer_schedule(64)


def main() -> None:
    rng = np.random.default_rng(0)
    n, m = 203, 301
    img = rng.random((n, m))
    want = reference(img)
    makes = (computed_at_tiles, inlined_and_vectorized, fused_with_a_shift, line_buffered_strips)
    for make in makes:
        comp = make()
        print(f"== {make.__name__}: {' '.join((make.__doc__ or '').split())}")
        print(comp.trace.as_python())
        print(comp.loop_structure())
        if make is inlined_and_vectorized:
            print(comp.codegen())
        kernel = comp.compile()
        out = np.zeros((n - 2, m - 2))
        arrays = {"out": out, "img": img}
        if "bx" in [a.name for a in kernel.arguments]:  # not when inlined or in a buffer
            arrays["bx"] = np.zeros((n, m - 2))
        kernel(**arrays)
        assert np.allclose(out, want), make.__name__
        print(f"matches numpy on a {n}x{m} image\n")


if __name__ == "__main__":
    main()
