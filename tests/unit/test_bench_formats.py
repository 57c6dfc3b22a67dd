"""spf bench --only formats: SpMV per built-in format vs hand C, conversions vs scipy."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from spf.bench import BENCHMARKS, main

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_formats_quick_reports_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "f.json"
    assert "formats" in BENCHMARKS
    assert main(["--quick", "--only", "formats", "--threads", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    for name in ("COO", "CSR", "CSC", "DIA", "ELL", "BCSR2x2", "SELL8_1"):
        assert f"spmv({name}) <= 1.10x hand C" in text, name
    assert "convert(COO, CSR) <= 1.0x scipy" in text
    assert "SELL(8, 32) inspector from the relation <= 1.0x the hand-written" in text
    doc = json.loads(out.read_text())
    assert len(doc["benchmarks"]["formats"]["data"]["spmv_median_ms"]) == 14
