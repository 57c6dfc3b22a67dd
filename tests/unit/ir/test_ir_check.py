"""Code generation of an IR built or changed by hand (``spf.ir.check``): what a computation
would refuse is refused with a ``VerifyError`` naming it, not generated into a kernel that
reads out of bounds, drops a statement or fails in the C compiler."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.codegen import generate
from spf.errors import UndeclaredError, VerifyError
from spf.ir import ComputationIR, OperationIR, WorkspaceIR, build, from_data, to_data
from spf.runtime.compile import compile_kernel
from spf.runtime.interpret import interpret


def _spmv_reading_past_a() -> ComputationIR:
    """spmv whose source reads ``A(k+1)`` while its record still reads ``A(k)``."""
    ir = kernels.spmv_csr().ir
    (stmt,) = ir.stmts
    shifted = dataclasses.replace(stmt, source="$y$(i) += $A$(k+1) * $x$(j);")
    return dataclasses.replace(ir, stmts=(shifted,))


def test_a_source_whose_accesses_are_not_recorded_is_refused() -> None:
    """Before, the checked kernel proved and checked ``A(k)`` and ran ``A(k+1)``: it read
    ``A[NNZ]`` and returned a wrong ``y``."""
    with pytest.raises(VerifyError, match=r"s0 .*reads A\(k \+ 1\).*recorded reads"):
        generate(_spmv_reading_past_a(), "c", None, True)


def test_an_ir_of_a_computation_passes_after_a_round_trip() -> None:
    comp = kernels.spmv_csr()
    comp.stmt("s0").parallelize("i")
    ir = pickle.loads(pickle.dumps(comp.ir))  # no longer knows the computation
    assert generate(ir, "c", "k", True)[0].source == generate(comp, "c", "k", True)[0].source
    kernel = compile_kernel(ir, "c", "spmv_unpickled", True)
    a = sp.random(7, 5, density=0.4, format="csr", random_state=3)
    y = np.zeros(7)
    x = np.arange(5.0)
    kernel(rowptr=a.indptr.astype(np.int32), col=a.indices.astype(np.int32), A=a.data, x=x, y=y)
    assert np.allclose(y, a @ x)


def test_a_run_time_index_array_shares_its_name_with_its_uf() -> None:
    comp = spf.Computation("permuted")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("q", "int32_t", shape=("N",))
    comp.add_data_space("p", "int32_t", shape=("N",), index=True)
    comp.add_stmt(spf.Stmt("$p$(i) = $q$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$y$(p(i)) += 1;", "{[i]: 0 <= i < N}"))
    ir = pickle.loads(pickle.dumps(comp.ir))
    generate(ir, "c", None, True)


def test_two_statements_of_one_name_are_refused() -> None:
    """Before, the kernel ran only the second ``s0`` (``x += 1``, not ``x = 2 * x`` first)."""
    ir = build.add_data_space(build.computation("twice"), "x", "double", ("N",))
    ir = build.add_stmt(ir, "$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}")
    second = build.add_stmt(ir, "$x$(i) += 1;", "{[i]: 0 <= i < N}", "{[i] -> [1, i, 0]}")
    renamed = dataclasses.replace(second.stmts[1], name="s0")
    with pytest.raises(VerifyError, match=r"two statements .*'s0'"):
        generate(dataclasses.replace(second, stmts=(second.stmts[0], renamed)), "c", None, True)
    with pytest.raises(VerifyError, match="already named 's0'"):
        build.add_stmt(ir, "$x$(i) += 1;", "{[i]: 0 <= i < N}", "{[i] -> [1, i, 0]}", name="s0")


def test_an_element_type_c_does_not_have_is_refused_before_the_compiler() -> None:
    ir = kernels.spmv_csr().ir
    spaces = tuple(
        dataclasses.replace(d, type="doubel") if d.name == "x" else d for d in ir.data_spaces
    )
    with pytest.raises(VerifyError, match="data space 'x' has the element type 'doubel'"):
        generate(dataclasses.replace(ir, data_spaces=spaces), "c", None, True)


def test_an_operation_outside_the_statement_list_is_refused() -> None:
    ir = kernels.spmv_csr().ir
    barrier = OperationIR(
        name="b0",
        position=5,
        kind="barrier",
        domain="{[i]: i = 0}",
        target=None,
        index=(),
        count="1",
        peer=None,
        schedule="{[i] -> [1, 0, 0]}",
        current_schedule="{[i] -> [1, 0, 0]}",
    )
    bad = dataclasses.replace(ir, operations=(barrier,))
    with pytest.raises(VerifyError, match=r"positions \[5\]"):
        generate(bad, "c", None, True)
    with pytest.raises(VerifyError, match=r"positions \[5\]"):
        _ = bad.parsed_stmts


def test_builders_name_what_they_refuse() -> None:
    ir = build.add_data_space(build.computation("b"), "x", "double", ("N",))
    ir = build.add_stmt(ir, "$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}")
    with pytest.raises(UndeclaredError, match="unknown statement 'zz'"):
        build.reschedule(ir, "zz", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", (), (), ())
    with pytest.raises(VerifyError, match="'wait' or 'post'"):
        build.add_flag_operation(
            ir, "w", "bogus", "{[i]: 0 <= i < N}", "{[i] -> [2, i, 0]}", ("x", "i", "1"), ()
        )
    with pytest.raises(VerifyError, match="not a C identifier"):
        build.add_stmt(ir, "$x$(i) += 1;", "{[i]: 0 <= i < N}", name="s 1")


def test_from_data_names_malformed_data() -> None:
    data = to_data(kernels.spmv_csr().ir)
    with pytest.raises(VerifyError, match=r"malformed computation.*'stmts'"):
        from_data({k: v for k, v in data.items() if k != "stmts"})
    one = {**data, "stmts": [{**data["stmts"][0], "reads": [["x"]]}]}
    with pytest.raises(VerifyError, match="malformed computation"):
        from_data(one)
    tagged = {**data, "stmts": [{**data["stmts"][0], "tags": {"i": "parallel"}}]}
    with pytest.raises(VerifyError, match="tags of loop 'i' must be a list of strings"):
        from_data(tagged)  # was read as the tags 'p', 'a', 'r', ... of loop i


def test_params_that_leave_out_a_constant_are_refused_before_the_compiler() -> None:
    ir = kernels.spmv_csr().ir
    with pytest.raises(VerifyError, match="'NNZ', which is not among the IR's params"):
        generate(dataclasses.replace(ir, params=("M", "N")), "c", None, True)


def test_a_field_of_another_type_is_named() -> None:
    """Before, these ended in raw ValueError, TypeError, AttributeError and KeyError traces
    (from the readers of the IR, the bounds proof or ``Computation.from_ir``)."""
    ir = kernels.spmv_csr().ir
    (stmt,) = ir.stmts
    short = dataclasses.replace(stmt, reads=(("y",), *stmt.reads[1:]))
    cases = {
        "reads": dataclasses.replace(ir, stmts=(short,)),
        "source": dataclasses.replace(ir, stmts=(dataclasses.replace(stmt, source=None),)),
        "type": dataclasses.replace(
            ir, data_spaces=(dataclasses.replace(ir.data_spaces[0], type=("double",)),)
        ),
    }
    for field, bad in cases.items():
        with pytest.raises(VerifyError, match=f"its {field} is .*not a value of its type"):
            generate(bad, "c", None, True)
        with pytest.raises(VerifyError, match=f"its {field} is"):
            spf.Computation.from_ir(bad)


def test_a_field_holding_no_json_value_is_named_by_str_and_hash() -> None:
    """``object()`` in a shape or a workspace's fill: ``str(ir)`` and ``hash(ir)`` (and so
    ``generate``, which remembers by the fingerprint) raised a raw ``TypeError`` of the JSON
    printer before the field checks ran."""
    ir = kernels.spmv_csr().ir
    y = dataclasses.replace(ir.data_spaces[0], shape=(object(),))
    shaped = dataclasses.replace(ir, data_spaces=(y, *ir.data_spaces[1:]))
    for use in (str, hash, lambda v: generate(v, "c", None, True)):
        with pytest.raises(VerifyError, match=r"DataSpaceIR 'y': its shape is \(<object"):
            use(shaped)
    comp = kernels.spmv_csr()
    comp.stmt("s0").parallelize("i")
    filled = comp.ir
    workspace = WorkspaceIR(name="w", stmt="s0", loop="i", fill=object())
    with pytest.raises(VerifyError, match=r"WorkspaceIR 'w': its fill is <object"):
        str(dataclasses.replace(filled, workspaces=(workspace,)))


def test_an_unknown_loop_tag_is_refused() -> None:
    """A misspelt tag (``paralel``) in an IR built by hand or read with ``from_data`` was
    ignored: the loop ran sequentially, silently."""
    comp = kernels.spmv_csr()
    comp.stmt("s0").parallelize("i")
    data = to_data(comp.ir)
    assert data["stmts"][0]["tags"] == {"i": ["parallel"]}
    stmts = [{**data["stmts"][0], "tags": {"i": ["paralel"]}}]
    misspelt = from_data({**data, "stmts": stmts}, params=comp.ir.params)
    message = r"statement 's0': loop 'i' carries the tag 'paralel'.*known tags are parallel, "
    with pytest.raises(VerifyError, match=message):
        generate(misspelt, "c", None, True)
    with pytest.raises(VerifyError, match=message):
        compile_kernel(misspelt)
    with pytest.raises(VerifyError, match=message):
        spf.Computation.from_ir(misspelt)
    stmt = dataclasses.replace(comp.ir.stmts[0], tags=(("i", ("parallel", "vectorise(4)")),))
    with pytest.raises(VerifyError, match=r"tag 'vectorise\(4\)'.*vector, unroll"):
        generate(dataclasses.replace(comp.ir, stmts=(stmt,)), "c", None, True)
    generate(from_data(data, params=comp.ir.params), "c", None, True)  # known tags pass


def test_an_index_array_needs_its_uf() -> None:
    ir = kernels.spmv_csr().ir
    spaces = tuple(
        dataclasses.replace(d, index=True) if d.name == "A" else d for d in ir.data_spaces
    )
    with pytest.raises(VerifyError, match=r"'A' is a run-time index array .* no UF of its name"):
        generate(dataclasses.replace(ir, data_spaces=spaces), "c", None, True)


def test_a_placement_of_an_undeclared_buffer_is_named() -> None:
    """Before, an AssertionError of the storage analysis."""
    comp = kernels.blur2d()
    ring = comp.add_buffer("ring", (3, "M - 2"), "double", scope="stack")
    comp.stmt("s1").shift("i", 2).after("s0", "i")
    comp.stmt("s0").store_in(ring, ["i % 3", "j"])
    ir = comp.ir
    (placement,) = ir.placements
    moved = dataclasses.replace(ir, placements=(dataclasses.replace(placement, buffer="rings"),))
    with pytest.raises(UndeclaredError, match=r"unknown buffer 'rings'.*placement of 'bx'"):
        generate(moved, "c", None, True)


def test_the_interpreter_checks_an_ir_built_by_hand() -> None:
    """Before, a raw AttributeError from the element type of a record typed by hand."""
    ir = kernels.spmv_csr().ir
    spaces = tuple(
        dataclasses.replace(d, type=("double",)) if d.name == "x" else d for d in ir.data_spaces
    )
    a = sp.random(4, 3, density=0.5, format="csr", random_state=1)
    arrays = {
        "rowptr": a.indptr.astype(np.int32),
        "col": a.indices.astype(np.int32),
        "A": a.data,
        "x": np.ones(3),
        "y": np.zeros(4),
    }
    with pytest.raises(VerifyError, match="its type is"):
        interpret(dataclasses.replace(ir, data_spaces=spaces), arrays)


def test_compile_kernel_of_a_wavefront_ir_is_refused() -> None:
    """``compile_kernel(ir)`` of an IR with a ``wavefront(...)`` tag built a kernel running
    the loop sequentially (only ``Computation.compile`` builds the inspector and executor),
    without a word; now it names the loop and the ways to compile it."""
    from spf.analysis.executor import serial_computation
    from spf.errors import CodegenError

    comp = kernels.gauss_seidel_csr()
    comp.wavefront("i", method="levels")
    with pytest.raises(CodegenError, match=r"loop 'i' of statement s\d+ is tagged wavefront"):
        compile_kernel(comp.ir)
    with pytest.raises(CodegenError, match=r"Computation.from_ir\(ir\).compile\(\)"):
        compile_kernel(pickle.loads(pickle.dumps(comp.ir)))
    serial = compile_kernel(serial_computation(comp.ir), "c", "gs_serial_ir")
    a = sp.csr_array(np.array([[4.0, 1, 0], [1, 4, 1], [0, 1, 4]]))
    x = np.zeros(3)
    serial(x=x, b=np.ones(3), **spf.sparse.gauss_seidel_args(a))
    assert np.allclose(x, [0.25, 0.1875, 0.203125])
