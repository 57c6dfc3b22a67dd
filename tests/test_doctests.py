"""The examples in spf's docstrings (``>>>``) run and print what they show: a docstring's
example is documentation a reader copies, and one went stale unseen (einsum's loop structure,
after the row loop took the output's zeroing in)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import spf

ROOT = Path(spf.__file__).parent
MODULES = sorted(
    ".".join(("spf", *path.relative_to(ROOT).with_suffix("").parts)).removesuffix(".__init__")
    for path in ROOT.rglob("*.py")
    if ">>> " in path.read_text(encoding="utf-8")
)


def test_the_docstring_examples_are_found() -> None:
    assert len(MODULES) > 40


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
