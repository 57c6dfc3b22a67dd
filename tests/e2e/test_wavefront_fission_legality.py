"""A wavefront's inspector orders rows, not the statements inside one row of a kernel: a
fission that reorders a row's statements stays illegal whatever the wavefront method (found
by spf.tune on PolyBench lu, where method='coarse' let it through and computed a wrong A)."""

from __future__ import annotations

import numpy as np
import pytest

import spf
from spf.bench.polybench import kernel as polybench_kernel


def _fissioned_lu() -> spf.Computation:
    comp = polybench_kernel("lu").build()
    comp.stmt("s1").after("s0", "i")  # s0 reads what s1 writes at a smaller j: illegal
    comp.stmt("s2").after("s1", "i")
    return comp


@pytest.mark.parametrize("method", ["levels", "coarse", "auto"])
def test_an_illegal_fission_stays_illegal_under_a_wavefront(method: str) -> None:
    comp = _fissioned_lu()
    comp.wavefront("i", method=method)
    with pytest.raises(spf.IllegalScheduleError, match="from s1 to s0"):
        comp.codegen()


def test_the_unsplit_lu_wavefront_still_equals_the_reference() -> None:
    k = polybench_kernel("lu")
    comp = k.build()
    comp.wavefront("i", method="coarse")
    args = k.arguments({"N": 23})
    got = {a: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for a, v in args.items()}
    comp.compile()(**got)
    want = k.expected(args)
    assert np.allclose(got["A"], want["A"], rtol=1e-9, atol=1e-9)
