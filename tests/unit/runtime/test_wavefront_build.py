"""How many compiler runs a wavefront costs (issue 28, API.md §16): ``compile()`` builds the
inspector's pass over the dependences with its counting sorts as one translation unit (at
``-O2`` unless ``cflags`` are given) and generates the executor, which is compiled (its own
unit) when a call first runs it: a first call that plans the loop serial never does; every
later wavefront over the same nodes loads those sorts (remembered) instead of building
them; the serial kernel of a ``"serial"`` plan is compiled once, when such a plan first
runs, and a coarse kernel's level sort when a plan's level order is first read; a second
compile of the same state runs no compiler (:mod:`spf.runtime.warm`), nor does a second
computation's sort."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve_triangular

import spf
from spf import kernels
from spf.analysis import legality
from spf.analysis.bounds import check_bounds
from spf.analysis.coarse_inspector import (
    build_pair_sort,
    build_ranged_count,
    build_ranged_sort,
    build_run_fill,
    build_run_reach,
    build_split_passes,
)
from spf.analysis.executor import build_executor
from spf.analysis.inspector import build_level_sort
from spf.codegen.unit import Function, TranslationUnit
from spf.runtime import build
from spf.runtime.combine import combine
from spf.runtime.plan import WavefrontKernel
from spf.sparse import sptrsv_args

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def compiler_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source file of each compiler run from now on."""
    runs: list[str] = []
    real = build._run_compiler

    def counting(cmd: list[str], name: str, entry: Any) -> str:
        runs.append(str(entry.source))
        return real(cmd, name, entry)

    monkeypatch.setattr(build, "_run_compiler", counting)
    return runs


def lower(n: int, index_dtype: str) -> sp.csr_array:
    rng = np.random.default_rng(7)
    a = sp.tril(sp.random(n, n, density=0.2, format="csr", random_state=rng), k=-1)
    m = sp.csr_array(a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0))
    m.indptr, m.indices = m.indptr.astype(index_dtype), m.indices.astype(index_dtype)
    return m


def sptrsv_wavefront(cache_dir: Path) -> WavefrontKernel:
    comp = kernels.sptrsv_csr(index_dtype="int32")
    comp.wavefront("i")
    k = comp.compile(cache_dir=str(cache_dir))
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.mark.default_flags  # spf's own flags in the commands
def test_a_wavefront_compile_runs_the_compiler_once_and_serial_plans_once_more(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    k = sptrsv_wavefront(tmp_path)
    assert len(compiler_runs) == 1  # the inspector's pass and its sorts
    pass_k, *sorts = k._stages
    assert len(sorts) == 3
    assert len({st.path for st in k._stages}) == 1  # the pass and the sorts share a unit
    assert k.path != pass_k.path  # the executor: compiled when first needed (here, its path)
    assert len(compiler_runs) == 2
    assert shlex.split(k.command)[2:4] == list(build.DEFAULT_OPT_FLAGS)
    for stage in k._stages:  # code run once per matrix: the cheaper flags
        assert shlex.split(stage.command)[2:4] == list(build.LIGHT_OPT_FLAGS)
    assert all(f"void {k.name}(" not in st.source for st in k._stages)  # each its own source
    for n in (0, 1, 9, 57):
        m = lower(n, "int32")
        f = np.arange(1.0, n + 1.0)
        want = spsolve_triangular(sp.csr_matrix(m), f, lower=True) if n else f
        args = sptrsv_args(m)
        for strategy in ("wavefront", "serial"):
            u = np.zeros(n)
            k(u=u, f=f, **args, plan=k.inspect(**args, strategy=strategy))
            np.testing.assert_allclose(u, want, rtol=1e-12)
    assert len(compiler_runs) == 3  # the serial kernel, on the first serial plan only
    assert "serial" in compiler_runs[2]


def test_the_pass_is_built_checked_and_the_sorts_after_it_unchecked(tmp_path: Path) -> None:
    """A checked inspection checks the index arrays in the pass that reads them; the sorts
    read only the levels it wrote, so they are built without checks (no checked function,
    fact plan or bounds proof: a cold compile's cheaper half) and called unchecked."""
    k = sptrsv_wavefront(tmp_path)
    pass_k, *sorts = k._stages
    assert pass_k._checked is not None
    assert [st._checked for st in sorts] == [None] * len(sorts)
    m = lower(40, "int32")
    args = sptrsv_args(m)
    bad = {**args, "col": args["col"].copy()}
    bad["col"][-2] = 40  # a column past the last row: the pass's checks catch it
    with pytest.raises(spf.ArgumentError):
        k.inspect(**bad)


@pytest.mark.parametrize("kernel", [kernels.sptrsv_csr, kernels.gauss_seidel_csr, kernels.ilu0_csr])
def test_the_stages_built_unchecked_have_legal_schedules_and_accesses(kernel: Any) -> None:
    """What a checked build proved of the stages built unchecked, proved here: each
    schedule keeps its dependences (the sorts, the split passes and their counts), and the
    bounds the sorts leave to run time (a checked build's obligations) read none of the
    user's index arrays, only the levels and slots spf's stages wrote."""
    comp = kernel()
    comp.wavefront("i")
    ir = comp.ir
    ((analysis, _),) = build_executor(ir).loops
    sorts = [
        *build_pair_sort(analysis, "s"),
        *build_level_sort(analysis, "l"),
        *build_ranged_sort(analysis, "r"),
        *build_ranged_count(analysis, "r"),
        build_run_fill(analysis, "f"),
        build_run_reach(analysis, "h"),
    ]
    for stage in [*sorts, *(build_split_passes(ir, analysis) or ())]:
        legality.check(stage)
    for stage in sorts:
        assert not set(stage.uf_decls) & set(ir.uf_decls), stage.name
        for obligation in check_bounds(stage).obligations:
            read = set(re.findall(r"(\w+)\(", obligation.text))
            assert read, (stage.name, obligation.text)
            assert read <= set(stage.uf_decls), (stage.name, obligation.text)


def test_flags_given_to_a_wavefront_compile_build_every_unit(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    comp = kernels.sptrsv_csr(index_dtype="int32")
    comp.wavefront("i")
    k = comp.compile(cache_dir=str(tmp_path), cflags=["-O1"])
    assert isinstance(k, WavefrontKernel)
    for part in (k, *k._stages):
        assert shlex.split(part.command)[1:3] == ["-std=c99", "-O1"]
    m = lower(33, "int64")
    args = sptrsv_args(m)
    f = np.linspace(-1.0, 1.0, 33)
    u = np.zeros(33)
    k(u=u, f=f, **args, plan=k.inspect(**args, strategy="wavefront"))
    np.testing.assert_allclose(u, spsolve_triangular(sp.csr_matrix(m), f, lower=True))


def test_a_second_wavefront_compile_of_the_same_state_runs_no_compiler(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    first = sptrsv_wavefront(tmp_path)
    assert first.path  # the executor compiled
    again = sptrsv_wavefront(tmp_path)
    assert len(compiler_runs) == 2
    assert again.path == first.path
    assert len(compiler_runs) == 2
    m = lower(40, "int32")
    args = sptrsv_args(m)
    f = np.linspace(1.0, 2.0, 40)
    u1, u2 = np.zeros(40), np.zeros(40)
    first(u=u1, f=f, **args, plan=first.inspect(**args, strategy="wavefront"))
    again(u=u2, f=f, **args, plan=again.inspect(**args, strategy="wavefront"))
    assert np.array_equal(u1, u2)


def test_wavefronts_over_the_same_nodes_share_their_counting_sorts(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    first = sptrsv_wavefront(tmp_path)
    comp = kernels.sptrsv_csr(index_dtype="int64")  # other index types: another executor
    comp.wavefront("i")
    second = comp.compile(cache_dir=str(tmp_path))
    assert isinstance(second, WavefrontKernel)
    assert len(compiler_runs) == 2  # its pass; the sorts were built
    assert second.path != first.path
    assert len(compiler_runs) == 4  # the two executors, compiled when first needed
    assert second._stages[0].path != first._stages[0].path
    assert [st.path for st in second._stages[1:]] == [st.path for st in first._stages[1:]]
    m = lower(45, "int64")
    args = sptrsv_args(m, "int64")
    f = np.linspace(-2.0, 1.0, 45)
    want = spsolve_triangular(sp.csr_matrix(m), f, lower=True)
    for strategy in ("coarse", "levels"):
        u = np.zeros(45)
        second(u=u, f=f, **args, plan=second.inspect(**args, strategy=strategy))
        np.testing.assert_allclose(u, want, rtol=1e-12)


def test_a_coarse_kernel_compiles_its_level_sort_when_a_plan_s_level_order_is_read(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    k = sptrsv_wavefront(tmp_path)
    m = lower(57, "int32")
    args = sptrsv_args(m)
    plan = k.inspect(**args, strategy="coarse")
    assert len(compiler_runs) == 1
    level = np.asarray(plan.level_of)
    assert np.array_equal(plan.order, np.argsort(level, kind="stable"))
    assert len(compiler_runs) == 2
    assert "spf_sort_i_N_levels" in compiler_runs[1]
    sizes = np.bincount(level, minlength=plan.levels)
    assert np.array_equal(plan.levelptr, np.concatenate([[0], np.cumsum(sizes)]))
    again = k.inspect(**sptrsv_args(lower(20, "int32")), strategy="serial")
    assert len(again.order) == 20
    assert len(compiler_runs) == 2  # compiled once per kernel


PART = """#include <stdint.h>
#define s0(i) out[i] = {value}
#ifndef SPF_GUARD
#define SPF_GUARD
static int64_t spf_helper(int64_t v) {{ return v + {value}; }}
#endif
static inline int64_t spf_twice(int64_t v) {{ return 2 * v + {value}; }}
void {name}(int64_t *out) {{ s0(0); out[1] = spf_twice(spf_helper(1)); }}
"""


def part(name: str, value: int) -> TranslationUnit:
    """:data:`PART` with the record a printer would make of it."""
    return TranslationUnit(
        PART.format(name=name, value=value),
        functions=(
            Function("spf_helper", "int64_t spf_helper(int64_t v)", static=True),
            Function("spf_twice", "int64_t spf_twice(int64_t v)", static=True),
            Function(name, f"void {name}(int64_t *out)"),
        ),
        macros=("s0", "SPF_GUARD"),
        shareable=True,
    )


def test_combined_parts_keep_their_own_macros_and_helpers(tmp_path: Path) -> None:
    import cffi

    unit = combine([part("a", 1), part("b", 5)])
    assert unit is not None
    assert unit.exported == ("a", "b")
    assert not unit.parallel
    lib_path = build.build_c(unit.source, name="combined", openmp=False, cache_dir=tmp_path)
    ffi = cffi.FFI()
    ffi.cdef("void a(int64_t *out); void b(int64_t *out);")
    lib = ffi.dlopen(str(lib_path))
    for fn, value in ((lib.a, 1), (lib.b, 5)):
        out = ffi.new("int64_t[2]")
        fn(out)
        assert list(out) == [value, 2 * (1 + value) + value]


@pytest.mark.parametrize(
    "other",
    [
        part("a", 2),  # exports the same function
        TranslationUnit("typedef int spf_t;\nvoid c(void) {}\n"),  # a type: not shareable
        TranslationUnit.hand_written("static int64_t t[2] = {0, 1};\nvoid c(void) {}\n"),
    ],
)
def test_parts_that_cannot_share_a_unit_are_not_combined(other: TranslationUnit) -> None:
    assert combine([part("a", 1), other]) is None


def test_a_damaged_shared_library_is_built_again(tmp_path: Path, compiler_runs: list[str]) -> None:
    first = sptrsv_wavefront(tmp_path)
    first.path.unlink()  # a new file: the loaded library's pages must stay as they are
    first.path.write_bytes(b"\0" * 64)
    again = sptrsv_wavefront(tmp_path)
    assert len(compiler_runs) == 2  # the executor: compiled when first needed
    m = lower(30, "int32")
    args = sptrsv_args(m)
    f = np.ones(30)
    u = np.zeros(30)
    again(u=u, f=f, **args, plan=again.inspect(**args, strategy="wavefront"))
    np.testing.assert_allclose(u, spsolve_triangular(sp.csr_matrix(m), f, lower=True))
    assert len(compiler_runs) == 3  # the remembered entry is not trusted: built again
    assert compiler_runs.count(compiler_runs[2]) == 2  # the executor's, compiled again


def test_a_first_call_planned_serial_compiles_no_executor(
    tmp_path: Path, compiler_runs: list[str]
) -> None:
    """The executor is generated by ``compile()`` (its analysis and errors there) and compiled
    when a call first runs it: a call whose plan runs the loop serial (the default plan of a
    small matrix) compiles the serial kernel only; reading an attribute no kernel has compiles
    nothing, nor does reading its source; the executor is compiled once, by the first call
    that runs it (or a read of its path)."""
    k = sptrsv_wavefront(tmp_path)
    assert len(compiler_runs) == 1
    m = lower(60, "int32")
    args = sptrsv_args(m)
    f = np.linspace(1.0, 3.0, 60)
    want = spsolve_triangular(sp.csr_matrix(m), f, lower=True)
    assert k.inspect(**args).strategy == "serial"
    u = np.zeros(60)
    k(u=u, f=f, **args)
    np.testing.assert_allclose(u, want, rtol=1e-12)
    assert getattr(k, "no_such_attribute", None) is None
    source = k.source  # generated by compile(): printed without gcc
    assert f"void {k.name}(" in source
    assert k.unit.source == source
    assert len(compiler_runs) == 2
    assert "serial" in compiler_runs[1]
    assert [a.name for a in k.arguments] == [a.name for a in k._signature.args]
    for _ in range(2):
        v = np.zeros(60)
        k(u=v, f=f, **args, plan=k.inspect(**args, strategy="wavefront"))
        assert np.array_equal(u, v)
    assert k.path.exists()  # the executor: compiled by the first call that ran it, or here
    assert len(compiler_runs) == 3
    assert k.source == source  # the loaded executor's own, the same text
