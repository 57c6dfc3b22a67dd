"""The PLDI'19 dependence set (``spf.bench.pldi19``): spf proves the expected-empty relations
empty with the files' UF declarations and properties, and never proves an expected-satisfiable
one empty (that would be unsound)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spf.bench import main
from spf.bench.pldi19 import Case, data_dir, prove, read_all, read_file, relation_text

if TYPE_CHECKING:
    from pathlib import Path

FAST_FILES = ("gs_csr", "forwSolCSR", "SpMV", "SpMM", "leftLU_static", "ilu0")
"""Files decided in well under two seconds together; every expected-empty relation in them
is proven empty (14 of ilu0, 6 of leftLU_static, 4 of SpMM, ...)."""
PINNED = 31
"""Expected-empty relations of FAST_FILES that spf proves empty (all of them)."""


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    directory = data_dir()
    if directory is None:
        pytest.skip("the PLDI'19 JSON files were not found (shared/data/pldi19)")
    return read_all(directory)


def test_relation_text_repairs() -> None:
    assert relation_text("[m] -> {[i] -> [j]: i < j < m}") == "{[i] -> [j]: i < j < m}"
    assert relation_text(" {{ [i] -> [j]: i < j }") == "{ [i] -> [j]: i < j }"
    assert relation_text("{ [i] -> [j] }") == "{ [i] -> [j] }"
    assert relation_text("") == ""


def test_reader_on_a_small_file(tmp_path: Path) -> None:
    entry = {
        "Relation": "[m] -> {[i,k] -> [ip,kp]: i < ip < m && rowptr(i) <= k < diagptr(i)"
        " && rowptr(ip) <= kp < diagptr(ip) && k = kp}",
        "Expected": "Not Satisfiable",
        "What helps to detect unsat 1:": "Correlated Mono",
        "UFS": [
            {"Name": "rowptr", "Domain": "{[j]:0<=j &&j<=m}", "Range": "{[i]:0<=i}",
             "Monotonicity": "Monotonic_Increasing"},
            {"Name": "diagptr", "Domain": "{[j]:0<=j &&j<m}", "Range": "{[i]:0<=i}",
             "Monotonicity": "iegenlib::Monotonic_NONE"},
        ],
        "User Defined": [
            {"UniQuantVar": "[e1,e2]", "p": "e1 < e2", "q": "diagptr(e1) < rowptr(e2)"}
        ],
    }  # fmt: skip
    second = {"Relation": "{[i] -> [ip]: i < ip && diagptr(i) = diagptr(ip)}", "Expected": "x"}
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps([[entry, second, {"Relation": ""}]]))
    first, other = read_file(path)
    assert first.label == "tiny #1"
    assert first.expected_empty
    assert first.ufs["rowptr"].monotonic == "increasing"
    assert first.ufs["diagptr"].monotonic is None
    assert [f.text for f in first.facts] == ["forall e1,e2: e1 < e2 => diagptr(e1) < rowptr(e2)"]
    assert prove(first).proven_empty
    assert other.ufs == first.ufs  # declarations carry over to the file's later relations
    assert not other.expected_empty
    assert not prove(other).proven_empty  # diagptr is not declared monotonic


def test_the_whole_set_is_read(cases: list[Case]) -> None:
    assert len(cases) == 84
    assert sum(c.expected_empty for c in cases) == 63
    assert {c.kernel for c in cases} >= {"gs_csr", "ilu0", "ic0_csc", "forwSolCSR"}


def test_expected_empty_relations_are_proven(cases: list[Case]) -> None:
    fast = [c for c in cases if c.kernel in FAST_FILES and c.expected_empty]
    proven = [c.label for c in fast if prove(c).proven_empty]
    assert len(proven) >= PINNED, sorted({c.label for c in fast} - set(proven))


def test_no_satisfiable_relation_is_proven_empty(cases: list[Case]) -> None:
    satisfiable = [c for c in cases if not c.expected_empty]
    assert len(satisfiable) == 21
    wrong = [c.label for c in satisfiable if prove(c).proven_empty]
    assert wrong == [], f"UNSOUND: proven empty although satisfiable: {wrong}"


def test_strict_monotonicity_is_what_proves_ic0_1(cases: list[Case]) -> None:
    """``colPtr(i) = colPtr(ip) && i < ip`` is empty for a strictly increasing colPtr only."""
    (case,) = [c for c in cases if c.label == "ic0_csc #1"]
    assert prove(case).proven_empty
    assert not prove(case, "nondecreasing").proven_empty


def test_bench_section(
    cases: list[Case], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    assert main(["--quick", "--only", "pldi19", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| **total** | 84 | 63 | 63 |" in text
    assert "None of the 21 expected-satisfiable relations is proven empty." in text
    section = json.loads(out.read_text())["benchmarks"]["pldi19"]
    assert section["data"]["proven"] == 63
    assert section["data"]["unsound"] == []
    assert section["targets"][0]["met"]
