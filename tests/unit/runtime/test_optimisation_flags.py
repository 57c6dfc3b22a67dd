"""The optimisation flags of each kind of translation unit (spf.runtime.compile.
optimisation_flags, docs/backends/c.md): ``-O3 -march=native`` by default, ``-O2`` for a
sparse einsum output's phases (measured as fast there, and cheaper to compile) and for a
wavefront's inspector stages; flags the caller gives always win; a warm compile finds the
kernels built with the flags it was keyed by."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
import scipy.sparse as sp

import spf
import spf.index_notation.remembered as remembered
from spf.formats import CSR
from spf.runtime import build
from spf.runtime.compile import optimisation_flags
from spf.sparse import csr_args

if TYPE_CHECKING:
    from pathlib import Path

# the flags' own tests: spf's default flags, not the suite's SPF_TEST_OPT_LEVEL
pytestmark = pytest.mark.default_flags

SPADD = "C(i,j) = A(i,j) + B(i,j)"


def _opt(kernel: Any) -> list[str]:
    """The two flags after ``-std=c99`` in the command that built ``kernel``."""
    return shlex.split(kernel.command)[2:4]


def test_the_caller_s_flags_win_over_every_kind() -> None:
    assert optimisation_flags(None) is None  # build.DEFAULT_OPT_FLAGS
    assert optimisation_flags(None, "sparse_output") == build.LIGHT_OPT_FLAGS
    assert optimisation_flags(None, "light") is None
    assert optimisation_flags(None, "light", ["-O1"]) == ["-O1"]
    for kind in ("kernel", "light", "sparse_output"):
        assert optimisation_flags(["-O1", "-g"], kind, ["-O2"]) == ["-O1", "-g"]  # type: ignore[arg-type]


def test_the_suite_s_level_reaches_the_light_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SPF_TEST_OPT_LEVEL`` (``make test``'s ``-O1``) replaces the ``-O2`` of the inspector
    stages and sparse einsum phases as it replaces the kernels' ``-O3``; unset, spf's own."""
    assert build.light_opt_flags() == build.LIGHT_OPT_FLAGS
    monkeypatch.setenv(build.TEST_OPT_LEVEL_ENV, "1")
    assert build.light_opt_flags() == ("-O1", "-march=native") == build.default_opt_flags()
    assert optimisation_flags(None, "sparse_output") == ("-O1", "-march=native")
    monkeypatch.setenv(build.TEST_OPT_LEVEL_ENV, "fast")
    with pytest.raises(spf.ArgumentError, match="SPF_TEST_OPT_LEVEL"):
        build.light_opt_flags()


def test_a_sparse_output_s_phases_build_at_o2_a_dense_output_at_o3(tmp_path: Path) -> None:
    a = sp.random_array((9, 7), density=0.3, format="csr", rng=1)
    b = sp.random_array((9, 7), density=0.3, format="csr", rng=2)
    args = {**csr_args(a, "int32", prefix="A_"), **csr_args(b, "int32", prefix="B_")}
    add = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, parallel=False).compile(cache_dir=str(tmp_path))
    got = add(**args)
    want = sp.csr_array(a + b)
    want.sort_indices()
    assert np.array_equal(got["col"], want.indices)
    assert np.array_equal(got["A"], want.data)
    single = add.single
    assert single is not None
    assert _opt(single.kernel) == list(build.LIGHT_OPT_FLAGS)
    assert _opt(add.numeric) == _opt(add.symbolic) == list(build.LIGHT_OPT_FLAGS)
    mv = spf.einsum("y(i) = A(i,j) * x(j)", A=CSR).compile(cache_dir=str(tmp_path))
    assert _opt(mv.kernel) == list(build.DEFAULT_OPT_FLAGS)
    given = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR).compile(cache_dir=str(tmp_path), cflags=["-O1"])
    assert shlex.split(given.symbolic.command)[2] == "-O1"
    loads = remembered.LOADS  # warm: the entry keyed by the flags the phases were built with
    again = spf.einsum(SPADD, A=CSR, B=CSR, C=CSR, parallel=False).compile(cache_dir=str(tmp_path))
    assert remembered.LOADS - loads == 1
    assert again.single is not None
    assert again.single.kernel.command == single.kernel.command
    assert np.array_equal(again(**args)["A"], got["A"])
