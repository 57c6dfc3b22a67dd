"""spf.bench.scale_convert: the matrices it times and what it leaves out (the timed run itself
is ``test_bench.py::test_every_benchmark_runs_quick``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spf.bench import scale_convert
from spf.formats import BCSR, CSR, DIA, ELL

if TYPE_CHECKING:
    from pathlib import Path


def test_dense_row_matrix_has_one_long_row_among_short_ones() -> None:
    m = scale_convert.dense_row(2_000, 1_500)
    lengths = np.diff(m.indptr)
    assert m.shape == (2_000, 2_000)
    assert lengths[7] >= 1_500
    assert np.delete(lengths, 7).max() <= 5
    assert m.has_canonical_format


def test_quick_matrices_are_arrow_and_a_dense_row(suitesparse_dir: Path) -> None:
    assert scale_convert.suitesparse_dir().resolve() == suitesparse_dir.resolve()
    labels = [label for label, _ in scale_convert.matrices(quick=True)]
    assert labels == ["arrow", "dense row 10k"]


def test_padding_counts_the_slots_ell_and_dia_would_store() -> None:
    m = scale_convert.dense_row(100, 60)
    assert scale_convert._padding(m, ELL) == 100 * int(np.diff(m.indptr).max())
    rows = np.repeat(np.arange(100), np.diff(m.indptr))
    assert scale_convert._padding(m, DIA) == 100 * len(np.unique(m.indices - rows))
    assert scale_convert._padding(m, CSR) == scale_convert._padding(m, BCSR(4, 4)) == 0


def test_every_case_names_a_reference_and_the_targets_are_cases() -> None:
    names = [case[0] for case in scale_convert.CASES]
    assert len(set(names)) == len(names)
    assert set(scale_convert.TARGETS) <= set(names)
