"""The Vitis HLS printer: a ``Program`` -> one synthesizable C++ top function.

``codegen(target="hls")`` prints one translation unit in the style Vitis HLS accepts:

* an ``extern "C"`` top function (so the C-simulation library is callable through cffi)
  whose array arguments (UF index arrays such as ``const int32_t *rowptr``, and data spaces)
  are pointers with ``#pragma HLS INTERFACE m_axi port=<a> offset=slave bundle=gmem<k>`` (one
  AXI bundle per array, ``depth=<n>`` when the data space's largest size is known, or the
  index array's from its UF's declared domain) and whose
  parameters and control are ``#pragma HLS INTERFACE s_axilite`` (``port=<N>``,
  ``port=return``);
* ``#pragma HLS PIPELINE II=<n>`` from ``stmt.pipeline(i, ii)``, ``#pragma HLS UNROLL
  factor=<n>`` from ``stmt.unroll(i, n)`` (and from ``vectorize``'s ``vector(n)`` tag), and
  ``#pragma HLS LOOP_TRIPCOUNT min=<a> max=<b>`` for loops whose bounds are not constants,
  each among the first statements of the loop body it applies to; ``parallel``,
  ``distribute`` and GPU tags have no HLS meaning (a comment says so; the loop runs
  sequentially);
* ``#pragma HLS ARRAY_PARTITION variable=<b> type=<cyclic|block|complete> factor=<n>
  dim=<d>`` right after the declaration of a buffer with ``buffer.partition(dim, factor,
  kind)`` (spf's ``dim`` is 0-based, Vitis' 1-based);
* statement, UF and data-space macros as in the C printer, except that arrays the kernel owns
  (local data spaces, ``stack``/``local``/``shared`` buffers, ``allocate_at`` buffers) are
  fixed-size multi-dimensional C arrays (``double bx_buf[3][62]``, accessed ``bx_buf[i][j]``)
  so that ARRAY_PARTITION can name a dimension; local data spaces and ``local`` buffers are
  zero-filled (``= {}``) as the C printer's ``calloc`` does;
* no OpenMP, no ``restrict``, no dynamic allocation, no recursion, and statement bodies may
  call only C math functions (anything else is a :class:`~spf.errors.CodegenError` naming the
  statement). Barriers and host/device copies are comments; ``send``/``receive`` are refused.

Refused with a ``CodegenError`` (Vitis would ignore or reject them): a pipelined loop around a
loop whose trip count is not a constant (Vitis fully unrolls the loops inside a pipelined one;
pipeline the inner loop instead), a pipelined loop inside another, and partitioning a buffer
that is a kernel argument (an m_axi port) or a scalar (rank 0). A ``pipeline``/``unroll``
tag on a loop code generation removes (one iteration) warns (``DroppedTagWarning``,
:mod:`spf.codegen.hls_tags`); bounds, trip counts, depths beyond ``int64_t`` and a local
array of more than ``2**63 - 1`` bytes are refused, naming the constant.

Local arrays must be fixed-size in HLS. A local data space or buffer whose extent is a
parameter expression (``M-2``) needs an upper bound for each parameter it uses, given with the
printer option ``hls_bounds={"M": 1024}`` (or ``{"M": (16, 1024)}`` with a lower bound); the
array is declared with the largest extent the bounds allow (for ``allocate_at`` buffers the
ranges of the enclosing loops are used too). Without a bound the printer raises a
``CodegenError`` naming the array, the extent and the parameter. The same bounds give
``LOOP_TRIPCOUNT`` pragmas (interval arithmetic over the loop bounds, guards ignored: ``max``
is an upper bound and ``min`` a lower bound of the real trip count) and ``depth=`` on m_axi
ports. ``hls_tripcounts={"k": (0, 64)}`` sets the trip count of the loops named ``k``
directly: loops bounded by index-array values (CSR's ``k`` loop) need it, and otherwise get a
comment saying what is missing instead of a pragma. Pass the options to
:func:`generate` (``codegen``) or :func:`spf.runtime.hls.compile_hls` (``compile``). The
bounds are recorded in the source (``// spf-hls-bounds: M=0..1024``) and the C simulation
refuses parameters outside them with an :class:`~spf.errors.ArgumentError`.

What is checked without a Vitis installation: the C simulation (``compile(target="hls")``
builds the same source with ``g++ -std=c++17 -O2 -Werror -Wno-unknown-pragmas -fPIC -shared
-Wall -Wextra`` and runs it on numpy arrays; the tests compare GEMM, the two-stage blur, with
and without a partitioned line buffer, and CSR SpMV with numpy and scipy); that the source
is warning-free C++17 under ``-Wall -Wextra``; that every HLS pragma is a Vitis directive
placed where Vitis expects it (:mod:`spf.codegen.hls_check` parses the generated source:
loop pragmas open the body of their loop, INTERFACE pragmas open the top function and cover
every argument and ``return`` with m_axi for pointers and s_axilite for scalars,
ARRAY_PARTITION names a local array declared before it with a dimension within its rank);
and that there is no dynamic allocation, recursion, OpenMP or non-math library call. What is
not checked: Vitis itself — whether its Clang front end accepts every construct, whether
synthesis meets the requested II (the loop-carried accumulation in ``C[i][j] += ...`` over a
pipelined ``k`` loop, for instance, limits II to the adder latency), resource use, timing,
C/RTL co-simulation, and whether the bundles and depths suit a particular platform. Pragma
syntax follows the Vitis HLS 2022.1+ documentation (``type=`` in ARRAY_PARTITION).
"""

from __future__ import annotations

import ast
import numbers
import operator
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.codegen.c import CPrinter, expr
from spf.codegen.hls_tags import dropped_tags
from spf.codegen.loop_ast import (
    Alloc,
    Bind,
    Call,
    Expr,
    For,
    Int,
    Merge,
    Node,
    Op,
    UFRead,
    Var,
    upper_bound,
    walk,
)
from spf.codegen.program import coords, linear_index
from spf.codegen.signature import uf_first_extent
from spf.errors import CodegenError

if TYPE_CHECKING:
    from spf.analysis.memo import HasIR
    from spf.codegen.program import DataMacro, Program
    from spf.codegen.signature import Arg
    from spf.codegen.unit import TranslationUnit
    from spf.ir import ComputationIR

Range = tuple[int, int]
"""An inclusive integer interval ``(lo, hi)``."""

BoundsOption = Mapping[str, "int | tuple[int, int]"]

PRELUDE = """\
#include <cstdint>
#include <cmath>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
"""

PRINTER_OPTIONS = ("hls_bounds", "hls_tripcounts")
"""The keyword options :func:`print_hls` takes (``codegen``/``compile`` pass them on)."""

BOUNDS_HEADER = "// spf-hls-bounds:"
"""The header line that records ``hls_bounds`` (read back by :mod:`spf.runtime.hls`)."""

_MATH_BASE = (
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor", "ceil",
    "trunc", "round", "rint", "cbrt", "fabs", "pow", "atan2", "hypot", "fmod", "copysign",
    "fmin", "fmax", "fdim", "fma", "erf", "erfc", "remainder",
)  # fmt: skip
MATH_FUNCTIONS = frozenset(
    (*_MATH_BASE, *(f + "f" for f in _MATH_BASE), "abs", "labs", "llabs", "min", "max")
)
"""Functions a statement body may call: the C math library Vitis HLS synthesizes."""

_PARTITION_KINDS = ("cyclic", "block", "complete")

_C99_BOOL = re.compile(r"\b_Bool\b")


def print_hls(
    program: Program,
    *,
    hls_bounds: BoundsOption | None = None,
    hls_tripcounts: BoundsOption | None = None,
) -> str:
    """The HLS C++ translation unit of ``program`` (see the module docstring for options)."""
    return unit_hls(program, hls_bounds=hls_bounds, hls_tripcounts=hls_tripcounts).source


def unit_hls(
    program: Program,
    *,
    hls_bounds: BoundsOption | None = None,
    hls_tripcounts: BoundsOption | None = None,
) -> TranslationUnit:
    """:func:`print_hls`'s unit with its record (:mod:`spf.codegen.unit`)."""
    return HlsPrinter(program, hls_bounds=hls_bounds, hls_tripcounts=hls_tripcounts).unit()


def generate(
    comp: ComputationIR | HasIR,
    name: str | None = None,
    check: bool = True,
    *,
    hls_bounds: BoundsOption | None = None,
    hls_tripcounts: BoundsOption | None = None,
) -> str:
    """``comp.codegen("hls")`` with the HLS options ``hls_bounds`` and ``hls_tripcounts``
    (``comp``: a computation or its IR).

    >>> import spf.kernels
    >>> src = generate(spf.kernels.gemm(), hls_bounds={"N": 64, "M": 64, "K": 64})
    >>> "#pragma HLS INTERFACE s_axilite port=return" in src
    True
    """
    return generate_unit(
        comp, name, check, hls_bounds=hls_bounds, hls_tripcounts=hls_tripcounts
    ).source


def generate_unit(
    comp: ComputationIR | HasIR,
    name: str | None = None,
    check: bool = True,
    *,
    hls_bounds: BoundsOption | None = None,
    hls_tripcounts: BoundsOption | None = None,
) -> TranslationUnit:
    """:func:`generate`'s unit with its record (:mod:`spf.codegen.unit`)."""
    from spf.analysis import legality
    from spf.analysis.memo import as_ir
    from spf.analysis.preconditions import _outside_spf
    from spf.codegen.hls_tags import warn_dropped
    from spf.codegen.program import lower
    from spf.ir.check import check as check_ir

    ir = as_ir(comp, "spf.codegen.hls.generate")
    check_ir(ir)
    if check:
        legality.check(ir, "hls")
    program = lower(ir, name)
    unit = unit_hls(program, hls_bounds=hls_bounds, hls_tripcounts=hls_tripcounts)
    warn_dropped(unit.dropped_tags, stacklevel=_outside_spf() + 1)
    return unit


# ------------------------------------------------------------------------------ options
def _ranges(option: BoundsOption | None, what: str, known: set[str] | None) -> dict[str, Range]:
    """``{"N": 64}`` -> ``{"N": (0, 64)}``; validates the values, and the names when
    ``known`` is given (integers of numpy's types count as ints)."""
    if option is None:
        return {}
    if not isinstance(option, Mapping):
        raise CodegenError(f"{what} must be a dict such as {{'N': 1024}}, got {option!r}")
    out: dict[str, Range] = {}
    for name, value in option.items():
        if known is not None and name not in known:
            listing = ", ".join(sorted(known)) or "none"
            raise CodegenError(f"{what}: unknown name {name!r}; known names: {listing}")
        lo_hi: object = (0, value) if _is_int(value) else value
        pair = (
            [operator.index(v) for v in lo_hi]
            if isinstance(lo_hi, tuple | list) and all(_is_int(v) for v in lo_hi)
            else []
        )
        if len(pair) != 2 or pair[0] > pair[1]:
            raise CodegenError(
                f"{what}[{name!r}] must be a maximum (int) or a (min, max) pair with "
                f"min <= max, got {value!r}"
            )
        for v in pair:
            _check_int64(v, f"{what}[{name!r}]")
        out[str(name)] = (pair[0], pair[1])
    return out


_INT64 = (-(2**63), 2**63 - 1)


def _check_int64(value: int, what: str) -> None:
    """A :class:`CodegenError` naming ``what`` when ``value`` is beyond ``int64_t`` (g++ and
    Vitis reject such a literal; the kernel's parameters and counters are ``int64_t``)."""
    if not _INT64[0] <= value <= _INT64[1]:
        raise CodegenError(
            f"{what}: the constant {value} does not fit in int64_t, the type of the kernel's "
            "parameters, loop counters and array sizes; use values within -2**63 .. 2**63 - 1"
        )


def bounds_option(option: BoundsOption | None, what: str = "hls_bounds") -> dict[str, Range]:
    """``option`` (``{"N": 64}`` or ``{"N": (1, 64)}``) as ranges, validated as the printer
    does (:class:`~spf.errors.CodegenError` for a value that is neither)."""
    return _ranges(option, what, None)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def bounds_header(bounds: Mapping[str, Range]) -> str:
    """``// spf-hls-bounds: M=0..64 N=1..64`` (empty when there are no bounds)."""
    if not bounds:
        return ""
    return (
        BOUNDS_HEADER + " " + " ".join(f"{n}={lo}..{hi}" for n, (lo, hi) in sorted(bounds.items()))
    )


def parse_bounds_header(source: str) -> dict[str, Range]:
    """The bounds recorded by :func:`bounds_header` in ``source`` (``{}`` when none)."""
    for line in source.splitlines():
        if line.startswith(BOUNDS_HEADER):
            out: dict[str, Range] = {}
            for item in line[len(BOUNDS_HEADER) :].split():
                name, _, span = item.partition("=")
                lo, _, hi = span.partition("..")
                try:
                    out[name] = (int(lo), int(hi))
                except ValueError:
                    raise CodegenError(
                        f"{line.strip()!r}: {item!r} is not NAME=MIN..MAX (an HLS source records "
                        "its hls_bounds so; generate the source again)"
                    ) from None
            return out
    return {}


# ------------------------------------------------------------------------------ intervals
def expr_range(e: Expr, env: Mapping[str, Range]) -> Range | None:
    """An interval holding every value of ``e`` when each variable lies in ``env``
    (None when some variable is unbounded or an operation has no useful bound)."""
    if isinstance(e, Int):
        return (e.value, e.value)
    if isinstance(e, Var):
        return env.get(e.name)
    if isinstance(e, UFRead):
        return None
    if e.op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
        return (0, 1)
    if e.op == "select":
        a, b = expr_range(e.args[1], env), expr_range(e.args[2], env)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    args = [expr_range(a, env) for a in e.args]
    if any(a is None for a in args):
        return None
    return _op_range(e, [a for a in args if a is not None])


def _op_range(e: Op, args: list[Range]) -> Range | None:
    if e.op == "neg":
        return (-args[0][1], -args[0][0])
    (a0, a1), (b0, b1) = args[0], args[1]
    if e.op == "+":
        return (a0 + b0, a1 + b1)
    if e.op == "-":
        return (a0 - b1, a1 - b0)
    if e.op == "*":
        products = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
        return (min(products), max(products))
    if e.op == "min":
        return (min(a0, b0), min(a1, b1))
    if e.op == "max":
        return (max(a0, b0), max(a1, b1))
    if b0 != b1 or b0 <= 0:
        return None
    if e.op == "floord":
        return (a0 // b0, a1 // b0)
    if e.op == "/":  # C division truncates toward zero (monotone in the dividend)
        return (_trunc_div(a0, b0), _trunc_div(a1, b0))
    if e.op == "%":
        return (0, min(a1, b0 - 1)) if a0 >= 0 else (-(b0 - 1), b0 - 1)
    return None


def _trunc_div(a: int, b: int) -> int:
    return a // b if a >= 0 else -((-a) // b)


def _linear(e: Expr) -> dict[str, int] | None:
    """``e`` as ``{var: coefficient, "": constant}`` when it is affine, else None."""
    if isinstance(e, Int):
        return {"": e.value}
    if isinstance(e, Var):
        return {e.name: 1}
    if isinstance(e, UFRead) or e.op not in ("+", "-", "neg", "*"):
        return None
    parts = [_linear(a) for a in e.args]
    if any(p is None for p in parts):
        return None
    forms = [p for p in parts if p is not None]
    if e.op == "neg":
        return {k: -v for k, v in forms[0].items()}
    if e.op == "*":
        consts = [f for f in forms if set(f) <= {""}]
        if not consts:
            return None
        c = consts[0].get("", 0)
        other = forms[1] if forms[0] is consts[0] else forms[0]
        return {k: c * v for k, v in other.items()}
    sign = -1 if e.op == "-" else 1
    out = dict(forms[0])
    for k, v in forms[1].items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in out.items() if v or k == ""}


def trip_range(n: For, env: Mapping[str, Range]) -> Range | None:
    """Lower and upper bounds of the number of iterations of ``n`` (None when unknown)."""
    ub = upper_bound(n)
    if ub is None or n.step < 1:
        return None
    span = expr_range(Op("-", (ub, n.init)), env)
    if span is None:
        return None
    lo, hi = span
    return (max(0, lo // n.step + 1), max(0, hi // n.step + 1))


def constant_trip_count(n: For) -> int | None:
    """The trip count of ``n`` when it is the same on every execution of the loop."""
    ub = upper_bound(n)
    if ub is None or n.step < 1:
        return None
    diff = _linear(Op("-", (ub, n.init)))
    if diff is None or set(diff) - {""}:
        return None
    return max(0, diff.get("", 0) // n.step + 1)


def extent_expr(text: str) -> Expr:
    """A C extent (``N-2``, ``(N) * (M)``) as a loop-AST expression.

    Python parses it with each name replaced by a placeholder, so that a symbolic constant
    named like a Python keyword (``lambda``, ``None``) or constant (``True``, else read as 1)
    is a name as in C."""
    names: list[str] = []

    def placeholder(m: re.Match[str]) -> str:
        names.append(m.group())
        return f"_spf_name{len(names) - 1}"

    try:
        tree = ast.parse(_NAME.sub(placeholder, text.strip()), mode="eval").body
    except SyntaxError:
        raise CodegenError(f"extent {text!r} is not an integer expression") from None
    return _from_py(tree, text, names)


_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")  # not the tail of a number (0x10)


_PY_OPS: dict[type, str] = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def _from_py(node: ast.expr, text: str, names: list[str]) -> Expr:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return Int(node.value)
    if isinstance(node, ast.Name) and node.id.startswith("_spf_name"):
        return Var(names[int(node.id.removeprefix("_spf_name"))])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return Op("neg", (_from_py(node.operand, text, names),))
    if isinstance(node, ast.BinOp) and type(node.op) in _PY_OPS:
        op = _PY_OPS[type(node.op)]
        return Op(op, (_from_py(node.left, text, names), _from_py(node.right, text, names)))
    raise CodegenError(f"extent {text!r}: only +, -, *, / and % of parameters are supported")


# ------------------------------------------------------------------------------ the printer
_C_BYTES = {
    "double": 8,
    "float": 4,
    "int64_t": 8,
    "int32_t": 4,
    "int": 4,
    "uint64_t": 8,
    "uint32_t": 4,
    "int16_t": 2,
    "uint16_t": 2,
    "int8_t": 1,
    "uint8_t": 1,
    "char": 1,
}
"""Bytes of an element of the C types local arrays have (8 for any other)."""


_ARRAY_DECL = re.compile(
    r"^[ \t]*(?:const[ \t]+)?([A-Za-z_]\w*)[ \t]+[A-Za-z_]\w*((?:\[\d+\])+)(?:[ \t]*=[ \t]*\{\})?;",
    re.M,
)


def local_bytes(source: str) -> int:
    """The bytes of the fixed-size arrays ``source`` declares (``double bx_buf[3][62];``),
    as :attr:`TranslationUnit.local_bytes` counts them for a generated unit: what the C
    simulation of a source given as text needs on its stack (an upper bound: arrays of
    blocks that are not open at once are all counted)."""
    total = 0
    for m in _ARRAY_DECL.finditer(source):
        elements = 1
        for extent in re.findall(r"\d+", m.group(2)):
            elements *= int(extent)
        total += elements * _C_BYTES.get(m.group(1), 8)
    return total


@dataclass(frozen=True)
class LocalArray:
    """A fixed-size local array of the top function."""

    name: str
    ctype: str
    dims: tuple[int, ...]
    zero: bool
    """Zero-filled on entry (local data spaces and ``local`` buffers, like the C printer's
    ``calloc``; ``stack`` buffers are not)."""
    partitions: tuple[tuple[int, int, str], ...] = ()
    """``(dim, factor, kind)`` with ``dim`` 1-based (Vitis' numbering)."""


class HlsPrinter(CPrinter):
    """Prints the HLS top function (see the module docstring)."""

    unit_target = "hls"
    row_scalars = False
    prefetches = False
    shareable = False  # C++ with local arrays and Vitis pragmas: built on its own

    def unit(self) -> TranslationUnit:
        """The unit with its record, which holds the ``hls_bounds`` it was printed for."""
        bounds = tuple((n, lo, hi) for n, (lo, hi) in sorted(self.bounds.items()))
        unit = super().unit()  # prints: the local arrays are declared (counted) by then
        dropped = dropped_tags(((s.name, dict(s.tags)) for s in self.p.stmts), self.p.body)
        return replace(
            unit, bounds=bounds, local_bytes=self._local_bytes, dropped_tags=tuple(dropped)
        )

    def __init__(
        self,
        program: Program,
        *,
        hls_bounds: BoundsOption | None = None,
        hls_tripcounts: BoundsOption | None = None,
    ) -> None:
        super().__init__(program)
        params = {a.name for a in program.signature.args if a.kind == "param"}
        loops = {n.var for n in walk(program.body) if isinstance(n, For)}
        self.bounds = _ranges(hls_bounds, "hls_bounds", params)
        self.tripcounts = _ranges(hls_tripcounts, "hls_tripcounts", loops)
        self.buffers = {b.name: b for b in program.buffers}
        self.local_names = self._check_locals()
        """Local arrays (local data spaces, buffers the function owns), in declaration order."""
        self._pipelined: str | None = None  # the enclosing pipelined loop while printing
        self._env: dict[str, Range] = {}  # ranges of the enclosing loop variables
        self._bound: dict[str, str] = {}  # UF value variable -> its UF (Bind nodes)
        self._local_bytes = 0  # the local arrays' bytes (the C simulation's stack)

    # --- the translation unit
    def print(self) -> str:
        self._check_statements()
        header = bounds_header(self.bounds)
        self.out.line(f"// Vitis HLS top function {self.p.signature.function} (generated by spf)")
        if header:
            self.out.line(header)
        self.out.raw(PRELUDE)
        self._macros()
        self.out.line("")
        self.out.line(f'extern "C" {self._prototype()}')
        self.out.function(self.p.signature.function, self._prototype())
        with self.out.braces():
            self._interfaces()
            for a in self.p.signature.args:
                self.out.line(f"(void){a.name};")
            for name in self.local_names:
                if not (name in self.buffers and self.buffers[name].allocated_at):
                    self._declare(self._local_array(name))
            self.node(self.p.body)
        return self.out.text()

    def _prototype(self) -> str:
        parts = []
        for a in self.p.signature.args:
            if a.kind == "param":
                parts.append(f"{a.ctype} {a.name}")
            else:
                parts.append(f"{'const ' if a.const else ''}{a.ctype} *{a.name}")
        return f"void {self.p.signature.function}({', '.join(parts) or 'void'})"

    def _interfaces(self) -> None:
        env = dict(self.bounds)
        arrays = [a for a in self.p.signature.args if a.kind != "param"]
        for k, a in enumerate(arrays):
            depth = ""
            extents = _port_extents(a)
            if extents is not None:
                size = _max_size(extents, env)
                if size is not None:
                    _check_int64(size, f"the depth of port {a.name}")
                depth = f" depth={size}" if size is not None else ""
            self.out.line(
                f"#pragma HLS INTERFACE m_axi port={a.name} offset=slave bundle=gmem{k}{depth}"
            )
        for a in self.p.signature.args:
            if a.kind == "param":
                self.out.line(f"#pragma HLS INTERFACE s_axilite port={a.name}")
        self.out.line("#pragma HLS INTERFACE s_axilite port=return")

    # --- macros and local arrays
    def _macros(self) -> None:
        program = self.p
        self.p = replace(program, data=())  # UF and statement macros as in C
        try:
            super()._macros()
        finally:
            self.p = program
        for d in program.data:
            params = ", ".join(f"t{k}" for k in range(d.rank))
            self.out.line(f"#define {d.name}({params}) {self._access(d)}")

    def _access(self, d: DataMacro) -> str:
        """A data space's element: ``A[(t0) * K + (t1)]`` in an argument, ``bx[t0][t1]`` in
        a fixed-size local array (also through a buffer: ``buf[(t0) % 2][t1]``)."""
        index: tuple[cx.Expr, ...]
        if d.buffer is None:
            owner, index, extents = d.name, coords(d.rank), d.extents
        else:
            owner, index = d.buffer, d.index
            extents = self.buffers[d.buffer].extents
        element: cx.Expr = cx.Name(owner)
        if owner not in self.local_names:
            return cx.to_c(cx.Index(element, linear_index(index, extents)))
        for i in index or (cx.Num("0"),):
            element = cx.Index(element, i)
        return cx.to_c(element)

    def _check_locals(self) -> tuple[str, ...]:
        names = [name for name, _, _ in self.p.locals]
        for b in self.p.buffers:
            if not b.argument:
                names.append(b.name)
                continue
            if b.partitions:
                raise CodegenError(
                    f"buffer {b.name!r} is a kernel argument (an m_axi port), which Vitis "
                    "HLS cannot partition; store the data in a buffer the kernel owns "
                    "(scope='stack' or 'local') and partition that one"
                )
        return tuple(names)

    def _local_array(self, name: str) -> LocalArray:
        """The declaration of local array ``name`` (sized with the bounds and the ranges of
        the enclosing loops, for buffers allocated inside a loop)."""
        b = self.buffers.get(name)
        if b is None:
            ctype = next(c for n, c, _ in self.p.locals if n == name)
            extents = next((d.extents for d in self.p.data if d.name == name), ())
            dims = self._dims("local data space", name, extents)
            return LocalArray(name, ctype, dims, zero=True)
        dims = self._dims("buffer", name, b.extents)
        parts = []
        for p in b.partitions:
            if not dims:
                raise CodegenError(
                    f"buffer {name!r} is a scalar (rank 0), which has no dimension to "
                    f"partition (partition(dim={p.dim})); drop the partition"
                )
            if p.kind not in _PARTITION_KINDS or not 0 <= p.dim < len(dims):
                raise CodegenError(
                    f"buffer {name!r}: partition(dim={p.dim}, kind={p.kind!r}) needs a "
                    f"kind in {', '.join(_PARTITION_KINDS)} and a dimension in "
                    f"0..{len(dims) - 1}"
                )
            parts.append((p.dim + 1, p.factor, p.kind))
        zero = b.scope == "local" or b.private  # a private local starts zeroed each iteration
        return LocalArray(name, b.ctype, dims, zero=zero, partitions=tuple(parts))

    def _dims(self, what: str, name: str, extents: tuple[str, ...]) -> tuple[int, ...]:
        env = {**self.bounds, **self._env}
        dims = []
        for text in extents:
            e = extent_expr(text)
            r = expr_range(e, env)
            if r is None:
                free = sorted(set(_names(e)) - set(env))
                hint = ", ".join(f"{n!r}: <max>" for n in free)
                flag = ",".join(f"{n}=<max>" for n in free)
                raise CodegenError(
                    f"{what} {name!r} has extent {text!r}, which depends on "
                    f"{', '.join(free)}; HLS local arrays must be fixed-size: pass "
                    f"hls_bounds={{{hint}}} to codegen/compile for target 'hls' (spf codegen: "
                    f"--hls-bounds {flag}) so the array can be declared with its largest size"
                )
            _check_int64(r[1], f"{what} {name!r}, extent {text!r} at the hls_bounds")
            dims.append(max(1, r[1]))
        return tuple(dims)

    def _declare(self, arr: LocalArray) -> None:
        elements = 1
        for d in arr.dims:
            elements *= d
        size = elements * _C_BYTES.get(arr.ctype, 8)
        if size > _INT64[1]:
            shape = "".join(f"[{d}]" for d in arr.dims)
            raise CodegenError(
                f"local array {arr.ctype} {arr.name}{shape} takes {size} bytes at the "
                "hls_bounds, beyond the largest C array (2**63 - 1 bytes); give smaller "
                "hls_bounds for the parameters of its extents"
            )
        self._local_bytes += elements * _C_BYTES.get(arr.ctype, 8)
        dims = "".join(f"[{d}]" for d in arr.dims) or "[1]"
        init = " = {}" if arr.zero else ""
        self.out.line(f"{arr.ctype} {arr.name}{dims}{init};")
        for dim, factor, kind in arr.partitions:
            factor_text = "" if kind == "complete" else f" factor={factor}"
            self.out.line(
                f"#pragma HLS ARRAY_PARTITION variable={arr.name} type={kind}{factor_text} "
                f"dim={dim}"
            )

    def _check_statements(self) -> None:
        allowed = (
            {d.name for d in self.p.data}
            | {u for u, _ in self.p.ufs}
            | {s.name for s in self.p.stmts}
            | set(self.buffers)
            | MATH_FUNCTIONS
            | {"spf_floord", "spf_min", "spf_max"}
        )
        for s in self.p.stmts:
            if s.operation is not None and s.operation.kind in ("send", "receive"):
                raise CodegenError(
                    f"statement {s.name} is a {s.operation.kind} operation "
                    f"(comp.{s.operation.kind}); target 'hls' generates one FPGA kernel, "
                    'which cannot communicate with other ranks; generate it with target "mpi"'
                )
            if _C99_BOOL.search("\n".join(cx.stmt_lines(s.body))):
                raise CodegenError(
                    f"statement {s.name} uses _Bool, C99's boolean type, which C++ (Vitis HLS "
                    "and the C simulation with g++) does not have; compare instead ((x) != 0) "
                    "or declare the local int"
                )
            banned = sorted(s.calls - allowed)
            if banned:
                raise CodegenError(
                    f"statement {s.name} calls {banned[0]}(), which Vitis HLS cannot "
                    "synthesize in a kernel (no dynamic allocation, I/O or other "
                    "library calls; C math functions such as sqrt, exp, fabs are "
                    "allowed); compute it outside the kernel"
                )

    # --- loop tree
    def node(self, n: Node) -> None:
        if isinstance(n, Alloc):
            self.out.line("{")
            with self.out.indented():
                if n.buffer in self.local_names:
                    self._declare(self._local_array(n.buffer))
                self.node(n.body)
            self.out.line("}")
            return
        if isinstance(n, Bind):
            self._bound[n.var] = n.uf
        if isinstance(n, Merge):
            self._merge(n)
            return
        if isinstance(n, Call) and self.macros[n.stmt].operation is not None:
            op = self.macros[n.stmt].operation
            assert op is not None
            target = f" {op.buffer}" if op.buffer else ""
            self.out.line(
                f"// {n.stmt}: {op.kind.replace('_', ' ')}{target} (nothing to do in the kernel)"
            )
            return
        super().node(n)

    def _for(self, n: For) -> None:
        pragmas, notes = self._loop_pragmas(n)
        step = f"{n.var}++" if n.step == 1 else f"{n.var} += {n.step}"
        self.out.line(f"for (int64_t {n.var} = {expr(n.init)}; {expr(n.cond)}; {step})")
        with self.out.braces():
            for p in pragmas:
                self.out.line(p)
            for note in notes:
                self.out.line(f"// {note}")
            outer, env = self._pipelined, dict(self._env)
            if outer is None and any(_tag_kind(t) == "pipeline" for t in n.tags):
                self._pipelined = n.var
            var_range = self._var_range(n)
            if var_range is not None:
                self._env[n.var] = var_range
            try:
                self.node(n.body)
            finally:
                self._pipelined, self._env = outer, env

    def _merge(self, n: Merge) -> None:
        """A co-iteration: a ``while`` loop whose trip count depends on the two lists."""
        from spf.codegen.merge_print import print_merge

        loops = f"loops {n.left.var} and {n.right.var}"
        if self._pipelined is not None:
            raise CodegenError(
                f"loop {self._pipelined} is pipelined, so Vitis HLS must fully unroll the "
                f"merge of {loops} inside it (co-iteration of two sorted lists), whose trip "
                "count depends on the lists; pipeline a loop that holds no merge"
            )
        self.out.line(f"// merge of {loops}: at most the sum of their trip counts")
        print_merge(self.out, n, self.node)

    def _var_range(self, n: For) -> Range | None:
        env = {**self.bounds, **self._env}
        ub = upper_bound(n)
        lo = expr_range(n.init, env)
        hi = None if ub is None else expr_range(ub, env)
        return None if lo is None or hi is None else (lo[0], hi[1])

    def _loop_pragmas(self, n: For) -> tuple[list[str], list[str]]:
        pragmas: list[str] = []
        notes: list[str] = []
        for t in n.tags:
            kind, arg = _tag_kind(t), _tag_arg(t)
            if kind == "pipeline":
                self._check_pipeline(n)
                pragmas.append(f"#pragma HLS PIPELINE II={arg or 1}")
            elif kind in ("unroll", "vector") and arg:
                pragmas.append(f"#pragma HLS UNROLL factor={arg}")
            elif kind == "sums":
                raise CodegenError(
                    f"loop {n.var} is tagged {t} (partial_sums), which C/OpenMP and MPI code "
                    "print; an HLS loop's sum is pipelined in order (Vitis reassociates under "
                    "its own options): drop partial_sums for target='hls'"
                )
            else:
                notes.append(f"{t}: not an HLS directive; this loop runs sequentially")
        if self._pipelined is not None and constant_trip_count(n) is None:
            raise CodegenError(self._unroll_message(self._pipelined, n))
        tripcount = self._tripcount(n)
        if isinstance(tripcount, str):
            notes.append(tripcount)
        elif tripcount is not None:
            for v in tripcount:
                _check_int64(v, f"the LOOP_TRIPCOUNT of loop {n.var}")
            pragmas.append(f"#pragma HLS LOOP_TRIPCOUNT min={tripcount[0]} max={tripcount[1]}")
        return pragmas, notes

    def _tripcount(self, n: For) -> Range | str | None:
        """A trip-count range for the pragma, a note saying why there is none, or None
        for a loop with constant bounds (Vitis computes those itself)."""
        if n.var in self.tripcounts:
            return self.tripcounts[n.var]
        if constant_trip_count(n) is not None and not _uses_params(n, self.p):
            return None
        env = {**self.bounds, **self._env}
        r = trip_range(n, env)
        if r is not None:
            return r
        free = {v for e in (n.init, n.cond) for v in _names(e)} - set(env) - {n.var}
        ufs = sorted({self._bound[v] for v in free if v in self._bound})
        ufs += sorted({u.uf for e in (n.init, n.cond) for u in _uf_reads(e)} - set(ufs))
        if ufs:
            return (
                f"no LOOP_TRIPCOUNT for {n.var}: its bounds read {', '.join(ufs)} "
                f"(give hls_tripcounts={{'{n.var}': (min, max)}})"
            )
        params = {a.name for a in self.p.signature.args if a.kind == "param"}
        unbounded = sorted((free & params) - set(self.bounds))
        if unbounded:
            names = ", ".join(f"'{v}': max" for v in unbounded)
            return f"no LOOP_TRIPCOUNT for {n.var}: no bounds given (hls_bounds={{{names}}})"
        return f"no LOOP_TRIPCOUNT for {n.var}: no range found for its bounds"

    def _check_pipeline(self, n: For) -> None:
        if self._pipelined is not None:
            raise CodegenError(
                f"loop {n.var} is pipelined inside pipelined loop {self._pipelined}; Vitis HLS "
                "unrolls every loop inside a pipelined one: pipeline only one of them"
            )

    def _unroll_message(self, outer: str, n: For) -> str:
        return (
            f"loop {outer} is pipelined, so Vitis HLS must fully unroll loop {n.var} inside "
            f"it, but the trip count of {n.var} is not a constant ({expr(n.init)} .. "
            f"{expr(n.cond)}); pipeline loop {n.var} (the innermost loop) instead, or give "
            f"it a constant trip count (split or tile it by a constant)"
        )


def _tag_kind(tag: str) -> str:
    return tag.split("(", 1)[0]


def _tag_arg(tag: str) -> int | None:
    if "(" not in tag or not tag.endswith(")"):
        return None
    text = tag[tag.index("(") + 1 : -1]
    return int(text) if text.isdigit() else None


def _names(e: Expr) -> Iterator[str]:
    if isinstance(e, Var):
        yield e.name
    elif isinstance(e, Op | UFRead):
        for a in e.args:
            yield from _names(a)


def _uf_reads(e: Expr) -> Iterator[UFRead]:
    if isinstance(e, UFRead):
        yield e
    if isinstance(e, Op | UFRead):
        for a in e.args:
            yield from _uf_reads(a)


def _uses_params(n: For, program: Program) -> bool:
    params = {a.name for a in program.signature.args if a.kind == "param"}
    return any(v in params for e in (n.init, n.cond) for v in _names(e))


def _port_extents(a: Arg) -> tuple[str, ...] | None:
    """The extents of array argument ``a``: a data space's shape, an index array's from its
    UF's declared domain (None when unknown)."""
    if a.shape is not None:
        return tuple(str(e) for e in a.shape)
    first = None if a.uf is None else uf_first_extent(a.uf)
    return None if first is None else (first, *a.inner)


def _max_size(extents: tuple[str, ...], env: Mapping[str, Range]) -> int | None:
    size = 1
    for text in extents:
        r = expr_range(extent_expr(text), env)
        if r is None:
            return None
        size *= max(0, r[1])
    return max(1, size)


__all__ = [
    "PRINTER_OPTIONS",
    "HlsPrinter",
    "bounds_option",
    "generate",
    "generate_unit",
    "local_bytes",
    "parse_bounds_header",
    "print_hls",
    "unit_hls",
]
