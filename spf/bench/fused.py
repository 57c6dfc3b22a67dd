"""A lower solve followed by ``y = A·x`` with its solution, fused into one wavefront loop,
against the two kernels run one after the other (API.md section 18).

On 2-D Poisson (the ``sptrsv`` section's grid), ``x = (D + L)⁻¹·b`` with the lower part of
``A`` (``spf.kernels.trsv_diag_csr``) then ``y = A·x`` (``spf.kernels.spmv_csr``):

* ``separate serial``: both spf kernels, serially, one after the other;
* ``separate wavefront + parallel SpMV``: the solve as a wavefront (its executor forced:
  coarse levels or levels, whichever is estimated faster)
  then the SpMV with its row loop parallel, at each thread count;
* ``fused wavefront``: ``append_computation`` of both, ``fuse`` of their row loops (illegal
  without the run-time order: row ``i`` of the SpMV reads ``x`` of later rows), one
  ``wavefront`` whose inspector levels the nodes of both kernels; its plans ``coarse``
  (coarse levels, the SpMV's rows free to balance the parts), ``levels`` and the default
  (``auto``), planned for the largest thread count;
* ``hand C fused in order``, ``hand C fused parts`` and ``hand C fused parts
  interleaved``: the machine's ceiling, written by hand (:mod:`spf.bench.fused_hand`);
* ``MKL IE trsv + mv`` when MKL is installed (``pip install mkl``).

Then the same pair on the square SuiteSparse matrices of ``shared/data/suitesparse`` (their
pattern with the diagonal, random values, the diagonal made dominant): the fused wavefront
(default plan) at the largest thread count, the two serial spf kernels, and MKL's pair at
each thread count (compared at its best).

The default plan's fused call is timed both as a keyword call (``fused(x=x, ..., plan=plan,
check=False)``) and prepared (``fused.prepare(["x", "y", "b"], plan=plan, **csr)``, then
``call(x, y, b)``: plan, index arrays and values bound once, as MKL's handle binds them;
MKL's pair is called through its C functions with their arguments converted once).

Every variant is first checked bitwise (MKL: to 1e-10) against the serial pair. Targets:
the fused wavefront (default plan) >= 1.3x the separate wavefront + parallel SpMV at the
largest thread count, and the fused wavefront >= 1.5x MKL's pair, geomean over Poisson and
the SuiteSparse matrices (a line for the keyword call and one for the prepared call). A
fused call whose OpenMP team is one thread (``--threads 1``, or a busy machine's cap), or
whose plan is ``"serial"``, runs the fused loop in order on one thread (each product row
right after the solve row that completes it).
"""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

import spf
import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.bench.fused_hand import hand_fused
from spf.bench.mkl import MklCsr, MklTrsv, load_mkl
from spf.bench.teams import Teams

sp: Any = importlib.import_module("scipy.sparse")  # no type stubs installed for scipy


def fused_solve_mv(sums: tuple[int, int] | None = None) -> spf.Computation:
    """The fused computation: the lower solve and the SpMV in one wavefront loop; with
    ``sums``, both row loops accumulate into partial sums (``partial_sums(loop, *sums)``)."""
    comp = spf.Computation("solve_mv")
    for name in ("x", "b", "y"):
        comp.add_data_space(name, "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.append_computation(
        spf.kernels.trsv_diag_csr(), "{[]}", "{[] -> [0]}", {"x": "x", "A": "A", "b": "b"}
    )
    comp.append_computation(
        spf.kernels.spmv_csr(), "{[]}", "{[] -> [1]}", {"y": "y", "A": "A", "x": "x"}
    )
    comp.fuse("s2", "s3", 1)  # the SpMV's row loop joins the solve's
    if sums is not None:
        comp.stmt("s1").partial_sums("_i0_k", *sums)
        comp.stmt("s3").partial_sums("_i1_k", *sums)
    comp.wavefront("_i0_i")
    return comp


SUMS = (4, 16)
"""``partial_sums(loop, count, min_trip)`` of the fused pair's opt-in rows (the solve's and
the product's row loops): four sums on rows of 16 entries or more."""


def summed_pair(cache: str) -> tuple[Any, Any, Any]:
    """The fused pair with :data:`SUMS` and its two serial kernels with the same sums (the
    reference its bits are checked against)."""
    solve = spf.kernels.trsv_diag_csr()
    solve.stmt("s1").partial_sums("k", *SUMS)
    mv = spf.kernels.spmv_csr()
    mv.stmt(0).partial_sums("k", *SUMS)
    fused = fused_solve_mv(SUMS)
    return (fused.compile(cache_dir=cache), solve.compile(cache_dir=cache),
            mv.compile(cache_dir=cache))  # fmt: skip


def run(ctx: Context) -> Section:
    sec = Section("fused")
    g = ctx.cfg.trsv_grid
    a = sp.csr_array(spf.sparse.poisson2d(g))
    args = spf.sparse.gauss_seidel_args(a)
    csr = {k: args[k] for k in ("rowptr", "col", "A")}
    n = int(args["N"])
    cache = str(ctx.work / "kernels")
    solve = spf.kernels.trsv_diag_csr().compile(cache_dir=cache)
    mv = spf.kernels.spmv_csr().compile(cache_dir=cache)
    wf = spf.kernels.trsv_diag_csr()
    wf.wavefront("i")
    solve_wf: Any = wf.compile(cache_dir=cache)
    pmv = spf.kernels.spmv_csr()
    pmv.stmts[0].parallelize("i")
    mv_par = pmv.compile(cache_dir=cache)
    fused: Any = fused_solve_mv().compile(cache_dir=cache)
    summed = summed_pair(cache)
    b = np.random.default_rng(5).uniform(-1.0, 1.0, n)
    want_x, want_y = np.zeros(n), np.zeros(n)
    solve(x=want_x, b=b, check=False, **args)
    mv(y=want_y, x=want_x, check=False, **csr)
    index = {k: v for k, v in args.items() if k != "A"}
    wf_plan = solve_wf.inspect(check=False, strategy="wavefront", threads=max(ctx.threads), **index)
    t2 = max(ctx.threads)
    plans = {
        s: fused.inspect(check=False, strategy=s, threads=t2, **index)
        for s in ("coarse", "levels", "auto")
    }

    def pair(sv: Any, m: Any, plan: Any = None) -> Any:
        x, y = np.zeros(n), np.zeros(n)
        extra = {} if plan is None else {"plan": plan}

        def call() -> None:
            y[:] = 0.0
            sv(x=x, b=b, check=False, **extra, **args)
            m(y=y, x=x, check=False, **csr)

        return call, x, y

    def fused_call(plan: Any) -> Any:
        x, y = np.zeros(n), np.zeros(n)

        def call() -> None:
            y[:] = 0.0
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)

        return call, x, y

    def prepared_call(plan: Any) -> Any:
        x, y = np.zeros(n), np.zeros(n)
        prep = fused.prepare(["x", "y", "b"], plan=plan, check=False, **args)

        def call() -> None:
            y[:] = 0.0
            prep(x, y, b)

        return call, x, y

    variants: list[Variant] = []
    teams = Teams()
    made = [("separate serial", 1, *pair(solve, mv), ())]
    for t in ctx.threads:
        made.append(("separate wavefront + parallel SpMV", t, *pair(solve_wf, mv_par, wf_plan),
                     (solve_wf, mv_par)))  # fmt: skip
        made += [(f"fused wavefront {s}", t, *fused_call(p), (fused,)) for s, p in plans.items()]
    made.append((PREPARED, t2, *prepared_call(plans["auto"]), (fused,)))
    for code, t, call, x, y, kernels in made:
        call()
        if not (np.array_equal(x, want_x) and np.array_equal(y, want_y)):
            raise SystemExit(f"fused: {code} differs from the two serial kernels")
        variants.append(teams.watch(code, t, call, *kernels))
    variants.append(_summed_call(summed, args, b, (SUMMED, t2, teams)))
    variants += hand_fused(ctx, plans["coarse"], args, b, (want_x, want_y))
    variants += _mkl(ctx, a, b, want_y)
    ctx.log(f"fused: N = {n:,}")
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    ms = {(code, t): 1e3 * median(times[code, t]) for code, t, _ in variants}
    base = ms["separate serial", 1]
    fp = plans["coarse"]
    sec.line(
        f"### Lower solve then y = A·x, 2-D Poisson {g}x{g}: N = {n:,}, nnz = {args['NNZ']:,}; "
        f"fused: {fp.levels:,} levels, {fp.coarse_levels:,} coarse levels over {2 * n:,} "
        f"nodes (the solve's alone: {wf_plan.levels:,} levels, run as "
        f"{wf_plan.strategy!r}); default plan strategy {plans['auto'].strategy!r}\n\n"
        f"{load_note(load)}\n"
    )
    sec.table(
        ["code", "threads (as run)", "median ms", "speed-up over separate serial"],
        [[c, teams.label(c, t), f"{v:.3f}", f"{base / v:.2f}x"] for (c, t), v in ms.items()],
    )
    r = ms["separate wavefront + parallel SpMV", t2] / ms["fused wavefront auto", t2]
    notes = (
        teams.note(c, t2) for c in ("separate wavefront + parallel SpMV", "fused wavefront auto")
    )
    sec.target(
        f"fused wavefront (default plan) >= 1.3x separate wavefront + parallel SpMV ({t2} threads)",
        f"{r:.2f}x",
        r >= 1.3,
        "; ".join(x for x in notes if x),
    )
    pairs = _suitesparse(ctx, sec, (fused, solve, mv), summed, teams)
    ratios, ready = _over_mkl(sec, ms, t2, pairs, teams)
    sec.data.update(
        fused_over_mkl=ratios,
        prepared_over_mkl=ready,
        median_ms={f"{c} ({t})": v for (c, t), v in ms.items()},
        load=load,
        N=n,
        fused_levels=fp.levels,
        fused_coarse_levels=fp.coarse_levels,
        solve_levels=wf_plan.levels,
        threads_as_run=teams.labels(),
    )
    return sec


SUITESPARSE = Path(__file__).resolve().parents[3] / "shared" / "data" / "suitesparse"
"""The shared SuiteSparse matrices (next to the repository, as the tests find them)."""


def dominant(a: Any, seed: int) -> Any:
    """``a``'s pattern with its diagonal, random values in (-1, 1) off the diagonal and a
    diagonal of 1 + the row's absolute sum (so every solve is well conditioned)."""
    pattern = sp.csr_array(abs(a) + sp.eye_array(a.shape[0], format="csr"))
    pattern.sum_duplicates()
    rng = np.random.default_rng(seed)
    m = sp.csr_array((rng.uniform(-1.0, 1.0, pattern.nnz), pattern.indices, pattern.indptr),
                     shape=pattern.shape)  # fmt: skip
    m.setdiag(0.0)
    m.eliminate_zeros()
    out = sp.csr_array(m + sp.diags_array(1.0 + abs(m).sum(axis=1), format="csr"))
    out.sort_indices()
    return out


def _summed_call(
    summed: tuple[Any, Any, Any],
    args: dict[str, Any],
    b: np.ndarray,
    run: tuple[str, int, Teams],
) -> Variant:
    """The keyword call of the fused pair with :data:`SUMS` on its default plan, timed as
    ``code`` at ``t2`` threads (``run``), its bits checked against its two serial kernels
    (the same sums)."""
    code, t2, teams = run
    fused, solve, mv = summed
    n = len(b)
    want_x, want_y = np.zeros(n), np.zeros(n)
    solve(x=want_x, b=b, check=False, **args)
    mv(y=want_y, x=want_x, check=False, **{k: args[k] for k in ("rowptr", "col", "A")})
    plan = fused.inspect(check=False, threads=t2, **{k: v for k, v in args.items() if k != "A"})
    x, y = np.zeros(n), np.zeros(n)

    def call() -> None:
        y[:] = 0.0
        fused(x=x, y=y, b=b, plan=plan, check=False, **args)

    call()
    if not (np.array_equal(x, want_x) and np.array_equal(y, want_y)):
        raise SystemExit("fused: the pair with partial sums differs from its serial kernels")
    return teams.watch(code, t2, call, fused)


def _suitesparse(
    ctx: Context,
    sec: Section,
    kernels: tuple[Any, Any, Any],
    summed: tuple[Any, Any, Any],
    teams: Teams,
) -> dict[str, tuple[float, float, float]]:
    """The pair on each square SuiteSparse matrix: the fused wavefront (default plan; by
    keyword and prepared, ``kernel.prepare``; and with :data:`SUMS`, ``summed``), the two
    serial kernels and MKL's pair at the largest thread count, timed interleaved; the table
    (the fused column's threads as they ran: ``teams``), and MKL's time over the fused
    keyword, prepared and partial sums calls' per matrix (none without MKL)."""
    fused, solve, mv = kernels
    if not SUITESPARSE.is_dir():
        sec.line(f"SuiteSparse matrices: not found at {SUITESPARSE}\n")
        return {}
    t2 = max(ctx.threads)
    variants: list[Variant] = []
    names: list[tuple[str, int, int]] = []
    for path in sorted(SUITESPARSE.glob("*.mtx")):
        raw = spf.sparse.read_matrix_market(path)
        if raw.shape[0] != raw.shape[1] or raw.shape[0] < 100:
            continue
        a = dominant(raw, 7)
        name, n = path.stem, a.shape[0]
        args = spf.sparse.gauss_seidel_args(a)
        csr = {k: args[k] for k in ("rowptr", "col", "A")}
        b = np.random.default_rng(n).uniform(-1.0, 1.0, n)
        want_x, want_y = np.zeros(n), np.zeros(n)
        solve(x=want_x, b=b, check=False, **args)
        mv(y=want_y, x=want_x, check=False, **csr)
        index = {k: v for k, v in args.items() if k != "A"}
        plan = fused.inspect(check=False, threads=t2, **index)
        x, y = np.zeros(n), np.zeros(n)

        def call(args: Any = args, plan: Any = plan, x: Any = x, y: Any = y, b: Any = b) -> None:
            y[:] = 0.0
            fused(x=x, y=y, b=b, plan=plan, check=False, **args)

        def pair(args: Any = args, csr: Any = csr, x: Any = x, y: Any = y, b: Any = b) -> None:
            y[:] = 0.0
            solve(x=x, b=b, check=False, **args)
            mv(y=y, x=x, check=False, **csr)

        ready = fused.prepare(["x", "y", "b"], plan=plan, check=False, **args)

        def prepared(ready: Any = ready, x: Any = x, y: Any = y, b: Any = b) -> None:
            y[:] = 0.0
            ready(x, y, b)

        for code, t, fn, ks in (
            ("fused", t2, call, (fused,)),
            ("fused prepared", t2, prepared, (fused,)),
            ("separate serial", 1, pair, ()),
        ):
            ctx.rt.set_threads(t)
            fn()
            if not (np.array_equal(x, want_x) and np.array_equal(y, want_y)):
                raise SystemExit(f"fused: {code} differs from the two serial kernels on {name}")
            variants.append(teams.watch(f"{name}: {code}", t, fn, *ks))
        variants.append(_summed_call(summed, args, b, (f"{name}: {SUMMED}", t2, teams)))
        variants += [(f"{name}: {c}", t, f) for c, t, f in _mkl(ctx, a, b, want_y)]
        names.append((f"{name} ({plan.strategy})", n, a.nnz))
    ctx.log(f"fused: {len(names)} SuiteSparse matrices")
    times, load = measure(ctx, variants, ctx.cfg.trsv_rounds, warmup=1)
    ms = {(code, t): 1e3 * median(times[code, t]) for code, t, _ in variants}
    sec.line(f"### The same pair on SuiteSparse matrices ({t2} threads)\n\n{load_note(load)}\n")
    rows, ratios = [], {}
    for label, n, nnz in names:
        name = label.split(" ")[0]
        base = ms[f"{name}: separate serial", 1]
        got = ms[f"{name}: fused", t2]
        pre = ms[f"{name}: fused prepared", t2]
        add = ms[f"{name}: {SUMMED}", t2]
        theirs = _best(ms, f"{name}: MKL IE trsv + mv")
        ran = teams.label(f"{name}: fused", t2)
        label = label if ran == str(t2) else f"{label}, {ran} threads"  # the cap engaged
        if np.isfinite(theirs):
            ratios[name] = (theirs / got, theirs / pre, theirs / add)
        rows.append([label, f"{n:,}", f"{nnz:,}", f"{base:.4f}", f"{got:.4f}", f"{pre:.4f}",
                     f"{add:.4f}", f"{base / got:.2f}x", f"{theirs:.4f}", f"{theirs / got:.2f}x",
                     f"{theirs / pre:.2f}x", f"{theirs / add:.2f}x"])  # fmt: skip
    sec.table(
        ["matrix (default plan)", "rows", "nnz", "separate serial ms", "fused ms",
         "fused prepared ms", "fused partial sums ms", "fused speed-up",
         "MKL pair ms (best threads)", "MKL / fused", "MKL / fused prepared",
         "MKL / fused partial sums"],
        rows,
    )  # fmt: skip
    sec.line(
        f"fused partial sums: the same pair with `partial_sums(loop, {SUMS[0]}, {SUMS[1]})` on "
        "the solve's and the product's row loops (opt-in: it reassociates each long row's sum, "
        "as MKL's vector loops do; its bits are checked against the serial kernels with the "
        "same sums)\n"
    )
    why = [f"{label.split(' ')[0]}: {w}" for label, _, _ in names if "(serial)" not in label
           and (w := teams.why(f"{label.split(' ')[0]}: fused", t2))]  # fmt: skip
    if why:  # a serial plan runs one thread whatever the cap
        sec.line("Fused calls the busy-machine cap ran on fewer threads: " + "; ".join(why) + "\n")
    return ratios


def _over_mkl(
    sec: Section,
    ms: dict[tuple[str, int], float],
    t2: int,
    suitesparse: dict[str, tuple[float, float, float]],
    teams: Teams,
) -> tuple[dict[str, float], dict[str, float]]:
    """MKL's pair's time over the fused keyword call's, over the prepared call's and over
    the keyword call of the pair with :data:`SUMS`, on Poisson (``ms``) and each SuiteSparse
    matrix, with a target line for the geomean of each."""
    mkl = _best(ms, "MKL IE trsv + mv")
    ratios = {"poisson": mkl / ms["fused wavefront auto", t2]}
    ready = {"poisson": mkl / ms[PREPARED, t2]}
    summed = {"poisson": mkl / ms[SUMMED, t2]}
    for name, (kw, pre, add) in suitesparse.items():
        ratios[name], ready[name], summed[name] = kw, pre, add
    sums = f"partial_sums(loop, {SUMS[0]}, {SUMS[1]}) on both row loops, opt-in, keyword call"
    calls = (
        (ratios, "keyword call", "fused wavefront auto"),
        (ready, "prepared call, kernel.prepare", PREPARED),
        (summed, sums, SUMMED),
    )
    for got, how, code in calls:
        if not got or not all(np.isfinite(list(got.values()))):
            continue
        geo = float(np.exp(np.mean(np.log(list(got.values())))))
        each = ", ".join(f"{k} {v:.2f}x" for k, v in got.items())
        sec.target(
            f"fused wavefront (default plan, {t2} threads, {how}) >= 1.5x MKL IE trsv + mv "
            f"(its best thread count), geomean over Poisson and {len(got) - 1} SuiteSparse "
            "matrices",
            f"{geo:.2f}x",
            geo >= 1.5,
            "; ".join(x for x in (each, teams.note(code, t2)) if x),
        )
    return ratios, ready


def _best(ms: dict[tuple[str, int], float], code: str) -> float:
    """The least median of ``code`` over its thread counts (NaN when it did not run): MKL's
    pair is compared at its best thread count (on a loaded machine its 2-thread calls can
    be far slower than its serial ones)."""
    got = [v for (c, _), v in ms.items() if c == code]
    return min(got) if got else float("nan")


def _mkl(ctx: Context, a: Any, b: np.ndarray, want_y: np.ndarray) -> list[Variant]:
    """MKL IE's trsv on the lower triangle then its mv on ``A``, when MKL is installed, at
    each thread count: each C function with its arguments converted once
    (:meth:`~spf.bench.mkl.MklCsr.bound_mv`; converting ``x.ctypes.data`` and the others
    on every call cost the pair ~20 us a call on the small matrices, loaded machine), and
    run past its first calls (:meth:`~spf.bench.mkl.MklCsr.warm_up`) before it is timed."""
    mkl, _ = load_mkl()
    if mkl is None:
        return []
    if mkl.MKL_Set_Num_Threads not in ctx.rt.setters:
        ctx.rt.setters.append(mkl.MKL_Set_Num_Threads)
    lower = sp.csr_array(sp.tril(a, format="csr"))
    lower.sort_indices()
    out: list[Variant] = []
    for t in ctx.threads:
        ctx.rt.set_threads(t)
        trsv = MklTrsv(mkl, spf.sparse.sptrsv_args(lower))
        mv = MklCsr(mkl, spf.sparse.csr_args(a))
        x, y = np.zeros(a.shape[0]), np.zeros(a.shape[0])
        solve, product = trsv.bound_solve(b, x), mv.bound_mv(x, y)

        def call(
            solve: Any = solve, product: Any = product, y: Any = y, keep: Any = (trsv, mv, x)
        ) -> None:  # ``keep``: what the bound calls point into, alive while they are
            if solve():
                raise SystemExit("fused: MKL's trsv failed")
            y[:] = 0.0
            if product():
                raise SystemExit("fused: MKL's mv failed")

        start = time.perf_counter()
        for _ in range(WARM_CALLS):  # MKL's first calls on a handle can be slow
            call()
            if time.perf_counter() - start > WARM_S:
                break
        if not np.allclose(y, want_y, rtol=1e-10, atol=1e-10):
            raise SystemExit("fused: MKL's trsv + mv gives a wrong y")
        out.append(("MKL IE trsv + mv", t, call))
    return out


SUMMED = "fused wavefront auto, partial sums"
"""The default plan's keyword call of the fused pair with :data:`SUMS`."""

PREPARED = "fused wavefront auto, prepared"
"""The default plan's fused call through ``kernel.prepare`` (plan, index arrays and values
bound once, as MKL's handle binds them)."""

WARM_CALLS, WARM_S = 1000, 0.25
"""MKL's pair is called this many times, or for this long, before it is timed (the hint's
count: :meth:`spf.bench.mkl.MklCsr.warm_up`)."""
