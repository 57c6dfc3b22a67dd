"""``spf.sets.fast_parse`` reads well-formed set text into exactly the tree that lark and the
walker build (spans included), and leaves everything else to them: text lark rejects, text the
walker rejects (a bare expression as a condition, ``i < 2`` as an argument, too deep).

Checked on hand-picked texts, on texts drawn from the grammar (seeded) and on those texts with
tokens deleted, inserted and replaced; and ``import spf`` with a well-formed parse leaves lark
unloaded."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

import spf
from spf.errors import ParseError, SpfError
from spf.sets import fast_parse, syntax
from spf.sets.parse import MAX_DEPTH, _Builder, _check_paren_depth, _parse_tree


def lark_document(text: str) -> syntax.Document | None:
    """What lark and the walker make of ``text``; None when they reject it."""
    try:
        _check_paren_depth(text)
        return _Builder(text).document(_parse_tree(text))
    except (ParseError, RecursionError):
        return None


def agrees(text: str) -> tuple[bool, bool]:
    """(read here, agrees with lark): read text is lark's tree; rejected text is not read."""
    got = fast_parse.read(text, MAX_DEPTH)
    want = lark_document(text)
    if got is None:
        return False, True
    return True, want is not None and got == want


TEXTS = [
    "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
    "{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i + 1)}",
    "[N] -> {[i] -> [i, 0, k] : exists a : i = 2a} union {[i] -> [j, 1, 0] : j = i - 1}",
    "{[i] : (i < N || i > 2M) && floor(i / 2) >= ceil(j / 3) and 3f(i) mod 2 = 0}",
    "{[k] : exists (e0 = col(k)[1] : e0 > 0); [k] : k = 0}",
    "{ : N > 0 }",
    "[] -> {[i = 0, j] -> [j] : j == 2 (i + 1) - -3}",
    "{[i] : ((i + 1)) * 2 < N or (i > 0 and (i < 4 || i != 7))} || {[i] : true}",
    "{[i] : exists (a, b = floor((i)/2) : a = b + 1 && false)}",
    "{[i0, i1] : 3*i0 + i1 = i && 0 <= i1 < 3 && f(3*i0 + i1 + 1) % 4 >= 0}",
    "{[]}",
    "{[i]: 0 <= i < N}",
]

BAD = [
    "{[i]: 0 <= i < }",  # lark: unexpected '}'
    "{[i]: i}",  # the walker: a bare expression as a condition
    "{[i]: f(i < 2) > 0}",  # lark: an argument is a sum
    "{[i]: f((i < 2)) > 0}",  # the walker: a condition as an argument
    "{[0 <= i]}",  # the walker: a tuple entry with a comparison fixes a name
    "{[i = 0 = j]}",
    "{[i]: exists (a < 2: a = i)}",  # the walker: exists defines with '='
    "{[i]: i < 2 &}",  # lark: no token starts with '&'
    "{[i]: i ! 2}",
    "{[i]: i < 1" + "0" * 5000 + "}",  # the walker: too many digits for int()
    "{[i]: i < true}",
    "{[i]: floor i > 0}",
    "{[i]: f()[1] > 0}",
    "{[i]: f(i)[j] > 0}",
    "{[i] -> }",
    "{[i]} union",
    "{[i]: exists : i > 0}",
    "{[i]: i < ceil}",
]


@pytest.mark.parametrize("text", TEXTS)
def test_well_formed_text_is_read_as_lark_parses_it(text: str) -> None:
    assert lark_document(text) is not None
    assert agrees(text) == (True, True)


@pytest.mark.parametrize("text", BAD)
def test_text_lark_or_the_walker_rejects_is_left_to_them(text: str) -> None:
    assert lark_document(text) is None
    assert fast_parse.read(text, MAX_DEPTH) is None
    with pytest.raises(SpfError):
        spf.Set(text)


@pytest.mark.parametrize("n", [1, 60, 99, 100, 101, 150, 199, 200, 201, 300])
def test_deep_text_is_read_only_where_the_walker_accepts_it(n: int) -> None:
    texts = [
        "{[i]: " + "(" * n + "i < 1" + ")" * n + "}",
        "{[i]: i < " + " + ".join(["i"] * n) + "}",
        "{[i]: i < " + "-" * n + "i}",
        "{[i]: i < " + "f(" * n + "i" + ")" * n + "}",
        "{[i]: i < " + "(" * n + "i" + " + 1)" * n + "}",
        "{[i]: " + "exists a : " * n + "i < 1}",
        "{[i]: i < " + " * ".join(["(i + 1)"] * n) + "}",
    ]
    for text in texts:
        read, same = agrees(text)
        assert same, text[:60]
        assert read or n > 60, text[:60]  # shallow text is read here


# --------------------------------------------------------------------- texts from the grammar
class _Grammar:
    """Random sentences of ``parse._GRAMMAR`` (white space and keywords' spellings too)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, *options: str) -> str:
        return self.rng.choice(options)

    def space(self) -> str:
        return self.pick("", " ", "  ", "\n")

    def leaf(self) -> str:
        return self.pick("i", "j", "N", "e0", "x_1", "orx", "modi", "0", "1", "10", "007")

    def expr(self, d: int = 0) -> str:
        r = self.rng.random()
        if d > 4 or r < 0.25:
            return self.leaf()
        if r < 0.4:
            return f"{self.expr(d + 1)}{self.space()}{self.pick('+', '-')}{self.expr(d + 1)}"
        if r < 0.5:
            op = self.pick("*", "/", "%", " mod ")
            return f"{self.expr(d + 1)}{self.space()}{op}{self.space()}{self.expr(d + 1)}"
        if r < 0.58:
            return f"-{self.space()}{self.expr(d + 1)}"
        if r < 0.66:
            target = self.pick("i", "(j - 1)", "f(k)", "floor(i/2)", "col(k)[1]")
            return f"{self.pick('2', '3', '10')}{self.pick('', ' ')}{target}"
        if r < 0.8:
            args = ", ".join(self.expr(d + 1) for _ in range(self.rng.randint(1, 3)))
            return f"{self.pick('f', 'g', 'rowptr')}({args}){self.pick('', '', '[1]', '[0]')}"
        if r < 0.88:
            return f"{self.pick('floor', 'ceil')}({self.expr(d + 1)})"
        return f"({self.expr(d + 1)})"

    def formula(self, d: int = 0) -> str:
        r = self.rng.random()
        if d > 3 or r < 0.35:
            out = self.expr(d + 1)
            for _ in range(self.rng.randint(1, 3)):
                op = self.pick("<", "<=", "=", "==", "!=", ">", ">=")
                out += f"{self.space()}{op}{self.space()}{self.expr(d + 1)}"
            return out
        if r < 0.5:
            return f"{self.formula(d + 1)} {self.pick('&&', 'and')} {self.formula(d + 1)}"
        if r < 0.6:
            return f"{self.formula(d + 1)} {self.pick('||', 'or')} {self.formula(d + 1)}"
        if r < 0.7:
            return f"({self.formula(d + 1)})"
        if r < 0.76:
            return self.pick("true", "false")
        if r < 0.85:
            return f"exists {self.pick('a', 'a, b')} : {self.formula(d + 1)}"
        bind = self.pick("a", "a = floor(i/2)", "a, b = 2i + 1")
        return f"exists({bind}: {self.formula(d + 1)})"

    def tuple(self) -> str:
        entries = [
            self.expr() if self.rng.random() < 0.85 else f"i {self.pick('=', '==')} {self.expr()}"
            for _ in range(self.rng.randint(0, 3))
        ]
        return "[" + ", ".join(entries) + "]"

    def part(self) -> str:
        if self.rng.random() < 0.1:
            return f": {self.formula()}"
        out = self.tuple()
        if self.rng.random() < 0.4:
            out += f" -> {self.tuple()}"
        if self.rng.random() < 0.8:
            out += f" : {self.formula()}"
        return out

    def document(self) -> str:
        pieces = []
        for _ in range(self.rng.randint(1, 2)):
            params = self.pick("", "", "", "[N] -> ", "[] -> ", "[N, M] -> ")
            parts = " ; ".join(self.part() for _ in range(self.rng.randint(1, 2)))
            pieces.append(f"{params}{{{parts}}}")
        return f" {self.pick('union', '||', 'or')} ".join(pieces)


_TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+|<=|>=|==|!=|->|&&|\|\||.")
_VOCABULARY = ["i", "(", ")", "[", "]", "{", "}", "->", ":", ";", ",", "&&", "||", "and", "or",
               "union", "exists", "true", "false", "floor", "mod", "+", "-", "*", "<", "<=",
               "=", "==", "!=", "2", "2i", " ", "f(i)[1]", "-1", "@"]  # fmt: skip


def _mutated(rng: random.Random, text: str) -> str:
    parts = _TOKEN.findall(text)
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(parts) + 1)
        roll = rng.random()
        if roll < 0.3 and parts:
            del parts[min(k, len(parts) - 1)]
        elif roll < 0.6:
            parts.insert(k, rng.choice(_VOCABULARY))
        elif parts:
            parts[min(k, len(parts) - 1)] = rng.choice(_VOCABULARY)
    return "".join(parts)


@pytest.mark.parametrize("seed", range(4))
def test_texts_from_the_grammar_and_their_mutations_read_as_lark_parses_them(seed: int) -> None:
    grammar = _Grammar(seed)
    rng = random.Random(seed)
    read_any = rejected = 0
    for _ in range(300):
        text = grammar.document()
        assert agrees(text) == (True, True), text
        for _ in range(3):
            mutated = _mutated(rng, text)
            read, same = agrees(mutated)
            assert same, mutated
            read_any += read
            rejected += not read
    assert read_any  # both kinds were tried
    assert rejected


_CHILD = """
from spf import Set
from spf._lazy import is_loaded
Set("{[i, k] : 0 <= i < N && rowptr(i) <= k < rowptr(i + 1)}")
print(is_loaded("lark"))
try:
    Set("{[i]: 0 <= i < }")
except Exception as err:
    print(type(err).__name__, str(err).splitlines()[0])
print(is_loaded("lark"))
"""


def test_well_formed_text_never_loads_lark_and_an_error_still_reads_as_lark_says(
    fresh_python: Callable[..., list[str]],
) -> None:
    assert fresh_python(_CHILD) == [
        "False",
        "ParseError unexpected '}'; expected a name, a number or '('",
        "True",
    ]
