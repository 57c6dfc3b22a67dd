"""Differential: ``interpret`` runs the scheduled program, exactly as the compiled kernel does.

The interpreter executes every statement instance of the *current* domains (recomputed
``compute_at`` copies included) in the *current* schedule order, through the data layout
(``store_in`` buffers, ``allocate_at`` copies). So on legal schedules it equals numpy, and on
an illegal schedule forced through ``compile(check=False)`` it computes the same wrong
answer as the kernel rather than the original program's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from spf import Computation, IllegalScheduleError, Stmt, kernels
from spf.bench.blur import schedule as blur_line_buffer

if TYPE_CHECKING:
    from pathlib import Path

Array = np.ndarray[Any, Any]


@pytest.fixture(scope="module")
def cache(shared_cache: Path) -> Path:
    return shared_cache


# ------------------------------------------------------------------------------- the blur
def blur_args(n: int, m: int, bx: str | None = "bx", rows: int = 0) -> dict[str, Array]:
    """The blur's arguments; ``bx`` is not one when stored in a buffer of the function, and
    a buffer argument ``bx`` of ``rows`` rows when given."""
    img = np.random.default_rng(n * 7 + m).random((n, m))
    args = {"out": np.zeros((n - 2, m - 2)), "img": img}
    if bx is not None:
        args[bx] = np.zeros((rows or n, m - 2))
    return args


def blur_want(args: dict[str, Array]) -> Array:
    img = args["img"]
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def blur_compute_at_tile() -> Computation:
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.tile("i", "j", 4, 4, "i0", "j0", "i1", "j1")
    s0.compute_at(s1, "j0")
    return comp


def blur_two_row_buffer() -> Computation:
    """Illegal: ``bx`` fused row by row into a buffer of two rows, but the output row ``i``
    reads three (``i .. i + 2``): row ``i + 2`` overwrites row ``i`` before its read."""
    comp = kernels.blur2d()
    s0, s1 = comp.stmts
    s1.set_schedule("{[i,j] -> [0,r,1,j,0] : r = i + 2}")
    s0.set_schedule("{[i,j] -> [0,i,0,j,0]}")
    rows = comp.add_buffer("rows", (2, "M-2"), "double")
    s0.store_in(rows, ["i % 2", "j"])
    return comp


# ------------------------------------------------------------------------ 1-d stencils
def heat_fused() -> Computation:
    """Illegal: the copy-back ``A[i] = B[i]`` fused into the stencil's ``i`` loop, so
    ``B[i + 1]`` reads the new ``A[i]``."""
    comp = Computation("heat")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    dom = "{[t,i]: 0 <= t < T && 1 <= i < N - 1}"
    comp.add_stmt(
        Stmt("$B$(i) = ($A$(i-1) + $A$(i) + $A$(i+1)) / 3.0;", dom, "{[t,i] -> [0,t,0,i,0]}")
    )
    comp.add_stmt(Stmt("$A$(i) = $B$(i);", dom, "{[t,i] -> [0,t,1,i,0]}"))
    comp.stmt("s1").after("s0", "i")
    return comp


def seidel_reversed() -> Computation:
    """Illegal: an in-place Gauss-Seidel sweep run backwards."""
    comp = Computation("seidel")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(
        Stmt(
            "$A$(i) = ($A$(i-1) + $A$(i) + $A$(i+1)) / 3.0;",
            "{[i]: 1 <= i < N - 1}",
            "{[i] -> [0,i,0]}",
        )
    )
    comp.stmt("s0").reverse("i")
    return comp


def heat_want(a: Array, steps: int) -> Array:
    a = a.copy()
    for _ in range(steps):
        a[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
    return a


def seidel_want(a: Array) -> Array:
    a = a.copy()
    for i in range(1, len(a) - 1):
        a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3
    return a


def heat_args() -> dict[str, Any]:
    return {"A": np.random.default_rng(2).random(11), "B": np.zeros(11), "T": 3}


def seidel_args() -> dict[str, Any]:
    return {"A": np.random.default_rng(4).random(11)}


Case = tuple[
    Callable[[], Computation],
    Callable[[], dict[str, Any]],
    str,
    Callable[[dict[str, Any]], Array],
]
LEGAL: list[Case] = [
    (blur_compute_at_tile, lambda: blur_args(13, 10), "out", blur_want),
    (lambda: blur_line_buffer(4, vector=0), lambda: blur_args(14, 12, None), "out", blur_want),
    (lambda: blur_line_buffer(3), lambda: blur_args(9, 21, None), "out", blur_want),
]
ILLEGAL: list[Case] = [
    (blur_two_row_buffer, lambda: blur_args(8, 9, "rows", 2), "out", blur_want),
    (heat_fused, heat_args, "A", lambda a: heat_want(a["A"], a["T"])),
    (seidel_reversed, seidel_args, "A", lambda a: seidel_want(a["A"])),
]


def both(comp: Computation, args: dict[str, Any], cache: Path, check: bool) -> tuple[Any, Any]:
    compiled = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    interpreted = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    comp.compile(cache_dir=str(cache), check=check)(**compiled)
    comp.interpret(**interpreted)
    return compiled, interpreted


@pytest.mark.parametrize(("make", "args", "result", "want"), LEGAL)
def test_legal_schedules_interpret_as_compiled_and_as_numpy(
    make: Callable[[], Computation],
    args: Callable[[], dict[str, Any]],
    result: str,
    want: Callable[[dict[str, Any]], Array],
    cache: Path,
) -> None:
    comp = make()
    given = args()
    compiled, interpreted = both(comp, given, cache, check=True)
    assert np.allclose(compiled[result], want(given))
    assert np.allclose(interpreted[result], compiled[result])


@pytest.mark.parametrize(("make", "args", "result", "want"), ILLEGAL)
def test_forced_illegal_schedules_interpret_to_the_kernels_wrong_answer(
    make: Callable[[], Computation],
    args: Callable[[], dict[str, Any]],
    result: str,
    want: Callable[[dict[str, Any]], Array],
    cache: Path,
) -> None:
    comp = make()
    with pytest.raises(IllegalScheduleError):
        comp.check_legality()
    given = args()
    compiled, interpreted = both(comp, given, cache, check=False)
    assert not np.allclose(compiled[result], want(given))  # the schedule is really wrong
    assert np.allclose(interpreted[result], compiled[result])
