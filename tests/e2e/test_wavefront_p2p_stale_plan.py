"""A ``method="p2p"`` plan over index arrays changed in place since it was inspected
(docs/inspection.md, "Point-to-point waits"): the unchecked call compares the contents too.

The p2p executor runs its positions in static chunks, each row spinning until the rows it
reads are done. On a plan of other contents a row may wait on a row that its own thread runs
later: the call never returned (the levels and coarse executors, whose barriers cannot
deadlock, compare sizes only on an unchecked call, as documented). The scenario runs in a
child process so that a hang fails the test instead of stalling the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import spf

SCRIPT = textwrap.dedent(
    """
    import numpy as np, scipy.sparse as sp, spf

    comp = spf.kernels.sptrsv_csr()
    comp.wavefront("i", method="p2p")
    solve = comp.compile()
    n = 4000
    rows = np.arange(1000, 2000)  # rows 1000..1999 read row 0 (level 1), the others none
    first = sp.csr_array((np.ones(len(rows)), (rows, np.zeros(len(rows), int))), shape=(n, n))
    lower = sp.csr_array(sp.eye_array(n) * 4.0 + first)
    lower.sort_indices()
    args = spf.sparse.sptrsv_args(lower)
    plan = solve.inspect(threads=2, strategy="wavefront", **args)
    # row 2500 (level 0, position 1500) now reads row 1008 (level 1, position 3008): both
    # in the chunks of thread 1 (static chunks of 64), the reader first; the same sizes
    moved = lower.tolil()
    moved[1999, 0] = 0.0
    moved[2500, 1008] = 1.0
    moved = sp.csr_array(moved)
    moved.eliminate_zeros()
    moved.sort_indices()
    new = spf.sparse.sptrsv_args(moved)
    assert new["NNZ"] == args["NNZ"]
    for name in ("rowptr", "col", "L"):
        args[name][:] = new[name]
    u, f = np.zeros(n), np.ones(n)
    try:
        solve(u=u, f=f, plan=plan, check=False, **args)
    except spf.ArgumentError as err:
        print("refused:", err)
    else:
        print("ran")
    """
)


def test_unchecked_p2p_call_refuses_a_plan_of_other_contents(tmp_path: Path) -> None:
    script = tmp_path / "stale_p2p.py"
    script.write_text(SCRIPT)
    root = str(Path(spf.__file__).resolve().parent.parent)
    env = dict(os.environ, OMP_NUM_THREADS="2", SPF_ADAPTIVE_THREADS="0")
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: sptrsv_csr: plan= was built from other index arrays" in done.stdout
    assert "'col' differs" in done.stdout
