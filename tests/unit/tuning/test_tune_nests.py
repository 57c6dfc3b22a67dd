"""spf.tune's main nests: every statement with the most loops is one (PolyBench lu's s0 and
s2), a second nest moves only its own loops, and chains apply one nest's moves after
another's."""

from __future__ import annotations

from typing import Any

import numpy as np

from spf.bench.polybench import kernel as polybench
from spf.tuning.beam import ranked, singles
from spf.tuning.nest import analyze, main_stmts, sizes_of
from spf.tuning.realize import commands_text, realize
from spf.tuning.space import Candidate, Step, make_space


def _lu(n: int = 12) -> tuple[Any, dict[str, Any]]:
    k = polybench("lu")
    comp, args = k.build(), k.arguments({"N": n})
    sizes = sizes_of(comp, args)
    return comp, {**{p: sizes[p] for p in comp.params if p in sizes}, **args}


def test_lu_has_two_main_nests_and_the_second_keeps_the_shared_outer_loop() -> None:
    comp, args = _lu()
    assert [s.name for s in main_stmts(comp)] == ["s0", "s2"]
    first, second = analyze(comp, args), analyze(comp, args, comp.stmt("s2"), alone=True)
    assert (first.stmts, first.fixed) == (("s0", "s1", "s2"), 0)
    assert (second.stmts, second.loops, second.fixed) == (("s2",), ("i", "j", "k"), 1)
    space = make_space(None, None)
    moved = {lp for _, c in singles(second, space) for s in c.steps
             if s.kind in ("interchange", "tile", "split") for lp in s.loops[:2]}  # fmt: skip
    assert "i" not in moved  # i is s0's and s1's loop too
    assert {"j", "k"} <= moved
    assert any(s.kind == "interchange" for _, c in ranked(second, space) for s in c.steps)


def test_a_single_main_nest_is_analyzed_as_before() -> None:
    k = polybench("gemm")
    comp = k.build()
    assert [s.name for s in main_stmts(comp)] == ["s1"]


def test_a_chain_applies_the_first_nest_then_the_second_and_describes_both() -> None:
    comp, args = _lu()
    nests = {"": analyze(comp, args), "s2": analyze(comp, args, comp.stmt("s2"), alone=True)}
    first = Candidate((Step("unroll", 2, ("k",)),))
    chain = Candidate((Step("interchange", True, ("j", "k")),), main="s2", before=first)
    assert chain.describe() == "unroll(k 2) then s2: interchange(j,k)"
    assert chain.key() != Candidate(chain.steps, main="s2").key()
    assert [c.main for c in chain.chain()] == ["", "s2"]
    copy = realize(comp, chain, nests, make_space(None, None))
    assert len(comp.trace) == 0  # the computation passed is left alone
    text = commands_text(copy, 0)
    assert text.index('unroll("k", 2)') < text.index('stmt("s2").interchange("j", "k")')
    assert 'stmt("s0").interchange' not in text
    copy.check_legality()  # s2's interchange alone is legal (s0's is not)
    want = {"A": np.array(args["A"], copy=True), "N": args["N"]}
    got = {"A": np.array(args["A"], copy=True), "N": args["N"]}
    comp.compile()(**want)
    copy.compile()(**got)
    assert np.array_equal(got["A"], want["A"])  # bitwise: the sums keep their order
