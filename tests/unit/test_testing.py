"""spf.testing: random_csr's shapes, types and empty rows, compiled's per-process memo and
run_and_compare's copies and messages."""

from __future__ import annotations

import doctest
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf.testing
from spf.errors import ArgumentError
from spf.sparse import csr_args
from spf.testing import compiled, random_csr, run_and_compare


@pytest.mark.parametrize(
    ("n", "m", "density"), [(0, 0, 0.0), (0, 5, 0.5), (5, 0, 0.5), (1, 9, 0.5), (37, 23, 0.2)]
)
@pytest.mark.parametrize("index_dtype", ["int32", np.int64])
def test_random_csr_shape_types_and_canonical_form(
    n: int, m: int, density: float, index_dtype: object
) -> None:
    a = random_csr(n, m, density, rng=n + m, index_dtype=index_dtype, dtype="float32")
    assert isinstance(a, sp.csr_array)
    assert a.shape == (n, m)
    assert a.dtype == np.float32
    assert a.indptr.dtype == a.indices.dtype == np.dtype(index_dtype)
    assert a.has_canonical_format
    assert np.all(a.data != 0.0)
    assert np.all((a.data >= -1.0) & (a.data < 1.0))


def test_random_csr_empties_the_rows_asked_for() -> None:
    a = random_csr(20, 10, 0.9, rng=1, empty_rows=[0, 7, 19])
    lengths = np.diff(a.indptr)
    assert lengths[[0, 7, 19]].tolist() == [0, 0, 0]
    assert np.all(np.delete(lengths, [0, 7, 19]) > 0)
    b = random_csr(20, 10, 1.0, rng=np.random.default_rng(2), empty_rows=5)
    assert int(np.sum(np.diff(b.indptr) == 0)) == 5


def test_random_csr_is_reproducible_from_a_seed() -> None:
    a, b = random_csr(30, 30, 0.1, rng=5), random_csr(30, 30, 0.1, rng=5)
    assert (a != b).nnz == 0


@pytest.mark.parametrize(
    ("args", "kwargs", "what"),
    [
        ((-1, 3, 0.5), {}, "n must be"),
        ((3, -1, 0.5), {}, "m must be"),
        ((3, 3, 1.5), {}, "density must be"),
        ((3, 3, 0.5), {"empty_rows": -2}, "empty_rows must be"),
        ((3, 3, 0.5), {"empty_rows": [3]}, "empty_rows must lie in 0..2"),
        ((3, 3, 0.5), {"index_dtype": "float64"}, "index_dtype must be int32 or int64"),
    ],
)
def test_random_csr_bad_arguments_say_which(
    args: tuple[int, int, float], kwargs: dict[str, object], what: str
) -> None:
    with pytest.raises(ArgumentError, match=what):
        random_csr(*args, **kwargs)


@pytest.fixture(scope="module")
def spmv() -> Any:
    return compiled("spmv_csr", index_dtype="int64", openmp=False)


def test_compiled_builds_each_kernel_once(spmv: Any) -> None:
    assert compiled("spmv_csr", openmp=False, index_dtype="int64") is spmv
    assert compiled("spmv_csr", openmp=False) is not spmv


def test_compiled_names_the_kernels_it_knows() -> None:
    with pytest.raises(ArgumentError, match=r"'no_such' is not a kernel of spf\.kernels"):
        compiled("no_such")
    with pytest.raises(ArgumentError, match="'spmv_csr' must be hashable"):
        compiled("spmv_csr", cflags=["-O1"])


def test_compiled_passes_positional_arguments_to_the_kernel() -> None:
    kernel = compiled("spmv_bcsr", 2, 1, openmp=False)
    assert compiled("spmv_bcsr", 2, 1, openmp=False) is kernel
    assert "bcsr" in kernel.name


@pytest.mark.parametrize(("n", "m"), [(0, 0), (1, 1), (13, 7)])
def test_run_and_compare_checks_outputs_on_copies(spmv: Any, n: int, m: int) -> None:
    a = random_csr(n, m, 0.5, rng=n, index_dtype="int64", empty_rows=min(n, 2))
    x, y = np.linspace(-1.0, 1.0, m), np.ones(n)
    args = {"x": x, "y": y, **csr_args(a, index_dtype="int64")}
    out = run_and_compare(spmv, args, {"y": 1.0 + a @ x})
    np.testing.assert_allclose(out["y"], 1.0 + a @ x)
    assert np.all(y == 1.0), "the caller's output array is not written"


def test_run_and_compare_names_the_output_that_differs(spmv: Any) -> None:
    a = random_csr(4, 4, 1.0, rng=0, index_dtype="int64")
    args = {"x": np.ones(4), "y": np.zeros(4), **csr_args(a, index_dtype="int64")}
    with pytest.raises(AssertionError, match="output 'y' differs"):
        run_and_compare(spmv, args, {"y": a @ np.ones(4) + 1.0})
    with pytest.raises(ArgumentError, match=r"expected outputs \['z'\] are not arguments"):
        run_and_compare(spmv, args, {"z": np.zeros(4)})


def test_testing_docstring_examples() -> None:
    result = doctest.testmod(spf.testing, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
