"""The PDFG at every step from the outside (API.md §14): ``spf dot MODULE:FUNCTION --steps
DIR``, ``examples/pdfg_steps.py`` and the notebook ``examples/pdfg_steps.ipynb``.

These draw SVGs, so they need Graphviz's ``dot``: ``make test`` installs it, and where it is
missing they are skipped with the reason "Graphviz `dot` not found on PATH"."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import spf.cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
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
def test_pdfg_steps_example_writes_both_schedules(tmp_path: Path) -> None:
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "pdfg_steps.py"), "graphs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "matches numpy" in done.stdout
    blur = sorted(p.name for p in (tmp_path / "graphs" / "blur").iterdir())
    assert blur[0] == "00-initial.svg"
    assert blur[3] == "03-storage_fold.svg"
    assert blur[-1] == "index.html"
    assert len(list((tmp_path / "graphs" / "forward_solve").glob("*.svg"))) == 4


@pytest.mark.requires_graphviz
@pytest.mark.slow
def test_pdfg_steps_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbclient
    import nbformat

    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    notebook = tmp_path / "pdfg_steps.ipynb"
    shutil.copy(EXAMPLES / "pdfg_steps.ipynb", notebook)
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    rows = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert [row.count("<svg") for row in rows] == [6, 4], "the blur's and the solve's steps"
    assert "3. comp.stmt(&quot;s0&quot;).storage_fold(&quot;i&quot;, 3)" in rows[0]
    text = "".join(o.get("text", "") for o in outputs)
    assert "carried by ['i']" in text
    assert "matches numpy" in text
