"""What an IR and the analysis of it hand out cannot be changed behind the fingerprint.

Results are remembered by ``ir.fingerprint`` for every equal IR of the process (and the
kernels built from them on disk): a caller that changed a mapping it was handed changed
what every equal computation is told (an illegal parallel loop passed the legality check;
an index array's range check was dropped and the kernel wrote out of bounds)."""

from __future__ import annotations

import pickle

import pytest

import spf
from spf.analysis.dependences import is_parallel_legal
from spf.analysis.index_ranges import implied_ranges
from spf.errors import IllegalScheduleError
from spf.sets import UF


def _scatter() -> spf.Computation:
    """``x(f(i)) += 1``: ``f`` may repeat a value, so loop ``i`` is not parallel."""
    comp = spf.Computation("scatter")
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("f", arity=1, domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < M}")
    comp.add_stmt(spf.Stmt("$x$(f(i)) = $x$(f(i)) + 1;", "{[i]: 0 <= i < N}"))
    return comp


def test_uf_declarations_of_an_ir_are_read_only() -> None:
    ir = pickle.loads(pickle.dumps(_scatter().ir))  # parses its sets with ir.uf_decls
    injective = UF(
        "f", arity=1, domain="{[i]: 0 <= i < N}", range="{[v]: 0 <= v < M}", monotonic="increasing"
    )
    with pytest.raises(TypeError):
        ir.uf_decls["f"] = injective  # type: ignore[index]
    assert not is_parallel_legal(ir, "s0", "i")
    comp = _scatter()  # an equal computation: its analysis is the one remembered above
    comp.stmt("s0").parallelize("i")
    with pytest.raises(IllegalScheduleError):
        comp.check_legality()
    assert dict(ir.uf_decls)["f"] == comp.ufs["f"]  # a copy to change, when one is wanted


def test_data_space_table_of_an_ir_is_read_only() -> None:
    ir = _scatter().ir
    with pytest.raises(TypeError):
        del ir.data_space_table["x"]  # type: ignore[attr-defined]
    assert ir.data_space_table["x"].shape == ("M",)


def _permuted() -> spf.Computation:
    """A run-time index array ``p`` with no declared range, read as ``y(p(i))``."""
    comp = spf.Computation("permuted")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("q", "int32_t", shape=("N",))
    comp.add_data_space("p", "int32_t", shape=("N",), index=True)
    comp.add_stmt(spf.Stmt("$p$(i) = $q$(i);", "{[i]: 0 <= i < N}"))
    comp.add_stmt(spf.Stmt("$y$(p(i)) += 1;", "{[i]: 0 <= i < N}"))
    return comp


def test_implied_ranges_hands_out_a_copy() -> None:
    ranges = implied_ranges(_permuted().ir)
    derived = dict(ranges)
    assert "p" in derived
    ranges["p"] = "{[v]: 0 <= v < 10 * N}"  # the caller's own dict
    assert implied_ranges(_permuted().ir) == derived
