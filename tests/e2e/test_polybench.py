"""The PolyBench/C 4.2 suite (``spf.bench.polybench``): every kernel compiles with checking
on and matches its Python reference bit for bit; legal schedule changes keep the results,
illegal ones raise ``IllegalScheduleError``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf
from spf.bench.polybench import KERNELS, kernel

if TYPE_CHECKING:
    from pathlib import Path

#: No FMA contraction, so the compiled kernel rounds exactly as the Python reference.
EXACT = ("-O2", "-ffp-contract=off")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("polybench-cache")


def _run(name: str, comp: spf.Computation, cache: Path) -> None:
    """Compile ``comp`` (checking on), run it on kernel ``name``'s inputs, compare."""
    k = kernel(name)
    compiled = comp.compile(cflags=EXACT, cache_dir=str(cache))
    args = k.arguments()
    expected = k.expected(args)
    compiled(**args)
    for out in k.outputs:
        np.testing.assert_array_equal(args[out], expected[out], err_msg=f"{name}: {out}")


def test_thirty_kernels() -> None:
    assert len(KERNELS) == 30
    assert {"gemm", "ludcmp", "deriche", "floyd-warshall", "nussinov", "adi"} <= set(KERNELS)


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_matches_reference(name: str, cache: Path) -> None:
    k = kernel(name)
    _run(name, k.build(), cache)
    before = k.arguments()
    after = k.expected(before)
    assert all(np.all(np.isfinite(after[out])) for out in k.outputs)
    assert any(not np.array_equal(before[out], after[out]) for out in k.outputs)


def test_unknown_kernel_is_named() -> None:
    with pytest.raises(spf.UndeclaredError, match=r"unknown PolyBench kernel 'gemm2'.*'gemm'"):
        kernel("gemm2")


def _each(
    names: tuple[str, ...], fn: Callable[[spf.Stmt], object]
) -> Callable[[spf.Computation], None]:
    def apply(comp: spf.Computation) -> None:
        for s in names:
            fn(comp.stmt(s))

    return apply


LEGAL: list[tuple[str, Callable[[spf.Computation], object]]] = [
    ("gemm", lambda c: c.stmt("s1").interchange("k", "j")),
    ("mvt", _each(("s0", "s1"), lambda s: s.interchange("i", "j"))),
    ("lu", lambda c: c.stmt("s2").interchange("j", "k")),
    ("jacobi-2d", _each(("s0", "s1"), lambda s: s.interchange("i", "j"))),
    ("jacobi-2d", _each(("s0", "s1"), lambda s: s.tile("i", "j", 2, 3, "i0", "j0", "i1", "j1"))),
    ("seidel-2d", lambda c: c.stmt("s0").skew("i", "j", 1)),
    # skewed, the nine-point sweep tiles (the (1, -1) distance becomes (1, 0))
    (
        "seidel-2d",
        lambda c: c.stmt("s0").skew("i", "j", 1).tile("i", "j", 2, 3, "i0", "j0", "i1", "j1"),
    ),
    ("jacobi-1d", _each(("s0", "s1"), lambda s: s.skew("t", "i", 2))),
    ("heat-3d", _each(("s0", "s1"), lambda s: s.tile("j", "k", 2, 2, "j0", "k0", "j1", "k1"))),
]

ILLEGAL: list[tuple[str, Callable[[spf.Computation], object]]] = [
    ("gemm", lambda c: c.stmt("s1").reverse("k")),
    ("gemm", lambda c: c.stmt("s1").tile("i", "k", 2, 4, "i0", "k0", "i1", "k1")),
    ("seidel-2d", lambda c: c.stmt("s0").interchange("i", "j")),
    ("seidel-2d", lambda c: c.stmt("s0").tile("i", "j", 2, 3, "i0", "j0", "i1", "j1")),
    ("jacobi-1d", _each(("s0", "s1"), lambda s: s.reverse("t"))),
    ("trisolv", lambda c: c.stmt("s1").reverse("j")),
]


@pytest.mark.parametrize(
    ("name", "change"), LEGAL, ids=[f"{n}-{i}" for i, (n, _) in enumerate(LEGAL)]
)
def test_legal_schedule_keeps_results(
    name: str, change: Callable[[spf.Computation], object], cache: Path
) -> None:
    comp = kernel(name).build()
    before = [str(s.schedule) for s in comp.stmts]
    change(comp)
    assert [str(s.schedule) for s in comp.stmts] != before
    _run(name, comp, cache)


@pytest.mark.parametrize(
    ("name", "change"), ILLEGAL, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ILLEGAL)]
)
def test_illegal_schedule_raises(name: str, change: Callable[[spf.Computation], object]) -> None:
    comp = kernel(name).build()
    change(comp)
    with pytest.raises(spf.IllegalScheduleError, match="illegal schedule"):
        comp.codegen("c")
