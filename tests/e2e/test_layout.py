"""End to end: data layouts (Tiramisu Layer III) compiled with gcc and interpreted, against
numpy: storage folding (blur's ``bx`` in 3 rows when fused), ``store_in`` with modulo,
transpose, projection and a scalar, ``allocate_at`` with an extent that depends on an outer
loop, and buffers that are (global) or are not (stack/local) kernel arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import spf
from spf import Computation, Stmt, kernels
from spf.codegen.program import signature

SIZES = [(3, 3), (4, 5), (7, 9), (10, 3), (13, 17)]


def both(comp: Computation, **args: Any) -> list[dict[str, Any]]:
    """Run ``comp`` compiled (legality checked) and interpreted on copies of ``args``."""
    out = []
    for run in ("compile", "interpret"):
        mine = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        if run == "compile":
            comp.compile()(**mine)
        else:
            comp.interpret(**mine)
        out.append(mine)
    return out


def arg_names(comp: Computation) -> list[str]:
    """The generated function's arguments, in order."""
    return [a.name for a in signature(comp.ir, comp.name).args]


def blur_ref(img: np.ndarray) -> np.ndarray:
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3.0
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3.0


def fused_blur(fold: int | None, *, copy_in: bool = False) -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    if copy_in:
        comp.host_to_device("img").before(s0, spf.ROOT)
    s1.shift("i", 2)
    s1.after(s0, "j")
    if fold is not None:
        s0.storage_fold("i", fold)
    return comp


@pytest.mark.parametrize(("n", "m"), SIZES)
def test_blur_folded_to_three_rows(n: int, m: int) -> None:
    comp = fused_blur(3)
    assert comp.storage_of("bx") == ("bx_buf", ("t0 % 3", "t1"))
    assert arg_names(comp) == ["M", "N", "out", "img"]
    src = comp.codegen()
    assert "#define bx(t0, t1) bx_buf[(t0) % 3 * (M - 2) + (t1)]" in src
    img = np.random.default_rng(n * m).random((n, m))
    for got in both(comp, out=np.zeros((n - 2, m - 2)), img=img, N=n, M=m):
        np.testing.assert_allclose(got["out"], blur_ref(img))


def test_blur_folded_with_a_parallel_column_loop() -> None:
    comp = fused_blur(3)
    comp.stmts[0].parallelize("j")
    comp.stmts[1].parallelize("j")
    img = np.random.default_rng(1).random((9, 12))
    for got in both(comp, out=np.zeros((7, 10)), img=img, N=9, M=12):
        np.testing.assert_allclose(got["out"], blur_ref(img))


def two_stage(name: str = "two") -> Computation:
    """``t = 2a`` then ``b = t + t(i-1)`` (reads the previous row of t), fused over i."""
    comp = Computation(name)
    comp.add_data_space("b", "double", shape=("N", "M"))
    comp.add_data_space("t", "double", shape=("N", "M"))
    comp.add_data_space("a", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    comp.add_stmt(Stmt("$t$(i,j) = 2 * $a$(i,j);", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(
        Stmt(
            "$b$(i,j) = $t$(i,j) + $t$(i-1,j);",
            "{[i,j]: 1 <= i < N && 0 <= j < M}",
            "{[i,j]->[0,i,1,j,0]}",
        )
    )
    return comp


@pytest.mark.parametrize(("n", "m"), SIZES)
def test_store_in_modulo_double_buffer(n: int, m: int) -> None:
    comp = two_stage()
    buf = comp.add_buffer("rows", (2, "M"), "double", scope="local")
    comp.stmts[0].store_in(buf, ["i % 2", "j"])
    a = np.random.default_rng(n + m).random((n, m))
    want = np.zeros((n, m))
    want[1:] = 2 * a[1:] + 2 * a[:-1]
    sig = arg_names(comp)
    assert "t" not in sig
    assert "rows" not in sig
    for got in both(comp, b=np.zeros((n, m)), a=a, N=n, M=m):
        np.testing.assert_allclose(got["b"], want)


def test_store_in_transpose_into_a_global_buffer() -> None:
    comp = Computation("tr")
    comp.add_data_space("c", "double", shape=("N", "M"))
    comp.add_data_space("a", "double", shape=("N", "M"))
    comp.add_stmt(Stmt("$c$(i,j) = $a$(i,j) + i;", "{[i,j]: 0 <= i < N && 0 <= j < M}"))
    ct = comp.add_buffer("ct", ("M", "N"), "double")
    comp.stmts[0].store_in(ct, ["j", "i"])
    assert arg_names(comp) == ["M", "N", "a", "ct"]
    a = np.random.default_rng(2).random((5, 7))
    want = (a + np.arange(5)[:, None]).T
    for got in both(comp, a=a, ct=np.zeros((7, 5)), N=5, M=7):
        np.testing.assert_allclose(got["ct"], want)


def test_store_in_a_relation_and_projection_to_one_row() -> None:
    comp = Computation("proj")
    comp.add_data_space("b", "double", shape=("N", "M"))
    comp.add_data_space("t", "double", shape=("N", "M"))
    comp.add_data_space("a", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    s0 = comp.add_stmt(Stmt("$t$(i,j) = $a$(i,j) * $a$(i,j);", dom, "{[i,j]->[0,i,0,j,0]}"))
    comp.add_stmt(Stmt("$b$(i,j) = $t$(i,M-1-j) + 1;", dom, "{[i,j]->[0,i,1,j,0]}"))
    row = comp.add_buffer("row", ("M",), "double", scope="stack")
    s0.store_in(row, "{[i,j] -> [j]}")
    a = np.random.default_rng(3).random((6, 5))
    for got in both(comp, b=np.zeros((6, 5)), a=a, N=6, M=5):
        np.testing.assert_allclose(got["b"], (a * a)[:, ::-1] + 1)


@pytest.mark.parametrize("parallel", [False, True])
def test_scalar_temporary(parallel: bool) -> None:
    comp = Computation("scal")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    s0 = comp.add_stmt(Stmt("$t$(i) = $x$(i) * $x$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(Stmt("$y$(i) = $t$(i) + 3 * $t$(i);", "{[i]: 0 <= i < N}", "{[i]->[0,i,1]}"))
    tmp = comp.add_buffer("tmp", (), "double", scope="stack")
    s0.store_in(tmp, [])
    if parallel:
        tmp.allocate_at(s0, "i")
        s0.parallelize("i")
    x = np.random.default_rng(4).random(11)
    for got in both(comp, y=np.zeros(11), x=x, N=11):
        np.testing.assert_allclose(got["y"], 4 * x * x)


def test_allocate_at_with_an_extent_of_the_outer_loop() -> None:
    """Row i of a lower triangle in a buffer of i + 1 elements allocated per i."""
    comp = Computation("tri")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N", "N"))
    comp.add_data_space("a", "double", shape=("N", "N"))
    s0 = comp.add_stmt(
        Stmt(
            "$t$(i,j) = 2 * $a$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j <= i}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    comp.add_stmt(
        Stmt("$y$(i) += $t$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j <= i}", "{[i,j]->[0,i,1,j,0]}")
    )
    row = comp.add_buffer("row", ("i + 1",), "double", scope="stack")
    s0.store_in(row, ["j"])
    row.allocate_at(s0, "i")
    src = comp.codegen()
    # sized by a loop variable (at most N): on the heap, never a variable-length array
    assert "char *row_raw = (char *)calloc((size_t)((i + 1)) * sizeof(double) + 64, 1);" in src
    assert "N" in comp.params
    assert "i" not in comp.params
    a = np.random.default_rng(5).random((6, 6))
    for got in both(comp, y=np.zeros(6), a=a, N=6):
        np.testing.assert_allclose(got["y"], 2 * np.tril(a).sum(axis=1))


@pytest.mark.parametrize("scope", ["stack", "local", "shared"])
def test_owned_buffers_are_not_arguments(scope: str) -> None:
    comp = two_stage(f"own_{scope}")
    buf = comp.add_buffer("whole", ("N", "M"), "double", scope=scope)
    comp.stmts[0].store_in(buf, ["i", "j"])
    names = arg_names(comp)
    assert names == ["M", "N", "b", "a"]
    with pytest.raises(spf.ArgumentError):
        comp.interpret(b=np.zeros((3, 3)), t=np.zeros((3, 3)), a=np.zeros((3, 3)), N=3, M=3)


def test_operations_run_as_no_ops_in_c() -> None:
    comp = fused_blur(3, copy_in=True)
    comp.barrier_at(comp.stmts[1], "i")
    comp.device_to_host("out")
    img = np.random.default_rng(6).random((8, 6))
    for got in both(comp, out=np.zeros((6, 4)), img=img, N=8, M=6):
        np.testing.assert_allclose(got["out"], blur_ref(img))
    src = comp.codegen()
    assert "/* s2: host to device img (nothing to do in C) */" in src
    assert "barrier" in src
    assert "device to host out" in src


def _rebuilt(comp: Computation) -> Callable[..., None]:
    return Computation.from_json(comp.to_json()).compile()


def test_json_round_trip_keeps_the_layout() -> None:
    comp = fused_blur(3)
    img = np.random.default_rng(7).random((7, 8))
    out = np.zeros((5, 6))
    _rebuilt(comp)(out=out, img=img, N=7, M=8)
    np.testing.assert_allclose(out, blur_ref(img))


@pytest.mark.parametrize("shift", [2, 3])
@pytest.mark.parametrize("fold", [1, 2, 3, 4, 5])
def test_fold_legality_matches_the_results(shift: int, fold: int) -> None:
    """Fused with ``shift``, blur needs ``shift + 1`` rows of bx: a smaller fold is refused,
    and generating it anyway (check=False) really computes something else."""
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.shift("i", shift)
    s1.after(s0, "j")
    s0.storage_fold("i", fold)
    img = np.random.default_rng(fold * 10 + shift).random((9, 7))
    out = np.zeros((7, 5))
    legal = fold >= shift + 1
    if legal:
        comp.check_legality()
    else:
        with pytest.raises(spf.IllegalScheduleError, match="illegal data layout"):
            comp.check_legality()
    comp.compile(check=False)(out=out, img=img, N=9, M=7)
    assert np.allclose(out, blur_ref(img)) == legal


def test_projection_below_the_reuse_distance_is_refused() -> None:
    comp = two_stage("proj1")
    row = comp.add_buffer("row", (1, "M"), "double", scope="local")
    comp.stmts[0].store_in(row, ["0", "j"])  # t(i-1) is gone when t(i) is written
    with pytest.raises(spf.IllegalScheduleError, match="still holds the value of 't'"):
        comp.codegen()
    a = np.random.default_rng(8).random((5, 4))
    b = np.zeros((5, 4))
    comp.compile(check=False)(b=b, a=a, N=5, M=4)
    assert not np.allclose(b[1:], 2 * a[1:] + 2 * a[:-1])


def _doubled_then_copied() -> Computation:
    """``C = 2 * C`` (reads C's input), then ``out = C + 1``."""
    comp = Computation("entry")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("out", "double", shape=("N", "M"))
    dom = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    comp.add_stmt(Stmt("$C$(i,j) = $C$(i,j) * 2.0;", dom, "{[i,j] -> [0,i,0,j,0]}"))
    comp.add_stmt(Stmt("$out$(i,j) = $C$(i,j) + 1.0;", dom, "{[i,j] -> [0,i,1,j,0]}"))
    return comp


@pytest.mark.parametrize("how", ["store_in", "storage_fold"])
def test_placing_an_argument_whose_input_is_read_in_function_memory_is_refused(
    how: str,
) -> None:
    # C's values on entry are read; in a buffer of the function they were zeros (out = 1)
    comp = _doubled_then_copied()
    if how == "store_in":
        comp.stmt(0).store_in(comp.add_buffer("cb", ("N", "M"), "double", "local"), ["i", "j"])
    else:
        comp.stmt(1).after(comp.stmt(0), "j")
        comp.stmt(0).storage_fold("j", 1)
    with pytest.raises(spf.IllegalScheduleError, match="values on entry to the kernel"):
        comp.codegen("c")
    # a global buffer is filled by the caller: the input is there
    moved = _doubled_then_copied()
    moved.stmt(0).store_in(moved.add_buffer("ct", ("M", "N"), "double", "global"), ["j", "i"])
    rng = np.random.default_rng(0)
    C = rng.random((5, 3))
    out, ct = np.zeros((5, 3)), np.ascontiguousarray(C.T)
    moved.compile()(out=out, ct=ct)
    assert np.allclose(out, 2 * C + 1)


def _accumulated_local() -> Computation:
    """``t(i) += x(i)`` into a local (zero on entry), then ``y(i) = t(i)``: ``y = x``."""
    comp = Computation("zero_entry")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_local("t", "double", ("N",))
    comp.add_stmt(Stmt("$t$(i) += $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0]}"))
    comp.add_stmt(Stmt("$y$(i) = $t$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
    return comp


@pytest.mark.parametrize("scope", ["local", "stack"])
def test_a_local_read_before_it_is_written_keeps_its_zero(scope: str) -> None:
    # one cell for every t(i): the cell held t(i - 1) where t(i) should read zero
    comp = _accumulated_local()
    cell = comp.add_buffer("cell", (1,), "double", scope)
    comp.stmt(0).store_in(cell, ["0"])
    with pytest.raises(spf.IllegalScheduleError, match="no statement has written yet"):
        comp.codegen("c")
    # a fresh cell per iteration of i starts at zero (a stack one was not zeroed)
    fresh = _accumulated_local()
    cell = fresh.add_buffer("cell", (1,), "double", scope)
    fresh.stmt(0).store_in(cell, ["0"])
    cell.allocate_at(fresh.stmt(0), "i")
    kernel = fresh.compile()
    x = np.random.default_rng(0).random(50)
    y = np.zeros(50)
    kernel(x=x, y=y, N=50)
    assert np.array_equal(y, x)


def _tied_fold(reads_before: bool, reader_first: bool) -> Computation:
    """``t`` written and read by two statements with one schedule ({[i] -> [0, i, 0]}:
    their instances at one time run in statement order) and folded to one cell."""
    comp = Computation("tied_fold")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", "double", shape=("N",))
    write = Stmt("$t$(i) = $x$(i) * 2;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}", name="w")
    shift = "i - 1" if reads_before else "i"
    read = Stmt(f"$y$(i) = $t$({shift}) + 1;", "{[i]: 1 <= i < N}", "{[i] -> [0, i, 0]}", name="r")
    for s in (read, write) if reader_first else (write, read):
        comp.add_stmt(s)
    comp.stmt("w").store_in(comp.add_buffer("tb", (1,), "double", scope="stack"), ["0"])
    return comp


def test_a_fold_between_statements_at_equal_times_follows_their_statement_order() -> None:
    """The storage check ordered instances only by schedule positions: a writer and a reader
    at one time (statement order: the writer first) were never ordered, so folding ``t`` to
    one cell was accepted where the reader reads ``t(i - 1)``, which ``w(i)`` has already
    overwritten (y = 2x(i) + 1 instead of 2x(i-1) + 1). Instances at one time run in
    statement order: refused; reading ``t(i)`` right after ``w(i)`` stays legal."""
    with pytest.raises(spf.IllegalScheduleError, match="w writes 't' into buffer 'tb'"):
        _tied_fold(reads_before=True, reader_first=False).compile()
    x = np.arange(1.0, 8.0)
    y = np.zeros(7)
    _tied_fold(reads_before=False, reader_first=False).compile()(x=x, y=y)
    np.testing.assert_array_equal(y[1:], 2 * x[1:] + 1)
    with pytest.raises(spf.IllegalScheduleError, match="r reads elements of 't' that no"):
        _tied_fold(reads_before=False, reader_first=True).compile()
