"""A wavefront over statements whose inner loops were split, vectorized or skewed first
(PolyBench lu): the executor keeps those loops' names, so their tags (``vector(4)``,
``unroll(2)``) stay on them, and the kernel equals PolyBench's reference."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf.bench.polybench import kernel

if TYPE_CHECKING:
    from pathlib import Path

    import spf

# vectorised split loops, built as users build them (spf's -O3)
pytestmark = pytest.mark.default_flags

CHANGES: dict[str, tuple[Callable[[spf.Computation], object], str]] = {
    "vectorize": (lambda c: c.stmt("s2").vectorize("j", 4), "#pragma omp simd"),
    "split_then_vectorize": (
        lambda c: c.stmt("s2").split("j", 8, "j0", "j1").vectorize("j1", 4),
        "#pragma omp simd",
    ),
    "skew_then_unroll": (
        lambda c: c.stmt("s2").skew("j", "k", 1).unroll("k", 2),
        "#pragma GCC unroll 2",
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_wavefront_after_vectorize_split_or_skew_keeps_the_inner_loop_tags(
    change: str, shared_cache: Path
) -> None:
    apply, pragma = CHANGES[change]
    k = kernel("lu")
    comp = k.build()
    apply(comp)
    comp.wavefront("i")
    assert pragma in comp.codegen()
    compiled = comp.compile(cache_dir=str(shared_cache))
    for n in (0, 1, 7, 13):
        args = k.arguments({"N": n})
        want = k.expected(args)
        compiled(**args)
        np.testing.assert_allclose(args["A"], want["A"], rtol=1e-12, atol=1e-12)
