"""The ``spf`` command line: every command, its ``--help``, progress on stderr, clear errors."""

from __future__ import annotations

import doctest
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import spf.cli
from spf.cli import main

if TYPE_CHECKING:
    from collections.abc import Sequence

MODULE = """
import spf

def build():
    comp = spf.Computation("twice")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$a$(i) = 2 * $a$(i);", "{[i]: 0 <= i < N}"))
    return comp

def not_a_computation():
    return 42

def needs_arguments(n):
    return None

def broken():
    raise RuntimeError("boom")

def illegal():
    comp = spf.kernels.spmv_csr()
    comp.stmt(0).parallelize("k")
    return comp

def line_buffer():
    blur = spf.kernels.blur2d()
    s0, s1 = blur.stmts
    s1.shift("i", 2).after(s0, "i")
    s0.storage_fold("i", 3)
    return blur

VALUE = 3
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel_cache: Path) -> Path:
    """A temporary current directory holding ``mykernels.py`` (importable from there)."""
    (tmp_path / "mykernels.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SPF_CACHE_DIR", str(kernel_cache))
    for name in ("mykernels", "gpu_kernels", "my_kernels"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return tmp_path


def run(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------------------------ help
def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("demo", "codegen", "dot", "bench"):
        assert command in out
    assert "spf codegen spf.kernels:spmv_csr" in out  # the examples epilog


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("demo", "Matrix Market"),
        ("codegen", "--target"),
        ("dot", ".svg"),
        ("bench", "--quick"),
    ],
)
def test_help_of_each_command(
    command: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: spf {command}")
    assert expected in out


def test_no_command_prints_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([], capsys)
    assert code == 2
    assert "usage: spf" in err
    assert out == ""


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    import spf

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"spf {spf.__version__}"


def test_python_dash_m_spf_runs_the_command_line() -> None:
    import spf

    root = Path(spf.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-m", "spf", "--version"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"spf {spf.__version__}"


def test_version_has_one_source() -> None:
    """pyproject reads the version from spf/_version.py; nothing else spells it."""
    import tomllib

    import spf

    root = Path(spf.__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert "version" not in project["project"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "spf._version.__version__"
    assert spf.__version__.count(".") >= 2
    assert (root / "spf" / "py.typed").is_file()
    assert project["project"]["license"] == "MIT"
    assert "the spf developers" in (root / "LICENSE").read_text()
    assert any(d.startswith("scipy") for d in project["project"]["dependencies"])
    import importlib.metadata

    try:
        installed = importlib.metadata.version("spf")
    except importlib.metadata.PackageNotFoundError:
        return
    assert installed == spf.__version__, "reinstall spf (pip install -e .) after a version bump"


def test_installed_entry_point_runs() -> None:
    exe = Path(sys.executable).with_name("spf")
    assert exe.exists(), "the package installs the `spf` script (pyproject [project.scripts])"
    done = subprocess.run(
        [str(exe), "bench", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "usage: spf bench" in done.stdout


# --------------------------------------------------------------------------------- codegen
def test_codegen_c_to_stdout_with_progress_on_stderr(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["codegen", "spf.kernels:spmv_csr"], capsys)
    assert code == 0
    assert "#define rowptr(t0) rowptr[t0]" in out
    assert "void spmv_csr(" in out
    assert "spf: building spf.kernels:spmv_csr()" in err
    assert "spf: generating c code for 'spmv_csr'" in err
    assert "#define" not in err


def test_codegen_to_file_with_a_name(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["codegen", "mykernels:build", "-o", "k.c", "--name", "dbl"], capsys)
    assert code == 0
    assert out == ""
    text = (workdir / "k.c").read_text()
    assert "void dbl(" in text
    assert "wrote k.c" in err
    cc = shutil.which("gcc")
    assert cc is not None
    done = subprocess.run([cc, "-c", "-Wall", "-Werror", "k.c", "-o", "k.o"], check=False)
    assert done.returncode == 0


GPU_MODULE = """
import spf

def on_gpu():
    comp = spf.kernels.spmv_csr()
    comp.stmt(0).split("i", 32, "i0", "i1").gpu(("i0",), ("i1",))
    return comp
"""


@pytest.mark.parametrize(
    ("target", "function", "marker"),
    [
        ("cuda", "gpu_kernels:on_gpu", "__global__ void spmv_csr_k0("),
        ("mpi", "spf.kernels:spmv_csr", "void spmv_csr(MPI_Comm comm,"),
        ("hls", "spf.kernels:spmv_csr", "#pragma HLS INTERFACE s_axilite port=return"),
    ],
)
def test_codegen_other_targets(
    target: str, function: str, marker: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "gpu_kernels.py").write_text(GPU_MODULE)
    code, out, err = run(["codegen", function, "--target", target, "-o", f"k.{target}"], capsys)
    assert code == 0, err
    assert out == ""
    assert marker in (workdir / f"k.{target}").read_text()
    assert f"generating {target} code for 'spmv_csr'" in err


def test_codegen_hls_takes_bounds_and_tripcounts(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line buffer of M-2 columns needs a bound for M: docs/backends/hls.md sends users to
    `spf codegen ... --target hls`, which had no way to give it (the printer's error asked
    for hls_bounds=)."""
    code, out, err = run(["codegen", "mykernels:line_buffer", "--target", "hls"], capsys)
    assert code == 1
    assert "--hls-bounds" in err
    argv = ["codegen", "mykernels:line_buffer", "--target", "hls", "--hls-bounds", "M=64,N=2:64"]
    code, out, err = run([*argv, "--hls-tripcounts", "j=0:62"], capsys)
    assert code == 0, err
    from spf.codegen.hls import generate

    want = generate(
        spf.cli.load("mykernels:line_buffer"),
        hls_bounds={"M": 64, "N": (2, 64)},
        hls_tripcounts={"j": (0, 62)},
    )
    assert out == want + "\n" or out == want
    for bad, message in [
        (["--hls-bounds", "M=x"], "--hls-bounds: 'M=x' is not NAME=MAX or NAME=MIN:MAX"),
        (["--hls-bounds", "M=9:1"], "--hls-bounds: 'M=9:1' is not NAME=MAX or NAME=MIN:MAX"),
        (["--hls-bounds", "Q=3"], "hls_bounds: unknown name 'Q'"),
        (["--hls-tripcounts", "j=1,j=2"], "--hls-tripcounts: 'j' is given twice"),
    ]:
        code, out, err = run(["codegen", "mykernels:line_buffer", "--target", "hls", *bad], capsys)
        assert (code, out) == (1, ""), err
        assert message in err
    code, out, err = run(["codegen", "mykernels:build", "--hls-bounds", "N=4"], capsys)
    assert code == 1
    assert "--hls-bounds is an option of --target hls, not c" in err


def test_codegen_from_a_file_path(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["codegen", str(workdir / "mykernels.py") + ":build"], capsys)
    assert code == 0
    assert "void twice(" in out


def test_codegen_refuses_an_illegal_schedule_unless_asked(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["codegen", "mykernels:illegal"], capsys)
    assert code == 1
    assert out == ""
    assert "spf codegen: error: illegal tag: loop 'k'" in err
    code, out, _ = run(["codegen", "mykernels:illegal", "--no-check"], capsys)
    assert code == 0
    assert "#pragma omp parallel for" in out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("spf.kernels", "expected MODULE:FUNCTION (e.g. spf.kernels:spmv_csr), got 'spf.kernels'"),
        (":build", "expected MODULE:FUNCTION"),
        ("mykernels:", "expected MODULE:FUNCTION"),
        ("no_such_module:f", "cannot import 'no_such_module'"),
        ("missing.py:f", "no such file 'missing.py'"),
        ("mykernels:nothing", "mykernels has no function 'nothing'; its functions: broken, build"),
        ("mykernels:VALUE", "mykernels.VALUE is not a function but a 'int' value"),
        ("mykernels:not_a_computation", "returned int, not an spf.Computation"),
        ("mykernels:needs_arguments", "it must take no arguments"),
        ("mykernels:broken", "calling broken() failed: RuntimeError: boom"),
    ],
)
def test_bad_function_specs_are_one_line_errors(
    spec: str, message: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("codegen", "dot"):
        code, out, err = run([command, spec], capsys)
        assert code == 1
        assert out == ""
        assert f"spf {command}: error: " in err
        assert message in err
        assert "Traceback" not in err


def test_unknown_target_is_refused_before_building(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["codegen", "mykernels:broken", "--target", "fortran"], capsys)
    assert code == 1
    assert out == ""
    assert "unknown target 'fortran'; choose one of c, cuda, mpi, hls" in err
    assert "boom" not in err


# ------------------------------------------------------------------------------------- dot
def test_dot_text_to_stdout_and_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["dot", "spf.kernels:blur2d"], capsys)
    assert code == 0
    assert out.startswith('digraph "blur2d" {')
    code, out, _err = run(["dot", "mykernels:build", "-o", "g.dot"], capsys)
    assert code == 0
    assert out == ""
    assert (workdir / "g.dot").read_text().startswith('digraph "twice"')


@pytest.mark.requires_graphviz
def test_dot_renders_svg(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["dot", "spf.kernels:spmv_csr", "-o", "spmv.svg"], capsys)
    assert code == 0
    assert "rendering with Graphviz to spmv.svg" in err
    assert b"<svg" in (workdir / "spmv.svg").read_bytes()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["dot", "spf.kernels:blur2d", "--params", "N=-5,M=10"],
         "--params: N = -5 makes the extent N of bx negative (-5)"),
        (["dot", "spf.kernels:blur2d", "--params", "N=1"],
         "--params: N = 1 makes the extent N-2 of out negative (-1)"),
        (["dot", "spf.kernels:blur2d", "--params", "M=-1", "--steps", "steps"],
         "--params: M = -1 makes the extent M of img negative (-1)"),
        (["codegen", "spf.kernels:gemm", "--target", "hls", "--hls-bounds", "N=-9:-5,M=4,K=4"],
         "--hls-bounds: N = -9 makes the extent N of A negative (-9)"),
        (["codegen", "spf.kernels:gemm", "--target", "hls", "--hls-tripcounts", "k=-4:-1"],
         "--hls-tripcounts: k=-4:-1 gives a negative trip count"),
    ],
)  # fmt: skip
def test_negative_sizes_and_trip_counts_refused_naming_the_flag(
    workdir: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    """``spf dot --params N=-5`` drew byte sizes of arrays of -5 rows, and a negative
    ``--hls-bounds`` or ``--hls-tripcounts`` reached the generated C++ (a LOOP_TRIPCOUNT
    of min=-4)."""
    code, out, err = run(argv, capsys)
    assert (code, out) == (1, ""), err
    assert message in err
    code, out, err = run(["dot", "spf.kernels:blur2d", "--params", "N=2,M=2"], capsys)
    assert code == 0, err


def test_dot_refuses_an_unknown_format(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["dot", "spf.kernels:spmv_csr", "-o", "spmv.gif"], capsys)
    assert code == 1
    assert "unsupported format 'gif'" in err


# ------------------------------------------------------------------------------ demo, bench
@pytest.mark.slow
def test_demo_on_a_matrix_market_file(
    tmp_path: Path, suitesparse_dir: Path, kernel_cache: Path
) -> None:
    env = {**os.environ, "SPF_CACHE_DIR": str(kernel_cache)}
    matrix = str(suitesparse_dir / "west0067.mtx")
    cmd = [sys.executable, "-m", "spf.cli", "demo", matrix, "--out", str(tmp_path / "out")]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "demo OK" in done.stdout
    assert (tmp_path / "out").is_dir()


def test_bench_passes_its_arguments_through(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "--only", "no-such-benchmark"])
    assert exit_info.value.code == 2
    assert "usage: spf bench" in capsys.readouterr().err


def test_module_doctests() -> None:
    result = doctest.testmod(spf.cli, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3
    assert result.failed == 0
