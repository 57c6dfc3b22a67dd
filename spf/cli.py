"""The ``spf`` command line (installed with the package; also ``python -m spf.cli``).

``spf demo [MATRIX] [--out DIR]``
    what ``make demo`` runs: build, schedule, generate, compile and run real kernels.
``spf codegen MODULE:FUNCTION [--target c|cuda|mpi|hls] [-o FILE] [--name NAME] [--no-check]``
    print (or write) the generated code of the Computation that ``FUNCTION()`` returns;
    for ``--target hls``, ``--hls-bounds M=1024,N=16:1024`` and ``--hls-tripcounts k=0:64``
    are the printer options ``hls_bounds`` and ``hls_tripcounts`` (docs/backends/hls.md).
``spf dot MODULE:FUNCTION [-o FILE.dot|.svg|.png|.pdf | --steps DIR] [--params N=1000,...]``
    write its polyhedral dataflow graph, as DOT text or rendered by Graphviz; ``--steps``:
    one SVG per step of its trace and an ``index.html`` (``comp.pdfg_history()``);
    ``--params``: sizes in bytes for those parameter values (``comp.pdfg(params=...)``).
``spf import FILE.c [--function F] [--param NAME] [--shape NAME=EXT,EXT] [-o FILE]``
    import a C function (``spf.from_c``): print the Python that builds its Computation,
    then its loop structure (as comments).
``spf tune KERNEL [--matrix FILE.mtx] [--sizes N=512,...] [--budget S] [--cflags "..."] ...``
    search a faster legal schedule for a kernel of ``spf.kernels`` (by name) or a C file
    (``spf.tune``); prints the schedule as Python.
``spf tune spmv --matrix FILE.mtx --formats [CSR,SELL,...] [--refine] [--budget S]``
    choose SpMV's storage format for the matrix (``spf.formats.tune``); prints the format,
    its speedup over CSR, the conversion time and the candidates measured and pruned.
``spf bench [--quick] [--only NAME] ...``
    the benchmarks (``spf.bench``; ``spf bench --help`` lists the options).
``spf --version``
    print spf's version (``spf.__version__``).

``MODULE`` is an importable module (the current directory is searched first) or a path to a
``.py`` file; ``FUNCTION`` takes no arguments and returns an ``spf.Computation``. Progress
goes to stderr, results to stdout or ``-o``; errors are one line on stderr and exit status 1
(2 for bad usage).

    >>> main(["codegen", "spf.kernels:no_such_function"])
    1
    >>> main(["--help"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    SystemExit: 0
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from spf._version import __version__
from spf.errors import ArgumentError, SpfError

if TYPE_CHECKING:
    from types import ModuleType

    from spf.computation.computation import Computation

T = TypeVar("T")

TARGETS = ("c", "cuda", "mpi", "hls")
_SPEC_HELP = "MODULE:FUNCTION whose FUNCTION() returns an spf.Computation (e.g. spf.kernels:gemm)"
_EPILOG = """examples:
  spf codegen spf.kernels:spmv_csr                  C/OpenMP for the CSR SpMV on stdout
  spf codegen my_kernels.py:build --target cuda -o k.cu
  spf dot spf.kernels:blur2d -o blur.svg            its PDFG, rendered by Graphviz
  spf dot my_kernels.py:tiled --steps steps         the PDFG after each command
  spf dot spf.kernels:blur2d --params N=1080,M=1920 -o blur.svg   ... with sizes in bytes
  spf import kernel.c --function gemm               the Computation of a C function
  spf tune spmv_csr --matrix m.mtx --budget 30       tune CSR SpMV's schedule on a matrix
  spf tune gemm --sizes N=512,M=512,K=512           ... GEMM's on 512 x 512 matrices
  spf tune spmv --matrix m.mtx --formats            choose SpMV's storage format for it
  spf demo                                          what `make demo` runs
  spf bench --quick --only spmv                     a quick benchmark run"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spf",
        description="spf: sparse polyhedral computations from Python.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"spf {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run the demo (what `make demo` runs)",
        description="Build CSR SpMV and a sparse forward solve, schedule, generate, compile "
        "and run them against scipy, and write the generated code and graphs to --out.",
    )
    demo.add_argument("matrix", nargs="?", help="Matrix Market file (default: 2-D Poisson)")
    demo.add_argument("--out", default="out", help="output folder (default: out)")
    gen = commands.add_parser(
        "codegen",
        help="print or write the generated code of a Computation",
        description="Generate the code of the Computation that FUNCTION() returns.",
    )
    gen.add_argument("function", metavar="MODULE:FUNCTION", help=_SPEC_HELP)
    gen.add_argument(
        "--target", default="c", metavar="TARGET", help=f"one of {', '.join(TARGETS)} (default: c)"
    )
    gen.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    gen.add_argument("--name", help="name of the generated function (default: the computation's)")
    gen.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="skip the legality check (generate an illegal schedule on your responsibility)",
    )
    gen.add_argument(
        "--hls-bounds",
        metavar="M=1024,N=16:1024",
        help="target hls: largest (or min:max) values of symbolic constants, which size the "
        "local arrays, trip counts and port depths",
    )
    gen.add_argument(
        "--hls-tripcounts",
        metavar="k=0:64",
        help="target hls: trip counts (max or min:max) of loops by name, e.g. a CSR row's k",
    )
    dot = commands.add_parser(
        "dot",
        help="write the PDFG of a Computation (DOT, or SVG/PNG/PDF through Graphviz)",
        description="Write the polyhedral dataflow graph of the Computation FUNCTION() returns.",
    )
    dot.add_argument("function", metavar="MODULE:FUNCTION", help=_SPEC_HELP)
    where = dot.add_mutually_exclusive_group()
    where.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="FILE.dot, .svg, .png or .pdf (default: DOT on stdout)",
    )
    where.add_argument(
        "--steps",
        metavar="DIR",
        help="one SVG per step of the trace (00-initial.svg, 01-tile.svg, ...) and an "
        "index.html showing them in order, in DIR",
    )
    dot.add_argument(
        "--params",
        metavar="N=1000,M=800",
        help="parameter values: label data spaces and accesses with their sizes in bytes "
        "and mark the temporaries fusion or inlining would remove",
    )
    imp = commands.add_parser(
        "import",
        help="import a C function as a Computation and print it as Python",
        description="Read FILE.c with spf.from_c and print the Python that builds the "
        "Computation, then its loop structure.",
    )
    imp.add_argument("file", metavar="FILE.c", help="C source file")
    imp.add_argument("--function", help="the function to import (default: the only one)")
    imp.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="keep the #define'd NAME symbolic (repeatable)",
    )
    imp.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=EXT,EXT",
        help="extents of a pointer parameter, e.g. --shape x=n (repeatable)",
    )
    imp.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    from spf.tuning.cli import add_parser as add_tune

    add_tune(commands)
    commands.add_parser(
        "bench", help="run the benchmarks (`spf bench --help` for options)", add_help=False
    )
    return parser


def _import(module_name: str) -> ModuleType:
    """Import ``module_name`` (a dotted name, or a ``.py`` path: a module of its own,
    ``_spf_cli_<stem>``, so that a ``json.py`` or ``spf.py`` does not replace the module of
    that name)."""
    if module_name.endswith(".py"):
        path = Path(module_name)
        if not path.is_file():
            raise ArgumentError(f"no such file {module_name!r}")
        name = f"_spf_cli_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ArgumentError(f"cannot load {module_name!r} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as err:  # a syntax error or an exception of the module's own code
            sys.modules.pop(name, None)
            raise _import_error(module_name, err) from err
        return module
    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        raise ArgumentError(f"cannot import {module_name!r}: {err}") from err
    except Exception as err:
        raise _import_error(module_name, err) from err


@contextlib.contextmanager
def _searched_first(folder: Path) -> Iterator[None]:
    """``folder`` first on ``sys.path`` inside the block (as ``python FILE.py`` puts the
    file's folder there), then ``sys.path`` as it was."""
    entry = str(folder.resolve())
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _import_error(module_name: str, err: Exception) -> ArgumentError:
    """The one-line error of a module that raised ``err`` while it was imported."""
    return ArgumentError(
        f"cannot import {module_name!r}: {type(err).__name__}: {err}; fix the module (run "
        f"`python {module_name if module_name.endswith('.py') else '-m ' + module_name}` "
        "to see where)"
    )


def load(spec: str) -> Computation:
    """Call ``MODULE:FUNCTION`` (e.g. ``spf.kernels:spmv_csr``) and return its Computation.

    ``MODULE`` may also be a path to a ``.py`` file. Every failure is an ``SpfError`` that
    says what to fix.

    >>> load("spf.kernels:dense_mv").name
    'dense_mv'
    >>> load("spf.kernels")
    Traceback (most recent call last):
    ...
    spf.errors.ArgumentError: expected MODULE:FUNCTION (e.g. spf.kernels:spmv_csr), got ...
    """
    module_name, sep, func_name = spec.rpartition(":")
    if not sep or not module_name or not func_name:
        raise ArgumentError(f"expected MODULE:FUNCTION (e.g. spf.kernels:spmv_csr), got {spec!r}")
    # the module's folder (a .py path) or the current one is searched first while the module
    # is imported and FUNCTION runs (its own imports may come late)
    folder = Path(module_name).parent if module_name.endswith(".py") else Path.cwd()
    with _searched_first(folder):
        return _call(spec, module_name, func_name)


def _call(spec: str, module_name: str, func_name: str) -> Computation:
    """``load``'s import of ``module_name`` and call of its ``func_name``."""
    from spf.computation.computation import Computation

    module = _import(module_name)
    fn = getattr(module, func_name, None)
    if fn is None:
        known = sorted(
            n
            for n, v in vars(module).items()
            if inspect.isfunction(v) and v.__module__ == module.__name__ and n[0] != "_"
        )
        raise ArgumentError(
            f"{module_name} has no function {func_name!r}; its functions: {', '.join(known)}"
        )
    if isinstance(fn, Computation):
        return fn
    if not callable(fn):
        raise ArgumentError(
            f"{module_name}.{func_name} is not a function but a {type(fn).__name__!r} value"
        )
    try:
        inspect.signature(fn).bind()
    except TypeError as err:  # parameters without defaults
        raise ArgumentError(
            f"calling {func_name}() failed: {err} (it must take no arguments)"
        ) from err
    except ValueError:  # no signature to read (a builtin): calling it tells
        pass
    try:
        comp = fn()
    except SpfError:
        raise
    except Exception as err:
        raise ArgumentError(f"calling {func_name}() failed: {type(err).__name__}: {err}") from err
    if not isinstance(comp, Computation):
        raise ArgumentError(
            f"{spec}() returned {type(comp).__name__}, not an spf.Computation; "
            "make FUNCTION return the Computation it builds"
        )
    return comp


def _progress(message: str) -> None:
    print(f"spf: {message}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``spf`` command with ``argv`` (default: ``sys.argv[1:]``); the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    command = args_list[0] if args_list else ""
    try:
        if command == "bench":
            return _bench(args_list[1:])
        parser = _parser()
        args = parser.parse_args(args_list)
        with _progress_shown():
            try:
                return _run(parser, args)
            except SpfError as err:
                print(f"spf {args.command}: error: {err}", file=sys.stderr)
                return 1
    except KeyboardInterrupt:  # -o files are opened once their text is complete (_emit)
        print(f"{' '.join(['spf', command][: 1 + bool(command)])}: interrupted (Ctrl-C)",
              file=sys.stderr)  # fmt: skip
        return 130
    except BrokenPipeError:  # stdout's reader has gone (`spf codegen ... | head`)
        _quiet_stdout()
        return 141  # 128 + SIGPIPE, what a shell shows for a command the pipe ended


def _quiet_stdout() -> None:
    """Point the process's stdout at /dev/null, so that the interpreter's last flush of the
    closed pipe does not print an error at exit (where stdout is a real file descriptor)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


@contextlib.contextmanager
def _progress_shown() -> Iterator[None]:
    """Progress lines of long operations (the ``spf`` logger, :mod:`spf.progress`) on
    stderr while the command runs; the logger is left as it was (``main`` may be called
    from a program that configures logging itself)."""
    from spf.progress import LOGGER

    handler = _StderrLines()
    level = LOGGER.level
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    try:
        yield
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)


class _StderrLines(logging.Handler):
    """``spf: <message>`` on the current ``sys.stderr`` (like the command's own lines)."""

    def emit(self, record: logging.LogRecord) -> None:
        _progress(record.getMessage())


def _bench(argv: list[str]) -> int:
    """``spf bench ...``: ``spf.bench.main(argv)``, imported only when asked for."""
    try:
        from spf.bench import main as bench_main
    except ImportError as err:
        print(f"spf bench: error: the benchmarks cannot be imported: {err}", file=sys.stderr)
        return 1
    return int(bench_main(argv) or 0)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "demo":
        from spf.demo import main as demo_main  # lazy: the demo pulls in the whole stack

        demo_main([*([args.matrix] if args.matrix else []), "--out", args.out])
        return 0
    if args.command == "codegen":
        if args.target not in TARGETS:
            raise ArgumentError(
                f"unknown target {args.target!r}; choose one of {', '.join(TARGETS)}"
            )
        comp = _load_with_progress(args.function)
        t0 = time.perf_counter()
        _progress(f"generating {args.target} code for {comp.name!r} ({len(comp.stmts)} statements)")
        options = _hls_options(args)
        # a negative bound of a parameter that sizes an array (the default lower bound 0
        # of M=64 is no claim that M-2 may be -2)
        negative = {k: lo for k, (lo, _) in options.get("hls_bounds", {}).items() if lo < 0}
        check_sizes(comp, negative, "--hls-bounds")
        text = comp.codegen(args.target, name=args.name, check=args.check, **options)
        _progress(f"generated {len(text.splitlines())} lines in {time.perf_counter() - t0:.2f} s")
        _emit(text, args.output, _module_file(args.function))
        return 0
    if args.command == "dot" and args.steps is not None:
        params = parse_params(args.params)
        comp = _load_with_progress(args.function)
        check_sizes(comp, params or {}, "--params")
        _steps(comp, args.steps, params)
        return 0
    if args.command == "dot":
        params = parse_params(args.params)
        comp = _load_with_progress(args.function)
        check_sizes(comp, params or {}, "--params")
        graph = comp.pdfg(params)
        _not_the_input(args.output, _module_file(args.function))
        if args.output and not args.output.lower().endswith(".dot"):
            _progress(f"rendering with Graphviz to {args.output}")
            _progress(f"wrote {graph.render(args.output)}")
        else:
            _emit(graph.to_dot(), args.output)
        return 0
    if args.command == "import":
        _emit(_import_c(args), args.output, Path(args.file))
        return 0
    if args.command == "tune":
        from spf.tuning.cli import run as tune_run

        return tune_run(args, parse_params(args.sizes, "--sizes"), _progress)
    parser.print_help(sys.stderr)
    return 2


def parse_params(text: str | None, option: str = "--params") -> dict[str, int] | None:
    """``--params N=1000,M=800`` as ``{"N": 1000, "M": 800}`` (None when not given); a
    malformed entry is an ``ArgumentError`` that names ``option`` (``spf tune``'s is
    ``--sizes``) and shows the expected form.

    >>> parse_params("N=1080, M=1920")
    {'N': 1080, 'M': 1920}
    >>> parse_params("N=1,N=2")
    Traceback (most recent call last):
    ...
    spf.errors.ArgumentError: --params: 'N' is given twice; give each parameter once
    """
    if text is None:
        return None
    return _assignments(text, option, int, "NAME=INTEGER", "N=1000,M=800", "parameter")


def _hls_options(args: argparse.Namespace) -> dict[str, dict[str, tuple[int, int]]]:
    """``--hls-bounds`` / ``--hls-tripcounts`` as the HLS printer's options (target hls
    only)."""
    out = {}
    for option, text in (("hls_bounds", args.hls_bounds), ("hls_tripcounts", args.hls_tripcounts)):
        if text is None:
            continue
        flag = "--" + option.replace("_", "-")
        if args.target != "hls":
            raise ArgumentError(f"{flag} is an option of --target hls, not {args.target}")
        out[option] = parse_ranges(text, flag)
        if option == "hls_tripcounts":
            for name, (low, _) in out[option].items():
                if low < 0:
                    raise ArgumentError(
                        f"{flag}: {name}={text_of(out[option][name])} gives a negative trip "
                        f"count; a loop runs 0 times or more: write e.g. {flag} {name}=0:64"
                    )
    return out


def text_of(span: tuple[int, int]) -> str:
    """``(16, 1024)`` as ``"16:1024"``."""
    return f"{span[0]}:{span[1]}"


def check_sizes(comp: Computation, values: dict[str, int], flag: str) -> None:
    """``ArgumentError`` naming ``flag`` when the parameter ``values`` it gives make an
    extent of a data space negative (``N=-5`` for ``img[N, M]``, ``N=1`` for ``out[N-2,
    M-2]``): parameters that size arrays are sizes. Extents using a parameter not given are
    left alone.

    >>> import spf
    >>> check_sizes(spf.kernels.blur2d(), {"N": 1}, "--params")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spf.errors.ArgumentError: --params: N = 1 makes the extent N-2 of out negative (-1); ...
    """
    bad = [
        (len(str(ext)), str(ext), name, value)
        for name, ds in comp.data_spaces.items()
        for ext in ds.shape or ()
        if (value := _evaluate(str(ext), values)) is not None and value < 0
    ]
    if bad:  # the simplest extent first: N itself before N-2
        _, ext, name, value = min(bad)
        used = [n for n in values if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", ext)]
        given = ", ".join(f"{n} = {values[n]}" for n in used)
        verb = "makes" if len(used) == 1 else "make"
        raise ArgumentError(
            f"{flag}: {given} {verb} the extent {ext} of {name} negative ({value}); "
            "pass sizes that keep every array's extents >= 0"
        )


def _evaluate(text: str, values: dict[str, int]) -> int | None:
    """An extent (``N-2``, ``2*NB + 1``) at ``values``; None when it uses a name not in
    ``values`` or is no such integer expression."""
    import ast

    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None

    def walk(node: ast.expr) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return values.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = walk(node.operand)
            return None if inner is None else -inner
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left), walk(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
        return None

    return walk(tree)


def parse_ranges(text: str, flag: str) -> dict[str, tuple[int, int]]:
    """``M=1024,N=16:1024`` as ``{"M": (0, 1024), "N": (16, 1024)}``; a malformed entry is
    an ``ArgumentError`` that shows the expected form.

    >>> parse_ranges("M=1024, N=16:1024", "--hls-bounds")
    {'M': (0, 1024), 'N': (16, 1024)}
    >>> parse_ranges("k=0:64,k=1", "--hls-tripcounts")
    Traceback (most recent call last):
    ...
    spf.errors.ArgumentError: --hls-tripcounts: 'k' is given twice; give each name once
    """
    return _assignments(
        text, flag, _span, "NAME=MAX or NAME=MIN:MAX with MIN <= MAX", "M=1024,N=16:1024", "name"
    )


def _span(value: str) -> tuple[int, int]:
    """``"16:1024"`` as ``(16, 1024)``, ``"1024"`` as ``(0, 1024)``; ValueError unless MIN <=
    MAX."""
    low, colon, high = value.partition(":")
    span = (int(low), int(high)) if colon else (0, int(value))
    if span[0] > span[1]:
        raise ValueError(value)
    return span


def _assignments(
    text: str, flag: str, read: Callable[[str], T], form: str, example: str, what: str
) -> dict[str, T]:
    """``NAME=VALUE,...`` of an option ``flag`` as a dict, each value through ``read``; an
    entry that is no such assignment (``read`` raising ValueError) or a name given twice is
    an ``ArgumentError`` naming ``flag`` and showing ``form`` with an ``example``."""
    out: dict[str, T] = {}
    for item in text.split(","):
        name, eq, value = (part.strip() for part in item.partition("="))
        try:
            parsed: T | None = read(value)
        except ValueError:
            parsed = None
        if not eq or not name.isidentifier() or parsed is None:
            raise ArgumentError(
                f"{flag}: {item.strip()!r} is not {form}; write e.g. {flag} {example}"
            )
        if name in out:
            raise ArgumentError(f"{flag}: {name!r} is given twice; give each {what} once")
        out[name] = parsed
    return out


def _steps(comp: Computation, directory: str, params: dict[str, int] | None) -> None:
    """``spf dot --steps DIR``: the PDFG after each command of ``comp.trace``."""
    t0 = time.perf_counter()
    _progress(f"replaying the {len(comp.trace)} command(s) of {comp.name!r}")
    history = comp.pdfg_history(params)
    _progress(f"rendering {len(history)} graphs with Graphviz to {directory}")
    written = history.render(directory)
    _progress(
        f"wrote {len(written) - 1} SVG files and {written[-1]} in {time.perf_counter() - t0:.2f} s"
    )


def _import_c(args: argparse.Namespace) -> str:
    """``spf import``: the Python that builds the imported Computation and its loops."""
    from spf.frontend import translate
    from spf.frontend.args import shape_options

    path = Path(args.file)
    if path.is_dir():
        raise ArgumentError(f"{args.file!r} is a directory; give a C source file")
    if not path.is_file():
        raise ArgumentError(f"no such file {args.file!r}")
    shapes = shape_options(args.shape)
    _progress(f"importing {args.function or 'the function'} from {path}")
    t = translate(path, args.function, args.param, None, shapes)
    loops = "\n".join(f"#   {line}" for line in t.comp.loop_structure().splitlines())
    return f"{t.as_python()}\n\n# loop structure:\n{loops}\n"


def _load_with_progress(spec: str) -> Computation:
    t0 = time.perf_counter()
    _progress(f"building {spec}()")
    comp = load(spec)
    _progress(f"built {comp!r} in {time.perf_counter() - t0:.2f} s")
    return comp


def _module_file(spec: str) -> Path | None:
    """The ``.py`` file of the module of ``MODULE:FUNCTION`` (imported by :func:`load`)."""
    module_name = spec.rpartition(":")[0]
    if module_name.endswith(".py"):
        return Path(module_name)
    file = getattr(sys.modules.get(module_name), "__file__", None)
    return Path(file) if file else None


def _not_the_input(output: str | None, source: Path | None) -> None:
    """An ``ArgumentError`` when ``-o output`` is the file the command reads (``source``)."""
    if not output or source is None or not (source.exists() and Path(output).exists()):
        return
    if os.path.samefile(output, source):
        raise ArgumentError(
            f"-o {output!r} is the input file {str(source)!r}: writing there would "
            "overwrite it; choose another output file"
        )


def _emit(text: str, output: str | None, source: Path | None = None) -> None:
    """``text`` on stdout, or in the file ``output`` (its folders created; through a
    symlink, to a device too), never over ``source``, the input. Only opened once ``text``
    is complete, so Ctrl-C before then leaves an existing file as it was."""
    if not output:
        sys.stdout.write(text)
        return
    _not_the_input(output, source)
    path = Path(output)
    if path.is_dir():
        raise ArgumentError(f"-o {output!r}: cannot write: it is a directory; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as err:
        raise ArgumentError(
            f"-o {output!r}: cannot write: {err.strerror or err}; give a writable file"
        ) from err
    _progress(f"wrote {output}")


if __name__ == "__main__":
    sys.exit(main())
