"""The C printer's register tile (``spf_tile``) needs constant trip counts: loops tagged
``unroll`` are scanned apart into full and partial tiles however short (a 2-row tile too)."""

from __future__ import annotations

import numpy as np

from spf import kernels


def test_short_unrolled_loops_get_constant_bounds() -> None:
    comp = kernels.gemm()
    s = comp.stmt(0)
    s.tile("i", "j", 2, 8, "i0", "j0", "i1", "j1")  # i0 j0 i1 j1 k
    s.interchange("i1", "k").interchange("j1", "i1")  # i0 j0 k i1 j1
    s.vectorize("j1", 4)  # j10 (2 vectors), j11
    s.unroll("i1", 2)
    s.unroll("j10", 2)
    src = comp.codegen()
    assert "for (int64_t i1 = 0; i1 <= 1; i1++)" in src
    assert "for (int64_t j10 = 0; j10 <= 1; j10++)" in src
    assert "double spf_tile[2][2][4];" in src  # the 2 x 8 tile of C kept across k
    rng = np.random.default_rng(0)
    a, b, c = rng.random((5, 3)), rng.random((3, 11)), np.zeros((5, 11))
    comp.compile()(C=c, A=a, B=b)
    np.testing.assert_allclose(c, a @ b)
