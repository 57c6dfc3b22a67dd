"""``spf import FILE.c``: prints the Python that builds the imported Computation (runnable as
is) and its loop structure; errors are one message and exit status 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import spf
from spf.cli import main

if TYPE_CHECKING:
    from pathlib import Path

SOURCE = """
#define N 16
void axpy(double a, double x[N], double *y) {
  for (int i = 0; i < N; i++)
    y[i] += a * x[i];
}
"""


def test_import_prints_runnable_python_and_loops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "axpy.c"
    path.write_text(SOURCE)
    code = main(["import", str(path), "--function", "axpy", "--shape", "y=16", "--param", "N"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "comp = spf.Computation('axpy')" in out
    assert "# loop structure:\n#   for i:\n#     s0" in out
    scope: dict[str, object] = {}
    exec(out, scope)  # the printed text is the Computation
    comp = scope["comp"]
    assert isinstance(comp, spf.Computation)
    assert comp.data_spaces["x"].shape == ("N",)
    assert "importing axpy" in err


def test_import_help_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "--shape" in capsys.readouterr().out
    assert main(["import", str(tmp_path / "missing.c")]) == 1
    assert "no such file" in capsys.readouterr().err
    path = tmp_path / "axpy.c"
    path.write_text(SOURCE)
    assert main(["import", str(path)]) == 1
    err = capsys.readouterr().err
    assert "spf import: error: from_c: line 3" in err
    assert "shapes=" in err
    assert main(["import", str(path), "--shape", "y"]) == 1
    assert "NAME=EXT" in capsys.readouterr().err
