"""The emitter's record of the values each block binds (what CPrinter reuses a UF read by,
instead of searching the lines it printed)."""

from __future__ import annotations

from spf.codegen.emitter import Emitter


def test_a_binding_is_seen_in_its_own_block_only() -> None:
    out = Emitter()
    out.bind("col_k", "col(k)")
    assert out.bound("col_k") == "col(k)"
    with out.braces():
        assert out.bound("col_k") is None  # an inner block binds afresh
        out.bind("col_k", "col(k + 1)")
        assert out.bound("col_k") == "col(k + 1)"
    with out.braces():
        assert out.bound("col_k") is None  # a sibling block does not see the other's
    assert out.bound("col_k") == "col(k)"  # the outer block's binding is back
