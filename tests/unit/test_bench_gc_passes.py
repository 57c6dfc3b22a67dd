"""spf.bench.gc_passes: the collector's passes inside a timed region (the tensor bench's
first-call rows say how much of each was Python's garbage collector)."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import TYPE_CHECKING

from spf.bench import tensor
from spf.bench.gc_passes import GcPasses

if TYPE_CHECKING:
    from pathlib import Path


def test_a_full_pass_inside_the_region_is_recorded_as_full() -> None:
    with GcPasses() as passes:
        gc.collect()  # generation 2: the whole heap
        gc.collect(0)
    assert [g for g, _ in passes.passes] == [2, 0]
    assert passes.full == 1
    assert passes.seconds == sum(s for _, s in passes.passes) >= 0.0


def test_passes_after_the_region_are_not_recorded() -> None:
    with GcPasses() as passes:
        pass
    callbacks = len(gc.callbacks)
    gc.collect()
    assert passes.passes == []
    assert len(gc.callbacks) == callbacks


def test_first_call_reports_the_collector_and_the_phases_compiled(tmp_path: Path) -> None:
    ctx = SimpleNamespace(work=tmp_path)
    _, costs = tensor.first_call(tensor.unsorted_spgemm, ctx, "unsorted")  # type: ignore[arg-type]
    assert costs["phases"] in ("single", "two")
    for which in ("cold", "warm"):
        assert 0.0 <= costs[f"{which}_gc_cpu"] <= costs[f"{which}_cpu"]
        assert costs[f"{which}_full_gcs"] >= 0
    cell = tensor.gc_cell({**costs, "warm_gc_cpu": 0.25, "warm_full_gcs": 1}, "warm")
    assert cell == "0.250 (1 full)"
