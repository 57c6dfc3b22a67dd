"""What ``Computation``'s facades return, as the model sees it (structural types).

``Computation.compile`` returns a :class:`spf.runtime.Kernel` (or a CUDA / HLS / MPI kernel,
or a row-distributed :class:`spf.distributed.kernel.DistributedKernel`) and
``Computation.pdfg`` a :class:`spf.pdfg.PDFG`; the facades are typed with these protocols,
which every such object satisfies, so one signature covers every kind of kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import networkx as nx

    from spf.sets import Relation

__all__ = ["CompiledKernel", "DataflowGraph", "DataflowHistory", "NamedArgument"]


class NamedArgument(Protocol):
    """One argument of a compiled function (:class:`spf.codegen.signature.Arg`)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def const(self) -> bool:
        """Only read by the function."""


class CompiledKernel(Protocol):
    """A compiled, loaded function: ``kernel(y=y, A=A, x=x, N=n, check=True)``."""

    @property
    def name(self) -> str:
        """The C function."""

    @property
    def signature(self) -> str:
        """Its C prototype."""

    @property
    def source(self) -> str: ...

    @property
    def path(self) -> Path:
        """The shared library."""

    @property
    def command(self) -> str:
        """The compiler command line."""

    @property
    def compiler_output(self) -> str: ...

    @property
    def arguments(self) -> tuple[NamedArgument, ...]: ...

    @property
    def last_threads(self) -> int | None:
        """The threads its last call ran on (None before the first call)."""

    def __call__(self, *positional: object, check: bool = True, **args: object) -> None: ...


class DataflowGraph(Protocol):
    """The polyhedral dataflow graph view of a computation (docs/pdfg.md)."""

    @property
    def graph(self) -> nx.DiGraph[str]: ...

    def fuse(self, s1: str, s2: str, level: str | int | object) -> list[Relation]: ...

    def reschedule(self, s1: str, s2: str) -> list[Relation]: ...

    def inline(self, data_space: str) -> list[str]: ...

    def to_dot(self) -> str: ...

    def write(self, path: str | Path) -> Path: ...

    def render(self, path: str | Path) -> Path: ...

    def _repr_svg_(self) -> str: ...


class DataflowHistory(Protocol):
    """The PDFG at every step (:class:`spf.pdfg.history.PDFGHistory`): a list of
    ``(command_text, graph)``, the graph before any command first."""

    def __len__(self) -> int: ...

    def __getitem__(self, k: int, /) -> tuple[str, DataflowGraph]: ...

    def __iter__(self) -> Iterator[tuple[str, DataflowGraph]]: ...

    def file_names(self) -> list[str]: ...

    def render(self, directory: str | Path) -> list[Path]: ...

    def _repr_html_(self) -> str: ...
