"""spf.bench.tune's inputs: the power-law matrix and the geomean of ratios."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spf.bench import BENCHMARKS
from spf.bench.tune import geomean, power_law


def test_tune_is_a_benchmark() -> None:
    assert "tune" in BENCHMARKS


def test_power_law_rows_are_skewed_and_in_range() -> None:
    m = power_law(2000, seed=1)
    assert m.shape == (2000, 2000)
    lengths = np.diff(m.indptr)
    assert lengths.min() >= 0
    assert lengths.max() > 20 * np.median(lengths)  # a few long rows among many short ones
    assert m.indices.max() < 2000
    assert (power_law(2000, seed=1) != m).nnz == 0  # seeded


def test_geomean_skips_what_is_not_a_ratio() -> None:
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([4.0, float("nan"), 0.0]) == pytest.approx(4.0)
    assert math.isnan(geomean([]))
