"""Running target "mpi" kernels: build with ``mpicc``, call with an mpi4py communicator.

``compile(target="mpi")`` reaches :func:`compile_kernel`, which compiles the C + MPI source
with ``mpicc`` (same flags and on-disk cache as gcc builds, :mod:`spf.runtime.build`) and
returns an :class:`MPIKernel`. Inside an MPI program every rank calls it with its own local
arrays::

    kernel(comm=MPI.COMM_WORLD, a=a, P=MPI.COMM_WORLD.Get_size())

The generated function takes ``MPI_Comm comm`` first. The communicator's handle comes from
mpi4py (``MPI._handleof``); the library is loaded through cffi's ABI mode with the handle
declared as an integer of ``MPI_Comm``'s size (a pointer in Open MPI, an ``int`` in MPICH), so
no MPI header is needed at load time. mpi4py is imported only here, when an MPI kernel is
built or called.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from spf.codegen.mpi import COMM, REQUESTS, mpi_prototype
from spf.codegen.signature import Signature
from spf.errors import ArgumentError, CompileError, SpfError, ToolchainError
from spf.runtime.build import build
from spf.runtime.kernel import Kernel
from spf.runtime.threads import default_team

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spf.codegen.signature import Arg
    from spf.codegen.unit import TranslationUnit

MPICC = "mpicc"

WRAPPER_ENVIRONMENT = (
    "OMPI_CC", "OMPI_CFLAGS", "OMPI_CPPFLAGS", "OMPI_LDFLAGS", "OMPI_LIBS", "MPICH_CC",
    "MPICH_CFLAGS", "I_MPI_CC",
)  # fmt: skip
"""The variables through which an MPI wrapper compiler is told to run another compiler, or
to add flags (Open MPI's ``OMPI_*``, MPICH's, Intel MPI's): part of a remembered build's key,
since a remembered build runs neither the wrapper nor ``--version``."""


def remembered_parts(compiler: str) -> list[str]:
    """What a remembered MPI build (:mod:`spf.runtime.warm`, :mod:`spf.distributed.remembered`)
    depends on beyond a C build's key: the target and :data:`WRAPPER_ENVIRONMENT`."""
    env = [f"{name}={os.environ[name]}" for name in WRAPPER_ENVIRONMENT if name in os.environ]
    return ["target mpi", compiler, *env]


def _mpi() -> Any:
    """The ``mpi4py.MPI`` module (importing it initialises MPI)."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ToolchainError(
            f"target 'mpi' needs mpi4py to call kernels ({err}); install it with "
            "`pip install mpi4py` (it builds against the MPI that provides mpicc)"
        ) from None
    return MPI


def comm_ctype() -> str:
    """A C integer type of the size of ``MPI_Comm`` (what cffi declares the handle as)."""
    size = int(_mpi()._sizeof(_mpi().Comm))
    return {8: "uintptr_t", 4: "int32_t"}.get(size, "uintptr_t")


@dataclass(frozen=True, kw_only=True)
class _LoadSignature(Signature):
    """The signature cffi declares: the communicator handle as an integer, then the rest."""

    comm_type: str = "uintptr_t"

    def c_prototype(self, restrict: bool = True) -> str:
        return mpi_prototype(self, self.comm_type, restrict)


class MPIKernel(Kernel):
    """A compiled C + MPI function: ``kernel(comm=MPI.COMM_WORLD, a=a, P=4, check=True)``.

    Arrays and parameters are bound and checked as for :class:`~spf.runtime.kernel.Kernel`
    (each rank passes its local arrays); ``comm`` must be an mpi4py intracommunicator.
    ``last_threads`` is the OpenMP team of this rank's last call (OpenMP's own count: the
    cap for busy cores does not apply to MPI kernels, whose ranks share the machine by
    design), 1 without a parallel loop.
    ``signature`` is the C prototype, ``void f(MPI_Comm comm, ...)``.
    """

    def __init__(
        self,
        signature: Signature,
        source: str | TranslationUnit,
        path: str | os.PathLike[str],
        command: str,
        *,
        compiler_output: str = "",
        validated: bool = False,
    ) -> None:
        if any(a.name == COMM for a in signature.args):
            raise ArgumentError(
                f"an argument named {COMM!r} clashes with kernel(comm=...) of "
                f"{signature.function}; rename it"
            )
        load = _LoadSignature(
            function=signature.function,
            args=signature.args,
            facts=signature.facts,
            fact_labels=signature.fact_labels,
            preconditions=signature.preconditions,
            comm_type=comm_ctype(),
        )
        super().__init__(
            load, source, path, command, compiler_output=compiler_output, validated=validated
        )
        self.signature = mpi_prototype(signature)
        self.arguments: tuple[Arg, ...] = signature.args
        text = source if isinstance(source, str) else source.source
        self._communicates = REQUESTS in text
        """It sends, receives or meets at a barrier: a rank that raised before the call
        would leave the others waiting for it, so the ranks agree first (:meth:`__call__`)."""
        self._agreed: tuple[str, ...] = () if isinstance(source, str) else source.agreed
        """The parameters every rank must pass the same value of (what decides which ranks
        post which messages, :attr:`spf.codegen.unit.TranslationUnit.agreed`)."""

    def __repr__(self) -> str:
        return f"<MPIKernel {self.signature} from {self.path}>"

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None:
        """Run the function on this rank's arrays; outputs are written in place. A kernel
        that communicates first agrees with the other ranks of ``comm`` on whether every
        rank's arguments passed their checks and on the parameters that decide who
        communicates (one blocking ``MPI_Allreduce``): a bad argument on one rank raises
        ArgumentError on every rank, instead of leaving them waiting for its messages.
        ``check=False`` skips the agreement (a rank whose arguments are refused then raises
        alone)."""
        comm = args.pop(COMM, None)
        handle = self._handle(comm)  # no communicator: no other rank can be told
        problem: SpfError | None = None
        try:
            if positional:
                raise self._binder.positional(len(positional))
            params, arrays = self._bind(args, check)
        except SpfError as err:
            if not (self._communicates and check):
                raise
            problem = err
        if self._communicates and check:
            values = None if problem is not None else [params[n] for n in self._agreed]
            _agree(comm, problem, self._agreed, values, self.name)
        bound = iter(list(map(self._from_buffer, self._ctypes, arrays, self._no_require)))
        cargs: list[object] = [handle]
        for a in self.arguments:
            cargs.append(params[a.name] if a.kind == "param" else next(bound))
        # this rank's OpenMP team (the other ranks' cores are not measured here)
        self._last_threads = default_team() if self._openmp else 1
        self._fn(*cargs)

    def _handle(self, comm: object) -> int:
        return comm_handle(comm, self.name)


def _agree(
    comm: Any,
    problem: SpfError | None,
    names: tuple[str, ...],
    values: list[int] | None,
    kernel: str,
) -> None:
    """Raise on every rank of ``comm`` when any rank's arguments failed their checks (this
    rank's own error, or ArgumentError naming the first rank that failed and its message),
    or when the ranks pass different values of the parameters ``names`` (``values``: this
    rank's, None when its arguments failed). One ``MPI_Allreduce`` of the failure flag and
    of each value and its negation (``MAX``: every maximum and minus every minimum); the
    ranks' texts and values are gathered only when something differs."""
    import numpy as np

    k = len(names)
    mine = np.zeros(1 + 2 * k, dtype=np.int64)
    mine[0] = problem is not None
    if values is not None:
        mine[1 : 1 + k] = values
        mine[1 + k :] = [-v for v in values]
    comm.Allreduce(_mpi().IN_PLACE, mine, op=_mpi().MAX)
    differ = [j for j in range(k) if mine[1 + j] != -mine[1 + k + j]]
    if not mine[0] and not differ:
        return
    everyone = comm.allgather((None if problem is None else str(problem), values))
    if problem is not None:
        raise problem
    failed = [(r, text) for r, (text, _) in enumerate(everyone) if text is not None]
    if failed:
        rank, text = failed[0]
        raise ArgumentError(
            f"{kernel}: rank {rank}'s arguments failed their checks, so no rank runs this call "
            f"(it communicates): rank {rank}: {text}"
        )
    name = names[differ[0]]
    shown = ", ".join(f"rank {r}: {v[differ[0]]}" for r, (_, v) in enumerate(everyone) if v)
    raise ArgumentError(
        f"{kernel}: the ranks pass different values of parameter {name} ({shown}); it decides "
        "which ranks send and receive, so every rank must pass the same value"
    )


class CommLife:
    """Whether a communicator was freed: MPI runs the delete callback of the attribute
    :func:`comm_life` caches on it when it is freed through *any* reference (mpi4py sets
    only the freeing object's handle to ``COMM_NULL``; another object holding the same
    handle would pass a freed communicator to MPI, which crashes)."""

    __slots__ = ("freed",)

    def __init__(self) -> None:
        self.freed = False


_LIFE_KEYVAL: list[int] = []
_LIVES: dict[int, tuple[Any, CommLife]] = {}
"""``id(comm)`` -> (a weak reference to the mpi4py object, its communicator's life)."""


def _freed(comm: object, keyval: int, value: object) -> None:
    if isinstance(value, CommLife):
        value.freed = True


def comm_life(comm: Any) -> CommLife:
    """The :class:`CommLife` of an mpi4py communicator (attached at its first use here;
    a dictionary lookup afterwards: mpi4py's objects are weakly referenceable, not
    hashable)."""
    import weakref

    key = id(comm)
    entry = _LIVES.get(key)
    if entry is not None and entry[0]() is comm:
        return entry[1]
    if not _LIFE_KEYVAL:
        _LIFE_KEYVAL.append(_mpi().Comm.Create_keyval(delete_fn=_freed))
    life = comm.Get_attr(_LIFE_KEYVAL[0])
    if not isinstance(life, CommLife):
        life = CommLife()
        comm.Set_attr(_LIFE_KEYVAL[0], life)
    _LIVES[key] = (weakref.ref(comm, lambda _ref: _LIVES.pop(key, None)), life)
    return life


def comm_handle(comm: object, kernel: str) -> int:
    """The C handle of an mpi4py intracommunicator; ArgumentError for anything else."""
    mpi = _mpi()
    if comm is None:
        raise ArgumentError(
            f"missing argument comm of {kernel}; pass the communicator, e.g. "
            f"{kernel}(comm=MPI.COMM_WORLD, ...) with `from mpi4py import MPI`"
        )
    if not isinstance(comm, mpi.Comm):
        raise ArgumentError(
            f"comm: expected an mpi4py communicator (e.g. MPI.COMM_WORLD), got "
            f"{type(comm).__name__}"
        )
    if comm == mpi.COMM_NULL:
        raise ArgumentError("comm: MPI.COMM_NULL is not a communicator a kernel can run on")
    if comm_life(comm).freed:
        raise ArgumentError(
            "comm: this communicator was freed through another reference to it (e.g. "
            "MPI.Intracomm(comm).Free(), or a Dup freed under another name), so its handle is "
            "dangling; pass a live communicator (comm.Dup() before freeing the other)"
        )
    if comm.Is_inter():
        raise ArgumentError(
            "comm: an intercommunicator; pass an intracommunicator (e.g. MPI.COMM_WORLD or "
            "one made by comm.Split)"
        )
    return int(mpi._handleof(comm))


def compile_kernel(
    source: str | TranslationUnit,
    signature: Signature,
    name: str,
    *,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    compiler: str = MPICC,
    **options: Any,
) -> MPIKernel:
    """Build ``source`` with ``mpicc`` (cached) and load it (``compile(target="mpi")``).

    ``compiler`` replaces ``mpicc`` (another MPI wrapper compiler); no other option exists.
    """
    if options:
        raise ArgumentError(
            f"compile(target='mpi'): unknown option(s) {', '.join(sorted(options))}; "
            "target mpi takes openmp, cflags, cache_dir and compiler"
        )
    if shutil.which(compiler.split()[0] if compiler.strip() else compiler) is None:
        raise CompileError(
            f"compile(target='mpi'): the MPI compiler {compiler!r} is not on PATH; install an "
            "MPI (e.g. `apt-get install openmpi-bin libopenmpi-dev`) or pass compiler=..."
        )
    text = source if isinstance(source, str) else source.source
    built = build(
        text, name=name, openmp=openmp, cflags=cflags, cache_dir=cache_dir, compiler=compiler
    )
    return MPIKernel(signature, source, built.path, built.command, compiler_output=built.stderr)


__all__ = ["MPIKernel", "comm_ctype", "comm_handle", "compile_kernel"]
