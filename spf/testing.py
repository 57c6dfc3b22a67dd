"""Helpers for testing generated code against numpy / scipy (docs/api.md, "Testing helpers").

* :func:`random_csr`: a random ``scipy.sparse`` CSR array with chosen value and index types
  and, optionally, empty rows (the inputs that catch off-by-one row-pointer bugs).
* :func:`compiled`: a :mod:`spf.kernels` computation compiled once per process and
  remembered, so a test suite builds each distinct kernel once however many tests call it.
* :func:`run_and_compare`: call a kernel on copies of the inputs and compare the named
  outputs with the expected arrays, with a message naming the output that differs.
* :func:`random_lower`: a random lower-triangular CSR array with its diagonal (the wavefront
  solves' input).
* :func:`fixed_team`: OpenMP parallel regions get a fixed number of threads, whatever the
  machine's load (the adaptive cap off), for tests that compare thread counts.
* :func:`expand_rows`: a hand-written inspector/executor whose loop bounds read an index
  array the same computation writes (the case scanners get wrong).
* :class:`HostMemoryGpu`: a :class:`~spf.runtime.gpu.GpuRuntime` whose "device" is host
  memory (allocations, copies and synchronizations counted), for the CUDA bridge's tests
  without a GPU; a subclass interprets its kernels' launches.

>>> import numpy as np, spf.sparse
>>> a = random_csr(5, 4, 0.5, rng=0, empty_rows=[2])
>>> a.shape, a.indptr.dtype.name, int(a.indptr[3] - a.indptr[2])
((5, 4), 'int32', 0)
>>> x, y = np.ones(4), np.zeros(5)
>>> args = {"x": x, "y": y, **spf.sparse.csr_args(a)}
>>> out = run_and_compare(compiled("spmv_csr", openmp=False), args, {"y": a @ x})
>>> bool(np.all(y == 0.0))  # the caller's arrays are left alone
True
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from spf.dtypes import numpy_name
from spf.errors import ArgumentError

__all__ = [
    "HostMemoryGpu",
    "compiled",
    "expand_rows",
    "fixed_team",
    "random_csr",
    "random_lower",
    "run_and_compare",
]


def random_csr(
    n: int,
    m: int,
    density: float,
    rng: np.random.Generator | int | None = None,
    *,
    dtype: Any = np.float64,
    index_dtype: Any = np.int32,
    empty_rows: int | Sequence[int] = 0,
) -> Any:
    """A random ``n`` x ``m`` ``scipy.sparse.csr_array`` with about ``density * n * m`` entries.

    Values are uniform in ``[-1, 1)`` and never zero; column indices are sorted and unique.
    ``rng`` is a numpy ``Generator`` or a seed. ``empty_rows`` is a number of rows chosen at
    random (at most ``n``) or the row numbers to empty. ``indptr`` and ``indices`` have
    ``index_dtype``.
    """
    sparse = importlib.import_module("scipy.sparse")
    if isinstance(n, bool) or isinstance(m, bool) or not isinstance(n, int) or n < 0:
        raise ArgumentError(f"random_csr: n must be an int >= 0, got {n!r}")
    if not isinstance(m, int) or m < 0:
        raise ArgumentError(f"random_csr: m must be an int >= 0, got {m!r}")
    if not 0.0 <= density <= 1.0:
        raise ArgumentError(f"random_csr: density must be in [0, 1], got {density!r}")
    gen = np.random.default_rng(rng)
    values = np.dtype(numpy_name(dtype, what="random_csr: dtype"))
    indices = np.dtype(numpy_name(index_dtype, what="random_csr: index_dtype"))
    if indices.name not in ("int32", "int64"):
        raise ArgumentError(f"random_csr: index_dtype must be int32 or int64, got {indices}")
    coo = sparse.random_array((n, m), density=density, format="coo", rng=gen)
    keep = np.ones(coo.nnz, dtype=bool)
    if isinstance(empty_rows, int):
        if empty_rows < 0:
            raise ArgumentError(f"random_csr: empty_rows must be >= 0, got {empty_rows}")
        emptied = gen.choice(n, size=min(empty_rows, n), replace=False)
    else:
        emptied = np.asarray(empty_rows, dtype=np.int64)
        if emptied.size and (emptied.min() < 0 or emptied.max() >= n):
            raise ArgumentError(f"random_csr: empty_rows must lie in 0..{n - 1}, got {emptied}")
    keep &= ~np.isin(coo.row, emptied)
    count = int(keep.sum())
    data = gen.uniform(0.5, 1.0, count) * gen.choice(np.array([-1.0, 1.0]), count)
    a = sparse.csr_array(
        (data.astype(values), (coo.row[keep], coo.col[keep])), shape=(n, m), dtype=values
    )
    a.sort_indices()
    a.indptr = a.indptr.astype(indices)
    a.indices = a.indices.astype(indices)
    return a


def random_lower(n: int, density: float, seed: int) -> Any:
    """A random ``n`` x ``n`` lower-triangular CSR array with sorted columns and a diagonal
    large enough to keep a triangular solve well conditioned."""
    sp = importlib.import_module("scipy.sparse")
    rng = np.random.default_rng(seed)
    a = sp.tril(sp.random_array((n, n), density=density, rng=rng, format="csr"), k=-1)
    m = sp.csr_array(a + sp.diags_array(1.0 + rng.random(n) * (1 + n * density), shape=(n, n)))
    m.sort_indices()
    return m


def copies_executor(index_dtype: Any = "int32") -> Any:
    """The executor IR of ``spf.kernels.sptrsv_csr()``'s wavefront (``method="auto"``) on
    part-ordered copies of its rows (:func:`spf.analysis.local_copies.plan_copies`)."""
    from spf import kernels
    from spf.analysis.executor import build_executor
    from spf.analysis.local_copies import plan_copies

    comp = kernels.sptrsv_csr(index_dtype=index_dtype)
    comp.wavefront("i", method="auto")
    executor = build_executor(comp.ir)
    ((analysis, names),) = executor.loops
    found = plan_copies(comp.ir, executor.ir, "i", analysis.groups, names, analysis.nodes)
    if found is None:
        raise AssertionError("sptrsv_csr's wavefront found nothing to copy")
    return found[1]


@contextlib.contextmanager
def fixed_team(n: int) -> Iterator[None]:
    """OpenMP parallel regions get ``n`` threads, whatever the machine's load."""
    from spf.runtime.threads import openmp_threads, set_adaptive

    previous = set_adaptive(False)
    try:
        with openmp_threads(n):
            yield
    finally:
        set_adaptive(previous)


@functools.cache
def _compiled(
    name: str,
    args: tuple[Any, ...],
    index_dtype: Any,
    options: tuple[tuple[str, Any], ...],
    default_flags: tuple[str, ...],
) -> Any:
    from spf import kernels

    builder: Callable[..., Any] | None = getattr(kernels, name, None)
    if name not in kernels.__all__ or builder is None:
        raise ArgumentError(
            f"compiled: {name!r} is not a kernel of spf.kernels; pick one of {kernels.__all__}"
        )
    build = {} if index_dtype is None else {"index_dtype": index_dtype}
    return builder(*args, **build).compile(**dict(options))


def compiled(name: str, *args: Any, index_dtype: Any = None, **options: Any) -> Any:
    """``spf.kernels.<name>(*args, index_dtype=...).compile(**options)``, built once per process.

    ``args`` (``spmv_bcsr``'s block sizes, ``spmv``'s format) and ``index_dtype`` go to the
    kernel function, every other option to ``compile``. The result is shared by every caller
    asking for the same kernel and options, so callers must not change it.
    """
    from spf.runtime.build import default_opt_flags

    # the default flags are part of the key: the test suite's level (SPF_TEST_OPT_LEVEL) may
    # be unset for some tests of a process and not for others
    key = (name, args, index_dtype, tuple(sorted(options.items())), default_opt_flags())
    try:
        hash(key)
    except TypeError:
        raise ArgumentError(
            f"compiled: the arguments of {name!r} must be hashable to be remembered; "
            "call spf.kernels and compile directly for unhashable ones"
        ) from None
    return _compiled(*key)


def compiled_without(build: Callable[[], Any], module: Any, attr: str = "plan") -> Any:
    """``build().compile()`` with ``module.attr`` (a code generation planner, such as
    :func:`spf.codegen.row_pairs.plan`) returning None, generated afresh: nothing read from or
    kept in spf's caches of generated code and analyses. The kernel as printed before the
    planner existed, for tests comparing both on the same arrays."""
    from spf.analysis import memo
    from spf.runtime import compile as compile_module
    from spf.runtime import warm

    patches = [
        (module, attr, lambda *args: None),
        (compile_module, "_GENERATED", {}),
        (compile_module, "_read_generated", lambda *args: None),
        (compile_module, "_write_generated", lambda *args: None),
        (warm, "warm_key", lambda *args, **kwargs: None),
        (memo, "remembered", lambda ir, key, run: run()),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        return build().compile()
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


GUARD = 16
"""Entries of guard zone on each side of the arrays :func:`guarded_call` passes."""


def guarded_call(
    kernel: Any, arrays: Mapping[str, tuple[Any, Any]], out: str, **params: Any
) -> tuple[str | None, np.ndarray]:
    """A checked call of ``kernel`` on copies of ``arrays`` (name -> (values, fill)), each a
    view into a buffer of ``fill`` with :data:`GUARD` entries on each side, and ``params``:
    the ``ArgumentError`` text (None when the call passed) and a copy of the array ``out``.
    Asserts that no guard entry changed and that no array but ``out`` was written."""
    bufs, views = {}, {}
    for name, (values, fill) in arrays.items():
        a = np.asarray(values)
        bufs[name] = np.full(a.size + 2 * GUARD, fill, dtype=a.dtype)
        views[name] = bufs[name][GUARD : GUARD + a.size]
        views[name][:] = a
    before = {k: b.copy() for k, b in bufs.items()}
    error = None
    try:
        kernel(**views, **params, check=True)
    except ArgumentError as e:
        error = str(e)
    for k, b in bufs.items():
        end = GUARD + views[k].size
        assert np.array_equal(b[:GUARD], before[k][:GUARD]), k
        assert np.array_equal(b[end:], before[k][end:]), k
        if k != out:
            assert np.array_equal(b, before[k]), k
    return error, views[out].copy()


def same_checked_calls(
    new: Any, old: Any, arrays: Mapping[str, tuple[Any, Any]], out: str, **params: Any
) -> str | None:
    """:func:`guarded_call` of both kernels on the same arrays: the same error text, or
    bitwise equal ``out`` where both passed; returns the error text (None: passed)."""
    e_new, out_new = guarded_call(new, arrays, out, **params)
    e_old, out_old = guarded_call(old, arrays, out, **params)
    assert e_new == e_old
    if e_new is None:
        assert np.array_equal(out_new, out_old)
    return e_new


def built_c(folder: Any, name: str, lines: Sequence[str], cdefs: Sequence[str]) -> tuple[Any, Any]:
    """``lines`` of C (after ``<stdint.h>`` and a plain ``spf_fault_note`` keeping the first
    fault) built as ``folder/name.so`` with gcc and opened with cffi: ``(ffi, library)`` of
    the functions ``cdefs`` declares. For tests running printed fragments on their own."""
    import subprocess
    from pathlib import Path

    import cffi

    head = [
        "#include <stdint.h>",
        "static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)",
        "{ if (!f[0]) { f[0] = kind; f[1] = uf; f[2] = at; f[3] = v; } }",
    ]
    ffi = cffi.FFI()
    for cdef in cdefs:
        ffi.cdef(cdef)
    c = Path(folder) / f"{name}.c"
    c.write_text("\n".join([*head, *lines]) + "\n")
    so = c.with_suffix(".so")
    cmd = ["gcc", "-std=c99", "-O2", "-fPIC", "-shared", "-Wall", "-o", str(so), str(c)]
    subprocess.run(cmd, check=True)
    return ffi, ffi.dlopen(str(so))


def run_and_compare(
    kernel: Callable[..., Any],
    args: Mapping[str, Any],
    expected: Mapping[str, Any],
    *,
    rtol: float = 1e-12,
    atol: float = 1e-12,
) -> dict[str, Any]:
    """Call ``kernel(**args)`` on copies of ``args`` and compare each ``expected`` output.

    Returns the copied arguments after the call (the outputs included); the caller's arrays
    are not changed. An output that differs raises ``AssertionError`` naming it; a name in
    ``expected`` that is not an argument raises :class:`~spf.errors.ArgumentError`.
    """
    missing = sorted(set(expected) - set(args))
    if missing:
        raise ArgumentError(
            f"run_and_compare: expected outputs {missing} are not arguments of the call; "
            f"pass them in args (the arguments are {sorted(args)})"
        )
    call = {key: copy.copy(value) for key, value in args.items()}
    kernel(**call)
    for key, want in expected.items():
        np.testing.assert_allclose(
            call[key], want, rtol=rtol, atol=atol, err_msg=f"output {key!r} differs"
        )
    return call


def expand_rows(*, fused: bool = False, index_dtype: Any = "int32") -> Any:
    """A hand-written inspector and executor: count entries per row, prefix-sum the counts
    into ``ptr`` (an index array), then fill ``rows(p) = i`` and sum ``y(i)`` over
    ``ptr(i) <= p < ptr(i+1)``. ``fused``: that loop runs in the prefix sum's ``i`` loop,
    right after ``ptr(i+1)`` is written (its bounds are written in its own iteration).
    Arguments: ``row`` (each entry's row), ``A``, ``y``, ``cnt``, ``ptr``, ``rows``, ``N``,
    ``NNZ``."""
    from spf.computation import Computation, Stmt

    dtype = numpy_name(index_dtype, what="expand_rows: index_dtype")
    ctype = f"{dtype}_t"
    c = Computation("expand_rows")
    c.declare_uf("row", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < N}", dtype=dtype)
    c.add_data_space("cnt", ctype, shape=("N",))
    c.add_data_space("ptr", ctype, shape=("N+1",), index=True)
    c.declare_uf("ptr", range="{[v]: 0 <= v <= NNZ}", monotonic="nondecreasing")
    c.add_data_space("rows", ctype, shape=("NNZ",))
    c.add_data_space("y", "double", shape=("N",))
    c.add_data_space("A", "double", shape=("NNZ",))
    c.add_stmt(Stmt("$cnt$(i) = 0;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,0,0,0]}"))
    c.add_stmt(Stmt("$cnt$(row(k)) += 1;", "{[k]: 0 <= k < NNZ}", "{[k] -> [1,k,0,0,0]}"))
    c.add_stmt(Stmt("$ptr$(0) = 0;", "{[z]: z = 0}", "{[z] -> [2,0,0,0,0]}"))
    c.add_stmt(
        Stmt("$ptr$(i+1) = $ptr$(i) + $cnt$(i);", "{[i]: 0 <= i < N}", "{[i] -> [3,i,0,0,0]}")
    )
    c.add_stmt(
        Stmt(
            "$rows$(p) = i; $y$(i) += $A$(p);",
            "{[i,p]: 0 <= i < N && ptr(i) <= p < ptr(i+1)}",
            "{[i,p] -> [3,i,1,p,0]}" if fused else "{[i,p] -> [4,i,0,p,0]}",
        )
    )
    return c


def look_helper() -> Any:
    """The replayed calls' compiled look helper (:mod:`spf.runtime.plan_look`), built and
    waited for; a test is skipped only where Python's C headers are absent (where they are
    present and the helper still is not built, that is a failure)."""
    import pytest

    from spf.runtime import plan_look

    if not plan_look.headers():
        pytest.skip("no Python C headers (python3-dev) to build the look helper against")
    helper = plan_look.looker(wait=True)
    assert helper is not None, "the look helper failed to build with the headers present"
    return helper


class HostMemoryGpu:
    """A GPU runtime (:class:`~spf.runtime.gpu.GpuRuntime`) whose device memory is host
    memory: ``memory`` holds what is allocated and not freed, ``mallocs`` counts the
    allocations, ``copies`` the ``cudaMemcpy`` kinds in order, ``synchronized`` the
    synchronizations, ``kernels`` what the last ``load`` named. ``launch`` is a subclass's:
    it interprets the kernel on the host (the argument values as 8-byte images)."""

    name = "host-memory"

    def __init__(self) -> None:
        self.memory: dict[int, ctypes.Array[ctypes.c_char]] = {}
        self.mallocs = 0
        self.copies: list[int] = []
        self.synchronized = 0
        self.kernels: list[str] = []

    def load(self, source: str, kernels: Sequence[str]) -> Any:
        self.kernels = list(kernels)
        return "module"

    def malloc(self, nbytes: int) -> int:
        self.mallocs += 1
        buf = ctypes.create_string_buffer(nbytes)
        self.memory[ctypes.addressof(buf)] = buf
        return ctypes.addressof(buf)

    def free(self, ptr: int) -> None:
        del self.memory[ptr]

    def copy(self, dst: int, src: int, nbytes: int, kind: int) -> None:
        self.copies.append(kind)
        ctypes.memmove(dst, src, nbytes)

    def to_symbol(self, module: Any, symbol: str, src: int, nbytes: int, offset: int) -> None:
        raise AssertionError("no constant memory here")

    def launch(
        self,
        module: Any,
        kernel: str,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        args: Sequence[bytes],
        params: int,
    ) -> None:
        raise AssertionError(f"{type(self).__name__} interprets no kernel (a subclass does)")

    def synchronize(self) -> None:
        self.synchronized += 1
