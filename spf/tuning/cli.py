"""``spf tune KERNEL [--matrix FILE.mtx] [--sizes N=512,...] [--budget S] [--cflags "..."] ...``.

``spf tune spmv --matrix FILE.mtx --formats [CSR,SELL,...] [--refine]`` chooses SpMV's storage
format instead (:func:`spf.formats.tune`, :mod:`spf.tuning.formats_cli`).

``KERNEL`` is a function of :mod:`spf.kernels` by name (``gemm``, ``spmv_csr``) or a C file
imported with :func:`spf.from_c` (``--function`` picks the function). The arguments come
from the Matrix Market file and the sizes (:mod:`spf.tuning.inputs`). Progress is a bar on a
terminal, lines on stderr otherwise; the result (speedup, times, counts and the schedule as
Python to paste) goes to stdout.
"""

from __future__ import annotations

import inspect
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spf.errors import ArgumentError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence

    from spf.computation.computation import Computation


def add_parser(commands: Any) -> None:
    """Register ``spf tune`` with the ``spf`` command's subparsers."""
    tune = commands.add_parser(
        "tune",
        help="search a faster legal schedule for a kernel (spf.tune)",
        description="Tune the schedule of an spf.kernels kernel (by name) or of a C function "
        "on a Matrix Market matrix or given sizes, and print the schedule found.",
    )
    tune.add_argument("kernel", metavar="KERNEL", help="a function of spf.kernels or FILE.c")
    tune.add_argument("--matrix", metavar="FILE.mtx", help="Matrix Market file (sparse kernels)")
    tune.add_argument(
        "--sizes", metavar="N=512,M=512", help="values of the symbolic constants (dense sizes)"
    )
    tune.add_argument("--function", help="the C function to import (default: the only one)")
    tune.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="keep the C file's #define'd NAME symbolic, so --sizes sets it (repeatable)",
    )
    tune.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=EXT,EXT",
        help="extents of a pointer parameter of the C function, e.g. --shape x=n (repeatable)",
    )
    tune.add_argument("--budget", type=float, default=60.0, help="seconds (default: 60)")
    tune.add_argument("--seed", type=int, default=None, help="seed of the search")
    tune.add_argument("--threads", type=int, default=None, help="OpenMP threads (default: tried)")
    tune.add_argument(
        "--cflags",
        metavar='"-O3 ..."',
        default=None,
        help="compiler flags of every candidate and the default, one shell-quoted string "
        "(--cflags='-O3 -march=native'; default: spf's; part of the record's key)",
    )
    tune.add_argument(
        "--no-reuse", dest="reuse", action="store_false", help="search even when a record exists"
    )
    tune.add_argument(
        "--formats",
        nargs="?",
        const="all",
        default=None,
        metavar="CSR,SELL,...",
        help="choose SpMV's storage format on --matrix (spf.formats.tune) among these "
        "families (default: all of them)",
    )
    tune.add_argument(
        "--refine",
        action="store_true",
        help="with --formats: refine the chosen format's schedule with spf.tune's search",
    )


def load_kernel(
    spec: str,
    function: str | None,
    shapes: Mapping[str, tuple[int | str, ...]] | None = None,
    params: Sequence[str] = (),
) -> Computation:
    """The Computation of ``spec``: an ``spf.kernels`` function name or a ``.c`` file (whose
    pointers' extents are ``shapes``, ``--shape``, and whose #define'd ``params`` stay
    symbolic, ``--param``)."""
    from spf import kernels

    if spec.endswith((".c", ".h")):
        from spf.frontend import from_c

        path = Path(spec)
        if not path.is_file():
            raise ArgumentError(f"no such file {spec!r}")
        return from_c(path, function, params or None, shapes=shapes or None)
    if shapes or params:
        raise ArgumentError(
            f"--shape and --param are for a C file's pointers and #defines; {spec!r} is a "
            "kernel of spf.kernels (its shapes and constants are declared): leave them out"
        )
    if function is not None:
        raise ArgumentError(
            f"--function picks a function of a C file; {spec!r} is a kernel of spf.kernels: "
            "leave --function out, or give FILE.c"
        )
    fn = getattr(kernels, spec, None)
    known = sorted(
        n for n, v in vars(kernels).items()
        if inspect.isfunction(v) and v.__module__ == kernels.__name__ and not n.startswith("_")
    )  # fmt: skip
    if fn is None or spec not in known:
        raise ArgumentError(
            f"unknown kernel {spec!r}; spf.kernels has {', '.join(known)}, or give FILE.c"
        )
    try:
        built = fn()
    except TypeError as err:
        raise ArgumentError(
            f"spf.kernels.{spec} takes arguments ({err}); tune it from Python"
        ) from err
    from spf.computation.computation import Computation

    if not isinstance(built, Computation):
        raise ArgumentError(
            f"spf.kernels.{spec} builds a {type(built).__name__}, not one Computation that "
            "spf tune can schedule; tune its computations from Python (spf.tune)"
        )
    return built


def cflags(text: str | None) -> list[str] | None:
    """``--cflags`` split as a shell would (None when not given)."""
    if text is None:
        return None
    try:
        flags = shlex.split(text)
    except ValueError as err:
        raise ArgumentError(f"--cflags {text!r}: {err}; quote it as one shell string") from err
    if not flags:
        raise ArgumentError(
            "--cflags is empty; give compiler flags such as --cflags '-O3 -march=native'"
        )
    return flags


def run(
    args: argparse.Namespace,
    sizes: Mapping[str, int] | None,
    progress: Callable[[str], None],
) -> int:
    """``spf tune``: tune and print the result (``sizes``: ``--sizes`` parsed; ``progress``
    writes a line to stderr)."""
    from spf.tuning import tune
    from spf.tuning.inputs import kernel_args

    if args.formats is not None or args.refine:
        from spf.tuning.formats_cli import run_formats

        return run_formats(args, progress)
    from spf.frontend.args import shape_options

    comp = load_kernel(args.kernel, args.function, shape_options(args.shape), args.param)
    matrix = None
    if args.matrix:
        from spf.sparse import read_matrix_market

        if not Path(args.matrix).is_file():
            raise ArgumentError(f"no such file {args.matrix!r}")
        matrix = read_matrix_market(args.matrix)
    kargs = kernel_args(comp, matrix, sizes, seed=0)
    shapes = ", ".join(
        f"{k}{list(v.shape)}" if hasattr(v, "shape") else f"{k}={v}" for k, v in kargs.items()
    )
    progress(f"tuning {comp.name} on {shapes} for at most {args.budget:g} s")
    res = tune(comp, kargs, budget=args.budget, seed=args.seed, reuse=args.reuse,
               threads=args.threads, cflags=cflags(args.cflags))  # fmt: skip
    how = "from the record (nothing measured)" if res.reused else (
        f"{res.tried} candidates measured, {res.illegal} refused by the legality check"
    )  # fmt: skip
    out = sys.stdout
    if res.interrupted:
        out.write("# interrupted (Ctrl-C): the best schedule measured so far, not recorded\n")
    out.write(f"# {comp.name}: {res.speedup:.2f}x ({res.time:.4g} s vs {res.baseline_time:.4g} s "
              f"default, medians of interleaved runs); {how}\n")  # fmt: skip
    if res.threads is not None:
        out.write(f"# timed with {res.threads} OpenMP thread(s)\n")
    if res.record is not None:
        out.write(f"# record: {res.record}\n")
    if not res.reused and not res.interrupted and res.tried == 0 and res.illegal == 0:
        out.write("# no candidate was measured within the budget: give a larger --budget\n")
    out.write((res.commands or "# the default schedule is the fastest found") + "\n")
    return 0
