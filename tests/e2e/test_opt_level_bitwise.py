"""The test suite's optimisation levels compute spf's -O3 bits.

``make test`` builds kernels at gcc's ``-O0`` (``SPF_TEST_OPT_LEVEL=0``,
:func:`spf.runtime.build.default_opt_flags`; it was ``-O1``): gcc's ``-O3`` was a fifth of the
suite's CPU time. Without ``-ffast-math``, and with ``-std=c99``'s ``-ffp-contract=off`` (no
fused multiply-adds), every level must compute the same bits: none may reorder floating-point
operations, and spf tags ``vector`` only on loops that carry no dependence (the tests of
vectorised schedules still run at ``-O3``, as users build them: marker ``default_flags``).
Here every floating-point kernel of
:mod:`spf.kernels`, every built-in format's SpMV, a user's two-statement symmetric SpMV and a
wavefront SpTRSV are built at ``-O0``, ``-O1`` and ``-O3`` and their outputs compared bit for
bit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import spf
from spf.bench.scale_checks import dense_row, sparse_kernels
from spf.runtime.build import TEST_OPT_LEVEL_ENV
from spf.testing import random_csr, random_lower

if TYPE_CHECKING:
    from collections.abc import Callable

# the kernels are built at every level inside each test, whatever the suite's level
pytestmark = pytest.mark.default_flags

LEVELS = ("0", "1", "3")
"""The suite's level (``make test``), the level it had before, and spf's own, compared last."""

SPARSE = {name: (build, arguments) for name, build, arguments in sparse_kernels(quick=False)}
MATRICES = {
    # short rows, a few empty ones
    "random": lambda: random_csr(300, 300, 0.03, rng=5, empty_rows=[0, 7, 299]),
    # one row of 400 entries among rows of 1 to 5
    "dense row": lambda: dense_row(600, 400, 2),
}


def _commands(kernel: Any) -> list[str]:
    """The compiler commands that built ``kernel`` (a sparse einsum's: each group it ran)."""
    if hasattr(kernel, "compiled"):
        return [k.command for g in kernel.compiled() for k in kernel.group(g)]
    return [kernel.command]


def _outputs(kernel: Any, args: dict[str, Any], name: str) -> dict[str, np.ndarray]:
    """The arrays one call on copies of ``args`` writes (or returns, for SpGEMM)."""
    call = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    got = kernel(**call)
    if isinstance(got, dict):
        return got
    out = {k: v for k, v in call.items() if isinstance(v, np.ndarray) and v.flags.writeable}
    assert out, f"{name} wrote no array"
    return out


def _same_bits_at_every_level(
    build: Callable[[], Any],
    cases: dict[str, dict[str, Any]],
    what: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``build()`` at the suite's ``-O0`` (and ``-O1``, its level before) and at spf's ``-O3``,
    each called at its level (a sparse einsum compiles the phases a call runs on that call),
    writes the same bits on the arguments of each of ``cases``."""
    got: dict[str, list[dict[str, Any]]] = {case: [] for case in cases}
    for level in LEVELS:
        monkeypatch.setenv(TEST_OPT_LEVEL_ENV, level)
        kernel = build()
        for case, args in cases.items():
            got[case].append(_outputs(kernel, args, what))
        # every unit at the suite's level, a sparse einsum output's phases and a wavefront's
        # inspector stages too (spf.runtime.build.light_opt_flags)
        for command in _commands(kernel):
            assert f"-O{level}" in command.split(), command
    for case, (*lows, high) in got.items():
        for level, low in zip(LEVELS, lows, strict=False):
            assert set(low) == set(high), what
            for key in high:
                a, b = np.asarray(low[key]), np.asarray(high[key])  # SpGEMM also returns sizes
                assert a.dtype == b.dtype, f"{what} on {case}: {key}"
                assert a.tobytes() == b.tobytes(), f"{what} on {case}: {key} differs at -O{level}"
        # not a trivial comparison: the kernel computed something
        args = cases[case]
        assert any(
            k not in args or np.shape(v) != np.shape(args[k]) or np.any(v != args[k])
            for k, v in high.items()
        ), f"{what} on {case}"


@pytest.mark.parametrize("name", sorted(SPARSE))
def test_a_sparse_kernel_computes_the_same_bits_at_the_suites_level(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    build, arguments = SPARSE[name]
    cases: dict[str, dict[str, Any]] = {}
    for matrix, make in MATRICES.items():
        args = arguments(make(), "int32")
        assert args is not None, f"{name} leaves out {matrix}"
        cases[matrix] = args
    _same_bits_at_every_level(lambda: build("int32"), cases, name, monkeypatch)


def test_a_wavefront_sptrsv_computes_the_same_bits_at_the_suites_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lower = random_lower(500, 0.02, seed=4)

    def build() -> Any:
        comp = spf.kernels.sptrsv_csr()
        comp.wavefront("i")
        return comp.compile()

    args = {**spf.sparse.sptrsv_args(lower), "u": np.zeros(500), "f": np.arange(500.0) + 1}
    _same_bits_at_every_level(build, {"random": args}, "wavefront SpTRSV", monkeypatch)


def _dense_args() -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(3)
    b = rng.random((45, 67))
    return {
        "dense_mv": {"y": np.zeros(70), "A": rng.random((70, 50)), "x": rng.random(50)},
        "gemm": {"C": rng.random((45, 45)), "A": b, "B": b.T.copy()},
        "blur2d": {"out": np.zeros((60, 78)), "bx": np.zeros((62, 78)),
                   "img": rng.random((62, 80))},
        "jacobi2d": {"B": np.zeros((50, 50)), "A": rng.random((50, 50))},
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(_dense_args()))
def test_a_dense_kernel_computes_the_same_bits_at_the_suites_level(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = getattr(spf.kernels, name)
    _same_bits_at_every_level(
        lambda: build().compile(), {"random": _dense_args()[name]}, name, monkeypatch
    )
