"""Names that would break the generated C are refused when they are declared: C/C++
keywords, names of the headers it includes, spf's own prefixes (``spf_acc``, ``spf_tile``...),
words of the set notation for names used in sets (loops, UFs, symbolic constants), and
collisions between statements, data spaces and symbolic constants (each would be a duplicate
parameter or macro in the generated code). Data spaces and statements may be named ``min`` or
``max``: generated code calls its own ``spf_min``/``spf_max``."""

from __future__ import annotations

import pytest

from spf import CodegenError, Computation, SpfError, Stmt, kernels


def vec() -> Computation:
    comp = Computation("c")
    comp.add_data_space("A", "double", shape=("N",))
    return comp


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("int", "a C keyword"),
        ("for", "a C keyword"),
        ("double", "a C keyword"),
        ("restrict", "a C keyword"),
        ("class", "a C\\+\\+ keyword"),
        ("sqrt", "a name from the C headers"),
        ("int64_t", "a name from the C headers"),
        ("spf_acc", "reserved for spf's own names \\(prefix 'spf_'\\)"),
    ],
)
def test_reserved_data_space_names(name: str, why: str) -> None:
    comp = vec()
    with pytest.raises(SpfError, match=f"data space '{name}' is {why}.*; pick another name"):
        comp.add_data_space(name, "double", shape=("N",))
    assert list(comp.data_spaces) == ["A"]


def test_reserved_statement_uf_buffer_and_parameter_names() -> None:
    comp = vec()
    with pytest.raises(SpfError, match="statement 'for' is a C keyword"):
        comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < N}", name="for"))
    with pytest.raises(SpfError, match="statement 'sqrt' is a name from the C headers"):
        comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < N}", name="sqrt"))
    with pytest.raises(SpfError, match="UF 'min' is a word of spf's set notation"):
        comp.declare_uf("min")
    with pytest.raises(SpfError, match="UF 'switch' is a C keyword"):
        comp.declare_uf("switch")
    with pytest.raises(SpfError, match="buffer 'spf_tile' is reserved"):
        comp.add_buffer("spf_tile", ("N",), "double")
    with pytest.raises(SpfError, match="parameter 'while' is a C keyword"):
        comp.add_parameter("while", "double")
    assert comp.stmts == ()


def test_reserved_symbolic_constants_and_iterators() -> None:
    comp = Computation("c")
    with pytest.raises(SpfError, match="data space 'A': symbolic constant 'int' is a C keyword"):
        comp.add_data_space("A", "double", shape=("int",))
    comp = vec()
    with pytest.raises(SpfError, match=r"statement s0 .*symbolic constant 'long' is a C keyword"):
        comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < long}"))
    with pytest.raises(SpfError, match=r"statement s0 .*iterator 'spf_i' is reserved"):
        comp.add_stmt(Stmt("$A$(spf_i) = 1.0;", "{[spf_i]: 0 <= spf_i < N}"))
    with pytest.raises(SpfError, match="UF 'f': symbolic constant 'short' is a C keyword"):
        comp.declare_uf("f", domain="{[i]: 0 <= i < short}")
    assert comp.stmts == ()
    assert comp.ufs == {}


def test_reserved_loop_names_from_commands() -> None:
    s = kernels.dense_mv().stmt(0)
    with pytest.raises(SpfError, match="split: inner 'max' is a word of spf's set notation"):
        s.split("i", 4, "i0", "max")
    with pytest.raises(SpfError, match="tile: i1 'spf_acc' is reserved"):
        s.tile("i", "j", 2, 2, "i0", "j0", "spf_acc", "j1")
    with pytest.raises(SpfError, match="vectorize: inner 'float' is a C keyword"):
        s.vectorize("j", 4, "j0", "float")
    assert s.loops == ("i", "j")


def test_statement_and_data_space_names_do_not_collide_in_generated_code() -> None:
    comp = Computation("c")
    comp.add_data_space("s0", "double", shape=("N",))
    s = comp.add_stmt(Stmt("$s0$(i) = 1.0;", "{[i]: 0 <= i < N}"))
    assert s.name == "s1"  # the default name skips the data space's
    assert comp.codegen().count("#define s0(") == 1
    comp.add_stmt(Stmt("$s0$(i) += 2.0;", "{[i]: 0 <= i < N}", name="s0"))  # a PDFG may show it
    with pytest.raises(CodegenError, match="statement s0 has the name of a data space"):
        comp.codegen()
    comp2 = vec()
    comp2.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < N}", name="N"))
    with pytest.raises(CodegenError, match="statement N has the name of a symbolic constant"):
        comp2.codegen()


def test_data_space_and_symbolic_constant_do_not_collide() -> None:
    comp = vec()
    comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < N}"))
    with pytest.raises(SpfError, match="'N' is already a symbolic constant of c"):
        comp.add_data_space("N", "double")
    comp.add_data_space("M", "double")
    with pytest.raises(SpfError, match="'M' is a data space, not a symbolic constant"):
        comp.add_stmt(Stmt("$A$(i) = 2.0;", "{[i]: 0 <= i < M}"))


def test_function_name_must_be_text() -> None:
    with pytest.raises(CodegenError, match="name= must be a function name"):
        kernels.dense_mv().codegen(name=3)  # type: ignore[arg-type]
    assert "void spf_for(" in kernels.dense_mv().codegen(name="for")


def test_iterator_named_like_a_data_space_or_uf() -> None:
    comp = vec()
    comp.add_data_space("i", "double", shape=("N",))
    comp.declare_uf("k")
    with pytest.raises(SpfError, match="iterator 'i' is also the name of a data space"):
        comp.add_stmt(Stmt("$A$(j) = 1.0;", "{[i, j]: 0 <= i < N && 0 <= j < N}"))
    with pytest.raises(SpfError, match="iterator 'k' is also the name of a UF"):
        comp.add_stmt(Stmt("$A$(k) = 1.0;", "{[k]: 0 <= k < N}"))
    assert comp.stmts == ()


def test_macro_argument_names_are_reserved_where_macros_use_them() -> None:
    """``#define A(t0, t1) A[(t0) * (t1) + (t1)]`` silently computed a wrong index."""
    comp = Computation("c")
    with pytest.raises(SpfError, match="symbolic constant 't1' is the name of a macro argument"):
        comp.add_data_space("A", "double", shape=("N", "t1"))
    with pytest.raises(SpfError, match="data space 't0' is the name of a macro argument"):
        comp.add_data_space("t0", "double", shape=("N",))
    with pytest.raises(SpfError, match="UF 't2' is the name of a macro argument"):
        comp.declare_uf("t2")
    comp.add_data_space("A", "double", shape=("N",))
    with pytest.raises(SpfError, match="symbolic constant 't3' is the name of a macro argument"):
        comp.add_stmt(Stmt("$A$(i) = 1.0;", "{[i]: 0 <= i < t3}"))
    s = comp.add_stmt(Stmt("$A$(t0) = 1.0;", "{[t0]: 0 <= t0 < N}"))  # iterators are fine
    assert s.loops == ("t0",)


def test_data_spaces_and_statements_named_min_and_max_compile_beside_the_calls() -> None:
    import numpy as np

    comp = Computation("c")
    comp.add_data_space("max", "double", shape=("N",))
    comp.add_data_space("min", "double", shape=("N",))
    comp.add_stmt(Stmt("$max$(i) = max($min$(i), 2.0) + min(i, 3);", "{[i]: 0 <= i < N}"))
    code = comp.codegen()
    assert "spf_max(min(i), 2.0) + spf_min(i, 3)" in code
    assert "#define max(a, b)" not in code
    got, want = np.zeros(5), np.maximum(np.arange(5.0), 2.0) + np.minimum(np.arange(5), 3)
    comp.compile()(max=got, min=np.arange(5.0), N=5)
    assert got.tolist() == want.tolist()
    comp.interpret(max=got, min=np.arange(5.0), N=5)
    assert got.tolist() == want.tolist()
    named = Computation("d")
    named.add_data_space("A", "double", shape=("N",))
    named.add_stmt(Stmt("$A$(i) = max(i, 2);", "{[i]: 0 <= i < N}", name="max"))
    a = np.zeros(4)
    named.compile()(A=a, N=4)
    assert a.tolist() == [2.0, 2.0, 2.0, 3.0]
