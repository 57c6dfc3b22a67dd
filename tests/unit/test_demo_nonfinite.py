"""``spf demo FILE.mtx`` on a matrix holding NaN / inf: the generated kernels agree with
scipy (NaN where scipy has NaN), so the demo must not report them as wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from spf import demo, demo_more

if TYPE_CHECKING:
    from pathlib import Path


def test_demo_checks_accept_nan_where_scipy_has_nan(tmp_path: Path) -> None:
    """Raised AssertionError("generated SpMV differs from scipy"): np.allclose(NaN, NaN) is
    False."""
    a = sp.csr_array(np.array([[np.nan, 0.0, 1.0], [0.0, 2.0, 0.0], [np.inf, 0.0, 3.0]]))
    assert demo._spmv(a, tmp_path)
    assert demo._forward_solve(a, tmp_path)
    assert demo_more.sell_spmv(a)
