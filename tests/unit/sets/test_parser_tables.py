"""The set parser's LALR tables are kept in the spf cache and loaded by later processes; a
damaged or missing file is built again (never a wrong parse or an error)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from lark import Lark

from spf import Set
from spf.sets import parse

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage"])
def test_parser_tables_are_stored_and_a_damaged_file_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path))
    parse._lark.cache_clear()
    try:
        assert Set("{[i]: 0 <= i < N}").params == {"N"}  # memoized sets may not parse
        parse._lark()
        (stored,) = (tmp_path / "parser").glob("sets-*.lark")
        whole = stored.read_bytes()
        if damage == "missing":
            stored.unlink()
        elif damage == "truncated":
            stored.write_bytes(whole[: len(whole) // 3])
        else:
            stored.write_bytes(b"not a parser")
        parse._lark.cache_clear()
        doc = parse.parse_document("{[i, j]: 0 <= i < j < N}")
        assert len(doc.pieces) == 1
        with stored.open("rb") as fh:  # written again, whole
            assert Lark.load(fh).parse("{[i]}") is not None
    finally:
        parse._lark.cache_clear()
