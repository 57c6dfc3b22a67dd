"""The documentation builds without warnings, and every code example in it runs.

Each page's ```` ```python ````, ```` ```pycon ```` and ```` ```console ```` blocks run in order,
in one fresh namespace, in a temporary directory (state carries from block to block, as a
reader follows the page); ``pycon`` blocks are doctests, so their printed output is checked
too, and ``console`` blocks are shell sessions whose commands run and whose shown output is
checked.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(
    p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "_build" not in p.parts
)
PAGES.remove("README.md")
BLOCK = re.compile(r"^```(python|pycon|console)\n(.*?)^```", re.S | re.M)
TIMING = re.compile(r" in [0-9.]+ s$")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def blocks(page: str) -> list[tuple[str, str, int]]:
    """``(kind, code, line)`` of each Python block of ``docs/<page>``."""
    text = (DOCS / page).read_text()
    return [(m[1], m[2], text.count("\n", 0, m.start()) + 2) for m in BLOCK.finditer(text)]


def run_blocks(page: str, namespace: dict[str, object]) -> None:
    """Run the blocks of ``page`` in order in ``namespace``; fail with the page and line."""
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for kind, code, line in blocks(page):
        where = f"docs/{page}:{line}"
        if kind == "python":
            exec(compile(code, where, "exec"), namespace)
            continue
        if kind == "console":
            run_console(code, where)
            continue
        test = doctest.DocTestParser().get_doctest(code, namespace, where, where, line)
        result = runner.run(test, clear_globs=False)
        namespace.update(test.globs)  # DocTest runs on a copy: carry its names forward
        assert result.failed == 0, f"{where}: {result.failed} doctest example(s) failed (above)"


def run_console(session: str, where: str) -> None:
    """Run each ``$ command`` of a shell session (the ``spf`` script of this interpreter's
    environment first on ``PATH``) and check it against the lines shown after it: exit status
    1 when they show an error, and each shown line (timings and a trailing ``...`` left out)
    in the command's output."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for chunk in re.split(r"^\$ ", session, flags=re.M)[1:]:
        command, *shown = chunk.rstrip("\n").split("\n")
        done = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, env=env, check=False
        )
        output = done.stdout + done.stderr
        want_status = 1 if any(": error: " in line for line in shown) else 0
        assert done.returncode == want_status, (
            f"{where}: `{command}` exited {done.returncode}:\n{output}"
        )
        for line in shown:
            expected = TIMING.sub("", line.removesuffix("...").rstrip())
            assert expected in output, f"{where}: `{command}` did not print {expected!r}:\n{output}"


def test_every_page_has_examples_or_is_reference() -> None:
    reference = {"api.md", "comparison.md"}
    missing = [p for p in PAGES if p not in reference and not blocks(p)]
    assert not missing, f"pages without runnable examples: {missing}"


# Pages whose examples need a tool beyond gcc (skipped, by tests/conftest.py, only when absent).
NEEDS = {
    "pdfg.md": [pytest.mark.requires_graphviz],
    "backends/mpi.md": [pytest.mark.requires_mpi, pytest.mark.slow],
    "backends/hls.md": [pytest.mark.slow],
    "scheduling.md": [pytest.mark.slow],
}
# Pages whose examples take more than a few seconds (run first: tests/conftest.py).
SLOW = ("formats.md", "inspection.md", "einsum.md", "cli.md", "formats_tune.md", "import_c.md")


def page_marks(page: str) -> list[pytest.MarkDecorator]:
    return NEEDS.get(page, []) + ([pytest.mark.slow] if page in SLOW else [])


@pytest.mark.parametrize("page", [pytest.param(p, marks=page_marks(p)) for p in PAGES])
def test_page_examples_run(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_cache: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))
    monkeypatch.syspath_prepend(str(DOCS.parent / "examples"))
    run_blocks(page, {"__name__": f"docs.{page}"})


@pytest.mark.requires_graphviz
@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path: Path) -> None:
    """``sphinx-build -W`` (what ``make docs`` runs) into a temporary directory."""
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    html = (tmp_path / "html" / "pdfg.html").read_text()
    assert html.count("<svg") + html.count(".svg") >= 2, "the PDFG page has no rendered graphs"
    assert code_columns(tmp_path / "html" / "_static") >= 100, "code blocks cut 100-char lines"


MONOSPACE_EM = 0.602
"""Advance width of a character of DejaVu Sans Mono and Menlo, the widest of the theme's
monospace fonts, in em."""


def code_columns(static: Path) -> float:
    """Characters of a code block that fit the page without scrolling, from the built theme's
    CSS: the page width less the sidebar and the body's and the block's side paddings, over
    the width of a monospace character at the code font size."""
    css = (static / "alabaster.css").read_text()

    def rule(selector: str, prop: str) -> list[float]:
        block = re.search(rf"^{re.escape(selector)} {{([^}}]*)}}", css, re.M)
        assert block, f"alabaster.css has no rule {selector!r}"
        value = re.search(rf"^\s*{prop}:\s*([^;]+);", block[1], re.M)
        assert value, f"alabaster.css: {selector} has no {prop}"
        return [float(v) for v in re.findall(r"([0-9.]+)(?:px|em)?", value[1])]

    basic = (static / "basic.css").read_text()
    body_max = re.search(r"^div\.body {[^}]*max-width: ([^;]+);", basic, re.M)
    assert body_max, "basic.css has no max-width for div.body"
    assert body_max[1].strip() == "none", "basic.css caps the body's width"
    page = rule("div.document", "width")[0] - rule("div.bodywrapper", "margin")[-1]
    page -= sum(rule("div.body", "padding")[1::2]) + 2 * rule("pre", "padding")[-1]
    char = rule("body", "font-size")[0] * rule("pre, tt, code", "font-size")[0] * MONOSPACE_EM
    return page / char


def test_files_the_docs_and_readme_name_exist() -> None:
    """Every ``examples/...`` script and every relative link of the README and the docs."""
    root = DOCS.parent
    texts = {p: p.read_text() for p in [root / "README.md", *DOCS.rglob("*.md")]}
    missing = []
    for path, text in texts.items():
        for name in re.findall(r"examples/[\w.]+\.(?:py|ipynb)", text):
            if not (root / name).is_file():
                missing.append(f"{path.name}: {name}")
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            if not (path.parent / link).exists():
                missing.append(f"{path.name}: link {link}")
    assert not missing, missing


LEGACY_RANDOM = re.compile(
    r"\b(?:sp|sps|sparse|scipy\.sparse)\.rand(?:om)?\(|\brandom_state\s*=", re.M
)


def test_random_matrices_come_from_random_array() -> None:
    """The docs, README, examples and spf's own code make random sparse matrices with
    ``scipy.sparse.random_array(shape, density=..., rng=...)``: the legacy ``sp.random`` (and
    its ``random_state=``) returns a ``coo_matrix`` and tries to allocate hundreds of GiB at
    n = 200k."""
    root = DOCS.parent
    files = [root / "README.md", *DOCS.rglob("*.md"), *(root / "examples").rglob("*.py")]
    files += [*(root / "examples").rglob("*.ipynb"), *(root / "spf").rglob("*.py")]
    files += [*(root / "benchmarks").rglob("*.py")]
    found = []
    for path in files:
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if LEGACY_RANDOM.search(line):
                found.append(f"{path.relative_to(root)}:{k}: {line.strip()}")
    assert not found, "use sp.random_array((m, n), density=..., rng=...):\n" + "\n".join(found)
    assert LEGACY_RANDOM.search("A = sp.random(9, 9, density=0.1, random_state=0)")
    assert not LEGACY_RANDOM.search("A = sp.random_array((9, 9), density=0.1, rng=0)")
