"""The ELL, DIA and BCSR syntheses read the destination's relation (spf.formats.to_padded,
spf.formats.to_bcsr) and the laid-out sources theirs (spf.formats.from_stored): which
relations are taken for which, what the conversion Computation holds, what is refused.
No kernel is compiled here."""

from __future__ import annotations

import pytest

import spf
from spf.formats import BCSR, COO, CSC, CSR, DIA, ELL, SELL, convert
from spf.formats.from_stored import StoredConversion, is_stored
from spf.formats.to_bcsr import BcsrConversion, BcsrLayout, bcsr_layout
from spf.formats.to_padded import PaddedConversion, PaddedLayout, padded_layout

OTHERS = [COO, CSR, CSC, SELL(4, 8)]


def test_builtins_are_recognised_by_their_relations() -> None:
    assert padded_layout(ELL) == PaddedLayout("ELL", "col", "A", "W")
    assert padded_layout(DIA) == PaddedLayout("DIA", "offsets", "A", "ND")
    assert bcsr_layout(BCSR(2, 3)) == BcsrLayout(2, 3, "browptr", "bcol", "A", "NB", "MB", "NNZB")
    for fmt in [*OTHERS, BCSR(2, 2)]:
        assert padded_layout(fmt) is None, fmt.name
    for fmt in [*OTHERS, ELL, DIA]:
        assert bcsr_layout(fmt) is None, fmt.name
    assert [is_stored(f) for f in (COO, CSR, CSC, ELL, DIA, BCSR(2, 2), SELL(2, 1))] == [
        False, False, False, True, True, True, True
    ]  # fmt: skip


def _ell(storage: str, name: str = "MYELL") -> spf.Format:
    return spf.Format(
        name,
        coords="[r, c]",
        storage=storage,
        ufs=[spf.UF("cidx", arity=2, domain="{[a, b]: 0 <= a < N && 0 <= b < K}",
                    range="{[v]: 0 <= v < M}")],
        value="vals",
        value_shape=("N", "K"),
    )  # fmt: skip


def test_other_names_are_recognised() -> None:
    mine = _ell("{[r, c] -> [row, s]: 0 <= row < N && 0 <= s < K && r = row && c = cidx(row, s)}")
    assert padded_layout(mine) == PaddedLayout("ELL", "cidx", "vals", "K")
    conv = convert(CSR, mine)
    assert isinstance(conv, PaddedConversion)
    assert "PHASE" in str(conv.stmts[0].domain)
    assert conv.data_spaces["cv_cur"].index
    back = convert(mine, COO)
    assert isinstance(back, StoredConversion)
    assert back.then is None


def test_near_ell_relation_is_not_taken_for_ell() -> None:
    """Slots indexed (slot, row) with row = the second position: not ELL-like; refused
    naming both formats and what to do instead."""
    near = spf.Format(
        "NEAR",
        coords="[r, c]",
        storage="{[r, c] -> [s, row]: 0 <= row < N && 0 <= s < K && r = row && "
        "c = cidx(s, row)}",
        ufs=[spf.UF("cidx", arity=2, domain="{[a, b]: 0 <= a < K && 0 <= b < N}",
                    range="{[v]: 0 <= v < M}")],
        value="vals",
        value_shape=("K", "N"),
    )  # fmt: skip
    assert padded_layout(near) is None
    with pytest.raises(spf.SpfError, match=r"convert\(CSR -> NEAR\).*neither ELL-like.*"
                       r"spf\.sparse\.format_args"):  # fmt: skip
        convert(CSR, near)


def test_bcsr_conversion_holds_both_phases() -> None:
    conv = convert(CSR, BCSR(2, 2))
    assert isinstance(conv, BcsrConversion)
    domains = [str(s.domain) for s in conv.stmts]
    assert any("PHASE = 0" in d for d in domains)
    assert any("PHASE = 1" in d for d in domains)
    for name in ("cv_bp", "cv_jb", "cv_slot", "cv_pid"):
        assert conv.data_spaces[name].index, name
    assert set(conv.phase1) >= {"cv_slot", "cv_tpair"}


@pytest.mark.parametrize(
    ("src", "dst", "message"),
    [
        (COO, BCSR(2, 2), r"convert\(COO -> BCSR2x2\).*convert COO to CSR first"),
        (ELL, DIA, r"convert\(ELL -> DIA\).*convert ELL to CSR first, then CSR to DIA"),
        (DIA, SELL(2, 1), r"convert\(DIA -> SELL2_1\).*then CSR to SELL2_1"),
        (BCSR(2, 2), BCSR(2, 2), r"convert\(BCSR2x2 -> BCSR2x2\).*to CSR first"),
    ],
    ids=lambda v: getattr(v, "name", "message"),
)
def test_pairs_without_synthesis_say_what_to_use(
    src: spf.Format, dst: spf.Format, message: str
) -> None:
    with pytest.raises(spf.SpfError, match=message):
        convert(src, dst)
