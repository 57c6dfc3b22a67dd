"""Differential: ``compute_at`` at every level of every two-statement kernel is refused or exact.

For each ordered pair of statements and each loop of the consumer, ``compute_at`` either
raises ``IllegalScheduleError``, is not applicable (``SpfError``: the producer reads what it
writes, the consumer does not read it, ...), or is accepted; an accepted one must compute,
compiled and interpreted, bit for bit what the unscheduled kernel computes, on every array.
The kernels: the two-statement ones of ``spf.kernels`` and of the PolyBench suite, and the
time-loop stencils of the tests (1-d heat, the 2-d Jacobi sweep of issue 27 whose copy-back
computed at the time loop used to drop its last step). The levels accepted are pinned too,
so a refusal that was not needed shows up as well. Each distinct kernel compiles once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

from spf import Computation, IllegalScheduleError, SpfError, Stmt, kernels
from spf.bench.polybench import KERNELS

if TYPE_CHECKING:
    from pathlib import Path

Args = dict[str, Any]


def heat() -> Computation:
    comp = Computation("heat")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    dom = "{[t,i]: 0 <= t < T && 1 <= i < N - 1}"
    comp.add_stmt(
        Stmt("$B$(i) = ($A$(i-1) + $A$(i) + $A$(i+1)) / 3.0;", dom, "{[t,i] -> [0,t,0,i,0]}")
    )
    comp.add_stmt(Stmt("$A$(i) = $B$(i);", dom, "{[t,i] -> [0,t,1,i,0]}"))
    return comp


def jacobi_time() -> Computation:
    """Issue 27's stencil: ``s0`` sweeps ``A`` into ``B``, ``s1`` copies ``B`` back."""
    comp = Computation("jacobi_time")
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_data_space("B", "double", shape=("N", "N"))
    dom = "{[t,i,j]: 0 <= t < T && 1 <= i < N - 1 && 1 <= j < N - 1}"
    comp.add_stmt(
        Stmt(
            "$B$(i,j) = 0.2 * ($A$(i,j) + $A$(i-1,j) + $A$(i+1,j) + $A$(i,j-1) + $A$(i,j+1));",
            dom,
            "{[t,i,j] -> [0,t,0,i,0,j,0]}",
        )
    )
    comp.add_stmt(Stmt("$A$(i,j) = $B$(i,j);", dom, "{[t,i,j] -> [0,t,1,i,0,j,0]}"))
    return comp


def rng_arrays(**shapes: tuple[int, ...]) -> Args:
    rng = np.random.default_rng(27)
    return {name: rng.random(shape) for name, shape in shapes.items()}


def ilu0_args() -> Args:
    m = sp.random(7, 7, density=0.35, format="csr", random_state=4) + sp.eye(7) * 4
    m = sp.csr_matrix(m)
    m.sort_indices()
    diag = np.array([m.indptr[i] + list(m.indices[m.indptr[i] : m.indptr[i + 1]]).index(i)
                     for i in range(7)], dtype=np.int32)  # fmt: skip
    return {"A": m.data.copy(), "rowptr": m.indptr.astype(np.int32),
            "col": m.indices.astype(np.int32), "diag": diag, "N": 7, "NNZ": m.nnz}  # fmt: skip


@dataclass(frozen=True)
class Case:
    build: Callable[[], Computation]
    args: list[Args]
    """One or more argument sets (sizes included) the results are compared on."""
    accepted: frozenset[tuple[int, int, int]]
    """``(producer, consumer, level)`` that compute_at accepts."""


def polybench(name: str) -> tuple[Callable[[], Computation], list[Args]]:
    k = KERNELS[name]
    return k.build, [k.arguments()]


TIME_LOOP = frozenset({(0, 1, 0), (1, 0, 0)})
CASES: dict[str, Case] = {
    "blur2d": Case(
        kernels.blur2d,
        [
            {**rng_arrays(img=(n, m)), "out": np.zeros((n - 2, m - 2)), "bx": np.zeros((n, m - 2))}
            for n, m in ((2, 5), (3, 3), (7, 9))
        ],
        frozenset({(0, 1, 0), (0, 1, 1)}),
    ),
    "ilu0_csr": Case(kernels.ilu0_csr, [ilu0_args()], frozenset()),
    "heat": Case(heat, [{**rng_arrays(A=(9,), B=(9,)), "T": 3}], TIME_LOOP),
    "jacobi_time": Case(jacobi_time, [{**rng_arrays(A=(6, 6), B=(6, 6)), "T": 3}], TIME_LOOP),
    **{
        name: Case(
            *polybench(name),
            TIME_LOOP if name in ("heat-3d", "jacobi-1d", "jacobi-2d") else frozenset(),
        )
        for name in ("gemm", "syr2k", "syrk", "trmm", "mvt", "heat-3d", "jacobi-1d", "jacobi-2d")
    },
}


def copies(args: Args) -> Args:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def results(comp: Computation, cache: Path, args: list[Args]) -> list[tuple[Args, Args]]:
    """``(compiled, interpreted)`` results on each argument set."""
    kernel = comp.compile(cache_dir=str(cache))
    out = []
    for a in args:
        compiled, interpreted = copies(a), copies(a)
        kernel(**compiled)
        comp.interpret(**interpreted)
        out.append((compiled, interpreted))
    return out


def attempt(comp: Computation, p: int, c: int, level: int) -> str | None:
    """None when ``compute_at`` is accepted; ``"refused"`` for ``IllegalScheduleError``;
    else the message of the ``SpfError`` saying why it does not apply."""
    try:
        comp.stmts[p].compute_at(comp.stmts[c], level)
    except IllegalScheduleError:
        return "refused"
    except SpfError as err:
        return str(err)
    return None


def same(a: Args, b: Args) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))


@pytest.mark.parametrize("name", list(CASES))
def test_compute_at_at_every_level_is_refused_or_computes_the_same(
    name: str, tmp_path: Path
) -> None:
    case = CASES[name]
    base = case.build()
    want: list[tuple[Args, Args]] | None = None
    accepted = set()
    for p in range(len(base.stmts)):
        for c in range(len(base.stmts)):
            if p == c:
                continue
            for level in range(len(base.stmts[c].loops)):
                comp = case.build()
                why = attempt(comp, p, c, level)
                if why is not None:
                    assert why == "refused" or "compute_at" in why  # not applicable: said
                    continue
                accepted.add((p, c, level))
                if want is None:
                    want = results(base, tmp_path, case.args)
                    assert all(same(x, y) for x, y in want)
                got = results(comp, tmp_path, case.args)
                for (ref, _), (compiled, interpreted) in zip(want, got, strict=True):
                    assert same(compiled, ref), (name, p, c, level, "compiled")
                    assert same(interpreted, ref), (name, p, c, level, "interpreted")
    assert accepted == case.accepted
