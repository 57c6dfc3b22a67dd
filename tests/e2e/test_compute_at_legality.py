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
def cache(shared_cache: Path) -> Path:
    return shared_cache


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


# ------------------------------------------- instances no consumer reads (issue 27, item 2)
@pytest.mark.parametrize("make", [blur_row_loop, blur_tile, blur_strip])
def test_blur_compute_at_with_two_rows_still_writes_bx(make: Any, cache: Path) -> None:
    """With ``N = 2`` the blur has no output row, so no copy of ``s0`` runs inside the
    consumer's loops; ``bx`` is an argument, a result like ``out``, and used to be left
    unwritten. The instances no consumer reads now run after the consumer's last iteration
    (here: in an iteration of their own)."""
    comp = make()
    kernel = comp.compile(cache_dir=str(cache))
    plain = kernels.blur2d().compile(cache_dir=str(cache))
    for n, m in [(2, 5), (2, 3), (3, 6), (9, 11)]:
        img = np.random.default_rng(n * m).random((n, m))
        want_out, want_bx = np.zeros((max(n - 2, 0), m - 2)), np.full((n, m - 2), -1.0)
        plain(out=want_out, bx=want_bx, img=img, N=n, M=m)
        for run in (kernel, lambda **a: comp.interpret(**a)):
            out, bx = np.zeros_like(want_out), np.full((n, m - 2), -1.0)
            run(out=out, bx=bx, img=img, N=n, M=m)
            assert np.array_equal(bx, want_bx), (n, m)
            assert np.array_equal(out, want_out), (n, m)


def test_the_extra_iteration_goes_away_when_an_assumption_rules_it_out() -> None:
    """``assume("N >= 3")``: every row of ``bx`` is read by some output row, so nothing runs
    outside the fused nest."""
    comp = kernels.blur2d()
    comp.assume("N >= 3")
    comp.stmt("s0").compute_at("s1", "i")
    assert comp.loop_structure() == "for i_:\n  for i:\n    for j:\n      s0\n  for j:\n    s1"
    plain = kernels.blur2d()
    plain.stmt("s0").compute_at("s1", "i")
    assert comp.loop_structure() != plain.loop_structure()  # the N <= 2 nest


def test_a_temporary_producer_needs_no_extra_iteration() -> None:
    """Stored in a buffer of the function, ``bx`` is no result: the rows no output row
    reads are dead and do not run."""
    comp = kernels.blur2d()
    comp.stmt("s0").store_in(comp.add_buffer("bx_tmp", ("N", "M-2"), "double", "stack"), ["i", "j"])
    comp.stmt("s0").compute_at("s1", "i")
    assert comp.loop_structure() == "for i_:\n  for i:\n    for j:\n      s0\n  for j:\n    s1"


def test_the_time_loop_copy_back_at_its_sweep_keeps_the_last_step(cache: Path) -> None:
    """The copy-back ``A = B`` computed at the stencil's time loop: the copies in step
    ``t_`` are those of step ``t_ - 1`` (what the sweep of ``t_`` reads), and the last step's
    copy, which no sweep reads, runs in an extra iteration ``t_ = T``; it used to be
    dropped, leaving ``A`` one step behind."""
    comp = heat()
    s1 = comp.stmt("s1")
    s1.compute_at("s0", "t")
    params = {"N": 9, "T": 4}
    assert s1.domain.contains([4, 3, 2], params)  # t_ = T runs step T - 1
    assert not s1.domain.contains([0, -1, 2], params)
    a0 = np.random.default_rng(11).random(9)
    for run in (comp.compile(cache_dir=str(cache)), lambda **a: comp.interpret(**a)):
        a, b = a0.copy(), np.zeros(9)
        run(A=a, B=b, T=4)
        assert np.array_equal(a, heat_reference_exact(a0, 4))


def heat_reference_exact(a: Array, steps: int) -> Array:
    """The heat program's own operation order (bitwise)."""
    a = a.copy()
    for _ in range(steps):
        b = a.copy()
        for i in range(1, len(a) - 1):
            b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0
        a[1:-1] = b[1:-1]
    return a


def test_a_result_uf_bounds_keep_from_telling_apart_is_refused_clearly() -> None:
    """``t = 2A`` computed at the rows of a CSR sum: which entries no row reads depends on
    ``rowptr`` (``rowptr(0) > 0`` leaves some out), so spf cannot run the rest; refused,
    naming the way out; accepted once ``t`` is a temporary."""

    def build(local: bool) -> Computation:
        comp = Computation("scaled_rows")
        comp.add_data_space("y", "double", shape=("N",))
        if local:
            comp.add_local("t", "double", ("NNZ",))
        else:
            comp.add_data_space("t", "double", shape=("NNZ",))
        comp.add_data_space("A", "double", shape=("NNZ",))
        comp.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                        monotonic="nondecreasing")  # fmt: skip
        comp.add_stmt(Stmt("$t$(k) = 2.0 * $A$(k);", "{[k]: 0 <= k < NNZ}"))
        comp.add_stmt(
            Stmt("$y$(i) += $t$(k);", "{[i,k]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1)}")
        )
        return comp

    comp = build(local=False)
    with pytest.raises(IllegalScheduleError, match=r"'t', a result of the kernel.*add_local"):
        comp.stmt("s0").compute_at("s1", "i")
    comp = build(local=True)
    comp.stmt("s0").compute_at("s1", "i")
    rp = np.array([0, 2, 2, 5], np.int32)
    a = np.arange(5.0)
    y = np.zeros(3)
    comp.compile()(y=y, A=a, rowptr=rp, N=3, NNZ=5)
    assert np.array_equal(y, [2.0, 0.0, 18.0])
