"""``is_empty`` is remembered per (immutable) set and UF declarations: a repeated query is
free and a set under other declarations gets its own verdict."""

from __future__ import annotations

from spf import UF, Set

TEXT = "{[i]: 0 <= i < N && f(i) >= 5}"


def test_the_verdict_follows_the_declarations_and_is_remembered() -> None:
    small = UF("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < 3}")
    wide = UF("f", domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < 30}")
    bounded, free = Set(TEXT, ufs=[small]), Set(TEXT, ufs=[wide])
    assert bounded.is_empty()
    assert not free.is_empty()
    assert not Set(TEXT).is_empty()
    # the same body under both declarations (a set rebuilt with other UFs)
    rebuilt = type(bounded)._make(bounded._body, {"f": wide})
    assert not rebuilt.is_empty()
    assert bounded.is_empty()
    # one verdict per declarations, on the body equal sets share (bodies are values)
    verdicts = {k[1]: v for k, v in bounded._body.memo.items() if k[0] == "is_empty"}
    assert verdicts[(("f", small),)] is True
    assert verdicts[(("f", wide),)] is False
