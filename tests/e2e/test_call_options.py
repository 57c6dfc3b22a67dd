"""Every compiled callable spf returns takes the call options of ``Kernel.__call__`` (API.md §8:
arguments by name, ``check=``) and the arrays ``spf.sparse.*_args`` produce, and computes the
same with ``check=True`` and ``check=False`` (issue 29 item 5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf.formats import CSC, CSR


def _matrix(n: int = 12) -> Any:
    """A square CSR matrix with a dominant diagonal and sorted columns."""
    rng = np.random.default_rng(5)
    m = sp.random_array((n, n), density=0.25, format="csr", rng=rng)
    m = sp.csr_array(m + sp.diags_array(np.full(n, float(n))))
    m.sort_indices()
    return m


def _lower(m: Any) -> Any:
    low = sp.csr_array(sp.tril(m))
    low.sort_indices()
    return low


Case = tuple[Callable[..., Any], Callable[[], dict[str, Any]]]
"""A compiled callable and a function making fresh keyword arguments for it."""


def _cases() -> dict[str, Case]:
    m = _matrix()
    n = m.shape[0]
    x = np.linspace(1.0, 2.0, n)
    k = spf.kernels
    wavefront = k.sptrsv_csr()
    wavefront.wavefront("i")
    out: dict[str, Case] = {
        "compile()": (
            k.spmv_csr().compile(),
            lambda: {**spf.sparse.csr_args(m), "y": np.zeros(n), "x": x},
        ),
        "spf.kernels.gauss_seidel_csr": (
            k.gauss_seidel_csr().compile(),
            lambda: {**spf.sparse.gauss_seidel_args(m), "x": np.zeros(n), "b": x.copy()},
        ),
        "spf.kernels.ilu0_csr": (k.ilu0_csr().compile(), lambda: spf.sparse.ilu0_args(m)),
        "einsum": (
            spf.einsum("y(i) = A(i,j) * x(j)", A=CSR).compile(),
            lambda: {**spf.sparse.csr_args(m, prefix="A_"), "y": np.zeros(n), "x": x},
        ),
        "einsum, sparse output": (
            spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=CSR, B=CSR, C=CSR).compile(),
            lambda: {
                **spf.sparse.csr_args(m, prefix="A_"),
                **spf.sparse.csr_args(m.T.tocsr(), prefix="B_"),
            },
        ),
        "spgemm_csr": (
            k.spgemm_csr(parallel=False).compile(),
            lambda: {
                **spf.sparse.csr_args(m, prefix="A_"),
                **spf.sparse.csr_args(m, prefix="B_"),
                "N": n,
                "K": n,
                "M": n,
            },
        ),
        "convert": (
            spf.formats.convert(CSR, CSC).compile(),
            lambda: spf.sparse.csr_args(m),
        ),
        "wavefront executor": (
            wavefront.compile(),
            lambda: {**spf.sparse.sptrsv_args(_lower(m)), "u": np.zeros(n), "f": x.copy()},
        ),
    }
    return out


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return _cases()


NAMES = [
    "compile()",
    "spf.kernels.gauss_seidel_csr",
    "spf.kernels.ilu0_csr",
    "einsum",
    "einsum, sparse output",
    "spgemm_csr",
    "convert",
    "wavefront executor",
]


def _outputs(got: Any, args: dict[str, Any]) -> dict[str, Any]:
    """What a call produced: the dictionary it returned, else its writable arrays."""
    if isinstance(got, dict):
        return {k: np.asarray(v) for k, v in got.items()}
    return {k: v.copy() for k, v in args.items() if isinstance(v, np.ndarray) and v.flags.writeable}


@pytest.mark.parametrize("name", NAMES)
def test_every_compiled_callable_takes_check_and_computes_the_same(
    name: str, cases: dict[str, Case]
) -> None:
    fn, make = cases[name]
    results = []
    for check in (True, False):
        args = make()
        results.append(_outputs(fn(check=check, **args), args))
    checked, unchecked = results
    assert checked.keys() == unchecked.keys()
    assert checked  # a call that produced nothing would pass anything
    for key in checked:
        np.testing.assert_array_equal(checked[key], unchecked[key], err_msg=key)


@pytest.mark.parametrize("name", NAMES)
def test_every_compiled_callable_refuses_positional_arguments(
    name: str, cases: dict[str, Case]
) -> None:
    fn, make = cases[name]
    args = make()
    first = next(iter(args.values()))
    with pytest.raises(spf.ArgumentError, match=r"by name|positional"):
        fn(first)
