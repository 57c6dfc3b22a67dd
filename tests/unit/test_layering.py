"""spf's packages import one way (docs/design.md, "Architecture").

Every import between spf packages, read from the source with ``ast``, goes to the same or an
earlier layer. Imports inside functions and under ``if TYPE_CHECKING:`` count (a deferred
import or a type is still a dependency), with no exception: the user-facing ``Computation``
and ``Stmt`` (``spf.computation``) sit above the analysis, code generation, the PDFG, the
runtime and the distributed kernels, whose facades (``codegen``, ``compile``, ``pdfg``,
``dependences`` ...) call into them; those packages work on IR values (:mod:`spf.ir`).
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

SPF = Path(__file__).resolve().parents[2] / "spf"

LAYERS: tuple[tuple[str, ...], ...] = (
    # Leaf modules: they import no package (only each other).
    (
        "spf.errors",
        "spf.dtypes",
        "spf.clang",
        "spf.cexpr",
        "spf.progress",
        "spf._version",
        "spf._lazy",
        "spf._gc",
        "spf._cachedir",
        "spf._scalars",
    ),
    (
        "spf.sparse",
        "spf.sparse_checks",
        "spf.memory",
        "spf.mpi",
        "spf.mpi_formats",
    ),  # helpers on numpy / processes
    ("spf.sets",),
    ("spf.schedule",),
    ("spf.ir",),  # the frozen IR: values over sets and commands
    ("spf.analysis",),  # functions of a ComputationIR
    ("spf.codegen",),  # lowering and printers over a ComputationIR
    ("spf.pdfg",),  # the graph of a computation (read through spf.pdfg.subject's protocols)
    ("spf.runtime",),  # compiling and running a ComputationIR
    ("spf.distributed",),  # row-distributed IR: analysis, inspector, executor, kernel
    ("spf.computation",),  # the user-facing builder: Computation and Stmt, their facades
    ("spf.frontend", "spf.formats"),  # computations from C text; formats and their kernels
    ("spf.index_notation",),  # index notation lowered to computations over formats
    # Applications of the library: they may use every layer, and no layer uses them.
    ("spf.kernels",),
    ("spf.testing",),  # test helpers over the kernels
    ("spf.tuning",),  # schedule search: compiles and times candidates (spf.tune)
    ("spf",),  # the public names
    ("spf.bench", "spf.demo", "spf.demo_more", "spf.demo_timing"),
    ("spf.cli",),
    ("spf.__main__",),  # python -m spf
)
MOVED = frozenset(
    {
        "spf.analysis.dependences",
        "spf.analysis.recompute",
        "spf.analysis.storage",
        "spf.computation.dependence",
        "spf.computation.effects",
        "spf.computation.graph_ops",
        "spf.computation.history",
        "spf.computation.inlining",
        "spf.computation.products",
        "spf.computation.scheduling",
        "spf.computation.temporaries",
        "spf.distributed.distribution",
        "spf.distributed.statements",
        "spf.ir.access",
        "spf.ir.build",
        "spf.ir.dependence",
        "spf.ir.keys",
        "spf.ir.source",
        "spf.pdfg.subject",
        "spf.runtime.interpret",
        "spf.schedule.apply",
        "spf.schedule.commands",
        "spf.schedule.trace",
    }
)
"""Modules that moved to their layer (or were split off) when the packages were layered."""
RANK = {name: k for k, group in enumerate(LAYERS) for name in group}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    where: str
    """``spf/schedule/apply.py:46: from spf.computation.computation import ...``"""


def package_of(module: str) -> str:
    """``spf.schedule.apply`` -> ``spf.schedule``; ``spf.errors`` -> ``spf.errors``."""
    return ".".join(module.split(".")[:2])


def _module_name(path: Path) -> str:
    parts = path.relative_to(SPF.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The spf modules an import statement names (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level == 0:
        base = node.module or ""
    else:
        anchor = module.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    if node.module is None or base == "spf":  # ``from spf import kernels``: the submodules
        return [f"{base}.{a.name}" for a in node.names]
    return [base]


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of ``tree``, nested ones too (an import is a statement: the
    expressions, nine in ten of a module's nodes, are not walked)."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, field, ()))


@functools.cache
def edges() -> tuple[Edge, ...]:
    """Every import between two different spf packages, with where it is."""
    return tuple(_edges())


def _edges() -> Iterator[Edge]:
    for path in sorted(SPF.rglob("*.py")):
        module = _module_name(path)
        source = package_of(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(SPF.parent)
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in _statements(tree):
            for target in _imported(node, module, path.name == "__init__.py"):
                if target != "spf" and not target.startswith("spf."):
                    continue
                pkg = package_of(target)
                if pkg != source:
                    line = getattr(node, "lineno", 0)
                    text = lines[line - 1].strip() if line else ""
                    yield Edge(source, pkg, f"{rel.as_posix()}:{line}: {text}")


def test_every_package_has_a_layer() -> None:
    named = {e.source for e in edges()} | {e.target for e in edges()}
    unknown = sorted(named - set(RANK))
    assert not unknown, f"packages missing from LAYERS in {__file__}: {unknown}"


def test_packages_import_only_earlier_layers() -> None:
    upward = [
        f"{e.where}  ({e.source} -> {e.target})"
        for e in edges()
        if e.source in RANK and e.target in RANK and RANK[e.target] > RANK[e.source]
    ]
    assert not upward, (
        "imports from a later layer; move the code to the right layer, or work on the IR "
        "(spf.ir) and let spf.computation's facade call in:\n  " + "\n  ".join(upward)
    )


def test_no_cycle_between_packages() -> None:
    graph: nx.DiGraph[str] = nx.DiGraph()
    where: dict[tuple[str, str], list[str]] = {}
    for e in edges():
        graph.add_edge(e.source, e.target)
        where.setdefault((e.source, e.target), []).append(e.where)
    cycles = list(nx.simple_cycles(graph))
    shown = []
    for cycle in cycles[:5]:
        hops = list(zip(cycle, [*cycle[1:], cycle[0]], strict=True))
        shown.append(" -> ".join([*cycle, cycle[0]]))
        shown += [f"    {where[h][0]}" for h in hops]
    assert not cycles, f"{len(cycles)} cycle(s) between spf packages:\n" + "\n".join(shown)


OVER_IR = ("spf.analysis", "spf.codegen", "spf.pdfg", "spf.runtime", "spf.distributed")
"""Packages that read and build computations as IR values (:mod:`spf.ir`) only: none of their
modules imports ``spf.computation`` (docs/ir.md, "Where the packages stand"): the
analysis, code generation (lowering, the scanner, the implemented-domain check and the
co-iteration merge take a ``ComputationIR``), the PDFG (its graph reads the computation
through :mod:`spf.pdfg.subject`'s protocols, its inspectors as IR), the runtime (compiling,
the remembered compiles keyed by ``ir.fingerprint``, the interpreter) and the distributed
kernels (the analysis of ``distribute_rows`` and the local, inspector and split
computations, built with :mod:`spf.ir.build`)."""


def test_packages_over_the_ir_never_import_the_model() -> None:
    found = [
        f"{e.where}  ({e.source} -> {e.target})"
        for e in edges()
        if e.source in OVER_IR and e.target == "spf.computation"
    ]
    assert not found, (
        "imports of spf.computation from a package that works on spf.ir values; take a "
        "ComputationIR (or spf.ir.reading's records) and build with spf.ir.build:\n  "
        + "\n  ".join(found)
    )


def test_every_module_imports_first() -> None:
    """Each package, and each module that moved between layers, imports in an interpreter
    where no spf module is loaded yet (none relies on another being imported before it)."""
    script = (
        "import importlib, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    for loaded in [m for m in sys.modules if m == 'spf' or m.startswith('spf.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as err:\n"
        "        failed.append(f'{name}: {type(err).__name__}: {err}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    packages = [_module_name(p) for p in sorted(SPF.glob("*/__init__.py"))]
    modules = ["spf", *packages, *sorted(MOVED)]
    done = subprocess.run(
        [sys.executable, "-c", script, *modules],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=SPF.parent,
        check=False,
    )
    assert done.returncode == 0, f"modules that fail to import first:\n{done.stdout}{done.stderr}"


IR_ONLY = (  # and every module of OVER_IR's packages
    "spf/pdfg/annotate.py",
    "spf/pdfg/loops.py",
)
"""Modules below ``spf.computation``'s users that read a computation as its IR only
(docs/ir.md, "Where the packages stand"): they name no ``Computation`` nor ``Stmt``."""


def test_modules_over_the_ir_do_not_import_the_computation() -> None:
    found = [
        e.where
        for e in edges()
        if e.target == "spf.computation" and e.where.split(":")[0] in IR_ONLY
    ]
    assert not found, "imports of spf.computation in modules over the IR:\n  " + "\n  ".join(found)
