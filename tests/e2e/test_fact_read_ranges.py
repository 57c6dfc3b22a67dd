"""Checked calls whose facts read an index array the kernel's loops do not range-test first
(audit 24): a fact tested before the loops ("each call") reads such an array as it is, and
an access whose bounds the fact implies through that array's declared range was read out
of bounds. A checked call must refuse a value out of its UF's declared range that a fact
before the loops reads, before anything is read through it; and gauss_seidel_csr's rows
that test their row pointer and diagonal themselves (spf.codegen.split_pairs) must not skip
the passes that the fact loops before them rely on.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_split_rows_keep_the_passes_that_facts_before_the_loops_read() -> None:
    """gauss_seidel_csr with a fact checked before the loops over ``diag(i) <= k <
    diag(i+1)``: the rows that test ``rowptr`` and ``diag`` themselves skipped the passes
    over them, so that fact's loop ran to ``diag(1) = 2**31 - 1`` reading ``col`` far past
    its end (a crash, here in a child process). Now the passes run first and refuse it."""
    script = textwrap.dedent(
        """
        import numpy as np, scipy.sparse as sp, spf, spf.sparse
        comp = spf.kernels.gauss_seidel_csr()
        comp.assume("forall i, k: diag(i) <= k < diag(i+1) => col(k) >= i - 5")
        kernel = comp.compile()
        a = spf.sparse.gauss_seidel_args(sp.csr_array(np.array(
            [[4.0, 1, 0], [1, 4, 1], [0, 1, 4]])))
        x = np.zeros(3)
        kernel(x=x, b=np.ones(3), **a)
        assert np.allclose(x, [0.25, 0.1875, 0.203125]), x
        a["diag"][1] = 2**31 - 1
        try:
            kernel(x=np.zeros(3), b=np.ones(3), **a)
        except spf.errors.ArgumentError as e:
            print(e)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.startswith("diag: diag[1] = 2147483647 is outside"), done.stdout
