"""Integer constants in generated C: int64 ones print exactly (the most negative one
without an out-of-range literal); larger ones are a CodegenError, never wrapped code."""

from __future__ import annotations

import pytest

import spf
from spf.codegen.c import int_literal
from spf.codegen.program import c_expr
from spf.errors import CodegenError

BIG = 2**64 + 5


def _comp(domain: str) -> spf.Computation:
    comp = spf.Computation("big")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$A$(i) = 1;", domain, "{[i] -> [0, i, 0]}"))
    return comp


@pytest.mark.parametrize(
    "domain", [f"{{[i]: 0 <= i < N && i < {BIG}}}", f"{{[i]: {BIG} <= i < N}}"]
)
def test_loop_bound_outside_int64_is_a_codegen_error(domain: str) -> None:
    with pytest.raises(CodegenError, match=f"{BIG - 1}|{BIG}.*does not fit in int64_t"):
        _comp(domain).codegen()


def test_int64_bounds_print_exactly() -> None:
    # check=False: the access A(i) with i < 0 is out of bounds (codegen would refuse it)
    code = str(_comp("{[i]: -9223372036854775808 <= i < N}").codegen(check=False))
    assert "(-9223372036854775807 - 1)" in code
    assert "9223372036854775808" not in code


def test_int_literal() -> None:
    assert int_literal(2**63 - 1) == str(2**63 - 1)
    assert int_literal(-(2**63)) == "(-9223372036854775807 - 1)"
    with pytest.raises(CodegenError, match="does not fit in int64_t"):
        int_literal(2**63)
    with pytest.raises(CodegenError, match="does not fit in int64_t"):
        int_literal(-(2**63) - 1)


def test_index_expression_constant_outside_int64() -> None:
    assert c_expr("i + 5") == "i + 5"
    with pytest.raises(CodegenError, match="does not fit in int64_t"):
        c_expr(f"i + {BIG}")
