"""Progress lines of long operations (the ``spf`` logger, INFO) and in the command line."""

from __future__ import annotations

import logging

import pytest

import spf.progress
from spf import kernels
from spf.analysis.dependences import clear_remembered
from spf.cli import main


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> None:
    """Report from the first step on, every step (real operations wait a second), with
    nothing remembered from earlier tests (results are shared by equal computations)."""
    monkeypatch.setattr(spf.progress, "AFTER_S", 0.0)
    monkeypatch.setattr(spf.progress, "EVERY_S", 0.0)
    clear_remembered()


def test_dependences_legality_and_codegen_report_progress(
    eager: None, caplog: pytest.LogCaptureFixture
) -> None:
    comp = kernels.dense_mv()
    comp.stmt("s0").interchange("i", "j")  # out of program order: the legality check runs
    with caplog.at_level(logging.INFO, logger="spf"):
        comp.codegen("c")
    lines = [r.getMessage() for r in caplog.records if r.name == "spf"]
    n = len(comp.stmts) ** 2
    assert f"dependences: 0/{n} statement pairs" in lines
    assert any(line.startswith("legality: 0/") for line in lines)
    assert "codegen: proving bounds" in lines
    assert "codegen: scanning" in lines
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == "spf")


def test_quick_operations_stay_quiet(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="spf"):
        kernels.spmv_csr().dependences()
    assert not [r for r in caplog.records if r.name == "spf"]


def test_remembered_results_report_nothing(eager: None, caplog: pytest.LogCaptureFixture) -> None:
    comp = kernels.spmv_csr()
    with caplog.at_level(logging.INFO, logger="spf"):
        comp.codegen("c")
        assert [r for r in caplog.records if r.name == "spf"]
        caplog.clear()
        comp.codegen("c")
    assert not [r for r in caplog.records if r.name == "spf"]


def test_the_command_line_leaves_the_logger_as_it_was() -> None:
    logger = logging.getLogger("spf")
    before = (logger.level, list(logger.handlers))
    assert main(["codegen", "spf.kernels:dense_mv"]) == 0
    assert (logger.level, list(logger.handlers)) == before


def test_cli_shows_progress_lines_on_stderr(
    eager: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["codegen", "spf.kernels:spmv_csr"]) == 0
    err = capsys.readouterr().err
    assert "spf: codegen: proving bounds" in err
    assert "spf: codegen: scanning" in err
