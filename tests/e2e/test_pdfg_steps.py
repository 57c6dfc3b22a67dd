"""The PDFG at every step from the command line (API.md §14): ``spf dot MODULE:FUNCTION
--steps DIR`` (``examples/pdfg_steps.py`` and ``pdfg_steps.ipynb`` are run by
tests/test_examples.py).

Drawing SVGs needs Graphviz's ``dot``: ``make test`` installs it, and where it is missing
those tests are skipped with the reason "Graphviz `dot` not found on PATH"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import spf.cli

MODULE = """
import spf

def tiled():
    comp = spf.kernels.blur2d()
    comp.stmt("s1").tile("i", "j", 16, 32, "i0", "j0", "i1", "j1")
    comp.stmt("s0").compute_at("s1", "j0")
    comp.stmt("s1").vectorize("j1", 8)
    return comp
"""


@pytest.mark.requires_graphviz
def test_spf_dot_steps_writes_one_svg_per_step_and_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("sched.py").write_text(MODULE)
    assert spf.cli.main(["dot", "sched.py:tiled", "--steps", "out/steps"]) == 0
    folder = tmp_path / "out" / "steps"
    svgs = ["00-initial.svg", "01-tile.svg", "02-compute_at.svg", "03-vectorize.svg"]
    assert sorted(p.name for p in folder.iterdir()) == [*svgs, "index.html"]
    for name in svgs:
        text = (folder / name).read_text()
        assert text.count("<svg") == 1
    index = (folder / "index.html").read_text()
    assert re.findall(r'src="([^"]+)"', index) == svgs
    assert "2. comp.stmt(&quot;s0&quot;).compute_at(&quot;s1&quot;, &quot;j0&quot;)" in index
    assert "wrote 4 SVG files" in capsys.readouterr().err


def test_spf_dot_steps_refusals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("taken").write_text("a file")
    assert spf.cli.main(["dot", "spf.kernels:gemm", "--steps", "taken"]) == 1
    err = capsys.readouterr().err
    assert "spf dot: error: render: 'taken' is a file; give a directory for the steps" in err
    with pytest.raises(SystemExit) as exit_:
        spf.cli.main(["dot", "spf.kernels:gemm", "--steps", "d", "-o", "g.svg"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_spf_dot_steps_without_graphviz_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import spf.pdfg.pdfg

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(spf.pdfg.pdfg.shutil, "which", lambda _name: None)
    assert spf.cli.main(["dot", "spf.kernels:gemm", "--steps", "steps"]) == 1
    assert "spf dot: error: Graphviz's 'dot' is not installed" in capsys.readouterr().err


@pytest.mark.requires_graphviz
def test_spf_dot_params_size_every_step_and_a_single_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("sched.py").write_text(MODULE)
    argv = ["dot", "sched.py:tiled", "--params", "N=1080, M=1920", "--steps", "steps"]
    assert spf.cli.main(argv) == 0
    svgs = sorted((tmp_path / "steps").glob("*.svg"))
    assert len(svgs) == 4
    for svg in svgs:  # img: 1080 x 1920 doubles in every step
        assert "15.8 MiB" in svg.read_text()
    assert "removed by" in svgs[0].read_text()  # bx, before anything is fused
    assert spf.cli.main(["dot", "sched.py:tiled", "--params", "N=1080,M=1920", "-o", "g.dot"]) == 0
    assert "15.8 MiB" in (tmp_path / "g.dot").read_text()
    capsys.readouterr()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("N=big", "--params: 'N=big' is not NAME=INTEGER; write e.g. --params N=1000,M=800"),
        ("N", "--params: 'N' is not NAME=INTEGER"),
        ("N=1,,M=2", "--params: '' is not NAME=INTEGER"),
        ("N=1,N=2", "--params: 'N' is given twice"),
        ("K=3", "unknown parameter 'K'; known parameters: 'M', 'N'"),
    ],
)
@pytest.mark.parametrize("where", [["--steps", "steps"], ["-o", "g.dot"]])
def test_spf_dot_bad_params_are_one_error_line(
    value: str,
    message: str,
    where: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert spf.cli.main(["dot", "spf.kernels:blur2d", "--params", value, *where]) == 1
    lines = capsys.readouterr().err.splitlines()
    errors = [line for line in lines if not line.startswith("spf: ")]  # not progress
    assert len(errors) == 1
    assert errors[0].startswith(f"spf dot: error: {message}")
    assert not list(tmp_path.iterdir())  # nothing written
