"""``spf bench --only scale``, part ``checks``: a ``check=True`` call against ``check=False``
(API.md §16: at most 1.2x on every ``spf.kernels`` kernel and every built-in format's SpMV).

Matrices: every ``.mtx`` of the SuiteSparse folder (``$SPF_SUITESPARSE_DIR``, else
``shared/data/suitesparse`` beside the checkout) and two synthetic ones of 60,000 rows of 1 to
5 entries with one dense row of 10,000 and of 50,000 entries (``--quick``: karate and a
3,000-row matrix with a dense row of 2,000 entries, four kernels, int32 only). Each kernel is
compiled with ``index_dtype`` int32 and int64 and called with arrays of that type:

* ``spmv_csr``, ``spmtv_csr``, ``spmv_coo``, ``spmv_csc``, ``spmv_bcsr(2, 2)``, ``spmm_csr``
  (``B`` with 4 columns), ``spgemm_csr`` (``A·A``, ``A·A^T`` when not square): the matrix;
* ``sptrsv_csr``: its lower triangle with a dominant diagonal; ``gauss_seidel_csr`` and
  ``ilu0_csr``: its leading square part plus a dominant diagonal (``ilu0`` gets its values
  back before every call, in both variants);
* ``spmv(F)`` for ``F`` in COO, CSR, CSC, DIA, ELL, BCSR(2, 2), SELL(8, 1), SELL(8, 32),
  BDIA(4) (``spf.sparse.format_args``);
* ``dense_mv``, ``gemm``, ``blur2d``, ``jacobi2d`` (no index arrays: only the binding checks)
  once, on fixed sizes;
* ``symmetric SpMV (user)``: issue 28's example of a computation of one's own, ``y += A·x``
  from the lower triangle of ``A + A^T`` in two statements (the row, and the mirrored
  entries left of the diagonal) with one assumption, that every stored column is at most
  its row.

A kernel is left out on a matrix whose storage (padding included) or work exceeds
:data:`CAP` (DIA and ELL of ``arrow``, ILU(0) and SpGEMM of matrices with dense rows and
columns); the tables say so. All calls are timed in one interleaved run (every case's two
variants once per round, shuffled), one thread, in batches of calls of about
:data:`BATCH_S` each (a call of a few microseconds timed alone is mostly the clock's and the
scheduler's noise) on the calling thread's CPU time (``time.thread_time``: on a shared
machine, the time other processes take is not counted); the ratio is the median
``check=True`` batch over the median ``check=False`` batch, and a cell shows the larger of
int32 and int64. Every
call of a case passes the same arrays: a kernel that remembers the index-array contents its
checked calls verified (:mod:`spf.runtime.known`: facts over index arrays, or any kernel whose
checked function hashes them itself; each size, or each look for one that hashes in C, where
that measured cheaper than checking) checks them on the first call and runs its unchecked
loops, after the hashes and the overlap test, on the timed ones; the table of ``check_cost``
says which facts are remembered.

Before any call is timed, each case's checked variant runs :data:`SETTLE` calls
(:func:`_settle`): the first calls on remembered contents of each size (of each look, for a
kernel that hashes in C: every case its own) are the trials of :mod:`spf.runtime.known`, which
run the hashed way and the checked loops in turn until one is
kept, a one-time cost like the first call's checks. Without that step a case of a few calls a
batch (a millisecond a call and more: Gauss-Seidel and SpTRSV on the dense-row matrices,
``spmm_csr`` on ``pushpull``) ran its trials in its first timed batches, on the checked side
only: those batches held calls of the way its trials then dropped, the slower one.

``spmv(SELL8_32)`` int64 (1.17-1.23x on ``arrow``, ``bayer10``, ``zenios`` in a quiet run)
is what it costs to read the index arrays once more before the loops. Its checked calls on
known contents take the hashed way (all three looks' trials keep it): the hash of ``cl``,
``cs``, ``perm`` and ``scol`` (about 9 bytes a stored slot in int64; ``arrow``'s dense row
pads its slice to 464,992 slots for 139,498 entries, 4.2 MB), then the unchecked loops.
Measured (shared 2-core machine, load average ~3; thread CPU time, medians of 25
interleaved rounds of ~10 ms batches, C functions called with the arguments bound once):
the hash alone is 0.15-0.17x the unchecked loops in int64 (0.08-0.11x in int32) and the
hashed way 1.15-1.18x (1.05-1.14x); a plain range pass over ``scol`` alone in front of the
loops, the least any check reading it first can cost, 1.17-1.20x (1.12-1.23x); the checked
loops 1.28-1.37x (1.37-1.41x) and their per-entry ``scol`` test alone 1.22-1.28x. The Python
of a checked and an unchecked call is the same (``karate``: 7.9-8.8 us each, within 0.15 us).
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import spf.kernels
import spf.sparse
from spf.bench.common import Context, Section, Variant, load_note, measure, median
from spf.formats import BCSR, BDIA, COO, CSC, CSR, DIA, ELL, SELL, Format
from spf.runtime import known

sp: Any = importlib.import_module("scipy.sparse")

TARGET = 1.2
"""API.md §16: a checked call costs at most this many unchecked ones."""
CAP = 20_000_000
"""Stored entries (padding included) or multiply-adds above which a case is left out."""

BATCH_S = 0.002
"""Seconds of ``check=False`` calls a timed batch holds (one call at least)."""

SETTLE = 2 * (known.WARMUP + 4 * known.TRIALS)
"""Checked calls each case runs before the timing (:func:`_settle`): twice the calls on
known contents whose trials :mod:`spf.runtime.known` takes at most (its first
:data:`~spf.runtime.known.WARMUP`, then pairs of calls, one counted each, until
:data:`~spf.runtime.known.TRIALS` have counted each way)."""

Call = Callable[[bool], object]
"""One call of a case with ``check=`` the argument."""


@dataclass(frozen=True)
class Case:
    kernel: str
    matrix: str
    dtype: str
    call: Call


def suitesparse_dir() -> Path | None:
    """The SuiteSparse ``.mtx`` folder, or None."""
    given = os.environ.get("SPF_SUITESPARSE_DIR")
    path = Path(given) if given else Path(spf.__file__).resolve().parents[2] / "shared"
    path = path if given else path / "data" / "suitesparse"
    return path if path.is_dir() else None


def dense_row(rows: int, width: int, seed: int = 0) -> Any:
    """``rows`` rows of 1 to 5 entries at random columns, and row ``rows // 2`` with ``width``
    distinct columns (CSR, sorted)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 6, size=rows)
    r = np.repeat(np.arange(rows), lengths)
    c = rng.integers(0, rows, size=len(r))
    r = np.concatenate([r, np.full(width, rows // 2)])
    c = np.concatenate([c, rng.choice(rows, size=width, replace=False)])
    m = sp.csr_array((rng.random(len(r)) + 0.5, (r, c)), shape=(rows, rows))
    m.sum_duplicates()
    m.sort_indices()
    return m


def matrices(quick: bool) -> list[tuple[str, Any]]:
    """(name, CSR matrix) of every matrix timed."""
    found = suitesparse_dir()
    out: list[tuple[str, Any]] = []
    if found is not None:
        names = ["karate"] if quick else sorted(p.stem for p in found.glob("*.mtx"))
        out += [(n, spf.sparse.read_matrix_market(found / f"{n}.mtx")) for n in names]
    if quick:
        return [*out, ("dense-row 2k", dense_row(3000, 2000))]
    return [
        *out,
        ("dense-row 10k", dense_row(60000, 10000)),
        ("dense-row 50k", dense_row(60000, 50000, 1)),
    ]


# ------------------------------------------------------------------------------- arguments
def _square(m: Any) -> Any:
    """The leading square part plus a diagonal dominating each row (nonzero, stored)."""
    n = min(m.shape)
    s = sp.csr_array(m[:n, :n])
    s = s + sp.diags_array(abs(s).sum(axis=1) + 1.0)
    s = sp.csr_array(s)
    s.sum_duplicates()
    s.sort_indices()
    return s


def _lower(m: Any) -> Any:
    s = _square(m)
    low = sp.csr_array(sp.tril(s))
    low.sort_indices()
    return low


def _vectors(rows: int, cols: int) -> dict[str, Any]:
    rng = np.random.default_rng(1)
    return {"y": np.zeros(rows), "x": rng.random(cols)}


def _spmv(fmt: Format) -> Callable[[Any, str], dict[str, Any] | None]:
    def args(m: Any, dtype: str) -> dict[str, Any] | None:
        if _storage(m, fmt) > CAP:
            return None
        a = spf.sparse.format_args(m, fmt, dtype)
        return {**a, **_vectors(*fmt.extents(a))}

    return args


def _storage(m: Any, fmt: Format) -> int:
    """Entries ``fmt`` stores for ``m``, padding included (an estimate for DIA, ELL)."""
    n = int(m.shape[0])
    if fmt is DIA:
        coo = m.tocoo()
        return len(np.unique(coo.col.astype(np.int64) - coo.row)) * n
    if fmt is ELL:
        return int(np.diff(m.indptr).max(initial=0)) * n
    return int(m.nnz) * 16


def _csr_kernel(name: str) -> Callable[[Any, str], dict[str, Any]]:
    def args(m: Any, dtype: str) -> dict[str, Any]:
        if name == "spmtv_csr":
            return {**spf.sparse.csr_args(m, dtype), **_vectors(m.shape[1], m.shape[0])}
        if name == "spmv_coo":
            return {**spf.sparse.coo_args(m, dtype), **_vectors(*m.shape)}
        if name == "spmv_csc":
            return {**spf.sparse.csc_args(m, dtype), **_vectors(*m.shape)}
        return {**spf.sparse.csr_args(m, dtype), **_vectors(*m.shape)}

    return args


def _bcsr(m: Any, dtype: str) -> dict[str, Any]:
    a = spf.sparse.bcsr_args(m, 2, 2, dtype)
    return {**a, **_vectors(a["NB"] * 2, a["MB"] * 2)}


def _spmm(m: Any, dtype: str) -> dict[str, Any]:
    rng = np.random.default_rng(2)
    return {**spf.sparse.spmm_args(m, dtype), "B": rng.random((m.shape[1], 4)),
            "C": np.zeros((m.shape[0], 4))}  # fmt: skip


def _sptrsv(m: Any, dtype: str) -> dict[str, Any]:
    a = spf.sparse.sptrsv_args(_lower(m), dtype)
    return {**a, "u": np.zeros(a["N"]), "f": np.ones(a["N"])}


def _gauss_seidel(m: Any, dtype: str) -> dict[str, Any]:
    a = spf.sparse.gauss_seidel_args(_square(m), dtype)
    return {**a, "x": np.zeros(a["N"]), "b": np.ones(a["N"])}


def _ilu0(m: Any, dtype: str) -> dict[str, Any] | None:
    s = _square(m)
    if _ilu0_work(s) > CAP:
        return None
    return spf.sparse.ilu0_args(s, dtype)


def _ilu0_work(s: Any) -> int:
    """The (j1, j2) pairs ILU(0)'s inner loops visit: for each entry k left of the diagonal
    of row i, the entries right of k in row i times those right of the diagonal of row
    col(k)."""
    n = s.shape[0]
    rows = np.repeat(np.arange(n), np.diff(s.indptr))
    below = s.indices < rows
    diag = s.indptr[:-1] + np.bincount(rows[below], minlength=n)
    right = s.indptr[1:][rows] - np.arange(len(rows)) - 1
    after = s.indptr[1:] - diag - 1
    return int(np.sum(right[below].astype(np.int64) * after[s.indices[below]]))


def _spgemm(m: Any, dtype: str) -> dict[str, Any] | None:
    b = m if m.shape[0] == m.shape[1] else sp.csr_array(m.T)
    b = sp.csr_array(b)
    b.sort_indices()
    work = int(np.sum(np.diff(b.indptr)[m.indices]))
    if work > CAP:
        return None
    a_, b_ = spf.sparse.csr_args(m, dtype), spf.sparse.csr_args(b, dtype)
    return {"A_rowptr": a_["rowptr"], "A_col": a_["col"], "A": a_["A"],
            "B_rowptr": b_["rowptr"], "B_col": b_["col"], "B": b_["A"], "N": m.shape[0],
            "K": m.shape[1], "M": b.shape[1]}  # fmt: skip


Builder = Callable[[str], Any]
Arguments = Callable[[Any, str], "dict[str, Any] | None"]


def sparse_kernels(quick: bool) -> list[tuple[str, Builder, Arguments]]:
    """(name, build(index_dtype) -> compiled kernel, arguments(matrix, index_dtype))."""
    k = spf.kernels
    out: list[tuple[str, Builder, Arguments]] = [
        ("spmv_csr", lambda d: k.spmv_csr(index_dtype=d).compile(), _csr_kernel("spmv_csr")),
        ("spmv(CSR)", lambda d: k.spmv(CSR, index_dtype=d).compile(), _spmv(CSR)),
        ("sptrsv_csr", lambda d: k.sptrsv_csr(index_dtype=d).compile(), _sptrsv),
        ("gauss_seidel_csr", lambda d: k.gauss_seidel_csr(index_dtype=d).compile(),
         _gauss_seidel),
    ]  # fmt: skip
    if quick:
        return out
    for name in ("spmtv_csr", "spmv_coo", "spmv_csc"):
        out.append((name, _compiler(name), _csr_kernel(name)))
    out += [
        ("spmv_bcsr(2, 2)", lambda d: k.spmv_bcsr(2, 2, index_dtype=d).compile(), _bcsr),
        ("spmm_csr", lambda d: k.spmm_csr(index_dtype=d).compile(), _spmm),
        ("ilu0_csr", lambda d: k.ilu0_csr(index_dtype=d).compile(), _ilu0),
        ("spgemm_csr", lambda d: k.spgemm_csr(index_dtype=d, parallel=False).compile(),
         _spgemm),
    ]  # fmt: skip
    for fmt in (COO, CSC, DIA, ELL, BCSR(2, 2), SELL(8, 1), SELL(8, 32), BDIA(4)):
        out.append((f"spmv({fmt.name})", _format_compiler(fmt), _spmv(fmt)))
    out.append(("symmetric SpMV (user)", symmetric_spmv, _symmetric))
    return out


LOWER = "forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"
"""The assumption of :func:`symmetric_spmv`: the lower triangle is stored."""


def symmetric_spmv(index_dtype: str) -> Any:
    """``y += A·x`` for a symmetric ``A`` stored as its lower triangle (CSR): each entry once
    for its row, and mirrored for its column when left of the diagonal."""
    comp = spf.Computation("symmetric_spmv")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                    monotonic="nondecreasing", dtype=index_dtype)  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}",
                    dtype=index_dtype)  # fmt: skip
    comp.assume(LOWER)
    row = "0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)"
    comp.add_stmt(spf.Stmt("$y$(i) += $A$(k) * $x$(j);", f"{{[i,k,j]: {row}}}",
                           "{[i,k,j] -> [0,i,0,k,0,j,0]}"))  # fmt: skip
    comp.add_stmt(spf.Stmt("$y$(j) += $A$(k) * $x$(i);", f"{{[i,k,j]: {row} && j < i}}",
                           "{[i,k,j] -> [0,i,0,k,1,j,0]}"))  # fmt: skip
    return comp.compile()


def _symmetric(m: Any, dtype: str) -> dict[str, Any]:
    n = min(m.shape)
    s = sp.csr_array(m[:n, :n])
    low = sp.csr_array(sp.tril(s + s.T))
    low.sort_indices()
    a = spf.sparse.csr_args(low, dtype)
    return {"A": a["A"], "rowptr": a["rowptr"], "col": a["col"], "N": n, "NNZ": a["NNZ"],
            **_vectors(n, n)}  # fmt: skip


def _compiler(name: str) -> Builder:
    return lambda d: getattr(spf.kernels, name)(index_dtype=d).compile()


def _format_compiler(fmt: Format) -> Builder:
    return lambda d: spf.kernels.spmv(fmt, index_dtype=d).compile()


def _call(kernel: Any, args: dict[str, Any], name: str) -> Call:
    if name != "ilu0_csr":
        return lambda check: kernel(check=check, **args)
    values = args["A"].copy()

    def again(check: bool) -> None:  # ILU(0) factors in place: the same values every call
        np.copyto(args["A"], values)
        kernel(check=check, **args)

    return again


def dense_cases() -> list[Case]:
    """The kernels without index arrays, on fixed sizes."""
    rng = np.random.default_rng(3)
    k = spf.kernels
    mv = k.dense_mv().compile()
    a = rng.random((400, 300))
    gemm = k.gemm().compile()
    b = rng.random((96, 96))
    blur = k.blur2d().compile()
    img = rng.random((200, 300))
    jac = k.jacobi2d().compile()
    grid = rng.random((200, 200))
    y, c, grid2 = np.zeros(400), np.zeros((96, 96)), np.zeros((200, 200))
    bx, out = np.zeros((200, 298)), np.zeros((198, 298))
    x = rng.random(300)
    calls: list[tuple[str, Call]] = [
        ("dense_mv", lambda check: mv(y=y, A=a, x=x, check=check)),
        ("gemm", lambda check: gemm(C=c, A=b, B=b, check=check)),
        ("blur2d", lambda check: blur(out=out, bx=bx, img=img, check=check)),
        ("jacobi2d", lambda check: jac(B=grid2, A=grid, check=check)),
    ]
    return [Case(n, "fixed size", "-", fn) for n, fn in calls]


def cases(ctx: Context) -> tuple[list[Case], list[tuple[str, str, str]], dict[str, Any]]:
    """Every case (compiled, arguments built and results compared once), the (kernel,
    matrix, dtype) left out for their size, and each sparse kernel's ``check_cost``."""
    quick = ctx.cfg.quick
    dtypes = ("int32",) if quick else ("int32", "int64")
    mats = matrices(quick)
    out: list[Case] = []
    skipped: list[tuple[str, str, str]] = []
    costs: dict[str, Any] = {}
    for name, build, arguments in sparse_kernels(quick):
        for dtype in dtypes:
            ctx.log(f"scale checks: {name} ({dtype})")
            kernel = build(dtype)
            costs.setdefault(name, _check_cost(kernel))
            for mname, m in mats:
                args = arguments(m, dtype)
                if args is None:
                    skipped.append((name, mname, dtype))
                    continue
                call = _call(kernel, args, name)
                _same_results(call, args, name, mname)
                _settle(call)
                out.append(Case(name, mname, dtype, call))
    if not quick:
        out += dense_cases()
    return out, skipped, costs


def _check_cost(kernel: Any) -> Any:
    """``kernel.check_cost``; for a kernel of two compiled phases (``spgemm_csr``, an
    einsum with a sparse output: ``symbolic`` then ``numeric``), both phases' facts."""
    if hasattr(kernel, "check_cost"):
        return kernel.check_cost
    from spf.runtime.fact_check import CheckCost

    return CheckCost((*kernel.symbolic.check_cost, *kernel.numeric.check_cost))


def _kept(sec: Section, costs: dict[str, Any]) -> None:
    """How each sparse kernel verifies its facts (``kernel.check_cost``): how many facts
    each way (a remembered one with where new contents are checked), and the facts not
    checked because the others imply them."""
    sec.line("How each kernel verifies its facts (`kernel.check_cost`, int32):\n")
    rows = []
    for name, cost in costs.items():
        counts: dict[str, int] = {}
        for c in cost:
            how = f"{c.how} ({c.first})" if c.first else c.how
            counts[how] = counts.get(how, 0) + 1
        ways = ", ".join(f"{how}: {n}" for how, n in counts.items()) or "no facts"
        implied = "; ".join(f"`{f}`" for f in cost.implied) or "-"
        rows.append([f"`{name}`", ways, implied])
    sec.table(["kernel", "facts, by how they are checked", "implied (not checked)"], rows, "lll")


def _same_results(call: Call, args: dict[str, Any], name: str, matrix: str) -> None:
    """A checked and an unchecked call compute the same outputs (bitwise)."""
    outputs = [k for k, v in args.items() if isinstance(v, np.ndarray) and v.flags.writeable]
    start = {k: args[k].copy() for k in outputs}
    results = []
    for check in (False, True):
        for k in outputs:
            np.copyto(args[k], start[k])
        got = call(check)
        results.append(got if isinstance(got, dict) else {k: args[k].copy() for k in outputs})
    for key in results[0]:
        if not np.array_equal(results[0][key], results[1][key], equal_nan=True):
            raise SystemExit(f"{name} on {matrix}: check=True changed {key}")
    for k in outputs:
        np.copyto(args[k], start[k])


def run(ctx: Context) -> Section:
    sec = Section("scale_checks")
    all_cases, skipped, costs = cases(ctx)
    variants: list[Variant] = []
    per_batch = [_calls_per_batch(case.call) for case in all_cases]
    for n, case in enumerate(all_cases):
        for check in (False, True):
            variants.append((f"{n}:{check}", 1, _batch(case.call, check, per_batch[n])))
    rounds = 5 if ctx.cfg.quick else 21
    ctx.log(f"scale checks: timing {len(all_cases)} cases, {rounds} rounds")
    batches, info = measure(ctx, variants, rounds, clock=time.thread_time)
    times = {k: [t / per_batch[int(k[0].split(":")[0])] for t in ts] for k, ts in batches.items()}
    ratios: dict[tuple[str, str], list[tuple[float, str]]] = {}
    lowest: dict[str, float] = {}
    data = []
    for n, case in enumerate(all_cases):
        off, on = median(times[f"{n}:False", 1]), median(times[f"{n}:True", 1])
        ratio = on / off
        low = min(times[f"{n}:True", 1]) / min(times[f"{n}:False", 1])
        ratios.setdefault((case.kernel, case.matrix), []).append((ratio, case.dtype))
        lowest[case.kernel] = max(lowest.get(case.kernel, 0.0), low)
        data.append({"kernel": case.kernel, "matrix": case.matrix, "dtype": case.dtype,
                     "check_false_s": off, "check_true_s": on, "ratio": ratio,
                     "ratio_of_fastest": low})  # fmt: skip
    _tables(sec, ratios, skipped)
    _kept(sec, costs)
    worst_of = {k: max(r for (kk, _), rs in ratios.items() if kk == k for r, _ in rs)
                for k in lowest}  # fmt: skip
    sec.line(
        "The largest ratio per kernel, of the medians (above) and of each variant's fastest "
        "call (other processes only add time: on a shared machine the second bounds what "
        "the checks themselves cost):\n"
    )
    sec.table(
        ["kernel", "max of medians", "max of fastest calls"],
        [[f"`{k}`", f"{worst_of[k]:.2f}", f"{lowest[k]:.2f}"] for k in lowest],
    )
    worst = max(((r, d, k, m) for (k, m), rs in ratios.items() for r, d in rs), default=None)
    sec.line(load_note(info) + "\n")
    if worst is not None:
        r, d, k, m = worst
        sec.target(
            f"check=True <= {TARGET}x check=False on every kernel and matrix",
            f"{r:.2f}x at worst ({k} on {m}, {d})",
            r <= TARGET,
        )
    sec.data = {"cases": data, "skipped": [list(s) for s in skipped]}
    return sec


def _settle(call: Call) -> None:
    """Run :data:`SETTLE` checked calls of ``call``: the trials of known contents
    (:mod:`spf.runtime.known`) are over before the timing, so that the timed checked calls
    are those of the way kept."""
    for _ in range(SETTLE):
        call(True)


def _calls_per_batch(call: Call) -> int:
    """How many calls of ``call`` make a batch of about :data:`BATCH_S` (unchecked)."""
    call(False)
    start = time.thread_time()
    count = 0
    while count < 1000 and time.thread_time() - start < BATCH_S / 4:
        call(False)
        count += 1
    spent = max(time.thread_time() - start, 1e-9)
    return max(1, min(10_000, round(BATCH_S * count / spent)))


def _batch(call: Call, check: bool, count: int) -> Callable[[], object]:
    def run() -> None:
        for _ in range(count):
            call(check)

    return run


def _tables(
    sec: Section,
    ratios: dict[tuple[str, str], list[tuple[float, str]]],
    skipped: list[tuple[str, str, str]],
) -> None:
    kernels = list(dict.fromkeys(k for k, _ in ratios))
    mats = list(dict.fromkeys(m for _, m in ratios if m != "fixed size"))
    left = {(k, m) for k, m, _ in skipped}
    sec.line("### check=True / check=False (the larger of int32 and int64 indices)\n")
    rows = []
    for k in kernels:
        if (k, "fixed size") in ratios:
            continue
        cells, worst = [], 0.0
        for m in mats:
            if (k, m) in ratios:
                r = max(v for v, _ in ratios[k, m])
                worst = max(worst, r)
                cells.append(f"{r:.2f}")
            else:
                cells.append("n/a" if (k, m) in left else "")
        rows.append([f"`{k}`", *cells, f"**{worst:.2f}**"])
    sec.table(["kernel", *mats, "max"], rows)
    dense = [(k, max(v for v, _ in ratios[k, "fixed size"])) for k in kernels
             if (k, "fixed size") in ratios]  # fmt: skip
    if dense:
        sec.line("Kernels without index arrays (fixed sizes):\n")
        rows = [[f"`{k}`", f"{r:.2f}"] for k, r in dense]
        sec.table(["kernel", "check=True / check=False"], rows)
    if skipped:
        sec.line(
            f"n/a: left out, storage or work above {CAP:,} "
            f"({', '.join(sorted({f'{k} on {m}' for k, m, _ in skipped}))}).\n"
        )
