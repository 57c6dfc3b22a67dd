"""The PolyBench/C 4.2 suite (``spf.bench.polybench``): every kernel compiles with checking
on, as PolyBench writes it (no ``assume``), and matches its Python reference bit for bit;
the three whose accesses are in bounds only for some sizes carry the expected preconditions
and match gcc's build of PolyBench's C; legal schedule changes keep the results, illegal
ones raise ``IllegalScheduleError``."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf
from spf.bench.polybench import KERNELS, kernel

if TYPE_CHECKING:
    from spf.runtime import Kernel

#: No FMA contraction, so the compiled kernel rounds exactly as the Python reference.
EXACT = ("-O2", "-ffp-contract=off")

#: ``(statement, access, condition)`` of each kernel's preconditions: PolyBench reads or
#: writes a fixed element that exists only from some size on (the others have none).
PRECONDITIONS = {
    "durbin": {("s0", "r(0)", "N >= 1"), ("s0", "y(0)", "N >= 1"), ("s2", "r(0)", "N >= 1")},
    "fdtd-2d": {("s0", "ey(0, j)", "NY >= 1 && TMAX >= 1 => NX >= 1")},
    "correlation": {("s14", "corr(M - 1, M - 1)", "M >= 1")},
}


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> Path:
    return shared_cache


def _compile(name: str, comp: spf.Computation, cache: Path) -> Kernel:
    """Compile ``comp`` (checking on): a kernel with preconditions warns once, naming each
    (the suite turns any other warning into an error)."""
    if name not in PRECONDITIONS:
        return comp.compile(cflags=EXACT, cache_dir=str(cache))
    with pytest.warns(spf.PreconditionWarning) as record:
        compiled = comp.compile(cflags=EXACT, cache_dir=str(cache))
    (warning,) = record
    for _, access, condition in PRECONDITIONS[name]:
        assert access in str(warning.message)
        assert repr(condition) in str(warning.message)
    return compiled


def _run(name: str, comp: spf.Computation, cache: Path) -> None:
    """Compile ``comp`` (checking on), run it on kernel ``name``'s inputs, compare."""
    k = kernel(name)
    compiled = _compile(name, comp, cache)
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


def test_no_kernel_assumes_anything() -> None:
    """Issue 27: every kernel compiles with checking and no ``assume`` added for bounds
    (test_kernel_matches_reference compiles each one)."""
    assert [n for n, k in KERNELS.items() if k.build().assumptions] == []


@pytest.mark.parametrize("name", sorted(PRECONDITIONS))
def test_preconditions_of_kernels_in_bounds_from_some_size_on(name: str, cache: Path) -> None:
    comp = kernel(name).build()
    compiled = _compile(name, comp, cache)
    got = {(p.stmt, p.access, p.condition) for p in compiled.preconditions}
    assert got == PRECONDITIONS[name]
    assert all(p.text == f"{p.condition} (for {p.access} in statement {p.stmt})"
               for p in compiled.preconditions)  # fmt: skip


def _gcc(name: str, tmp: Path) -> ctypes.CDLL:
    source = Path(__file__).parent / "c_sources" / f"{name}.c"
    lib = tmp / f"lib{name}.so"
    subprocess.run(["gcc", *EXACT, "-std=c99", "-shared", "-fPIC", str(source), "-o", str(lib),
                    "-lm"], check=True, capture_output=True)  # fmt: skip
    return ctypes.CDLL(str(lib))


#: The C function's arguments of each kernel, in order (``c_sources/<name>.c``).
C_ARGS = {
    "durbin": ("N", "r", "y"),
    "fdtd-2d": ("TMAX", "NX", "NY", "ex", "ey", "hz", "fict"),
    "correlation": ("M", "N", "float_n", "data", "corr", "mean", "stddev"),
}


#: Arguments of each kernel below its precondition (the fixed index does not exist).
BELOW = {
    "durbin": {"N": 0, "r": np.zeros(0), "y": np.zeros(0)},
    "fdtd-2d": {"TMAX": 2, "NX": 0, "NY": 3, "ex": np.zeros((0, 3)), "ey": np.zeros((0, 3)),
                "hz": np.zeros((0, 3)), "fict": np.zeros(2)},
    "correlation": {"M": 0, "N": 3, "float_n": 3.0, "data": np.zeros((3, 0)),
                    "corr": np.zeros((0, 0)), "mean": np.zeros(0), "stddev": np.zeros(0)},
}  # fmt: skip


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("name", sorted(PRECONDITIONS))
def test_kernels_with_preconditions_match_polybench_c(
    name: str, cache: Path, tmp_path: Path
) -> None:
    """Compiled without any ``assume``, the three kernels PolyBench writes with a fixed
    index run bit for bit as gcc's build of PolyBench's C; below the precondition a checked
    call is refused."""
    k = kernel(name)
    compiled = _compile(name, k.build(), cache)
    args = k.arguments()
    want = {n: v.copy() if isinstance(v, np.ndarray) else v for n, v in args.items()}
    c_args = []
    for n in C_ARGS[name]:
        v = want[n]
        c_args.append(ctypes.c_void_p(v.ctypes.data) if isinstance(v, np.ndarray) else
                      ctypes.c_double(v) if isinstance(v, float) else ctypes.c_int(v))  # fmt: skip
    fn = getattr(_gcc(name, tmp_path), name.replace("-", "_"))
    fn.restype = None
    fn(*c_args)
    compiled(**args)
    for out in k.outputs:
        assert args[out].tobytes() == want[out].tobytes(), f"{name}: {out} differs from C"
    with pytest.raises(spf.ArgumentError, match=r"only under the precondition .*=0\b"):
        compiled(**BELOW[name])


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
