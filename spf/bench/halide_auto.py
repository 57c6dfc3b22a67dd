"""Halide's Adams2019 autoscheduler on the two-stage blur of :mod:`spf.bench.blur` (the
``halide`` wheel ships it as ``lib64/libautoschedule_adams2019.so``): the pipeline with the
image's size as its estimates, scheduled by the autoscheduler for ``parallelism`` threads
and compiled for the host (issue 30's blur row compares ``spf.tune`` with it)."""

from __future__ import annotations

import importlib
import os
import time
from typing import Any

PLUGIN = "libautoschedule_adams2019.so"


def adams2019(shape: tuple[int, int], threads: int) -> tuple[Any, Any, Any, dict[str, Any]]:
    """``(output func, input param, halide module, info)`` of the autoscheduled blur of an
    ``n x m`` image (``info``: the schedule's source and the seconds autoscheduling took),
    or ``(None, None, None, {"error": why})``."""
    try:
        hl: Any = importlib.import_module("halide")
    except ImportError as err:  # pragma: no cover - depends on the install
        return None, None, None, {"error": f"halide not importable ({err}); pip install halide"}
    n, m = shape
    try:
        hl.load_plugin(os.path.join(os.path.dirname(hl.__file__), "lib64", PLUGIN))
        target = hl.get_jit_target_from_environment()
        x, y = hl.Var("x"), hl.Var("y")
        inp = hl.ImageParam(hl.Float(64), 2, "inp")
        bx, o = hl.Func("bx"), hl.Func("o")
        bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
        o[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3.0
        inp.set_estimates([(0, m), (0, n)])
        o.set_estimates([(0, m - 2), (0, n - 2)])
        pipe = hl.Pipeline(o)
        t0 = time.perf_counter()
        params = hl.AutoschedulerParams("Adams2019", {"parallelism": str(threads)})
        found = pipe.apply_autoscheduler(target, params)
        seconds = time.perf_counter() - t0
        pipe.compile_jit(target)
    except Exception as err:  # the wheel's own errors (HalideError) and missing pieces
        return None, None, None, {"error": f"Adams2019 failed: {type(err).__name__}: {err}"}
    return pipe, inp, hl, {"schedule": found.schedule_source, "seconds": seconds}
