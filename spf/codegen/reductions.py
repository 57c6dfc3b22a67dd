"""Reduction loops in the printers: ``parallelize(loop, reduction="atomic" | "privatize")``.

C/OpenMP:

* ``atomic``: the loop is an ordinary ``#pragma omp parallel for``; every accumulation
  inside it is printed as ``#pragma omp atomic`` over ``target op= value`` (the form OpenMP
  accepts). A statement that is not one such update (a block with temporaries, an ``if``)
  cannot be made atomic: privatize it instead.
* ``privatize``: one ``#pragma omp parallel`` region around the loop. Thread 0 updates the
  shared array itself; its first thread to arrive allocates one copy of every reduced data
  space for each other thread of the team on the heap (``malloc``), each of those fills its
  copy with the operator's identity (0 for ``+``, 1 for ``*``); every thread runs its share
  of the iterations (``#pragma omp for``) with the data space's access macro redirected to
  its copy, and after the loop's barrier the copies are combined into the shared array
  (elements split over the threads), then freed. With one thread there is no copy and no
  combination: the loop costs what the serial one does.
  Not OpenMP's ``reduction(+: y[:n])``: gcc (12.2, here) places the private copy of an array
  section on each thread's stack, and a worker thread's stack (``OMP_STACKSIZE``, 2-8 MiB
  by default) overflows at a million doubles (measured: a segmentation fault at
  ``n = 2**20`` with two threads), while data spaces here are sized by parameters.

CUDA: ``atomic`` on a gpu loop (map it with ``gpu(...)`` first, then
``parallelize(loop, reduction="atomic")``) prints ``atomicAdd(&target, value)`` in the
kernel (``-=`` adds the negated value; double ``atomicAdd`` needs sm_60, below every
architecture nvcc 12+ builds for by default); the CPU emulation header defines
``atomicAdd`` too. ``*=`` updates have no CUDA atomic. Other combinations (``privatize`` on
CUDA, a reduction loop on the CUDA host, MPI and HLS) are a ``CodegenError`` naming the loop,
the option and the targets that support it: no serial fallback that claims parallelism.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.cexpr import stmt_lines
from spf.codegen.loop_ast import Call, For, walk
from spf.errors import CodegenError
from spf.schedule.tags import reduction_option

if TYPE_CHECKING:
    from spf.codegen.c import CPrinter
    from spf.codegen.emitter import Emitter
    from spf.codegen.program import DataMacro, Program

SUPPORT = {"atomic": "c (OpenMP) and cuda (on gpu loops)", "privatize": "c (OpenMP)"}
"""The targets that run each option."""

THREADS_PRELUDE = """\
#ifdef _OPENMP
#include <omp.h>
#define spf_thread_num() omp_get_thread_num()
#define spf_num_threads() omp_get_num_threads()
#else
#define spf_thread_num() 0
#define spf_num_threads() 1
#endif
"""
"""Thread queries of the ``privatize`` code (one thread without OpenMP)."""
THREADS_MACROS = ("spf_thread_num", "spf_num_threads")
"""The macros :data:`THREADS_PRELUDE` defines."""

_IDENTITY = {"+": "0", "*": "1"}


def reduction_loops(program: Program) -> list[tuple[For, str]]:
    """``(loop, option)`` of every loop tagged ``reduction(<option>)``."""
    out = []
    for n in walk(program.body):
        if isinstance(n, For):
            option = reduction_option(n.tags)
            if option is not None:
                out.append((n, option))
    return out


def _refuse(n: For, option: str, target: str, why: str) -> CodegenError:
    return CodegenError(
        f'loop {n.var} is parallelized with reduction="{option}", which target {target!r} '
        f"does not run{why}; {option} reductions run on {SUPPORT[option]}: generate one of "
        "those, or parallelize the loop without reduction= if it carries no reduction"
    )


def check_target(program: Program, target: str) -> None:
    """Refuse reduction loops a target does not implement (``CodegenError``)."""
    for n, option in reduction_loops(program):
        gpu = _is_gpu(n)
        if target == "c" and gpu:
            raise _refuse(n, option, target, " on a gpu loop")
        if target == "cuda" and option == "atomic" and not gpu:
            raise _sequential_atomic(n, program)
        if target == "cuda" and option != "atomic":
            raise _refuse(n, option, target, "")
        if target in ("mpi", "hls"):
            raise _refuse(n, option, target, "")


def _is_gpu(n: For) -> bool:
    return any(t.startswith("gpu_") for t in n.tags)


def _sequential_atomic(n: For, program: Program) -> CodegenError:
    """The error for a ``reduction("atomic")`` loop that CUDA runs sequentially: inside each
    thread of a kernel, or on the host."""
    kernel = next(
        (g for g in walk(program.body) if isinstance(g, For) and _is_gpu(g) and _under(n, g)),
        None,
    )
    where = (
        f"inside each gpu thread of the kernel of loop {kernel.var}"
        if kernel is not None
        else "on the host, outside the kernels"
    )
    return CodegenError(
        f"loop {n.var} is parallelized with reduction=\"atomic\", but target 'cuda' runs it "
        f"sequentially {where}: its iterations run one after another and need no atomic "
        f"updates between them. Map loop {n.var} to gpu blocks or threads (name it, or a "
        f"piece of a split or tile of it, in stmt.gpu(...)), so that its updates become "
        "atomicAdds; "
        f"or leave it sequential: do not parallelize loop {n.var} when generating cuda"
    )


def _under(n: For, outer: For) -> bool:
    return any(m is n for m in walk(outer.body))


def accumulated(printer: CPrinter, n: For) -> dict[str, tuple[str, str]]:
    """``{data space: (C type, family)}`` of the reduction updates inside loop ``n``, less
    the data spaces a statement of the loop also assigns (``tmp(i) = 0.0`` then ``tmp(i) +=
    ...``) or reads otherwise (gramschmidt's ``R(k, j) += Q(i, k) * A(i, j)`` beside ``A(i,
    j) = A(i, j) - Q(i, k) * R(k, j)`` in its j loop): the legality check allowed the loop, so
    no dependence on those crosses its iterations, and a private copy would add its sum to
    the value the array came in with, or give its reader zeros for the array's values.
    A data space updated with two operators in the loop (gemm's ``C(i, j) = 0.5 * C(i, j)``
    then ``C(i, j) += ...``, privatized over ``i``) gets no copy either: the check refuses a
    reduction loop whose carried dependences mix operators or meet another access to the
    reduced data space, so none on it crosses the loop's iterations."""
    out: dict[str, tuple[str, str]] = {}
    families: dict[str, set[str]] = {}
    shared: set[str] = set()
    for c in walk(n.body):
        if isinstance(c, Call):
            macro = printer.macros[c.stmt]
            shared.update(macro.assigns)
            shared.update(macro.reads)
            for ds, family, ctype in macro.accumulates:
                out.setdefault(ds, (ctype, family))
                families.setdefault(ds, set()).add(family)
    shared.update(ds for ds, found in families.items() if len(found) > 1)
    return {ds: v for ds, v in out.items() if ds not in shared}


def atomic_call(printer: CPrinter, n: Call) -> None:
    """Print ``n`` as an OpenMP atomic update (inside a ``reduction(atomic)`` loop)."""
    from spf.codegen.c import expr

    macro = printer.macros[n.stmt]
    red = macro.update
    if red is None or not macro.accumulates:
        if macro.accumulates:
            raise CodegenError(
                f"statement {n.stmt} runs in a reduction(atomic) loop but is not one update "
                f"y(...) op= e ({' '.join(stmt_lines(macro.body))}): OpenMP's atomic takes one "
                'x op= expr; use reduction="privatize", or write the statement as one update'
            )
        printer.out.line(f"{n.stmt}({', '.join(expr(a) for a in n.args)});")
        return
    args = ", ".join(expr(a) for a in n.args)
    printer.out.omp("#pragma omp atomic", parallel=False)
    printer.out.line(f"{n.stmt}_target({args}) {red.op} {n.stmt}_value({args});")


def reduction_for(printer: CPrinter, n: For) -> None:
    """Print the parallel reduction loop ``n`` (tagged ``parallel`` and
    ``reduction(<option>)``) for C/OpenMP."""
    option = reduction_option(n.tags)
    if printer._reducing is not None:
        raise CodegenError(
            f"reduction loop {n.var} lies inside another reduction loop; parallelize one "
            "loop of the nest with reduction="
        )
    printer._reducing = option
    try:
        if option == "privatize":
            privatized_for(printer, n)
        else:
            printer.pragma(printer.pragma_parallel, parallel=True)
            printer.loop_only(n)
    finally:
        printer._reducing = None


def _macro_of(program: Program, ds: str) -> DataMacro:
    for d in program.data:
        if d.name == ds:
            return d
    raise CodegenError(f"spf bug: no access macro for data space {ds!r}")


def privatized_for(printer: CPrinter, n: For) -> None:
    """Print the ``privatize`` region around loop ``n`` (see the module docstring)."""
    spaces = accumulated(printer, n)
    decls = _private_copies(printer, n, spaces)
    if not decls:
        printer.pragma(printer.pragma_parallel, parallel=True)
        printer.loop_only(n)
        return
    _private_region(printer, n, decls)


def _private_copies(
    printer: CPrinter, n: For, spaces: dict[str, tuple[str, str]]
) -> list[tuple[str, DataMacro, str, str, str]]:
    """``(data space, macro, C type, family, element count)`` of the copies to make."""
    decls: list[tuple[str, DataMacro, str, str, str]] = []
    for ds, (ctype, family) in spaces.items():
        d = _macro_of(printer.p, ds)
        if d.buffer is not None:
            raise CodegenError(
                f'loop {n.var} is parallelized with reduction="privatize" but data space '
                f"{ds!r} is stored in buffer {d.buffer!r}; privatize copies a data space "
                'that is its own array: drop store_in for it or use reduction="atomic"'
            )
        if d.rank and len(d.extents) < d.rank:
            raise CodegenError(
                f'loop {n.var} is parallelized with reduction="privatize" but data space '
                f"{ds!r} has no shape, so its private copies cannot be sized; declare it "
                "with add_data_space(..., shape=(...))"
            )
        count = " * ".join(f"(size_t)({e})" for e in d.extents) or "(size_t)1"
        decls.append((ds, d, ctype, family, count))
    return decls


def _private_region(
    printer: CPrinter, n: For, decls: list[tuple[str, DataMacro, str, str, str]]
) -> None:
    from spf.codegen.program import linearize

    out = printer.out
    out.line(f"/* reduction(privatize) over loop {n.var}: per-thread copies of "
             f"{', '.join(ds for ds, *_ in decls)} */")  # fmt: skip
    with out.braces():
        for ds, _, ctype, _, count in decls:
            out.line(f"const size_t spf_n_{ds} = {count};")
            out.line(f"{ctype} *spf_copies_{ds} = NULL;")
        out.line("int spf_team = 1;")
        out.omp("#pragma omp parallel", parallel=True)
        with out.braces():
            out.omp("#pragma omp single", parallel=False)
            with out.braces():
                out.line("spf_team = spf_num_threads();")
                for ds, _, ctype, _, _ in decls:
                    out.line(
                        f"spf_copies_{ds} = ({ctype} *)malloc(sizeof({ctype}) * "
                        f"(spf_n_{ds} * (size_t)(spf_team - 1) + 1));"
                    )
                    out.line(f"if (!spf_copies_{ds}) abort();")
            out.line("const int spf_me = spf_thread_num();")
            for ds, _, ctype, family, _ in decls:
                out.line(
                    f"{ctype} *spf_my_{ds} = spf_me == 0 ? {ds} : spf_copies_{ds} + "
                    f"(size_t)(spf_me - 1) * spf_n_{ds};"
                )
                out.line("if (spf_me != 0)")
                out.line(f"  for (size_t spf_e = 0; spf_e < spf_n_{ds}; spf_e++)")
                out.line(f"    spf_my_{ds}[spf_e] = {_IDENTITY[family]};")
            for ds, d, *_ in decls:
                dims = [f"t{k}" for k in range(d.rank)]
                out.line(f"#undef {ds}")
                out.line(
                    f"#define {ds}({', '.join(dims)}) spf_my_{ds}[{linearize(dims, d.extents)}]"
                )
            out.omp("#pragma omp for", parallel=False)
            printer.loop_only(n)
            for ds, d, *_ in decls:
                dims = [f"t{k}" for k in range(d.rank)]
                out.line(f"#undef {ds}")
                out.line(f"#define {ds}({', '.join(dims)}) {printer.p.access(d)}")
            out.line("if (spf_team > 1)")  # the same branch in every thread of the team
            with out.braces():
                for ds, _, ctype, family, _ in decls:
                    _combine(out, ds, ctype, family)
        for ds, *_ in decls:
            out.line(f"free(spf_copies_{ds});")


def _combine(out: Emitter, ds: str, ctype: str, family: str) -> None:
    """Add (multiply) the copies of threads 1.. into ``ds``, elements split over the team."""
    op = "*" if family == "*" else "+"
    out.omp("#pragma omp for", parallel=False)
    out.line(f"for (size_t spf_e = 0; spf_e < spf_n_{ds}; spf_e++)")
    with out.braces():
        out.line(f"{ctype} spf_sum = {_IDENTITY[family]};")
        out.line("for (int spf_t = 0; spf_t < spf_team - 1; spf_t++)")
        out.line(f"  spf_sum {op}= spf_copies_{ds}[(size_t)spf_t * spf_n_{ds} + spf_e];")
        out.line(f"{ds}[spf_e] {op}= spf_sum;")


_CUDA_ATOMIC_TYPES = ("double", "float", "int32_t", "uint32_t", "int", "unsigned int")
"""Element types CUDA's ``atomicAdd`` takes (no signed 64-bit form)."""


def cuda_atomic(printer: CPrinter, n: Call) -> str | None:
    """The device line of ``n`` when it runs in a gpu loop tagged ``reduction(atomic)``:
    ``atomicAdd(&target, value)``; None for statements outside such loops."""
    from spf.codegen.c import expr

    inside = {
        c.stmt
        for loop, option in reduction_loops(printer.p)
        if option == "atomic"
        for c in walk(loop.body)
        if isinstance(c, Call)
    }
    macro = printer.macros[n.stmt]
    if n.stmt not in inside or not macro.accumulates:
        return None
    red = macro.update
    if red is None or red.op not in ("+=", "-="):
        raise CodegenError(
            f"statement {n.stmt} runs in a reduction(atomic) gpu loop but is not one update "
            f"y(...) += e or -= e ({' '.join(stmt_lines(macro.body))}): CUDA's atomicAdd adds "
            "one value; "
            "write it as one += update, or generate target 'c'"
        )
    if red.ctype not in _CUDA_ATOMIC_TYPES:
        raise CodegenError(
            f"statement {n.stmt} updates {red.data_space!r} of type {red.ctype} atomically, "
            f"which CUDA's atomicAdd does not take ({', '.join(_CUDA_ATOMIC_TYPES[:4])}); "
            "declare the data space with one of those types"
        )
    args = ", ".join(expr(a) for a in n.args)
    value = f"{n.stmt}_value({args})"
    if red.op == "-=":
        value = f"-({value})"
    return f"atomicAdd(&({n.stmt}_target({args})), ({red.ctype})({value}));"
