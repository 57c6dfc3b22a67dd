"""spf.formats.BDIA(R): diagonals per block of R rows (the representation MKL's inspector
builds for banded matrices), its arguments (spf.sparse.bdia_args) and its generated SpMV."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BDIA

if TYPE_CHECKING:
    from pathlib import Path


def _diagonals(n: int, offsets: tuple[int, ...], rng: np.random.Generator) -> sp.csr_array:
    return sp.csr_array(sp.diags_array([rng.random(n - abs(d)) for d in offsets], offsets=offsets))


def _matrices() -> list[tuple[str, object]]:
    rng = np.random.default_rng(11)

    def rand(n: int, m: int, density: float) -> sp.csr_array:
        return sp.random_array((n, m), density=density, rng=rng, format="csr")

    keep = np.ones(37)
    keep[[3, 17]] = 0.0
    empty_rows = sp.csr_array(sp.diags_array(keep) @ rand(37, 29, 0.15))
    empty_rows.eliminate_zeros()  # rows 3 and 17 store nothing
    band = _diagonals(60, (-7, -1, 0, 2, 9), rng)
    return [
        ("random", rand(37, 29, 0.15)),
        ("empty_rows", empty_rows),
        ("empty", sp.csr_array((5, 4))),
        ("one_row", rand(1, 9, 0.5)),
        ("tall", rand(50, 3, 0.4)),
        ("wide", rand(4, 70, 0.3)),
        ("band", band),
        ("halves", sp.csr_array(sp.vstack([band[:30], _diagonals(60, (-3, 0, 5), rng)[30:]]))),
        ("poisson", spf.sparse.poisson2d(9)),
    ]


def _x(m: int) -> np.ndarray:
    return np.linspace(-1.0, 2.0, m)


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("rows", [1, 3, 8, 64])
def test_spmv_matches_scipy(rows: int, index_dtype: str, tmp_path: Path) -> None:
    kernel = spf.kernels.spmv(BDIA(rows), index_dtype=index_dtype).compile(cache_dir=str(tmp_path))
    for label, matrix in _matrices():
        n, m = matrix.shape  # type: ignore[attr-defined]
        args = spf.sparse.bdia_args(matrix, rows, index_dtype, max_fill=float("inf"))
        assert args["dptr"].dtype == np.dtype(index_dtype)
        y = np.full(n, 0.5)
        kernel(y=y, x=_x(m), **args)  # check=True: UF ranges, monotonic dptr, sorted doff
        want = 0.5 + matrix @ _x(m)  # type: ignore[operator]
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12, err_msg=label)


def test_scheduled_parallel_spmv_on_poisson(tmp_path: Path) -> None:
    """The bench's schedule: row blocks in parallel (gcc vectorizes the row loop)."""
    comp = spf.kernels.spmv(BDIA(16))
    comp.stmt("spmv").parallelize("b")
    comp.check_legality()
    kernel = comp.compile(cache_dir=str(tmp_path))
    assert "#pragma omp parallel for" in kernel.source
    poisson = spf.sparse.poisson2d(30)
    args = spf.sparse.format_args(poisson, BDIA(16))
    assert args["NB"] == 57  # 900 rows: the last block has 4
    assert args["NS"] == 57 * 5 - 3  # the first and last two blocks reach no +-30 entry
    x = np.random.default_rng(0).random(900)
    y = np.zeros(900)
    kernel(y=y, x=x, **args)
    np.testing.assert_allclose(y, poisson @ x, rtol=1e-12)


def test_blocks_keep_their_own_diagonals() -> None:
    """Offsets per block: a matrix whose diagonals change half way needs no slots for the
    other half's diagonals (DIA would store all of them for every row)."""
    rng = np.random.default_rng(3)
    matrix = sp.vstack([_diagonals(64, (-1, 0, 1), rng)[:32], _diagonals(64, (-9, 0, 9), rng)[32:]])
    args = spf.sparse.bdia_args(matrix, 8)
    assert args["NS"] == 4 * 3 + 4 * 3 - 1  # the last block's rows have no +9 entry
    assert list(args["doff"][:3]) == [-1, 0, 1]
    assert list(args["doff"][-2:]) == [-9, 0]
    assert spf.sparse.dia_args(matrix)["ND"] == 5


def test_many_offsets_take_the_sorting_path() -> None:
    """Entries on thousands of distinct diagonals (a block-by-offset table would be too
    large): the slots come from sorting, with the same result."""
    rng = np.random.default_rng(5)
    matrix = sp.random_array((3000, 3000), density=0.0004, rng=rng, format="csr")
    args = spf.sparse.bdia_args(matrix, 1, max_fill=2.0)
    y = np.zeros(3000)
    spf.kernels.spmv(BDIA(1)).compile()(y=y, x=_x(3000), **args)
    np.testing.assert_allclose(y, matrix @ _x(3000), rtol=1e-12)


def test_fill_limit_and_bad_block_sizes() -> None:
    rng = np.random.default_rng(2)
    scattered = sp.random_array((200, 200), density=0.02, rng=rng, format="csr")
    with pytest.raises(
        spf.ArgumentError, match=r"bdia_args: with R = 64 .*\(fill 39.7 > max_fill = 4.0\)"
    ):
        spf.sparse.bdia_args(scattered, 64)
    with pytest.raises(spf.ArgumentError, match=r"R \(rows per block\) must be a positive int"):
        spf.sparse.bdia_args(scattered, 0)
    with pytest.raises(spf.SpfError, match="BDIA: R must be a positive integer"):
        BDIA(0)
    with pytest.raises(spf.ArgumentError, match=r"not a built-in format .*BDIA\(R\)"):
        spf.sparse.format_args(scattered, spf.Format(
            "BDIAX", coords="[i, j]", storage="{[i, j] -> [k]: 0 <= k < NNZ && i = row(k) && "
            "j = col(k)}", ufs=[spf.UF("row"), spf.UF("col")]))  # fmt: skip


def test_bad_index_arrays_are_argument_errors(tmp_path: Path) -> None:
    """check=True: out-of-range offsets, decreasing block pointers and a block's offsets
    out of order (the format's assumption) are refused."""
    kernel = spf.kernels.spmv(BDIA(4)).compile(cache_dir=str(tmp_path))
    args = spf.sparse.bdia_args(spf.sparse.poisson2d(4), 4)
    y, x = np.zeros(16), np.ones(16)
    bad = {**args, "doff": args["doff"].copy()}
    bad["doff"][0] = 99
    with pytest.raises(spf.ArgumentError, match="doff"):
        kernel(y=y, x=x, **bad)
    bad = {**args, "dptr": args["dptr"][::-1].copy()}
    with pytest.raises(spf.ArgumentError, match="dptr"):
        kernel(y=y, x=x, **bad)
    bad = {**args, "doff": args["doff"].copy()}
    bad["doff"][[0, 1]] = bad["doff"][[1, 0]]  # block 0's offsets out of order
    with pytest.raises(spf.ArgumentError, match=r"doff\(s1\) < doff\(s2\).*fails first at b = 0"):
        kernel(y=y, x=x, **bad)
    assert not y.any()


def test_an_int64_pair_whose_difference_wraps_names_the_out_of_range_entry(
    tmp_path: Path,
) -> None:
    """A pair of 64-bit ``doff`` entries whose difference wraps (2**62, -2**62 - 1) is out of
    range, and the error says so: the checked function's fallback counts the order facts in
    the form the rerun fact check computes (not a direct compare that counts a pair the
    rerun then passes: a false "changed during the call"); the extreme pairs, which do
    break the order, name the assumption."""
    from spf.testing import random_csr

    m = random_csr(61, 47, 0.1, 9, empty_rows=[0, 1, 2, 3, 30])
    k = spf.kernels.spmv(BDIA(4), index_dtype="int64").compile(cache_dir=str(tmp_path))
    args = spf.sparse.format_args(m, BDIA(4), index_dtype="int64")
    dptr = args["dptr"]
    s = int(dptr[int(np.flatnonzero(np.diff(dptr) >= 2)[0])])
    cases = [
        ((2**62, -(2**62) - 1), "outside the declared range"),
        ((2**63 - 1, -(2**63)), "does not hold for these arguments"),
        ((-(2**63), 2**63 - 1), "does not hold for these arguments"),
    ]
    for (first, second), message in cases:
        doff = args["doff"].copy()
        doff[s], doff[s + 1] = first, second
        with pytest.raises(spf.ArgumentError, match=message):
            k(**{**args, "doff": doff}, x=np.ones(47), y=np.zeros(61))
