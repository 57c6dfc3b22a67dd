"""Domains at the extremes: an empty literal domain generates nothing (a statement that never
runs is legal C); an unbounded one is a CodegenError naming the statement and the loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from spf import CodegenError, Computation, Stmt

if TYPE_CHECKING:
    from pathlib import Path


def test_empty_domains_generate_no_loop(tmp_path: Path) -> None:
    comp = Computation("k")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < 0}"))
    comp.add_stmt(Stmt("$A$(i) += 2.0;", "{[i]: 0 <= i < N}"))
    comp.add_stmt(Stmt("$A$(i) += 5.0;", "{[i]: 0 <= i < N && 1 = 0}"))
    assert comp.loop_structure() == "for i:\n  s1"
    for target in ("c", "cuda", "hls", "mpi"):
        src = comp.codegen(target)
        body = src[src.rindex("#define") :].split("\n", 1)[1]  # after the last macro
        assert "s0(" not in body
        assert "s2(" not in body
    A = np.zeros(3)
    comp.compile(cache_dir=tmp_path)(A=A)
    assert A.tolist() == [2.0, 2.0, 2.0]


def test_a_computation_whose_only_statement_never_runs(tmp_path: Path) -> None:
    comp = Computation("never")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 1 = 0}"))
    A = np.zeros(2)
    comp.compile(cache_dir=tmp_path)(A=A)
    assert A.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    ("domain", "loop", "side"),
    [
        ("{[i]: i >= 0}", "i", "upper"),
        ("{[i]: i < N}", "i", "lower"),
        ("{[i, j]: 0 <= i < N && j >= i}", "j", "upper"),
    ],
)
def test_unbounded_domain_names_the_statement_and_loop(domain: str, loop: str, side: str) -> None:
    comp = Computation("k")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(Stmt("$A$(i) = 1.0;", domain))
    with pytest.raises(CodegenError, match=f"statement s0: loop {loop} has no {side} bound"):
        comp.codegen()


def test_unbounded_after_a_split_names_the_new_loop() -> None:
    comp = Computation("k")
    comp.add_data_space("A", "double", shape=("N",))
    s = comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: i >= 0}"))
    s.split("i", 4, "i0", "i1")
    with pytest.raises(CodegenError, match="statement s0: loop i0 has no upper bound"):
        comp.codegen()
