"""The run-block pass masks the coarse levels of a row's edges from outside its block
(``spf.analysis.coarse_inspector._crossing``: ``(clev(j) + 1) & -(j < block)``) where it used
to select them (``j < block ? clev(j) + 1 : 0``), a change of the generated C that gcc compiles
without a store-forwarding stall per dependence (docs/inspection.md, "A mask in the pass").
The plans are the select's, array for array, seal for seal, for every strategy, on random and
SuiteSparse triangles, int32 and int64, inspected on one and two threads (the joint pass, and
the split one), and the solves keep the serial bits."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.analysis import coarse_inspector
from spf.runtime import plan as plan_module
from spf.sparse import poisson2d, read_matrix_market, sptrsv_args
from spf.testing import compiled, fixed_team

if TYPE_CHECKING:
    from pathlib import Path

    from spf.runtime.plan import Plan, WavefrontKernel

ARRAYS = ("coarse_ptr", "part_ptr", "coarse_order", "level_of", "levelptr", "order")
SUITESPARSE = ("bcsstk13", "jagmesh7", "cryg2500", "olm1000")


def _select(src: str, block_run: str, clev: str | None = None) -> str:
    """The crossing term as the pass wrote it before the mask (``clev``: the source's coarse
    level as the pass reads it, from the array or, from the row before, a local)."""
    value = f"${coarse_inspector.CLEV}$({src})" if clev is None else clev
    return f"(({src}) < ${block_run}$ ? {value} + 1 : 0)"


def _kernel(dtype: str) -> WavefrontKernel:
    solve = kernels.sptrsv_csr(index_dtype=dtype)
    solve.wavefront("i")
    return cast("WavefrontKernel", solve.compile())


def _lower(m: sp.sparray) -> sp.csr_array:
    """The lower triangle of ``m`` with a dominant diagonal, its indices sorted."""
    a = sp.csr_array(sp.tril(abs(sp.csr_array(m, dtype=np.float64)), k=-1))
    a.eliminate_zeros()
    low = sp.csr_array(a + sp.diags_array(np.asarray(a.sum(axis=1)).ravel() + 1.0))
    low.sort_indices()
    return low


def _triangles(suitesparse_dir: Path) -> dict[str, sp.csr_array]:
    n = 20000
    rng = np.random.default_rng(5)
    random = sp.random_array((n, n), density=2.0 / n, format="csr", rng=rng)
    chain = sp.diags_array([np.where(rng.random(n - 1) < 0.8, 1.0, 0.0)], offsets=[-1])
    out = {
        "random": _lower(random),
        "random-chained": _lower(random + chain),
        "grid": _lower(poisson2d(150)),
    }
    for name in SUITESPARSE:
        path = suitesparse_dir / f"{name}.mtx"
        if path.exists():
            out[name] = _lower(read_matrix_market(path))
    return out


def _same(a: Plan, b: Plan) -> None:
    assert (a.strategy, a.levels, a.coarse_levels, a.parts, a.copies) == (
        b.strategy,
        b.levels,
        b.coarse_levels,
        b.parts,
        b.copies,
    )
    assert a.inspected[1:] == b.inspected[1:]  # the level seal and the index arrays' checksums
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_masked_crossing_plans_are_the_select_s(
    dtype: str, suitesparse_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan_module, "SPLIT_NODES", 1)  # the runs' sort and the two-thread paths
    masked = _kernel(dtype)
    with monkeypatch.context() as m:
        m.setattr(coarse_inspector, "_crossing", _select)
        selected = _kernel(dtype)
        old_split = selected._split()  # built on first use: here, with the select
    assert "& -(" in masked._stages[0].source
    assert "& -(" in masked._split()[1].source  # the coarse-level pass of two at once
    assert "& -(" not in selected._stages[0].source + old_split[1].source
    serial = compiled("sptrsv_csr", index_dtype=dtype)
    for name, lower in _triangles(suitesparse_dir).items():
        args = sptrsv_args(lower, index_dtype=dtype)
        f = np.random.default_rng(3).uniform(-1, 1, lower.shape[0])
        want = np.zeros_like(f)
        serial(u=want, f=f, **args)
        for strategy in ("auto", "coarse", "levels"):
            for team, split in ((1, False), (2, False), (2, True)):
                monkeypatch.setattr(plan_module, "SPLIT_PASS", split)
                with fixed_team(team):
                    new = masked.inspect(check=False, strategy=strategy, threads=2, **args)
                    old = selected.inspect(check=False, strategy=strategy, threads=2, **args)
                _same(new, old)
            for t in (1, 2):
                u = np.zeros_like(f)
                with fixed_team(t):
                    masked(u=u, f=f, plan=new, **args)
                np.testing.assert_array_equal(u, want, err_msg=f"{name} {strategy} {t}")
