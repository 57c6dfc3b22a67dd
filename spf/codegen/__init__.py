"""Code generation: the UF-aware scanner (isl -> loop AST) and the printers.

``codegen(ir, target)`` checks legality and proves every access in bounds (unless
``check=False``; :mod:`spf.analysis.bounds`), lowers the computation (its IR,
:class:`~spf.ir.ComputationIR`) to a :class:`~spf.codegen.program.Program` and prints it
for the target.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from spf.errors import CodegenError, SpfError, add_context

if TYPE_CHECKING:
    from spf.analysis.bounds import Obligation
    from spf.analysis.memo import HasIR
    from spf.analysis.preconditions import Precondition
    from spf.codegen.loop_ast import Node
    from spf.codegen.program import Program
    from spf.codegen.unit import TranslationUnit
    from spf.ir import ComputationIR

Target = Literal["c", "cuda", "mpi", "hls"]
TARGETS: tuple[str, ...] = ("c", "cuda", "mpi", "hls")
"""Each target ``t`` is printed by ``spf.codegen.<t>.print_<t>(program)``."""


def printer(target: str) -> Callable[..., str]:
    """The printer function of ``target`` (``CodegenError`` for an unknown target): called
    with a :class:`~spf.codegen.program.Program` and the keyword options in
    :func:`printer_options`."""
    if not isinstance(target, str) or target not in TARGETS:
        raise CodegenError(f"unknown target {target!r}; available: {', '.join(TARGETS)}")
    module = importlib.import_module(f"spf.codegen.{target}")
    fn: Callable[..., str] = getattr(module, f"print_{target}")
    return fn


def printer_options(target: str) -> tuple[str, ...]:
    """The keyword options the printer of ``target`` takes (``PRINTER_OPTIONS`` of
    ``spf.codegen.<target>``; e.g. ``hls_bounds`` for ``"hls"``)."""
    printer(target)
    module = importlib.import_module(f"spf.codegen.{target}")
    return tuple(getattr(module, "PRINTER_OPTIONS", ()))


def codegen(
    comp: ComputationIR | HasIR,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    **options: Any,
) -> str:
    """One self-contained translation unit for ``target`` (``options``: the printer's) of
    ``comp``, a computation's IR (or the computation); remembered by the IR's value.
    Accesses in bounds only under a condition on the parameters
    (``signature.preconditions``) are named in a :class:`~spf.errors.PreconditionWarning`."""
    return codegen_unit(comp, target, name, check, **options).source


def codegen_unit(
    comp: ComputationIR | HasIR,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    **options: Any,
) -> TranslationUnit:
    """:func:`codegen`'s translation unit with its record (:mod:`spf.codegen.unit`)."""
    from spf.analysis.memo import as_ir
    from spf.analysis.preconditions import warn_preconditions

    ir = as_ir(comp, "spf.codegen.codegen")
    unit, preconditions = generate(ir, target, name, check, **options)
    warn_preconditions(ir.name, preconditions)
    if unit.dropped_tags:
        from spf.analysis.preconditions import _outside_spf
        from spf.codegen.hls_tags import warn_dropped

        warn_dropped(unit.dropped_tags, stacklevel=_outside_spf() + 1)
    return unit


def generate(
    comp: ComputationIR | HasIR,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    **options: Any,
) -> tuple[TranslationUnit, tuple[Precondition, ...]]:
    """:func:`codegen`'s translation unit (the text and its record, :mod:`spf.codegen.unit`)
    and the preconditions it found, without warning (a compile warns once itself);
    remembered by the value of the IR (:mod:`spf.analysis.memo`: an equal computation
    shares it)."""
    from spf.analysis.memo import as_ir, remembered
    from spf.codegen.budget import ISL_MAX_OPERATIONS
    from spf.ir.keys import value_key

    ir = as_ir(comp, "spf.codegen.generate")

    def run() -> tuple[TranslationUnit, tuple[Precondition, ...]]:
        prog = lower_checked(ir, target, name, check, **options)
        return emit_unit(prog, target, **options), prog.signature.preconditions

    key = ("codegen", value_key((target, name, check)), value_key(options), ISL_MAX_OPERATIONS)
    return remembered(ir, key, run)


def lower_checked(
    ir: ComputationIR,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    **options: Any,
) -> Program:
    """The checked, lowered ``ir`` (what :func:`codegen` prints): with ``check``, legality
    and bounds are proved first, ``Program.obligations`` lists the bounds facts left to
    check at run time and ``signature.preconditions`` the parameter conditions."""
    from spf.analysis import legality
    from spf.analysis.bounds import check_bounds
    from spf.codegen import moved_layouts, mpi_matching
    from spf.codegen.program import lower
    from spf.ir.check import check as check_ir
    from spf.progress import Progress

    printer(target)
    known = printer_options(target)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise CodegenError(
            f"codegen(target={target!r}): unknown option(s) {', '.join(unknown)}; "
            f"known: {', '.join(known) or 'none'}"
        )
    progress = Progress("codegen")
    stage = "checking the IR"
    try:
        check_ir(ir)  # an IR built by hand is what a computation records
        moved_layouts.check(ir)  # before legality: its storage check reads such runs loosely
        stage = "checking legality"
        if check:
            legality.check(ir, target)
        stage = "scanning the loops"
        progress.phase("scanning")
        program = lower(ir, name)  # refuses unbounded loops before bounds are looked at
        obligations: tuple[Obligation, ...] = ()
        if check:
            stage = "proving accesses in bounds"
            progress.phase("proving bounds")
            report = check_bounds(ir)
            if target == "mpi":  # after the bounds: a region out of bounds is told first
                mpi_matching.check(ir)
            obligations = report.obligations
            sig = replace(program.signature, preconditions=report.preconditions)
            program = replace(program, signature=sig)
            program = _with_implied_ranges(ir, program)
        program = replace(program, obligations=obligations)
        if options.get("arg_checks") and (ir.assumptions or obligations):
            from spf.codegen.arg_checks import plan_fact_checks

            stage = "placing fact checks"
            progress.phase("placing fact checks")
            program = plan_fact_checks(ir, program, proved=check)
    except SpfError as err:
        add_context(err, f"During: generating {target} code for {ir.name} ({stage})")
        raise
    return program


def _with_implied_ranges(ir: ComputationIR, program: Program) -> Program:
    """``program`` whose run-time index arrays without a declared range are checked, where
    their values are read, against the range the bounds proof derived for them
    (:func:`spf.analysis.index_ranges.implied_ranges`); a trusted local's are not checked."""
    spaces = ir.data_space_table
    if all(lo is not None or spaces[n].trusted for n, _, lo, _ in program.index_arrays):
        return program
    from spf.analysis.index_ranges import implied_ranges
    from spf.codegen.signature import set_bounds
    from spf.sets import Set

    implied = implied_ranges(ir)
    arrays = []
    for name, rank, lo, hi in program.index_arrays:
        derive = lo is None and name in implied and not spaces[name].trusted
        box = set_bounds(Set(implied[name])) if derive else None
        arrays.append((name, rank, *box) if box is not None else (name, rank, lo, hi))
    return replace(program, index_arrays=tuple(arrays))


def emit_program(prog: Program, target: str = "c", **options: Any) -> str:
    """Print a lowered program for ``target``."""
    return emit_unit(prog, target, **options).source


def emit_unit(prog: Program, target: str = "c", **options: Any) -> TranslationUnit:
    """Print a lowered program for ``target``: the text with its record
    (``spf.codegen.<target>.unit_<target>``)."""
    from spf.codegen.reductions import check_target

    check_target(prog, target)
    if prog.index_arrays and target not in ("c", "mpi"):
        raise CodegenError(
            f"codegen(target={target!r}): the run-time index array "
            f"{prog.index_arrays[0][0]!r} (index=True) is generated for target 'c' (and "
            "'mpi') only; generate this computation for 'c', or pass the array in as an "
            "input UF (declare_uf) computed by another kernel"
        )
    if prog.workspaces and target not in ("c", "mpi"):
        raise CodegenError(
            f"codegen(target={target!r}): the workspace {prog.workspaces[0][0]!r} "
            "(stmt.workspace) is generated for target 'c' (and 'mpi') only; generate this "
            "computation for 'c'"
        )
    printer(target)  # refuses an unknown target
    module = importlib.import_module(f"spf.codegen.{target}")
    unit: TranslationUnit = getattr(module, f"unit_{target}")(prog, **options)
    return unit


def loop_structure(ir: ComputationIR) -> str:
    """The loop skeleton of ``ir`` (docs/getting_started.md format)."""
    from spf.codegen.loop_ast import Block, Call, For, If, Merge
    from spf.codegen.merge import merge_tag

    lines: list[str] = []

    def visit(n: Node, depth: int) -> None:
        pad = "  " * depth
        if isinstance(n, Block):
            for item in n.items:
                visit(item, depth)
        elif isinstance(n, For):
            tags = f" [{', '.join(n.tags)}]" if n.tags else ""
            lines.append(f"{pad}for {n.var}{tags}:")
            visit(n.body, depth + 1)
        elif isinstance(n, If):
            visit(n.then, depth)
            if n.orelse is not None:
                visit(n.orelse, depth)
        elif isinstance(n, Call):
            lines.append(f"{pad}{n.stmt}")
        elif isinstance(n, Merge):  # the loops it merges, the first tagged coiterate(...)
            lines.append(f"{pad}for {n.left.var} [{merge_tag(n)}]:")
            lines.append(f"{pad}  for {n.right.var}:")
            visit(n.both, depth + 2)
            for b in (n.left_only, n.right_only):
                if b is not None:
                    visit(b, depth + 1)
        else:
            visit(n.body, depth)

    if not ir.parsed_stmts:
        return ""
    visit(_loop_tree(ir), 0)
    return "\n".join(lines)


def _loop_tree(ir: ComputationIR) -> Node:
    """The scanned loops with their merges (as ``lower`` makes them, unchecked)."""
    from spf.codegen.merge import merging
    from spf.codegen.scan import Scanner

    try:
        scanned, expand = merging(ir)
    except CodegenError:  # a merge asked for that codegen refuses: the loops as scheduled
        scanned, expand = ir, lambda body: body
    return expand(Scanner(scanned).scan())


__all__ = [
    "TARGETS",
    "codegen",
    "codegen_unit",
    "emit_program",
    "emit_unit",
    "generate",
    "loop_structure",
    "lower_checked",
    "printer",
    "printer_options",
]
