"""Equality, hashing and immutability of IR values built by hand or from unusual values:
equal IRs hash alike, and an IR holds no container that can change after its fingerprint
was taken."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

import spf
from spf.errors import VerifyError
from spf.ir import ComputationIR, DataSpaceIR, StmtIR


def _marks(fill: float) -> ComputationIR:
    comp = spf.Computation("marks")
    comp.add_data_space("cnt", "int32_t", shape=("N",))
    comp.add_local("mark", "double", ("M",))
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    comp.declare_uf(
        "rp", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}", monotonic="nondecreasing"
    )
    comp.add_stmt(
        spf.Stmt(
            "if ($mark$(col(k)) != i + 1) { $mark$(col(k)) = i + 1; $cnt$(i) += 1; }",
            "{[i,k]: 0 <= i < N && rp(i) <= k < rp(i+1)}",
        )
    )
    comp.stmt("s0").parallelize("i")
    comp.stmt("s0").workspace("mark", "i", fill=fill)
    return comp.ir


def test_equal_irs_hash_alike() -> None:
    whole, real = _marks(0), _marks(0.0)  # print (and fingerprint) differently
    assert whole.fingerprint != real.fingerprint
    assert whole != real
    assert len({whole, real}) == 2
    assert whole == _marks(0)
    assert hash(whole) == hash(_marks(0))


def test_an_ir_equals_its_pickled_copy_with_a_nan_fill() -> None:
    ir = _marks(float("nan"))
    back = pickle.loads(pickle.dumps(ir))
    assert back == ir
    assert hash(back) == hash(ir)


def test_lists_given_to_records_become_tuples() -> None:
    ir = spf.kernels.spmv_csr().ir
    stmt = ir.stmts[0]
    by_hand = StmtIR(
        name=stmt.name,
        source=stmt.source,
        domain=stmt.domain,
        schedule=stmt.schedule,
        current_schedule=stmt.current_schedule,
        reads=[list(r) for r in stmt.reads],  # type: ignore[arg-type]
        writes=[list(w) for w in stmt.writes],  # type: ignore[arg-type]
        tags=[],  # type: ignore[arg-type]
    )
    assert by_hand == stmt
    assert hash(by_hand) == hash(stmt)
    same = dataclasses.replace(ir, stmts=[by_hand])  # type: ignore[arg-type]
    assert isinstance(same.stmts, tuple)
    assert same == ir
    assert hash(same) == hash(ir)
    spaces = tuple(_listed_shape(d) for d in ir.data_spaces)
    shaped = dataclasses.replace(ir, data_spaces=spaces)
    assert shaped == ir
    assert all(isinstance(d.shape, tuple) for d in shaped.data_spaces)


def _listed_shape(space: DataSpaceIR) -> DataSpaceIR:
    return dataclasses.replace(space, shape=list(space.shape or ()))  # type: ignore[arg-type]


def test_the_name_of_an_ir_is_a_c_identifier() -> None:
    """The name prints unquoted as the first line of the text: a name holding a line break
    could print as another IR's text (one fingerprint for two computations)."""
    ir = spf.kernels.gemm().ir
    with pytest.raises(VerifyError, match="not a C identifier"):
        dataclasses.replace(ir, name="gemm\n  return_values: []")
    with pytest.raises(VerifyError, match="not a C identifier"):
        ComputationIR(name="my kernel")
