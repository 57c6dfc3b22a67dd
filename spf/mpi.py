"""Launching Python programs on local MPI ranks (``mpiexec``) with a timeout.

``spf.mpi.run("examples/mpi_blur.py", 4)`` runs ``mpiexec -n 4 python examples/mpi_blur.py``
and returns the completed process (output captured). The same from a shell::

    python -m spf.mpi -n 4 examples/mpi_blur.py [script arguments]

What it adds to a bare ``mpiexec``: Open MPI's ``--oversubscribe`` (more ranks than cores, as
on a 2-core machine), the two ``OMPI_ALLOW_RUN_AS_ROOT*`` variables when running as root,
the current Python interpreter run as ``python -m mpi4py script`` (an uncaught exception on
one rank then aborts the whole job instead of leaving the other ranks waiting for it), and a
timeout after which the whole job (``mpiexec`` and every rank) is killed, so a deadlocked
program fails instead of hanging. ``mpiexec`` runs in a session of its own, and the job (its
whole process group) is also killed when the launcher itself is interrupted (Ctrl-C) or gets
SIGTERM: :func:`run` handles SIGTERM while it waits, then restores the previous handler and
raises the signal again, so the launcher's own disposition still applies. Importing this
module does not import mpi4py.

Inside a program, :func:`report` prints what each rank checked, from rank 0 in rank order;
:func:`scatter_csr` gives a rank its rows of a matrix as the keyword arguments of a
row-distributed kernel (API.md §19) and :func:`gather` puts a distributed vector back
together on every rank.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spf.errors import ArgumentError, SpfError

DEFAULT_TIMEOUT = 120.0
"""Seconds a launched job may run before it is killed."""


class MPILaunchError(SpfError):
    """``mpiexec`` is missing or cannot run."""


class MPITimeoutError(MPILaunchError):
    """The job ran past its timeout and was killed."""


@functools.cache
def _is_open_mpi(mpiexec: str) -> bool:
    try:
        done = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    text = done.stdout + done.stderr
    return "Open MPI" in text or "OpenRTE" in text


def command(
    script: str | os.PathLike[str],
    n: int,
    args: Sequence[str] = (),
    *,
    python: str | None = None,
    mpiexec: str = "mpiexec",
    mpi4py: bool = True,
) -> list[str]:
    """The ``mpiexec`` command line that runs ``script`` on ``n`` ranks: under
    ``python -m mpi4py`` (an uncaught exception on one rank aborts them all), or, with
    ``mpi4py=False``, as ``python script`` (an interpreter without mpi4py, e.g. the system
    python running petsc4py; a rank that fails leaves the others to the timeout)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError(f"the number of ranks must be a positive int, got {n!r}")
    exe = shutil.which(mpiexec)
    if exe is None:
        raise MPILaunchError(
            f"{mpiexec!r} not found on PATH; install an MPI (e.g. `apt-get install openmpi-bin "
            "libopenmpi-dev`)"
        )
    argv = [exe, "-n", str(n)]
    if _is_open_mpi(exe):
        argv.append("--oversubscribe")
    runner = ["-m", "mpi4py"] if mpi4py else []
    return [*argv, python or sys.executable, *runner, os.fspath(script), *args]


def environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) plus what ``mpiexec`` needs here (root)."""
    env = dict(os.environ if base is None else base)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def run(
    script: str | os.PathLike[str],
    n: int,
    args: Sequence[str] = (),
    *,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    capture: bool = True,
    python: str | None = None,
    mpiexec: str = "mpiexec",
    mpi4py: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` on ``n`` local ranks and wait for it (at most ``timeout`` seconds).

    Returns the completed process (``returncode``, and ``stdout``/``stderr`` when
    ``capture``); the caller checks the return code. Raises :class:`MPITimeoutError` when the
    job runs past ``timeout`` (the job is killed; the message holds its output so far).
    """
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}")
    argv = command(script, n, args, python=python, mpiexec=mpiexec, mpi4py=mpi4py)
    pipe = subprocess.PIPE if capture else None
    proc = subprocess.Popen(
        argv,
        stdout=pipe,
        stderr=pipe,
        text=True,
        env=environment(env),
        start_new_session=True,  # one process group: mpiexec and its ranks
    )
    try:
        with _terminated_on_sigterm():
            out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        partial, partial_err = _kill(proc)
        tail = ((partial or "") + (partial_err or ""))[-4000:]
        raise MPITimeoutError(
            f"{' '.join(argv)} did not finish within {timeout:g} s and was killed "
            f"(a deadlock, or pass a longer timeout); output so far:\n{tail}"
        ) from None
    except _Terminated:
        _kill(proc)
        signal.raise_signal(signal.SIGTERM)  # now the launcher's own SIGTERM disposition
        raise MPILaunchError(
            f"{' '.join(argv)} was killed: the launching process received SIGTERM"
        ) from None
    finally:
        if proc.poll() is None:  # interrupted (KeyboardInterrupt, SystemExit): no orphans
            _kill(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


class _Terminated(BaseException):
    """SIGTERM reached the launcher while a job ran (raised by the temporary handler)."""


@contextlib.contextmanager
def _terminated_on_sigterm() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` inside the block (so the caller kills the job);
    the previous handler is back afterwards. Left alone outside the main thread (Python
    only sets handlers there) and where SIGTERM is ignored or handled outside Python."""
    previous = signal.getsignal(signal.SIGTERM)
    if (
        threading.current_thread() is not threading.main_thread()
        or previous is None
        or previous == signal.SIG_IGN
    ):
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _kill(proc: subprocess.Popen[str]) -> tuple[str | None, str | None]:
    """Stop the job: SIGTERM to mpiexec's process group (it stops its ranks), then SIGKILL
    to whatever is left of its session (Open MPI puts each rank in a process group of its
    own, inside the session ``start_new_session`` gave mpiexec)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.communicate(timeout=3.0)
    except subprocess.TimeoutExpired:
        pass
    finally:  # ranks left behind, or the whole job when stuck
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _session(proc.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    try:
        return proc.communicate(timeout=10.0)
    except subprocess.TimeoutExpired:
        return None, None


def _session(sid: int) -> list[int]:
    """The processes of session ``sid`` (from ``/proc``; none where there is no ``/proc``)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[3]) == sid:
                pids.append(int(stat.parent.name))
    return pids


def report(comm: Any, line: str, ok: bool = True) -> bool:
    """What every rank checked, printed by rank 0 in rank order (``rank 1: line``, with
    ``FAILED`` after a check that did not pass); True on every rank when every rank's check
    passed. Collective: every rank of ``comm`` (an mpi4py communicator) calls it."""
    results = comm.allgather((bool(ok), str(line)))
    if comm.Get_rank() == 0:  # one write: another rank's output cannot split a line
        sys.stdout.write(
            "".join(
                f"rank {rank}: {text}" + ("" if passed else " -- FAILED") + "\n"
                for rank, (passed, text) in enumerate(results)
            )
        )
        sys.stdout.flush()
    return all(passed for passed, _ in results)


@dataclass(frozen=True)
class Partition:
    """Who owns each of ``size`` global entries among ``ranks`` ranks."""

    size: int
    ranks: int
    owner: Any | None = None
    """The rank of each entry (None: contiguous blocks)."""
    _local: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)

    def cuts(self) -> Any:
        base, extra = divmod(self.size, self.ranks)
        counts = np.full(self.ranks, base, dtype=np.int64)
        counts[:extra] += 1
        return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def count(self, rank: int) -> int:
        if self.owner is None:
            cuts = self.cuts()
            return int(cuts[rank + 1] - cuts[rank])
        return int(np.count_nonzero(self.owner == rank))

    def owned(self, rank: int) -> Any:
        """The global indices ``rank`` owns, in increasing order."""
        if self.owner is None:
            cuts = self.cuts()
            out: Any = np.arange(cuts[rank], cuts[rank + 1], dtype=np.int64)
            return out
        found: Any = np.flatnonzero(self.owner == rank).astype(np.int64)
        return found

    def owner_of(self, index: Any) -> Any:
        if self.owner is None:
            at: Any = np.searchsorted(self.cuts(), index, side="right") - 1
            return at.astype(np.int64)
        owners: Any = self.owner[index]
        return owners.astype(np.int64)

    def far(self, rank: int) -> Any:
        """1 for each global entry ``rank`` does not own (int8, the inspector's input)."""
        far = np.ones(self.size, dtype=np.int8)
        far[self.owned(rank)] = 0
        return far

    def local_index(self, rank: int, index: Any) -> Any:
        """The local numbers of global entries that ``rank`` owns."""
        if self.owner is None:
            shifted: Any = index - self.cuts()[rank]
            return shifted.astype(np.int64)
        if rank not in self._local:
            position = np.zeros(self.size, dtype=np.int64)
            owned = self.owned(rank)
            position[owned] = np.arange(owned.size, dtype=np.int64)
            self._local[rank] = position
        local: Any = self._local[rank][index]
        return local


def _partition(comm: Any, size: int, owner: Any) -> tuple[Partition, Any]:
    """``(Partition, owner as int64 or None)`` of ``size`` entries over ``comm``'s ranks."""
    ranks = comm.Get_size()
    if owner is None:
        return Partition(size, ranks), None
    own = np.asarray(owner)
    if own.ndim != 1 or own.dtype.kind not in "iu" or own.shape[0] != size:
        raise ArgumentError(
            f"owner must be a 1-D integer array with one rank per row ({size}), got "
            f"{own.dtype} with shape {own.shape}"
        )
    if own.size and (int(own.min()) < 0 or int(own.max()) >= ranks):
        raise ArgumentError(f"owner is not a partition: its values must be ranks 0..{ranks - 1}")
    own64 = np.ascontiguousarray(own, dtype=np.int64)
    return Partition(size, ranks, own64), own64


def scatter_csr(
    matrix: Any, comm: Any, owner: Any = None, *, index_dtype: str = "int32"
) -> dict[str, Any]:
    """This rank's keyword arguments of a row-distributed CSR kernel (API.md §19).

    ``matrix`` is the global ``scipy.sparse`` matrix (the same on every rank); the rank
    gets its rows (a block of rows, or those ``owner`` gives it) with global column indices:
    ``A``, ``rowptr``, ``col`` (``index_dtype``), ``N`` and ``M`` (global), ``NNZ`` (this
    rank's), and ``owner`` when one is given. Vectors are the caller's (their local parts:
    ``v[spf.mpi.owned_rows(n, comm, owner)]``).
    """
    import importlib

    sp: Any = importlib.import_module("scipy.sparse")
    if not sp.issparse(matrix):
        raise ArgumentError(f"scatter_csr: expected a scipy.sparse matrix, got {type(matrix)}")
    from spf.sparse_checks import check_structure

    check_structure(matrix, "scatter_csr")  # indices scipy's constructors leave unchecked
    if np.dtype(index_dtype).kind not in "iu" or np.iscomplexobj(matrix.data[:0]):
        raise ArgumentError(
            f"scatter_csr: expected a real matrix and an integer index_dtype (int32 or "
            f"int64), got {matrix.dtype} and {index_dtype!r}"
        )
    csr = sp.csr_array(matrix.astype(np.float64))  # before duplicates are summed (int8: -56)
    csr.sort_indices()
    n, m = csr.shape
    part, own = _partition(comm, n, owner)
    rows = csr[part.owned(comm.Get_rank())]
    args: dict[str, Any] = {
        "A": np.ascontiguousarray(rows.data, dtype=np.float64),
        "rowptr": rows.indptr.astype(index_dtype),
        "col": rows.indices.astype(index_dtype),
        "N": int(n),
        "M": int(m),
        "NNZ": int(rows.nnz),
    }
    if own is not None:
        args["owner"] = own
    return args


def scatter(
    matrix: Any, fmt: Any, comm: Any, owner: Any = None, *, index_dtype: str = "int32"
) -> dict[str, Any]:
    """This rank's keyword arguments of :func:`spmv` ``(fmt)``, the SpMV of a built-in
    format distributed over the ranks (API.md §19, docs/backends/mpi.md).

    ``matrix`` is the global ``scipy.sparse`` matrix (the same on every rank). CSR, ELL and
    SELL(C, sigma): the rank's rows packed in ``fmt`` with global column indices (padding
    slots read an entry of ``x`` the rank owns); COO: the entries of its rows, global row and
    column indices; CSC: the columns whose entries of ``x`` it owns, global row indices; DIA
    and BDIA(R): the format of its rows (local row plus offset is the global column);
    BCSR(r, c): its block rows (``y`` and ``x`` split by blocks of ``r`` and ``c``
    entries, :func:`owned_rows` with ``block``; ``owner`` has one rank per block row). The
    sizes ``N``, ``M`` are global, the counts (``NNZ``, ``W``, ``NC``, ``NV``, ``ND``, ...)
    the rank's;
    ``owner`` is added when one is given. One function for every format, as
    :func:`spf.sparse.format_args` is: what differs (which loop is split, what a rank
    holds) is the format's, kept in :mod:`spf.mpi_formats`. ``scatter(A, CSR, comm)``
    is :func:`scatter_csr` ``(A, comm)``.
    """
    from spf import mpi_formats as split

    r, c = split.blocks(fmt)  # BCSR(r, c): y and x split by blocks of r and c entries
    n, m = _shape(matrix, "scatter")
    n, m = -(-n // r), -(-m // c)
    part, own = _partition(comm, n, owner)
    xpart = part if own is not None and n == m else Partition(m, comm.Get_size())
    args = split.scatter(matrix, fmt, part, xpart, comm.Get_rank(), index_dtype)
    if own is not None:
        args["owner"] = own
    return args


def spmv(fmt: Any, *, index_dtype: str | None = None) -> Any:
    """``spf.kernels.spmv(fmt)`` with ``distribute_rows`` applied as :func:`scatter` splits
    ``fmt``: loop ``i`` (rows) for CSR, ELL, SELL(C, sigma), DIA and BDIA(R); ``ib`` (block
    rows) for BCSR(r, c); ``k`` (entries, each summed at its row's owner) for COO; ``j``
    (columns, partial sums sent to the rows' owners) for CSC. ``y`` and ``x`` are split by
    their entries (BCSR: by blocks)."""
    from spf import mpi_formats as split

    return split.spmv(fmt, index_dtype)


def _shape(matrix: Any, what: str) -> tuple[int, int]:
    import importlib

    sp: Any = importlib.import_module("scipy.sparse")
    if not sp.issparse(matrix):
        raise ArgumentError(f"{what}: expected a scipy.sparse matrix, got {type(matrix)}")
    n, m = matrix.shape
    return int(n), int(m)


def _count(value: Any, what: str, least: int) -> int:
    """``value`` as an int of at least ``least``; ArgumentError naming ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ArgumentError(f"{what} must be an int >= {least}, got {value!r}")
    return int(value)


def owned_rows(size: int, comm: Any, owner: Any = None, *, block: int = 1) -> Any:
    """The global indices this rank owns of a distributed vector of ``size`` entries; with
    ``block``, a vector of ``size // block`` blocks split by block (BCSR(r, c)'s ``y`` with
    ``block=r``: ``owner`` then has one rank per block)."""
    size = _count(size, "owned_rows: size", 0)
    block = _count(block, "owned_rows: block", 1)
    part, _ = _partition(comm, size // block, owner)
    blocks = part.owned(comm.Get_rank())
    if block == 1:
        return blocks
    return (blocks[:, None] * block + np.arange(block)).ravel()


def gather(v_loc: Any, comm: Any, owner: Any = None, *, block: int = 1) -> Any:
    """The global vector, on every rank, from each rank's entries ``v_loc`` (in its
    global order: contiguous blocks, or the rows ``owner`` gives it); ``block`` as for
    :func:`owned_rows`."""
    block = _count(block, "gather: block", 1)
    local = np.ascontiguousarray(v_loc)
    whole = local.ndim == 1 and local.shape[0] % block == 0
    # every rank learns whether every rank's piece is one (a rank raising alone would leave
    # the others waiting in the collective)
    counts = comm.allgather(int(local.shape[0]) if whole else -1 - local.ndim)
    bad = next((r for r, c in enumerate(counts) if c < 0), None)
    if bad is not None:
        shape = f"shape {local.shape}" if bad == comm.Get_rank() else "another shape"
        raise ArgumentError(
            f"gather: rank {bad}'s v_loc must be a vector"
            + (f" of whole blocks of {block}" if block > 1 else "")
            + f", got {shape}"
        )
    if block != 1:  # each entry of the blocks gathered, then interleaved
        rows = np.reshape(local, (-1, block))
        pieces = [gather(rows[:, t].copy(), comm, owner) for t in range(block)]
        return np.stack(pieces, axis=1).ravel()
    size = int(sum(counts))
    part, _ = _partition(comm, size, owner)
    wrong = [r for r, c in enumerate(counts) if c != part.count(r)]
    if wrong:
        raise ArgumentError(
            f"gather: rank {wrong[0]} passed {counts[wrong[0]]} entries but owns "
            f"{part.count(wrong[0])} of the {size}"
        )
    pieces = comm.allgather(local)
    out = np.empty(size, dtype=local.dtype)
    for r, piece in enumerate(pieces):
        out[part.owned(r)] = piece
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m spf.mpi -n N [--timeout S] script.py [args...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m spf.mpi", description="run a Python program on N local MPI ranks"
    )
    parser.add_argument("-n", "--ranks", type=int, required=True, help="number of ranks")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    if ns.script != "-" and not Path(ns.script).exists():
        print(f"spf.mpi: no such file {ns.script!r}; give the Python program to run",
              file=sys.stderr)  # fmt: skip
        return 2
    # SIGTERM (e.g. from `timeout`) becomes SystemExit, so run() still kills the job
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        done = run(ns.script, ns.ranks, ns.args, timeout=ns.timeout, capture=False)
    except SpfError as err:
        print(f"spf.mpi: {err}", file=sys.stderr)
        return 124 if isinstance(err, MPITimeoutError) else 2
    except KeyboardInterrupt:  # run() has killed the job
        print("spf.mpi: interrupted; the job was killed", file=sys.stderr)
        return 128 + signal.SIGINT
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
