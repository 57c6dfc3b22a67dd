"""spf.formats.features and spf.formats.tune_space: the pattern statistics, the exact padding
each format would add (against the arrays spf.sparse builds), pruning and the space's checks.
Nothing here compiles."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.sparse
from spf.formats import BCSR, DIA, ELL, SELL
from spf.formats.features import matrix_features
from spf.formats.tune_space import candidates, default_space, normalize_space


def _canonical(m: object) -> sp.csr_array:
    a = spf.sparse.csr_args(m)
    return sp.csr_array((a["A"], a["col"], a["rowptr"]), shape=(a["N"], a["M"]))


def _matrices() -> list[tuple[str, sp.csr_array]]:
    rng = np.random.default_rng(3)
    rand = sp.random_array((41, 33), density=0.12, rng=rng, format="csr")
    keep = np.ones(41)
    keep[[0, 7, 40]] = 0.0
    holes = sp.csr_array(sp.diags_array(keep) @ rand)
    holes.eliminate_zeros()
    dense_row = sp.lil_array(sp.eye_array(30))
    dense_row[4, :] = 1.0
    return [
        ("random", rand),
        ("empty_rows", holes),
        ("one_row", sp.random_array((1, 17), density=0.4, rng=rng, format="csr")),
        ("empty", sp.csr_array((6, 5))),
        ("dense_row", sp.csr_array(dense_row)),
        ("poisson", sp.csr_array(spf.sparse.poisson2d(7))),
    ]


MATRICES = _matrices()


@pytest.mark.parametrize(("name", "m"), MATRICES, ids=[n for n, _ in MATRICES])
def test_stored_slots_equal_the_arrays_spf_sparse_builds(name: str, m: sp.csr_array) -> None:
    f = matrix_features(_canonical(m))
    assert f.stored("CSR") == f.nnz == m.nnz
    assert f.stored("ELL") == spf.sparse.format_args(m, ELL)["A"].size
    assert f.stored("DIA") == spf.sparse.format_args(m, DIA)["A"].size
    for c, sigma in ((4, 1), (8, 1), (4, 8)):
        assert f.stored("SELL", c, sigma) == spf.sparse.format_args(m, SELL(c, sigma))["NV"]
    for r, c in ((2, 2), (3, 2), (4, 4)):
        assert f.stored("BCSR", r, c) == spf.sparse.format_args(m, BCSR(r, c))["A"].size
    for r in (1, 4, 16):
        args = spf.sparse.bdia_args(m, r, max_fill=1e9)
        assert f.stored("BDIA", r) == args["A"].size
    assert f.padding("ELL") == f.stored("ELL") - f.nnz


@pytest.mark.parametrize(("name", "m"), MATRICES, ids=[n for n, _ in MATRICES])
def test_row_statistics_match_numpy(name: str, m: sp.csr_array) -> None:
    f = matrix_features(_canonical(m))
    lengths = np.diff(_canonical(m).indptr)
    assert f.row_max == (lengths.max() if len(lengths) else 0)
    assert f.row_mean == pytest.approx(lengths.mean() if len(lengths) else 0.0)
    assert f.empty_rows == np.count_nonzero(lengths == 0)
    if f.nnz:
        assert f.row_cv == pytest.approx(lengths.std() / lengths.mean())
    assert f.diagonals == len(np.unique(sp.coo_array(m).col - sp.coo_array(m).row))


def _plans(m: object, **kw: object) -> dict[str, object]:
    families, schedules = normalize_space(kw.pop("space", None))  # type: ignore[arg-type]
    f = matrix_features(_canonical(m))
    plans = candidates(f, families, schedules, index_dtype="int32", threads=2, max_padding=3.0)
    return {p.candidate.label: p for p in plans}


def test_a_dense_row_prunes_ell_for_its_padding() -> None:
    plans = _plans(dict(MATRICES)["dense_row"])
    assert plans["ELL serial"].pruned.startswith("padding: ELL stores 900 slots")  # type: ignore[attr-defined]
    assert plans["CSR serial"].pruned is None  # type: ignore[attr-defined]


def test_a_band_predicts_dia_cheaper_than_csr() -> None:
    band = sp.diags_array([np.ones(500 - abs(d)) for d in (-2, 0, 3)], offsets=(-2, 0, 3))
    plans = _plans(band, space={"CSR": [()], "DIA": [()], "schedules": ["serial"]})
    order = list(plans)
    assert order.index("DIA serial") < order.index("CSR serial")


def test_parallel_schedules_without_a_row_parallel_loop_are_pruned() -> None:
    plans = _plans(dict(MATRICES)["poisson"])
    assert "reduction" in plans["CSC parallel"].pruned  # type: ignore[attr-defined]
    assert "perm" in plans["SELL(8, 32) parallel"].pruned  # type: ignore[attr-defined]
    assert plans["SELL(8, 1) parallel"].pruned is None  # type: ignore[attr-defined]


def test_space_lists_and_dicts() -> None:
    families, schedules = normalize_space(["CSR", "SELL"])
    assert families == {"CSR": [()], "SELL": default_space()["SELL"]}
    assert schedules == ("serial", "parallel")
    families, schedules = normalize_space({"BCSR": [(6, 6)], "schedules": ["serial"]})
    assert families == {"BCSR": [(6, 6)]}
    assert schedules == ("serial",)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ({"HYB": [()]}, "unknown format family 'HYB'"),
        ({"BCSR": [(2,)]}, "BCSR parameters must be (r, c)"),
        ({"SELL": [(8, 12)]}, "sigma (12) must be 1 or a multiple of C"),
        ({"CSR": [()], "schedules": ["simd"]}, "space['schedules'] must list"),
        ({"CSR": []}, "names no format"),
        ("CSR", "space must be a dict"),
    ],
)
def test_bad_spaces_say_what_is_wrong(space: object, message: str) -> None:
    with pytest.raises(spf.SpfError, match=re.escape(message)):
        normalize_space(space)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kernel": "spmm"}, "kernel must be 'spmv'"),
        ({"budget": 0}, "budget must be a positive"),
        ({"budget": float("inf")}, "budget must be a positive"),
        ({"threads": 0}, "threads must be None or a positive int"),
        ({"index_dtype": "int16"}, "index_dtype must be"),
    ],
)
def test_bad_arguments_say_what_is_wrong(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(spf.SpfError, match=message):
        spf.formats.tune(sp.eye_array(3, format="csr"), **kwargs)  # type: ignore[arg-type]


def test_the_model_sees_rows_split_unevenly_and_parts_split_evenly() -> None:
    from spf.bench.tune import power_law
    from spf.formats.tune_space import imbalance

    arrow = sp.lil_array((400, 400))
    arrow[:40, :] = 1.0  # the first tenth of the rows holds nearly every entry
    arrow.setdiag(1.0)
    f = matrix_features(sp.csr_array(arrow))
    assert imbalance(f, "CSR", (), 2) > 1.8  # one thread gets the dense rows
    assert imbalance(f, "CSRV", (), 2) == imbalance(f, "CSR", (), 2)
    assert imbalance(f, "CSRP", (1,), 2) < 1.1
    assert imbalance(f, "CSR", (), 1) == 1.0
    plans = candidates(f, {"CSR": [()], "CSRP": [(1,)]}, ["parallel"], index_dtype="int32",
                       threads=2, max_padding=3.0)  # fmt: skip
    assert [p.candidate.label for p in plans] == ["CSRP(1) parallel", "CSR parallel"]
    even = matrix_features(power_law(1000, seed=1))
    assert 1.0 <= imbalance(even, "CSRP", (4,), 2) <= imbalance(even, "CSR", (), 2) + 0.05


def test_csr_variants_are_stored_as_csr_and_parts_are_parallel_only() -> None:
    f = matrix_features(
        _canonical(sp.random_array((50, 50), density=0.1, rng=np.random.default_rng(1)))
    )
    plans = {p.candidate.label: p for p in candidates(
        f, {"CSR": [()], "CSRV": [()], "CSRP": [(1,)]}, ["serial", "parallel"],
        index_dtype="int32", threads=2, max_padding=3.0)}  # fmt: skip
    assert plans["CSRV serial"].predicted_bytes == plans["CSR serial"].predicted_bytes
    assert (
        plans["CSRP(1) serial"].pruned
        == "CSRP cuts the rows for threads: serial, it is CSR's kernel"
    )
    assert plans["CSRP(1) parallel"].pruned is None
    assert plans["CSRV serial"].candidate.format.name == "CSR"
    assert plans["CSRP(1) parallel"].candidate.parts(2) == 2
    with pytest.raises(spf.SpfError, match=r"CSRP parameters must be \(q,\)"):
        normalize_space({"CSRP": [(1, 2)]})
