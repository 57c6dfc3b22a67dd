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


def test_tune_cflags_reach_the_record_key(capsys: Any) -> None:
    argv = ["tune", "gemm", "--sizes", "N=6,M=5,K=4", "--budget", "2", "--threads", "1"]
    assert main([*argv, "--cflags", "-O1 -fno-tree-vectorize"]) == 0
    first = capsys.readouterr().out
    assert "from the record" not in first
    assert main([*argv, "--cflags=-O2"]) == 0  # other flags: a new search, not the record
    second = capsys.readouterr().out
    assert "from the record" not in second
    assert main([*argv, "--cflags", "-O1  -fno-tree-vectorize"]) == 0  # the same flags
    assert "from the record (nothing measured)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ("-O2 -fno-such-flag", "unrecognized command-line option"),
        ("-O2 '-march=native", '--cflags "-O2 \'-march=native": No closing quotation'),
        (" ", "--cflags is empty"),
    ],
)
def test_tune_bad_cflags_are_a_clear_error(flags: str, message: str, capsys: Any) -> None:
    argv = ["tune", "gemm", "--sizes", "N=6,M=5,K=4", "--budget", "2", "--threads", "1"]
    assert main([*argv, f"--cflags={flags}"]) == 1
    assert message in capsys.readouterr().err


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
    err = capsys.readouterr().err
    assert message in err
    assert err.count("spf tune") == 1, err  # the command's prefix once, not in the message too


@pytest.fixture
def formats_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``spf tune --formats`` records in a temporary cache directory."""
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "formats_tune"


def test_tune_formats_prints_the_format_speedup_conversion_and_counts(
    capsys: Any, suitesparse_dir: Path, formats_records: Path
) -> None:
    matrix = str(suitesparse_dir / "lp_afiro.mtx")
    argv = ["tune", "spmv", "--matrix", matrix, "--formats", "CSR,ELL", "--budget", "20"]
    assert main([*argv, "--threads", "1", "--seed", "0"]) == 0
    out, err = capsys.readouterr()
    assert "choosing the format of SpMV on lp_afiro.mtx (27 x 51, 102 entries)" in err
    lines = out.splitlines()
    assert lines[0] in ("format: CSR (serial)", "format: ELL (serial)")
    assert lines[1].startswith("speedup: ")
    assert "x CSR (" in lines[1]
    assert lines[2].startswith("conversion: ")
    # CSR and ELL serial measured; their parallel schedules pruned (one thread)
    assert lines[3] == "candidates: 2 measured, 2 pruned, 0 refused, 0 not measured (budget)"
    assert f"record: {formats_records}" in out
    assert main([*argv, "--threads", "1", "--seed", "0"]) == 0
    assert "from the record (nothing measured)" in capsys.readouterr().out


def test_tune_formats_names_a_csr_kernel_variant(
    capsys: Any, suitesparse_dir: Path, formats_records: Path
) -> None:
    matrix = str(suitesparse_dir / "lp_afiro.mtx")
    argv = ["tune", "spmv", "--matrix", matrix, "--formats", "CSRV", "--budget", "20"]
    assert main([*argv, "--threads", "1"]) == 0
    assert capsys.readouterr().out.startswith("format: CSR (serial), kernel CSRV serial\n")


def test_tune_formats_refine_refines_the_chosen_schedule(
    capsys: Any, suitesparse_dir: Path, formats_records: Path
) -> None:
    matrix = str(suitesparse_dir / "lp_afiro.mtx")
    argv = ["tune", "spmv", "--matrix", matrix, "--formats", "CSR", "--refine", "--budget", "20"]
    assert main([*argv, "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("format: CSR (serial)")
    assert "comp.stmt(" in out.splitlines()[-1] or "no refinement won" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tune", "gemm", "--formats"], "give the kernel 'spmv' (not 'gemm')"),
        (["tune", "spmv", "--formats"], "--formats needs the matrix: give --matrix FILE.mtx"),
        (["tune", "spmv", "--refine"], "--refine refines the format chosen by --formats"),
        (
            ["tune", "spmv", "--formats", "--sizes", "N=3"],
            "--sizes, --function, --shape and",
        ),
        (["tune", "spmv", "--matrix", "missing.mtx", "--formats"], "no such file 'missing.mtx'"),
    ],
)
def test_tune_formats_errors_say_what_to_give(argv: list[str], message: str, capsys: Any) -> None:
    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_tune_formats_unknown_family_names_the_known_ones(
    capsys: Any, suitesparse_dir: Path, formats_records: Path
) -> None:
    matrix = str(suitesparse_dir / "lp_afiro.mtx")
    assert main(["tune", "spmv", "--matrix", matrix, "--formats", "CSR,COO"]) == 1
    assert "unknown format family 'COO' in space; known: CSR, CSC" in capsys.readouterr().err


def test_a_kernel_that_builds_no_computation_is_an_error(capsys: Any) -> None:
    """``spf.kernels.spgemm_csr`` builds a sparse einsum, not a Computation: a clear error,
    not a raw AttributeError trace."""
    assert main(["tune", "spgemm_csr", "--sizes", "N=4", "--budget", "2"]) != 0
    err = capsys.readouterr().err
    assert "spf.kernels.spgemm_csr builds" in err
    assert "Traceback" not in err


def test_a_bad_size_names_the_sizes_option(capsys: Any) -> None:
    """The error named ``--params``, an option ``spf tune`` does not have."""
    assert main(["tune", "gemm", "--sizes", "N=x", "--budget", "2"]) != 0
    assert (
        "--sizes: 'N=x' is not NAME=INTEGER; write e.g. --sizes N=1000" in capsys.readouterr().err
    )


def test_a_size_that_names_no_constant_is_refused(capsys: Any) -> None:
    """``--sizes Q=3`` for gemm (constants NI, NJ, NK) was accepted and ignored: a typo left
    the size the user meant unset, and the search ran on other sizes or failed later."""
    assert main(["tune", "gemm", "--sizes", "Q=3", "--budget", "2"]) != 0
    err = capsys.readouterr().err
    assert "--sizes names 'Q', not symbolic constants of gemm" in err
    assert "Traceback" not in err


def test_tune_a_c_function_with_pointer_arguments_takes_shape(tmp_path: Path, capsys: Any) -> None:
    """The error of a pointer argument said "pass shapes=", which spf tune had no option
    for: ``--shape`` as ``spf import``'s."""
    source = tmp_path / "scale.c"
    source.write_text(
        "void scale(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 2.0 * x[i]; }\n"
    )
    argv = ["tune", str(source), "--sizes", "n=40", "--budget", "2", "--threads", "1"]
    assert main([*argv, "--shape", "x=n"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# scale: ")
    assert "tuning scale on x[40], n=40" in err
    assert main(["tune", "gemm", "--shape", "x=n"]) == 1
    err = capsys.readouterr().err
    assert "spf tune: error: --shape and --param are for a C file's pointers and #defines" in err
    assert main(["tune", "gemm", "--function", "scale"]) == 1  # was ignored
    assert "spf tune: error: --function picks a function of a C file" in capsys.readouterr().err


@pytest.mark.parametrize("sizes", ["N=1000000000,M=1000000000,K=2", "N=9223372036854775807,M=2"])
def test_sizes_past_the_machines_memory_are_refused_before_allocating(
    sizes: str, capsys: Any
) -> None:
    """numpy's MemoryError (or "array is too big") was a traceback; sizes that fit the
    address space but not the memory would have filled it."""
    kernel = "gemm" if "K=" in sizes else "dense_mv"
    assert main(["tune", kernel, "--sizes", sizes, "--budget", "1"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"spf tune: error: the arguments of {kernel} at these sizes take " in err
    assert "give smaller --sizes" in err


def test_tune_a_c_function_keeps_a_define_symbolic_with_param(tmp_path: Path, capsys: Any) -> None:
    """--sizes N=... of a #define'd N said "not symbolic constants (its constants: none)"
    with no way to make it one from the command line: --param as spf import's."""
    source = tmp_path / "sc.c"
    source.write_text(
        "#define N 8\nvoid sc(double x[N]) { for (int i = 0; i < N; i++) x[i] = 2.0 * x[i]; }\n"
    )
    argv = ["tune", str(source), "--sizes", "N=16", "--budget", "2", "--threads", "1"]
    assert main(argv) == 1
    assert "keep a #define of a C file symbolic with --param NAME" in capsys.readouterr().err
    assert main([*argv, "--param", "N"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("# sc: ")
    assert "tuning sc on x[16], N=16" in err


def test_a_search_that_measured_nothing_is_not_recorded(capsys: Any) -> None:
    """``--budget 1e-9`` measured no candidate, yet its record answered the next call with
    a real budget: "from the record (nothing measured) ... the default schedule is the
    fastest found", for good."""
    argv = ["tune", "gemm", "--sizes", "N=5,M=4,K=3", "--threads", "1", "--seed", "3"]
    assert main([*argv, "--budget", "1e-9"]) == 0
    out = capsys.readouterr().out
    assert "0 candidates measured" in out
    assert "# record:" not in out
    assert "# no candidate was measured within the budget: give a larger --budget" in out
    assert main([*argv, "--budget", "3"]) == 0
    out = capsys.readouterr().out
    assert "from the record" not in out
    assert "# record:" in out
