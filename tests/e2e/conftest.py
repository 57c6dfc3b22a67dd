"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spf.runtime import threads

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(params=[1, 2])
def omp_threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run at exactly ``n`` OpenMP threads (spf's busy-machine cap turned off)."""
    gomp = threads.openmp_library()
    assert gomp is not None
    before, adaptive = gomp.omp_get_max_threads(), threads.set_adaptive(False)
    gomp.omp_set_num_threads(int(request.param))
    try:
        yield int(request.param)
    finally:
        gomp.omp_set_num_threads(before)
        threads.set_adaptive(adaptive)
