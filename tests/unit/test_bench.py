"""spf.bench: the benchmark driver (``spf bench`` / ``make bench``) keeps working."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from spf.bench import BENCHMARKS, main
from spf.bench.common import QUICK, Section

if TYPE_CHECKING:
    from pathlib import Path


def test_section_table_and_targets() -> None:
    sec = Section("x")
    sec.table(["code", "ms"], [["spf", "1.0"]])
    sec.target("t", "0.9x", True)
    assert sec.markdown[:3] == ["| code | ms |", "|---|---:|", "| spf | 1.0 |"]
    assert sec.targets == [{"target": "t", "measured": "0.9x", "met": True, "note": ""}]


def test_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--only", "nonexistent"])
    assert main(["--threads", "2", "--only", "sets"]) == 2
    assert "--threads must include 1" in capsys.readouterr().err


def test_sets_quick_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    assert main(["--quick", "--only", "sets", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| parse SpMV domain |" in text
    doc = json.loads(out.read_text())
    assert doc["quick"]
    assert "sets" in doc["benchmarks"]


def test_polybench_quick_reports_codegen_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from spf.bench.polybench import QUICK as FEW

    out = tmp_path / "pb.json"
    assert main(["--quick", "--only", "polybench", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "### PolyBench/C 4.2" in text
    assert "PolyBench codegen total <= 15 s" in text
    data = json.loads(out.read_text())["benchmarks"]["polybench"]["data"]
    assert [r["kernel"] for r in data["rows"]] == list(FEW)
    assert data["total_s"] == pytest.approx(sum(r["seconds"] for r in data["rows"]))
    assert data["worst"] in FEW
    assert all(r["cpu_s"] > 0 for r in data["rows"])


# What each benchmark's quick run must print (a heading of its section, a row name).
_PRINTS: dict[str, tuple[str, ...]] = {
    "spmv": ("### SpMV", "spf SELL-8-256"),
    "gemm": ("### DGEMM",),
    "blur": ("### Two-stage blur",),
    "sptrsv": ("### Forward solve",),
    "pcg": ("### PCG, ILU(0)", "| spf PCG | 1 |", "| scipy cg | 1 |"),
    "overhead": ("call overhead",),
    "polybench": ("### PolyBench",),
    "tensor": (
        "### SpAdd C = A + B (CSR), 2-D Poisson",
        "### SpGEMM C = A·B (CSR), random",
        "### MTTKRP, power-law B",
        "| MLIR sparsifier |",
        "| Finch | - |",
    ),
    "tune": ("### SpMV: formats.tune", "### GEMM n=128", "### PolyBench: spf.tune"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_runs_quick(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One benchmark per test, so that the workers of a parallel run share them out."""
    out = tmp_path / "one.json"
    assert QUICK.quick
    assert main(["--quick", "--only", name, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert set(doc["benchmarks"]) == {name}
    targets = ("## Targets",) if doc["targets"] else ()
    for needle in (f"## {name}", *_PRINTS.get(name, ()), *targets):
        assert needle in text, needle
    assert all({"target", "measured", "met"} <= set(t) for t in doc["targets"])


def test_every_printed_needle_names_a_benchmark() -> None:
    assert set(_PRINTS) <= set(BENCHMARKS)


def test_fresh_interpreter_rows(tmp_path: Path) -> None:
    """The import and the warm compile are timed in child processes, with their target."""
    from spf.bench.common import Context, Runtime, progress
    from spf.bench.overhead import fresh_interpreter

    ctx = Context(QUICK, Runtime(str(tmp_path / "helper")), [1], tmp_path, progress)
    sec = Section("overhead")
    fresh_interpreter(ctx, sec)
    text = "\n".join(sec.markdown)
    assert "| `import spf` |" in text
    assert "warm compile, import excluded" in text
    (target,) = sec.targets
    assert target["target"].startswith("compile warm in a fresh interpreter <= 20 ms")
    data = sec.data["fresh_interpreter_s"]
    assert 0 < data["compile"] < data["build_and_compile"]
    assert not any(r["sympy_at_import"] for r in data["runs"])
