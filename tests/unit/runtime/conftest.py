"""Fixtures shared by the runtime's tests."""

from __future__ import annotations

import pytest

import spf


@pytest.fixture(scope="session")
def sptrsv_wavefront(tmp_path_factory: pytest.TempPathFactory) -> spf.runtime.plan.WavefrontKernel:
    """SpTRSV compiled with ``wavefront("i")`` (``method="auto"``): its coarse inspector's
    generated sort stages, called directly by the tests of the sorts."""
    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i")
    got: spf.runtime.plan.WavefrontKernel = comp.compile(
        cache_dir=str(tmp_path_factory.mktemp("sorts"))
    )
    return got
