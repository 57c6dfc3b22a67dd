"""Audit of scheduling on dense stencils and reductions (API.md sections 3, 4, 7-8).

A user's small programs (clamped 1-D blur, 2-D two-pass blur, Jacobi with two arrays,
Seidel in place, sum, dot, matrix-vector, gemm-like, histogram through an int32 or int64
index array, and a chain of three producer/consumer statements) under random sequences of
scheduling commands (tile and split with dividing and non-dividing sizes, interchange, skew,
shift, reverse, unroll, vectorize, parallelize with and without ``reduction=``, after,
before, compute_at, fuse), each kept or refused as the fuzzer in test_schedule_fuzz.py does.
A kept schedule computes, at 1 and 2 OpenMP threads and sizes 0, 1, odd and prime, what the
unscheduled computation's ``interpret`` computes: bit for bit, unless a ``reduction=`` tag
lets a parallel loop reassociate a sum (docs/scheduling.md); a refused one is an
``SpfError`` that is no internal error and names a statement or the command.

The regressions after the driver are what the audit found.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import spf
from spf.errors import CodegenError, SpfError
from spf.runtime import threads

Args = dict[str, Any]
Command = tuple[str, str, tuple[Any, ...]]


# ------------------------------------------------------------------------------ kernels
def _blur1d() -> spf.Computation:
    comp = spf.Computation("blur1d")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("o", "double", shape=("N",))
    comp.add_stmt(
        spf.Stmt(
            "$o$(i) = ($a$(max(i - 1, 0)) + $a$(i)) + $a$(min(i + 1, N - 1));",
            "{[i]: 0 <= i < N}",
        )
    )
    return comp


def _blur2d() -> spf.Computation:
    comp = spf.Computation("blur2d")
    for name in ("a", "t", "o"):
        comp.add_data_space(name, "double", shape=("N", "N"))
    comp.add_stmt(
        spf.Stmt(
            "$t$(i,j) = ($a$(i,j-1) + $a$(i,j)) + $a$(i,j+1);",
            "{[i,j]: 0 <= i < N && 1 <= j < N - 1}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    comp.add_stmt(
        spf.Stmt(
            "$o$(i,j) = ($t$(i-1,j) + $t$(i,j)) + $t$(i+1,j);",
            "{[i,j]: 1 <= i < N - 1 && 1 <= j < N - 1}",
            "{[i,j] -> [1,i,0,j,0]}",
        )
    )
    return comp


def _jacobi() -> spf.Computation:
    comp = spf.Computation("jacobi")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    domain = "{[t,i]: 0 <= t < T && 1 <= i < N - 1}"
    comp.add_stmt(
        spf.Stmt(
            "$B$(i) = 0.25 * (($A$(i-1) + 2.0 * $A$(i)) + $A$(i+1));",
            domain,
            "{[t,i] -> [0,t,0,i,0]}",
        )
    )
    comp.add_stmt(spf.Stmt("$A$(i) = $B$(i);", domain, "{[t,i] -> [0,t,1,i,0]}"))
    return comp


def _seidel() -> spf.Computation:
    comp = spf.Computation("seidel")
    comp.add_data_space("A", "double", shape=("N", "N"))
    comp.add_stmt(
        spf.Stmt(
            "$A$(i,j) = ((($A$(i-1,j) + $A$(i,j-1)) + $A$(i,j)) + $A$(i+1,j)) * 0.25"
            " + $A$(i,j+1) * 0.125;",
            "{[t,i,j]: 0 <= t < T && 1 <= i < N - 1 && 1 <= j < N - 1}",
            "{[t,i,j] -> [0,t,0,i,0,j,0]}",
        )
    )
    return comp


def _vsum() -> spf.Computation:
    comp = spf.Computation("vsum")
    comp.add_data_space("s", "double", shape=())
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$s$ += $x$(i);", "{[i]: 0 <= i < N}"))
    return comp


def _dot() -> spf.Computation:
    comp = spf.Computation("dot")
    comp.add_data_space("s", "double", shape=())
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$s$ = 0.0;", "{[]}", "{[] -> [0]}"))
    comp.add_stmt(spf.Stmt("$s$ += $x$(i) * $y$(i);", "{[i]: 0 <= i < N}", "{[i] -> [1,i,0]}"))
    return comp


def _matvec() -> spf.Computation:
    comp = spf.Computation("matvec")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_stmt(spf.Stmt("$y$(i) = 0.0;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0,0,0]}"))
    comp.add_stmt(
        spf.Stmt(
            "$y$(i) += $A$(i,j) * $x$(j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j] -> [0,i,1,j,0]}",
        )
    )
    return comp


def _gemm() -> spf.Computation:
    comp = spf.Computation("gemm")
    comp.add_data_space("C", "double", shape=("N", "M"))
    comp.add_data_space("A", "double", shape=("N", "K"))
    comp.add_data_space("B", "double", shape=("K", "M"))
    comp.add_stmt(
        spf.Stmt(
            "$C$(i,j) = 0.5 * $C$(i,j);",
            "{[i,j]: 0 <= i < N && 0 <= j < M}",
            "{[i,j] -> [0,i,0,j,0,0,0]}",
        )
    )
    comp.add_stmt(
        spf.Stmt(
            "$C$(i,j) += $A$(i,k) * $B$(k,j);",
            "{[i,j,k]: 0 <= i < N && 0 <= j < M && 0 <= k < K}",
            "{[i,j,k] -> [0,i,0,j,1,k,0]}",
        )
    )
    return comp


def _histogram(dtype: str) -> Callable[[], spf.Computation]:
    def build() -> spf.Computation:
        comp = spf.Computation("histogram")
        comp.add_data_space("h", "double", shape=("B",))
        comp.add_data_space("w", "double", shape=("N",))
        comp.declare_uf("key", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < B}", dtype=dtype)
        comp.add_stmt(spf.Stmt("$h$(key(k)) += $w$(k);", "{[k]: 0 <= k < N}", "{[k] -> [0,k,0]}"))
        return comp

    return build


def _chain() -> spf.Computation:
    comp = spf.Computation("chain")
    for name in ("a", "t", "u", "o"):
        comp.add_data_space(name, "int64_t", shape=("N",))
    comp.add_stmt(spf.Stmt("$t$(i) = 3 * $a$(i) + i;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$u$(i) = $t$(i-1) - 2 * $t$(i+1);", "{[i]: 1 <= i < N - 1}"))
    comp.add_stmt(spf.Stmt("$o$(i) = $u$(i) * $u$(i-1) + $t$(i);", "{[i]: 2 <= i < N - 1}"))
    return comp


def _args(name: str, n: int, seed: int) -> Args:
    rng = np.random.default_rng(seed)
    if name == "blur1d":
        return {"a": rng.random(n), "o": np.zeros(n)}
    if name == "blur2d":
        return {"a": rng.random((n, n)), "t": np.zeros((n, n)), "o": np.zeros((n, n))}
    if name == "jacobi":
        return {"A": rng.random(n), "B": np.zeros(n), "T": 3}
    if name == "seidel":
        return {"A": rng.random((n, n)), "T": 2}
    if name == "vsum":
        return {"s": np.array(0.25), "x": rng.random(n)}
    if name == "dot":
        return {"s": np.array(9.0), "x": rng.random(n), "y": rng.random(n)}
    if name == "matvec":
        return {"y": np.full(n, 7.0), "A": rng.random((n, n + 1)), "x": rng.random(n + 1)}
    if name == "gemm":
        return {
            "C": rng.random((n, n + 2)),
            "A": rng.random((n, n + 1)),
            "B": rng.random((n + 1, n + 2)),
        }
    if name.startswith("histogram"):
        bins = max(1, n // 2)
        dtype = np.int64 if name.endswith("64") else np.int32
        keys = rng.integers(0, bins, size=n).astype(dtype)
        return {"h": np.zeros(bins), "w": rng.random(n), "key": keys}
    a = rng.integers(-50, 50, size=n)
    return {"a": a, **{k: np.zeros(n, dtype=np.int64) for k in ("t", "u", "o")}}


KERNELS: dict[str, Callable[[], spf.Computation]] = {
    "blur1d": _blur1d,
    "blur2d": _blur2d,
    "jacobi": _jacobi,
    "seidel": _seidel,
    "vsum": _vsum,
    "dot": _dot,
    "matvec": _matvec,
    "gemm": _gemm,
    "histogram32": _histogram("int32"),
    "histogram64": _histogram("int64"),
    "chain": _chain,
}


def _copy(args: Args) -> Args:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def _reference(name: str, n: int, seed: int) -> Args:
    want = _args(name, n, seed)
    KERNELS[name]().interpret(**want)
    return want


def _run(kernel: Any, args: Args, n_threads: int) -> Args:
    taken = {a.name for a in kernel.arguments}
    got = {k: v for k, v in _copy(args).items() if k in taken}
    adaptive = threads.set_adaptive(False)
    try:
        with threads.openmp_threads(n_threads):
            kernel(**got)
    finally:
        threads.set_adaptive(adaptive)
    return got


def _assert_same(got: Args, want: Args, reordered: bool, what: object) -> None:
    for k, v in got.items():
        if not isinstance(v, np.ndarray):
            continue
        if reordered:
            np.testing.assert_allclose(v, want[k], rtol=1e-12, err_msg=f"{k}: {what}")
        else:
            np.testing.assert_array_equal(v, want[k], err_msg=f"{k}: {what}")


# ------------------------------------------------------------------------------ driver
def _command(rng: random.Random, comp: spf.Computation, fresh: Iterator[int]) -> Command:
    """A random command on a random statement (loops by name, sometimes by depth)."""
    stmt, other = rng.choice(comp.stmts), rng.choice(comp.stmts)
    loops, n = list(stmt.loops), next(fresh)

    def loop() -> str | int:
        if not loops or rng.random() < 0.05:
            return rng.randrange(len(loops) + 1)
        return rng.choice(loops)

    def pair() -> tuple[str | int, str | int]:
        if len(loops) >= 2 and rng.random() < 0.8:
            at = rng.randrange(len(loops) - 1)
            return loops[at], loops[at + 1]
        return loop(), loop()

    def size() -> int:
        return rng.choice([1, 2, 3, 4, 5, 7, 8, 13, 64])

    levels = [spf.ROOT, *other.loops]
    make: dict[str, Callable[[], tuple[Any, ...]]] = {
        "split": lambda: (loop(), size(), f"o{n}", f"p{n}"),
        "tile": lambda: (*pair(), size(), size(), f"a{n}", f"b{n}", f"c{n}", f"d{n}"),
        "interchange": pair,
        "skew": lambda: (*pair(), rng.choice([-1, 1, 2, 3]), None, f"k{n}"),
        "shift": lambda: (loop(), rng.choice([-2, -1, 1, 3])),
        "reverse": lambda: (loop(),),
        "unroll": lambda: (loop(), rng.choice([1, 2, 3, 4, 8])),
        "vectorize": lambda: (loop(), rng.choice([2, 4, 8])),
        "parallelize": lambda: (loop(), rng.choice([None, None, "atomic", "privatize"])),
        "after": lambda: (other.name, rng.choice(levels)),
        "before": lambda: (other.name, rng.choice(levels)),
        "compute_at": lambda: (other.name, rng.choice(other.loops or (spf.ROOT,))),
        "fuse": lambda: (other.name, rng.choice([0, 1, 2, 3])),
    }
    kind = rng.choice([*make, "tile", "split", "skew", "interchange"])
    return stmt.name, kind, make[kind]()


def _group(rng: random.Random, comp: spf.Computation, fresh: Iterator[int]) -> list[Command]:
    """One command, or the same loop command on every statement sharing its loops."""
    cmd = _command(rng, comp, fresh)
    name, kind, args = cmd
    loops = list(comp.stmt(name).loops)
    named = [a for a in args[:2] if isinstance(a, str) and a in loops]
    if kind in ("after", "before", "compute_at", "fuse") or not named or rng.random() < 0.3:
        return [cmd]
    if kind not in ("tile", "interchange", "skew"):
        named = named[:1]
    upto = max(loops.index(x) for x in named) + 1
    return [cmd] + [
        (s.name, kind, args)
        for s in comp.stmts
        if s.name != name and list(s.loops)[:upto] == loops[:upto]
    ]


def _apply(comp: spf.Computation, cmd: Command) -> None:
    name, kind, args = cmd
    stmt = comp.stmt(name)
    if kind == "parallelize":
        stmt.parallelize(args[0], reduction=args[1])
    elif kind == "skew":
        stmt.skew(args[0], args[1], args[2], new_j=args[4])
    elif kind == "fuse":
        comp.fuse(name, args[0], args[1])
    else:
        getattr(stmt, kind)(*args)


def _assert_clear(err: SpfError, comp: spf.Computation, commands: list[Command]) -> None:
    text = str(err)
    assert type(err).__name__ != "InternalError", f"{commands}: {text}"
    assert "bug" not in text, f"{commands}: {text}"
    assert "isl_" not in text, f"{commands}: {text}"
    named = [s.name for s in comp.stmts] + [commands[0][1]]
    assert any(n in text for n in named), f"names neither statement nor command: {text}"


def _schedule(name: str, rng: random.Random) -> tuple[spf.Computation, list[Command]]:
    """The computation after a random sequence of commands, and the commands it kept."""
    build = KERNELS[name]
    comp, kept, fresh = build(), list[Command](), itertools.count()
    for _ in range(rng.randint(1, 5)):
        group = _group(rng, comp, fresh)
        try:
            for cmd in group:
                _apply(comp, cmd)
            comp.check_legality()
        except SpfError as err:
            _assert_clear(err, comp, group)
            comp = build()  # start again without the refused commands
            for cmd in kept:
                _apply(comp, cmd)
            continue
        kept += group
    return comp, kept


SEEDS = {  # chosen so that most commands are kept and every kind appears
    "blur1d": (6, 30),
    "blur2d": (12, 27),
    "jacobi": (6, 12),
    "seidel": (12, 33),
    "vsum": (35,),
    "dot": (33, 35),
    "matvec": (6, 30),
    "gemm": (29, 34),
    "histogram32": (35,),
    "histogram64": (30,),
    "chain": (5, 17, 33),
}


@pytest.mark.parametrize(
    ("name", "seed"), [(name, seed) for name, seeds in SEEDS.items() for seed in seeds]
)
def test_random_schedules_keep_the_result(name: str, seed: int) -> None:
    rng = random.Random(seed)
    comp, kept = _schedule(name, rng)
    try:
        kernel = comp.compile()
    except CodegenError as err:
        _assert_clear(err, comp, kept or [("", "compile", ())])
        return
    reordered = any(kind == "parallelize" and args[1] for _, kind, args in kept)
    for n in rng.sample([0, 1, 2, 3, 5, 7, 11, 13], 3):
        want = _reference(name, n, seed)
        for n_threads in (1, 2):
            got = _run(kernel, _args(name, n, seed), n_threads)
            _assert_same(got, want, reordered, (n, n_threads, kept))


# ------------------------------------------------------------------- what the audit found
def test_privatized_loop_that_carries_nothing_on_a_twice_updated_array_compiles() -> None:
    """gemm's ``C(i, j) = 0.5 * C(i, j)`` (a ``*`` update) then ``C(i, j) += A * B`` (a
    ``+`` update), both ``parallelize("i", reduction="privatize")``: legal (``i`` carries no
    dependence), yet codegen refused it ("accumulated with + and * in one reduction loop").
    Such a data space now stays shared, so the result is the serial one, bit for bit."""
    comp = _gemm()
    for stmt in comp.stmts:
        stmt.parallelize("i", reduction="privatize")
    comp.check_legality()
    kernel = comp.compile()
    for n in (0, 1, 9):
        want = _reference("gemm", n, 0)
        for n_threads in (1, 2):
            _assert_same(_run(kernel, _args("gemm", n, 0), n_threads), want, False, n)


def test_privatized_loop_carrying_two_operators_on_one_array_stays_refused() -> None:
    comp = spf.Computation("mixed")
    comp.add_data_space("y", "double", shape=("M",))
    comp.add_data_space("x", "double", shape=("N",))
    domain = "{[i,j]: 0 <= i < N && 0 <= j < M}"
    comp.add_stmt(spf.Stmt("$y$(j) *= 2.0;", domain, "{[i,j] -> [0,i,0,j,0]}"))
    comp.add_stmt(spf.Stmt("$y$(j) += $x$(i);", domain, "{[i,j] -> [0,i,0,j,1]}"))
    for stmt in comp.stmts:
        stmt.parallelize("i", reduction="privatize")
    with pytest.raises(spf.IllegalScheduleError, match="s0 accumulates with \\* and s1 with \\+"):
        comp.check_legality()


def _running_max() -> spf.Computation:
    comp = spf.Computation("running_max")
    comp.add_data_space("m", "double", shape=())
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$m$ = max($m$, $x$(i));", "{[i]: 0 <= i < N}"))
    return comp


@pytest.mark.parametrize(
    ("build", "command", "advice"),
    [
        (_vsum, lambda s: s.vectorize("i", 8), "parallelize('i1', reduction=\"atomic\")"),
        (_dot, lambda s: s.reverse("i"), "parallelize('i', reduction=\"privatize\")"),
        (_running_max, lambda s: s.parallelize("i"), "keep loop 'i' serial (min/max"),
        (_running_max, lambda s: s.reverse("i"), "keep loop 'i' serial (min/max"),
    ],
)
def test_a_refused_reduction_loop_is_not_told_to_privatize_its_sum(
    build: Callable[[], spf.Computation], command: Callable[[spf.Stmt], object], advice: str
) -> None:
    """``s += x(i)`` vectorized, or ``m = max(m, x(i))`` run in parallel or reversed, was
    refused with "'s' is a scalar shared by every iteration ...: make it private to each
    iteration" (declare it in the loop body, or add_local(private=...)): advice that turns
    the sum into the last term. The message now says the scalar is a reduction and what
    to do instead."""
    comp = build()
    command(comp.stmts[-1])
    with pytest.raises(spf.IllegalScheduleError) as err:
        comp.check_legality()
    text = str(err.value)
    assert "make it private" not in text
    assert "is a reduction" in text
    assert advice in text


@pytest.mark.parametrize(
    ("build", "order"),
    [
        (_gemm, lambda c: c.stmt("s1").after("s0", "k")),
        (_gemm, lambda c: c.stmt("s0").then("s1", "k")),
        (_dot, lambda c: c.stmt("s0").after("s1", "i")),
    ],
)
def test_ordering_at_a_loop_the_other_statement_lacks_says_so(
    build: Callable[[], spf.Computation], order: Callable[[spf.Computation], object]
) -> None:
    """``s1.after(s0, "k")`` with ``k`` a loop of ``s1`` only said "statement s0 needs 3
    loop(s) at the odd positions of a 2d+1 schedule to share them with s0": the statement
    named twice, and nothing about the level. It now says how many loops the statement has
    and what to name instead; the computation is unchanged."""
    comp = build()
    before = comp.to_json()
    with pytest.raises(spf.SpfError, match="fewer than the") as err:
        order(comp)
    text = str(err.value)
    assert "statement s0 has" in text
    assert "name a loop both statements have" in text
    assert comp.to_json() == before


def _rowsum() -> spf.Computation:
    """``t`` sums row ``i`` of ``A`` (never reset by a statement: a fresh zeroed copy per
    row, private to ``i``) into ``y(i)``."""
    comp = spf.Computation("rowsum")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("N", "M"))
    comp.add_local("t", "double", private="i")
    comp.add_stmt(
        spf.Stmt("$t$ += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}", "{[i,j] -> [0,i,0,j,0]}")
    )
    comp.add_stmt(spf.Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
    return comp


def _stencil_temp() -> spf.Computation:
    comp = spf.Computation("stencil_temp")
    comp.add_data_space("a", "double", shape=("N",))
    comp.add_data_space("o", "double", shape=("N",))
    comp.add_local("tmp", "double", private="i")
    domain = "{[i]: 1 <= i < N - 1}"
    comp.add_stmt(spf.Stmt("$tmp$ = $a$(i-1) + $a$(i+1);", domain, "{[i] -> [0,i,0]}"))
    comp.add_stmt(spf.Stmt("$o$(i) = $tmp$ * 0.5 + $a$(i);", domain, "{[i] -> [0,i,1]}"))
    return comp


@pytest.mark.parametrize(
    ("build", "factor", "width"),
    [(_rowsum, 5, 2), (_rowsum, 5, 4), (_stencil_temp, 3, 2), (_stencil_temp, 7, 4)],
)
def test_split_and_vectorized_loop_of_a_private_local_compiles(
    build: Callable[[], spf.Computation], factor: int, width: int
) -> None:
    """``split(i, 5)`` then ``vectorize(i1, 2)`` on the loop a local is private to leaves a
    remainder iteration that isl scans as straight-line code, sometimes one iteration in
    two pieces (``{ s0(4 + 5 * i0) }`` then ``{ s1(4 + 5 * i0) }``) or two iterations in one
    piece: codegen refused the legal schedule ("statement(s) s0, s1 run outside loop 'i'
    ... give those statements a range of 'i'"). Each iteration of such code now gets one
    copy of its own, and the kernel computes what the unscheduled one does."""
    comp = build()
    for stmt in comp.stmts:
        stmt.split("i", factor, "i0", "i1").vectorize("i1", width)
    kernel = comp.compile()
    for n in range(12):
        rng = np.random.default_rng(n)
        if build is _rowsum:
            args: Args = {"A": rng.random((n, 3)), "y": np.zeros(n)}
        else:
            args = {"a": rng.random(n), "o": np.zeros(n)}
        want = _copy(args)
        build().interpret(**want)
        for n_threads in (1, 2):
            _assert_same(_run(kernel, args, n_threads), want, False, n)


def test_fuse_at_an_unknown_loop_name_is_refused_as_fuse() -> None:
    """``comp.fuse("s0", "s1", "zz")`` was refused by the ``after`` it is built on ("after:
    not a loop of s0 nor of s1"): a command the user did not call. The message now names
    ``fuse`` and the loops, and the computation is unchanged."""
    comp = _blur2d()
    before = comp.to_json()
    with pytest.raises(spf.UndeclaredError, match="fuse: not a loop of s0 nor of s1") as err:
        comp.fuse("s0", "s1", "zz")
    assert "after" not in str(err.value)
    assert comp.to_json() == before
