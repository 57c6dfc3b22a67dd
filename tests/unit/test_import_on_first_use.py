"""``import spf`` leaves the C front end, index notation and the tuner to their first use;
``spf.from_c``, ``spf.einsum``, ``spf.tune`` and ``spf.TuneResult`` still work as names."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import spf

_CHILD = """
import sys
import spf
print(*(m in sys.modules for m in ("spf.frontend", "spf.tuning", "pycparser")))
from spf import from_c, tune
import spf.frontend, spf.index_notation, spf.tuning
print(from_c is spf.frontend.from_c, spf.einsum is spf.index_notation.einsum,
      tune is spf.tuning.tune, spf.TuneResult is spf.tuning.TuneResult)
comp = spf.from_c("void f(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = 1; }")
print(comp.loop_structure().split()[0:2])
"""


def test_import_spf_defers_the_c_front_end_and_the_tuner_until_first_use(
    fresh_python: Callable[..., list[str]],
) -> None:
    loaded, same, loops = fresh_python(_CHILD)
    assert loaded == "False False True"  # pycparser: statements and kernels need it
    assert same == "True True True True"
    assert loops == "['for', 'i:']"


def test_an_unknown_name_of_spf_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        spf.no_such_name  # noqa: B018
    assert callable(spf.einsum)
    assert callable(spf.from_c)
    assert all(hasattr(spf, name) for name in spf.__all__)


_KERNELS_CHILD = """
import sys
import spf, spf.kernels
print("spf.index_notation" in sys.modules)
from spf.kernels import SpGEMM
from spf.index_notation.sparse_output import SparseEinsum, SparseEinsumKernel
print(SpGEMM is SparseEinsum, spf.kernels.SpGEMMKernel is SparseEinsumKernel)
print(isinstance(spf.kernels.spgemm_csr(), SpGEMM))
"""


def test_import_spf_kernels_defers_index_notation_until_spgemm_is_asked_for(
    fresh_python: Callable[..., list[str]],
) -> None:
    assert fresh_python(_KERNELS_CHILD) == ["False", "True True", "True"]


def test_an_unknown_name_of_spf_kernels_is_an_attribute_error() -> None:
    import spf.kernels

    with pytest.raises(AttributeError, match="has no attribute 'no_such_kernel'"):
        spf.kernels.no_such_kernel  # noqa: B018
    assert all(hasattr(spf.kernels, name) for name in spf.kernels.__all__)


_SUBMODULE_CHILD = """
import spf
print(len(spf.tuning.default_space()) > 0, spf.errors.ArgumentError is spf.ArgumentError)
try:
    spf.no_such_module
except AttributeError as err:
    print("no_such_module" in str(err))
"""


def test_spf_submodules_load_on_first_use(fresh_python: Callable[..., list[str]]) -> None:
    """``spf.tuning.default_space()`` (docs/tune.md) and ``spf.errors.X`` after a plain
    ``import spf`` raised AttributeError until something else imported them."""
    assert fresh_python(_SUBMODULE_CHILD) == ["True True", "True"]
