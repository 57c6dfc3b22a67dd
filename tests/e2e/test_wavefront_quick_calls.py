"""Repeated unchecked calls with a plan replay their C call (spf.runtime.plan_call,
docs/inspection.md "Calls with a plan"): they give the bits of the full path, at one and two
threads, for every strategy; and whatever a replayed call could have missed is still
refused: a plan over a changed pattern, arrays reshaped, retyped or made read-only in
place, another ``N``."""

from __future__ import annotations

import contextlib
import gc
import platform
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

from spf import kernels
from spf.bench.fused import fused_solve_mv
from spf.errors import ArgumentError
from spf.runtime import plan_call, plan_look, plan_prepared, threads
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args
from spf.testing import look_helper


@pytest.fixture(scope="module")
def fused() -> WavefrontKernel:
    k = fused_solve_mv().compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return kernels.trsv_diag_csr().compile(), kernels.spmv_csr().compile()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many calls took the full path (``WavefrontKernel._call``)."""
    seen: list[int] = []
    full = WavefrontKernel._call

    def count(self: WavefrontKernel, *args: Any) -> None:
        seen.append(1)
        full(self, *args)

    monkeypatch.setattr(WavefrontKernel, "_call", count)
    return seen


@contextlib.contextmanager
def exactly(n: int) -> Iterator[None]:
    """``n`` OpenMP threads, spf's busy-machine cap off."""
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(n):
            yield
    finally:
        threads.set_adaptive(adaptive)


def matrix(n: int, density: float, seed: int) -> Any:
    """A random ``n`` x ``n`` CSR matrix with every diagonal entry, columns sorted."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng) + sps.eye_array(n) * (1.0 + n)
    return sps.csr_array(sps.csr_array(m).sorted_indices())


def replayed(fused: WavefrontKernel, n: int, seed: int) -> tuple[Any, ...]:
    """(args, plan, x, y, b) of a random matrix after three unchecked calls with the plan
    (the first validated, the others replayed)."""
    args = gauss_seidel_args(matrix(n, 0.01, seed))
    plan = fused.inspect(**{k: v for k, v in args.items() if k != "A"})
    x, y, b = np.zeros(n), np.zeros(n), np.ones(n)
    for _ in range(3):
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    return args, plan, x, y, b


def expected(pair: tuple[Any, Any], args: dict[str, Any], b: np.ndarray) -> tuple[Any, Any]:
    """The solve then the product, by the two serial kernels."""
    n = len(b)
    x, y = np.zeros(n), np.zeros(n)
    pair[0](x=x, b=b, **args)
    pair[1](y=y, x=x, rowptr=args["rowptr"], col=args["col"], A=args["A"])
    return x, y


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("strategy", ["serial", "coarse", "levels"])
def test_replayed_calls_equal_the_kernels_one_after_the_other(
    fused: WavefrontKernel, pair: Any, counted: list[int], team: int, strategy: str
) -> None:
    m = matrix(3000, 0.002, 3)
    args = gauss_seidel_args(m)
    index = {k: v for k, v in args.items() if k != "A"}
    plan = fused.inspect(strategy=strategy, threads=2, **index)
    assert plan.strategy == strategy
    b = np.random.default_rng(1).standard_normal(3000)
    want_x, want_y = expected(pair, args, b)
    with exactly(team):
        x, y = np.zeros(3000), np.zeros(3000)
        for call in range(4):
            y[:] = 0.0
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
            np.testing.assert_array_equal(x, want_x, err_msg=f"call {call}")
            np.testing.assert_array_equal(y, want_y, err_msg=f"call {call}")
            assert fused.last_threads == (1 if strategy == "serial" else team)
        assert len(counted) == 1  # the first call validated; the others replayed it
        x2, y2 = np.zeros(3000), np.zeros(3000)  # other objects of the same look
        fused(x=x2, y=y2, b=b.copy(), plan=plan, check=False, **args)
        np.testing.assert_array_equal(y2, want_y)
        assert len(counted) == 1
        fused(x=x2, y=y2, b=b, plan=plan, check=True, **args)  # checked: the full path
        assert len(counted) == 2


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("strategy", ["serial", "coarse", "levels"])
def test_a_call_with_one_array_for_two_arguments_leaves_no_crossed_replay(
    fused: WavefrontKernel, pair: Any, team: int, strategy: str
) -> None:
    """An unchecked call passing one array for two arguments (``b`` as ``x``: the solve in
    place) records its replay by argument name, not by object: the later calls on distinct
    arrays read ``b`` from ``b`` (their replay read it from ``x``, every call wrong)."""
    m = matrix(1000, 0.005, 9)
    args = gauss_seidel_args(m)
    plan = fused.inspect(
        strategy=strategy, threads=2, **{k: v for k, v in args.items() if k != "A"}
    )
    b = np.random.default_rng(2).standard_normal(1000)
    want_x, want_y = expected(pair, args, b)
    with exactly(team):
        same = b.copy()
        fused(x=same, y=np.zeros(1000), b=same, plan=plan, check=False, **args)
        call = fused.prepare(["x", "y", "b"], plan=plan, check=False, **args)
        call(same, np.zeros(1000), same)
        for _ in range(3):
            x, y = np.zeros(1000), np.zeros(1000)
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, want_y)
            x, y = np.zeros(1000), np.zeros(1000)
            call(x, y, b)
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, want_y)


def solve_by(method: str) -> tuple[Any, Any, dict[str, Any], Any, Any]:
    """A lower solve's wavefront kernel of ``method``, its plan (strategy "wavefront") on a
    random 4000-row triangle, the arguments, ``b`` and the serial solve's ``x``."""
    solve = kernels.trsv_diag_csr()
    solve.wavefront("i", method=method)
    k = solve.compile()
    args = gauss_seidel_args(matrix(4000, 0.0005, 7))
    plan = k.inspect(strategy="wavefront", **{n: v for n, v in args.items() if n != "A"})
    b = np.ones(4000)
    want = np.zeros(4000)
    kernels.trsv_diag_csr().compile()(x=want, b=b, **args)
    return k, plan, args, b, want


def test_a_levels_wavefront_replays_on_one_and_two_threads(counted: list[int]) -> None:
    k, plan, args, b, want = solve_by("auto")
    for team in (1, 2):
        with exactly(team):
            for _ in range(3):
                x = np.zeros(4000)
                k(x=x, b=b, plan=plan, check=False, **args)
                np.testing.assert_array_equal(x, want)
                assert k.last_threads == team
    assert len(counted) == 2  # the first call of each team: the full path, then replays


def test_a_p2p_wavefront_takes_the_full_path_every_call(counted: list[int]) -> None:
    """A p2p executor's call needs its done flags zeroed: a replay of the last call's C call
    would hand it the flags that call left set, so no row would wait for its inputs."""
    k, plan, args, b, want = solve_by("p2p")
    with exactly(2):
        for _ in range(3):
            x = np.zeros(4000)
            k(x=x, b=b, plan=plan, check=False, **args)
            np.testing.assert_array_equal(x, want)
            assert k.last_threads == 2
    assert len(counted) == 3  # every call on the full path: none replayed


def test_a_changed_pattern_after_replayed_calls_is_an_argument_error(
    fused: WavefrontKernel,
) -> None:
    args, plan, x, y, b = replayed(fused, 500, 5)
    other = gauss_seidel_args(matrix(500, 0.02, 6))  # another pattern, other nnz
    with pytest.raises(ArgumentError, match="plan= was built from other index arrays"):
        fused(x=x, y=y, b=b, plan=plan, check=False, **other)
    with pytest.raises(ArgumentError, match="'N' differs"):
        fused(x=x[:400], y=y[:400], b=b[:400], plan=plan, check=False, **{**args, "N": 400})
    fused(x=x, y=y, b=b, plan=plan, check=False, **args)  # replayed again
    args["col"][:] = args["col"][::-1].copy()  # the same arrays, other contents
    with pytest.raises(ArgumentError, match="'col' differs"):
        fused(x=x, y=y, b=b, plan=plan, check=True, **args)


def test_arrays_changed_in_place_after_replayed_calls_are_refused(
    fused: WavefrontKernel,
) -> None:
    """The look of every array is read on every call: a replay never runs on an array the
    full path would refuse."""
    args, plan, x, y, b = replayed(fused, 500, 8)
    y.setflags(write=False)
    with pytest.raises(ArgumentError, match="y"):
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    y.setflags(write=True)
    x.shape = (250, 2)
    with pytest.raises(ArgumentError, match="x"):
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    x.shape = (500,)
    b.dtype = np.int64  # the same bytes read as integers
    with pytest.raises(ArgumentError, match="b"):
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    b.dtype = np.float64
    with pytest.raises(ArgumentError):
        fused(x=x, y=y, b=b, plan=plan, check=False, **args, extra=1)
    fused(x=x, y=y, b=b, plan=plan, check=False, **args)


def test_a_dead_plans_record_leaves_its_kernel(fused: WavefrontKernel) -> None:
    args = gauss_seidel_args(matrix(200, 0.02, 9))
    plan = fused.inspect(**{k: v for k, v in args.items() if k != "A"})
    x, y, b = np.zeros(200), np.zeros(200), np.ones(200)
    fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    key = id(plan)
    assert key in fused._quick
    del plan
    gc.collect()
    assert key not in fused._quick


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("strategy", ["serial", "coarse"])
def test_a_prepared_call_with_a_plan_equals_the_kernels(
    fused: WavefrontKernel, pair: Any, team: int, strategy: str
) -> None:
    m = matrix(2000, 0.003, 4)
    args = gauss_seidel_args(m)
    index = {k: v for k, v in args.items() if k != "A"}
    plan = fused.inspect(strategy=strategy, threads=2, **index)
    b = np.random.default_rng(2).standard_normal(2000)
    want_x, want_y = expected(pair, args, b)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    assert call.names == ("x", "y", "b")
    with exactly(team):
        x, y = np.zeros(2000), np.zeros(2000)
        for _ in range(3):
            y[:] = 0.0
            call(x, y, b)
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, want_y)
        x2, y2 = np.zeros(2000), np.zeros(2000)
        call(y=y2, x=x2, b=b.copy())  # by name, other objects
        np.testing.assert_array_equal(y2, want_y)
        assert fused.last_threads == (1 if strategy == "serial" else team)


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("strategy", ["coarse", "levels"])
def test_alternating_keyword_and_prepared_calls_of_a_plan_keep_their_buffers_bound(
    fused: WavefrontKernel, pair: Any, monkeypatch: pytest.MonkeyPatch, team: int, strategy: str
) -> None:
    """A keyword call and a prepared call of one plan on other arrays, one after the other
    (the benchmark's rotation), share the plan's replay: each finds its own arrays' cffi
    buffers still bound (:attr:`spf.runtime.plan_call.Replay.before`) and writes its own
    arrays. Before, each call bound every array of the call anew (7 buffers)."""
    look_helper()
    m = matrix(1500, 0.004, 14)
    args = gauss_seidel_args(m)
    plan = fused.inspect(
        strategy=strategy, threads=2, **{k: v for k, v in args.items() if k != "A"}
    )
    b = np.random.default_rng(3).standard_normal(1500)
    want_x, want_y = expected(pair, args, b)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    x, y, x2, y2 = np.zeros(1500), np.zeros(1500), np.zeros(1500), np.zeros(1500)
    bound: list[int] = []
    with exactly(team):
        for _ in range(2):  # recorded, then replayed: both sets bound
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
            call(x2, y2, b)
        replays = fused._quick[id(plan)].replays.values()
        for kernel in {id(r.kernel): r.kernel for r in replays if r is not None}.values():
            binds = kernel._from_buffer

            def counting(ctype: Any, a: Any, binds: Any = binds) -> Any:
                bound.append(1)
                return binds(ctype, a)

            monkeypatch.setattr(kernel, "_from_buffer", counting)
        for _ in range(3):
            x[:], y[:], x2[:], y2[:] = 0.0, 0.0, 0.0, 0.0
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
            np.testing.assert_array_equal(x2, 0.0)  # the keyword call wrote its own arrays
            call(x2, y2, b)
            for got in ((x, y), (x2, y2)):
                np.testing.assert_array_equal(got[0], want_x)
                np.testing.assert_array_equal(got[1], want_y)
        assert fused.last_threads == team
    assert not bound  # no buffer bound again


@pytest.mark.parametrize("team", [1, 2])
@pytest.mark.parametrize("strategy", ["coarse", "levels"])
def test_a_parallel_plans_keyword_calls_on_the_same_arrays_fire_from_the_method(
    fused: WavefrontKernel, pair: Any, monkeypatch: pytest.MonkeyPatch, team: int, strategy: str
) -> None:
    """A coarse or levels plan's keyword call on its last call's very arguments, unchanged,
    is read by the helper's method in C, which runs the record's ``fire`` (the governor's
    team, then the replay's C call) without the Python ``__call__`` (Quick.run); anything
    else still takes the Python call: an array changed in place is refused, other arrays
    are bound."""
    look_helper()
    if not plan_look.HOT_METHOD:
        pytest.skip("the look helper does not load as an extension here")
    args = gauss_seidel_args(matrix(1200, 0.005, 23))
    index = {k: v for k, v in args.items() if k != "A"}
    plan = fused.inspect(strategy=strategy, threads=2, **index)
    assert plan.strategy == strategy
    b = np.random.default_rng(4).standard_normal(1200)
    want_x, want_y = expected(pair, args, b)
    x, y = np.zeros(1200), np.zeros(1200)
    with exactly(team):
        for _ in range(2):  # validated and recorded, then replayed
            y[:] = 0.0
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        assert not isinstance(WavefrontKernel.__dict__["__call__"], types.FunctionType)
        seen: list[str] = []
        for name in ("run", "fire"):
            real = getattr(plan_call.Quick, name)
            monkeypatch.setattr(
                plan_call.Quick, name, lambda *a, r=real, n=name, **k: seen.append(n) or r(*a, **k)
            )
        for _ in range(3):
            x[:], y[:] = 0.0, 0.0
            fused._last_threads = None
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, want_y)
            assert fused.last_threads == team
        assert seen == ["fire"] * 3  # from the method: no Python __call__, no Quick.run
        x.shape = (600, 2)
        with pytest.raises(ArgumentError, match="x"):
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        x.shape = (1200,)
        y.setflags(write=False)
        with pytest.raises(ArgumentError, match="y"):
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        y.setflags(write=True)
        x2, y2 = np.zeros(1200), np.zeros(1200)
        fused(x=x2, y=y2, b=b, plan=plan, check=False, **args)
        np.testing.assert_array_equal(x2, want_x)
        np.testing.assert_array_equal(y2, want_y)
        assert "run" in seen


def test_a_prepared_call_refuses_what_a_keyword_call_refuses(fused: WavefrontKernel) -> None:
    m = matrix(300, 0.02, 10)
    args = gauss_seidel_args(m)
    plan = fused.inspect(**{k: v for k, v in args.items() if k != "A"})
    other = gauss_seidel_args(matrix(300, 0.03, 11))
    with pytest.raises(ArgumentError, match="plan= was built from other index arrays"):
        fused.prepare(["x", "y", "b"], plan=plan, **other)
    with pytest.raises(ArgumentError, match=r"give plan=kernel\.inspect"):
        fused.prepare(["x", "y", "b"], **args)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    x, y, b = np.zeros(300), np.zeros(300), np.ones(300)
    call(x, y, b)
    call(x, y, b)
    y.setflags(write=False)
    with pytest.raises(ArgumentError, match="y"):
        call(x, y, b)
    with pytest.raises(ArgumentError, match="x"):
        call(x[:200], np.zeros(300), b)
    with pytest.raises(ArgumentError, match="expected 3 array"):
        call(x, b)


def test_arguments_of_other_types_take_the_full_path(fused: WavefrontKernel) -> None:
    """An ``ndarray`` subclass (or a numpy integer parameter) is not recorded: every such
    call is validated as before, and gives the same bits."""

    class Sub(np.ndarray):
        pass

    args = gauss_seidel_args(matrix(400, 0.01, 12))
    plan = fused.inspect(**{k: v for k, v in args.items() if k != "A"})
    x, y, b = np.zeros(400), np.zeros(400), np.ones(400)
    fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    for _ in range(3):
        x2, y2 = np.zeros(400), np.zeros(400)
        fused(x=x2, y=y2, b=b.copy().view(Sub), plan=plan, check=False, **args)
        assert id(plan) not in fused._quick
        np.testing.assert_array_equal(y2, y)


def test_calls_that_go_round_many_plans_replay(fused: WavefrontKernel, counted: list[int]) -> None:
    """A kernel keeps the records of many plans at once (the benchmark goes round nine)."""
    sets = [replayed(fused, 100 + k, k) for k in range(12)]
    counted.clear()
    for args, plan, x, y, b in sets * 2:
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    assert not counted


def test_a_prepared_call_after_replays_validates_other_types(
    fused: WavefrontKernel, pair: Any
) -> None:
    """A prepared call reads each free array's exact type with its look: after replayed
    calls, a list or an ``ndarray`` subclass in a free array's place takes the full path (a
    list is refused naming it; a subclass runs, validated, to the same bits), and the plain
    arrays replay again."""

    class Sub(np.ndarray):
        pass

    m = matrix(300, 0.02, 13)
    args = gauss_seidel_args(m)
    plan = fused.inspect(strategy="serial", **{k: v for k, v in args.items() if k != "A"})
    b = np.random.default_rng(3).standard_normal(300)
    want_x, want_y = expected(pair, args, b)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    x, y = np.zeros(300), np.zeros(300)
    for _ in range(3):
        y[:] = 0.0
        call(x, y, b)
    assert call._quick is not None
    assert call._quick.direct is not None  # replayed
    with pytest.raises(ArgumentError, match="b"):
        call(x, y, list(b))
    y2 = np.zeros(300).view(Sub)
    call(np.zeros(300), y2, b)
    np.testing.assert_array_equal(np.asarray(y2), want_y)
    y[:] = 0.0
    call(x, y, b)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)


@pytest.fixture(params=["c", "python"])
def look(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How a replayed call reads the look of the last call's arrays: the compiled helper
    (:mod:`spf.runtime.plan_look`, waited for) or Python (the helper made unavailable)."""
    if request.param == "c":
        look_helper()
    else:
        for module in (plan_call, plan_prepared):
            monkeypatch.setattr(module, "looker", lambda wait=False: None)
    return str(request.param)


def moved(a: np.ndarray, kept: list[np.ndarray]) -> bool:
    """Whether ``a`` resized in place and back, to one entry (arrays of its size, allocated
    between the two and added to ``kept``, take the memory after its shrunk block, so that
    it cannot grow there) or to 64 MiB (a block of its own mapping), came back on another
    buffer: the same object, shape, dtype, flags and contents. Not every allocation moves
    (one already in a mapping of its own may grow in place)."""
    before, n, contents = a.ctypes.data, len(a), a.copy()
    for size in (1, 1, 1 << 23):
        a.resize(size, refcheck=False)
        kept += [np.empty(n), np.empty(n)]
        a.resize(n, refcheck=False)
        a[:] = contents
        if a.ctypes.data != before:
            return True
    return False


def test_a_replay_after_an_array_moved_in_place_writes_the_new_buffer(
    fused: WavefrontKernel, pair: Any, counted: list[int]
) -> None:
    """The helper reads each array's buffer address: the same objects on other buffers are
    bound anew (before it, the replay wrote through the buffers of the last call)."""
    look_helper()
    args, plan, x, y, b = replayed(fused, 500, 12)
    want_x, want_y = expected(pair, args, b)
    assert len(counted) == 1
    kept: list[np.ndarray] = []
    moves = 0
    for a in (y, x, b):
        moves += moved(a, kept)
        x[:], y[:] = 0.0, 0.0
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(y, want_y)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    call(x, y, b)
    for a in (y, x):
        moves += moved(a, kept)
        x[:], y[:] = 0.0, 0.0
        call(x, y, b)
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(y, want_y)
    assert moves > 0  # some array came back on another buffer


def test_arrays_changed_in_place_are_refused_whichever_reads_the_look(
    fused: WavefrontKernel, look: str
) -> None:
    args, plan, x, y, b = replayed(fused, 400, 13)
    quick = fused._quick[id(plan)]
    assert (quick.last[2] is not None) == (look == "c")
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    call(x, y, b)
    call(x, y, b)
    for run in (lambda: fused(x=x, y=y, b=b, plan=plan, check=False, **args),
                lambda: call(x, y, b)):  # fmt: skip
        run()
        y.setflags(write=False)
        with pytest.raises(ArgumentError, match="y"):
            run()
        y.setflags(write=True)
        x.shape = (200, 2)
        with pytest.raises(ArgumentError, match="x"):
            run()
        x.shape = (400,)
        b.dtype = np.int64
        with pytest.raises(ArgumentError, match="b"):
            run()
        b.dtype = np.float64
        run()


@pytest.mark.parametrize("fire", ["hot_call", "cffi"])
def test_a_serial_plans_calls_on_the_same_arrays_run_hot(
    fused: WavefrontKernel, pair: Any, monkeypatch: pytest.MonkeyPatch, fire: str
) -> None:
    """A ``"serial"`` plan's keyword and prepared calls on the last call's very arrays,
    unchanged, run their C call straight (plan_call.Replay.hot), with the bits of the two
    kernels: through the helper's ``hot_call`` (the look and the C call in one call from
    Python) where it is loaded, else the look then the C call through cffi; an array
    changed in place is still refused, and other arrays are bound."""
    look_helper()
    if fire == "cffi":
        monkeypatch.setattr(plan_call, "fire_record", lambda *a: None)
    args = gauss_seidel_args(matrix(600, 0.01, 21))
    plan = fused.inspect(strategy="serial", **{k: v for k, v in args.items() if k != "A"})
    b = np.random.default_rng(2).standard_normal(600)
    want_x, want_y = expected(pair, args, b)
    x, y = np.zeros(600), np.zeros(600)
    call = fused.prepare(["x", "y", "b"], plan=plan, **args)
    for _ in range(2):
        y[:] = 0.0
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        y[:] = 0.0
        call(x, y, b)
    quick = fused._quick[id(plan)]
    assert quick.hot is not None
    assert call._hot is not None
    y[:] = 0.0
    fused(x=x, y=y, b=b, plan=plan, check=False, **args)  # hot (HOT_CALL's record made)
    y[:] = 0.0
    call(x, y, b)
    quick = fused._quick[id(plan)]
    # the hot call keeps the objects its record names (ints are taken by address there: a
    # freed int's address reused by another value must not pass), whoever replaces last
    for hot in (quick.hot, call._hot):
        assert {id(o) for o in hot[4]} >= {id(b), id(y)}
        words = fire == "hot_call" and platform.machine() in plan_look.WORD_ABIS
        assert bool(hot[5]) == words
        assert hot[5] is not None
    assert any(o is args["N"] for o in quick.hot[4])
    slow: list[str] = []
    for cls, name in ((plan_call.Quick, "run"), (plan_call.Replay, "run"),
                      (plan_prepared.PreparedPlanCall, "_given")):  # fmt: skip
        real = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda *a, r=real, n=name, **k: slow.append(n) or r(*a, **k))
    with exactly(2):
        for run in (lambda: fused(x=x, y=y, b=b, plan=plan, check=False, **args),
                    lambda: call(x, y, b)):  # fmt: skip
            x[:], y[:] = 0.0, 0.0
            fused._last_threads = None
            run()
            np.testing.assert_array_equal(x, want_x)
            np.testing.assert_array_equal(y, want_y)
            assert fused.last_threads == 1
        assert slow == []  # neither took the record's slower path
        x.shape = (300, 2)
        with pytest.raises(ArgumentError, match="x"):
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)
        with pytest.raises(ArgumentError, match="x"):
            call(x, y, b)
        x.shape = (600,)
        x2, y2 = np.zeros(600), np.zeros(600)
        fused(x=x2, y=y2, b=b, plan=plan, check=False, **args)
        call(x, y2 * 0.0, b)  # another y: bound anew
        np.testing.assert_array_equal(x2, want_x)
        np.testing.assert_array_equal(y2, want_y)
        assert "run" in slow
