"""``spf tune`` on the command line: a kernel by name on sizes or a Matrix Market file."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from spf.cli import main
from spf.tuning import records

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def records_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tune"
    monkeypatch.setattr(records, "directory", lambda cache_dir=None: folder)
    return folder


def test_tune_gemm_on_sizes_prints_the_schedule_then_reuses_the_record(capsys: Any) -> None:
    argv = ["tune", "gemm", "--sizes", "N=9,M=7,K=5", "--budget", "4", "--seed", "1"]
    assert main([*argv, "--threads", "1"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# gemm: ")
    assert "medians of interleaved runs" in out
    assert "comp.stmt(" in out or "the default schedule is the fastest found" in out
    assert "tuning gemm on C[9, 7], A[9, 5], B[5, 7]" in err
    assert "tried" in err
    assert main([*argv, "--threads", "1"]) == 0
    assert "from the record (nothing measured)" in capsys.readouterr().out


def test_tune_spmv_on_a_suitesparse_matrix(capsys: Any, suitesparse_dir: Path) -> None:
    matrix = suitesparse_dir / "lp_afiro.mtx"
    assert main(["tune", "spmv_csr", "--matrix", str(matrix), "--budget", "8", "--no-reuse"]) == 0
    assert capsys.readouterr().out.startswith("# spmv_csr: ")


MV_C = """
void mv(int n, int m, double A[n][m], double x[m], double y[n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      y[i] += A[i][j] * x[j];
}
"""


def test_tune_an_imported_c_function(tmp_path: Path, capsys: Any) -> None:
    source = tmp_path / "mv.c"
    source.write_text(MV_C)
    argv = ["tune", str(source), "--sizes", "n=30,m=20", "--budget", "4", "--threads", "1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# mv: ")
    assert "tuning mv on A[30, 20], x[20], y[30], m=20, n=30" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tune", "no_such_kernel"], "unknown kernel 'no_such_kernel'; spf.kernels has"),
        (["tune", "gemm", "--sizes", "N=4"], "give --sizes K=...,M=..."),
        (["tune", "gemm", "--matrix", "missing.mtx"], "no such file 'missing.mtx'"),
        (["tune", "spmv_csr", "--sizes", "N=3"], "reads index arrays (col, rowptr); give --matrix"),
    ],
)
def test_tune_command_errors_say_what_to_give(argv: list[str], message: str, capsys: Any) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err
