"""The tutorial scripts in ``examples/`` run, and the PDFG notebook executes (through nbclient).

Each script runs as ``__main__`` in a temporary directory, with its arguments in ``sys.argv``,
warnings as errors and a kernel cache that only this module's example runs share (its compiled
kernels are the whole run's: ``tests/conftest.py``); the scripts check their results against
numpy / scipy themselves and fail loudly. A script runs in the test's own process (a fresh
interpreter started and importing numpy, scipy and spf cost ~1 s CPU a script on the loaded
2-core machine, most of what the short ones take), except those in :data:`FRESH`, which set up
their process before importing numpy. Other example scripts (``scheduled_*``, ``cuda_*``,
``mpi_*``, ``hls_*``) have their own tests.
"""

from __future__ import annotations

import html
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPTS = [
    "getting_started_mv.py",
    "scheduling_tutorial.py",
    "pdfg_tutorial.py",
    "inline_functions.py",
    "checked_contract.py",
    "scatter_reduction.py",
    "partial_sums.py",
    "wavefront_sptrsv.py",
    "import_c.py",
    "wavefront_gs_ilu0.py",
    "wavefront_from_c.py",
    "spgemm.py",
    "format_relations.py",
    "formats_tune.py",
    "einsum.py",
    "tune_gemm.py",
    "pcg.py",
]


@pytest.fixture(scope="module")
def cache(kernel_cache_factory: Callable[[str], Path]) -> Path:
    """A cache for this module's example runs (never the user's) that shares the run's
    compiled kernels: a kernel that several examples (or the docs pages) build is compiled
    once."""
    return kernel_cache_factory("examples-cache")


# Scripts run in a fresh interpreter: pcg.py limits OpenBLAS's threads before numpy loads.
FRESH = {"pcg.py"}


@pytest.fixture
def run_script(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Callable[..., str]:
    """``run_script(name, *args)``: what ``python examples/<name> args`` prints, run in
    ``tmp_path`` with this module's kernel cache (a script that fails fails the test)."""

    def run(name: str, *args: str) -> str:
        if name in FRESH:
            return run_fresh(name, tmp_path, cache, *args)
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("SPF_CACHE_DIR", str(cache))
        monkeypatch.setattr(sys, "argv", [str(EXAMPLES / name), *args])
        monkeypatch.syspath_prepend(str(EXAMPLES))  # as `python examples/<name>` puts it first
        capfd.readouterr()
        code: object = 0
        try:
            runpy.run_path(str(EXAMPLES / name), run_name="__main__")
        except SystemExit as done:
            code = done.code
        out, err = capfd.readouterr()
        assert code in (None, 0), f"{name} exited {code}:\n{out[-3000:]}\n{err[-3000:]}"
        return out

    return run


def run_fresh(name: str, tmp_path: Path, cache: Path, *args: str) -> str:
    env = {**os.environ, "SPF_CACHE_DIR": str(cache), "PYTHONWARNINGS": "error"}
    cmd = [sys.executable, str(EXAMPLES / name), *args]
    done = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


# Arguments a script runs with here: tune_gemm.py searches each of its two kernels for the
# budget it is given (4 s each by default, the search timing candidates on a core throughout):
# 1 s still times the default schedule and the candidates it reaches, then checks the result.
ARGS = {"tune_gemm.py": ("1",)}


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_example_script_runs(name: str, run_script: Callable[..., str]) -> None:
    out = run_script(name, *ARGS.get(name, ()))
    assert out.strip(), f"{name} printed nothing"


def test_getting_started_on_a_matrix_market_file(
    run_script: Callable[..., str], suitesparse_dir: Path
) -> None:
    out = run_script("getting_started_mv.py", str(suitesparse_dir / "west0067.mtx"))
    assert "67x67" in out
    assert "matches scipy" in out


@pytest.mark.requires_graphviz
def test_pdfg_tutorial_renders_svg(tmp_path: Path, run_script: Callable[..., str]) -> None:
    run_script("pdfg_tutorial.py", "graphs")
    names = sorted(p.name for p in (tmp_path / "graphs").iterdir())
    assert names == [
        "blur.svg",
        "blur_inlined.svg",
        "forward_solve.svg",
        "producer_consumer.svg",
        "producer_consumer_fused.svg",
    ]
    assert all(b"<svg" in (tmp_path / "graphs" / n).read_bytes() for n in names)


def execute_notebook(
    name: str, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> list[Any]:
    """Execute ``examples/<name>`` in ``tmp_path`` (through nbclient); the outputs of its
    code cells, checked to hold no error."""
    import nbclient
    import nbformat

    monkeypatch.setenv("SPF_CACHE_DIR", str(cache))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    notebook = tmp_path / name
    shutil.copy(EXAMPLES / name, notebook)
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


@pytest.mark.requires_graphviz
@pytest.mark.slow
def test_pdfg_inline_notebook_executes(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = execute_notebook("pdfg_inline.ipynb", tmp_path, cache, monkeypatch)
    svgs = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(svgs) == 2, "the graph before and after inlining are rendered"
    text = "".join(o.get("text", "") for o in outputs)
    assert "['out', 'img']" in text
    assert "matches the two-pass blur" in text
    check_inlined_graph_is_readable([o["data"]["image/svg+xml"] for o in svgs])


def check_inlined_graph_is_readable(svgs: list[str]) -> None:
    """The graph after inlining: the long statement's label is its short form cut to a few
    lines (no text wider than a statement shown as written), the whole statement in the
    node's tooltip, and the drawing not shrunk to a strip."""
    from spf.pdfg.labels import WIDTH

    after = "".join(svgs[1]) if isinstance(svgs[1], list) else svgs[1]
    texts = [html.unescape(t) for t in re.findall(r"<text [^>]*>([^<]*)</text>", after)]
    assert max(map(len, texts)) <= WIDTH, max(texts, key=len)
    assert any(t.startswith("out(i, j) = ((img(i, j) + img(i, j + 1) +") for t in texts)
    assert any(t.endswith(" …") for t in texts)
    tooltips = [html.unescape(t) for t in re.findall(r'xlink:title="([^"]*)"', after)]
    assert any(
        t.startswith("s1: out(i, j) = ((img(i, j)") and t.count("img(") == 9 for t in tooltips
    )
    height = float(re.search(r'<svg width="[0-9.]+pt" height="([0-9.]+)pt"', after)[1])
    assert height > 100, "the graph is drawn at a readable scale"


def test_pdfg_inline_notebook_stored_outputs_show_the_readable_graph() -> None:
    """The outputs stored in the notebook (what a reader sees without running it) are those
    of the current labels."""
    import nbformat

    nb = nbformat.read(EXAMPLES / "pdfg_inline.ipynb", as_version=4)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    check_inlined_graph_is_readable(
        [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    )


@pytest.mark.requires_graphviz
@pytest.mark.slow
def test_pdfg_steps_notebook_executes(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history displays as one row of graphs per schedule, the command under each."""
    outputs = execute_notebook("pdfg_steps.ipynb", tmp_path, cache, monkeypatch)
    rows = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert [row.count("<svg") for row in rows] == [6, 4], "the blur's and the solve's steps"
    assert "3. comp.stmt(&quot;s0&quot;).storage_fold(&quot;i&quot;, 3)" in rows[0]
    text = "".join(o.get("text", "") for o in outputs)
    assert "carried by ['i']" in text
    assert "matches numpy" in text


@pytest.mark.requires_graphviz
@pytest.mark.slow
def test_tune_pdfg_notebook_executes(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default and the tuned GEMM's PDFGs side by side, the tuned kernel checked."""
    outputs = execute_notebook("tune_pdfg.ipynb", tmp_path, cache, monkeypatch)
    tables = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(tables) == 1
    assert tables[0].count("<svg") == 2
    assert "default schedule" in tables[0]
    assert "tuned schedule" in tables[0]
    text = "".join(o.get("text", "") for o in outputs)
    assert "refused as illegal" in text
    assert "the tuned GEMM matches numpy" in text


@pytest.mark.requires_graphviz
def test_pdfg_steps_script_writes_both_schedules(
    tmp_path: Path, run_script: Callable[..., str]
) -> None:
    out = run_script("pdfg_steps.py", "graphs")
    assert "matches numpy" in out
    blur = sorted(p.name for p in (tmp_path / "graphs" / "blur").iterdir())
    assert blur[0] == "00-initial.svg"
    assert blur[3] == "03-storage_fold.svg"
    assert blur[-1] == "index.html"
    assert len(list((tmp_path / "graphs" / "forward_solve").glob("*.svg"))) == 4
