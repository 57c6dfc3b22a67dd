"""A data space's extent is read for its symbolic constants without building a set when it
is a plain sum; the names (and the errors) are those of the set ``{[_x]: _x = <extent>}``."""

from __future__ import annotations

import pytest

from spf import Set
from spf.errors import ParseError
from spf.sets.set_like import expression_params

EXTENTS = [
    "N", "N + 1", "nnz+1", "coarse_nlev + 1", "N - M + 2", "-N", "(N + 1)", "7",
    "2*N", "rowptr(N)", "N - N", "N % 2", "floor(N / 2)", "N + _x",
]  # fmt: skip


@pytest.mark.parametrize("text", EXTENTS)
def test_expression_params_match_the_set_of_the_extent(text: str) -> None:
    assert expression_params(text) == Set(f"{{[_x]: _x = {text}}}").params


@pytest.mark.parametrize("text", ["floor", "__n", "N*M", "and", "N +"])
def test_expression_params_raise_what_the_set_raises(text: str) -> None:
    with pytest.raises(ParseError) as want:
        Set(f"{{[_x]: _x = {text}}}")
    with pytest.raises(ParseError) as got:
        expression_params(text)
    assert str(got.value) == str(want.value)
