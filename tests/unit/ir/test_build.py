"""spf.ir.build: the computations the analysis builds are IR values equal to what
``Computation`` records for the same steps (``Computation.from_ir(ir).ir == ir``)."""

from __future__ import annotations

import pytest

import spf
from spf import kernels
from spf.analysis.check_loops import check_loops
from spf.analysis.coarse_inspector import build_pair_sort, build_part_check
from spf.analysis.executor import build_executor, inspectors, serial_computation
from spf.analysis.inspector import build_level_sort
from spf.ir import ComputationIR, build


def _built(comp: spf.Computation) -> list[ComputationIR]:
    """Every computation the analysis builds for ``comp``'s wavefront loop."""
    ir = comp.ir
    executor = build_executor(ir)
    ((analysis, _),) = executor.loops
    return [
        executor.ir,
        serial_computation(ir),
        *(insp for _, insp in inspectors(ir)),
        *build_level_sort(analysis, f"{ir.name}_sort"),
        *build_pair_sort(analysis, f"{ir.name}_pair"),
        build_part_check(ir, analysis),
        check_loops(f"{ir.name}_facts", list(ir.facts), ir.uf_decls).ir,
        check_loops(f"{ir.name}_count", list(ir.facts), ir.uf_decls, counting=True).ir,
    ]


@pytest.mark.parametrize(
    ("kernel", "method"),
    [
        (kernels.sptrsv_csr, "levels"),
        (kernels.gauss_seidel_csr, "p2p"),  # push edges: a prologue, waits and posts
        (kernels.ilu0_csr, "coarse"),
    ],
)
def test_the_computations_the_analysis_builds_are_the_irs_a_computation_records(
    kernel: object, method: str
) -> None:
    comp = kernel()  # type: ignore[operator]
    comp.wavefront(comp.stmts[0].loops[0], method=method)
    for ir in _built(comp):
        assert spf.Computation.from_ir(ir).ir == ir, ir.name


def test_a_builder_step_returns_a_new_ir_and_leaves_its_argument() -> None:
    empty = build.computation("scale")
    with_x = build.add_data_space(empty, "x", "double", ("N",))
    done = build.add_stmt(with_x, "$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}")
    assert (empty.data_spaces, with_x.stmts, with_x.params) == ((), (), ("N",))
    assert [s.name for s in done.stmts] == ["s0"]
    assert done.stmts[0].reads == (("x", "{[i] -> [i]}"),)
    assert spf.Computation.from_ir(done).ir == done


def test_a_builder_statement_calling_an_undeclared_uf_names_it() -> None:
    ir = build.add_data_space(build.computation("c"), "x", "double", ("N",))
    with pytest.raises(spf.UndeclaredError, match="'col'"):
        build.add_stmt(ir, "$x$(col(i)) = 0;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}")
    with pytest.raises(spf.UndeclaredError, match="'row'"):
        build.add_stmt(ir, "$x$(i) = 0;", "{[i]: 0 <= i < row(N)}", "{[i] -> [0, i, 0]}")


def test_a_builder_refuses_a_name_declared_twice() -> None:
    ir = build.add_data_space(build.computation("c"), "x", "double", ("N",))
    with pytest.raises(spf.VerifyError, match="'x'"):
        build.add_data_space(ir, "x", "int64_t", ())
    with pytest.raises(spf.VerifyError, match="'x'"):
        build.declare_uf(ir, "x", arity=1)
