"""Sparse format transformations expressed with spf relations and generated inspectors.

A format transformation here has three parts, all spf objects:

* a :class:`~spf.sets.Relation` with uninterpreted functions from the source format's
  iteration space to the target format's (CSR ``[i, k]`` to SELL ``[c, j, r]``);
* inspector :class:`~spf.Computation` objects, written as spf statements and generated and
  compiled by spf, that build the target format's index and value arrays from the source's;
* the executor: a :class:`~spf.Computation` over the transformed iteration space, with the
  target's index arrays as UFs, scheduled and compiled like any other.

>>> from spf.formats import sell
>>> fmt = sell(8, 32)
>>> fmt.relation.in_arity, fmt.relation.out_arity
(2, 3)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spf.formats.builtin import BCSR, BDIA, SELL, builtin
from spf.formats.convert import Conversion, ConversionKernel, convert
from spf.formats.format import Format
from spf.formats.sell_c_sigma import SellFormat, SellMatrix, sell
from spf.formats.tensor import CSF

__all__ = [
    "BCSR",
    "BDIA",
    "COO",
    "CSC",
    "CSF",
    "CSR",
    "DIA",
    "ELL",
    "SELL",
    "Conversion",
    "ConversionKernel",
    "Format",
    "SellFormat",
    "SellMatrix",
    "convert",
    "sell",
    "tune",
]

if TYPE_CHECKING:
    from spf.formats.builtin import CSC, CSR, DIA, ELL
    from spf.formats.tensor import MatrixCOO
    from spf.formats.tuner import tune

    COO: MatrixCOO


def __getattr__(name: str) -> Any:
    """``COO``, ``CSR``, ``CSC``, ``DIA``, ``ELL``: built on first use; ``tune``
    (:mod:`spf.formats.tuner`) imported on first use."""
    if name in ("COO", "CSR", "CSC", "DIA", "ELL"):
        return builtin(name)
    if name == "tune":
        from spf.formats.tuner import tune

        return tune
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
