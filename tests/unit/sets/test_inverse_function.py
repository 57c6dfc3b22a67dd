"""``Relation.inverse_function_exprs``: what the scanner reads of a schedule's inverse (each
iterator as an expression of the loop variables), solved on the relation itself instead of
on its canonical inverse; it must give exactly the expressions the inverse gives, or None
where the inverse gives None."""

from __future__ import annotations

import pytest

import spf.kernels
from spf.analysis.dependences import padded
from spf.errors import ArityError
from spf.sets import Relation

RELATIONS = [
    "{[i] -> [0, i, 0]}",
    "{[i, j] -> [j, i]}",
    "{[i, j] -> [0, i, 1, j, 0] : 0 <= i < N && 0 <= j < M}",
    "{[i, j] -> [ii, i, j] : ii = floor(i/4)}",
    "{[t, i] -> [t, t + i]}",
    "{[i, k] -> [i, k, j] : j = col(k)}",
    "{[i, k, j] -> [i, j, k] : j = col(k) && rowptr(i) <= k < rowptr(i + 1)}",
    "{[i, k] -> [lev, pos, k] : lev = level(i) && pos = slot(i)}",
    "{[i, j] -> [i]}",  # not invertible: j is not a function of i
    "{[i, j] -> [i + j]}",
    "{[i] -> [2i + 1, 0]}",
]


@pytest.mark.parametrize("text", RELATIONS)
def test_inverse_function_exprs_equal_the_inverse_relations(text: str) -> None:
    rel = Relation(text)
    names = [f"c{k}" for k in range(rel.out_arity)]
    assert rel.inverse_function_exprs(names) == rel.inverse().function_exprs(names)


@pytest.mark.parametrize("kernel", ["gauss_seidel_csr", "ilu0_csr", "sptrsv_csr", "spmv_csr"])
def test_inverse_function_exprs_of_kernel_schedules_equal_the_inverses(kernel: str) -> None:
    comp = getattr(spf.kernels, kernel)()
    width = comp.schedule_width()
    names = [f"c{k}" for k in range(width)]
    for stmt in comp.stmts:
        rel = padded(stmt, width).intersect_domain(stmt.domain)
        want = rel.inverse().function_exprs(names)
        assert want is not None
        assert rel.inverse_function_exprs(names) == want


def test_inverse_function_exprs_names_one_per_output() -> None:
    with pytest.raises(ArityError, match="2 names for 3 outputs"):
        Relation("{[i] -> [0, i, 0]}").inverse_function_exprs(["a", "b"])
