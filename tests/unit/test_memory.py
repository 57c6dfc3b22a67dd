"""spf.memory: aligned numpy arrays for kernel arguments."""

from __future__ import annotations

import numpy as np
import pytest

from spf.errors import ArgumentError
from spf.memory import aligned_copy, aligned_empty, aligned_zeros, is_aligned


@pytest.mark.parametrize("align", [16, 64, 128, 4096])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 5), (1000, 3), (2, 0, 4)])
@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "float32"])
def test_aligned_empty_is_aligned_contiguous_and_writable(
    align: int, shape: tuple[int, ...], dtype: str
) -> None:
    a = aligned_empty(shape, dtype, align)
    assert a.shape == shape
    assert a.dtype == np.dtype(dtype)
    assert a.flags.c_contiguous
    assert a.flags.writeable
    assert a.ctypes.data % align == 0
    a[...] = 1
    assert np.all(a == 1)


def test_int_shape_and_zeros_and_copy() -> None:
    z = aligned_zeros(10)
    assert z.shape == (10,)
    assert not z.any()
    assert is_aligned(z)
    src = np.arange(12.0).reshape(3, 4)[:, ::2]  # non-contiguous input
    c = aligned_copy(src, align=256)
    assert np.array_equal(c, src)
    assert is_aligned(c, 256)
    assert c.flags.c_contiguous
    assert aligned_copy([1, 2], dtype="int64").dtype == np.int64


def test_many_arrays_each_aligned() -> None:
    # numpy's allocator often returns 16-byte offsets; every helper result must be aligned
    assert all(is_aligned(aligned_empty(n)) for n in range(1, 200, 7))


@pytest.mark.parametrize(
    ("shape", "align"), [((3,), 48), ((3,), 0), ((-1,), 64), ((2.5,), 64), ((3,), 4)]
)
def test_bad_arguments_raise(shape: tuple[object, ...], align: int) -> None:
    with pytest.raises(ArgumentError):
        aligned_empty(shape, "float64", align)  # type: ignore[arg-type]


def test_aligned_arrays_are_kernel_arguments() -> None:
    import spf.kernels

    kernel = spf.kernels.dense_mv().compile()
    a = aligned_copy(np.arange(6.0).reshape(2, 3))
    x, y = aligned_copy(np.ones(3)), aligned_zeros(2)
    kernel(y=y, A=a, x=x)
    assert np.array_equal(y, [3.0, 12.0])
