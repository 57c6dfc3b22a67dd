"""The error classes (API.md §1, STYLE.md's errors): the refined classes keep every ``except``
clause of the API working, errors carry ``During: ...`` notes as they rise, and the bare
``raise SpfError(...)`` sites only ever get fewer."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

import spf
from spf import errors, kernels
from spf.schedule.trace import Trace

SPF = Path(spf.__file__).parent

#: Files that still raise a bare ``SpfError``, and how many times. The count may only go down:
#: give a new raise the class its meaning names (VerifyError, ScheduleError, FormatError,
#: ToolchainError, ArgumentError, CodegenError, InternalError for spf bugs, ...). A site that
#: must stay generic says why in a ``# generic: ...`` comment on the line above it.
BARE_SPF_ERROR_ALLOWED = {
    "distributed/kernel.py": 1,  # exchange_stats() before the first call: a call out of order
}


def _bare_raises(source: str) -> int:
    """How many ``raise SpfError(...)`` (or ``raise errors.SpfError(...)``) ``source`` holds."""
    count = 0
    for node in ast.walk(ast.parse(source)):
        exc = node.exc if isinstance(node, ast.Raise) else None
        if isinstance(exc, ast.Call):
            func = exc.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            count += name == "SpfError"
    return count


def _bare_spf_error_raises() -> Counter[str]:
    """``{file under spf/: number of bare raises}``."""
    found: Counter[str] = Counter()
    for path in sorted(SPF.rglob("*.py")):
        n = _bare_raises(path.read_text())
        if n:
            found[path.relative_to(SPF).as_posix()] = n
    return found


def test_bare_spf_error_raises_only_get_fewer() -> None:
    found = _bare_spf_error_raises()
    grown = {
        f: (n, BARE_SPF_ERROR_ALLOWED.get(f, 0))
        for f, n in sorted(found.items())
        if n > BARE_SPF_ERROR_ALLOWED.get(f, 0)
    }
    assert not grown, (
        "new bare `raise SpfError(...)` sites (file: (found, allowed)); raise the class the "
        f"error's meaning names instead (spf/errors.py): {grown}"
    )


def test_a_generic_raise_says_why() -> None:
    unexplained = []
    for path in sorted(SPF.rglob("*.py")):
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            if _bare_raises_in_line(line) and not lines[k - 1].strip().startswith("# generic:"):
                unexplained.append(f"{path.relative_to(SPF).as_posix()}:{k + 1}")
    assert not unexplained, (
        "a bare `raise SpfError(...)` needs a `# generic: <why no class fits>` comment on the "
        f"line above it, or the class its meaning names: {unexplained}"
    )


def _bare_raises_in_line(line: str) -> bool:
    text = line.strip()
    return text.startswith(("raise SpfError(", "raise errors.SpfError("))


def test_the_bare_raise_scan_counts_bare_raises_only() -> None:
    source = (
        "def f(x):\n"
        "    if x:\n"
        "        raise SpfError('a')\n"
        "    try:\n"
        "        g()\n"
        "    except SpfError as err:\n"
        "        raise errors.SpfError('b') from err\n"
        "    raise VerifyError('c')\n"
    )
    assert _bare_raises(source) == 2


@pytest.mark.parametrize(
    ("cls", "bases"),
    [
        (errors.VerifyError, (errors.SpfError,)),
        (errors.ArityError, (errors.VerifyError, errors.SpfError, ValueError)),
        (errors.ScheduleError, (errors.SpfError,)),
        (errors.IllegalScheduleError, (errors.ScheduleError, errors.SpfError)),
        (errors.ToolchainError, (errors.CompileError, errors.SpfError)),
        (errors.FormatError, (errors.SpfError,)),
        (errors.ParseError, (errors.SpfError, ValueError)),
        (errors.UndeclaredError, (errors.SpfError, KeyError)),
        (errors.ArgumentError, (errors.SpfError, TypeError)),
        (errors.InternalError, (errors.SpfError,)),
    ],
)
def test_error_classes_keep_their_api_bases(cls: type[Exception], bases: tuple[type, ...]) -> None:
    for base in bases:
        assert issubclass(cls, base), f"{cls.__name__} must stay a {base.__name__}"
    assert getattr(spf, cls.__name__) is cls


def test_a_schedule_error_is_not_an_illegal_schedule() -> None:
    # `except IllegalScheduleError` catches dependence violations only, as before
    assert not issubclass(errors.ScheduleError, errors.IllegalScheduleError)


def test_toolchain_error_carries_the_command_and_stderr() -> None:
    err = errors.ToolchainError("dot failed", command="dot -Tsvg", stderr="syntax error")
    assert (err.command, err.stderr) == ("dot -Tsvg", "syntax error")
    with pytest.raises(errors.CompileError, match="dot failed"):
        raise err


def test_internal_exceptions_are_in_the_family() -> None:
    from spf.frontend.exprs import NotAffineError
    from spf.runtime.warm import UnkeyableError

    assert issubclass(NotAffineError, errors.SpfError)
    assert issubclass(UnkeyableError, errors.SpfError)


def test_malformed_schedule_command_is_a_schedule_error() -> None:
    stmt = kernels.dense_mv().stmt("s0")
    with pytest.raises(errors.ScheduleError, match="split: factor must be a positive int"):
        stmt.split("i", 0, "i0", "i1")


def test_redeclared_data_space_is_a_verify_error() -> None:
    comp = spf.Computation("k")
    comp.add_data_space("A", "double", shape=("N",))
    with pytest.raises(errors.VerifyError, match="'A' is already declared"):
        comp.add_data_space("A", "float", shape=("N",))


def test_inconsistent_format_is_a_format_error() -> None:
    with pytest.raises(errors.FormatError, match="Format 'BAD': coords is empty"):
        spf.Format("BAD", coords="[]", storage="{[] -> [k]: k = 0}")


def test_missing_matrix_file_is_an_argument_error(tmp_path: Path) -> None:
    with pytest.raises(errors.ArgumentError, match="no such file"):
        spf.sparse.read_matrix_market(tmp_path / "absent.mtx")


def test_failing_command_notes_what_was_applied() -> None:
    stmt = kernels.dense_mv().stmt("s0")
    with pytest.raises(errors.SpfError) as info:
        stmt.interchange("i", "nope")
    assert any(
        n.startswith("During: applying interchange(") and n.endswith("to statement s0")
        for n in info.value.__notes__
    ), info.value.__notes__


def test_failing_replay_notes_the_trace_entry() -> None:
    trace = Trace.from_data(
        [{"stmt": "s0", "command": "Interchange", "args": {"i": "i", "j": "q"}}]
    )
    with pytest.raises(errors.SpfError) as info:
        trace.replay(kernels.dense_mv())
    notes = info.value.__notes__
    assert any(n.startswith("During: applying interchange(") for n in notes), notes
    assert notes[-1].startswith("During: replaying entry 1 of 1: comp.stmt(")


def test_codegen_notes_the_stage_that_failed() -> None:
    comp = spf.Computation("k")
    comp.add_data_space("A", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$A$(i) = 1.0;", "{[i]: i >= 0}"))
    for _ in range(2):  # raised again: one note, not two
        with pytest.raises(errors.CodegenError, match="loop i has no upper bound") as info:
            comp.codegen()
        assert info.value.__notes__ == ["During: generating c code for k (scanning the loops)"]


def test_add_context_adds_a_note_once() -> None:
    err = errors.VerifyError("bad")
    errors.add_context(err, "During: x")
    errors.add_context(err, "During: x")
    errors.add_context(err, "During: y")
    assert err.__notes__ == ["During: x", "During: y"]


@pytest.mark.parametrize("module", ["spf.errors", "spf.clang", "spf.schedule.commands"])
def test_docstring_examples_name_the_error_classes(module: str) -> None:
    # their examples show the class an error is raised as (VerifyError, ScheduleError, ...)
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} doctest(s) in {module} failed"


def test_unreadable_matrix_file_is_an_argument_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mtx"
    bad.write_text("this is not matrix market\n")
    with pytest.raises(errors.ArgumentError, match=r"read_matrix_market: cannot read .*bad\.mtx"):
        spf.sparse.read_matrix_market(bad)


def test_bad_tuning_options_are_argument_errors() -> None:
    import scipy.sparse as sp

    from spf.formats.tune_space import normalize_space
    from spf.tuning.space import make_space

    with pytest.raises(errors.ArgumentError, match="kernel must be 'spmv'"):
        spf.formats.tune(sp.eye_array(3, format="csr"), kernel="spmm")
    with pytest.raises(errors.ArgumentError, match="unknown format family 'NOPE'"):
        normalize_space({"NOPE": [()]})
    with pytest.raises(errors.ArgumentError, match="unknown space key 'bogus'"):
        make_space({"bogus": []}, None)


def test_bad_build_options_are_argument_errors() -> None:
    from spf.runtime.build import build

    with pytest.raises(errors.ArgumentError, match="language must be 'c' or 'c\\+\\+'"):
        build("int f(void) { return 0; }", name="f", language="fortran")
    with pytest.raises(errors.ArgumentError, match="cflags must be strings"):
        build("int f(void) { return 0; }", name="f", cflags=["-O2", 3])  # type: ignore[list-item]


def test_integer_division_by_zero_while_interpreting_is_an_argument_error() -> None:
    import numpy as np

    comp = spf.Computation("div")
    comp.add_data_space("a", "int", shape=("N",))
    comp.add_data_space("q", "int", shape=("N",))
    comp.add_stmt(spf.Stmt("$q$(i) = $a$(i) / 0;", "{[i]: 0 <= i < N}"))
    q = np.zeros(2, dtype=np.int32)
    with pytest.raises(errors.ArgumentError, match="integer division by zero"):
        comp.interpret(a=np.ones(2, dtype=np.int32), q=q, N=2)
    assert not q.any()


def test_an_internal_invariant_is_an_internal_error() -> None:
    from spf.schedule.commands import Effect

    class Unfinished(Effect):  # an effect that forgot perform()
        pass

    with pytest.raises(errors.InternalError, match="spf bug: Unfinished does not define perform"):
        Effect.perform(Unfinished.__new__(Unfinished), None)


def test_an_spf_bug_in_the_c_printer_is_an_internal_error_not_a_value_error() -> None:
    from spf.codegen.c import loop_tree
    from spf.codegen.loop_ast import Int, Op

    with pytest.raises(errors.InternalError, match="spf bug: unknown operation bogus") as info:
        loop_tree(Op("bogus", (Int(1), Int(2), Int(3))))
    assert not isinstance(info.value, ValueError)


def test_parse_error_caret_follows_tabs_and_long_lines_show_a_window() -> None:
    """The caret line copies the tabs before the error (it stood a tab's width short), and
    a line longer than the window shows the part around the error (a 3,000-term formula
    printed all of it)."""
    err = errors.ParseError("bad", text="a\tb c", span=(4, 5))
    assert str(err).splitlines()[1:] == ["  a\tb c", "   \t  ^"]
    long = "x + " * 2000 + "?"
    text = str(errors.ParseError("bad", text=long, span=(len(long) - 1, len(long))))
    assert len(text) < 1000
    assert text.splitlines()[1].endswith("?")
    assert text.splitlines()[2].endswith("^")
