"""The translation-unit record (spf.codegen.unit): what the printers note as they print.

The runtime reads the record, never the text (combining units, OpenMP, CUDA kernels), so
the record must name everything the text defines. These tests hold it against a reading of
the text done here, in the test only: the functions at file scope (``static`` or not), the
macros defined at file scope, the ``__global__`` kernels.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
import scipy.sparse as sp

import spf
from spf import kernels
from spf.codegen import generate
from spf.codegen.unit import TranslationUnit
from spf.formats import builtin
from spf.runtime.combine import combine
from spf.sparse import csr_args

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_TOP = re.compile(r"^(?![ \t#{}/*]|$)(.*)$", re.M)
"""A line at column 0 with code (not a directive, brace, comment or blank line)."""
_STATIC = re.compile(r"^static\b[^(;={]*?\b(\w+)\s*\(")
_EXPORTED = re.compile(r"^(?:const\s+)?\w+[\s*]+(\w+)\s*\(")
_DEFINE = re.compile(r"^#define\s+(\w+)", re.M)
_UNDEF = re.compile(r"^\s*#undef\s+(\w+)", re.M)


def _read_back(source: str) -> tuple[set[str], set[str], set[str]]:
    """The static functions, the exported functions and the macros ``source`` defines at
    file scope, read from its text (the oracle of these tests)."""
    statics, exported = set(), set()
    for line in _TOP.findall(source):
        found = _STATIC.match(line) or _EXPORTED.match(line)
        assert found is not None, f"not a function at file scope: {line}"
        (statics if line.startswith("static") else exported).add(found.group(1))
    return statics, exported, set(_DEFINE.findall(source))


CASES: dict[str, Callable[[], spf.Computation]] = {
    "gemm": kernels.gemm,
    "spmv_csr": kernels.spmv_csr,
    "spmv_csr_int64": lambda: kernels.spmv_csr(index_dtype="int64"),
    "sptrsv_csr": kernels.sptrsv_csr,
    "gauss_seidel_csr": kernels.gauss_seidel_csr,
    "ilu0_csr": kernels.ilu0_csr,
    "spgemm_symbolic": kernels.spgemm_symbolic,
    "spmv_format_ell": functools.partial(kernels.spmv, builtin("ELL")),
    "spmv_format_coo": functools.partial(kernels.spmv, builtin("COO")),
}


@functools.cache
def _unit(case: str) -> TranslationUnit:
    """The unit ``compile()`` builds (checked reads included) of ``CASES[case]``."""
    unit, _ = generate(CASES[case](), "c", case, True, arg_checks=True)
    return unit


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_record_names_every_function_and_macro_the_text_defines(case: str) -> None:
    unit = _unit(case)
    statics, exported, defined = _read_back(unit.source)
    assert set(unit.statics) == statics
    assert set(unit.exported) == exported
    assert unit.exported[0] == case or case + "_spf_faults" in unit.exported
    assert set(unit.macros) <= defined, "a noted macro the text does not define"
    undefined_later = set(_UNDEF.findall(unit.source))
    assert defined - set(unit.macros) <= undefined_later, "a macro left defined, not noted"
    assert unit.shareable
    assert unit.target == "c"


def test_a_unit_survives_its_data_form() -> None:
    unit = _unit("spmv_csr")
    assert TranslationUnit.from_data(unit.to_data()) == unit
    with pytest.raises(ValueError, match="format"):
        TranslationUnit.from_data({**unit.to_data(), "format": 0})


def test_openmp_is_noted_from_the_pragmas_printed() -> None:
    assert not _unit("spmv_csr").openmp
    assert not _unit("spmv_csr").parallel
    parallel = kernels.spmv_csr()
    parallel.stmts[0].parallelize("i")
    unit, _ = generate(parallel, "c", "par", True)
    assert unit.openmp
    assert unit.parallel
    vector = spf.kernels.dense_mv()
    vector.stmts[0].vectorize("j", 4)
    unit, _ = generate(vector, "c", "vec", False)  # the pragma only: not run
    assert unit.openmp
    assert not unit.parallel, "a simd loop is not a parallel region"


def test_cuda_units_name_their_kernels() -> None:
    comp = spf.Computation("t")
    comp.add_data_space("B", "float", shape=("N", "N"))
    comp.add_data_space("A", "float", shape=("N", "N"))
    s = comp.add_stmt(
        spf.Stmt(
            "$B$(j,i) = $A$(i,j);", "{[i,j]: 0 <= i < N && 0 <= j < N}", "{[i,j]->[0,i,0,j,0]}"
        )
    )
    s.tile_gpu("i", "j", 16, 16)
    unit, _ = generate(comp, "cuda", "t", True)
    found = re.findall(r'extern "C" __global__ void (\w+)\(', unit.source)
    assert unit.kernels == tuple(found) == ("t_k0",)
    assert unit.target == "cuda"
    assert not unit.shareable


def test_combined_units_build_and_run(tmp_path: Path) -> None:
    """Two units whose helpers share names (``spf_fault_note``, ``spf_read_*``) combine by
    their records into one that builds and runs both kernels."""
    from spf.codegen.program import signature
    from spf.runtime.kernel import Kernel

    comps = [kernels.spmv_csr(), kernels.spmv_csr(index_dtype="int64")]
    units = [_unit("spmv_csr"), _unit("spmv_csr_int64")]
    unit = combine(units)
    assert unit is not None
    assert set(unit.exported) == set(units[0].exported) | set(units[1].exported)
    names = ("spmv_csr", "spmv_csr_int64")
    sigs = [signature(c.ir, name) for c, name in zip(comps, names, strict=True)]
    built = Kernel.build_many(
        list(zip(sigs, units, strict=True)), unit.source, "both", cache_dir=str(tmp_path)
    )
    rng = np.random.default_rng(3)
    m = sp.random_array((7, 5), density=0.4, format="lil", rng=rng)
    m[2, :] = 0  # an empty row
    m = sp.csr_array(m)
    x = rng.random(5)
    for kernel, dtype in zip(built, ("int32", "int64"), strict=True):
        for check in (True, False):
            y = np.zeros(7)
            kernel(y=y, x=x, **csr_args(m, index_dtype=dtype), check=check)
            np.testing.assert_allclose(y, m @ x)


def test_hls_units_record_their_bounds() -> None:
    """``compile(target="hls")`` checks ``hls_bounds`` against the record, not the header."""
    from spf.codegen.hls import generate_unit, parse_bounds_header

    unit = generate_unit(kernels.gemm(), "gemm", hls_bounds={"N": 4, "M": (1, 8)})
    assert unit.bounds == (("M", 1, 8), ("N", 0, 4))
    assert {n: (lo, hi) for n, lo, hi in unit.bounds} == parse_bounds_header(unit.source)
    assert unit.target == "hls"
    assert unit.exported == ("gemm",)
