"""Differential fuzzing of schedules: random legal schedules give the untransformed result,
illegal ones are refused (docs/scheduling.md, API.md sections 1 and 3).

Random sequences of one to four loop commands (tile, split, interchange, skew, shift,
reverse, unroll, vectorize, parallelize with and without ``reduction=``, after, compute_at,
storage_fold, cache_read, inline), each applied to one statement or to every statement
that shares the loop it names, run on PolyBench kernels, sparse kernels with their UF
facts (CSR SpMV, SpTRSV, ILU(0)) and integer producer/consumer and wavefront kernels, at
sizes with partial tiles and at 0, 1 and 2. For every command: either it is refused at
once by an ``SpfError`` that is not an internal one and leaves the computation as it was,
or ``check_legality`` refuses it (then the sequence goes on without it, as the docs say to
start again), or it stays; the compiled kernel at 1 and 2 OpenMP threads and ``interpret``
then give the untransformed kernel's result, bit for bit (to rounding where a
``reduction=`` tag lets a parallel loop reorder a sum). The seeds are fixed; the hunt that
found the defects below ran thousands of them.

The regressions after the fuzzer are what it found: a shifted or tiled row loop of
ILU(0)'s co-iterated statement refused as a "scanner bug", ``compute_at`` failing with an
internal error when the producer already had a loop of the consumer's loop's name, a
piecewise schedule reported as a scanner bug, ``set_schedule`` taking calls of undeclared
UFs, and ``interpret`` of a tiled ILU(0) of 9 rows taking minutes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sps

import spf
from spf import kernels
from spf.bench.polybench import kernel as polybench
from spf.errors import CodegenError, IllegalScheduleError, SpfError, UndeclaredError
from spf.runtime import threads
from spf.sparse import csr_args, ilu0_args, sptrsv_args

Args = dict[str, Any]
Command = tuple[str, str, tuple[Any, ...]]


# ------------------------------------------------------------------------------ kernels
@dataclass(frozen=True)
class Case:
    """A kernel to fuzz: a fresh Computation, its arguments at size ``n`` (None: the
    kernel's own small sizes) and the arrays it writes."""

    build: Callable[[], spf.Computation]
    args: Callable[[int | None], Args]
    outputs: tuple[str, ...]


def _poly(name: str) -> Case:
    k = polybench(name)

    def args(n: int | None) -> Args:
        return k.arguments(None if n is None else dict.fromkeys(k.sizes, n))

    return Case(k.build, args, k.outputs)


def _matrix(n: int, seed: int, lower: bool = False) -> sps.csr_array:
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < 0.4) * rng.random((n, n))
    dense = np.tril(dense) if lower else dense
    return sps.csr_array(dense + 4 * np.eye(n))


def _spmv(n: int | None) -> Args:
    n = 7 if n is None else n
    return {"y": np.zeros(n), "x": np.arange(n) + 1.0, **csr_args(_matrix(n, n))}


def _sptrsv(n: int | None) -> Args:
    n = 7 if n is None else n
    return {"u": np.zeros(n), "f": np.arange(n) + 1.0, **sptrsv_args(_matrix(n, n, True))}


def _ilu0(n: int | None) -> Args:
    return ilu0_args(_matrix(9 if n is None else n, 3))


def _producer_consumer() -> spf.Computation:
    comp = spf.Computation("pc")
    for name in ("A", "T", "O"):
        comp.add_data_space(name, "int64_t", shape=("N", "M"))
    comp.add_stmt(spf.Stmt("$T$(i,j) = 3*$A$(i,j) + j;", "{[i,j]: 0 <= i < N && 0 <= j < M}", None))
    comp.add_stmt(
        spf.Stmt(
            "$O$(i,j) = $T$(i,j) + 2*$T$(i-1,j) - $T$(i,j-1);",
            "{[i,j]: 1 <= i < N && 1 <= j < M}",
            None,
        )
    )
    return comp


def _pc_args(n: int | None) -> Args:
    n = 6 if n is None else n
    a = np.arange(n * (n + 1), dtype=np.int64).reshape(n, n + 1) * 7 % 11
    return {"A": a, "T": np.zeros_like(a), "O": np.zeros_like(a)}


def _wave() -> spf.Computation:
    comp = spf.Computation("wave")
    comp.add_data_space("A", "int64_t", shape=("N", "N"))
    comp.add_stmt(
        spf.Stmt(
            "$A$(i,j) = $A$(i-1,j-1) + 2*$A$(i,j) - $A$(i-1,j+1);",
            "{[i,j]: 1 <= i < N && 1 <= j < N - 1}",
            "{[i,j] -> [0,i,0,j,0]}",
        )
    )
    return comp


def _wave_args(n: int | None) -> Args:
    n = 7 if n is None else n
    return {"A": np.arange(n * n, dtype=np.int64).reshape(n, n) * 5 % 13}


CASES = {
    "gemm": _poly("gemm"),
    "2mm": _poly("2mm"),
    "jacobi-1d": _poly("jacobi-1d"),
    "seidel-2d": _poly("seidel-2d"),
    "trisolv": _poly("trisolv"),
    "spmv_csr": Case(kernels.spmv_csr, _spmv, ("y",)),
    "sptrsv_csr": Case(kernels.sptrsv_csr, _sptrsv, ("u",)),
    "ilu0_csr": Case(kernels.ilu0_csr, _ilu0, ("A",)),
    "producer_consumer": Case(_producer_consumer, _pc_args, ("T", "O")),
    "wave": Case(_wave, _wave_args, ("A",)),
}


# ----------------------------------------------------------------------------- commands
def _one(rng: random.Random, comp: spf.Computation, fresh: Iterator[int]) -> Command:
    """A random command on a random statement (loops by name, sometimes by depth)."""
    stmt = rng.choice(comp.stmts)
    other = rng.choice(comp.stmts)
    loops = list(stmt.loops)
    n = next(fresh)

    def loop() -> str | int:
        if not loops or rng.random() < 0.1:
            return rng.randrange(len(loops) + 1)
        return rng.choice(loops)

    def pair() -> tuple[str | int, str | int]:
        if len(loops) >= 2 and rng.random() < 0.85:
            at = rng.randrange(len(loops) - 1)
            return loops[at], loops[at + 1]
        return loop(), loop()

    read = sorted({ds for ds, _ in stmt.reads}) or ["?"]
    names = (f"a{n}", f"b{n}", f"c{n}", f"d{n}")
    make: dict[str, Callable[[], tuple[Any, ...]]] = {
        "split": lambda: (loop(), rng.choice([1, 2, 3, 4]), f"o{n}", f"p{n}"),
        "tile": lambda: (*pair(), rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3, 5]), *names),
        "interchange": lambda: (loop(), loop()),
        "skew": lambda: (loop(), loop(), rng.choice([-2, -1, 1, 2]), None, f"k{n}"),
        "shift": lambda: (loop(), rng.choice([-3, -1, 1, 2])),
        "reverse": lambda: (loop(),),
        "unroll": lambda: (loop(), rng.choice([1, 2, 4])),
        "vectorize": lambda: (loop(), rng.choice([2, 4])),
        "parallelize": lambda: (loop(), rng.choice([None, None, "atomic", "privatize"])),
        "after": lambda: (other.name, rng.choice([spf.ROOT, 0, *other.loops[:2]])),
        "compute_at": lambda: (other.name, rng.choice(other.loops or (spf.ROOT,))),
        "storage_fold": lambda: (loop(), rng.choice([1, 2, 3])),
        "cache_read": lambda: (rng.choice(read), loop()),
        "inline": lambda: (),
    }
    kind = rng.choice([*make, "tile", "parallelize"])
    return stmt.name, kind, make[kind]()


def _commands(rng: random.Random, comp: spf.Computation, fresh: Iterator[int]) -> list[Command]:
    """One command, or (often) the same loop command on every statement sharing its loops."""
    name, kind, args = cmd = _one(rng, comp, fresh)
    loops = list(comp.stmt(name).loops)
    named = [a for a in args[:2] if isinstance(a, str) and a in loops]
    grouped = ("split", "tile", "interchange", "skew", "shift", "reverse", "unroll")
    if kind not in (*grouped, "vectorize", "parallelize") or not named or rng.random() < 0.4:
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
    else:
        getattr(stmt, kind)(*args)


def _internal(err: SpfError) -> bool:
    text = str(err)
    return type(err).__name__ == "InternalError" or "spf bug" in text or "scanner bug" in text


# ------------------------------------------------------------------------------ the fuzz
SEEDS = {  # chosen so that most commands are kept and every kind appears
    "gemm": (13, 38),
    "2mm": (11, 16, 31),
    "jacobi-1d": (21, 35),
    "seidel-2d": (21,),
    "trisolv": (8,),
    "spmv_csr": (0, 21),
    "sptrsv_csr": (5, 24),
    "ilu0_csr": (13, 24),
    "producer_consumer": (0, 11, 27, 38),
    "wave": (11, 35),
}


def _run(comp: spf.Computation, args: Args, kernel: Any | None, n_threads: int) -> Args:
    got = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    if kernel is None:
        comp.interpret(**got)
    else:
        with threads.openmp_threads(n_threads):
            kernel(**got)
    return got


def _refused(comp: spf.Computation, commands: list[Command], check: bool) -> SpfError | None:
    """The error that refuses ``commands`` (applied in order), or their legality if
    ``check``; None when they stay."""
    try:
        for cmd in commands:
            _apply(comp, cmd)
        if check:
            comp.check_legality()
    except SpfError as err:
        return err
    return None


def _fuzz(case: Case, rng: random.Random) -> tuple[spf.Computation, list[Command]]:
    """The computation after a random sequence of commands, and the commands it kept."""
    comp, accepted, fresh = case.build(), list[Command](), itertools.count()
    for _ in range(rng.randint(1, 4)):
        group = _commands(rng, comp, fresh)
        before = comp.to_json()
        err = _refused(comp, group[:1], check=False)
        if err is not None:  # refused at once: nothing changed
            assert comp.to_json() == before, f"{group[0]} changed the computation"
        else:
            err = _refused(comp, group[1:], check=True)
            if err is None:
                accepted += group
                continue
        assert not _internal(err), f"{group} after {accepted}: {err}"
        named = [s.name for s in comp.stmts] + (
            [] if isinstance(err, IllegalScheduleError) else [group[0][1]]
        )
        assert any(n in str(err) for n in named), f"names neither statement nor command: {err}"
        comp = case.build()  # start again without the refused command (docs)
        for cmd in accepted:
            _apply(comp, cmd)
    return comp, accepted


def _compiled(comp: spf.Computation, accepted: list[Command]) -> Any | None:
    """The kernel, or None where codegen refuses the schedule as a user error."""
    try:
        return comp.compile()
    except CodegenError as err:
        message = str(err)
    assert "spf bug" not in message, f"{accepted}: {message}"
    assert "scanner bug" not in message, f"{accepted}: {message}"
    return None


@pytest.mark.parametrize(
    ("name", "seed"), [(name, seed) for name, seeds in SEEDS.items() for seed in seeds]
)
def test_random_schedules(name: str, seed: int) -> None:
    case = CASES[name]
    rng = random.Random(seed)
    args = case.args(rng.choice([None, None, 0, 1, 2, 5]))
    want = _run(case.build(), args, None, 1)
    comp, accepted = _fuzz(case, rng)
    kernel = _compiled(comp, accepted)
    if kernel is None:
        return
    taken = {a.name for a in kernel.arguments}  # less a data space stored in the function
    given = {k: v for k, v in args.items() if k in taken}
    adaptive = threads.set_adaptive(False)
    try:
        runs = [_run(comp, given, None, 1), *(_run(comp, given, kernel, t) for t in (1, 2))]
    finally:
        threads.set_adaptive(adaptive)
    reordered = any(c[1] == "parallelize" and c[2][1] for c in accepted)
    for got in runs:
        for out in (o for o in case.outputs if o in got):
            if reordered:
                np.testing.assert_allclose(got[out], want[out], rtol=1e-12, err_msg=out)
            else:
                np.testing.assert_array_equal(got[out], want[out], err_msg=f"{accepted}")


# ---------------------------------------------------------------- what the fuzzer found


def _ilu0_reference(n: int) -> Args:
    args = _ilu0(n)
    kernels.ilu0_csr().compile()(**args)
    return args


@pytest.mark.parametrize(
    "commands",
    [
        [("shift", ("i", -1))],
        [("shift", ("i", 2)), ("tile", ("i", "k", 3, 5, "i0", "k0", "i1", "k1"))],
        [("reverse", ("i",))],  # refused: rows depend on earlier rows
        [("shift", ("k", 1))],
    ],
)
def test_ilu0_row_loop_transformed_around_its_merge(commands: list[Command]) -> None:
    """ILU(0)'s ``s1`` runs its ``j1, j2`` loops as a merge (co-iteration); a shift, tile or
    reverse of the loops around it renamed the schedule's input ``i`` to ``i_``, which the
    merge's outer schedule dropped, so codegen refused the legal schedules as a "scanner
    bug" (the loops read ``rowptr(i_ - 1)``) or as a schedule that "does not determine the
    UF arguments"; now they compile and compute ILU(0)."""
    comp = kernels.ilu0_csr()
    for kind, args in commands:
        for s in ("s0", "s1"):
            getattr(comp.stmt(s), kind)(*args)
    try:
        comp.check_legality()
    except IllegalScheduleError:
        assert commands[0][0] == "reverse"
        return
    assert "coiterate" in comp.loop_structure()
    kernel = comp.compile()
    for n in (0, 1, 2, 9, 14):
        got, want = _ilu0(n), _ilu0_reference(n)
        kernel(**got)
        np.testing.assert_array_equal(got["A"], want["A"])
        again = _ilu0(n)
        comp.interpret(**again)
        np.testing.assert_array_equal(again["A"], want["A"])


def test_compute_at_renames_a_loop_the_producer_already_has() -> None:
    """Both jacobi-1d statements split ``t`` into ``o2, p2``; computing ``s1`` at ``s0``'s
    ``o2`` gave ``s1`` a second loop ``o2`` and failed with "spf bug: output 1 ... should be
    the loop 'o2'"; the joined loop is now ``o2_``."""
    case = CASES["jacobi-1d"]
    comp = case.build()
    for s in ("s0", "s1"):
        comp.stmt(s).split("t", 1, "o2", "p2")
    comp.stmt("s1").compute_at("s0", "o2")
    assert comp.stmt("s1").loops == ("o2_", "o2", "p2", "i")
    kernel = comp.compile()
    for size in (None, 0, 1, 2, 6):
        args = case.args(size)
        want = _run(case.build(), args, None, 1)
        got = _run(comp, args, kernel, 1)
        for out in case.outputs:
            np.testing.assert_array_equal(got[out], want[out])


def test_compute_at_on_a_split_that_breaks_a_dependence_is_refused_clearly() -> None:
    case = CASES["jacobi-1d"]
    comp = case.build()
    for s in ("s0", "s1"):
        comp.stmt(s).split("t", 2, "o2", "p2")
    before = comp.to_json()
    with pytest.raises(IllegalScheduleError, match="anti dependence on 'A' from s0 to s1"):
        comp.stmt("s1").compute_at("s0", "o2")
    assert comp.to_json() == before


@pytest.mark.parametrize(
    "schedule",
    [
        "{[i,j] -> [0, i, 0, j, 0] : j < 4; [i,j] -> [0, i, 1, j, 0] : j >= 4}",
        "{[i,j] -> [0, i, 0, j, 0] : i < 4; [i,j] -> [1, i, 0, j, 0] : i >= 4}",
        "{[i,j] -> [0, i, 0, j, 0] : j < 4; [i,j] -> [0, i, 0, j + 100, 0] : j >= 4}",
    ],
)
def test_piecewise_schedule_is_refused_as_such(schedule: str) -> None:
    """A schedule of pieces with different expressions was refused as a "scanner bug ...
    report the schedule to spf's maintainers" (or as not invertible); it is a schedule
    codegen does not take, and the message says so and what to do."""
    comp = _wave()
    comp.stmt(0).set_schedule(schedule)
    with pytest.raises(CodegenError, match="not one function of its iterators") as err:
        comp.codegen()
    assert "bug" not in str(err.value)
    assert "one statement per piece" in str(err.value)


def test_piecewise_schedule_with_one_expression_still_compiles() -> None:
    comp = _wave()
    comp.stmt(0).set_schedule(
        "{[i,j] -> [0, i, 0, j, 0] : j < 4; [i,j] -> [0, i, 0, j, 0] : 4 <= j}"
    )
    args = _wave_args(7)
    want = _run(_wave(), args, None, 1)
    got = _run(comp, args, comp.compile(), 1)
    np.testing.assert_array_equal(got["A"], want["A"])


@pytest.mark.parametrize(
    "schedule",
    ["{[i,j] -> [0, i, 0, f(j), 0]}", "{[i,j] -> [0, i, 0, j, 0, f(j), 0]}"],
)
def test_set_schedule_refuses_an_undeclared_uf(schedule: str) -> None:
    """With no UF declared, ``f(j)`` in a schedule was taken: the first schedule then
    failed in codegen with "does not determine the UF arguments", the second compiled
    with ``f`` silently dropped."""
    comp = _wave()
    before = comp.to_json()
    with pytest.raises(UndeclaredError, match="unknown UF 'f'"):
        comp.stmt(0).set_schedule(schedule)
    assert comp.to_json() == before


def test_interpret_of_tiled_sparse_rows_scans_the_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    """``interpret`` enumerated each statement's instances time first: tiling ILU(0)'s
    ``i, k`` puts ``floor(k/5)`` before ``k``, whose bounds need the row a later point loop
    fixes, so the tile loop ran over the UF values' whole range (9 rows: minutes). The
    instances are now enumerated iterators first (the domain's points, then one time
    each); counted here in isl scan steps, not seconds."""
    from spf.sets import concrete

    steps = 0
    walk = concrete._Scanner._walk

    def counted(self: Any, *args: Any) -> None:
        nonlocal steps
        steps += 1
        if steps > 20_000:
            raise AssertionError("interpret scans far more points than the kernel has")
        walk(self, *args)

    comp = kernels.ilu0_csr()
    for s in ("s0", "s1"):
        comp.stmt(s).tile("i", "k", 3, 5, "i0", "k0", "i1", "k1")
    args, want = _ilu0(9), _ilu0_reference(9)
    monkeypatch.setattr(concrete._Scanner, "_walk", counted)
    comp.interpret(**args)
    np.testing.assert_array_equal(args["A"], want["A"])


def _read_then_update() -> spf.Computation:
    comp = spf.Computation("read_then_update")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_data_space("B", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$B$(i) = $A$(i) * 2;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    comp.add_stmt(spf.Stmt("$A$(i) += 1;", "{[i]: 0 <= i < N}", "{[i] -> [0, i, 1]}"))
    return comp


@pytest.mark.parametrize("name", ["read_then_update", "gramschmidt"])
def test_privatize_copies_no_data_space_the_loop_also_reads(name: str) -> None:
    """CRITICAL before: ``parallelize(loop, reduction="privatize")`` on a loop that carries
    no dependence (legal) gave every thread but the first a zero-filled copy of each data
    space a statement of the loop accumulates into, even one another statement of the loop
    reads: that reader saw zeros. gramschmidt's j loop (``R(k, j) += Q(i, k) * A(i, j)``
    beside ``A(i, j) = A(i, j) - Q(i, k) * R(k, j)``) computed wrong R, Q and A at 2
    threads, silently. Such a data space is no longer copied (no dependence on it crosses
    the loop's iterations, or the check would have refused the loop)."""
    if name == "gramschmidt":
        case = _poly(name)
        comp, stmts, loop = case.build(), ("s4", "s5", "s6"), "j"
    else:
        case = Case(
            _read_then_update, lambda n: {"A": np.arange(9.0), "B": np.zeros(9)}, ("A", "B")
        )
        comp, stmts, loop = case.build(), ("s0", "s1"), "i"
    for s in stmts:
        comp.stmt(s).parallelize(loop, reduction="privatize")
    comp.check_legality()
    kernel = comp.compile()
    args = case.args(None)
    want = _run(case.build(), args, None, 1)
    adaptive = threads.set_adaptive(False)
    try:
        runs = [_run(comp, args, kernel, t) for t in (1, 2)]
    finally:
        threads.set_adaptive(adaptive)
    for got in runs:
        for out in case.outputs:
            np.testing.assert_array_equal(got[out], want[out], err_msg=out)


def test_tile_of_a_split_inner_loop_by_a_factor_that_does_not_divide_is_refused_clearly() -> None:
    """Split j by 4, tile (outer, inner) by 2 x 3: a function of j, but not one codegen can
    write as one expression per position; refused before as a "scanner bug" (the
    self-check's "not a function of its iterators"), now with what to do (a known
    limitation, docs/scheduling.md)."""
    comp = _wave()
    comp.stmt(0).split("j", 4, "o0", "p0").tile("o0", "p0", 2, 3, "a1", "b1", "c1", "d1")
    comp.check_legality()
    with pytest.raises(CodegenError, match="use factors that divide") as err:
        comp.codegen()
    assert "bug" not in str(err.value)
