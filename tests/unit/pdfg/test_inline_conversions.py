"""PDFG ``inline`` keeps the conversion the producer's assignment makes: ``t(i) = e`` stores
``e`` in ``t``'s element type, so the value substituted for a read of ``t`` is ``(T)(e)``
unless ``e`` has that type already (audit19)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf

if TYPE_CHECKING:
    from pathlib import Path


def producer_consumer(ttype: str, value: str, consumer: str) -> spf.Computation:
    comp = spf.Computation("conv")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("t", ttype, shape=("N",))
    comp.add_stmt(spf.Stmt(f"$t$(i) = {value};", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    comp.add_stmt(spf.Stmt(consumer, "{[i]: 0 <= i < N}", "{[i]->[1,i,0]}"))
    return comp


CASES = [
    ("int32_t", "$x$(i) * 2.5", "$y$(i) = $t$(i) + 0.25;"),  # truncated to an integer
    ("double", "i", "$y$(i) = $t$(i) / 2;"),  # i / 2 would divide integers
    ("float", "$x$(i) / 3.0", "$y$(i) = $t$(i) * 3.0 - $x$(i);"),  # rounded to float
    ("uint8_t", "300 + i", "$y$(i) = $t$(i);"),  # wraps around
    ("int64_t", "$x$(i) > 0.5 ? 7 : -7", "$y$(i) = $t$(i) / 2;"),
    ("bool", "$x$(i) - 0.5", "$y$(i) = $t$(i) * 1.0;"),  # (e) != 0: no bool type in C99
]


@pytest.mark.parametrize(("ttype", "value", "consumer"), CASES)
def test_inlined_value_is_converted_to_the_temporary_s_type(
    ttype: str, value: str, consumer: str, tmp_path: Path
) -> None:
    x = np.random.default_rng(1).random(7) * 10
    want = np.zeros(7)
    ref = producer_consumer(ttype, value, consumer)
    t = np.zeros(7, dtype=np.dtype(spf.clang.NUMPY_OF_C[ttype]))
    ref.interpret(x=x.copy(), y=want, t=t, N=7)
    inlined = producer_consumer(ttype, value, consumer)
    inlined.pdfg().inline("t")
    got, interpreted = np.zeros(7), np.zeros(7)
    inlined.interpret(x=x.copy(), y=interpreted, N=7)
    inlined.compile(cache_dir=str(tmp_path))(x=x.copy(), y=got, N=7)
    assert np.array_equal(interpreted, want)
    assert np.array_equal(got, want)


def test_a_value_of_the_temporary_s_type_is_substituted_as_it_is() -> None:
    blur = spf.kernels.blur2d()
    blur.pdfg().inline("bx")
    assert "(double)" not in blur.stmt("s1").source
    same = producer_consumer("int32_t", "2 * i + 1", "$y$(i) = $t$(i) / 2;")
    same.pdfg().inline("t")
    assert "(int" in same.stmt("s1").source  # i is an int64_t iterator: converted
    kept = producer_consumer("double", "$x$(i) * 2", "$y$(i) = $t$(i) / 2;")
    kept.pdfg().inline("t")
    assert kept.stmt("s1").source == "$y$(i) = $x$(i) * 2 / 2;"
