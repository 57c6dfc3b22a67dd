"""spf.codegen.checked_call: a checked function whose tests all run before its loops (range
pass, prechecked pointers, each-call facts) calls the unchecked function instead of printing
the same loops again; its calls compute the same and refuse every broken input they refused
before. A kernel with a check inside its loops keeps its own copy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import spf
from spf.codegen import arg_checks
from spf.formats import CSF, CSR
from spf.testing import random_csr


def _checked_text(kernel: Any, function: str) -> str:
    """The checked function ``function`` of ``kernel``'s unit, as printed."""
    source = kernel.source
    start = source.index(f"void {function}{arg_checks.CHECKED_SUFFIX}(")
    return str(source[start : source.index("\n}\n", start)])


@pytest.fixture(scope="module")
def mttkrp() -> Any:
    comp = spf.einsum("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", B=CSF(3))
    assert isinstance(comp, spf.Computation)
    return comp.compile()


def _tensor() -> tuple[Any, Any, tuple[int, int, int]]:
    rng = np.random.default_rng(4)
    shape = (30, 20, 25)
    flat = rng.choice(np.prod(shape), size=400, replace=False)
    coords = np.stack(np.unravel_index(np.sort(flat), shape))
    return coords, rng.random(400), shape


def test_mttkrp_checked_function_calls_the_unchecked_loops(mttkrp: Any) -> None:
    text = _checked_text(mttkrp, "einsum_A")
    assert "for (int64_t B_p1" not in text  # the slices' loop is the unchecked function's
    assert "einsum_A(B_NNZ, " in text
    coords, values, shape = _tensor()
    args = spf.sparse.csf_args(coords, values, shape, prefix="B_")
    rng = np.random.default_rng(5)
    c, d = rng.random((shape[1], 3)), rng.random((shape[2], 3))
    want = np.zeros((shape[0], 3))
    for (i, k, m), v in zip(coords.T, values, strict=True):
        want[i] += v * c[k] * d[m]
    got = np.zeros((shape[0], 3))
    mttkrp(A=got, C=c, D=d, **args)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    out = np.zeros((shape[0], 3))
    mttkrp(A=out, C=c, D=d, check=False, **args)
    np.testing.assert_array_equal(out, got)  # the same loops: the same bits
    bad = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    bad["B_crd3"][0] = shape[2] + 7  # out of its range
    with pytest.raises(spf.ArgumentError, match="B_crd3"):
        mttkrp(A=np.zeros((shape[0], 3)), C=c, D=d, **bad)
    bad = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    fiber = int(np.flatnonzero(np.diff(bad["B_pos3"]) >= 2)[0])
    at = int(bad["B_pos3"][fiber])
    bad["B_crd3"][[at, at + 1]] = bad["B_crd3"][[at + 1, at]]  # a fiber out of order
    with pytest.raises(spf.ArgumentError):
        mttkrp(A=np.zeros((shape[0], 3)), C=c, D=d, **bad)
    bad = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    bad["B_pos2"][1], bad["B_pos2"][2] = bad["B_pos2"][2], bad["B_pos2"][1] - 1
    with pytest.raises(spf.ArgumentError, match="B_pos2"):
        mttkrp(A=np.zeros((shape[0], 3)), C=c, D=d, **bad)


def test_spgemm_checked_passes_call_the_unchecked_ones() -> None:
    comp = spf.einsum(
        "C(i,j) = A(i,k) * B(k,j)", A=CSR, B=CSR, C=CSR, parallel=False, name="cc_spgemm"
    )
    kernel = comp.compile()
    single, bound = kernel.group("single")
    assert "cc_spgemm_single_spf_faults(A_NNZ, " in _checked_text(single, "cc_spgemm_single")
    assert (
        "cc_spgemm_bound(A_NNZ, " in _checked_text(bound, "cc_spgemm_bound").split("return; }")[-1]
    )
    a, b = random_csr(60, 40, 0.1, 1), random_csr(40, 50, 0.1, 2)
    args: dict[str, Any] = {"I": 60, "K": 40, "J": 50}
    for x, m in (("A", a), ("B", b)):
        args.update(
            {
                f"{x}_rowptr": m.indptr.astype(np.int32),
                f"{x}_col": m.indices.astype(np.int32),
                x: m.data,
            }
        )
    got = kernel(**args)
    want = a @ b
    want.sort_indices()
    np.testing.assert_array_equal(got["rowptr"], want.indptr)
    np.testing.assert_array_equal(got["col"], want.indices)
    np.testing.assert_allclose(got["A"], want.data, rtol=1e-13)
    bad = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    bad["A_col"][3] = 40  # past B's rows
    with pytest.raises(spf.ArgumentError, match="A_col"):
        kernel(**bad)
    bad = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    bad["B_rowptr"][5] = bad["B_rowptr"][6] + 1  # decreasing
    with pytest.raises(spf.ArgumentError, match="B_rowptr"):
        kernel(**bad)


def test_a_kernel_with_checks_in_its_loops_keeps_its_copy() -> None:
    """SpMV's sorted-rows fact is tested where the loops read ``col``."""
    kernel = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR).compile()
    text = _checked_text(kernel, "einsum_y")
    assert "for (int64_t A_k" in text
