"""The prefetch of the rows ahead (:mod:`spf.codegen.prefetch`): the tags a wavefront
executor on copies gets (:func:`spf.analysis.local_copies.copy_executor`), the lines a loop
tagged so opens each iteration with, and where the C printer prints them (the unchecked
function of a C unit only)."""

from __future__ import annotations

import re

from spf import kernels
from spf.analysis.executor import build_executor
from spf.analysis.local_copies import PREFETCH_AHEAD, PREFETCH_TAG
from spf.codegen import generate
from spf.codegen.arg_checks import CHECKED_SUFFIX
from spf.codegen.loop_ast import Block, For, Op, Var
from spf.codegen.prefetch import MIN_ELEMENTS, Request, lines, requests
from spf.testing import copies_executor


def _loop(*tags: str, step: int = 1) -> For:
    return For("p", Var("lo"), Op("<", (Var("p"), Var("hi"))), step, Block(()), 0, tags)


def _text(e: object) -> str:
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Op):
        return f"{_text(e.args[0])} {e.op} {_text(e.args[1])}"
    return str(getattr(e, "value", e))


def test_a_read_and_a_write_of_one_element_are_asked_for_once_for_writing() -> None:
    loop = _loop(
        "wavefront_rows",
        f"{PREFETCH_TAG}(32,,order,u,r)",
        f"{PREFETCH_TAG}(32,,order,u,w)",
        f"{PREFETCH_TAG}(32,,order,f,r)",
        f"{PREFETCH_TAG}(32,ptr,col,u,r)",
        f"{PREFETCH_TAG}(32,ptr,col,u,r)",
    )
    assert requests(loop) == [
        Request(32, "", "order", "u", True),
        Request(32, "", "order", "f", False),
        Request(32, "ptr", "col", "u", False),
    ]


def test_the_lines_ask_for_the_row_ahead_within_the_loop_on_large_vectors() -> None:
    loop = _loop(f"{PREFETCH_TAG}(32,,order,u,w)", f"{PREFETCH_TAG}(32,ptr,col,u,r)")
    got = lines(loop, {"order", "ptr", "col"}, {"u": ("u", "N")}, _text)
    assert got[0] == f"if (((N) >= {MIN_ELEMENTS}) && (p + 32 < hi))"
    body = "\n".join(got)
    assert "const int64_t spf_ahead_p = p + 32;" in body
    assert "__builtin_prefetch(&u(order(spf_ahead_p)), 1, 3);" in body
    assert re.search(
        r"for \(int64_t (\w+) = ptr\(spf_ahead_p\); \1 < ptr\(spf_ahead_p \+ 1\)", body
    )
    assert "__builtin_prefetch(&u(col(spf_ahead_k_ptr)), 0, 3);" in body
    assert body.count("{") == body.count("}")


def test_nothing_is_printed_for_what_the_program_does_not_hold() -> None:
    tagged = _loop(f"{PREFETCH_TAG}(32,ptr,col,u,r)")
    assert lines(tagged, {"ptr", "col"}, {}, _text) == []  # u is no 1-D array
    assert lines(tagged, {"ptr"}, {"u": ("u", "N")}, _text) == []  # col is no UF
    assert lines(_loop("wavefront_rows"), {"ptr", "col"}, {"u": ("u", "N")}, _text) == []
    step = _loop(f"{PREFETCH_TAG}(32,ptr,col,u,r)", step=2)
    assert lines(step, {"ptr", "col"}, {"u": ("u", "N")}, _text) == []


def test_a_solve_on_copies_prefetches_its_column_reads_and_its_rows_elements() -> None:
    ir = copies_executor()
    tags = {t for s in ir.stmts for _, ts in s.tags for t in ts if t.startswith(PREFETCH_TAG)}
    a = PREFETCH_AHEAD
    assert tags == {
        f"{PREFETCH_TAG}({a},rowptr_part,col_part,u,r)",  # u(j), j = col_part(k)
        f"{PREFETCH_TAG}({a},,order_i,u,w)",  # the row's own element, written
        f"{PREFETCH_TAG}({a},,order_i,f,r)",
    }
    comp = kernels.sptrsv_csr()
    comp.wavefront("i", method="auto")
    plain = build_executor(comp.ir).ir  # the executor without copies: rows where they lie
    assert not any(t.startswith(PREFETCH_TAG) for s in plain.stmts for _, ts in s.tags for t in ts)


def test_only_the_unchecked_c_function_prefetches() -> None:
    ir = copies_executor()
    source = generate(ir, "c", None, True, arg_checks=True)[0].source
    unchecked, _, checked = source.partition(f"{ir.name}{CHECKED_SUFFIX}(")
    assert checked, "no checked function was printed"
    assert "__builtin_prefetch(&u(col_part(" in unchecked
    assert "__builtin_prefetch(&f(order_i(" in unchecked
    assert "__builtin_prefetch" not in checked
    cuda = generate(ir, "cuda", None, True)[0].source
    assert "__builtin_prefetch" not in cuda
