"""Long statements (after inlining) are readable in the PDFG: their label is a short form cut
after two lines, and the node's tooltip holds the whole statement."""

from __future__ import annotations

import io
import re

import pytest
from pycparser import c_parser  # type: ignore[import-untyped]

import spf
from spf.pdfg.labels import LINE, LINES, WIDTH, statement_text

NODE = re.compile(r'^\s*"(?P<name>\w+)" \[shape=box, style="rounded,filled".*?label="(?P<label>'
                  r'(?:[^"\\]|\\.)*)", tooltip="(?P<tooltip>(?:[^"\\]|\\.)*)"\];$', re.M)  # fmt: skip


def nodes(dot: str) -> dict[str, tuple[list[str], str]]:
    """Each statement node's label lines and tooltip, unescaped."""
    return {
        m["name"]: (m["label"].split("\\n"), m["tooltip"].replace("\\n", "\n"))
        for m in NODE.finditer(dot)
    }


def c_tree(text: str) -> str:
    """pycparser's AST of C statements, without coordinates."""
    types = "typedef int int64_t; "
    unit = c_parser.CParser().parse(f"{types}void f(void) {{ {text} }}")
    out = io.StringIO()
    unit.ext[-1].body.show(buf=out, showcoord=False)
    return out.getvalue()


def test_inlined_blur_label_is_two_short_lines_and_the_tooltip_the_whole_statement() -> None:
    comp = spf.kernels.blur2d()
    comp.pdfg().inline("bx")
    source = comp.stmt("s1").source
    assert len(source) > 200  # the producer's expression three times over
    label, tooltip = nodes(comp.pdfg().to_dot())["s1"]
    assert label[0] == "s1"
    text = label[1:]
    assert len(text) == LINES
    assert all(len(line) <= LINE for line in text)
    shown = " ".join(text)
    assert shown.startswith("out(i, j) = ((img(i, j) + img(i, j + 1) + img(i, j + 2)) / 3.0")
    assert text[-1].endswith("…")
    name, whole = tooltip.split("\n")[0].split(": ", 1)
    assert name == "s1"
    assert "((" not in whole.removeprefix("out(i, j) = (("), "only the parentheses C needs"
    assert c_tree(whole) == c_tree(source.replace("$", "")), "the same statement"
    assert shown.rstrip(" …") in whole
    assert tooltip.split("\n")[1].startswith("{[i, j] :"), "the domain follows"


def test_short_statements_are_shown_as_written() -> None:
    label, tooltip = nodes(spf.kernels.spmv_csr().pdfg().to_dot())["s0"]
    assert label == ["s0", "y(i) += A(k) * x(j);"]
    assert tooltip.startswith("s0: {[i, k, j] :")
    label, _ = nodes(spf.kernels.blur2d().pdfg().to_dot())["s0"]
    assert label == ["s0", "bx(i, j) = (img(i, j) + img(i, j+1) + img(i, j+2)) / 3.0;"]
    assert len(label[1]) <= WIDTH


@pytest.mark.parametrize(
    "text",
    [
        "$y$(i) = ((($a$((i)) & ($b$((i)))) == (($c$(i)))) ? (($a$(i)) - (-($b$(i)))) : ((0)));",
        "$y$(i) = ((double)($n$(i)) / (((int64_t)($m$((i + 1))) * (($w$((i)))[(2)]))));",
        "$u$(i) -= ((($L$((k)) * ($u$((col((k))))))) / (($d$((i))) + (($d$((i))) * (1.5e-3))));",
        "if ((($x$(i)) > (0))) { $y$(i) = (($x$(i)) * ($x$(i))); } else $y$(i) = (-(($x$(i))));",
    ],
)
def test_short_form_is_the_same_statement(text: str) -> None:
    label, full = statement_text(text)
    plain = text.replace("$", "")
    assert len(full) < len(plain)
    assert c_tree(full) == c_tree(plain)
    lines = label.split("\n")
    assert len(lines) <= LINES
    assert all(len(line) <= LINE for line in lines)
    assert " ".join(lines).rstrip(" …") in full


def test_text_pycparser_cannot_read_is_only_cut() -> None:
    text = "y = " + " + ".join(f"a{k} @ b{k}" for k in range(20)) + ";"
    label, full = statement_text(text)
    assert full == text
    assert label.endswith("…")
    assert label.replace("\n", " ").rstrip(" …") in text
