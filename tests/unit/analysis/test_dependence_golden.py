"""The dependences spf finds stay exactly what they were (issue 28, item 3).

``dependences_golden.json`` (next to this file) was generated once, with the analysis as it
was before the emptiness engine and the dependence memo were rewritten for speed:
``python tests/unit/analysis/test_dependence_golden.py --write``. For the thirty PolyBench
kernels, the sparse kernels of ``spf.kernels`` and the wavefront loops of SpTRSV,
Gauss-Seidel and ILU(0), it records every dependence (kind, source, sink, data space,
relation text, carrying loops) and the edges the inspector of each wavefront is built from.
The tests compare today's analysis with it, kernel by kernel.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import spf
from spf import kernels
from spf.bench.polybench import KERNELS as POLYBENCH

GOLDEN = Path(__file__).with_name("dependences_golden.json")

SPARSE: dict[str, Callable[[], spf.Computation]] = {
    "spmv_csr": kernels.spmv_csr,
    "spmv_csr_int64": lambda: kernels.spmv_csr(index_dtype="int64"),
    "spmtv_csr": kernels.spmtv_csr,
    "spmv_coo": kernels.spmv_coo,
    "spmv_csc": kernels.spmv_csc,
    "spmv_bcsr": lambda: kernels.spmv_bcsr(2, 3),
    "spmm_csr": kernels.spmm_csr,
    "sptrsv_csr": kernels.sptrsv_csr,
    "sptrsv_csr_general": lambda: kernels.sptrsv_csr(triangular=False),
    "gauss_seidel_csr": kernels.gauss_seidel_csr,
    "ilu0_csr": kernels.ilu0_csr,
    "spgemm_symbolic": kernels.spgemm_symbolic,
    "spgemm_numeric": kernels.spgemm_numeric,
    "dense_mv": kernels.dense_mv,
    "gemm": kernels.gemm,
    "blur2d": kernels.blur2d,
    "jacobi2d": kernels.jacobi2d,
}
"""The kernels of ``spf.kernels`` (sparse ones, and the dense ones beside them)."""

WAVEFRONTS: dict[str, Callable[[], spf.Computation]] = {
    "sptrsv_csr": kernels.sptrsv_csr,
    "gauss_seidel_csr": kernels.gauss_seidel_csr,
    "ilu0_csr": kernels.ilu0_csr,
}
"""Kernels whose row loop ``i`` runs as a wavefront."""


def dependence_rows(comp: spf.Computation) -> list[dict[str, Any]]:
    """Every dependence of ``comp`` as a JSON object, in the analysis' order."""
    return [
        {
            "kind": d.kind,
            "source": d.source,
            "sink": d.sink,
            "data_space": d.data_space,
            "relation": str(d.relation),
            "carried_by": list(d.carried_by),
        }
        for d in comp.dependences()
    ]


def wavefront_rows(comp: spf.Computation) -> dict[str, Any]:
    """The dependences after ``comp.wavefront("i")`` and the inspector's edges."""
    from spf.analysis.inspector import analyze_wavefront

    comp.wavefront("i")
    analysis = analyze_wavefront(comp.ir, [s.name for s in comp.stmts if "i" in s.loops], "i")
    edges = [
        {
            "dependence": f"{e.dependence.kind} {e.dependence.source}->{e.dependence.sink}",
            "stmt": e.stmt,
            "iterators": list(e.iterators),
            "loop_var": e.loop_var,
            "other": e.other,
            "relation": str(e.relation),
            "instances": str(e.instances),
            "push": e.push,
        }
        for e in analysis.edges
    ]
    return {
        "dependences": dependence_rows(comp),
        "edges": edges,
        "dropped": list(analysis.dropped),
        "extent": analysis.extent,
    }


def collect() -> dict[str, Any]:
    """Everything the golden file records."""
    return {
        "polybench": {name: dependence_rows(k.build()) for name, k in POLYBENCH.items()},
        "sparse": {name: dependence_rows(build()) for name, build in SPARSE.items()},
        "wavefront": {name: wavefront_rows(build()) for name, build in WAVEFRONTS.items()},
    }


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    found: dict[str, Any] = json.loads(GOLDEN.read_text())
    return found


def test_golden_covers_the_thirty_polybench_kernels(golden: dict[str, Any]) -> None:
    assert sorted(golden["polybench"]) == sorted(POLYBENCH)
    assert len(golden["polybench"]) == 30


def assert_same_rows(now: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    """``now`` is ``want`` row by row: every field as recorded, the relation as recorded or
    printed otherwise but the same relation (each a subset of the other). The analysis unites
    a dependence's pieces at once (``Set.union_all``), made canonical once rather than after
    each operand, which prints two of seidel-2d's relations otherwise."""
    assert len(now) == len(want), (now, want)
    for got, row in zip(now, want, strict=True):
        assert {**got, "relation": None} == {**row, "relation": None}
        if got["relation"] != row["relation"]:
            a, b = spf.Relation(got["relation"]), spf.Relation(row["relation"])
            assert a.is_subset(b), (got["relation"], row["relation"])
            assert b.is_subset(a), (got["relation"], row["relation"])


@pytest.mark.parametrize("name", sorted(POLYBENCH))
def test_polybench_dependences_match_golden(name: str, golden: dict[str, Any]) -> None:
    assert_same_rows(dependence_rows(POLYBENCH[name].build()), golden["polybench"][name])


@pytest.mark.parametrize("name", sorted(SPARSE))
def test_kernel_dependences_match_golden(name: str, golden: dict[str, Any]) -> None:
    assert_same_rows(dependence_rows(SPARSE[name]()), golden["sparse"][name])


def test_a_relation_printed_otherwise_must_still_be_the_same_relation() -> None:
    row = {"kind": "flow", "source": "s0", "sink": "s0", "data_space": "A", "carried_by": [0]}
    want = [{**row, "relation": "{[i] -> [j] : 0 <= i < j < N}"}]
    assert_same_rows([{**row, "relation": "{[i] -> [j] : i < j < N and i >= 0}"}], want)
    with pytest.raises(AssertionError):
        assert_same_rows([{**row, "relation": "{[i] -> [j] : 0 <= i < j <= N}"}], want)
    with pytest.raises(AssertionError):
        assert_same_rows([{**row, "carried_by": [1], "relation": want[0]["relation"]}], want)


@pytest.mark.parametrize("name", sorted(WAVEFRONTS))
def test_wavefront_dependences_and_edges_match_golden(name: str, golden: dict[str, Any]) -> None:
    assert wavefront_rows(WAVEFRONTS[name]()) == golden["wavefront"][name]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit(f"usage: python {sys.argv[0]} --write   (rewrites {GOLDEN.name})")
    GOLDEN.write_text(json.dumps(collect(), indent=1, sort_keys=True) + "\n")
