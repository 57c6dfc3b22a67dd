"""The CUDA printer: a ``Program`` -> one ``.cu`` translation unit (kernels + host function).

Every loop nest whose outer loops are tagged ``gpu_block(k)`` (``stmt.gpu``/``tile_gpu``)
becomes one ``__global__`` kernel: block loop variables come from ``blockIdx``, thread loop
variables from ``threadIdx`` (the innermost loop of each kind is ``x``), and each gpu loop's
own condition guards what follows, so partial blocks are exact. Inside the block loops the
kernel may hold several thread-loop nests (statements that share the block loops but not
the thread loops) and block-uniform code around them; consecutive nests are separated by
``__syncthreads()`` (a ``barrier_at`` operation there, or one the printer adds), so each nest
sees what the previous one wrote, as the sequential loops mean. A barrier inside thread
loops is allowed where every thread reaches it: in the kernel's only thread nest and under
no condition or loop bound that differs between threads (threads outside the nest's bounds
exit, and exited threads count as arrived, as on Volta and later). The grid and block
extents are computed on the host from the loops' bounds (interval bounds over the
enclosing gpu and block-level loops, so ``min``/``max`` and parameters are fine).
Statements outside gpu loops run on the host.

What the dependence check proves (``check_legality``, on unless ``check=False``): the
printed kernel computes what the sequential loops mean when no dependence is carried by a
gpu loop. Within one thread nest the threads run concurrently, which the ``gpu_thread`` tags
claim; between thread nests, and between iterations of a sequential loop around them
(``for bi, bj [blocks]: for kk: {thread nest; thread nest}``, the shared-tile GEMM of
``examples/cuda_gemm.py``), the barriers give the sequential order. ``shared`` buffers have
one copy per block and ``local`` ones one per thread (:mod:`spf.analysis.dependences`), so
they carry no dependence across gpu loops; every read of them must read what its own block
(thread, in the same thread nest iteration) wrote earlier in the kernel, and kernels do not
write ``constant`` memory. A
``barrier_at`` inside thread loops (the textbook form, thread loops outside ``kk``) is
printed, but its sequential meaning is not the GPU's, so the check refuses it: only
``check=False`` prints it, on the user's responsibility.

The host function ``int name(<the C signature>, const int64_t *spf_count, const unsigned
char *spf_on_device)`` takes host pointers and the element count of each array argument (in
signature order), allocates device memory, copies in what the kernels use, launches, copies
out what they write, frees, and returns 0 (or 1, with the message in ``name_spf_error()``).
With statements on the host too, the copies go around each launch. An array argument whose
``spf_on_device`` flag is set is already device memory (a CuPy / PyTorch array): the host
function launches on it as given, with no allocation, copy or free, after a
``cudaDeviceSynchronize`` (work queued on any stream has finished). Only arguments no host
code touches may be device memory: ``name_spf_device_args()`` says which, one letter per
array argument (``d``: may; ``h``: host statements use it; ``b``: other host code reads it,
loop bounds or grid sizes; ``x``: a Layer IV copy names it; ``m``: constant/shared/local
memory), ``name_spf_to_host`` copies device memory to the
host (for ``check=True`` on device index arrays, :mod:`spf.runtime.cuda`), and
``name_spf_where`` says where CUDA finds a pointer (``cudaPointerGetAttributes``: the runtime
refuses a device array a kernel on the current GPU cannot read before it launches). Layer IV
operations ``host_to_device`` / ``device_to_host`` replace the implicit copies of the
arrays they name (those are then copied exactly where the schedule puts them, and copied in
implicitly when only a ``device_to_host`` names them; every other array keeps its implicit
copies); ``barrier`` is ``__syncthreads()`` in a kernel
and ``cudaDeviceSynchronize()`` on the host. Buffers: ``shared`` -> ``__shared__``,
``local`` / ``stack`` -> a per-thread array (in a kernel; a host array when only host code
uses it), ``constant`` -> ``__constant__`` filled with ``cudaMemcpyToSymbol``, ``global`` ->
device memory like any array argument; a local private to a loop (``add_local(...,
private=...)``) -> a zeroed per-thread array inside the thread loops, and a ``__shared__``
array the block's threads zero together when its loop is a block-level one (its one copy per
iteration is shared by the threads inside).

Kernels are launched through one macro, ``SPF_LAUNCH(kernel, grid, block, args...)``:
``kernel<<<grid, block>>>(args...)`` under nvcc, and whatever the including header defines
otherwise (spf's CPU emulator, ``spf/runtime/spf_cuda_emu.h``, or the GPU bridge,
``spf/runtime/spf_cuda_bridge.h``), so the same text builds with nvcc, with NVRTC (the host
part is skipped under ``__CUDACC_RTC__`` and ``SPF_DEVICE_ONLY``) and with g++.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from spf.cexpr import to_c, to_c_arg, to_c_at
from spf.clang import C_PREC
from spf.codegen.c import CPrinter, expr, loop_tree
from spf.codegen.cuda_limits import (
    KernelMemory,
    block_checks,
    check_constant_memory,
    grid_checks,
)
from spf.codegen.cuda_names import check_cuda_names
from spf.codegen.emitter import Emitter
from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Block,
    Call,
    Expr,
    For,
    If,
    Int,
    Merge,
    Node,
    Op,
    UFRead,
    Var,
    cursor_exprs,
    expr_vars,
    walk,
)
from spf.codegen.program import index_tree
from spf.codegen.reductions import cuda_atomic
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.codegen.program import BufferDecl, Operation, Program
    from spf.codegen.signature import Arg
    from spf.codegen.unit import TranslationUnit

PRELUDE = """\
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#endif

/* One launch macro: CUDA's <<<>>> under nvcc; spf's emulator and GPU bridge define their own. */
#ifndef SPF_LAUNCH
#define SPF_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block)>>>(__VA_ARGS__)
#endif

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
"""

DIMS = "xyz"
DEVICE_PREFIX = "spf_d_"
CONSTANT_PREFIX = "spf_c_"
SCALAR_PREFIX = "spf_p_"
"""A kernel parameter carrying a scalar whose own C type is not 8 bytes wide (:func:`carrier`)."""
_DEVICE = ("shared", "local")
"""Buffer scopes a kernel declares itself (a host ``Alloc`` of one prints nothing)."""
_GPU = ("gpu_block", "gpu_thread")


def carrier(ctype: str) -> str:
    """The 8-byte type a kernel takes a scalar of C type ``ctype`` in: ``double`` for
    floating types, ``uint64_t`` for unsigned ones, else ``int64_t`` (the GPU bridge passes
    8-byte arguments, spf_cuda_bridge.h). A scalar of another type is cast back to it at the
    kernel's top, so statements compute with the type the constant was declared with."""
    if ctype in ("float", "double"):
        return "double"
    return "uint64_t" if ctype.startswith("uint") else "int64_t"


def _no_sums(n: For, kernel: str) -> None:
    """Refuse loop ``n`` of CUDA kernel ``kernel`` tagged ``sums(...)`` (``partial_sums``:
    :mod:`spf.codegen.partial_sums` prints it for C/OpenMP and MPI only)."""
    for t in n.tags:
        if t.startswith("sums("):
            raise CodegenError(
                f"loop {n.var} of CUDA kernel {kernel} is tagged {t} (partial_sums), which "
                "C/OpenMP and MPI code print; in a CUDA kernel the loop runs in order: drop "
                "partial_sums for target='cuda'"
            )


def _gpu_kind(n: For) -> tuple[str, int] | None:
    """``("gpu_block", 0)`` for a loop tagged ``gpu_block(0)``; None for other loops."""
    found = []
    for t in n.tags:
        kind, _, rest = t.partition("(")
        if kind in _GPU:
            index = rest.rstrip(")")
            found.append((kind, int(index) if index.isdigit() else 0))
    if len(set(found)) > 1:
        raise CodegenError(
            f"loop {n.var} carries the gpu tags {', '.join(n.tags)} (statements sharing it "
            "map it differently); give every statement of the loop the same gpu(...) mapping"
        )
    return found[0] if found else None


# ----------------------------------------------------------------------------- bounds


def _upper(n: For) -> Expr:
    """The largest value of ``n.var`` its condition allows (a min over the conjuncts)."""
    found: list[Expr] = []

    def visit(c: Expr) -> None:
        if not isinstance(c, Op):
            return
        if c.op == "&&":
            for a in c.args:
                visit(a)
            return
        if len(c.args) != 2:
            return
        a, b = c.args
        if c.op in (">", ">="):
            a, b = b, a
            op = "<" if c.op == ">" else "<="
        else:
            op = c.op
        if isinstance(a, Var) and a.name == n.var and n.var not in set(expr_vars(b)):
            if op == "<=":
                found.append(b)
            elif op == "<":
                found.append(Op("-", (b, Int(1))))

    visit(n.cond)
    if not found:
        raise CodegenError(
            f"gpu loop {n.var}: cannot read an upper bound from its condition {expr(n.cond)}; "
            "the grid is computed from bounds of the form `var <= e` / `var < e`"
        )
    out = found[0]
    for e in found[1:]:
        out = Op("min", (out, e))
    return out


@dataclass
class _Bounds:
    """Interval bounds, as host expressions, of the gpu loop variables seen so far."""

    lo: dict[str, Expr] = field(default_factory=dict)
    hi: dict[str, Expr] = field(default_factory=dict)
    unknown: set[str] = field(default_factory=set)
    """Variables of the kernel without a host bound (UF values bound between gpu loops)."""

    def bound(self, e: Expr, upper: bool) -> Expr | None:
        """A host expression ``>= e`` (``upper``) or ``<= e``; None when there is none."""
        names = set(expr_vars(e))
        if not names & (set(self.hi) | self.unknown):
            return e
        if isinstance(e, Var):
            table = self.hi if upper else self.lo
            return table.get(e.name)
        if isinstance(e, UFRead):
            return None
        assert isinstance(e, Op)
        return self._op(e, upper)

    def _op(self, e: Op, upper: bool) -> Expr | None:
        args = e.args
        if e.op == "neg":
            inner = self.bound(args[0], not upper)
            return None if inner is None else Op("neg", (inner,))
        if e.op in ("+", "-"):
            a = self.bound(args[0], upper)
            b = self.bound(args[1], upper if e.op == "+" else not upper)
            return None if a is None or b is None else Op(e.op, (a, b))
        if e.op == "*":
            return self._mul(args, upper)
        if e.op in ("floord", "/") and isinstance(args[1], Int) and args[1].value > 0:
            a = self.bound(args[0], upper)
            return None if a is None else Op("floord", (a, args[1]))
        if e.op == "%" and isinstance(args[1], Int) and args[1].value > 0:
            # the start of a strided loop, (i0 + 1) % 3: C's remainder has the dividend's sign
            most = args[1].value - 1
            return Int(most) if upper else Op("neg", (Int(most),))
        if e.op in ("min", "max"):
            parts = [self.bound(a, upper) for a in args]
            known = [p for p in parts if p is not None]
            # an upper bound of a min needs one argument's; of a max, every argument's
            loose = (e.op == "min") == upper
            if not known or (not loose and len(known) != len(parts)):
                return None
            out = known[0]
            for p in known[1:]:
                out = Op(e.op, (out, p))
            return out
        return None

    def _mul(self, args: tuple[Expr, ...], upper: bool) -> Expr | None:
        const, other = (args[0], args[1]) if isinstance(args[0], Int) else (args[1], args[0])
        if not isinstance(const, Int):
            return None
        inner = self.bound(other, upper if const.value >= 0 else not upper)
        return None if inner is None else Op("*", (const, inner))


# ----------------------------------------------------------------------------- gpu nests


@dataclass
class _Nest:
    """A chain of consecutive gpu loops of one kind (block or thread), with the guards, UF
    bindings and allocations between them, and the body inside the innermost loop."""

    chain: list[Node]
    loops: list[For]
    body: Node


def _chain(n: For, kind: str) -> _Nest:
    chain: list[Node] = []
    pending: list[Node] = []
    node: Node = n
    last = n
    while True:
        if isinstance(node, For) and (_gpu_kind(node) or ("", 0))[0] == kind:
            chain += [*pending, node]
            pending = []
            last = node
            node = node.body
        elif isinstance(node, Block) and len(node.items) == 1:
            node = node.items[0]
        elif isinstance(node, If) and node.orelse is None:
            pending.append(node)
            node = node.then
        elif isinstance(node, (Bind, Alloc)):
            pending.append(node)
            node = node.body
        else:
            break
    loops = [c for c in chain if isinstance(c, For)]
    if len(loops) > 3:
        raise CodegenError(
            f"gpu loops {', '.join(f.var for f in loops)}: CUDA has at most 3 "
            f"{kind.split('_')[1]} dimensions; map fewer loops"
        )
    return _Nest(chain, loops, last.body)


def _is_thread(n: Node) -> bool:
    kind = _gpu_kind(n) if isinstance(n, For) else None
    return kind is not None and kind[0] == "gpu_thread"


def _thread_nests(n: Node) -> int:
    """The number of thread-loop nests (outermost gpu_thread loops) under ``n``."""
    kind = _gpu_kind(n) if isinstance(n, For) else None
    if kind is not None and kind[0] == "gpu_thread":
        return 1
    if isinstance(n, Block):
        return sum(_thread_nests(i) for i in n.items)
    if isinstance(n, If):
        return _thread_nests(n.then) + (0 if n.orelse is None else _thread_nests(n.orelse))
    if isinstance(n, (For, Bind, Alloc)):
        return _thread_nests(n.body)
    return 0


def _has_gpu(n: Node) -> bool:
    return any(isinstance(m, For) and _gpu_kind(m) is not None for m in walk(n))


# ----------------------------------------------------------------------------- printer


@dataclass
class _Kernel:
    name: str
    text: str
    arrays: list[str]
    """Array arguments the kernel uses (device pointers passed to it)."""
    scalars: list[str]
    """Host variables passed to it (parameters, then enclosing host loop/UF variables)."""
    local_bytes: int = 0
    """The bytes of local arrays each of its threads declares."""


class CudaPrinter(CPrinter):
    """Prints the ``.cu`` unit: macros, kernels, then the host function."""

    # host loops run serially: a kernel launch inside an OpenMP loop would race on errors
    pragma_parallel = "/* parallel loop: runs serially on the host in the CUDA target */"
    pragma_simd = "/* vector loop */"
    omp_pragmas = False
    unit_target = "cuda"
    row_scalars = False
    prefetches = False
    shareable = False  # __constant__ arrays, the host's message buffer

    def unit(self) -> TranslationUnit:
        """The ``.cu`` unit with its record, which names the ``__global__`` kernels."""
        self.print()
        unit = self.out.unit("cuda", kernels=[k.name for k in self.kernels])
        local = max((k.local_bytes for k in self.kernels), default=0)
        return replace(unit, local_bytes=local)

    def __init__(self, program: Program) -> None:
        check_cuda_names(program)
        super().__init__(program)
        self.fname = program.signature.function
        self.buffers: dict[str, BufferDecl] = {b.name: b for b in program.buffers}
        self.kernels: list[_Kernel] = []
        self.host_scope: list[str] = []
        self.device_allocs: list[str] = []  # shared/local buffers allocated around launches
        self.arrays = [a for a in program.signature.args if a.kind != "param"]
        self.array_names = {a.name for a in self.arrays}
        self.params = [a.name for a in program.signature.args if a.kind == "param"]
        self.param_types = {a.name: a.ctype for a in program.signature.args if a.kind == "param"}
        self.local_names = {name for name, _, _ in program.locals}
        ops = [s.operation for s in program.stmts if s.operation is not None]
        self.explicit = {
            kind: {o.buffer for o in ops if o.kind == kind and o.buffer}
            for kind in ("host_to_device", "device_to_host")
        }
        """Arrays a Layer IV copy names, by direction."""
        self.copied = self.explicit["host_to_device"] | self.explicit["device_to_host"]
        """Arrays a Layer IV copy names: copied back only where a ``device_to_host`` is (none:
        the result stays on the device, as the program says), and copied in only where a
        ``host_to_device`` is, or implicitly when none names them (a kernel must not read
        device memory nothing wrote). Every other array keeps both implicit copies."""
        self.host_calls = self._host_calls(program.body)
        self.deps = self._macro_identifiers()
        self.on_device: set[str] = set()
        """Arrays a ``host_to_device`` copied, or a kernel wrote, so far in print order
        (:meth:`_check_copied_in`)."""
        self._codes: str | None = None  # _device_codes, once

    # ------------------------------------------------------------------ analysis

    def _host_calls(self, n: Node) -> bool:
        """Whether a statement (other than a Layer IV operation) runs on the host."""
        if isinstance(n, For) and _gpu_kind(n) is not None:
            return False
        if isinstance(n, Call):
            op = self.macros[n.stmt].operation if n.stmt in self.macros else None
            return op is None
        if isinstance(n, Block):
            return any(self._host_calls(i) for i in n.items)
        if isinstance(n, If):
            return self._host_calls(n.then) or (n.orelse is not None and self._host_calls(n.orelse))
        if isinstance(n, Merge):
            return any(self._host_calls(b) for b in n.bodies())
        return self._host_calls(n.body)

    def _host_statements(self, n: Node) -> set[str]:
        """The statements (not Layer IV operations) that run on the host, the variables of
        their arguments, and the UFs whose values those come from (through the host code's
        bindings, ``const int64_t col_k = col(k)``): what host statements read, as against
        the loop bounds and grid sizes of the host code."""
        out: set[str] = set()
        binds: list[Bind] = []
        todo = [n]
        while todo:
            m = todo.pop()
            if isinstance(m, For) and _gpu_kind(m) is not None:
                continue
            if isinstance(m, Bind):
                binds.append(m)
            if isinstance(m, Call):
                if m.stmt in self.macros and self.macros[m.stmt].operation is None:
                    out.add(m.stmt)
                    out |= {v for e in m.args for v in _expr_names(e)}
            elif isinstance(m, Block):
                todo += m.items
            elif isinstance(m, If):
                todo += [m.then] if m.orelse is None else [m.then, m.orelse]
            elif isinstance(m, Merge):
                todo += m.bodies()
            else:
                todo.append(m.body)
        grown = True
        while grown:  # a binding feeds another (x(col(rowptr(i))))
            grown = False
            for bind in binds:
                if bind.var in out and bind.uf not in out:
                    out |= {bind.uf, *(v for e in bind.args for v in _expr_names(e))}
                    grown = True
        return out

    def _macro_identifiers(self) -> dict[str, set[str]]:
        """Identifiers each macro's expansion names (to find the arrays a kernel uses)."""
        deps: dict[str, set[str]] = {}
        for s in self.p.stmts:
            deps[s.name] = set(s.names)
            deps[f"{s.name}_target"] = deps[f"{s.name}_value"] = deps[s.name]
        for d in self.p.data:  # the memory the access macro reads: an array or a buffer
            memory = {d.name if d.buffer is None else d.buffer}
            deps.setdefault(d.name, set()).update({d.name, *memory, *filter(None, [d.offset])})
        for b in self.p.buffers:
            deps.setdefault(b.name, set()).add(b.name)
        return deps

    def _uses(self, names: set[str]) -> set[str]:
        """``names`` and every name the macros they call refer to, transitively."""
        seen: set[str] = set()
        todo = set(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo |= self.deps.get(name, set()) - seen
        return seen

    def _names(self, n: Node, *, host: bool) -> set[str]:
        """The names the printed code of ``n`` refers to: loop variables, the variables and
        UFs of its bounds, guards and bindings, the statements it calls, the buffers it
        declares and the arrays its copies move. ``host``: the host code, where a gpu
        block loop is a launch (its kernel's names are the kernel's own) and a shared or
        local buffer is declared in the kernels."""
        out: set[str] = set()
        todo = [n]
        while todo:
            m = todo.pop()
            if isinstance(m, Block):
                todo += m.items
                continue
            if host and isinstance(m, For) and _gpu_kind(m) is not None:
                continue
            out |= {v for e in _own_exprs(m) for v in _expr_names(e)}
            if isinstance(m, (For, Bind)):
                out.add(m.var)
            if isinstance(m, Bind):
                out.add(m.uf)
            if isinstance(m, Alloc) and not (host and self._buffer(m.buffer).scope in _DEVICE):
                out.add(m.buffer)
            if isinstance(m, Merge):
                out |= {m.left.var, m.right.var}
                todo += m.bodies()
            elif isinstance(m, Call):
                out.add(m.stmt)
                op = self.macros[m.stmt].operation
                if host and op is not None and op.buffer is not None:
                    out.add(op.buffer)
            elif isinstance(m, If):
                todo += [m.then] if m.orelse is None else [m.then, m.orelse]
            else:
                todo.append(m.body)
        return out

    # ------------------------------------------------------------------ output

    def print(self) -> str:
        host = Emitter()
        self.out = host
        with host.indented(), host.indented():
            self.node(self.p.body)
        body = host.text().rstrip("\n")
        out = Emitter()
        out.take_notes(host)
        out.line(
            f"/* spf CUDA translation unit: {len(self.kernels)} kernel(s) and the host "
            f"function {self.fname}. */"
        )
        out.raw(PRELUDE)
        self.out = out
        self._macros()
        self._constants(out)
        for k in self.kernels:
            out.line("")
            out.raw(k.text)
        out.line("")
        out.line("#if !defined(__CUDACC_RTC__) && !defined(SPF_DEVICE_ONLY)")
        self._host_function(out, body)
        out.line("#endif /* host code */")
        return out.text()

    def _constants(self, out: Emitter) -> None:
        constant = [(b, _static_count(b)) for b in self.p.buffers if b.scope == "constant"]
        check_constant_memory(constant)
        for b, count in constant:
            out.line(f"__constant__ {b.ctype} {CONSTANT_PREFIX}{b.name}[{count}];")

    def _host_function(self, out: Emitter, body: str) -> None:
        f = self.fname
        decls = [self._host_decl(a) for a in self.p.signature.args]
        decls += ["const int64_t *spf_count", "const unsigned char *spf_on_device"]
        out.line("static char spf_message[512];")
        out.line(f'extern "C" const char *{f}_spf_error(void) {{ return spf_message; }}')
        out.function(f"{f}_spf_error", f"const char *{f}_spf_error(void)")
        codes = self._device_codes()
        out.line(
            f'extern "C" const char *{f}_spf_device_args(void) {{ return "{codes}"; }}'
            "  /* per array argument: d = may be a device array */"
        )
        out.function(f"{f}_spf_device_args", f"const char *{f}_spf_device_args(void)")
        out.line(  # after the work queued on any stream (the array's producer's)
            f'extern "C" int {f}_spf_to_host(void *dst, const void *src, size_t bytes) '
            "{ return cudaDeviceSynchronize() != cudaSuccess || "
            "cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess; }"
        )
        out.function(
            f"{f}_spf_to_host", f"int {f}_spf_to_host(void *dst, const void *src, size_t bytes)"
        )
        self._where(out)
        out.line(
            "#define SPF_CHECK(call) do { cudaError_t spf_e = (call); if (spf_e != "
            'cudaSuccess) { snprintf(spf_message, sizeof spf_message, "%s: %s", #call, '
            "cudaGetErrorString(spf_e)); spf_status = 1; goto spf_done; } } while (0)"
        )
        out.line("")
        out.line(f'extern "C" int {f}({", ".join(decls)})')
        out.function(f, f"int {f}({', '.join(decls)})")
        with out.braces():
            out.line("int spf_status = 0;")
            out.line("spf_message[0] = 0;")
            for a in self.p.signature.args:
                out.line(f"(void){a.name};")
            out.line("(void)spf_count;")
            out.line("(void)spf_on_device;")
            device = self._device_arrays()
            for a in device:
                out.line(f"{a.ctype} *{DEVICE_PREFIX}{a.name} = 0;")
            heap = self._host_heap(body)
            for name, ctype, count in heap:
                out.line(
                    f"{ctype} *{name} = ({ctype} *)calloc((size_t)({count}), sizeof({ctype}));"
                )
            out.line("{")
            with out.indented():
                if heap:
                    names = " || ".join(f"!{name}" for name, _, _ in heap)
                    out.line(
                        f'if ({names}) {{ snprintf(spf_message, sizeof spf_message, "out of '
                        f'host memory"); spf_status = 1; goto spf_done; }}'
                    )
                self._device_arguments(out, codes)
                for a in device:
                    index = self.arrays.index(a)
                    dev = f"{DEVICE_PREFIX}{a.name}"
                    alloc = (
                        f"SPF_CHECK(cudaMalloc((void **)&{dev}, "
                        f"(size_t)spf_count[{index}] * sizeof({a.ctype})));"
                    )
                    if codes[index] == "d":  # a device array: its own memory, no copies
                        out.line(f"if (spf_on_device[{index}]) {dev} = ({a.ctype} *){a.name};")
                        alloc = f"else {alloc}"
                    out.line(alloc)
                whole = not self.host_calls
                used = sorted({n for k in self.kernels for n in k.arrays})
                named_in = self.explicit["host_to_device"]
                if whole:
                    self._copies(out, used, "in", named_in)
                else:  # arrays only a device_to_host names: in once, not around each launch,
                    # where the copy would overwrite what an earlier kernel wrote there
                    self._copies(out, sorted(self.copied - named_in), "in", set())
                out.raw(body)
                out.line("SPF_CHECK(cudaDeviceSynchronize());")
                if whole:
                    self._copies(out, used, "out")
            out.line("}")
            out.line("spf_done:")
            for a in device:
                index = self.arrays.index(a)
                mine = f"if (!spf_on_device[{index}]) " if codes[index] == "d" else ""
                out.line(f"{mine}cudaFree({DEVICE_PREFIX}{a.name});")
            for name, _, _ in heap:
                out.line(f"free({name});")
            out.line("return spf_status;")

    def _where(self, out: Emitter) -> None:
        """``name_spf_where(ptr, where)``: where CUDA finds a device array's memory, for the
        runtime to refuse memory a kernel on the current GPU cannot read before it launches
        (spf.runtime.device_arrays.Placement: memory type, its device, the current device,
        whether kernels can address it); clears the error state a failed query leaves."""
        f = self.fname
        out.line(f'extern "C" int {f}_spf_where(const void *ptr, int *where) {{')
        with out.indented():
            out.line("cudaPointerAttributes spf_a;")
            out.line("int spf_current = -1;")
            out.line("cudaError_t spf_e = cudaGetDevice(&spf_current);")
            out.line('const char *spf_call = "cudaGetDevice";')
            out.line("if (spf_e == cudaSuccess) {")
            with out.indented():
                out.line("spf_e = cudaPointerGetAttributes(&spf_a, ptr);")
                out.line('spf_call = "cudaPointerGetAttributes";')
            out.line("}")
            out.line("(void)cudaGetLastError();  /* nothing sticky stays behind */")
            out.line("if (spf_e != cudaSuccess) {")
            with out.indented():
                out.line(
                    'snprintf(spf_message, sizeof spf_message, "%s: %s", spf_call, '
                    "cudaGetErrorString(spf_e));"
                )
                out.line("return 1;")
            out.line("}")
            out.line("where[0] = (int)spf_a.type;")
            out.line("where[1] = spf_a.device;")
            out.line("where[2] = spf_current;")
            out.line("where[3] = spf_a.devicePointer != 0;")
            out.line("return 0;")
        out.line("}")
        out.function(f"{f}_spf_where", f"int {f}_spf_where(const void *ptr, int *where)")

    def _device_codes(self) -> str:
        """One letter per array argument (signature order): ``d`` when the caller may pass
        memory already on the device (the host function then uses it in place: no
        allocation, no copies), else why not: ``h`` a statement on the host reads or writes
        it, ``b`` other host code reads it (loop bounds, guards, grid sizes), ``x`` a
        Layer IV copy names it (its device and host copies differ by design), ``m`` it
        lives in constant, shared or local memory. The runtime reads it back
        (``name_spf_device_args``) to refuse device arrays with a clear message."""
        if self._codes is not None:
            return self._codes
        host = self._uses(self._names(self.p.body, host=True))
        statements = self._uses(self._host_statements(self.p.body))
        codes = []
        for a in self.arrays:
            if self._scope(a.name) != "global":
                codes.append("m")
            elif a.name in self.copied:
                codes.append("x")
            elif a.name in statements:
                codes.append("h")
            elif a.name in host:  # loop bounds, guards, grid sizes: the host reads it
                codes.append("b")
            else:
                codes.append("d")
        self._codes = "".join(codes)
        return self._codes

    def _device_arguments(self, out: Emitter, codes: str) -> None:
        """Refuse device memory where host code needs host memory (the runtime refuses it
        first, with the argument's name); with device arrays, wait for the work queued
        before the call on any stream (their producers')."""
        refused = [f"spf_on_device[{k}]" for k, c in enumerate(codes) if c != "d"]
        if refused:
            out.line(
                f"if ({' || '.join(refused)}) {{ snprintf(spf_message, sizeof spf_message, "
                '"a device array for an argument the host code needs on the host"); '
                "spf_status = 1; goto spf_done; }"
            )
        taken = [f"spf_on_device[{k}]" for k, c in enumerate(codes) if c == "d"]
        if taken:
            out.line(f"if ({' || '.join(taken)}) SPF_CHECK(cudaDeviceSynchronize());")

    def _host_heap(self, body: str) -> list[tuple[str, str, str]]:
        """Host arrays of the function: its locals, and the buffers it owns (not allocated
        at a loop) that host code uses (kernels declare their own shared/local copies)."""
        heap = list(self.p.locals)
        used = self._uses(self._names(self.p.body, host=True))
        for b in self.p.buffers:
            if not b.argument and not b.allocated_at and b.name in used:
                heap.append((b.name, b.ctype, " * ".join(f"({e})" for e in b.extents) or "1"))
        return heap

    def _host_decl(self, a: Arg) -> str:
        if a.kind == "param":
            return f"{a.ctype} {a.name}"
        const = "const " if a.const else ""
        return f"{const}{a.ctype} *__restrict__ {a.name}"

    def _device_arrays(self) -> list[Arg]:
        """Array arguments that live in device memory: those a kernel uses, and those a
        Layer IV copy names."""
        used = {n for k in self.kernels for n in k.arrays}
        used = {n for n in used if self._scope(n) != "constant"}
        for s in self.p.stmts:
            op = s.operation
            if op is not None and op.kind in ("host_to_device", "device_to_host") and op.buffer:
                used.add(op.buffer)
        return [
            a
            for a in self.arrays
            if a.name in used and self._scope(a.name) not in ("constant", "shared", "local")
        ]

    def _scope(self, name: str) -> str:
        b = self.buffers.get(name)
        return b.scope if b is not None else "global"

    def _args(self, names: list[str]) -> list[Arg]:
        """The array arguments among ``names``, in signature order."""
        return [a for a in self.arrays if a.name in names]

    def _copies(
        self, out: Emitter, names: list[str], direction: str, skip: set[str] | None = None
    ) -> None:
        """The implicit copies of arrays ``names``, but those of ``skip`` (default: the arrays
        a Layer IV copy names)."""
        codes = self._device_codes()
        for a in self._args(names):
            if (direction == "out" and a.const) or a.name in (
                self.copied if skip is None else skip
            ):
                continue
            index = self.arrays.index(a)
            size = f"(size_t)spf_count[{index}] * sizeof({a.ctype})"
            if self._scope(a.name) == "constant":
                if direction == "in":
                    b = self.buffers[a.name]
                    size = f"(size_t)spf_min(spf_count[{index}], (int64_t){_static_count(b)})"
                    out.line(
                        f"SPF_CHECK(cudaMemcpyToSymbol({CONSTANT_PREFIX}{a.name}, {a.name}, "
                        f"{size} * sizeof({a.ctype})));"
                    )
                continue
            dev = f"{DEVICE_PREFIX}{a.name}"
            mine = f"if (!spf_on_device[{index}]) " if codes[index] == "d" else ""
            if direction == "in":
                out.line(
                    f"{mine}SPF_CHECK(cudaMemcpy({dev}, {a.name}, {size}, cudaMemcpyHostToDevice));"
                )
            else:
                out.line(
                    f"{mine}SPF_CHECK(cudaMemcpy({a.name}, {dev}, {size}, cudaMemcpyDeviceToHost));"
                )

    # ------------------------------------------------------------------ host code

    def node(self, n: Node) -> None:
        if isinstance(n, For) and _gpu_kind(n) is not None:
            self._launch(n)
        elif isinstance(n, (For, Bind)):
            self.host_scope.append(n.var)
            try:
                super().node(n)
            finally:
                self.host_scope.pop()
        elif isinstance(n, Alloc):
            self._host_alloc(n)
        elif isinstance(n, Call) and self.macros[n.stmt].operation is not None:
            op = self.macros[n.stmt].operation
            assert op is not None
            self._host_operation(n, op)
        else:
            super().node(n)

    def _kernel_names(self, n: Node) -> set[str]:
        """The names the kernels launched under ``n`` use (a gpu loop inside another's
        names are among the outer one's)."""
        kernels = [m for m in walk(n) if isinstance(m, For) and _gpu_kind(m) is not None]
        return self._uses(set().union(*(self._names(m, host=False) for m in kernels)))

    def _host_alloc(self, n: Alloc) -> None:
        b = self._buffer(n.buffer)
        kernels = b.scope == "stack" and b.name in self._kernel_names(n.body)
        if kernels and (b.private or b.name in self._uses(self._names(n.body, host=True))):
            if b.private:
                raise CodegenError(
                    f"local {b.name!r} is private to a loop that runs on the host, and gpu "
                    "kernels under it use it: their threads would each have a copy of their "
                    "own, not the loop's; make it private to a loop the kernels run (a gpu "
                    "loop or one inside them), or make it a data space"
                )
            raise CodegenError(
                f"buffer {b.name!r} (stack memory) is allocated on the host and used both by "
                "host statements and by gpu kernels under it, whose threads would each have "
                "a copy of their own; use a global buffer to share it between the host and "
                "the kernels"
            )
        # a stack buffer allocated around kernels is theirs: one copy per thread, like local
        if b.scope in ("shared", "local") or kernels:
            if not _has_gpu(n.body):
                raise CodegenError(
                    f"buffer {b.name!r} ({b.scope} memory) is allocated where no gpu loop "
                    "runs; allocate it at a gpu block or thread loop (allocate_at)"
                )
            self.device_allocs.append(b.name)
            try:
                self.node(n.body)
            finally:
                self.device_allocs.pop()
            return
        self.out.line("{")
        with self.out.indented():
            count = " * ".join(f"({e})" for e in b.extents) or "1"
            self.out.line(
                f"{b.ctype} *{b.name} = ({b.ctype} *)calloc((size_t)({count}), sizeof({b.ctype}));"
            )
            self.out.line(
                f'if (!{b.name}) {{ snprintf(spf_message, sizeof spf_message, "out of host '
                f'memory for buffer {b.name}"); spf_status = 1; goto spf_done; }}'
            )
            self.node(n.body)
            self.out.line(f"free({b.name});")
        self.out.line("}")

    def _buffer(self, name: str) -> BufferDecl:
        try:
            return self.buffers[name]
        except KeyError:
            raise CodegenError(f"spf bug: Alloc of unknown buffer {name!r}") from None

    def _memory(self, spaces: set[str]) -> set[str]:
        """The arrays (data spaces or the buffers they are stored in) behind ``spaces``."""
        stored = {d.name: d.buffer for d in self.p.data if d.buffer is not None}
        return {stored.get(name, name) for name in spaces}

    def _check_copied_in(self, kernel: str, first: For, arrays: list[str]) -> None:
        """Refuse a kernel that reads an array a ``host_to_device`` names before any such
        copy (or an earlier kernel) put it on the device: such an array has no implicit copy
        in, so the kernel would read device memory nothing wrote (garbage). A copy created
        after the statements stays at the end of the program unless it is ordered."""
        reads: set[str] = set()
        writes: set[str] = set()
        stmts: list[str] = []
        for m in walk(first):
            if isinstance(m, Call) and m.stmt in self.macros:
                macro = self.macros[m.stmt]
                if macro.operation is not None:
                    continue
                stmts.append(m.stmt)
                accumulated = {ds for ds, _, _ in macro.accumulates}
                reads |= self._memory(set(macro.reads) | accumulated)
                writes |= self._memory(set(macro.assigns) | accumulated)
        named = self.explicit["host_to_device"]
        for a in arrays:
            if a in named and a in reads and a not in self.on_device:
                copies = sorted(
                    s.name
                    for s in self.p.stmts
                    if s.operation is not None
                    and s.operation.kind == "host_to_device"
                    and s.operation.buffer == a
                )
                readers = ", ".join(dict.fromkeys(stmts))
                raise CodegenError(
                    f"kernel {kernel} (statement {readers}) reads {a!r} on the device before "
                    f"the host_to_device({a}) of statement {', '.join(copies)} copies it "
                    f"there: an array a host_to_device names is not copied in implicitly, so "
                    f"the kernel would read device memory nothing wrote; order the copy before "
                    f"the kernel (comp.stmt({copies[0]!r}).then(...), or create it before the "
                    f"statements), or remove the copy to keep the implicit ones"
                )
        self.on_device |= writes

    def _host_operation(self, n: Call, op: Operation) -> None:
        macro = self.macros[n.stmt]
        args = dict(zip(macro.params, (loop_tree(a) for a in n.args), strict=True))
        params = macro.params
        if op.kind == "barrier":
            self.out.line("SPF_CHECK(cudaDeviceSynchronize());")
            return
        if op.kind not in ("host_to_device", "device_to_host") or op.buffer is None:
            raise CodegenError(
                f"statement {n.stmt}: operation {op.kind} has no meaning in the CUDA target "
                "(send/receive are MPI operations); use target='mpi'"
            )
        name = op.buffer
        if name not in self.array_names:
            stored = next((d.buffer for d in self.p.data if d.name == name and d.buffer), None)
            where = (
                f"; {name!r} is stored in buffer {stored!r} (store_in): name the buffer, "
                f"comp.{op.kind}(comp.buffer({stored!r}))"
                if stored in self.array_names
                else ""
            )
            raise CodegenError(
                f"statement {n.stmt}: {op.kind}({name}) names no array argument of "
                f"{self.fname}; copies move kernel arguments (data spaces, global buffers)"
                f"{where}"
            )
        if op.kind == "device_to_host" and any(a.const for a in self._args([name])):
            raise CodegenError(
                f"statement {n.stmt}: device_to_host({name}): no statement writes {name} (a "
                f"read-only argument of {self.fname}), so there is nothing to copy back; "
                "remove the copy"
            )
        offset = "0"
        if op.index:
            index = ", ".join(to_c_arg(index_tree(i, params, args)) for i in op.source_index)
            offset = f"(&{name}({index}) - {name})"
        count = to_c(index_tree(op.source_count, params, args))
        size = f"(size_t)({count}) * sizeof({op.ctype})"
        host = f"{name} + {offset}"
        dev = f"{DEVICE_PREFIX}{name} + {offset}"
        if self._scope(name) == "constant":
            if op.kind == "device_to_host":
                raise CodegenError(
                    f"statement {n.stmt}: device_to_host({name}): {name} is constant memory, "
                    "which kernels cannot write"
                )
            self.out.line(
                f"SPF_CHECK(cudaMemcpyToSymbol({CONSTANT_PREFIX}{name}, {host}, {size}, "
                f"(size_t)({offset}) * sizeof({op.ctype})));"
            )
        elif op.kind == "host_to_device":
            self.out.line(f"SPF_CHECK(cudaMemcpy({dev}, {host}, {size}, cudaMemcpyHostToDevice));")
        if op.kind == "host_to_device":
            self.on_device.add(name)
        else:  # after the launches, on whatever stream they ran (CuPy's current one)
            self.out.line("SPF_CHECK(cudaDeviceSynchronize());")
            self.out.line(f"SPF_CHECK(cudaMemcpy({host}, {dev}, {size}, cudaMemcpyDeviceToHost));")

    # ------------------------------------------------------------------ kernels

    def _scalar(self, name: str) -> str:
        """Host variable ``name`` as the kernel argument that carries it (:func:`carrier`)."""
        ctype = self.param_types.get(name, "int64_t")
        wide = carrier(ctype)
        return name if wide == ctype else f"({wide}){name}"

    def _launch(self, first: For) -> None:
        kind = _gpu_kind(first)
        if kind is None or kind[0] != "gpu_block":
            raise CodegenError(
                f"gpu thread loop {first.var} is not inside gpu block loops; map loops with "
                "stmt.gpu(blocks, threads) or tile_gpu"
            )
        name = f"{self.fname}_k{len(self.kernels)}"
        kernel = _KernelBuilder(self, name, _chain(first, "gpu_block"))
        text, arrays = kernel.text()
        self._check_copied_in(name, first, arrays)
        scalars = [*self.params, *self.host_scope]
        self.kernels.append(_Kernel(name, text, arrays, scalars, kernel.memory.local))
        for a in arrays:
            if a in self.local_names:
                raise CodegenError(
                    f"kernel {name} uses {a!r}, a local array of the host function; "
                    "declare it as a data space of the Computation or a buffer"
                )
        out = self.out
        per_launch = self.host_calls
        if per_launch:
            self._copies(out, arrays, "in")
        grid, block = kernel.grid, kernel.block
        out.line("{")
        with out.indented():
            for k, (what, e) in enumerate(grid):
                out.line(f"const int64_t spf_g{k} = {expr(e)};  /* blocks: {what} */")
            for k, (what, e) in enumerate(block):
                out.line(f"const int64_t spf_t{k} = {expr(e)};  /* threads: {what} */")
            positive = " && ".join(
                [f"spf_g{k} > 0" for k in range(len(grid))]
                + [f"spf_t{k} > 0" for k in range(len(block))]
            )
            out.line(f"if ({positive})")
            with out.braces():
                counts = [(w, f"spf_g{k}") for k, (w, _) in enumerate(grid)]
                threads = [(w, f"spf_t{k}") for k, (w, _) in enumerate(block)]
                for line in [*grid_checks(name, counts), *block_checks(name, threads)]:
                    out.line(line)
                g = _dim3([f"spf_g{k}" for k in range(len(grid))])
                t = _dim3([f"spf_t{k}" for k in range(len(block))])
                out.line(f"dim3 spf_grid({g}), spf_block({t});")
                call = [self._scalar(s) for s in scalars]
                call += [f"{DEVICE_PREFIX}{a}" for a in arrays if self._scope(a) != "constant"]
                out.line(f"SPF_LAUNCH({', '.join([name, 'spf_grid', 'spf_block', *call])});")
                out.line("SPF_CHECK(cudaGetLastError());")
        out.line("}")
        if per_launch:
            if any(
                not a.const and self._scope(a.name) != "constant" and a.name not in self.copied
                for a in self._args(arrays)
            ):
                # the launch may run on a stream the copy does not wait for (CuPy's current)
                out.line("SPF_CHECK(cudaDeviceSynchronize());")
            self._copies(out, arrays, "out")


class _KernelBuilder:
    """Prints one kernel: block loops from ``blockIdx``, block-uniform code (loops, guards,
    barriers) around one or more thread-loop nests from ``threadIdx``; collects the grid and
    block extents as host expressions (interval bounds of every loop variable in scope).

    Thread nests that follow one another in a block are separated by ``__syncthreads()``
    (a ``barrier_at`` operation there, or one the printer adds), so a thread nest sees what
    every thread of the previous one wrote, as in the sequential loops the schedule means.
    """

    def __init__(self, printer: CudaPrinter, name: str, blocks: _Nest) -> None:
        self.p = printer
        self.name = name
        self.blocks = blocks
        self.bounds = _Bounds()
        self.threads: list[list[Expr]] = []  # extents per thread dimension (x first), max'ed
        self.thread_names: list[list[str]] = []
        self.grid: list[tuple[str, Expr]] = []
        self.block: list[tuple[str, Expr]] = []
        self.dirty = False  # a thread nest ran since the last barrier
        self._grid: dict[str, Expr] = {}
        self._thread_extents: dict[str, Expr] = {}
        self.varying: set[str] = set()  # variables whose value differs between threads
        self.divergent: list[str] = []  # enclosing conditions threads may disagree on
        self.memory = KernelMemory(name)  # local and shared memory it declares, checked
        self.nests = _thread_nests(blocks.body)
        self.dims = max(
            (
                len(_chain(m, "gpu_thread").loops)
                for m in walk(blocks.body)
                if isinstance(m, For) and _is_thread(m)
            ),
            default=0,
        )

    # ------------------------------------------------------------------ extents

    def _extent(self, f: For) -> Expr:
        upper = _upper(f)
        span = self.bounds.bound(Op("-", (upper, f.init)), True)
        lo = self.bounds.bound(f.init, False)
        hi = self.bounds.bound(upper, True)
        if span is None or lo is None or hi is None:
            raise CodegenError(
                f"gpu kernel {self.name}: the bounds {expr(f.init)} .. {expr(upper)} of loop "
                f"{f.var} depend on values the host cannot bound (UF values read inside the "
                "kernel); map loops whose bounds are affine in the parameters and outer loops"
            )
        self.bounds.lo[f.var] = lo
        self.bounds.hi[f.var] = hi
        count = Op("floord", (span, Int(f.step))) if f.step != 1 else span
        return Op("+", (count, Int(1)))

    def _bind_unknown(self, var: str) -> None:
        self.bounds.unknown.add(var)

    # ------------------------------------------------------------------ text

    def text(self) -> tuple[str, list[str]]:
        """The kernel's text and the array arguments it uses (fills ``grid``/``block``)."""
        body = Emitter()
        with body.indented():
            for name in self.p.device_allocs:
                self._decl(body, self.p._buffer(name))
            self._chain(body, self.blocks, 0, "blockIdx", self._block_body)
        self._extents()
        text = body.text()
        first = self.blocks.chain[0]
        used = self.p._uses(self.p._names(first, host=False) | set(self.p.device_allocs))
        for buf in self.p.p.buffers:  # function-level shared/local buffers the kernel uses
            if buf.name in used and not buf.argument and not buf.allocated_at:
                decl = Emitter()
                with decl.indented():
                    self._decl(decl, buf)
                text = decl.text() + text
        arrays = [a.name for a in self.p.arrays if a.name in used]
        return self._function(text, arrays), arrays

    def _extents(self) -> None:
        self.grid = [(f.var, self._grid[f.var]) for f in reversed(self.blocks.loops)]
        if not self.threads:
            raise CodegenError(
                f"gpu block loops {', '.join(f.var for f in self.blocks.loops)} contain no "
                "gpu thread loops; map the nest with stmt.gpu(blocks, threads) or tile_gpu"
            )
        for k, extents in enumerate(self.threads):
            e = extents[0]
            for other in extents[1:]:
                e = Op("max", (e, other))
            self.block.append((", ".join(self.thread_names[k]), e))

    def _function(self, text: str, arrays: list[str]) -> str:
        scalars = [*self.p.params, *self.p.host_scope]
        decls, narrow = [], []
        for s in scalars:
            ctype = self.p.param_types.get(s, "int64_t")
            wide = carrier(ctype)
            if wide == ctype:
                decls.append(f"{ctype} {s}")
            else:  # passed 8 bytes wide, used with its own type
                decls.append(f"{wide} {SCALAR_PREFIX}{s}")
                narrow.append(f"const {ctype} {s} = ({ctype}){SCALAR_PREFIX}{s};")
        for a in self.p.arrays:
            if a.name in arrays and self.p._scope(a.name) != "constant":
                const = "const " if a.const else ""
                decls.append(f"{const}{a.ctype} *__restrict__ {a.name}")
        out = Emitter()
        out.line(f'extern "C" __global__ void {self.name}({", ".join(decls) or "void"})')
        out.line("{")
        with out.indented():
            for line in narrow:
                out.line(line)
            for s in scalars:
                out.line(f"(void){s};")
            for name in arrays:
                if self.p._scope(name) == "constant":
                    ctype = self.p.buffers[name].ctype
                    out.line(f"const {ctype} *{name} = {CONSTANT_PREFIX}{name};")
                    out.line(f"(void){name};")
        out.raw(text.rstrip("\n"))
        out.line("}")
        return out.text()

    def _chain(
        self, out: Emitter, nest: _Nest, k: int, source: str, inner: Callable[[Emitter], None]
    ) -> None:
        """Print ``nest.chain[k:]`` (loop variables from ``source``), then ``inner``."""
        if k == len(nest.chain):
            inner(out)
            return
        c = nest.chain[k]
        if isinstance(c, For):
            dim = DIMS[len(nest.loops) - 1 - nest.loops.index(c)]
            offset = f"(int64_t){source}.{dim}"
            if c.step != 1:
                offset = f"{c.step} * {offset}"
            extent = self._extent(c)
            if source == "blockIdx":
                self._grid[c.var] = extent
            else:
                self._thread_extents[c.var] = extent
            start = to_c_at(loop_tree(c.init), C_PREC["+"])
            out.line(f"const int64_t {c.var} = {start} + {offset};")
            out.line(f"if ({expr(c.cond)})")
        elif isinstance(c, If):
            out.line(f"if ({expr(c.cond)})")
        elif isinstance(c, Bind):
            args = ", ".join(expr(a) for a in c.args)
            out.line(f"const int64_t {c.var} = {c.uf}({args});")
            self._bind_unknown(c.var)
            self._chain(out, nest, k + 1, source, inner)
            return
        else:
            assert isinstance(c, Alloc)
            b = self.p._buffer(c.buffer)
            with out.braces():
                if source == "blockIdx":
                    self._block_decl(out, b)
                else:
                    if b.private:  # one copy per iteration of a loop that threads share
                        raise CodegenError(
                            f"local {b.name!r} is private to a gpu thread loop of kernel "
                            f"{self.name} with more thread loops inside: the threads of one "
                            "iteration would share it, and CUDA gives each its own copy; make "
                            "it private to the innermost thread loop or a loop inside it"
                        )
                    self._decl(out, b)
                self._chain(out, nest, k + 1, source, inner)
            return
        with out.braces():
            self._chain(out, nest, k + 1, source, inner)

    # ------------------------------------------------------------------ block level

    def _block_body(self, out: Emitter) -> None:
        self._block(out, self.blocks.body)

    def _block(self, out: Emitter, n: Node) -> None:
        """Code every thread of a block runs alike: loops, guards, barriers, thread nests."""
        if isinstance(n, Block):
            for item in n.items:
                self._block(out, item)
        elif isinstance(n, For) and _gpu_kind(n) is not None:
            kind = _gpu_kind(n)
            assert kind is not None
            if kind[0] == "gpu_block":
                raise CodegenError(
                    f"gpu block loop {n.var} is nested inside the thread or block loops of "
                    f"kernel {self.name}; block loops are consecutive and outermost"
                )
            self._thread_nest(out, _chain(n, "gpu_thread"))
        elif isinstance(n, For):
            self._block_loop(out, n)
        elif isinstance(n, If):
            dirty = self.dirty
            out.line(f"if ({expr(n.cond)})")
            with out.braces():
                self._block(out, n.then)
            after = self.dirty
            self.dirty = dirty
            if n.orelse is not None:
                out.line("else")
                with out.braces():
                    self._block(out, n.orelse)
            self.dirty = self.dirty or after
        elif isinstance(n, Bind):
            args = ", ".join(expr(a) for a in n.args)
            out.line(f"const int64_t {n.var} = {n.uf}({args});")
            self._bind_unknown(n.var)
            self._block(out, n.body)
        elif isinstance(n, Alloc):
            with out.braces():
                self._block_decl(out, self.p._buffer(n.buffer))
                self._block(out, n.body)
        elif isinstance(n, Merge):
            stmts = ", ".join(sorted({c.stmt for c in walk(n) if isinstance(c, Call)}))
            raise CodegenError(
                f"statements {stmts} (a merge of loops {n.left.var} and {n.right.var}) run "
                f"inside the gpu block loops of kernel {self.name} but outside its gpu thread "
                "loops, so every thread of a block would run them; map a loop around the "
                "merge to threads too (gpu/tile_gpu)"
            )
        else:
            op = self.p.macros[n.stmt].operation
            if op is None or op.kind != "barrier":
                raise CodegenError(
                    f"statement {n.stmt} runs inside the gpu block loops of kernel "
                    f"{self.name} but outside its gpu thread loops, so every thread of a "
                    "block would run it; map its loops to threads too (gpu/tile_gpu), or, if "
                    "you did, give them more than one iteration: a loop of one iteration (a "
                    "tile or split of size 1) is left out of the code, thread tag and all"
                )
            out.line(f"__syncthreads();  /* {n.stmt} */")
            self.dirty = False

    def _block_loop(self, out: Emitter, n: For) -> None:
        upper = _upper(n)
        lo = self.bounds.bound(n.init, False)
        hi = self.bounds.bound(upper, True)
        if lo is not None and hi is not None:
            self.bounds.lo[n.var], self.bounds.hi[n.var] = lo, hi
        else:
            self.bounds.unknown.add(n.var)
        _no_sums(n, self.name)
        for t in n.tags:
            if t.startswith("unroll(") and t.endswith(")") and t[7:-1].isdigit():
                out.line(f"#pragma unroll {t[7:-1]}")
        step = f"{n.var}++" if n.step == 1 else f"{n.var} += {n.step}"
        out.line(f"for (int64_t {n.var} = {expr(n.init)}; {expr(n.cond)}; {step})")
        with out.braces():
            entry = self.dirty
            self._block(out, n.body)
            if self.dirty and _has_gpu(n.body):  # the next iteration's nests follow this one
                out.line("__syncthreads();  /* spf: before the next iteration's thread loops */")
            self.dirty = entry

    def _thread_nest(self, out: Emitter, nest: _Nest) -> None:
        if self.dirty:
            out.line("__syncthreads();  /* spf: between thread-loop nests */")
        self._thread_extents = {}
        self.varying = {f.var for f in nest.loops}
        self.varying |= {c.var for c in nest.chain if isinstance(c, Bind)}
        self.divergent = []
        spare = DIMS[len(nest.loops) : self.dims]  # dimensions another nest of the kernel uses
        if spare:
            out.line(f"if ({' && '.join(f'threadIdx.{d} == 0' for d in spare)})")
        out.line("{")
        with out.indented():
            self._chain(out, nest, 0, "threadIdx", lambda o: self._device(o, nest.body))
        out.line("}")
        for k, f in enumerate(reversed(nest.loops)):
            if len(self.threads) <= k:
                self.threads.append([])
                self.thread_names.append([])
            self.threads[k].append(self._thread_extents[f.var])
            self.thread_names[k].append(f.var)
        self.dirty = True

    # ------------------------------------------------------------------ thread level

    def _decl(self, out: Emitter, b: BufferDecl) -> None:
        if b.scope == "shared":
            count = _static_count(b)
            self.memory.declare(b, count)
            out.line(f"__shared__ {b.ctype} {b.name}[{count}];")
        elif b.scope in ("local", "stack"):
            count = _static_count(b)
            self.memory.declare(b, count)
            zero = " = {0}" if b.private else ""  # a private local starts zeroed
            out.line(f"{b.ctype} {b.name}[{count}]{zero};")
        else:
            raise CodegenError(
                f"buffer {b.name!r} ({b.scope} memory) is allocated inside kernel "
                f"{self.name}; only shared, local and stack buffers can be (global and "
                "constant buffers are arguments)"
            )

    def _block_decl(self, out: Emitter, b: BufferDecl) -> None:
        """Declare ``b``, allocated in block-level code (every thread of a block runs it). A
        local private to a loop there (``add_local(..., private=...)``) has one zeroed copy
        per iteration, which the threads inside share: a ``__shared__`` array the block's
        threads zero together, then a barrier. Other buffers: :meth:`_decl`."""
        if not b.private:
            self._decl(out, b)
            return
        count = _static_count(b)  # first: its errors name local memory
        self._decl(out, replace(b, scope="shared"))
        tid = "(int64_t)threadIdx.x + (int64_t)blockDim.x * ((int64_t)threadIdx.y"
        tid += " + (int64_t)blockDim.y * (int64_t)threadIdx.z)"
        step = "(int64_t)blockDim.x * blockDim.y * blockDim.z"
        out.line(f"for (int64_t spf_z = {tid}; spf_z < {count}; spf_z += {step})")
        out.line(f"  {b.name}[spf_z] = 0;")
        out.line(f"__syncthreads();  /* spf: the block's copy of {b.name} is zeroed */")
        self.dirty = False

    def _device(self, out: Emitter, n: Node) -> None:
        """Code of one CUDA thread (no OpenMP; ``unroll`` tags become #pragma unroll)."""
        if isinstance(n, Block):
            for item in n.items:
                self._device(out, item)
        elif isinstance(n, For):
            self._device_for(out, n)
        elif isinstance(n, If):
            out.line(f"if ({expr(n.cond)})")
            with out.braces():
                self._diverge(n.cond, f"the condition {expr(n.cond)}", self._device, out, n.then)
            if n.orelse is not None:
                out.line("else")
                with out.braces():
                    self._diverge(
                        n.cond, f"the condition {expr(n.cond)}", self._device, out, n.orelse
                    )
        elif isinstance(n, Bind):
            args = ", ".join(expr(a) for a in n.args)
            out.line(f"const int64_t {n.var} = {n.uf}({args});")
            if any(set(expr_vars(a)) & self.varying for a in n.args):
                self.varying.add(n.var)
            self._device(out, n.body)
        elif isinstance(n, Alloc):
            with out.braces():
                self._decl(out, self.p._buffer(n.buffer))
                self._device(out, n.body)
        elif isinstance(n, Merge):
            self._device_merge(out, n)
        else:
            self._call(out, n)

    def _device_merge(self, out: Emitter, n: Merge) -> None:
        """A merge inside one thread: its trip count depends on the thread's lists."""
        from spf.codegen.merge_print import print_merge

        exprs = (*cursor_exprs(n.left), *cursor_exprs(n.right))
        if {v for e in exprs for v in expr_vars(e)} & self.varying:
            self.varying |= {n.left.var, n.right.var}
        cond = exprs[0]
        for e in exprs[1:]:
            cond = Op("&&", (cond, e))
        what = f"the merge of loops {n.left.var} and {n.right.var}"
        self._diverge(cond, what, print_merge, out, n, lambda b: self._device(out, b))

    def _device_for(self, out: Emitter, n: For) -> None:
        if _gpu_kind(n) is not None:
            raise CodegenError(
                f"gpu loop {n.var} is nested inside the thread loops of kernel "
                f"{self.name}; block loops then thread loops must be consecutive"
            )
        _no_sums(n, self.name)
        for t in n.tags:
            if t.startswith("unroll(") and t.endswith(")") and t[7:-1].isdigit():
                out.line(f"#pragma unroll {t[7:-1]}")
        step = f"{n.var}++" if n.step == 1 else f"{n.var} += {n.step}"
        out.line(f"for (int64_t {n.var} = {expr(n.init)}; {expr(n.cond)}; {step})")
        bounds = Op("&&", (n.init, n.cond))
        if set(expr_vars(bounds)) & self.varying:
            self.varying.add(n.var)
        with out.braces():
            self._diverge(bounds, f"the bounds of loop {n.var}", self._device, out, n.body)

    def _diverge(self, cond: Expr, what: str, fn: Callable[..., None], *args: object) -> None:
        """Run ``fn(*args)`` noting that threads may disagree on ``cond`` there."""
        varying = bool(set(expr_vars(cond)) & self.varying)
        if varying:
            self.divergent.append(what)
        try:
            fn(*args)
        finally:
            if varying:
                self.divergent.pop()

    def _call(self, out: Emitter, n: Call) -> None:
        op = self.p.macros[n.stmt].operation
        if op is None:
            atomic = cuda_atomic(self.p, n)  # parallelize(loop, reduction="atomic")
            out.line(atomic or f"{n.stmt}({', '.join(expr(a) for a in n.args)});")
        elif op.kind == "barrier":
            self._thread_barrier(n.stmt)
            out.line(f"__syncthreads();  /* {n.stmt} */")
        else:
            raise CodegenError(
                f"statement {n.stmt}: {op.kind} runs inside gpu kernel {self.name}; "
                "host<->device copies run on the host: order them before or after the gpu "
                "loops"
            )

    def _thread_barrier(self, stmt: str) -> None:
        """A barrier inside the thread loops is reached by every thread of the block that
        has not exited, as ``__syncthreads`` needs: threads outside the thread loops' bounds
        skip to the end of the kernel (exited threads count as arrived since Volta, and in
        spf's emulator), and no condition inside the loops may differ between threads."""
        if self.nests != 1:
            raise CodegenError(
                f"barrier {stmt} is inside the gpu thread loops of kernel {self.name}, "
                "which has several thread-loop nests: threads outside one nest's bounds "
                "would skip it and run on; place barriers between thread-loop nests or use "
                "one nest"
            )
        if self.divergent:
            raise CodegenError(
                f"barrier {stmt} in kernel {self.name} depends on {self.divergent[-1]}, "
                "which differs between the threads of a block, so some threads would skip "
                "__syncthreads(); place the barrier outside that loop or condition"
            )


def _static_count(b: BufferDecl) -> int:
    """The element count of a buffer the compiler must size statically."""
    count = 1
    for e in b.extents:
        text = e.strip().strip("()")
        if not text.isdigit():
            raise CodegenError(
                f"buffer {b.name!r} ({b.scope} memory) has the extent {e!r}; CUDA sizes "
                f"{b.scope} memory at compile time, so give it integer extents"
            )
        count *= int(text)
    return count


def _own_exprs(n: Node) -> tuple[Expr, ...]:
    """The expressions ``n`` itself prints (not those of the nodes under it)."""
    if isinstance(n, For):
        return (n.init, n.cond)
    if isinstance(n, If):
        return (n.cond,)
    if isinstance(n, (Bind, Call)):
        return n.args
    if isinstance(n, Merge):
        return (*cursor_exprs(n.left), *cursor_exprs(n.right))
    return ()


def _expr_names(e: Expr) -> set[str]:
    """The variables and UFs ``e`` names."""
    if isinstance(e, Var):
        return {e.name}
    names = {e.uf} if isinstance(e, UFRead) else set()
    if isinstance(e, (Op, UFRead)):
        for a in e.args:
            names |= _expr_names(a)
    return names


def _dim3(values: list[str]) -> str:
    return ", ".join(f"(unsigned int){v}" for v in values)


def print_cuda(program: Program) -> str:
    """The ``.cu`` translation unit of ``program``."""
    return unit_cuda(program).source


def unit_cuda(program: Program) -> TranslationUnit:
    """The ``.cu`` translation unit of ``program`` with its record (:mod:`spf.codegen.unit`)."""
    return CudaPrinter(program).unit()
