"""Emptiness verdicts shared by shape (issue 28, item 3) are those of each set decided alone.

The search remembers what it derives from a set's shape (its call table, not its
constraints: declared ranges, axiom pieces, the facts' instances) and reuses it for every
set of that shape (``spf.sets.emptiness.shared``). Random sets over one call table, with
random extra constraints, decided one after another (sharing) must get the verdicts each
gets decided cold: every memo table emptied, the set parsed again, nothing shared.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spf import UF, Set
from spf.sets.facts import Fact, is_empty_under
from spf.sets.memo import clear_all

ROWS = (
    "rowptr(i) <= k < rowptr(i+1) && rowptr(ip) <= kp < rowptr(ip+1) && 0 <= i < N && 0 <= ip < N"
)
ATOMS = (
    "i < ip",
    "i = ip",
    "ip < i",
    "k < kp",
    "k = kp",
    "col(k) = col(kp)",
    "col(k) < col(kp)",
    "col(k) > i",
    "col(kp) <= ip",
    "diag(i) <= k",
    "k < diag(i)",
    "kp = k + 1",
    "i + 1 = ip",
    "col(k) = ip",
)
FACTS = (
    "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i",
    "forall i: rowptr(i) <= diag(i) < rowptr(i+1)",
    "forall k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)",
)


def _ufs() -> list[UF]:
    return [
        UF("rowptr", domain="{[j]: 0 <= j <= N}", monotonic="nondecreasing"),
        UF("col", domain="{[j]: 0 <= j < NNZ}", range="{[v]: 0 <= v < N}"),
        UF("diag", domain="{[j]: 0 <= j < N}"),
    ]


def _text(atoms: list[str]) -> str:
    return "{[i, k, ip, kp]: " + " && ".join([ROWS, *atoms]) + "}"


def _verdict(text: str, facts: list[str]) -> bool:
    return is_empty_under(Set(text, ufs=_ufs()), [Fact.parse(f) for f in facts])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=3), min_size=2, max_size=4),
    st.lists(st.sampled_from(FACTS), min_size=1, max_size=3, unique=True),
)
def test_verdicts_shared_by_shape_equal_verdicts_decided_alone(
    constraints: list[list[str]], facts: list[str]
) -> None:
    texts = [_text(atoms) for atoms in constraints]
    clear_all()
    together = [_verdict(t, facts) for t in texts]  # one after another: shapes shared
    alone = []
    for t in texts:
        clear_all()
        alone.append(_verdict(t, facts))
    assert together == alone
