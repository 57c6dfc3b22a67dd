"""Checks ``spf.sparse`` runs on what users feed it before scipy sees it.

* :func:`mtx_source`: the bytes of a Matrix Market file that crash scipy's reader
  (``scipy.io.mmread``, fast_matrix_market; a segmentation fault, not an exception): a NUL
  byte, or a last line that ends in anything but a newline after a value (``"4 4 -7 "``,
  ``"4 4 -7\\r"``). A NUL is refused with its line; a missing final newline is added.
* :func:`check_structure`: the index arrays of a scipy CSR / CSC / BSR / COO matrix that
  scipy's constructors do not check (an index outside the matrix, a decreasing ``indptr``):
  the conversions that follow would drop or misplace such entries, or read past arrays.
"""

from __future__ import annotations

import bz2
import gzip
import io
import mmap
import os
import zlib
from typing import Any

import numpy as np

from spf.errors import ArgumentError


def _open(path: str) -> Any:
    """The file as a binary stream, decompressed as ``scipy.io.mmread`` does (by suffix)."""
    if path.endswith(".gz"):
        return gzip.open(path, "rb")
    if path.endswith(".bz2"):
        return bz2.open(path, "rb")
    return open(path, "rb")  # closed by the caller's with


def _nul_error(path: str, what: str, line: int, head: bytes) -> ArgumentError:
    hint = (
        "it is gzip-compressed: name it .mtx.gz"
        if line == 1 and head.startswith(b"\x1f\x8b")
        else "is this file binary or damaged? Write it again"
    )
    return ArgumentError(
        f"{what}: {path!r} line {line}: a NUL byte; a Matrix Market file is text: {hint}"
    )


def _plain_ends_in_newline(path: str, what: str) -> bool:
    """Whether the uncompressed file ends in a newline (or is empty); a NUL raises. Mapped,
    not read: one memchr over the bytes the reader reads next anyway."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return True
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            _check_head(data[:3], path, what)
            nul = data.find(b"\0")
            if nul >= 0:
                line = data[:nul].count(b"\n") + 1
                raise _nul_error(path, what, line, data[:2])
            return data[-1:] == b"\n"


def mtx_source(path: str, what: str) -> str | io.BytesIO:
    """``path``, or the file's (decompressed) bytes with a final newline added, for
    ``scipy.io.mmread``.

    A NUL byte or a UTF-8 byte order mark raises ``ArgumentError`` naming the file and
    line; a truncated or corrupt ``.gz`` / ``.bz2`` too. A ``.gz`` / ``.bz2`` is
    decompressed here, once (scipy reads the bytes from memory: as fast as its own stream)."""
    try:
        if not path.endswith((".gz", ".bz2")):
            if _plain_ends_in_newline(path, what):
                return path
            with open(path, "rb") as stream:
                return io.BytesIO(stream.read() + b"\n")
        with _open(path) as stream:
            data = stream.read()
        _check_head(data[:3], path, what)
        nul = data.find(b"\0")
        if nul >= 0:
            raise _nul_error(path, what, data.count(b"\n", 0, nul) + 1, data[:2])
        return io.BytesIO(data if data.endswith(b"\n") or not data else data + b"\n")
    except (OSError, EOFError, ValueError, zlib.error) as err:  # gzip / bz2: damaged or cut short
        raise ArgumentError(f"{what}: cannot read {path!r}: {err}") from err


def _check_head(head: bytes, path: str, what: str) -> None:
    if head == b"\xef\xbb\xbf":  # scipy: "Missing banner" on line 1
        raise ArgumentError(
            f"{what}: {path!r} line 1: the file starts with a UTF-8 byte order mark (BOM) "
            "before %%MatrixMarket; save it without one"
        )


def _bad_structure(m: Any) -> str | None:
    """What is wrong with the index arrays of ``m`` (CSR, CSC, BSR or COO), or None."""
    shape = tuple(int(d) for d in m.shape)
    if m.format in ("csr", "csc", "bsr"):
        r, c = m.blocksize if m.format == "bsr" else (1, 1)
        major, minor = (shape[1], shape[0]) if m.format == "csc" else (shape[0] // r, shape[1] // c)
        indptr, indices = np.asarray(m.indptr), np.asarray(m.indices)
        if indptr.ndim != 1 or len(indptr) != major + 1:
            return f"indptr has {indptr.size} entries, not {major + 1}"
        if major >= 0 and int(indptr[0]) != 0:
            return f"indptr[0] is {int(indptr[0])}, not 0"
        steps = np.diff(indptr)
        if steps.size and int(steps.min()) < 0:
            k = int(np.argmax(steps < 0))  # the first step down
            return f"indptr decreases from indptr[{k}] = {int(indptr[k])} to {int(indptr[k + 1])}"
        nnz = int(indptr[-1])
        if nnz > min(indices.size, len(m.data)):
            return f"indptr[-1] = {nnz} but only {indices.size} indices / {len(m.data)} values"
        return _outside(indices[:nnz], minor, "index")
    if m.format == "coo":
        coords = getattr(m, "coords", None) or (m.row, m.col)
        for axis, (idx, extent) in enumerate(zip(coords, shape, strict=False)):
            idx = np.asarray(idx)
            if idx.size != len(m.data):
                return f"{idx.size} axis-{axis} indices but {len(m.data)} values"
            bad = _outside(idx, extent, f"axis-{axis} index")
            if bad:
                return bad
    return None


def _outside(idx: np.ndarray[Any, Any], extent: int, what: str) -> str | None:
    if not idx.size or (int(idx.min()) >= 0 and int(idx.max()) < extent):
        return None
    wrong = np.flatnonzero((idx < 0) | (idx >= extent))
    if not wrong.size:
        return None
    k = int(wrong[0])
    return f"stored entry {k} has {what} {int(idx[k])}, outside 0..{extent - 1}"


def check_structure(m: Any, what: str) -> None:
    """``ArgumentError`` when the index arrays of scipy matrix ``m`` are malformed."""
    problem = _bad_structure(m)
    if problem:
        raise ArgumentError(
            f"{what}: the {m.format.upper()} matrix is malformed: {problem}; build it with "
            "scipy's constructors from valid indices (m.check_format(full_check=True) says "
            "what is wrong)"
        )


def physical_memory() -> int:
    """Bytes of memory of this machine (the address space where sysconf cannot say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return 2**63


def check_rows_fit(rows: int, path: str, what: str) -> None:
    """``ArgumentError`` when the CSR row pointers of ``rows`` rows (int64) would take more
    than half of this machine's memory: a size line such as ``3000000000 3 1`` made the
    conversion allocate 24 GB (a MemoryError, or the machine filled up)."""
    need = (rows + 1) * 8
    if need > physical_memory() // 2:
        raise ArgumentError(
            f"{what}: {path!r}: the size line gives {rows} rows, whose CSR row pointers alone "
            f"take {need / 2**30:.3g} GiB, more than half of this machine's memory; "
            "check the size line (line 2 after the comments)"
        )


def check_fits(
    nbytes: int,
    what: str,
    layout: str,
    advice: str = "the matrix does not suit this format: use CSR or SELL (spf.formats.tune "
    "chooses one)",
) -> None:
    """``ArgumentError`` before allocating ``layout`` (``nbytes`` of padded arrays) when it
    would take more than half of this machine's memory: ELL / DIA of a matrix with one dense
    row (arrow.mtx: 26 GB / 35 GB for 139498 entries) filled the machine."""
    memory = physical_memory()
    if nbytes > memory // 2:
        raise ArgumentError(
            f"{what}: {layout} take {nbytes / 2**30:.3g} GiB, more than half of this "
            f"machine's {memory / 2**30:.3g} GiB of memory; {advice}"
        )


__all__ = ["check_fits", "check_rows_fit", "check_structure", "mtx_source", "physical_memory"]
