"""Plan fingerprints (spf.runtime.plan): what a plan records of the index arrays it inspected
and what a call compares (the content checksum only with ``check=True``)."""

from __future__ import annotations

import numpy as np

from spf.runtime.plan import differing, fingerprint


def test_fingerprint_records_sizes_dtypes_values_and_checksums() -> None:
    col = np.array([0, 0, 1], dtype=np.int32)
    (c, n) = fingerprint({"col": col, "N": 2, "other": 5}, ("N", "col"))
    assert n == ("col", "int32", (3,), n[3])
    assert n[3] != 0
    assert c[0] == "N"
    assert c[1] == "value"
    assert fingerprint({"N": np.int64(2)}, ("N",)) == (c,)  # a parameter by its value


def test_contents_change_the_checksum_only() -> None:
    a = np.arange(10, dtype=np.int64)
    b = a.copy()
    b[3] = 7
    full_a, full_b = fingerprint({"x": a}, ("x",)), fingerprint({"x": b}, ("x",))
    assert full_a != full_b
    assert full_a[0][:3] == full_b[0][:3]
    quick = fingerprint({"x": b}, ("x",), contents=False)
    assert quick[0] == ("x", "int64", (10,), None)
    assert fingerprint({"x": np.zeros(0, np.int32)}, ("x",))[0][3] == 0


def test_a_call_without_contents_compares_sizes_and_dtypes() -> None:
    a = np.arange(10, dtype=np.int64)
    inspected = fingerprint({"x": a, "N": 10}, ("N", "x"))
    changed = a.copy()
    changed[0] = 1
    assert differing(inspected, fingerprint({"x": a, "N": 10}, ("N", "x"))) is None
    assert differing(inspected, fingerprint({"x": changed, "N": 10}, ("N", "x"))) == "x"
    quick = fingerprint({"x": changed, "N": 10}, ("N", "x"), contents=False)
    assert differing(inspected, quick) is None  # without the checksum: same size and dtype
    shorter = fingerprint({"x": a[:9], "N": 10}, ("N", "x"), contents=False)
    assert differing(inspected, shorter) == "x"
    other_n = fingerprint({"x": a, "N": 11}, ("N", "x"), contents=False)
    assert differing(inspected, other_n) == "N"
    assert differing(inspected, fingerprint({"x": a.astype(np.int32), "N": 10}, ("N", "x"))) == "x"


def test_parameter_values_are_compared_exactly() -> None:
    """51924 and 14797705 print to texts of one CRC-32: a plan inspected for one is refused
    for the other (by the call's comparison too)."""
    import zlib

    from spf.runtime.plan import _differing_args

    assert zlib.crc32(b"51924") == zlib.crc32(b"14797705")
    inspected = fingerprint({"N": 51924}, ("N",))
    assert differing(inspected, fingerprint({"N": 14797705}, ("N",))) == "N"
    assert differing(inspected, fingerprint({"N": np.int64(51924)}, ("N",))) is None
    expected = tuple((name, None, shape, crc) for name, _, shape, crc in inspected)
    assert _differing_args(expected, {"N": 14797705}, True) == "N"
    assert _differing_args(expected, {"N": np.int32(51924)}, True) is None
