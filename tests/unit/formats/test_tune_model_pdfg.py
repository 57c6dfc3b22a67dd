"""formats.tune's bytes-moved model against the PDFG: for every family, the data spaces the
model prices from the pattern (values with their padding, x, y) are the bytes the SpMV's
PDFG gives when priced with the sizes the real conversion produces (API.md §17: the cost
model is the PDFG's priced footprints). The index arrays are uninterpreted functions, not
data nodes of the PDFG: the model adds them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import spf.sparse
from spf.formats.features import matrix_features
from spf.formats.tune_space import Candidate, footprint_bytes, predicted_bytes

FAMILIES = [("SELL", (4, 1)), ("BCSR", (2, 3)), ("DIA", ()), ("BDIA", (4,))]
"""The families whose sizes come from the pattern (CSR's and ELL's are NNZ and W)."""


@pytest.fixture(scope="module")
def matrix() -> sp.csr_array:
    """Odd sizes, an empty row and a skewed one, so that every format pads."""
    m = sp.lil_array(sp.random_array((37, 29), density=0.08, rng=np.random.default_rng(4)))
    m[5, :] = 0.0
    m[11, :20] = 1.0
    return sp.csr_array(m)


@pytest.mark.parametrize(("family", "params"), FAMILIES)
def test_the_models_footprint_is_the_priced_pdfgs(
    matrix: sp.csr_array, family: str, params: tuple[int, ...]
) -> None:
    c = Candidate(family, params, "serial")
    args = spf.sparse.format_args(matrix, c.format, "int32")
    sizes = {k: int(v) for k, v in args.items() if isinstance(v, (int, np.integer))}
    graph = c.computation("int32").pdfg(params=sizes).graph
    data = {str(n): d["bytes"] for n, d in graph.nodes(data=True) if d.get("kind") == "data"}
    f = matrix_features(matrix)
    assert sum(data.values()) == footprint_bytes(f, family, params)
    values = sum(b for name, b in data.items() if name not in ("x", "y"))
    assert values == 8 * f.stored(family, *params)
    index = sum(a.nbytes for k, a in args.items() if isinstance(a, np.ndarray) and
                a.dtype == np.int32)  # fmt: skip
    assert predicted_bytes(f, family, params, 4) - sum(data.values()) - 8 * f.n == index
