"""Checked calls remembered by the contents of their index arrays (spf.runtime.known, API.md
§16): a checked call on contents verified before runs the unchecked function and computes
the same, small index arrays or large; contents changed in place (one entry), new arrays
and other parameters are checked again, so every broken fact, range or order is still
refused after other arrays were remembered as verified; contents that never repeat stop the
hashes; a kernel without facts checks every call; overlapping outputs are refused whatever
the contents.

Timings are measured by ``spf bench --only scale`` (spf.bench.scale_checks), never here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.runtime.known as known
from spf import ArgumentError, kernels
from spf.codegen import arg_checks
from spf.formats import CSR
from spf.runtime.known import REMEMBERED, KnownContents
from spf.testing import random_csr

if TYPE_CHECKING:
    from pathlib import Path

DTYPES = ["int32", "int64"]
BIG = 1 << 17
"""Entries of an index array in the tests of :class:`KnownContents` alone."""
REMEMBERS = {"spmv_csr", "spmv(CSR)", "sptrsv_csr", "gauss_seidel_csr"}
"""The kernels of :data:`KERNELS` that remember contents: all, as their checked functions
hash the index arrays themselves (``spmv_csr`` has no fact: the ranges and orders its loops
test are remembered; keyed in Python, it checks every call,
:func:`test_a_kernel_without_facts_checks_every_call`)."""


@pytest.fixture(autouse=True)
def no_trials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls on known contents run the unchecked loops from the second call on (no timed
    trials of the checked call: :func:`test_trials_keep_the_faster_way_per_size` tests them)."""
    monkeypatch.setattr(known, "TRIALS", 0)


class Counted:
    """The calls of a kernel that checked its index arrays and those that ran the unchecked
    loops: the unchecked function, or the checked one with its bounds' known-contents word
    set (spf.codegen.arg_checks.known_lines; one that hashed the arrays and found them new
    ran neither)."""

    def __init__(self, kernel: spf.Kernel, monkeypatch: pytest.MonkeyPatch) -> None:
        self.checked = self.unchecked = 0
        checked, unchecked = kernel._checked, kernel._fn
        word = kernel._hash_word - 1

        def run_checked(*args: Any) -> Any:
            bounds, fault = args[-2], args[-1]
            got = checked(*args)
            if fault[0] == arg_checks.FAULT_NEW_CONTENTS:
                return got
            if bounds[word] if len(bounds) > word + 1 else bounds[len(bounds) - 1]:
                self.unchecked += 1
            else:
                self.checked += 1
            return got

        def run_unchecked(*args: Any) -> Any:
            self.unchecked += 1
            return unchecked(*args)

        monkeypatch.setattr(kernel, "_checked", run_checked)
        monkeypatch.setattr(kernel, "_fn", run_unchecked)

    def take(self) -> tuple[int, int]:
        """``(checked, unchecked)`` calls since the last take."""
        out = (self.checked, self.unchecked)
        self.checked = self.unchecked = 0
        return out


def python_keys(kernel: spf.Kernel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``kernel``'s checked calls key their contents in Python (XXH3/XXH64, the trials,
    :data:`known.MISSES`), as those of a kernel whose checked function does not hash them
    itself do (one with an OpenMP region: ``Kernel._hashed``)."""
    monkeypatch.setattr(kernel, "_hashed", False)


def _copy(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def _dense_row(rows: int = 3000, width: int = 2000) -> Any:
    """Rows of 1 to 5 entries and one row of ``width`` (CSR, sorted), plus a dominant
    diagonal: a square matrix every kernel here takes."""
    rng = np.random.default_rng(7)
    lengths = rng.integers(1, 6, size=rows)
    r = np.concatenate([np.repeat(np.arange(rows), lengths), np.full(width, rows // 2)])
    c = np.concatenate(
        [
            rng.integers(0, rows, size=int(lengths.sum())),
            rng.choice(rows, size=width, replace=False),
        ]
    )
    m = sp.csr_array((rng.random(len(r)) + 0.5, (r, c)), shape=(rows, rows))
    m = sp.csr_array(m + sp.diags_array(abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    return m


@pytest.fixture(scope="module")
def square(suitesparse_dir: Path) -> dict[str, Any]:
    """Square matrices with a dominant diagonal: one of the SuiteSparse folder and one with
    a dense row."""
    m = spf.sparse.read_matrix_market(suitesparse_dir / "bcsstk13.mtx")
    m = sp.csr_array(m + sp.diags_array(abs(m).sum(axis=1) + 1.0))
    m.sum_duplicates()
    m.sort_indices()
    return {"bcsstk13": m, "dense row": _dense_row(20000, 5000)}


def _rng_vectors(n: int, m: int) -> dict[str, Any]:
    rng = np.random.default_rng(3)
    return {"y": np.zeros(n), "x": rng.random(m)}


KERNELS: dict[str, Callable[[str], tuple[Any, Callable[[Any, str], dict[str, Any]]]]] = {
    "spmv_csr": lambda d: (
        spf.kernels.spmv_csr(index_dtype=d),
        lambda m, d: {**spf.sparse.csr_args(m, d), **_rng_vectors(*m.shape)},
    ),
    "spmv(CSR)": lambda d: (
        spf.kernels.spmv(CSR, index_dtype=d),
        lambda m, d: {**spf.sparse.csr_args(m, d), **_rng_vectors(*m.shape)},
    ),
    "sptrsv_csr": lambda d: (
        spf.kernels.sptrsv_csr(index_dtype=d),
        lambda m, d: {
            **spf.sparse.sptrsv_args(_lower(m), d),
            "u": np.zeros(m.shape[0]),
            "f": np.ones(m.shape[0]),
        },
    ),
    "gauss_seidel_csr": lambda d: (
        spf.kernels.gauss_seidel_csr(index_dtype=d),
        lambda m, d: {
            **spf.sparse.gauss_seidel_args(m, d),
            "x": np.zeros(m.shape[0]),
            "b": np.ones(m.shape[0]),
        },
    ),
}


def _lower(m: Any) -> Any:
    low = sp.csr_array(sp.tril(m))
    low.sort_indices()
    return low


_COMPILED: dict[tuple[str, str], tuple[spf.Kernel, Callable[[Any, str], dict[str, Any]]]] = {}


@pytest.fixture(scope="module")
def compiled() -> Iterator[Callable[[str, str], Any]]:
    """Each kernel compiled once per module and index type."""

    def get(name: str, dtype: str) -> tuple[spf.Kernel, Callable[[Any, str], dict[str, Any]]]:
        if (name, dtype) not in _COMPILED:
            comp, args = KERNELS[name](dtype)
            _COMPILED[name, dtype] = (comp.compile(), args)
        return _COMPILED[name, dtype]

    yield get
    _COMPILED.clear()


def _outputs(args: dict[str, Any]) -> list[str]:
    """The arrays a kernel writes: ``y``, ``u``, Gauss-Seidel's ``x``."""
    return [k for k in ("y", "u") if k in args] + (["x"] if "b" in args else [])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_known_contents_run_unchecked_and_compute_the_same(
    name: str, dtype: str, square: dict[str, Any], compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel, make = compiled(name, dtype)
    counted = Counted(kernel, monkeypatch)
    for mname, m in square.items():
        args = make(m, dtype)
        remembers = name in REMEMBERS
        outs = _outputs(args)
        start = {k: args[k].copy() for k in outs}
        kernel(**args, check=False)
        want = {k: args[k].copy() for k in outs}
        results = []
        counted.take()
        for _ in range(3):
            for k in outs:
                np.copyto(args[k], start[k])
            kernel(**args)
            results.append({k: args[k].copy() for k in outs})
        # the first call checks the contents, the later ones run the unchecked loops (a
        # kernel without facts over index arrays checks every call: cheaper than the key)
        assert counted.take() == ((1, 2) if remembers else (3, 0)), (name, mname)
        for got in results:
            for k in outs:
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name} {mname} {k}")
        fresh = _copy(args)  # new arrays of the same contents: known too
        kernel(**fresh)
        assert counted.take() == ((0, 1) if remembers else (1, 0)), (name, mname)


_BREAKS: dict[str, list[tuple[str, Callable[[dict[str, Any]], None], str]]] = {
    "spmv_csr": [
        (
            "column past the end",
            lambda a: a["col"].__setitem__(a["NNZ"] // 2, a["M"]),
            r"col\[\d+\] = \d+ is outside",
        ),
        (
            "row pointers out of order",
            lambda a: a["rowptr"].__setitem__(5, a["rowptr"][7]),
            r"rowptr",
        ),
    ],
    "spmv(CSR)": [
        ("unsorted row", lambda a: _swap_in_row(a, 9), r"col\(k1\) < col\(k2\)"),
        ("negative column", lambda a: a["col"].__setitem__(3, -1), r"col"),
    ],
    "sptrsv_csr": [
        (
            "entry right of the diagonal",
            lambda a: a["col"].__setitem__(int(a["rowptr"][11]), 12),
            r"col\(k\) <= i",
        ),
    ],
    "gauss_seidel_csr": [
        ("diagonal pointer", lambda a: a["diag"].__setitem__(20, a["rowptr"][21]), r"diag"),
        ("unsorted row", lambda a: _swap_in_row(a, 30), r"assumption '.*col.*' does not hold"),
    ],
}


def _swap_in_row(a: dict[str, Any], row: int) -> None:
    """Swap the first two columns of the first row from ``row`` on with two or more."""
    rp, col = a["rowptr"], a["col"]
    while rp[row + 1] - rp[row] < 2:
        row += 1
    k = int(rp[row])
    col[[k, k + 1]] = col[[k + 1, k]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_one_entry_changed_after_known_contents_is_refused(
    name: str, dtype: str, square: dict[str, Any], compiled: Any
) -> None:
    kernel, make = compiled(name, dtype)
    good = make(square["dense row"], dtype)
    for _, breaks, message in _BREAKS[name]:
        args = _copy(good)
        kernel(**args)
        kernel(**args)  # remembered
        keep = {u: args[u].copy() for u in ("rowptr", "col", "diag") if u in args}
        breaks(args)  # in place, one entry (or two swapped)
        with pytest.raises(spf.ArgumentError, match=message):
            kernel(**args)
        with pytest.raises(spf.ArgumentError, match=message):
            kernel(**args)  # a refused content is not remembered
        other = _copy(args)  # the broken contents in new arrays
        with pytest.raises(spf.ArgumentError, match=message):
            kernel(**other)
        for u, v in keep.items():
            np.copyto(args[u], v)
        kernel(**args)  # the verified contents again: still known, still fine


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_parameters_are_part_of_the_remembered_contents(dtype: str, compiled: Any) -> None:
    kernel, _ = compiled("spmv(CSR)", dtype)
    n = 40000
    col = np.zeros(n, dtype=dtype)  # one entry per row, all in column 0
    rowptr = np.arange(n + 1, dtype=dtype)
    args = {"rowptr": rowptr, "col": col, "A": np.ones(n), "y": np.zeros(n), "x": np.ones(1)}
    kernel(**args, N=n, M=1, NNZ=n)
    kernel(**args, N=n, M=1, NNZ=n)
    col[-1] = 1  # column 1: in range only for M = 2
    with pytest.raises(spf.ArgumentError, match=rf"col\[{n - 1}\] = 1"):
        kernel(**args, N=n, M=1, NNZ=n)
    kernel(**{**args, "x": np.ones(2)}, N=n, M=2, NNZ=n)
    kernel(**{**args, "x": np.ones(2)}, N=n, M=2, NNZ=n)  # known for M = 2 ...
    with pytest.raises(spf.ArgumentError, match=rf"col\[{n - 1}\] = 1"):
        kernel(**args, N=n, M=1, NNZ=n)  # ... not for M = 1


def test_overlapping_arrays_are_refused_on_known_contents(compiled: Any) -> None:
    kernel, make = compiled("spmv(CSR)", "int64")
    n = 20000
    m = sp.csr_array(sp.eye_array(n, format="csr"))
    args = make(m, "int64")
    kernel(**args)
    kernel(**args)  # known
    with pytest.raises(spf.ArgumentError, match=r"share memory"):
        kernel(**{**args, "y": args["x"]})


def test_small_index_arrays_are_remembered_and_a_broken_one_still_refused(
    compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel, make = compiled("gauss_seidel_csr", "int32")
    args = make(_square_of(spf.sparse.poisson2d(8)), "int32")  # a few hundred bytes
    counted = Counted(kernel, monkeypatch)
    for _ in range(3):
        kernel(**args)
    assert counted.take() == (1, 2)
    broken = _copy(args)  # other arrays, one row unsorted: not the remembered contents
    _swap_in_row(broken, 10)
    with pytest.raises(spf.ArgumentError, match=r"assumption '.*col.*' does not hold"):
        kernel(**broken)
    kernel(**args)
    assert counted.take() == (1, 1)


def _square_of(m: Any) -> Any:
    """``m`` plus a dominant diagonal (CSR, sorted)."""
    s = sp.csr_array(m + sp.diags_array(abs(m).sum(axis=1) + 1.0))
    s.sum_duplicates()
    s.sort_indices()
    return s


def test_the_oldest_contents_are_forgotten(compiled: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known, "MISSES", 10 * REMEMBERED)  # new contents every call, on purpose
    kernel, make = compiled("spmv(CSR)", "int32")
    base = make(sp.csr_array(sp.eye_array(20000, format="csr")), "int32")
    variants = []
    for v in range(REMEMBERED + 1):
        args = _copy(base)
        args["col"][0] = v  # row 0's column: a different content each
        variants.append(args)
        kernel(**args)
    counted = Counted(kernel, monkeypatch)
    kernel(**variants[-1])
    kernel(**variants[0])  # the oldest: forgotten, checked again
    assert counted.take() == (1, 1)


@pytest.mark.parametrize("keys", ["python", "c"])
def test_a_kernel_without_facts_checks_every_call(
    keys: str, compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keyed in Python, a kernel without facts checks every call; where its checked function
    hashes the index arrays, the ranges and orders its loops test are remembered by contents
    too (where its trials keep hashing: always here, no trials). Either way a value changed
    in place is refused."""
    kernel, make = compiled("spmv_csr", "int64")
    assert kernel._hashed
    if keys == "python":
        python_keys(kernel, monkeypatch)
    assert kernel.check_cost == ()  # only the values' ranges and orders: cheaper than a key
    args = make(_dense_row(9000 if keys == "python" else 9100, 700), "int64")
    counted = Counted(kernel, monkeypatch)
    kernel(**args)
    kernel(**args)
    assert counted.take() == ((2, 0) if keys == "python" else (1, 1))
    args["col"][17] = -3
    with pytest.raises(spf.ArgumentError, match=r"col\[17\] = -3 is outside"):
        kernel(**args)


def test_contents_that_never_repeat_stop_the_hashes(
    compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(known, "MISSES", 3)
    kernel, make = compiled("sptrsv_csr", "int64")
    python_keys(kernel, monkeypatch)
    base = make(_dense_row(4000, 500), "int64")  # a size no other test passed
    rp = base["rowptr"]
    row = next(r for r in range(10, 4000) if rp[r + 1] - rp[r] >= 2)
    hashed: list[int] = []
    digest = known._DIGEST
    monkeypatch.setattr(known, "_DIGEST", lambda a: hashed.append(1) or digest(a))
    variants = []
    for v in range(3):  # new contents each call: the third stops the hashes of this size
        args = _copy(base)
        args["col"][rp[row]] = v  # the row's first entry, left of its diagonal
        variants.append(args)
        kernel(**args)
    counted = Counted(kernel, monkeypatch)
    hashed.clear()
    kernel(**variants[0])
    kernel(**variants[0])
    assert counted.take() == (2, 0)  # every call checks ...
    assert hashed == []  # ... and nothing is hashed for this size any more
    variants[0]["col"][int(variants[0]["rowptr"][11])] = 12  # right of the diagonal
    with pytest.raises(spf.ArgumentError, match=r"col\(k\) <= i"):
        kernel(**variants[0])


def test_calls_on_known_contents_keep_the_hashes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known, "MISSES", 3)
    contents = KnownContents([0])
    arrays = [np.arange(BIG, dtype=np.int64) + v for v in range(6)]
    first = contents.key((1,), [arrays[0]])
    assert first is not None
    contents.add(first)
    for a in arrays[1:]:  # new contents between calls on known ones: never three in a row
        key = contents.key((1,), [a])
        assert key is not None
        contents.add(key)
        assert first in contents
    assert contents.key((1,), [arrays[0]]) == first


def test_check_cost_names_the_remembered_facts(compiled: Any) -> None:
    kernel, _ = compiled("gauss_seidel_csr", "int32")
    cost = kernel.check_cost
    assert cost.remembered == cost.kept  # every fact checked is remembered
    assert {c.first for c in cost if c.how == "remembered"} == {"in loop"}
    assert "remembered (in loop on new contents): 'forall i: col(diag(i)) = i'" in str(cost)


def test_calls_binding_parameters_from_shapes_remember_too(
    compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel, make = compiled("spmv(CSR)", "int64")
    args = make(_dense_row(12000, 3000), "int64")  # contents no other test passed
    short = {k: v for k, v in args.items() if k not in ("N", "M", "NNZ")}  # from the shapes
    counted = Counted(kernel, monkeypatch)
    kernel(**short)
    kernel(**short)
    assert counted.take() == (1, 1)
    _swap_in_row(short, 40)
    with pytest.raises(spf.ArgumentError, match=r"col\(k1\) < col\(k2\)"):
        kernel(**short)


def test_trials_keep_the_faster_way_per_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known, "TRIALS", 2)
    contents = KnownContents([0, 1])
    big = [np.arange(BIG, dtype=np.int64), np.zeros(10, np.int64)]
    key = contents.key((1,), big)
    assert key is not None
    contents.add(key)
    ways = []
    warm = (0.1, 0.1, 0.1, 0.1)  # the first pair each way: not counted, however fast
    for seconds in (*warm, 50.0, 1.0, 60.0, 2.0, 1.5, 2.5, 9.0, 3.0):  # hashed faster
        way = contents.route(key)
        ways.append(way)
        contents.timed(key, way, seconds if way else seconds + 10)
    # pairs of calls the same way, A B B A: each way as often early as late while undecided
    # (only the second call of a pair counts: the first runs after the other way's loops)
    assert ways == [True, True, False, False, False, False, True, True, True, True, False, False]
    assert contents.decided(key)
    assert contents.route(key)
    assert contents.key((1,), big) == key
    other = [np.arange(4 * BIG, dtype=np.int64), np.zeros(10, np.int64)]  # another size
    slow = contents.key((1,), other)
    assert slow is not None
    assert slow[0] != key[0]
    contents.add(slow)
    for _ in range(12):
        way = contents.route(slow)
        contents.timed(slow, way, 5.0 if way else 1.0)  # checking is faster: every call checks
    assert contents.key((1,), other) is None  # nothing hashed for that size any more
    assert contents.key((1,), big) == key  # the first size keeps its way


@pytest.mark.parametrize("keys", ["python", "c"])
def test_after_trials_every_call_takes_the_way_kept(
    keys: str, compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trials of the Python keys, and those of the checked function's own hash (the
    hashed way's first call on new contents checks them, untimed)."""
    monkeypatch.setattr(known, "TRIALS", 1)
    kernel, make = compiled("gauss_seidel_csr", "int32")
    if keys == "python":
        python_keys(kernel, monkeypatch)
    args = make(_dense_row(30000 if keys == "python" else 31000, 2000), "int32")  # new sizes
    counted = Counted(kernel, monkeypatch)
    for _ in range(9):  # checked, a pair each way to warm up, a pair each way (second counts)
        kernel(**args)
    assert counted.take() == (5, 4)
    for _ in range(3):
        kernel(**args)
    assert counted.take() in ((0, 3), (3, 0))  # the faster way, every call
    _swap_in_row(args, 50)
    with pytest.raises(spf.ArgumentError, match=r"assumption '.*col.*' does not hold"):
        kernel(**args)


def test_each_look_of_a_hashing_kernel_keeps_the_way_its_own_trials_found_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The trials of a kernel whose checked function hashes its index arrays run per look,
    not per size class: two matrices whose index arrays are of one size to a power of two
    may favour different ways (SELL(8, 1) on ``arrow`` and on a 10k dense row: the checked
    loops cost about the hashed way on the first, 1.15x it on the second, whose
    padded slice they test entry by entry), and the second's calls once took the way the
    first's trials kept. The clock here makes the hashed way slow on the first look and the
    checked loops slow on the second."""
    monkeypatch.setattr(known, "TRIALS", 2)
    kernel = kernels.spmv_csr(index_dtype="int64").compile()  # a fresh kernel: no trials yet
    assert kernel._hashed
    make = KERNELS["spmv_csr"]("int64")[1]
    first, second = make(_dense_row(3000, 500), "int64"), make(_dense_row(3100, 450), "int64")
    now, slow = [0.0], [True]  # slow[0]: True, the hashed way is slow; False, the loops
    word, checked = kernel._hash_word - 1, kernel._checked

    def run_checked(*args: Any) -> Any:
        bounds = args[-2]
        hashed = len(bounds) > word + 1 and bounds[word] == 2
        now[0] += 1.0 if hashed == slow[0] else 0.001
        return checked(*args)

    monkeypatch.setattr(kernel, "_checked", run_checked)
    monkeypatch.setattr(kernel, "_clock", lambda: now[0])
    slots = []
    for args, hashed_slow in ((first, True), (second, False)):
        slow[0] = hashed_slow
        for _ in range(16):  # checked, two pairs each way to warm up, two counted each way
            args["y"][:] = 0.0
            kernel(**args)
            m = sp.csr_array((args["A"], args["col"], args["rowptr"]), shape=(args["N"],) * 2)
            np.testing.assert_allclose(args["y"], m @ args["x"], rtol=1e-13)
        slots.append(kernel._checked_bind(args)[2])
    a, b = slots
    assert a is not b
    assert a.size.bit_length() == b.size.bit_length()  # one size class
    assert a.bounds is not None  # settled: one C call
    assert a.bounds is not a.hashed  # its trials kept the checked loops
    assert b.bounds is b.hashed  # its own trials kept the hashed way
    second["col"][5] = second["N"]  # still refused on the look that hashes
    with pytest.raises(spf.ArgumentError, match=r"col\[5\]"):
        kernel(**second)


def test_one_index_array_is_keyed_like_several() -> None:
    contents = KnownContents([1])
    big = np.arange(BIG, dtype=np.int64)
    key = contents.key((3,), [np.zeros(4), big])
    assert key is not None
    assert key == contents.key((3,), [np.ones(4), big.copy()])  # same contents, same key
    changed = big.copy()
    changed[7] = -1
    assert key != contents.key((3,), [np.zeros(4), changed])
    small = contents.key((3,), [np.zeros(4), big[:100].copy()])  # a few hundred bytes
    assert small is not None
    assert small[0] != key[0]  # another size class


@pytest.mark.parametrize("entries", [10, known.SMALL // 4 - 1, known.SMALL // 4, BIG])
def test_small_and_large_arrays_are_keyed_by_their_contents(entries: int) -> None:
    """An index array under :data:`known.SMALL` bytes is keyed by XXH64, from there by XXH3
    (``known.hasher``): either way equal contents give equal keys, one entry changed another
    key, and the fast look-up of a slot (``seen``) agrees with ``key``."""
    from spf.runtime.binding import Slot

    contents = KnownContents([0, 1])
    col = np.arange(entries, dtype=np.int32)
    rowptr = np.arange(entries + 1, dtype=np.int32)
    key = contents.key((entries,), [col, rowptr])
    assert key is not None
    assert key == contents.key((entries,), [col.copy(), rowptr.copy()])
    slot = Slot(col.nbytes + rowptr.nbytes)
    assert not contents.seen(slot, (entries,), [col, rowptr])
    contents.add(key)
    assert contents.seen(slot, (entries,), [col.copy(), rowptr.copy()])
    for at in (0, entries // 2, entries - 1):
        changed = col.copy()
        changed[at] += 1
        assert contents.key((entries,), [changed, rowptr]) != key
        assert not contents.seen(slot, (entries,), [changed, rowptr])
    swapped = col.copy()
    swapped[[0, entries - 1]] = swapped[[entries - 1, 0]]
    assert not contents.seen(slot, (entries,), [swapped, rowptr])
    assert not contents.seen(slot, (entries + 1,), [col, rowptr])  # other parameters


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5])
def test_a_looks_key_function_gives_the_key_of_its_calls(count: int) -> None:
    """``seen`` builds one key function per look (``known.key_function``, made for one, two
    or three index arrays, general past them): it gives the same key as ``key`` for index
    arrays among other arrays, and a changed index array changes it."""
    from spf.runtime.binding import Slot

    rng = np.random.default_rng(count)
    arrays: list[Any] = [np.zeros(3)]  # a data array first: the index arrays sit at 1, 3, ...
    uf = []
    for n in range(count):
        uf.append(len(arrays))
        arrays += [rng.integers(0, 50, size=40 + 3000 * n).astype(np.int32), np.ones(2)]
    contents = KnownContents(uf)
    values = (7, count)
    key = contents.key(values, arrays)
    assert key is not None
    slot = Slot(sum(arrays[u].nbytes for u in uf))
    assert not contents.seen(slot, values, arrays)
    assert slot.key_of is not None
    assert slot.key_of(values, arrays) == key
    contents.add(key)
    assert contents.seen(slot, values, [a.copy() for a in arrays])
    for u in uf:
        changed = list(arrays)
        changed[u] = arrays[u].copy()
        changed[u][-1] += 1
        assert slot.key_of(values, changed) != key
        assert not contents.seen(slot, values, changed)


def test_a_size_is_decided_once_its_trials_are_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(known, "TRIALS", 1)
    contents = KnownContents([0])
    key = contents.key((1,), [np.arange(BIG, dtype=np.int64)])
    assert key is not None
    contents.add(key)
    assert not contents.decided(key)
    assert not contents.settled  # its calls on known contents are timed
    for _ in range(8):  # a pair each way to warm up, then a pair of trials each way
        way = contents.route(key)
        contents.timed(key, way, 1.0 if way else 2.0)
    assert contents.decided(key)
    assert contents.settled
    assert contents.route(key)  # the faster way: hashed, then the unchecked loops
    monkeypatch.setattr(known, "TRIALS", 0)
    assert KnownContents([0]).decided(key)  # no trials at all: every size is decided


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_look_settled_on_known_contents_still_refuses_broken_ones(
    dtype: str, compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the calls of one look of arguments (values, dtypes, shapes) take the hashed way
    for good, they run one C call straight from ``Kernel.__call__`` on contents verified
    before (``Slot.known``): every other content, in place or in new arrays, is still
    checked in full."""
    monkeypatch.setattr(known, "MISSES", 10**6)  # other tests' contents of this size
    kernel, make = compiled("gauss_seidel_csr", dtype)
    good = make(_dense_row(25000, 1500), dtype)
    size_class = sum(good[u].nbytes for u in ("col", "diag", "rowptr")).bit_length()
    monkeypatch.setitem(kernel._known._verdict, size_class, True)  # trials kept hashing
    kernel(**good)  # checked, remembered
    good["x"][:] = 0.0
    kernel(**good)  # known: the look settles
    want = good["x"].copy()  # one sweep from zero
    counted = Counted(kernel, monkeypatch)
    for _ in range(3):
        good["x"][:] = 0.0
        kernel(**good)
        np.testing.assert_array_equal(good["x"], want)
    assert counted.take() == (0, 3)
    keep = good["col"].copy()
    _swap_in_row(good, 60)  # in place
    with pytest.raises(spf.ArgumentError, match=r"assumption '.*col.*' does not hold"):
        kernel(**good)
    with pytest.raises(spf.ArgumentError, match=r"assumption '.*col.*' does not hold"):
        kernel(**_copy(good))  # the broken contents in new arrays
    assert counted.take() == (2, 0)
    np.copyto(good["col"], keep)
    kernel(**good)
    assert counted.take() == (0, 1)


def _c_digest(kernel: spf.Kernel, args: dict[str, Any]) -> int:
    """The hash the checked function takes of the index arrays of ``args`` (one call with a
    look's hashing bounds and no contents verified: it returns the hash and runs nothing)."""
    got = kernel._binder._checked.bind_slot(args)
    assert got is not None
    values, arrays, _ = got
    params = dict(zip(kernel._param_order, values, strict=True))
    assert kernel._known is not None
    bounds = kernel._bounds_of(params, hashed=[arrays[u].nbytes for u in kernel._known.uf])
    fault = kernel._ffi.new("int64_t[]", 4)
    kernel._checked(*values, *map(kernel._from_buffer, kernel._ctypes, arrays), bounds, fault)
    assert fault[0] == arg_checks.FAULT_NEW_CONTENTS
    return int(fault[3])


def _changed_digests(
    kernel: spf.Kernel, args: dict[str, Any], changes: tuple[int, ...]
) -> list[int]:
    """The hashes of ``args`` with each entry of ``col`` and ``rowptr`` changed by each of
    ``changes`` in turn (put back after each)."""
    out = []
    for name in ("col", "rowptr"):
        a = args[name]
        for k in range(len(a)):
            for change in changes:
                a[k] += change
                out.append(_c_digest(kernel, args))
                a[k] -= change
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_checked_function_hashes_other_contents_apart(dtype: str, compiled: Any) -> None:
    """spf.codegen.contents_hash: equal contents in other arrays hash the same; every entry
    changed by one, every pair of neighbours swapped, and an entry appended hash apart (from
    the verified contents and from each other)."""
    kernel, make = compiled("spmv(CSR)", dtype)
    assert kernel._hashed
    args = make(_dense_row(700, 90), dtype)
    base = _c_digest(kernel, args)
    assert _c_digest(kernel, _copy(args)) == base
    seen = {base, *_changed_digests(kernel, args, (1, -1))}
    for name in ("col", "rowptr"):
        a = args[name]
        for k in range(len(a) - 1):
            if a[k] != a[k + 1]:
                a[[k, k + 1]] = a[[k + 1, k]]
                seen.add(_c_digest(kernel, args))
                a[[k, k + 1]] = a[[k + 1, k]]
    changes = 2 * (len(args["col"]) + len(args["rowptr"]))
    swaps = int(np.sum(np.diff(args["col"]) != 0) + np.sum(np.diff(args["rowptr"]) != 0))
    assert len(seen) == 1 + changes + swaps
    longer = {**args, "col": np.append(args["col"], args["col"][-1])}
    assert _c_digest(kernel, longer) not in seen
    assert _c_digest(kernel, args) == base


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_entry_of_every_tail_shape_hashes_apart(dtype: str, compiled: Any) -> None:
    """spf.codegen.contents_hash reads whole 256-byte blocks, then the 64-byte steps left,
    then one zero-padded step for the bytes left after those, all of the arrays in one
    state: arrays whose lengths end at every such place (``rowptr`` of 5 to 64 rows: with
    int32 and with int64 entries, bytes past its last whole step on each of the four lanes,
    and none), one entry changed by one
    anywhere in either array, or the last entry dropped, hash apart from the contents and
    from each other; the same contents in new arrays hash the same."""
    kernel, make = compiled("spmv(CSR)", dtype)
    assert kernel._hashed
    for rows in (5, 7, 8, 15, 16, 23, 27, 31, 39, 47, 55, 63, 64):
        args = make(_dense_row(rows, 3), dtype)
        base = _c_digest(kernel, args)
        assert _c_digest(kernel, _copy(args)) == base
        seen = {base, *_changed_digests(kernel, args, (1,))}
        assert len(seen) == 1 + len(args["col"]) + len(args["rowptr"]), rows
        shorter = {**args, "NNZ": args["NNZ"] - 1}
        shorter.update(col=args["col"][:-1].copy(), A=args["A"][:-1].copy())
        shorter["rowptr"] = np.minimum(args["rowptr"], shorter["NNZ"])
        assert _c_digest(kernel, shorter) not in seen
        assert _c_digest(kernel, args) == base


@pytest.mark.parametrize("dtype", DTYPES)
def test_each_of_three_index_arrays_broken_is_refused_after_they_were_verified(
    dtype: str, compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gauss_seidel_csr`` hashes its three index arrays (``col``, ``diag``, ``rowptr``) in
    one state: once its look settled on verified contents, each array broken in turn (a
    row's columns swapped, ``diag`` off the diagonal, a row starting after its diagonal),
    in place and in new arrays, is refused; put back, the call runs unchecked."""
    kernel, make = compiled("gauss_seidel_csr", dtype)
    assert kernel._hashed
    good = make(_dense_row(300, 40), dtype)
    for _ in range(3):  # checked, then known: the look settles
        good["x"][:] = 0.0
        kernel(**good)
    counted = Counted(kernel, monkeypatch)
    row = 150  # the dense row
    col, diag, rowptr = good["col"], good["diag"], good["rowptr"]
    first = int(rowptr[row])
    edits = {
        "col": (first, int(col[first + 1]), first + 1, int(col[first])),
        "diag": (row, int(diag[row]) + (1 if diag[row] + 1 < rowptr[row + 1] else -1)),
        "rowptr": (row, int(diag[row]) + 1),
    }
    for name, edit in edits.items():
        a = good[name]
        keep = a.copy()
        for at, value in zip(edit[::2], edit[1::2], strict=True):
            a[at] = value
        with pytest.raises(spf.ArgumentError):
            kernel(**good)
        with pytest.raises(spf.ArgumentError):
            kernel(**_copy(good))
        assert counted.take() == (2, 0), name
        np.copyto(a, keep)
        kernel(**good)
        assert counted.take() == (0, 1), name


@pytest.mark.parametrize("dtype", DTYPES)
def test_small_edits_that_undo_each_other_in_a_lane_hash_apart(dtype: str, compiled: Any) -> None:
    """spf.codegen.contents_hash: a lane's step can be undone by the words of its next step
    (256 bytes on); without the multiplication of ``x``, +1 at a step's second word, ^1 and
    -1 at the next step's two words collided for about every other state, and with the
    product alone the same edits of 2**31 and 2**63. Such three edits of ``col`` hash apart
    at every lane and step tried."""
    kernel, make = compiled("spmv(CSR)", dtype)
    args = make(_dense_row(700, 90), dtype)
    base = _c_digest(kernel, args)
    col = args["col"]
    tried = 0
    # the edits on the 64-bit words the hash reads: small ones, and of bit 31 and bit 63
    # (a product alone carries a change only upwards: these collided for about every other
    # state, 2**63 for all; for int32 entries, sign flips and a high half's -1)
    for d in (1, 2**31, 2**63):
        change = np.array([d], dtype=np.uint64)
        for step in range((col.nbytes - 320) // 256):
            for lane in range(4):
                first = (256 * step + 32 + 8 * lane) // 8  # the step's second word
                edited = _copy(args)
                words = edited["col"].view(np.uint8)[: col.nbytes // 8 * 8].view(np.uint64)
                words[first : first + 1] += change
                words[first + 28 : first + 29] ^= change
                words[first + 32 : first + 33] -= change
                assert _c_digest(kernel, edited) != base, (d, step, lane)
                tried += 1
    assert tried >= 120
    assert _c_digest(kernel, args) == base


@pytest.mark.parametrize("kernel_name", ["spmm_csr", "spgemm_csr"])
def test_a_range_fault_after_the_look_settled_is_still_refused(
    kernel_name: str, tmp_path: Path
) -> None:
    """Once a look settled (its calls one C call), an entry out of range that the loops never
    read passes, and one they read is refused: the range pass's fault is not taken for new
    contents (it once shared their fault number, and the second call then ran unchecked)."""
    if kernel_name == "spmm_csr":
        kernel = kernels.spmm_csr().compile(cache_dir=str(tmp_path))
        n, m, k = 3, 4, 2
        rowptr = np.array([0, 1, 2, 3], np.int32)
        col = np.array([0, 1, 2, 0], np.int32)  # col[3] is never read

        def call(c: np.ndarray) -> np.ndarray:
            out = np.zeros((n, k))
            kernel(
                C=out, A=np.ones(4), B=np.ones((m, k)), rowptr=rowptr, col=c, M=m, N=n, K=k, NNZ=4
            )
            return out

        unread, read, bad = 3, 0, m
    else:
        kernel = kernels.spgemm_csr(parallel=False).single.compile(cache_dir=str(tmp_path))
        a_m = random_csr(23, 17, 0.2, 3, empty_rows=[4, 9])
        a = spf.sparse.csr_args(a_m, "int32")
        b = spf.sparse.csr_args(sp.csr_array(a_m.T), "int32")
        col = np.append(b["col"], 0).astype(np.int32)  # B_col's last entry is never read
        values = np.append(b["A"], 1.0)
        cap = 23 * 23

        def call(c: np.ndarray) -> np.ndarray:
            out = np.zeros(cap)
            kernel(
                A_NNZ=len(a["col"]), B_NNZ=len(c), C_CAP=cap, K=17, M=23, N=23,
                A_col=a["col"], A_rowptr=a["rowptr"], B_col=c, B_rowptr=b["rowptr"],
                A=a["A"], B=values, C_rowptr=np.zeros(24, np.int32),
                C_col=np.zeros(cap, np.int32), C=out,
            )  # fmt: skip
            return out

        unread, read, bad = len(col) - 1, int(b["rowptr"][int(a["col"][0])]), 23
    want = call(col)
    for _ in range(40):  # the look settles
        np.testing.assert_array_equal(call(col), want)
    never = col.copy()
    never[unread] = 10**6
    np.testing.assert_array_equal(call(never), want)
    for _ in range(3):
        broken = col.copy()
        broken[read] = bad
        with pytest.raises(ArgumentError, match="outside the declared range"):
            call(broken)


def test_contents_verified_before_stay_known_between_others(
    compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One look's calls alternate between two verified contents: the checked function holds
    the last one's hash, the kernel every verified one (a call on the other runs the unchecked
    function after the hash); one entry broken in place is refused, however often."""
    kernel, make = compiled("spmv(CSR)", "int64")
    n = 6000
    eye = make(sp.csr_array(sp.eye_array(n, format="csr")), "int64")
    shifted = _copy(eye)
    shifted["col"] = (eye["col"] + 1) % n  # one entry a row, another column: valid too
    counted = Counted(kernel, monkeypatch)
    for args in (eye, shifted, eye, eye, shifted):
        args["y"][:] = 0.0
        kernel(**args)
        np.testing.assert_array_equal(args["y"], args["A"] * args["x"][args["col"]])
    assert counted.take() == (2, 3)
    shifted["col"][7] = n  # past the last column, in place
    for _ in range(2):
        with pytest.raises(spf.ArgumentError, match=rf"col\[7\] = {n} is outside"):
            kernel(**shifted)
    kernel(**eye)
    assert counted.take() == (2, 1)


def test_only_kernels_that_can_take_the_hashed_way_hash_in_c(
    square: dict[str, Any], compiled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checked function hashes its index arrays itself only where its kernel can take
    that way (spf.codegen.arg_checks.hashes): a serial kernel does; one whose loops run in
    an OpenMP parallel region, or one with a fault record (a sparse output's pass), prints
    no hash (gcc compiles nothing for it). The parallel one remembers its contents keyed
    in Python instead, computes the same and still refuses an entry broken in place."""
    serial, make = compiled("spmv(CSR)", "int32")
    assert serial._hashed
    assert arg_checks.HASH_NAME in serial.source
    comp = spf.kernels.spmv(CSR, index_dtype="int32")
    comp.stmt("spmv").parallelize("i")
    kernel = comp.compile()
    assert arg_checks.HASH_NAME not in kernel.source
    assert not kernel._hashed
    assert kernel._known is not None  # the order fact over col: keyed in Python
    counted = Counted(kernel, monkeypatch)
    m = square["bcsstk13"]
    args = make(m, "int32")
    for _ in range(3):
        args["y"][:] = 0.0
        kernel(**args)
        np.testing.assert_allclose(args["y"], m @ args["x"], rtol=1e-13)
    assert counted.take() == (1, 2)
    args["col"][[0, 1]] = args["col"][[1, 0]]  # one row's columns out of order, in place
    with pytest.raises(ArgumentError):
        kernel(**args)
    adds = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR).compile()
    for k in adds.group("single"):  # the single pass: a fault record
        assert arg_checks.HASH_NAME not in k.source
        assert not k._hashed
