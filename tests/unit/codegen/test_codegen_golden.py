"""The generated code of every ready-made kernel, for every target, under golden files.

``tests/golden/codegen/<target>/<kernel>.<ext>`` holds ``comp.codegen(target=...)`` of each
kernel of :data:`KERNELS`, byte for byte: the constructors of ``spf.kernels``, the SpMV of
each built-in format (``spf.kernels.spmv(fmt)``), a wavefront kernel (its executor and its
inspector) and an einsum SpAdd (both phases). A target that refuses a kernel has its refusal
(``<kernel>.refused.txt``, the ``SpfError`` class and message) as the golden content, so a
refusal that changes, or one that goes away, shows up as a diff too.

Only code is generated here (no compiler runs); each Computation is built once and shared by
its four targets. After an intended change of the generators, check the diff a failure
prints, then rewrite the files with ``pytest tests/unit/codegen/test_codegen_golden.py
--update-golden`` and commit them with the change.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import spf
from spf import kernels
from spf.formats import BCSR, BDIA, SELL, builtin

if TYPE_CHECKING:
    from collections.abc import Callable


@functools.cache
def _spgemm_parallel() -> kernels.SpGEMM:
    return kernels.spgemm_csr()


@functools.cache
def _spadd() -> kernels.SpGEMM:
    csr = builtin("CSR")
    spadd = spf.einsum("C(i,j) = A(i,j) + B(i,j)", A=csr, B=csr, C=csr)
    assert isinstance(spadd, kernels.SpGEMM)
    return spadd


def _sptrsv_wavefront() -> spf.Computation:
    comp = kernels.sptrsv_csr()
    comp.wavefront("i")
    return comp


KERNELS: dict[str, Callable[[], spf.Computation]] = {
    # the constructors of spf.kernels
    "dense_mv": kernels.dense_mv,
    "gemm": kernels.gemm,
    "spmv_csr": kernels.spmv_csr,
    "spmv_csr_int64": lambda: kernels.spmv_csr(index_dtype="int64"),
    "spmtv_csr": kernels.spmtv_csr,
    "spmv_coo": kernels.spmv_coo,
    "spmv_csc": kernels.spmv_csc,
    "spmv_bcsr_2x2": lambda: kernels.spmv_bcsr(2, 2),
    "sptrsv_csr": kernels.sptrsv_csr,
    "sptrsv_csr_general": lambda: kernels.sptrsv_csr(triangular=False),
    "gauss_seidel_csr": kernels.gauss_seidel_csr,
    "trsv_diag_csr": kernels.trsv_diag_csr,
    "trsv_diag_csr_upper_unit": lambda: kernels.trsv_diag_csr(upper=True, unit=True),
    "ilu0_csr": kernels.ilu0_csr,
    "spmm_csr": kernels.spmm_csr,
    "spgemm_symbolic": kernels.spgemm_symbolic,
    "spgemm_numeric": kernels.spgemm_numeric,
    "spgemm_csr_symbolic": lambda: _spgemm_parallel().symbolic,
    "spgemm_csr_numeric": lambda: _spgemm_parallel().numeric,
    "blur2d": kernels.blur2d,
    "jacobi2d": kernels.jacobi2d,
    # kernels.spmv(fmt) for each built-in format
    **{
        f"spmv_format_{name.lower()}": functools.partial(kernels.spmv, builtin(name))
        for name in ("COO", "CSR", "CSC", "DIA", "ELL")
    },
    "spmv_format_bcsr_2x2": lambda: kernels.spmv(BCSR(2, 2)),
    "spmv_format_bdia_2": lambda: kernels.spmv(BDIA(2)),
    "spmv_format_sell_4_8": lambda: kernels.spmv(SELL(4, 8)),
    # a wavefront loop: the executor (its kernel) and the inspector it runs first
    "sptrsv_wavefront": _sptrsv_wavefront,
    "sptrsv_wavefront_inspector": lambda: _sptrsv_wavefront().inspector("i"),
    # einsum with a sparse output: SpAdd C = A + B in CSR, both phases
    "spadd_symbolic": lambda: _spadd().symbolic,
    "spadd_numeric": lambda: _spadd().numeric,
}

# target -> extension of its golden files
TARGETS = {"c": "c", "cuda": "cu", "mpi": "c", "hls": "cpp"}


@functools.cache
def computation(kernel: str) -> spf.Computation:
    """The Computation of ``kernel``, built once for all targets."""
    return KERNELS[kernel]()


@functools.cache
def generated(kernel: str, target: str) -> tuple[str, str]:
    """``(golden path under tests/golden/, text)``: the code ``target`` generates for
    ``kernel``, or its refusal (``<Error>: message``) when ``target`` refuses it."""
    base = f"codegen/{target}/{kernel}"
    try:
        return f"{base}.{TARGETS[target]}", computation(kernel).codegen(target=target)
    except spf.SpfError as err:
        return f"{base}.refused.txt", f"{type(err).__name__}: {err}\n"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_generated_code_matches_golden(
    kernel: str, target: str, golden: Callable[[str, str], None]
) -> None:
    golden(*generated(kernel, target))


def test_every_kernel_constructor_has_golden_code() -> None:
    """A constructor added to spf.kernels must get golden files too: a case of KERNELS named
    after it (``spmv_bcsr_2x2`` for ``spmv_bcsr``, ``spgemm_csr_numeric`` for ``spgemm_csr``)."""
    constructors = [
        name for name in kernels.__all__ if name[0].islower() and callable(getattr(kernels, name))
    ]
    missing = [
        name
        for name in constructors
        if not any(k == name or k.startswith(f"{name}_") for k in KERNELS)
    ]
    assert not missing, (
        f"spf.kernels constructors without golden code (add them to KERNELS): {missing}"
    )


def test_golden_folder_holds_only_current_cases(request: pytest.FixtureRequest) -> None:
    """No stale golden file is left behind when a case is renamed or removed, or when a
    refusal becomes code (or the other way round); ``--update-golden`` deletes them."""
    root = Path(__file__).resolve().parents[2] / "golden"
    expected = {generated(kernel, target)[0] for target in TARGETS for kernel in KERNELS}
    present = {p.relative_to(root).as_posix() for p in (root / "codegen").rglob("*") if p.is_file()}
    stale = sorted(present - expected)
    if request.config.getoption("--update-golden"):
        for relative in stale:
            (root / relative).unlink()
        return
    assert not stale, (
        f"golden files of no current case (pytest --update-golden deletes them): {stale}"
    )
