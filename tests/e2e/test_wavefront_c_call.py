"""A serial plan's hot keyword call made in C (spf.runtime.plan_method, docs/inspection.md
"Calls with a plan"): once the first hot call's record is made, the class's ``__call__`` is
the look helper's method, which runs a keyword call of the last arguments, unchanged, from
the caller's dictionary with no Python frame, and hands every other call to the Python
``__call__``: whatever that refuses is still refused, changed values are still read, a
record of another plan is never run, and the method reads as the Python call."""

from __future__ import annotations

import inspect
import platform
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

from spf import kernels
from spf.bench.fused import fused_solve_mv
from spf.errors import ArgumentError
from spf.runtime import plan_look, plan_method
from spf.runtime.plan import WavefrontKernel
from spf.sparse import gauss_seidel_args
from spf.testing import look_helper

N = 500


@pytest.fixture(scope="module")
def fused() -> WavefrontKernel:
    k = fused_solve_mv().compile()
    assert isinstance(k, WavefrontKernel)
    return k


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    return kernels.trsv_diag_csr().compile(), kernels.spmv_csr().compile()


def matrix(n: int, density: float, seed: int) -> Any:
    """A random ``n`` x ``n`` CSR matrix with every diagonal entry, columns sorted."""
    rng = np.random.default_rng(seed)
    m = sps.random_array((n, n), density=density, rng=rng) + sps.eye_array(n) * (1.0 + n)
    return sps.csr_array(sps.csr_array(m).sorted_indices())


def expected(pair: tuple[Any, Any], args: dict[str, Any], b: np.ndarray) -> tuple[Any, Any]:
    """The solve then the product, by the two serial kernels."""
    n = len(b)
    x, y = np.zeros(n), np.zeros(n)
    pair[0](x=x, b=b, **args)
    pair[1](y=y, x=x, rowptr=args["rowptr"], col=args["col"], A=args["A"])
    return x, y


def in_c() -> None:
    """Skip where the helper's method cannot stand for the Python call (no C headers; a
    machine whose hot calls have no record: no method is installed there)."""
    look_helper()
    if not plan_look.HOT_METHOD or platform.machine() not in plan_look.WORD_ABIS:
        pytest.skip("no hot_call records on this machine: keyword calls stay in Python")


def hot(fused: WavefrontKernel, seed: int) -> tuple[dict[str, Any], Any, Any, Any, Any]:
    """(args, plan, x, y, b) of a random matrix's serial plan after calls that made its
    hot call's record (which installs the method)."""
    args = gauss_seidel_args(matrix(N, 0.01, seed))
    plan = fused.inspect(strategy="serial", **{k: v for k, v in args.items() if k != "A"})
    x, y, b = np.zeros(N), np.zeros(N), np.random.default_rng(seed).standard_normal(N)
    for _ in range(3):
        y[:] = 0.0
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)
    assert type(WavefrontKernel.__dict__["__call__"]).__name__ == "method"
    return args, plan, x, y, b


def frames(run: Callable[[], None]) -> list[str]:
    """The Python functions entered while ``run`` runs (its own frame left out)."""
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            seen.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return [f for f in seen if f != run.__qualname__]


def test_a_hot_keyword_call_runs_in_c(fused: WavefrontKernel, pair: Any) -> None:
    in_c()
    args, plan, x, y, b = hot(fused, 3)
    want_x, want_y = expected(pair, args, b)
    serial = fused._quick[id(plan)].hot[3]  # the kernel whose function the hot call runs
    fused._last_threads = serial._last_threads = None
    x[:], y[:] = 0.0, 0.0

    def call() -> None:
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)

    assert frames(call) == []  # before: WavefrontKernel.__call__'s frame
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    assert fused.last_threads == 1
    assert serial.last_threads == 1
    y[:] = 0.0  # the keywords in another order: the same record
    fused(check=False, y=y, **args, plan=plan, b=b, x=x)
    np.testing.assert_array_equal(y, want_y)


def test_what_the_c_call_does_not_run_is_the_python_calls(
    fused: WavefrontKernel, pair: Any
) -> None:
    in_c()
    args, plan, x, y, b = hot(fused, 4)

    def call(**changed: Any) -> None:
        if y.flags.writeable:
            y[:] = 0.0
        fused(**{"x": x, "y": y, "b": b, "plan": plan, "check": False, **args, **changed})

    x.shape = (N // 2, 2)
    with pytest.raises(ArgumentError, match="x"):
        call()
    x.shape = (N,)
    y.setflags(write=False)
    with pytest.raises(ArgumentError, match="y"):
        call()
    y.setflags(write=True)
    b.dtype = np.int64
    with pytest.raises(ArgumentError, match="b"):
        call()
    b.dtype = np.float64
    other = gauss_seidel_args(matrix(N + 7, 0.01, 5))  # another pattern, other sizes
    with pytest.raises(ArgumentError):
        fused(x=np.zeros(N + 7), y=np.zeros(N + 7), b=np.ones(N + 7), plan=plan, check=False,
              **other)  # fmt: skip
    with pytest.raises(ArgumentError):
        call(N=N - 1)
    with pytest.raises(ArgumentError, match="bogus"):
        call(bogus=np.zeros(N))
    with pytest.raises(ArgumentError):
        fused(x, y=y, b=b, plan=plan, check=False, **args)  # positional: the binder's error
    args["A"] *= 2.0  # values changed in place: read by the next (hot) call
    call()
    call()
    want_x, want_y = expected(pair, args, b)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    a2 = args["A"] * 0.5  # another values array: bound anew
    call(A=a2)
    want_x, want_y = expected(pair, {**args, "A": a2}, b)
    np.testing.assert_array_equal(y, want_y)
    ran: list[int] = []
    full = WavefrontKernel._call

    def count(self: WavefrontKernel, *a: Any) -> None:
        ran.append(1)
        full(self, *a)

    try:
        WavefrontKernel._call = count  # type: ignore[method-assign]
        call(A=a2, check=True)  # checked: the full path, every call
        call(A=a2, check=True)
        assert len(ran) == 2
    finally:
        WavefrontKernel._call = full  # type: ignore[method-assign]


def test_a_record_of_another_plan_is_not_run(fused: WavefrontKernel, pair: Any) -> None:
    """The method runs a record only while its weak reference is to the very plan passed
    (a plan at a dead plan's address is another plan)."""
    in_c()
    args, plan, x, y, b = hot(fused, 6)
    quick = fused._quick[id(plan)]
    stranger = fused.inspect(strategy="serial", **{k: v for k, v in args.items() if k != "A"})
    quick.plan = weakref.ref(stranger)
    x[:], y[:] = 0.0, 0.0
    seen = frames(lambda: fused(x=x, y=y, b=b, plan=plan, check=False, **args))
    assert "WavefrontKernel._call" in seen  # the full path, which records the plan anew
    want_x, want_y = expected(pair, args, b)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
    assert fused._quick[id(plan)] is not quick


def test_the_method_reads_as_the_python_call(fused: WavefrontKernel, pair: Any) -> None:
    in_c()
    args, plan, x, y, b = hot(fused, 8)
    python = plan_method.python_call(WavefrontKernel)
    method = WavefrontKernel.__dict__["__call__"]
    assert method.__wrapped__ is python
    assert WavefrontKernel.__call__.__doc__ == python.__doc__
    assert WavefrontKernel.__call__.__name__ == "__call__"
    assert list(inspect.signature(fused).parameters) == ["positional", "check", "plan", "args"]
    want_x, want_y = expected(pair, args, b)
    for call in (WavefrontKernel.__call__, lambda **k: fused.__call__(**k)):
        x[:], y[:] = 0.0, 0.0
        kwargs = {"x": x, "y": y, "b": b, "plan": plan, "check": False, **args}
        if call is WavefrontKernel.__call__:
            call(fused, **kwargs)
        else:
            call(**kwargs)
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(y, want_y)


def test_a_subclass_that_sets_attributes_its_own_way_is_called_in_python(pair: Any) -> None:
    """The method writes ``_last_threads`` straight into the kernels' dicts; a user's
    subclass with its own ``__setattr__`` or a ``_last_threads`` property gets every call
    through the Python ``__call__``, which sets it the class's way (review of mklkw: the
    fourth call ran in C and skipped the hook)."""
    in_c()

    class Logged(WavefrontKernel):
        sets = 0

        def __setattr__(self, name: str, value: object) -> None:
            if name == "_last_threads":
                Logged.sets += 1
            object.__setattr__(self, name, value)

    k = fused_solve_mv().compile()
    hot(k, 5)  # installs the method (if not yet) with a plain kernel's hot call
    k.__class__ = Logged
    args = gauss_seidel_args(matrix(N, 0.01, 6))
    plan = k.inspect(strategy="serial", **{n: v for n, v in args.items() if n != "A"})
    x, y, b = np.zeros(N), np.zeros(N), np.random.default_rng(6).standard_normal(N)
    want_x, want_y = expected(pair, args, b)
    before = Logged.sets
    for _ in range(4):
        y[:] = 0.0
        k(x=x, y=y, b=b, plan=plan, check=False, **args)
    assert Logged.sets - before >= 4  # before: 3 (the fourth call ran in C)
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(y, want_y)
