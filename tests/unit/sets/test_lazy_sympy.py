"""``import spf`` does not import sympy, and neither does the set algebra (its expressions
are spf's own, :mod:`spf.sets.affine`)."""

from __future__ import annotations

import os
import subprocess
import sys

import spf

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


def test_import_spf_and_set_operations_never_load_sympy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, timeout=300, check=True
    )
    first, second, third = done.stdout.splitlines()
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


def test_sptrsv_wavefront_and_csr_spmv_compile_never_import_sympy(tmp_path: object) -> None:
    root = os.path.dirname(os.path.dirname(os.path.abspath(spf.__file__)))  # this spf
    path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "SPF_CACHE_DIR": str(tmp_path)}  # cold
    done = subprocess.run(
        [sys.executable, "-c", _HOT],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env=env,
    )
    assert done.stdout.split()[0] == "False", done.stdout
