"""Careless input to the ``spf`` command line and ``python -m spf.mpi``: every failure is one
line naming what to change with the documented exit status, never a traceback, and no
command overwrites its own input."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

import spf.mpi
from spf.cli import main
from spf.errors import ArgumentError

if TYPE_CHECKING:
    from pathlib import Path

MODULE = """
import spf

def build():
    comp = spf.Computation("twice")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    return comp

def interrupted():
    raise KeyboardInterrupt

def buggy():
    return len(3)
"""

C_SOURCE = "void fill(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 1.0; }\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_cache: Path) -> Path:
    """A temporary current directory holding ``k22.py``, ``fill.c`` and broken modules."""
    (tmp_path / "k22.py").write_text(MODULE)
    (tmp_path / "fill.c").write_text(C_SOURCE)
    (tmp_path / "syntax22.py").write_text("def f(:\n    pass\n")
    (tmp_path / "raising22.py").write_text("raise ValueError('at import')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))
    for name in ("k22", "syntax22", "raising22"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 1) -> str:
    """Run ``spf argv``; assert it failed with ``code``, nothing on stdout, no traceback;
    return the error line."""
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if not line.startswith("spf: ")]
    assert len(errors) == 1, err
    return errors[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["codegen", "k22.py:build", "-o", "k22.py"],
        ["codegen", "k22:build", "-o", "./k22.py"],
        ["dot", "k22.py:build", "-o", "k22.py"],
        ["import", "fill.c", "--shape", "x=n", "-o", "fill.c"],
    ],
)
def test_output_that_is_the_input_is_refused_and_left_alone(
    argv: list[str], workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p.name: p.read_text() for p in workdir.iterdir() if p.is_file()}
    line = one_line_error(argv, capsys)
    assert "-o" in line
    assert "input" in line
    assert {p.name: p.read_text() for p in workdir.iterdir() if p.is_file()} == before


def test_output_into_a_missing_directory_creates_it(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["codegen", "k22:build", "-o", "gen/c/twice.c"]) == 0
    assert "void twice(" in (workdir / "gen/c/twice.c").read_text()
    assert main(["dot", "k22:build", "-o", "gen/dot/twice.dot"]) == 0
    assert (workdir / "gen/dot/twice.dot").read_text().startswith('digraph "twice"')


def test_output_that_is_a_directory_is_one_line_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "adir").mkdir()
    line = one_line_error(["codegen", "k22:build", "-o", "adir"], capsys)
    assert line.startswith("spf codegen: error: -o 'adir': cannot write")
    assert list((workdir / "adir").iterdir()) == []


def test_dot_output_suffix_is_case_insensitive(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dot", "k22:build", "-o", "G.DOT"]) == 0
    assert (workdir / "G.DOT").read_text().startswith('digraph "twice"')


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("syntax22.py:f", "cannot import 'syntax22.py': SyntaxError"),
        ("syntax22:f", "cannot import 'syntax22': SyntaxError"),
        ("raising22.py:f", "cannot import 'raising22.py': ValueError: at import"),
        ("raising22:f", "cannot import 'raising22': ValueError: at import"),
    ],
)
def test_module_that_fails_to_import_is_one_line_error(
    spec: str, message: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line_error(["codegen", spec], capsys)
    assert line.startswith("spf codegen: error: ")
    assert message in line


def test_ctrl_c_is_one_line_and_status_130(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line_error(["codegen", "k22:interrupted", "-o", "out.c"], capsys, code=130)
    assert line == "spf codegen: interrupted (Ctrl-C)"
    assert not (workdir / "out.c").exists()


def test_import_negative_shape_extent_is_refused(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import", "fill.c", "--shape", "x=-3"]) == 1
    out, err = capsys.readouterr()  # from_c's error shows the source line after it
    assert out == ""
    assert "spf import: error: " in err
    assert "negative extent -3" in err


def test_import_of_a_directory_says_so(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "src.c").mkdir()
    line = one_line_error(["import", "src.c"], capsys)
    assert line == "spf import: error: 'src.c' is a directory; give a C source file"


@pytest.mark.parametrize("timeout", [float("nan"), 0.0, -1.0])
def test_mpi_timeout_must_be_positive(timeout: float, tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    with pytest.raises(ArgumentError, match="timeout must be a positive number of seconds"):
        spf.mpi.run(script, 2, timeout=timeout)


def test_mpi_launcher_refuses_bad_timeout_and_missing_script(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    assert spf.mpi.main(["-n", "2", "--timeout", "nan", str(script)]) == 2
    assert "timeout must be a positive number of seconds, got nan" in capsys.readouterr().err
    missing = tmp_path / "missing.py"
    assert spf.mpi.main(["-n", "2", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"spf.mpi: no such file {str(missing)!r}; give the Python program to run\n"


@pytest.mark.parametrize("stem", ["spf", "json", "re", "numpy"])
def test_a_py_file_named_like_a_module_does_not_replace_it(
    stem: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``spf codegen json.py:f`` put the file in ``sys.modules['json']``: spf's own
    ``json.dumps`` (and numpy's, re's; spf's ``import spf`` inside ``spf.py``) then failed."""
    (workdir / f"{stem}.py").write_text(
        "import spf\n\ndef build():\n    return spf.kernels.dense_mv()\n"
    )
    real = sys.modules.get(stem)
    try:
        code = main(["codegen", f"{stem}.py:build"])
        replaced = sys.modules.get(stem) is not real
    finally:  # the real module back before pytest needs it
        if real is not None:
            sys.modules[stem] = real
    out, err = capsys.readouterr()
    assert not replaced
    assert code == 0, err
    assert "void dense_mv(" in out


def test_a_py_file_imports_the_modules_next_to_it(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``python proj/main.py`` does: the file's folder is searched first, also while
    FUNCTION runs (a lazy import), and sys.path is left as it was."""
    (workdir / "proj").mkdir()
    (workdir / "proj/helpers22.py").write_text(
        "import spf\n\ndef make():\n    return spf.kernels.dense_mv()\n"
    )
    (workdir / "proj/main22.py").write_text(
        "def build():\n    from helpers22 import make\n\n    return make()\n"
    )
    path = list(sys.path)
    try:
        code = main(["codegen", "proj/main22.py:build"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert "void dense_mv(" in out
        assert sys.path == path
    finally:
        sys.modules.pop("helpers22", None)


def test_demo_out_that_is_a_file_is_one_line_error(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_line_error(["demo", "--out", "fill.c"], capsys)
    assert line == (
        "spf demo: error: --out 'fill.c': cannot make the output folder: File exists; give a folder"
    )


class _ClosedPipe:
    """A stdout whose reader has gone (``spf codegen ... | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("no file descriptor")


def test_a_closed_pipe_on_stdout_ends_quietly(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["codegen", "k22:build"]) == 141  # 128 + SIGPIPE, as a shell shows it
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err


def test_ctrl_c_during_bench_is_one_line_and_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import spf.bench

    def interrupted(argv: list[str]) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(spf.bench, "main", interrupted)
    line = one_line_error(["bench", "--quick", "--only", "sets"], capsys, code=130)
    assert line == "spf bench: interrupted (Ctrl-C)"


def test_output_through_a_symlink_writes_through(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o LINK writes the file LINK points at, a device too (a link to /dev/null): the
    whole-file write must not rename a temporary file over the link."""
    import os
    import stat

    (workdir / "real.c").write_text("old")
    (workdir / "link.c").symlink_to("real.c")
    assert main(["codegen", "k22:build", "-o", "link.c"]) == 0
    assert (workdir / "link.c").is_symlink()
    assert "void twice(" in (workdir / "real.c").read_text()
    (workdir / "null.c").symlink_to(os.devnull)
    assert main(["codegen", "k22:build", "-o", "null.c"]) == 0
    assert (workdir / "null.c").is_symlink()
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_type_error_inside_function_is_not_blamed_on_its_arguments(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FUNCTION takes no arguments but raises TypeError itself: the error said "(it must
    take no arguments)", sending the user to the wrong fix."""
    line = one_line_error(["codegen", "k22:buggy"], capsys)
    assert "TypeError: object of type 'int' has no len()" in line
    assert "must take no arguments" not in line
