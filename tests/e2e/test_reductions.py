"""Reduction loops run: ``y = A^T x`` (``spf.kernels.spmtv_csr``), a histogram and a dense
column sum with ``parallelize(loop, reduction="atomic" | "privatize")`` equal scipy / numpy
at 1 and 2 OpenMP threads, on random and SuiteSparse matrices (skipped when the data is
absent), empty rows, one row, an empty matrix and both index types; the CUDA atomic version
runs in the emulator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from spf import kernels
from spf.sparse import csr_args

REPO = Path(__file__).resolve().parents[2]
SUITESPARSE = Path(
    os.environ.get("SPF_SUITESPARSE", REPO.parent / "shared" / "data" / "suitesparse")
)
MATRICES = ["bcsstk13", "cryg2500", "olm1000", "jagmesh7", "LFAT5_hypersparse", "arrow"]

SCRIPT = r"""
import ctypes, json, sys
from pathlib import Path
import numpy as np, scipy.sparse as sp
from spf import Computation, Stmt, kernels
from spf.sparse import csr_args, read_matrix_market

cache, data, names = sys.argv[1], Path(sys.argv[2]), sys.argv[3].split(",")
rng = np.random.default_rng(7)
report = {"mismatch": [], "ran": [], "threads": 0}
keep = []

def kernel(make, loop, option, **kw):
    comp = make(**kw)
    comp.stmts[0].parallelize(loop, reduction=option)
    k = comp.compile(cache_dir=cache)
    keep.append(k)
    return k

matrices = {
    "random": sp.random_array((1500, 900), density=0.01, format="csr", rng=rng),
    "empty_rows": sp.csr_array(sp.random_array((400, 300), density=0.02, rng=rng).tocsr()
                               .multiply(np.arange(400)[:, None] % 3 == 0)),
    "one_row": sp.random_array((1, 50), density=0.5, format="csr", rng=rng),
    "empty": sp.csr_array((6, 5)),
}
for name in names:
    path = data / f"{name}.mtx"
    if path.exists():
        matrices[name] = read_matrix_market(path).tocsr()
for option in ("atomic", "privatize"):
    for dtype in ("int32", "int64"):
        k = kernel(kernels.spmtv_csr, "i", option, index_dtype=dtype)
        for name, A in matrices.items():
            x = rng.random(A.shape[0])
            y0 = rng.random(A.shape[1])
            y = y0.copy()
            k(y=y, x=x, **csr_args(A, index_dtype=dtype))
            want = y0 + A.T @ x
            report["ran"].append(f"spmtv:{option}:{dtype}:{name}")
            if not np.allclose(y, want, rtol=1e-12, atol=1e-12 * (1 + np.abs(want).max(initial=0))):
                report["mismatch"].append(f"spmtv:{option}:{dtype}:{name}")

    def histogram():
        comp = Computation("histogram")
        comp.add_data_space("h", "int32_t", shape=("B",))
        comp.declare_uf("key", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < B}")
        comp.add_stmt(Stmt("$h$(key(k)) += 1;", "{[k]: 0 <= k < N}", "{[k] -> [0, k, 0]}"))
        return comp

    keys = rng.integers(0, 37, size=200_000).astype(np.int32)
    h = np.zeros(37, dtype=np.int32)
    kernel(histogram, "k", option)(h=h, key=keys, N=keys.size)
    report["ran"].append(f"histogram:{option}")
    if not np.array_equal(h, np.bincount(keys, minlength=37)):
        report["mismatch"].append(f"histogram:{option}")

    def colsum():
        comp = Computation("colsum")
        comp.add_data_space("s", "double", shape=("M",))
        comp.add_data_space("D", "double", shape=("N", "M"))
        comp.add_stmt(Stmt("$s$(j) = $s$(j) + $D$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}",
                           "{[i,j] -> [0,i,0,j,0]}"))
        return comp

    D = rng.random((301, 17))
    s = np.zeros(17)
    kernel(colsum, "i", option)(s=s, D=D)
    report["ran"].append(f"colsum:{option}")
    if not np.allclose(s, D.sum(axis=0), rtol=1e-12):
        report["mismatch"].append(f"colsum:{option}")
report["threads"] = ctypes.CDLL("libgomp.so.1").omp_get_max_threads()
print(json.dumps(report))
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_reductions_equal_scipy(threads: int, shared_cache: Path) -> None:
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "SPF_ADAPTIVE_THREADS": "0",  # the team really has `threads` threads
        "SPF_CACHE_DIR": str(shared_cache),
    }
    argv = [sys.executable, "-c", SCRIPT, str(shared_cache), str(SUITESPARSE), ",".join(MATRICES)]
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["threads"] == threads
    assert report["mismatch"] == []
    assert len(report["ran"]) >= 2 * (2 * 4 + 2)
    present = [m for m in MATRICES if (SUITESPARSE / f"{m}.mtx").exists()]
    for m in present:
        assert f"spmtv:privatize:int64:{m}" in report["ran"]


def test_suitesparse_matrices_present(suitesparse_dir: Path) -> None:
    """The test above reads these matrices from the shared set (skipped only where it is absent)."""
    assert suitesparse_dir == SUITESPARSE or "SPF_SUITESPARSE" in os.environ
    missing = [m for m in MATRICES if not (suitesparse_dir / f"{m}.mtx").exists()]
    assert missing == [], f"missing from {suitesparse_dir}: {missing}"


def test_cuda_atomic_in_the_emulator(tmp_path: Path) -> None:
    comp = kernels.spmtv_csr()
    s = comp.stmts[0]
    s.split("i", 32, "i0", "i1").gpu(("i0",), ("i1",))
    s.parallelize("i0", reduction="atomic").parallelize("i1", reduction="atomic")
    k = comp.compile(target="cuda", emulate=True, cache_dir=str(tmp_path))
    rng = np.random.default_rng(3)
    A = sp.random_array((700, 300), density=0.02, format="csr", rng=rng)
    x = rng.random(700)
    y = np.zeros(300)
    k(y=y, x=x, **csr_args(A))
    np.testing.assert_allclose(y, A.T @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_atomic_compiles_with_nvcc(tmp_path: Path) -> None:
    """The generated ``atomicAdd`` on doubles builds with nvcc's default architecture
    (sm_75 and up in CUDA 13; double atomicAdd needs sm_60)."""
    comp = kernels.spmtv_csr()
    s = comp.stmts[0]
    s.split("i", 128, "i0", "i1").gpu(("i0",), ("i1",))
    s.parallelize("i0", reduction="atomic").parallelize("i1", reduction="atomic")
    source = tmp_path / "spmtv.cu"
    source.write_text(comp.codegen("cuda"))
    done = subprocess.run(
        ["nvcc", "-c", "-Xcompiler", "-fPIC", "-o", str(tmp_path / "spmtv.o"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
