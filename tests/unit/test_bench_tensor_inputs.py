"""spf.bench.tensor_inputs: the tensor benchmark's inputs are deterministic and its MTTKRP
reference is right (chunked, duplicates summed, empty slices)."""

from __future__ import annotations

import numpy as np
import pytest

import spf.sparse
from spf.bench import tensor_inputs as inputs


def test_power_law_tensor_is_deterministic_and_skewed() -> None:
    coords, values, shape = inputs.power_law_tensor(20_000)
    again, same, _ = inputs.power_law_tensor(20_000)
    assert np.array_equal(coords, again)
    assert np.array_equal(values, same)
    assert shape == (2000, 1000, 500)
    assert coords.shape == (3, 20_000)
    assert all((coords[m] >= 0).all() and (coords[m] < shape[m]).all() for m in range(3))
    per_slice = np.bincount(coords[0], minlength=shape[0])
    assert per_slice.max() > 20 * per_slice[per_slice > 0].mean()  # a few heavy slices
    heaviest_tenth = np.sort(per_slice)[-shape[0] // 10 :].sum()
    assert heaviest_tenth > coords.shape[1] // 3  # uniform coordinates: a tenth


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_mttkrp_reference_matches_add_at(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "CHUNK", chunk)
    coords, values, shape = inputs.power_law_tensor(500, seed=3)  # duplicates, empty slices
    args = spf.sparse.csf_args(coords, values, shape, prefix="B_")
    assert args["B_NNZ"] < 500
    rng = np.random.default_rng(0)
    c, d = rng.random((shape[1], 4)), rng.random((shape[2], 4))
    want = np.zeros((shape[0], 4))
    np.add.at(want, coords[0], values[:, None] * c[coords[1]] * d[coords[2]])
    assert np.allclose(inputs.mttkrp_reference(args, shape, c, d), want)


def test_matrices_are_int32_sorted_csr() -> None:
    a, b = inputs.poisson_pair(9)
    assert a.shape == (81, 81)
    assert a.indices.dtype == np.int32 == b.indptr.dtype
    assert np.array_equal(a.indices, b.indices)
    assert not np.array_equal(a.data, b.data)
    r = inputs.random_csr(50, 40, 300, 1)
    assert r.shape == (50, 40)
    assert r.has_sorted_indices
    assert r.indices.dtype == np.int32
    assert np.array_equal(r.toarray(), inputs.random_csr(50, 40, 300, 1).toarray())
