"""End to end: ``compute_at`` is refused where a recomputed producer would compute wrong values.

A two-statement time-loop stencil (heat / Jacobi-1d: ``B[i] = (A[i-1] + A[i] + A[i+1]) / 3``
then ``A[i] = B[i]`` in a ``t`` loop) computed at its consumer's ``i`` loop gets, for each
``(t, i)``, a copy of the producer instances writing ``B[i]``; their reads of ``A[i-1]`` come
after the consumer overwrote it in this time step. ``compute_at`` used to accept it (it made
the new schedule the program order, so legality compared the program with itself) and both
the kernel and ``interpret`` computed a wrong result. Now every copy must keep its instance's
program-order place against every other statement touching the same element, checked on the
recomputed domain, and a violation is an ``IllegalScheduleError`` naming ``compute_at`` and
the dependence. Legal uses (the blur's halo rows, the stencil at its ``t`` loop, where each
step's copies are that step's producer instances only) still compile and match numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from spf import Computation, IllegalScheduleError, Stmt, kernels

if TYPE_CHECKING:
    from pathlib import Path

Array = np.ndarray[Any, Any]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compute-at-legality")


def heat() -> Computation:
    comp = Computation("heat")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(
        Stmt(
            "$B$(i) = ($A$(i-1) + $A$(i) + $A$(i+1)) / 3.0;",
            "{[t,i]: 0 <= t < T && 1 <= i < N - 1}",
            "{[t,i] -> [0,t,0,i,0]}",
        )
    )
    comp.add_stmt(
        Stmt("$A$(i) = $B$(i);", "{[t,i]: 0 <= t < T && 1 <= i < N - 1}", "{[t,i] -> [0,t,1,i,0]}")
    )
    return comp


def heat_reference(a: Array, steps: int) -> Array:
    a = a.copy()
    for _ in range(steps):
        a[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
    return a


def state(comp: Computation) -> list[tuple[str, str, str, str]]:
    return [(s.name, str(s.domain), str(s.schedule), str(s.reads)) for s in comp.stmts]


@pytest.mark.parametrize("level", ["i", 1])
def test_compute_at_a_time_loop_stencil_is_refused_naming_the_dependence(
    level: str | int,
) -> None:
    comp = heat()
    before = state(comp)
    with pytest.raises(IllegalScheduleError, match=r"compute_at.*dependence on 'A' from s0 to s1"):
        comp.stmt("s0").compute_at("s1", level)
    assert state(comp) == before  # refused before changing anything


def test_compute_at_the_time_loop_computes_each_step_once(cache: Path) -> None:
    """At ``t`` the copies for step ``t_`` are the producer's step ``t_`` only (the earlier
    steps' values of ``B`` are overwritten before the consumer reads them)."""
    comp = heat()
    s0 = comp.stmt("s0")
    s0.compute_at("s1", "t")
    params = {"N": 9, "T": 4}
    assert s0.domain.contains([2, 2, 3], params)
    assert not s0.domain.contains([2, 1, 3], params)
    comp.check_legality()
    a0 = np.random.default_rng(3).random(9)
    a, b = a0.copy(), np.zeros(9)
    comp.compile(cache_dir=str(cache))(A=a, B=b, T=4)
    assert np.allclose(a, heat_reference(a0, 4))
    a2, b2 = a0.copy(), np.zeros(9)
    comp.interpret(A=a2, B=b2, T=4)
    assert np.array_equal(a2, a)


def test_the_heat_program_itself_runs_right(cache: Path) -> None:
    comp = heat()
    a0 = np.random.default_rng(1).random(13)
    a, b = a0.copy(), np.zeros(13)
    comp.compile(cache_dir=str(cache))(A=a, B=b, T=4)
    assert np.allclose(a, heat_reference(a0, 4))
    a2, b2 = a0.copy(), np.zeros(13)
    comp.interpret(A=a2, B=b2, T=4)
    assert np.allclose(a2, a)


def blur_reference(img: Array) -> Array:
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def blur_row_loop() -> Computation:
    comp = kernels.blur2d()
    comp.stmt("s0").compute_at("s1", "i")
    return comp


def blur_tile() -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.tile("i", "j", 4, 8, "i0", "j0", "i1", "j1")
    s0.compute_at(s1, "j0")
    return comp


def blur_strip() -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.split("i", 5, "i0", "i1")
    s0.compute_at(s1, "i1")
    return comp


@pytest.mark.parametrize("make", [blur_row_loop, blur_tile, blur_strip])
def test_legal_compute_at_on_the_blur_matches_numpy_compiled_and_interpreted(
    make: Any, cache: Path
) -> None:
    comp = make()
    comp.check_legality()
    kernel = comp.compile(cache_dir=str(cache))
    for n, m in [(9, 11), (3, 3), (14, 6)]:
        img = np.random.default_rng(n + m).random((n, m))
        out, bx = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
        kernel(out=out, bx=bx, img=img)
        assert np.allclose(out, blur_reference(img))
        out2, bx2 = np.zeros((n - 2, m - 2)), np.zeros((n, m - 2))
        comp.interpret(out=out2, bx=bx2, img=img)
        assert np.array_equal(out2, out)


def test_a_producer_read_that_a_later_statement_overwrites_is_refused() -> None:
    """``s2`` zeroes row ``i + 2`` of ``img`` in ``s1``'s row loop, after all of ``s0`` in
    program order; computed at the rows, the copies of ``s0`` at row ``i + 1`` would read the
    zeroed row."""
    comp = kernels.blur2d()
    comp.add_stmt(
        Stmt(
            "$img$(i + 2, j) = 0.0;",
            "{[i,j]: 0 <= i < N - 2 && 0 <= j < M}",
            "{[i,j] -> [1,i,1,j,0]}",
        )
    )
    s0, s1, _ = comp.stmts
    comp.check_legality()
    with pytest.raises(IllegalScheduleError, match=r"compute_at.*anti dependence on 'img'.*s2"):
        s0.compute_at(s1, "i")


def test_a_statement_overwriting_only_rows_already_used_keeps_compute_at_legal(
    cache: Path,
) -> None:
    """Zeroing row ``i`` after output row ``i``: no copy reads a zeroed row."""
    comp = kernels.blur2d()
    comp.add_stmt(
        Stmt(
            "$img$(i, j) = 0.0;", "{[i,j]: 0 <= i < N - 2 && 0 <= j < M}", "{[i,j] -> [1,i,1,j,0]}"
        )
    )
    s0, s1, _ = comp.stmts
    s0.compute_at(s1, "i")
    img = np.random.default_rng(5).random((7, 9))
    out, bx = np.zeros((5, 7)), np.zeros((7, 7))
    comp.compile(cache_dir=str(cache))(out=out, bx=bx, img=img.copy())
    assert np.allclose(out, blur_reference(img))
