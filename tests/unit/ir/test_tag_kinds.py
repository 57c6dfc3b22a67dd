"""Every loop tag a public scheduling path puts on a loop is of a kind
:data:`spf.schedule.tags.KINDS` lists, so that the IR check (``spf.ir.check``) never refuses
a tag spf itself set: each schedule below goes through its IR (``to_data``/``from_data``,
``Computation.from_ir``) and code generation for the target that reads the tag."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import spf
from spf import kernels
from spf.analysis.executor import build_executor
from spf.codegen import generate
from spf.ir import ComputationIR, from_data, to_data
from spf.ir.check import check_fields
from spf.schedule.tags import KINDS, kind
from spf.testing import copies_executor


def _gemm() -> spf.Computation:
    comp = spf.Computation("gemm")
    for n in ("N", "M", "K"):
        comp.add_constant(n)
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_stmt(
        spf.Stmt(
            "$C$(i, j) += $A$(i, k) * $B$(k, j);",
            "{[i, j, k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
            "{[i, j, k] -> [0, i, 0, j, 0, k, 0]}",
        )
    )
    return comp


def _scaled() -> spf.Computation:
    comp = spf.Computation("scaled")
    comp.add_constant("N")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) = 2.0 * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    return comp


def _parallel() -> tuple[spf.Computation, str]:
    comp = kernels.spmv_csr()
    comp.stmt("s0").parallelize("i")
    return comp, "c"


def _reduction(option: str) -> Callable[[], tuple[spf.Computation, str]]:
    def build() -> tuple[spf.Computation, str]:
        comp = kernels.spmv_csc()
        comp.stmt("s0").parallelize("j", reduction=option)
        return comp, "c"

    return build


def _vector() -> tuple[spf.Computation, str]:
    comp = _scaled()
    comp.stmt("s0").vectorize("i", 4)
    return comp, "c"


def _unroll() -> tuple[spf.Computation, str]:
    comp = _gemm()
    comp.stmt("s0").unroll("k", 4)
    return comp, "c"


def _pipeline() -> tuple[spf.Computation, str]:
    comp = _scaled()
    comp.stmt("s0").pipeline("i", 2)
    return comp, "hls"


def _distribute() -> tuple[spf.Computation, str]:
    comp = _scaled()
    comp.stmt("s0").distribute("i")
    return comp, "c"


def _gpu() -> tuple[spf.Computation, str]:
    comp = _gemm()
    comp.stmt("s0").gpu("i", "j")
    return comp, "cuda"


def _tile_gpu() -> tuple[spf.Computation, str]:
    comp = _gemm()
    comp.stmt("s0").tile_gpu("i", "j", 8, 8)
    return comp, "cuda"


def _partial_sums() -> tuple[spf.Computation, str]:
    comp = kernels.spmv_csr()
    comp.stmt("s0").partial_sums("k", 4, 16)
    return comp, "c"


def _coiterate() -> tuple[spf.Computation, str]:
    comp = kernels.ilu0_csr()
    comp.stmt("s1").coiterate("j1", "j2")
    return comp, "c"


BUILDERS: dict[str, Callable[[], tuple[spf.Computation, str]]] = {
    "parallelize": _parallel,
    "parallelize(reduction='atomic')": _reduction("atomic"),
    "parallelize(reduction='privatize')": _reduction("privatize"),
    "vectorize": _vector,
    "unroll": _unroll,
    "pipeline": _pipeline,
    "distribute": _distribute,
    "gpu": _gpu,
    "tile_gpu": _tile_gpu,
    "coiterate": _coiterate,
    "partial_sums": _partial_sums,
}


def _kinds(ir: ComputationIR) -> set[str]:
    records = [*ir.stmts, *ir.operations]
    return {kind(t) for r in records for _, tags in r.tags for t in tags}


@pytest.mark.parametrize("path", sorted(BUILDERS))
def test_a_tag_spf_sets_passes_the_ir_check(path: str) -> None:
    comp, target = BUILDERS[path]()
    ir = comp.ir
    assert _kinds(ir), f"{path} set no tag"
    assert _kinds(ir) <= set(KINDS)
    check_fields(ir)
    again = from_data(to_data(ir), params=ir.params)
    check_fields(again)
    spf.Computation.from_ir(again)
    generate(again, target, None, True)


@pytest.mark.parametrize("method", ["levels", "p2p", "coarse"])
def test_a_wavefront_and_its_executor_tags_pass_the_ir_check(method: str) -> None:
    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method=method)
    assert _kinds(comp.ir) == {"wavefront"}
    check_fields(comp.ir)
    executor = build_executor(comp.ir).ir
    assert _kinds(executor)
    assert _kinds(executor) <= set(KINDS)
    check_fields(executor)
    spf.Computation.from_ir(comp.ir).codegen()


def test_the_paths_above_set_every_known_kind() -> None:
    """KINDS lists no kind that no path sets, and the paths above cover each one (a new
    tag-setting command adds its builder here and its kind to KINDS)."""
    seen: set[str] = set()
    for build in BUILDERS.values():
        seen |= _kinds(build()[0].ir)
    for method in ("levels", "p2p", "coarse"):
        comp = kernels.gauss_seidel_csr()
        comp.wavefront("i", method=method)
        seen |= _kinds(comp.ir) | _kinds(build_executor(comp.ir).ir)
    seen |= _kinds(copies_executor())
    assert seen == set(KINDS)


def test_the_copies_executor_tags_pass_the_ir_check() -> None:
    ir = copies_executor()
    assert "wavefront_prefetch" in _kinds(ir)
    check_fields(ir)
    again = from_data(to_data(ir), params=ir.params)
    check_fields(again)
    assert again == ir
