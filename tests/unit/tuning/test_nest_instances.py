"""The tuner's cost model counts every instance of the main statement: PolyBench 2mm and gemm
take floating-point constants (``alpha``, ``beta``) besides their sizes, and their priced
PDFG's counts must still be used (they were dropped for the size of the largest array read,
NI*NJ for 2mm's product, about NK times too few)."""

from __future__ import annotations

import itertools
import math

import pytest

from spf.bench.polybench import kernel
from spf.tuning.nest import analyze, size_params

SIZES = {"NI": 5, "NJ": 7, "NK": 9, "NL": 3}


@pytest.mark.parametrize(
    ("name", "counts"),
    [
        ("gemm", {"s0": ("NI", "NJ"), "s1": ("NI", "NK", "NJ")}),
        (
            "2mm",
            {
                "s0": ("NI", "NJ"),
                "s1": ("NI", "NJ", "NK"),
                "s2": ("NI", "NL"),
                "s3": ("NI", "NL", "NJ"),
            },
        ),
    ],
)
def test_priced_instance_counts_equal_the_domain_sizes(
    name: str, counts: dict[str, tuple[str, ...]]
) -> None:
    k = kernel(name)
    comp = k.build()
    sizes = {p: SIZES[p] for p in comp.params if p in SIZES}
    graph = comp.pdfg(sizes).graph
    for stmt, extents in counts.items():
        domain = comp.stmt(stmt).domain
        box = itertools.product(range(-1, max(SIZES.values()) + 1), repeat=domain.arity)
        inside = sum(domain.contains(p, sizes) for p in box)  # brute force, point by point
        assert graph.nodes[stmt]["instances"] == inside == math.prod(sizes[e] for e in extents)


@pytest.mark.parametrize(
    ("name", "product"), [("gemm", ("NI", "NJ", "NK")), ("2mm", ("NI", "NJ", "NK"))]
)
def test_tuning_model_counts_every_instance_despite_floating_point_constants(
    name: str, product: tuple[str, ...]
) -> None:
    k = kernel(name)
    comp = k.build()
    assert {"alpha", "beta"} <= comp.params
    assert not {"alpha", "beta"} & size_params(comp)
    sizes = {p: v for p, v in {"NI": 13, "NJ": 11, "NK": 9, "NL": 7}.items() if p in comp.params}
    nest = analyze(comp, k.arguments(sizes))
    assert nest.instances == math.prod(sizes[p] for p in product)


def test_packing_candidates_leave_out_a_stencils_shifted_reads() -> None:
    """The blur reads img at three elements per instance, which cache_read refuses: the
    search offered cache_read(img) anyway, and each such candidate was a rejected trial
    (a wasted compile slot of the budget). gemm's operands stay candidates."""
    import numpy as np

    from spf import kernels

    img, bx, out = np.zeros((9, 11)), np.zeros((9, 9)), np.zeros((7, 9))
    blur = kernels.blur2d()
    assert "img" not in analyze(blur, {"img": img, "bx": bx, "out": out}).reads
    a, b, c = np.zeros((4, 5)), np.zeros((5, 6)), np.zeros((4, 6))
    assert set(analyze(kernels.gemm(), {"A": a, "B": b, "C": c}).reads) == {"A", "B"}
