"""``make demo`` end to end: every kernel it builds is checked inside (a mismatch raises)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from spf import demo
from spf.runtime import threads

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.slow
def test_demo_runs_and_writes_its_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo.main(["--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert text.rstrip().endswith("demo OK")
    for name in (
        "spmv_csr.c",
        "sptrsv_csr.c",
        "spmv_csr.after.dot",
        "blur_fused.c",
        "blur_layers.txt",
        "imported_mv.c",
        "gemm_hls.cpp",
        "transpose.cu",
        "dscale_mpi.c",
    ):
        assert (tmp_path / name).stat().st_size > 0, name
    layers = (tmp_path / "blur_layers.txt").read_text()
    assert "bx" in layers
    assert "for i [parallel]:" in text
    assert "| spf threads | spf (ms per call) | other threads | other (ms per call) |" in text
    assert "1-minute load average" in text
    rows = [line for line in text.splitlines() if line.startswith("| CSR SpMV")]
    assert [row.split(" | ")[2] for row in rows][:1] == ["1"], "spf at 1 thread against scipy"
    assert "single-threaded (1 thread): scipy A @ x" in text
    dgemm = next(line for line in text.splitlines() if line.startswith("| DGEMM"))
    assert dgemm.split(" | ")[4] == str(threads.default_team()), "OpenBLAS at OpenMP's count"
