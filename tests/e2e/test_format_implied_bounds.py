"""A format of your own whose UFs declare no domain or range (API.md §12's ``MYCSR``):
its relation implies them (``col(k)`` with ``k`` a storage position: ``0 <= k < NNZ``;
``rowptr(i) <= k < rowptr(i+1)``: values in ``0 .. NNZ``), so a checked call compares the
arrays' lengths and the pointers' values with them before anything reads through them.
Before, a short ``col`` was read past its end and a ``rowptr`` far beyond ``NNZ`` crashed
the process (the checks read ``col(k)`` at those positions)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

import spf

MINE = """
import numpy as np, scipy.sparse as sp, spf
mine = spf.Format(
    "MYCSR", coords="[i, j]",
    storage="{[i, j] -> [k]: rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
    ufs={"rowptr": spf.UF("rowptr", monotonic="nondecreasing"), "col": spf.UF("col")},
)
m = sp.random_array((6, 5), density=0.4, rng=np.random.default_rng(0), format="csr")
args = spf.sparse.csr_args(m)
"""


def _mine() -> tuple[spf.Format, Any, dict[str, Any]]:
    scope: dict[str, Any] = {}
    exec(MINE, scope)  # the same format and matrix as the subprocess's
    return scope["mine"], scope["m"], scope["args"]


def test_declared_bounds_follow_from_the_relation() -> None:
    mine, _, _ = _mine()
    comp = mine.spmv()
    assert str(comp.ufs["col"].domain) == "{[t] : 0 <= t && t < NNZ}"
    assert str(comp.ufs["rowptr"].range) == "{[v] : 0 <= v && v <= NNZ}"


def test_short_index_array_refused_before_the_call() -> None:
    mine, m, args = _mine()
    kernel = mine.spmv().compile()
    y = np.zeros(6)
    kernel(y=y, x=np.ones(5), **args)
    assert np.allclose(y, m @ np.ones(5))
    with pytest.raises(spf.ArgumentError, match=r"col: length 3 is too short"):
        kernel(y=np.zeros(6), x=np.ones(5), **{**args, "col": args["col"][:3].copy()})


def test_pointers_far_beyond_nnz_refused_not_a_crash() -> None:
    code = MINE + textwrap.dedent("""
        kernel = mine.spmv().compile()
        bad = (args["rowptr"] + 10**8).astype(np.int32)
        try:
            kernel(y=np.zeros(6), x=np.ones(5), **{**args, "rowptr": bad})
        except spf.ArgumentError as err:
            print(err)
        """)
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "rowptr[0] = 100000000 is outside the declared range" in run.stdout


def test_extents_take_numpy_int_sizes() -> None:
    """A packer of your own may give sizes as numpy ints: ``extents`` reads them (it
    asked for sizes 'the arguments do not give')."""
    mine, m, args = _mine()
    args = {k: np.int64(v) if isinstance(v, int) else v for k, v in args.items()}
    assert mine.extents(args) == m.shape
    assert all(type(e) is int for e in mine.extents(args))


def test_no_domain_implied_for_a_uf_read_off_the_position() -> None:
    """A UF read at ``k`` and at ``k + 1`` takes no implied domain ``0 <= t < NNZ``: its
    read at ``k + 1`` would fall outside it (the domain declared stays as it was)."""
    fmt = spf.Format(
        "ODD",
        coords="[i, j]",
        storage="{[i, j] -> [k]: rp(i) <= k < rp(i+1) && j = ci(k) && ci(k) <= ci(k + 1)}",
        ufs=[spf.UF("rp", monotonic="nondecreasing"), spf.UF("ci")],
    )
    comp = fmt.spmv()
    assert comp.ufs["ci"].domain is None
    assert str(comp.ufs["rp"].range) == "{[v] : 0 <= v && v <= NNZ}"
