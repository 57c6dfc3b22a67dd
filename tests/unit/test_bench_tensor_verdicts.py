"""spf.bench.tensor's verdicts: against scipy by the CPU medians of one interleaved run (not
the wall-clock table), against MLIR's sparsifier by calls interleaved with spf's
(spf.bench.mlir_sparse.MlirServer), and the server itself."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from spf.bench import tensor
from spf.bench.common import QUICK, Context, Section
from spf.bench.mlir_sparse import MlirServer, mlir_python

if TYPE_CHECKING:
    from pathlib import Path

NOT_RUN = {"error": "not installed"}


def spadd(ms: dict[tuple[str, int], float], cpus: dict[str, float]) -> tensor.Result:
    data = {"ref": "scipy A+B", "cpus": cpus}
    return tensor.Result("SpAdd", "random", "SpAdd C = A + B", ms, "load", {}, data)


def targets(sec: Section) -> dict[str, tuple[str, bool]]:
    return {t["target"]: (t["measured"], t["met"]) for t in sec.targets}


def test_spadd_verdict_takes_the_cpu_medians_not_the_wall_clock() -> None:
    # the wall-clock table says 1.2x (the machine's load), the calling thread's CPU 0.9x
    r = spadd({("spf einsum", 1): 12.0, ("scipy A+B", 1): 10.0},
              {"spf einsum": 9.0, "scipy A+B": 10.0})  # fmt: skip
    sec = Section("tensor")
    tensor.print_result(sec, r, NOT_RUN, NOT_RUN, 0.5)
    verdict = "SpAdd (random): spf einsum at 1 thread <= 1.0x scipy A+B (CPU time)"
    assert targets(sec) == {verdict: ("0.900x", True)}
    text = "\n".join(sec.markdown)
    assert "| spf einsum | 1 | 12.00 | 1.200 |" in text  # the wall time is still shown
    assert "spf einsum 9.00 ms, scipy A+B 10.00 ms; spf einsum / scipy A+B: 0.900x." in text
    assert "Rows at more threads are wall time" not in text

    slower = spadd({("spf einsum", 1): 9.0, ("spf einsum", 2): 6.0, ("scipy A+B", 1): 10.0},
                   {"spf einsum": 11.0, "scipy A+B": 10.0})  # fmt: skip
    sec = Section("tensor")
    tensor.print_result(sec, slower, NOT_RUN, NOT_RUN, 0.5)
    assert targets(sec) == {verdict: ("1.100x", False)}
    assert "Rows at more threads are wall time, the right measure there" in "\n".join(sec.markdown)


def test_spgemm_verdicts_share_the_helper() -> None:
    ms = {(c, 1): 1.0 for c in ("spf einsum", tensor.UNSORTED, tensor.SORTED, "scipy A@B")}
    cpus = {"spf einsum": 8.0, tensor.UNSORTED: 6.0, tensor.SORTED: 10.0, "scipy A@B": 5.0}
    r = tensor.Result("SpGEMM", "random", "SpGEMM", ms, "load", {},
                      {"ref": "scipy A@B", "cpus": cpus})  # fmt: skip
    sec = Section("tensor")
    tensor.print_result(sec, r, NOT_RUN, NOT_RUN, 0.5)
    assert targets(sec) == {
        "SpGEMM (random): spf einsum (rows sorted) at 1 thread <= 1.0x "
        "scipy A@B + sort_indices() (CPU time)": ("0.800x", True),
        "SpGEMM (random): spf einsum, rows unsorted at 1 thread <= 1.0x scipy A@B (CPU time)": (
            "1.200x",
            False,
        ),
    }
    assert "spf einsum (rows sorted) / scipy A@B alone (rows left unsorted): 1.600x." in (
        "\n".join(sec.markdown)
    )


def test_checked_calls_have_verdicts_of_their_own() -> None:
    # the default call (check=True) against the same reference as the unchecked one
    cpus = {"spf einsum": 9.0, tensor.CHECKED: 10.5, "scipy A+B": 10.0}
    r = spadd({(c, 1): 1.0 for c in cpus}, cpus)
    sec = Section("tensor")
    tensor.print_result(sec, r, NOT_RUN, NOT_RUN, 0.5)
    assert targets(sec) == {
        "SpAdd (random): spf einsum at 1 thread <= 1.0x scipy A+B (CPU time)": ("0.900x", True),
        "SpAdd (random): spf einsum, checked at 1 thread <= 1.0x scipy A+B (CPU time)": (
            "1.050x",
            False,
        ),
    }
    text = "\n".join(sec.markdown)
    assert "spf einsum 9.00 ms, spf einsum, checked 10.50 ms, scipy A+B 10.00 ms" in text
    assert "spf einsum / scipy A+B: 0.900x." in text  # the unchecked call's ratio, as before

    cpus = {"spf einsum": 8.0, tensor.CHECKED: 9.0, tensor.UNSORTED: 6.0, tensor.SORTED: 10.0,
            "scipy A@B": 5.0}  # fmt: skip
    r = tensor.Result("SpGEMM", "random", "SpGEMM", {(c, 1): 1.0 for c in cpus}, "load", {},
                      {"ref": "scipy A@B", "cpus": cpus})  # fmt: skip
    sec = Section("tensor")
    tensor.print_result(sec, r, NOT_RUN, NOT_RUN, 0.5)
    assert targets(sec)[
        "SpGEMM (random): spf einsum, checked (rows sorted) at 1 thread <= 1.0x "
        "scipy A@B + sort_indices() (CPU time)"
    ] == ("0.900x", True)


def test_mlir_verdict_takes_the_interleaved_pair() -> None:
    r = spadd({("spf einsum", 1): 30.0, ("scipy A+B", 1): 10.0},
              {"spf einsum": 9.0, "scipy A+B": 10.0})  # fmt: skip
    pair = {"matches": True, "first_s": 0.2, "threads": 2, "ms": 4.0, "cpu_ms": 2.0,
            "spf_cpu_ms": 2.3, "rounds": 7, "same_pages": True}  # fmt: skip
    sec = Section("tensor")
    tensor.print_result(sec, r, {r.key: pair}, NOT_RUN, 0.5)
    mlir = "SpAdd (random): spf at 1 thread <= 1.1x MLIR's sparsifier (CPU time a call)"
    assert targets(sec)[mlir] == ("1.15x", False)  # 2.3 / 2.0, not 9.0 (nor 30.0) / 2.0
    assert "spf's at 1 thread 2.30 ms, 7 interleaved rounds, inputs in the same pages" in (
        "\n".join(sec.markdown)
    )

    differs = {"matches": False, "first_s": 0.2, "threads": 2}
    sec = Section("tensor")
    tensor.print_result(sec, r, {r.key: differs}, NOT_RUN, 0.5)
    assert mlir not in targets(sec)
    assert "| MLIR sparsifier | 1 | - | - | result differs: not timed" in "\n".join(sec.markdown)


class FakeServer:
    """MLIR's side of :func:`tensor.paired`: each call's times, and the order of the calls."""

    def __init__(self, order: list[str]) -> None:
        self.order = order
        self.cpu = iter([9.0, 0.001, 0.003, 0.002, 0.005, 0.004] + [0.002] * 100)

    def call(self) -> dict[str, Any]:
        self.order.append("mlir")
        cpu = next(self.cpu)
        return {"s": 2 * cpu, "cpu": cpu}


def test_paired_interleaves_one_call_of_each_a_round(tmp_path: Path) -> None:
    threads: list[int] = []
    rt: Any = SimpleNamespace(set_threads=threads.append)
    ctx = Context(QUICK, rt, [1], tmp_path, print)
    order: list[str] = []
    got = tensor.paired(ctx, lambda: order.append("spf"), FakeServer(order))
    rounds = got["rounds"]
    assert rounds == 3  # QUICK: at least three, at most half of its spmv_rounds (5)
    assert threads == [1]
    assert len(order) == 2 * (1 + rounds)
    assert all(sorted(order[k : k + 2]) == ["mlir", "spf"] for k in range(0, len(order), 2))
    assert got["cpu_ms"] == pytest.approx(2.0)  # the untimed first call (9 s) is left out
    assert got["ms"] == pytest.approx(4.0)
    assert 0 <= got["spf_cpu_ms"] < 5.0

    def failing() -> dict[str, Any]:
        return {"error": "killed"}

    assert tensor.paired(ctx, lambda: None, SimpleNamespace(call=failing)) == {"error": "killed"}


@pytest.mark.skipif(mlir_python() is None, reason="torch-mlir is not installed")
def test_mlir_server_loads_checks_and_times_one_job_at_a_time(tmp_path: Path) -> None:
    python = mlir_python()
    assert python is not None
    a = np.array([[1.0, 0, 2], [0, 0, 0], [0, 3, 4], [5, 0, 0]])
    x = np.array([1.0, 10.0, 100.0])
    ptr = np.array([0, 2, 2, 4, 5], dtype=np.int32)
    col = np.array([0, 2, 1, 2, 0], dtype=np.int32)
    val = a[a != 0]
    arrays = {"j0_A_ptr": ptr, "j0_A_col": col, "j0_A_val": val, "j0_n": 4, "j0_m": 3,
              "j0_x": x, "j0_want": a @ x, "j1_want": np.zeros(4)}  # fmt: skip
    arrays.update({k.replace("j0_", "j1_"): v for k, v in arrays.items() if k != "j0_want"})
    with MlirServer(python, arrays, tmp_path) as server:
        shared = server.shared("j0_A_val")  # the pages the child maps
        assert type(shared) is np.ndarray
        assert np.array_equal(shared, val)
        own = {"A": val.copy(), "A_col": col, "A_rowptr": ptr, "x": x}
        assert tensor.share(server, "j0_", own, {**tensor.csr_shares("A"), "x": "x"})
        assert own["A_col"] is not col
        assert np.array_equal(own["A_col"], col)
        assert not tensor.share(server, "j0_", {"x": x[::-1].copy()}, {"x": "x"})
        assert "error" in server.call()  # nothing loaded yet
        got = server.load("SpMV (tiny)|SpMV|j0_")
        assert got["matches"] is True
        assert got["first_s"] > 0
        assert got["threads"] >= 1
        timed = server.call()
        assert set(timed) == {"s", "cpu"}
        assert timed["s"] >= 0
        assert server.load("SpMV (wrong reference)|SpMV|j1_")["matches"] is False
        assert "KeyError" in server.load("x|SpMTTV|j0_")["error"]
        assert "error" in server.call()  # the failed load dropped the job before it
        folder = server.folder
    assert not folder.exists()
