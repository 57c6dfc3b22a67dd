"""The SELL synthesis reads the destination's relation (spf.formats.to_sell): which
relations are SELL-like, what the conversion Computation holds, what is refused. No kernel
is compiled here (tests/e2e/test_format_sell_convert.py runs them)."""

from __future__ import annotations

import re

import pytest

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert
from spf.formats.to_sell import SellConversion, SellLayout, sell_layout


@pytest.mark.parametrize(("c", "sigma"), [(1, 1), (4, 1), (4, 8), (8, 32), (32, 64)])
def test_builtin_sell_layouts(c: int, sigma: int) -> None:
    perm = "perm" if sigma > 1 else None
    window = sigma if sigma > 1 else None
    assert sell_layout(SELL(c, sigma)) == SellLayout(c, "cs", "cl", "scol", "val", perm, window)


@pytest.mark.parametrize("fmt", [COO, CSR, CSC, DIA, ELL, BCSR(2, 2)], ids=lambda f: f.name)
def test_other_formats_are_not_sell_like(fmt: spf.Format) -> None:
    assert sell_layout(fmt) is None


def test_conversion_is_one_computation() -> None:
    conv = convert(CSR, SELL(8, 32))
    assert isinstance(conv, SellConversion)
    assert isinstance(conv, spf.Computation)
    code = conv.codegen("c")
    # one function (run with the call's fault record, spf.codegen.faults, and its wrapper)
    functions = re.findall(r"^void (\w+)\(", code, re.MULTILINE)
    assert functions == [f"{conv.name}_spf_faults", conv.name]
    assert "PHASE" in code
    # the permutation and the cursors are run-time index arrays read back as UFs
    for name in ("perm", "cv_len", "cv_ord", "cv_cur"):
        assert conv.data_spaces[name].index, name
    assert "perm(" in str(conv)
    # sigma = 1: no sort, no permutation
    plain = convert(CSR, SELL(8, 1))
    assert "perm" not in plain.data_spaces
    assert "cv_ord" not in plain.data_spaces
    assert len(plain.stmts) < len(conv.stmts)


@pytest.mark.parametrize(
    ("old", "new"),
    [("0 <= r < 4", "0 <= r < 2"), ("4*ch + r < N", "4*ch + r < M"), ("ch < NC", "ch < NB")],
)
def test_near_sell_relations_are_not_taken_for_sell(old: str, new: str) -> None:
    """A relation whose chunk height differs from the slot stride, or whose chunks are not
    bounded like SELL's, is not synthesized as SELL (it is refused, naming the formats)."""
    base = SELL(4, 1)
    assert old in base.storage
    ufs = list(base.ufs.values())
    if new.endswith("NB"):
        ufs[0] = spf.UF("cs", domain="{[t]: 0 <= t <= NB}", monotonic="nondecreasing")
        ufs[1] = spf.UF("cl", domain="{[t]: 0 <= t < NB}")
    fmt = spf.Format("NEAR", coords="[i, j]", storage=base.storage.replace(old, new), ufs=ufs,
                     value="val", value_shape=("NV",))  # fmt: skip
    assert sell_layout(fmt) is None
    with pytest.raises(spf.SpfError, match=r"convert.*NEAR"):
        convert(CSR, fmt)


def test_bad_window_and_source() -> None:
    with pytest.raises(spf.SpfError, match="window must be a positive int"):
        spf.Format("W", coords="[i, j]", storage=CSR.storage, ufs=list(CSR.ufs.values()),
                   window=0)  # fmt: skip
    with pytest.raises(spf.SpfError, match=r"convert.*SELL4_8"):
        convert(SELL(4, 8), CSR)
    with pytest.raises(spf.SpfError, match="convert"):
        convert(SELL(4, 1), SELL(4, 8))
    tall = spf.Format("TALL", coords="[i, j]", storage=CSR.storage, ufs=list(CSR.ufs.values()),
                      shape=("2*N", "M"))  # fmt: skip
    with pytest.raises(spf.SpfError, match=r"convert\(TALL -> SELL4_8\).*N x M"):
        convert(tall, SELL(4, 8))
