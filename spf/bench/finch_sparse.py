"""Finch (``finch-tensor``, numba backend) on the tensor benchmark's SpAdd and SpGEMM, for
``spf bench --only tensor``.

Finch runs in a child process (its own compile caches, a time limit) on the leading
``ROWS x ROWS`` block of each operand (its result is checked densely against scipy's). The
operands go in as scipy CSR (``finch.asarray``: a dense level over a sparse-list level, fill
value 0, int32 indices, duplicates summed, no explicit zeros), the kernel is built lazily
(``finch.defer``) and compiled with ``finch.COMPILE_NUMBA`` (the default interpreter
cannot index a ``FiberTensor``: ``TypeError: 'FiberTensor' object is not subscriptable``).

Where a result differs from scipy's, the child says how: for SpAdd it checks whether the
wrong entries are all ``B``'s entries past ``A``'s last column in their row, missing (a
union merge that loses ``B``'s entries after ``A``'s row has ended), and reruns with int64
indices and with the operands swapped, so that the bench's inputs are ruled in or out as the
cause.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ROWS", "SCRIPT", "TIMEOUT_S", "run_finch"]

TIMEOUT_S = 600
ROWS = 2000

SCRIPT = r"""
import json, sys, time
import numpy as np
import scipy.sparse as sp
import finch
data = np.load(sys.argv[1])
CTX = getattr(finch, "COMPILE_NUMBA", None)


def median_ms(call):
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        call()
        ts.append(time.perf_counter() - t0)
    return 1e3 * sorted(ts)[1]


def lazy(op, a, b):
    fa, fb = finch.asarray(a), finch.asarray(b)
    return lambda: finch.compute(getattr(finch, op)(finch.defer(fa), finch.defer(fb)), ctx=CTX)


def differs(op, a, b):
    # the entries Finch got wrong, as a mask over the dense result
    got, want = finch.to_numpy(lazy(op, a, b)()), (a + b if op == "add" else a @ b).toarray()
    return ~np.isclose(got, want), got


def past_last(x, y, bad, got):
    # the wrong entries are y's entries past x's last column in their row, missing from got
    n = 0
    for i, j in np.argwhere(bad):
        row = x.indices[x.indptr[i]:x.indptr[i + 1]]
        if got[i, j] != 0 or y[i, j] == 0 or (len(row) and j <= row.max()):
            return False
        n += 1
    return n > 0


def cause(a, b, bad, got):
    if not past_last(a, b, bad, got):
        return f"{int(bad.sum())} entries differ"
    wide = [sp.csr_array((m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64)),
                         shape=m.shape) for m in (a, b)]
    int64 = bool(differs("add", *wide)[0].any())
    bad_ba, got_ba = differs("add", b, a)
    swapped = past_last(b, a, bad_ba, got_ba)
    return (f"Finch drops {int(bad.sum())} entries of B, each past A's last column in its row "
            f"(its union merge loses B's entries after A's row has ended); with int64 indices: "
            f"{'the same' if int64 else 'correct'}; B + A drops A's past B's: "
            f"{'yes' if swapped else 'no'}")


out = {}
for job in data["jobs"]:
    label, op, prefix = str(job).split("|")
    n = len(data[f"{prefix}a_indptr"]) - 1
    a, b = (sp.csr_array((data[f"{prefix}{x}_data"], data[f"{prefix}{x}_indices"],
                          data[f"{prefix}{x}_indptr"]), shape=(n, n)) for x in ("a", "b"))
    ref = (lambda: a + b) if op == "add" else (lambda: a @ b)
    call = lazy(op, a, b)
    try:
        t0 = time.perf_counter()
        got = finch.to_numpy(call())
        first = time.perf_counter() - t0
        bad = ~np.isclose(got, ref().toarray())
        r = {"n": n, "first_s": first, "matches": not bad.any(), "scipy_ms": median_ms(ref)}
        r["ms"] = median_ms(call)
        if bad.any() and op == "add":
            r["cause"] = cause(a, b, bad, got)
        elif bad.any():
            r["cause"] = f"{int(bad.sum())} entries differ"
        out[label] = r
    except Exception as e:  # report what Finch raised
        out[label] = {"n": n, "error": f"{type(e).__name__}: {str(e)[:200]}"}
print(json.dumps(out))
"""


def run_finch(arrays: dict[str, Any], work: Path) -> dict[str, Any]:
    """Finch's first-call seconds, median ms, check (and the cause of a difference) per job,
    or ``{"error": ...}``. ``arrays``: ``jobs``, strings ``label|op|prefix`` (op ``add`` or
    ``matmul`` on the CSR operands ``<prefix>a_*`` and ``<prefix>b_*``: data, indices,
    indptr), and those operands."""
    import numpy as np

    path = work / "tensor-finch.npz"
    np.savez(path, **arrays)
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, str(path)], capture_output=True,
                              text=True, timeout=TIMEOUT_S)  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {TIMEOUT_S} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": f"failed ({(done.stderr.strip().splitlines() or ['no output'])[-1]})"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result
