"""check=True at linear cost (API.md §16): what a checked call verifies how
(``kernel.check_cost``), that it computes exactly what an unchecked call does, and that a
broken fact is still refused after checks were skipped or remembered.

Timings are measured by ``spf bench --only scale`` (spf.bench.scale_checks), never here.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.runtime.known as known
from spf.formats import BCSR, BDIA, CSC, CSR, Format
from spf.runtime.fact_check import SLOW_FLOOR_S, SLOW_SHARE, TIMED_CALLS, FactChecker
from spf.sets.facts import Fact

if TYPE_CHECKING:
    from pathlib import Path

SORTED = "forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"
BAND = (
    "forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => "
    "col(k2) - col(k1) <= 3 && col(k1) - col(k2) <= 3"
)
"""The columns of each row lie within 3 of each other: over pairs, but not transitive, so
it stays superlinear and is remembered."""


def _matrices(suitesparse_dir: Path) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    random = sp.random_array((37, 29), density=0.15, format="lil", random_state=rng)
    random[[3, 11, 30]] = 0.0  # empty rows
    dense_row = sp.random_array((60, 60), density=0.03, format="lil", random_state=rng)
    dense_row[17, :] = rng.random(60) + 0.5  # one full row among short ones
    return {
        "random": _canonical(random),
        "dense row": _canonical(dense_row),
        "one row": sp.csr_array(rng.random((1, 9))),
        "empty": sp.csr_array((5, 4)),
        "karate": spf.sparse.read_matrix_market(suitesparse_dir / "karate.mtx"),
        "west0067": spf.sparse.read_matrix_market(suitesparse_dir / "west0067.mtx"),
    }


def _canonical(m: Any) -> Any:
    out = sp.csr_array(m)
    out.eliminate_zeros()
    out.sort_indices()
    return out


@pytest.fixture(scope="module")
def matrices(suitesparse_dir: Path) -> dict[str, Any]:
    return _matrices(suitesparse_dir)


def _square(m: Any) -> Any:
    n = min(m.shape)
    s = sp.csr_array(m[:n, :n]) + sp.diags_array(abs(sp.csr_array(m[:n, :n])).sum(axis=1) + 1)
    s = sp.csr_array(s)
    s.sort_indices()
    return s


def _bitwise(kernel: Any, args: dict[str, Any]) -> None:
    """A checked and an unchecked call leave bitwise equal outputs."""
    outputs = {k: v for k, v in args.items() if isinstance(v, np.ndarray) and v.flags.writeable}
    start = {k: v.copy() for k, v in outputs.items()}
    kernel(check=False, **args)
    unchecked = {k: v.copy() for k, v in outputs.items()}
    for k, v in outputs.items():
        np.copyto(v, start[k])
    kernel(check=True, **args)
    for k, v in outputs.items():
        np.testing.assert_array_equal(v, unchecked[k], err_msg=k)


FORMATS = [CSR, CSC, BCSR(2, 2), BDIA(4)]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_checked_format_spmv_computes_what_unchecked_does(
    fmt: Format, dtype: str, matrices: dict[str, Any]
) -> None:
    kernel = spf.kernels.spmv(fmt, index_dtype=dtype).compile()
    for name, m in matrices.items():
        args = spf.sparse.format_args(m, fmt, dtype)
        rows, cols = (args["NB"] * 2, args["MB"] * 2) if fmt.name == "BCSR2x2" else m.shape
        x = np.random.default_rng(0).random(cols)
        _bitwise(kernel, {**args, "y": np.zeros(rows), "x": x})
        assert kernel.check_cost[0].fact == fmt.assume[0], name


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_checked_solvers_compute_what_unchecked_do(dtype: str, matrices: dict[str, Any]) -> None:
    sptrsv = spf.kernels.sptrsv_csr(index_dtype=dtype).compile()
    gs = spf.kernels.gauss_seidel_csr(index_dtype=dtype).compile()
    ilu0 = spf.kernels.ilu0_csr(index_dtype=dtype).compile()
    for m in matrices.values():
        s = _square(m)
        low = sp.csr_array(sp.tril(s))
        low.sort_indices()
        n = s.shape[0]
        a = spf.sparse.sptrsv_args(low, dtype)
        _bitwise(sptrsv, {**a, "u": np.zeros(n), "f": np.ones(n)})
        a = spf.sparse.gauss_seidel_args(s, dtype)
        _bitwise(gs, {**a, "x": np.zeros(n), "b": np.ones(n)})
        _bitwise(ilu0, spf.sparse.ilu0_args(s, dtype))


def test_check_cost_says_how_each_fact_is_checked() -> None:
    cost = spf.kernels.spmv(CSR).compile().check_cost
    (only,) = cost
    # remembered by the contents of col and rowptr; new contents are checked where the
    # loop loads col(k)
    assert (only.fact, only.how, only.first) == (SORTED, "remembered", "in loop")
    assert only.checked.startswith("forall i, k1:")  # on neighbouring pairs
    assert "col(k1 + 1)" in only.checked
    assert only.reads == ("col", "rowptr")
    assert cost.remembered == (SORTED,)
    assert str(cost).startswith(f"remembered (in loop on new contents): {SORTED!r} (checked as ")
    gs = spf.kernels.gauss_seidel_csr().compile().check_cost
    # the sweep's statements visit every point; the lower and upper parts' facts follow
    # from sorted rows and the diagonal's position, so they are not checked
    assert [c.how for c in gs] == ["remembered", "remembered", "implied", "implied", "remembered"]
    assert [c.first for c in gs] == ["in loop", "in loop", "", "", "in loop"]
    assert gs.implied == (gs[2].fact, gs[3].fact)
    assert gs[2].implied_by == (gs[0].fact, gs[1].fact, gs[4].fact)
    assert gs.kept == (gs[0].fact, gs[1].fact, gs[4].fact)
    ilu0 = spf.kernels.ilu0_csr().compile().check_cost
    assert {(c.how, c.first) for c in ilu0} == {("remembered", "before loops"), ("implied", "")}
    assert ilu0.implied == gs.implied
    comp = spf.kernels.spmv_csr()
    comp.assume(BAND)
    comp.assume("N >= 1")
    banded = comp.compile().check_cost
    assert [c.how for c in banded] == ["remembered", "parameters"]
    assert banded[0].first == "own pass"  # superlinear: a compiled pass of its own
    assert banded.remembered == (BAND,)
    assert banded[0].reads == ("col", "rowptr")
    assert banded[0].checked == BAND  # not transitive: every pair
    assert spf.kernels.spmv_coo().compile().check_cost == ()
    ufs = spf.kernels.spmv_csr().ufs
    alone = FactChecker([Fact.parse(SORTED, ufs)], ufs).cost  # no kernel: nothing remembered
    assert [(c.how, c.first) for c in alone] == [("each call", "")]


@pytest.fixture(scope="module")
def banded() -> spf.Kernel:
    comp = spf.kernels.spmv_csr()
    comp.assume(BAND)
    return comp.compile()


def _band_args() -> dict[str, Any]:
    m = sp.csr_array(sp.diags_array([1.0, 2.0, 3.0], offsets=[-1, 0, 1], shape=(8, 8)))
    return {**spf.sparse.csr_args(m), "y": np.zeros(8), "x": np.ones(8)}


def test_remembered_fact_is_checked_again_for_other_contents(banded: spf.Kernel) -> None:
    good = _band_args()
    banded(**good)
    banded(**good)  # the same contents: remembered
    other = {**good, "col": good["col"].copy()}
    last = int(good["rowptr"][2]) - 1
    other["col"][last] = 7  # same shape, other content: row 1 holds columns 0, 1, 7
    first = int(good["rowptr"][1])
    with pytest.raises(spf.ArgumentError, match=rf"<= 3' .*i = 1, k1 = {first}, k2 = {last}"):
        banded(**other)
    banded(**good)  # the first arrays are still fine


def test_remembered_fact_sees_an_array_changed_in_place(banded: spf.Kernel) -> None:
    args = _band_args()
    banded(**args)
    col = args["col"]
    last = int(args["rowptr"][2]) - 1
    keep = int(col[last])
    col[last] = 7  # the same array object, changed between two calls
    first = int(args["rowptr"][1])
    with pytest.raises(
        spf.ArgumentError, match=rf"the assumption .*i = 1, k1 = {first}, k2 = {last}"
    ):
        banded(**args)
    col[last] = keep
    banded(**args)


def test_in_loop_and_each_call_facts_see_arrays_changed_in_place() -> None:
    csr = spf.kernels.spmv(CSR).compile()
    m = sp.csr_array(np.array([[1.0, 2.0, 0.0], [0.0, 3.0, 4.0]]))
    args = {**spf.sparse.csr_args(m), "y": np.zeros(2), "x": np.ones(3)}
    csr(**args)
    args["col"][[2, 3]] = args["col"][[3, 2]]  # row 1: columns 2, 1
    with pytest.raises(spf.ArgumentError, match=r"col\(k1\) < col\(k2\).* i = 1, k1 = 2, k2 = 3"):
        csr(**args)
    bdia = spf.kernels.spmv(BDIA(4)).compile()
    b = {**spf.sparse.bdia_args(spf.sparse.poisson2d(4), 4), "y": np.zeros(16), "x": np.ones(16)}
    assert bdia.check_cost[0].first == "before loops"
    bdia(**b)
    b["doff"][[0, 1]] = b["doff"][[1, 0]]
    with pytest.raises(spf.ArgumentError, match=r"doff\(s1\) < doff\(s2\).*fails first at b = 0"):
        bdia(**b)


def test_conversions_and_spgemm_take_check(matrices: dict[str, Any]) -> None:
    m = matrices["random"]
    args = spf.sparse.csr_args(m)
    conv = spf.formats.convert(CSR, CSC).compile()
    ref = conv(**args)
    for check in (True, False):
        out = conv(**args, check=check)
        for k, v in ref.items():
            np.testing.assert_array_equal(out[k], v)
    unsorted = {**args, "col": args["col"].copy()}
    first = int(np.argmax(np.diff(args["rowptr"]) >= 2))
    k = int(args["rowptr"][first])
    unsorted["col"][[k, k + 1]] = unsorted["col"][[k + 1, k]]
    with pytest.raises(spf.ArgumentError, match=r"col\(k1\) < col\(k2\)"):
        conv(**unsorted)
    conv(**unsorted, check=False)  # skipped: runs
    with pytest.raises(spf.ArgumentError, match="check must be True or False"):
        conv(**args, check="yes")
    sell = spf.formats.sell(4, 8)
    a = sell.inspect(args["rowptr"], args["col"], args["A"], m.shape, check=False)
    b = sell.inspect(args["rowptr"], args["col"], args["A"], m.shape)
    np.testing.assert_array_equal(a.val, b.val)
    gemm = spf.kernels.spgemm_csr(parallel=False).compile()
    ab = {"A_rowptr": args["rowptr"], "A_col": args["col"], "A": args["A"], "N": m.shape[0],
          "K": m.shape[1]}  # fmt: skip
    t = spf.sparse.csr_args(sp.csr_array(m.T))
    ab |= {"B_rowptr": t["rowptr"], "B_col": t["col"], "B": t["A"], "M": m.shape[0]}
    on, off = gemm(**ab), gemm(**ab, check=False)
    for k in on:
        np.testing.assert_array_equal(on[k], off[k])


def test_a_check_slower_than_its_kernel_warns_once(
    banded: spf.Kernel, caplog: pytest.LogCaptureFixture
) -> None:
    # a row of 3000 entries: the band fact's pairs cost ~4.5M tests, the kernel 3000 FMAs
    n = 3000
    m = sp.csr_array(np.ones((1, n)))
    args = {**spf.sparse.csr_args(m), "y": np.zeros(1), "x": np.ones(n)}
    args["col"][:] = 0  # all in one column: the band holds
    with caplog.at_level(logging.WARNING, logger="spf"):
        for column in (1, 2, 3):  # new contents: each checked (and timed) again
            args["col"][1] = column
            banded(**args)
    slow = [r for r in caplog.records if "longer than the kernel itself" in r.getMessage()]
    assert len(slow) == 1
    assert BAND in slow[0].getMessage()


def _bdia_args(n: int = 6) -> dict[str, Any]:
    m = spf.sparse.poisson2d(n)
    return {**spf.sparse.bdia_args(m, 4), "y": np.zeros(n * n), "x": np.ones(n * n)}


def test_steady_each_call_facts_compute_what_unchecked_does_and_see_changes() -> None:
    # past the first (timed) calls the each-call facts run on the call's own tuples
    bdia = spf.kernels.spmv(BDIA(4)).compile()
    args = _bdia_args()
    for _ in range(TIMED_CALLS + 2):
        _bitwise(bdia, args)
    doff = args["doff"]
    doff[[0, 1]] = doff[[1, 0]]  # the same array object, changed in place
    with pytest.raises(spf.ArgumentError, match=r"doff\(s1\) < doff\(s2\).*fails first at b = 0"):
        bdia(**args)
    doff[[0, 1]] = doff[[1, 0]]
    bdia(**args)
    other = {**args, "doff": doff.copy()}  # same shapes, other contents
    last = int(args["dptr"][2]) - 1
    other["doff"][[last - 1, last]] = other["doff"][[last, last - 1]]
    with pytest.raises(spf.ArgumentError, match=r"doff\(s1\) < doff\(s2\).*fails first at b = 1"):
        bdia(**other)
    bdia(**args)  # the first arrays are still fine


def test_an_array_the_each_call_facts_only_compare_is_still_range_checked_where_read() -> None:
    # the each-call check reads doff without a range test (it only compares neighbours):
    # a value out of range that keeps the order is refused by the kernel's own loops
    bdia = spf.kernels.spmv(BDIA(4)).compile()
    args = _bdia_args()
    for _ in range(TIMED_CALLS + 2):
        bdia(**args)
    last = int(args["dptr"][1]) - 1  # block 0's last diagonal: still above the one before
    args["doff"][last] = 1000
    with pytest.raises(spf.ArgumentError, match=rf"doff\[{last}\] = 1000 is outside the declared"):
        bdia(**args)
    args["doff"][last - 1] = 1000  # now also out of order: the fact fails first, before the loops
    with pytest.raises(spf.ArgumentError, match=rf"doff\(s1\) < doff\(s2\).* s1 = {last - 1}"):
        bdia(**args)


def test_steady_each_call_facts_name_the_first_broken_fact() -> None:
    ilu0 = spf.kernels.ilu0_csr().compile()
    m = sp.csr_array(spf.sparse.poisson2d(4))
    args = spf.sparse.ilu0_args(m)
    values = args["A"].copy()
    for _ in range(TIMED_CALLS + 2):
        np.copyto(args["A"], values)
        ilu0(**args)
    diag = args["diag"]
    diag[2] += 1  # row 2's diagonal pointer now points at its first entry right of it
    with pytest.raises(spf.ArgumentError, match=r"col\(diag\(i\)\) = i.* i = 2"):
        ilu0(**args)
    diag[2] -= 1
    np.copyto(args["A"], values)
    ilu0(**args)


def test_a_check_above_a_fifth_of_its_kernel_is_named_once() -> None:
    # the rule behind the warning, on given timings: more than SLOW_SHARE of the kernel
    # (alone above the 1.2x a checked call may cost) and more than the floor
    ufs = spf.kernels.spmv_csr().ufs
    fact = Fact.parse(SORTED, ufs)
    checker = FactChecker([fact], ufs)
    kernel_s = 100 * SLOW_FLOOR_S
    checker.timings = [(SORTED, kernel_s * SLOW_SHARE * 0.9)]
    assert checker.slow(kernel_s) == []
    spent = kernel_s * SLOW_SHARE * 1.5
    checker.timings = [(SORTED, spent)]
    assert checker.slow(kernel_s) == []  # one slow call: a preempted thread as likely
    checker.timings = [(SORTED, spent)]
    assert checker.slow(kernel_s) == [(SORTED, spent)]  # slow again: named
    checker.timings = [(SORTED, 2 * kernel_s)]
    assert checker.slow(kernel_s) == []  # named once
    below_floor = FactChecker([fact], ufs)
    below_floor.timings = [(SORTED, SLOW_FLOOR_S / 2)]
    assert below_floor.slow(SLOW_FLOOR_S / 10) == []  # the calls' own overhead


def test_each_call_facts_run_in_the_kernels_checked_function() -> None:
    # one compiled call: the checked function counts the each-call facts before its loops
    for kernel in (spf.kernels.spmv(BDIA(4)).compile(), spf.kernels.ilu0_csr().compile()):
        each = [c for c in kernel.check_cost if c.first == "before loops"]
        assert each, kernel.name
        assert all(c.before_loops for c in each), kernel.name
        assert not any(c.before_loops for c in kernel.check_cost if c.first != "before loops")
    ufs = spf.kernels.spmv_csr().ufs
    alone = FactChecker([Fact.parse(BAND, ufs)], ufs)
    assert not any(c.before_loops for c in alone.cost)  # a checker of its own: its own pass


_ILU0_BREAKS = {
    "diagonal pointer": lambda a: a["diag"].__setitem__(2, a["diag"][2] + 1),
    "diagonal column": lambda a: a["col"].__setitem__(int(a["diag"][5]), 6),
    "right part": lambda a: a["col"].__setitem__(int(a["diag"][4]) + 1, 1),
    "unsorted row": lambda a: a["col"].__setitem__(
        [int(a["rowptr"][7]) + 1, int(a["rowptr"][7]) + 2],
        a["col"][[int(a["rowptr"][7]) + 2, int(a["rowptr"][7]) + 1]],
    ),
}


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_each_call_facts_in_the_checked_function_word_errors_as_their_own_pass(
    dtype: str,
) -> None:
    comp = spf.kernels.ilu0_csr(index_dtype=dtype)
    ilu0 = comp.compile()
    in_loop = frozenset(n for n, c in enumerate(ilu0.check_cost) if c.first == "in loop")
    separate = FactChecker(comp.assumptions, comp.ufs, in_loop=in_loop)
    m = sp.csr_array(spf.sparse.poisson2d(4))
    good = spf.sparse.ilu0_args(m, dtype)
    for name, breaks in _ILU0_BREAKS.items():
        args = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in good.items()}
        for _ in range(TIMED_CALLS + 1):  # past the timed calls: the steady path
            np.copyto(args["A"], good["A"])
            ilu0(**args)
        np.copyto(args["A"], good["A"])
        breaks(args)
        with pytest.raises(spf.ArgumentError) as own:
            separate.check({"N": args["N"], "NNZ": args["NNZ"]}, args)
        with pytest.raises(spf.ArgumentError) as in_kernel:
            ilu0(**args)
        assert str(in_kernel.value) == str(own.value), name
        np.testing.assert_array_equal(args["A"], good["A"])  # refused before the loops


SORTED_ROWS = "forall i, k: rowptr(i) <= k < rowptr(i+1) - 1 => col(k) < col(k+1)"
"""The assumption of ``gauss_seidel_csr`` and ``ilu0_csr`` that the lower and upper parts'
facts follow from (with the diagonal's), which is checked in their place."""
LOWER_PART = "forall i, k: rowptr(i) <= k < diag(i) => col(k) < i"
UPPER_PART = "forall i, k: diag(i) < k < rowptr(i+1) => i < col(k)"


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("name", ["gauss_seidel_csr", "ilu0_csr"])
def test_implied_facts_broken_are_caught_by_the_facts_kept(name: str, dtype: str) -> None:
    kernel = getattr(spf.kernels, name)(index_dtype=dtype).compile()
    assert len(kernel.check_cost.implied) == 2
    offsets = [-4, -1, 0, 1, 4]  # row 5 holds columns 1, 4, 5, 6, 9
    m = sp.csr_array(sp.diags_array([-1.0, -1.0, 4.0, -1.0, -1.0], offsets=offsets, shape=(16, 16)))
    make = spf.sparse.gauss_seidel_args if name == "gauss_seidel_csr" else spf.sparse.ilu0_args
    good = make(m, dtype)
    extra = {"x": np.zeros(16), "b": np.ones(16)} if name == "gauss_seidel_csr" else {}
    values = good["A"].copy()

    def call(args: dict[str, Any]) -> None:
        np.copyto(args["A"], values)  # ILU(0) factors in place
        kernel(**args, **extra)

    call(good)
    call(good)  # passed: the lower part's check is not remembered, it is not made at all
    start = int(good["rowptr"][5])
    assert list(good["col"][start : start + 5]) == [1, 4, 5, 6, 9]
    bad = {**good, "col": good["col"].copy()}
    bad["col"][start + 1] = 7  # left of the diagonal, right of it in column: 1, 7, 5, 6, 9
    broken = rf"({re.escape(SORTED_ROWS)}|{re.escape(LOWER_PART)})' does not hold"
    with pytest.raises(spf.ArgumentError, match=rf"{broken}.* i = 5, k = {start + 1}"):
        call(bad)  # the error names the first fact broken, in the kernel's order
    call(good)  # the first arrays are still fine
    good["col"][start + 3] = 3  # in place, right of the diagonal in a lower column: 1, 4, 5, 3
    broken = rf"({re.escape(SORTED_ROWS)}|{re.escape(UPPER_PART)})' does not hold"
    at = rf"i = 5, k = ({start + 2}|{start + 3})\b"  # the pair (k, k + 1), or the entry
    with pytest.raises(spf.ArgumentError, match=rf"{broken}.* {at}"):
        call(good)


def test_a_parameter_fact_settles_per_tuple_of_values_and_is_checked_for_others(
    tmp_path: Path,
) -> None:
    # a kernel whose one Python check is a parameter fact (spgemm_csr's 'M >= 0'): once a
    # call passed, calls with the same values need no Python (a look is one tuple of
    # values) and run one C call; calls with other values are still checked
    assert spf.kernels.spgemm_csr(parallel=False).compile().single.kernel._binder.settles_per_values
    comp = spf.Computation("gather_min3")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < M}", dtype="int32")
    comp.assume("M >= 3")
    comp.add_stmt(spf.Stmt("$y$(i) += $x$(j);", "{[i,j]: 0 <= i < N && j = f(i)}"))
    kernel = comp.compile(cache_dir=tmp_path)
    assert kernel._binder.settles_per_values
    x, f = np.array([1.0, 2.0, 4.0, 8.0]), np.array([3, 0, 2, 2, 1], dtype=np.int32)
    y = np.zeros(5)
    calls = 4 + 2 * (known.WARMUP + 2 * known.TRIALS)  # the trials of its hashed way
    for _ in range(calls):  # the first calls settle the look; the next take one C call each
        kernel(y=y, x=x, f=f, N=5, M=4)
    np.testing.assert_array_equal(y, calls * x[f])
    looks = [s for slots in kernel._binder._checked.slots.values() for s in slots]
    assert looks
    assert all(s.bounds is not None for s in looks)
    with pytest.raises(spf.ArgumentError, match=r"M >= 3.* does not hold"):
        kernel(y=y, x=x[:2], f=np.array([1, 0, 0, 1, 1], dtype=np.int32), N=5, M=2)
    bad = f.copy()
    bad[2] = 4  # out of range on the settled look: found by the checked function
    with pytest.raises(spf.ArgumentError, match=r"f\[2\] = 4 is outside"):
        kernel(y=y, x=x, f=bad, N=5, M=4)
    with pytest.raises(spf.ArgumentError, match=r"M >= 3.* does not hold"):
        kernel(y=y, x=x[:2], f=np.array([1, 0, 0, 1, 1], dtype=np.int32), N=5, M=2)


@pytest.mark.parametrize("slow_first", [True, False])
def test_bounds_remembered_for_parameter_values_are_not_taken_for_a_permutation(
    slow_first: bool,
) -> None:
    """A call bound the slow way (a parameter given as a numpy integer) and one bound the
    fast way remember the checked function's bounds under the parameters' values in one
    order: a later call whose values are the same numbers in another order (M=8, N=4,
    NNZ=1000 after M=1000, N=4, NNZ=8) gets its own bounds, and its out-of-range column is
    refused (it used to run with M=1000's bounds and read x[500] of an 8-entry x)."""
    spmv = spf.kernels.spmv_csr().compile()
    rowptr = np.array([0, 2, 4, 6, 8], np.int32)
    col = np.array([0, 999, 1, 998, 2, 997, 3, 996], np.int32)
    y = np.zeros(4)
    first: dict[str, Any] = {
        "y": y,
        "A": np.ones(8),
        "x": np.ones(1000),
        "col": col,
        "rowptr": rowptr,
    }
    if slow_first:
        first["NNZ"] = rowptr[-1]  # a numpy integer: the slow binding
    spmv(**first)
    assert np.array_equal(y, [2.0, 2.0, 2.0, 2.0])
    big = np.arange(1000.0) + 1e6
    col2 = np.zeros(1000, np.int32)
    col2[:8] = [0, 500, 1, 2, 3, 4, 5, 6]
    second: dict[str, Any] = {"y": np.zeros(4), "A": np.ones(1000), "x": big[:8], "col": col2,
                              "rowptr": rowptr}  # fmt: skip
    if not slow_first:
        second["NNZ"] = np.int64(1000)
    with pytest.raises(spf.ArgumentError, match=r"col\[1\] = 500 is outside"):
        spmv(**second)
