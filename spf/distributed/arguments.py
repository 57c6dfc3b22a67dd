"""Checking a distributed kernel's arguments on each rank, and the ranks' agreement.

Each rank checks its own arguments (:func:`array`, :func:`scalar`); then one
``MPI_Allreduce(MAX)`` of a few integers (:func:`flags`, :func:`agreed`; while the
communicator is armed, the same integers sent to every rank with the exchange by the
executor or :func:`spf.distributed.protocol.drain`) tells every rank whether any rank
failed, whether any plan is stale, whether any rank only drained, and whether all ranks call
the same computation with the same global extents and owner array. Only when something is wrong are
the texts gathered, and :func:`agree` raises the same :class:`~spf.errors.ArgumentError` on
every rank: bad input never leaves a rank waiting in an exchange the others do not post.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.errors import ArgumentError
from spf.runtime.checks import real_constant
from spf.runtime.checksum import digest as digest_array

AGREEMENT = 9
"""The agreement's integers: a status, a stale flag, a drained flag, three hashes and their
negations."""

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.codegen.signature import Arg


def scalar(kernel: str, a: Arg, value: Any) -> Any:
    """A parameter (an int) or a constant of a floating type."""
    if a.ctype in ("double", "float"):
        return real_constant(kernel, a.name, value)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentError(f"{kernel}: parameter {a.name} must be an int")
    return int(value)


def nonempty(arr: np.ndarray) -> np.ndarray:
    return arr if arr.size else np.zeros(1, dtype=arr.dtype)


def crc(arr: np.ndarray) -> int:
    """The checksum of an index array's content (:func:`spf.runtime.checksum.digest`: XXH3-64,
    the same number on every rank; ~1.4 ms for a rank's 12 MB of CSR index arrays where
    zlib's CRC-32 took 15-34 ms, so a ``check=True`` call of a 1M-row product no longer
    costs several products)."""
    return digest_array(np.ascontiguousarray(arr)) if arr.size else 0


def owner_crc(owner: Any) -> int | None:
    if owner is None:
        return None
    own = np.ascontiguousarray(np.asarray(owner))
    return crc(own) ^ (own.size << 1)


def array(kernel: str, a: Arg, value: Any, written: bool | None = None) -> np.ndarray:
    """``value`` checked as argument ``a`` (``written``: whether the kernel writes it;
    default: ``a`` is not ``const``)."""
    if not isinstance(value, np.ndarray):
        raise ArgumentError(
            f"{kernel}: {a.name} must be a numpy array of {a.dtype}, got {type(value).__name__}"
        )
    if value.dtype != np.dtype(a.dtype):
        raise ArgumentError(
            f"{kernel}: {a.name} has dtype {value.dtype}; the computation declares {a.dtype}"
        )
    rank = len(a.shape) if a.shape is not None else (a.rank or 1)  # a UF: its arity
    if value.ndim != max(rank, 1) and not (rank == 0 and value.size == 1):
        raise ArgumentError(
            f"{kernel}: {a.name} has {value.ndim} dimensions; the computation declares {rank}"
        )
    if not value.flags.c_contiguous:
        raise ArgumentError(
            f"{kernel}: {a.name} is not contiguous; pass np.ascontiguousarray({a.name})"
        )
    if (not a.const if written is None else written) and not value.flags.writeable:
        raise ArgumentError(f"{kernel}: {a.name} is written but read-only")
    return value


def no_overlap(kernel: str, arrays: dict[str, np.ndarray], written: frozenset[str]) -> None:
    """ArgumentError when an array the kernel writes shares memory with another argument
    (``y=v, x=v``): the C arguments are ``restrict``, and the rows would read entries other
    rows already overwrote, as the single-process kernel refuses too."""
    for name in sorted(written & arrays.keys()):
        mine = arrays[name]
        if mine.size == 0:
            continue
        for other, value in arrays.items():
            if other != name and np.may_share_memory(mine, value):
                raise ArgumentError(
                    f"{kernel}: {name} and {other} share memory, but {name} is written and "
                    "the C arguments are restrict; pass a copy of one"
                )


def flags(mine: tuple[Any, ...], drained: bool = False) -> np.ndarray:
    """This rank's agreement integers (``AGREEMENT`` of them, the executor's ``spf_agree``):
    whether its call failed, whether its plan is stale, whether it only drained the armed
    exchange (:mod:`spf.distributed.protocol`), and the hashes of the computation, the
    global extents and the owner array, then their negations (so one ``MAX`` gives every
    field's maximum and minus its minimum)."""
    fields = [digest(v) for v in mine[1:4]]  # small ints: hash() of ints is not salted
    return np.array(
        [int(mine[0] is not None), int(bool(mine[4])), int(drained), *fields,
         *(-f for f in fields)],
        dtype=np.int64,
    )  # fmt: skip


def agreed(comm: Any, mine: tuple[Any, ...], name: str, top: np.ndarray | None = None) -> bool:
    """One ``MPI_Allreduce(MAX)`` of :func:`flags` (blocking: only while the communicator
    is not armed, when every rank takes this path), or its result ``top`` when the executor
    or :func:`spf.distributed.protocol.drain` already made it. Only when something is wrong
    are the ranks' texts gathered for the message (:func:`agree`, which raises on every
    rank). Returns whether any plan is stale."""
    from mpi4py import MPI

    if top is None:
        top = np.empty(AGREEMENT, dtype=np.int64)
        comm.Allreduce(flags(mine), top, op=MPI.MAX)
    n = (AGREEMENT - 3) // 2
    matched = all(top[3 + k] == -top[3 + n + k] for k in range(n))
    if top[0] or not matched:
        agree(comm.allgather(mine), name)
    return bool(top[1])


def digest(value: Any) -> int:
    """A hash of a field, the same on every rank for the same value: ints as they are, a
    tuple of ``(name, int)`` pairs by its ints (the names are the kernel's), text by
    blake2b (Python salts ``hash`` of text per process)."""
    if value is None:
        return -1
    if isinstance(value, int):
        return value & ((1 << 62) - 1)
    if isinstance(value, tuple):
        return hash(tuple(v for _, v in value)) & ((1 << 62) - 1)
    return int.from_bytes(hashlib.blake2b(str(value).encode(), digest_size=8).digest()) >> 2


def agree(everyone: Sequence[tuple[Any, ...]], name: str) -> None:
    """ArgumentError on every rank when any rank's status, computation or global sizes
    differ (every rank holds the same list, so every rank raises the same error)."""
    for r, (problem, *_) in enumerate(everyone):
        if problem is not None:
            raise ArgumentError(f"rank {r}: {problem}")
    fields = ("the computation (hash)", "global extents", "owner array (checksum)")
    for pos, what in enumerate(fields, start=1):
        values = [entry[pos] for entry in everyone]
        if any(v != values[0] for v in values):
            shown = ", ".join(f"rank {r}: {v}" for r, v in enumerate(values))
            raise ArgumentError(
                f"{name}: the ranks disagree on {what} ({shown}); every rank must call the "
                "same distributed kernel with the same global sizes and owner array"
            )


__all__ = [
    "AGREEMENT",
    "agree",
    "agreed",
    "array",
    "crc",
    "flags",
    "no_overlap",
    "nonempty",
    "owner_crc",
    "scalar",
]
