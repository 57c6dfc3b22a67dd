"""A conversion's argument errors name the conversion and the caller's own array: a
column out of range is ``col[k] = v`` whichever phase or path meets it first (a checked
SELL conversion met it as its internal row lengths, ``cv_len``, out of their range; the
single-call conversions, CSR -> CSC, did not say which conversion refused)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize(
    "dst", [COO, CSR, CSC, ELL, DIA, SELL(2, 1), SELL(2, 4), BCSR(2, 2)], ids=lambda f: f.name
)
def test_column_out_of_range_named_with_the_conversion(dst: spf.Format, check: bool) -> None:
    m = sp.random_array((6, 5), density=0.4, rng=np.random.default_rng(2), format="csr")
    args = spf.sparse.csr_args(m)  # M = 2 puts columns 2..4 out of range
    with pytest.raises(spf.ArgumentError) as err:
        convert(CSR, dst).compile()(**{**args, "M": 2}, check=check)
    text = str(err.value)
    assert text.startswith(f"convert(CSR -> {dst.name}): "), text
    assert "run-time index array" not in text
    assert "col: col[1] = 3 is outside the declared range" in text
