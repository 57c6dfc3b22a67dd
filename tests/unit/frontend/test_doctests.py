"""The examples in the docstrings of :mod:`spf.frontend` run."""

from __future__ import annotations

import doctest

import spf.frontend


def test_frontend_docstring_examples() -> None:
    result = doctest.testmod(spf.frontend, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
