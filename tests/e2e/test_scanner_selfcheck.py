"""The scanner's self-check (spf.codegen.verify) on split and tiled SpTRSV schedules generated
with ``check=False`` (the reliability harness): the loops isl builds for one statement may
take their bounds from another statement's array (``k0 < NNZ/2``), exact for every extent a
call can pass, so they are verified for those parameter values and generated; a schedule the
check cannot prove is refused naming the scheduling command to blame."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import Computation, Stmt


def counting(index_dtype: str) -> Computation:
    """``sptrsv_csr()``'s UFs and loops (the same domains and schedules) with bodies that
    count how often each instance runs: ``c0(i)``, ``c1(k)``, ``c2(i)``."""
    base = spf.kernels.sptrsv_csr(index_dtype=index_dtype)
    comp = Computation("count")
    for name, extent in (("c0", "N"), ("c1", "NNZ"), ("c2", "N")):
        comp.add_data_space(name, "double", shape=(extent,))
    for uf in base.ufs.values():
        comp.declare_uf(
            uf.name, domain=uf.domain, range=uf.range, monotonic=uf.monotonic, dtype=uf.dtype
        )
    bodies = ("$c0$(i) += 1;", "$c1$(k) += 1;", "$c2$(i) += 1;")
    for body, s in zip(bodies, base.stmts, strict=True):
        comp.add_stmt(Stmt(body, s.domain, s.schedule))
    return comp


def _split_and_tile(comp: Computation) -> None:
    """Rows split by 4 for ``s0`` but tiled 2 x 2 with the nonzeros for ``s1`` (an order the
    dependences forbid: generated with ``check=False`` only)."""
    comp.stmt("s0").split("i", 4, "i0", "i1")
    comp.stmt("s1").tile("i", "k", 2, 2, "i0", "k0", "i1", "k1")


def test_split_and_tiled_sptrsv_generates_unchecked() -> None:
    comp = spf.kernels.sptrsv_csr()
    _split_and_tile(comp)
    with pytest.raises(spf.IllegalScheduleError):
        comp.codegen()
    assert "void sptrsv_csr(" in comp.codegen(check=False)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_split_and_tiled_loops_run_every_instance_once(index_dtype: str) -> None:
    comp = counting(index_dtype)
    _split_and_tile(comp)
    kernel = comp.compile(check=False, openmp=False)
    rng = np.random.default_rng(7)
    sizes = [0, 1, 2, 3, 5, 8, 13, 17]
    for n, density in zip(sizes, [0.0, 1.0, 0.0, 0.5, 0.3, 0.05, 0.2, 0.4], strict=True):
        m = sp.csr_matrix(sp.tril(sp.random(n, n, density=density, random_state=rng)))
        m.sort_indices()
        args = {
            "rowptr": m.indptr.astype(index_dtype),
            "col": m.indices.astype(index_dtype),
            "c0": np.zeros(n),
            "c1": np.zeros(m.nnz),
            "c2": np.zeros(n),
        }
        kernel(**args)  # checked: the index arrays are what the UFs declare
        off_diagonal = np.zeros(m.nnz)
        for i in range(n):  # every entry of a row but its last
            off_diagonal[m.indptr[i] : max(m.indptr[i], m.indptr[i + 1] - 1)] = 1
        np.testing.assert_array_equal(args["c0"], np.ones(n))
        np.testing.assert_array_equal(args["c1"], off_diagonal)
        np.testing.assert_array_equal(args["c2"], np.ones(n))


def test_unprovable_loops_name_the_command_to_blame() -> None:
    """Rows split by 4 for ``s0`` and by 3 for ``s2`` under the same loop names: the
    self-check cannot prove the loops (the UF argument of ``s2``'s diagonal depends on the
    split), so codegen refuses, naming the command."""
    comp = spf.kernels.sptrsv_csr()
    comp.stmt("s0").split("i", 4, "i0", "i1")
    comp.stmt("s2").split("i", 3, "i0", "i1")
    with pytest.raises(spf.CodegenError) as err:
        comp.codegen(check=False)
    message = str(err.value)
    assert message.startswith("scanner bug: the loops generated for statement s2 ")
    assert 'caused by comp.stmt("s2").split("i", 3, "i0", "i1")' in message
    assert "the self-check found: " in message
