"""The set parser's LALR tables ship with the package and are loaded from there; tables built
for another grammar, lark or Python are kept in the spf cache and loaded by later processes;
a damaged or missing file is built again (never a wrong parse or an error)."""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING

import pytest
from lark import Lark

from spf import Set
from spf.sets import parse

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _every_text_through_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about lark's tables: every text goes to lark (well-formed text is
    otherwise read by :mod:`spf.sets.fast_parse`, which never loads them)."""
    monkeypatch.setattr(parse.fast_parse, "read", lambda text, max_depth: None)


@pytest.mark.parametrize("damage", ["missing", "truncated", "garbage"])
def test_parser_tables_are_stored_and_a_damaged_file_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(parse, "SHIPPED_TABLES", str(tmp_path / "not-shipped.lark"))
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
        parse.parse_document.cache_clear()  # parses are remembered by text: parse afresh
        doc = parse.parse_document("{[i, j]: 0 <= i < j < N}")
        assert len(doc.pieces) == 1
        with stored.open("rb") as fh:  # written again, whole
            assert Lark.load(fh).parse("{[i]}") is not None
    finally:
        parse._lark.cache_clear()


SAMPLES = [
    "{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i + 1)}",
    "[N] -> {[i] -> [i, 0, k] : exists a : i = 2a} union {[i] -> [j, 1, 0] : j = i - 1}",
    "{[i] : (i < N || i > 2M) && floor(i / 2) >= ceil(j / 3) and 3f(i) mod 2 = 0}",
    "{[k] : exists (e0 = col(k)[1] : e0 > 0); [k] : k = 0}",
    "{ : N > 0 }",
]


@pytest.mark.parametrize("lark_version", ["installed", "another"])
def test_shipped_parser_tables_are_for_this_grammar_and_parse_like_fresh_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lark_version: str
) -> None:
    """The tables in the package are the ones this grammar builds. Under the lark and Python
    they were built with, they are loaded with an empty cache (nothing written there) and
    give the same trees as freshly built tables; under another lark or Python (a clean
    install may get a newer lark), they are left alone and the tables are built, parsing the
    same. After a grammar change: ``from spf.sets.parse import ship_tables; ship_tables()``."""
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path))
    if lark_version == "another":
        monkeypatch.setattr(parse.lark, "__version__", "0.0.another")
    fresh = Lark(parse._GRAMMAR, **parse._OPTIONS)
    with open(parse.SHIPPED_TABLES, "rb") as fh:
        stored = pickle.load(fh)
    assert stored["grammar"] == parse._grammar_key(), "grammar changed: run ship_tables()"
    same_versions = stored["key"] == parse._tables_key()
    shipped = parse._load_tables(parse.SHIPPED_TABLES, parse._tables_key())
    assert (shipped is not None) == same_versions
    parse._lark.cache_clear()
    try:
        assert parse._lark() is not fresh
        # nothing built or written when the shipped tables serve; built and cached otherwise
        assert (tmp_path / "parser").exists() != same_versions
        for text in SAMPLES:
            if shipped is not None:
                assert shipped.parse(text) == fresh.parse(text)
            assert parse._lark().parse(text) == fresh.parse(text)
    finally:
        parse._lark.cache_clear()


def test_shipped_parser_tables_for_another_key_are_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables stored for another grammar, lark or Python are ignored and built afresh."""
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path))
    foreign = tmp_path / "foreign.lark"
    parse._store_tables(Lark(parse._GRAMMAR, **parse._OPTIONS), foreign, "another-key")
    assert parse._load_tables(foreign, "another-key") is not None
    assert parse._load_tables(foreign, parse._tables_key()) is None
    monkeypatch.setattr(parse, "SHIPPED_TABLES", str(foreign))
    parse._lark.cache_clear()
    parse.parse_document.cache_clear()
    try:
        assert parse.parse_document(SAMPLES[0]).pieces
        assert list((tmp_path / "parser").glob("sets-*.lark"))  # built, then cached
    finally:
        parse._lark.cache_clear()
