"""A warm ``spf.einsum(...).compile()`` loads the kernels compiled before for the same formula
without building the Computation or generating code (spf.index_notation.remembered); one
the user touched takes the ordinary path."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.codegen
import spf.index_notation.remembered as remembered
import spf.index_notation.sparse_output as sparse_output
from spf.formats import CSR
from spf.index_notation import Einsum

SPADD = "C(i,j) = A(i,j) + B(i,j)"
SPMV = "y(i) = A(i,j) * x(j)"


@pytest.fixture(scope="module", autouse=True)
def _same_team_everywhere() -> Iterator[None]:
    """A sparse output's first compile builds the group of phases its row loop's team
    selects (spf.runtime.threads.GOVERNOR: the cores other processes leave free, read again
    every 0.2 s) and each group is remembered on its own: here, and in the interpreters the
    tests start, the team is OpenMP's own, so every compile asks for the same group on a
    loaded machine too (a child that read one free core looked for the single pass where
    this process had remembered the two phases, and generated code)."""
    from spf.runtime.threads import ENV, set_adaptive

    previous, env = set_adaptive(False), os.environ.get(ENV)
    os.environ[ENV] = "0"
    try:
        yield
    finally:
        set_adaptive(previous)
        if env is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = env


def _refuse(what: str) -> Any:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a warm einsum compile ran {what}")

    return refused


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding SpAdd (CSR + CSR -> CSR) and SpMV, compiled once."""
    where = tmp_path_factory.mktemp("einsum-cache")
    spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(where))
    spf.einsum(SPMV, A=CSR).compile(cache_dir=str(where))
    return where


def _csr(seed: int) -> Any:
    a = sp.random_array((7, 5), density=0.4, format="csr", rng=seed)
    a.indptr, a.indices = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    return a


def test_a_warm_einsum_compile_builds_no_computation_and_generates_no_code(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("_symbolic", "_numeric"):
        monkeypatch.setattr(sparse_output, name, _refuse(f"sparse_output.{name}"))
    monkeypatch.setattr(Einsum, "_build", _refuse("Einsum._build"))
    monkeypatch.setattr(spf.codegen, "generate", _refuse("code generation"))
    monkeypatch.setattr("spf.runtime.compile.compile_kernel", _refuse("compile_kernel"))
    loads = remembered.LOADS
    add = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(cache))
    mv = spf.einsum(SPMV, A=CSR).compile(cache_dir=str(cache))
    assert remembered.LOADS - loads == 2
    a, b = _csr(1), _csr(2)
    out = add(**spf.sparse.csr_args(a, prefix="A_"), **spf.sparse.csr_args(b, prefix="B_"))
    want = sp.csr_array(a + b)
    want.sort_indices()
    assert np.array_equal(out["rowptr"], want.indptr)
    assert np.array_equal(out["col"], want.indices)
    assert np.allclose(out["A"], want.data)
    y = np.zeros(7)
    mv(y=y, x=np.arange(5.0), **spf.sparse.csr_args(a, prefix="A_"))
    assert np.allclose(y, a @ np.arange(5.0))


def test_a_warm_load_does_not_derive_the_fact_checks_bounds_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the kernel was validated when it was built (an unbounded check is refused then)
    monkeypatch.setattr("spf.runtime.fact_check.check_domain", _refuse("check_domain"))
    loads = remembered.LOADS
    kernel = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(cache))
    assert remembered.LOADS - loads == 1
    assert kernel.numeric._binder._facts is not None  # it has facts to check


def test_a_touched_einsum_compiles_what_was_done_to_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remembered.Remembered, "load", _refuse("a remembered load"))
    comp = spf.einsum(SPMV, A=CSR)
    assert isinstance(comp, Einsum)
    comp.stmt("s1").parallelize("i")  # changes the code: the formula's entry is not it
    kernel = comp.compile(cache_dir=str(cache))
    assert "#pragma omp parallel" in kernel.source
    add = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR)
    assert isinstance(add, sparse_output.SparseEinsum)
    assert "for" in add.numeric.loop_structure()
    add.compile(cache_dir=str(cache))


def test_another_formula_or_option_is_not_the_remembered_kernel(cache: Path) -> None:
    f = spf.einsum(SPMV, A=CSR).formula
    key = remembered.remembered(f, "einsum_y", False, ("c", None, True), {}).key  # type: ignore[union-attr]
    other = spf.einsum(SPMV, A=CSR, index_dtype="int64").formula
    for args in (
        (other, "einsum_y", False, ("c", None, True), {}),
        (f, "einsum_z", False, ("c", None, True), {}),
        (f, "einsum_y", False, ("c", None, False), {}),
        (f, "einsum_y", False, ("c", None, True), {"openmp": False}),
    ):
        found = remembered.remembered(*args)  # type: ignore[arg-type]
        assert found is not None
        assert found.key != key
    assert remembered.remembered(f, "einsum_y", False, ("cuda", None, True), {}) is None


def _in_a_child(code: str, **env: str) -> str:
    """What ``code`` prints, run by a fresh interpreter on this spf (``env`` added)."""
    root = str(Path(spf.__file__).resolve().parent.parent)
    path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path, **env},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_fresh_interpreter_loads_the_remembered_kernel(cache: Path) -> None:
    child = textwrap.dedent(
        f"""
        import spf, spf.codegen
        import spf.index_notation.remembered as remembered
        from spf.formats import CSR

        def refused(*args, **kwargs):
            raise AssertionError("code generation ran")

        spf.codegen.generate = refused
        spf.einsum({SPADD!r}, A=CSR, B=CSR, C=CSR).compile(cache_dir={str(cache)!r})
        print(remembered.LOADS)
        """
    )
    assert _in_a_child(child) == "1"


def test_the_row_loops_of_a_sparse_output_are_proved_without_every_dependence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The phases' parallel row loops share only the loop's own workspaces between most
    statement pairs: ``carries_nothing`` proves them from the few others."""
    comp = spf.einsum("C(i,j) = A(i,k) * B(k,j)", A=CSR, B=CSR, C=CSR)
    assert isinstance(comp, sparse_output.SparseEinsum)
    monkeypatch.setattr("spf.analysis.dependences._compute", _refuse("every dependence"))
    for phase in (comp.symbolic, comp.numeric):
        assert any("parallel" in t for s in phase.stmts for ts in s.tags.values() for t in ts)
        phase.check_legality()


def test_a_row_loop_that_carries_a_dependence_is_still_refused() -> None:
    comp = spf.Computation("carried")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_local("w", "double", ("N",))
    comp.add_stmt(spf.Stmt("$w$(i) = $x$(i);", "{[i]: 1 <= i < N}", "{[i] -> [0, i, 0]}"))
    comp.add_stmt(
        spf.Stmt("$x$(i) = $x$(i - 1) + w(i);", "{[i]: 1 <= i < N}", "{[i] -> [0, i, 1]}")
    )
    comp.stmt("s0").workspace("w", "i")
    comp.stmt("s0").parallelize("i")
    with pytest.raises(spf.IllegalScheduleError, match="cannot run in parallel"):
        comp.check_legality()


def test_a_kernel_remembered_by_another_interpreter_checks_its_facts(tmp_path: Path) -> None:
    """The entry's facts were pickled by a process with another hash seed (an xdist worker
    loading what the other one compiled): the checked call's remembered fact (sorted
    columns, over pairs) builds its check loops from them and runs (it raised a ParseError
    on the internal name ``__t0`` while pickled atoms kept the other process's hash)."""
    text = "C(i,j) = A(i,j) * B(i,j)"
    child = textwrap.dedent(
        f"""
        import spf
        from spf.formats import CSR
        spf.einsum({text!r}, index_dtype="int32", A=CSR, B=CSR, C=CSR).compile(
            cache_dir={str(tmp_path)!r}
        )
        """
    )
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # not this process's
    _in_a_child(child, PYTHONHASHSEED=seed)
    loads = remembered.LOADS
    kernel = spf.einsum(text, index_dtype="int32", A=CSR, B=CSR, C=CSR).compile(
        cache_dir=str(tmp_path)
    )
    assert remembered.LOADS - loads == 1
    a, b = _csr(3), _csr(4)
    args = {**spf.sparse.csr_args(a, prefix="A_"), **spf.sparse.csr_args(b, prefix="B_")}
    out = kernel(**args)
    want = sp.csr_array(a.multiply(b))
    want.sort_indices()
    assert np.array_equal(out["rowptr"], want.indptr)
    assert np.array_equal(out["col"], want.indices)
    assert np.allclose(out["A"], want.data)
    col = args["A_col"].copy()  # csr_args sorts its copy: unsort the array it gave
    first = int(a.indptr[int(np.argmax(np.diff(a.indptr)))])  # a row of 2 entries or more
    col[[first, first + 1]] = col[[first + 1, first]]
    with pytest.raises(spf.ArgumentError, match=r"A_col\(k1\) < A_col\(k2\)"):
        kernel(**{**args, "A_col": col})


@pytest.mark.parametrize("make", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_a_copied_einsum_stays_untouched(cache: Path, make: Any) -> None:
    """Copying an einsum never used builds neither it nor the copy (``copy`` looks up
    ``__deepcopy__`` on the object): both still load the remembered kernel."""
    comp = spf.einsum(SPMV, A=CSR)
    other = make(comp)
    assert "_pending" in comp.__dict__
    assert "_pending" in other.__dict__
    loads = remembered.LOADS
    kernel = other.compile(cache_dir=str(cache))
    assert remembered.LOADS - loads == 1
    a = _csr(3)
    y = np.zeros(7)
    kernel(y=y, x=np.arange(5.0), **spf.sparse.csr_args(a, prefix="A_"))
    assert np.allclose(y, a @ np.arange(5.0))
