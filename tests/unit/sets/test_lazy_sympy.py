"""``import spf`` does not import sympy, and neither does the set algebra (its expressions
are spf's own, :mod:`spf.sets.affine`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

_CHILD = """
import sys
import spf
from spf import _lazy
print(_lazy.is_loaded("sympy"), "sympy.core" in sys.modules)
s = spf.Set("{[i]: 0 <= i < N && 2i >= N}")
print(_lazy.is_loaded("sympy"), s.params == {"N"}, str(s.intersect(spf.Set("{[i]: i < 3}"))))
import sympy
print(sympy is sys.modules["sympy"], type(sympy.Symbol("x")).__name__)
"""


def test_import_spf_and_set_operations_never_load_sympy(
    fresh_python: Callable[..., list[str]],
) -> None:
    first, second, third = fresh_python(_CHILD)
    assert first == "False False"
    loaded, params, text = second.split(" ", 2)
    assert (loaded, params) == ("False", "True")
    assert "i <= 2" in text or "i < 3" in text
    assert third == "True Symbol"


_HOT = """
import sys
import spf, spf.kernels
comp = spf.kernels.sptrsv_csr()
comp.wavefront("i")
comp.compile()
spf.kernels.spmv_csr().compile()
print("sympy" in sys.modules, sorted(m for m in sys.modules if m.startswith("sympy"))[:3])
"""


def test_sptrsv_wavefront_and_csr_spmv_compile_never_import_sympy(
    tmp_path: Path, fresh_python: Callable[..., list[str]]
) -> None:
    lines = fresh_python(_HOT, SPF_CACHE_DIR=str(tmp_path))  # cold
    assert " ".join(lines).split()[0] == "False", lines
