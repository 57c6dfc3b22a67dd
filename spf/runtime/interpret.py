"""The reference interpreter: every statement instance in schedule order (slow, exact).

The order comes from the schedule relations themselves (:mod:`spf.runtime.walk`); run-time
index arrays (``index=True``) are read as UFs as they are when a statement reads them, and
statements whose domains read them are enumerated once the statements before them have run.

Arguments are checked exactly as a compiled kernel checks them (:class:`spf.runtime.binding.
Binder` with ``check=True``: dtypes, ranks, shapes, contiguity, writeability, parameters
inferred from declared shapes, declared UF facts, no written array overlapping another), with
two allowances: an index array may be int32 or int64 whatever its UF declares (the interpreter
does not care; a kernel does), and a local 0-d scalar (a function's parameter or return value)
may be left out (it starts at 0).

Layer III: a data space stored in a buffer (``store_in``, ``storage_fold``) is read and
written through its placement, so folded or shared storage behaves as in generated code;
buffers the function owns start zeroed, and one ``allocate_at`` a loop is fresh for every
iteration of that loop, as is a local private to a loop (``add_local(..., private=...)``).
Layer IV: barriers and host/device copies do nothing here (one memory, one thread of
control); send and receive raise ``SpfError`` (they need MPI ranks).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from spf.clang import NUMPY_OF_C
from spf.errors import ArgumentError, CodegenError, ScheduleError, SpfError
from spf.ir import OperationIR
from spf.ir.reading import iterator_names, storage_of
from spf.runtime.binding import Binder
from spf.runtime.walk import Instance, ScheduleWalk, Watched, Writes

if TYPE_CHECKING:
    from spf.codegen.signature import Signature
    from spf.ir import BufferIR, ComputationIR

_INDEX_DTYPES = ("int32", "int64")


def interpret(ir: ComputationIR, args: Mapping[str, Any]) -> None:
    """Execute the computation ``ir`` on ``args`` (data spaces, UF arrays and parameters,
    by name)."""
    from spf.ir.check import check

    check(ir)  # an IR built by hand: what a computation would not hold is named first
    given = dict(args)
    for ds in ir.data_spaces:
        if ds.name not in given and ds.rank == 0 and ds.role not in ("data", "local"):
            given[ds.name] = np.zeros((), dtype=ds.dtype)  # a function's scalar parameter
    binder = Binder(_signature(ir, given), context=f"interpret({ir.name})")
    params, values = binder.bind(given, check=True)
    arrays: dict[str, Any] = {}
    ufs: dict[str, Any] = {}
    for d, value in zip(binder.data, values, strict=True):
        if d.is_uf:
            ufs[d.name] = value
        else:  # a kernel also takes shape (1,) for a 0-d space; the interpreter needs 0-d
            arrays[d.name] = value.reshape(()) if d.rank == 0 else value
    from spf.analysis.sources import source_tree

    _refuse_communication(ir)
    arrays.update(_locals(ir, params))
    storage = _Storage(ir, params, arrays)
    writes = Writes()
    runtime = _index_arrays(ir, arrays, ufs, writes)
    runners = [source_tree(ir, s).to_python() for s in ir.parsed_stmts]
    names = [iterator_names(s.domain) for s in ir.parsed_stmts]

    def run(instance: Instance) -> None:
        time, order, point = instance
        env = dict(params)
        env.update(zip(names[order], point, strict=True))
        storage.enter(time)
        runners[order](env, arrays, ufs)

    from spf.runtime.coiterate import union_runner

    # the sets are over the integer parameters (a floating constant, even NaN, is no bound)
    ints = {k: v for k, v in params.items() if not isinstance(v, float)}
    walk = ScheduleWalk(ir, ints, ufs, runtime, writes)
    walk.run(union_runner(ir, ints, ufs, run))


def _index_arrays(
    ir: ComputationIR, arrays: dict[str, Any], ufs: dict[str, Any], writes: Writes
) -> frozenset[str]:
    """Run-time index arrays (``index=True``): statements store into them and later ones
    read them as UFs, from the same array, as they are at that moment; the stores are
    counted (:mod:`spf.runtime.walk`)."""
    names = [ds.name for ds in ir.data_spaces if ds.index]
    for name in names:
        held = arrays[name]
        if isinstance(held, _Stored):
            raise CodegenError(
                f"interpret({ir.name}): the run-time index array {name!r} is stored in "
                f"buffer {held.buffer_name!r}; the interpreter reads index arrays as "
                "themselves: run the compiled kernel instead"
            )
        ufs[name] = held
        arrays[name] = Watched(held, writes)
    return frozenset(names)


def _refuse_communication(ir: ComputationIR) -> None:
    for s in ir.parsed_stmts:
        if isinstance(s.record, OperationIR) and s.record.kind in ("send", "receive"):
            raise CodegenError(
                f"interpret({ir.name}): statement {s.name} is a {s.record.kind} operation; the "
                "interpreter runs one process: run the MPI kernel (compile(target='mpi')) "
                "under mpiexec instead"
            )


class _Allocation:
    """A buffer the function owns: one zeroed array, or one per iteration of the loop it is
    ``allocate_at``."""

    def __init__(self, ir: ComputationIR, buffer: BufferIR, params: Mapping[str, int]) -> None:
        from spf.analysis.dependences import padded, position_in

        self.buffer = buffer
        self.params = dict(params)
        self.position: int | None = None
        self.loop_names: list[tuple[str, int]] = []
        owner, level = buffer.allocation or ("", None)
        if level is not None:  # allocated in a loop (None: spf.ROOT, the whole function)
            stmt = ir.parsed_stmt(owner)
            self.position = position_in(stmt, level, ir.schedule_width)
            outs = padded(stmt, ir.schedule_width).out_vars
            self.loop_names = [
                (v, k) for k, v in enumerate(outs[: self.position + 1]) if v.isidentifier()
            ]
        self.key: tuple[int, ...] | None = None
        self.array: Any = None if self.position is not None else self._new(self.params)

    def _new(self, env: Mapping[str, int]) -> Any:
        from spf.sets.expr import compile_expr

        shape = []
        for d in self.buffer.shape:
            try:
                shape.append(d if isinstance(d, int) else compile_expr(d)[0](env))
            except SpfError as err:
                raise ArgumentError(
                    f"interpret: extent {d!r} of buffer {self.buffer.name!r}: {err}"
                ) from err
        if any(n < 0 for n in shape):
            raise ArgumentError(
                f"interpret: buffer {self.buffer.name!r} would have negative extents {shape}"
            )
        return np.zeros(tuple(shape), dtype=NUMPY_OF_C[self.buffer.dtype])

    def enter(self, time: Sequence[int]) -> None:
        if self.position is None:
            return
        key = tuple(time[: self.position + 1])
        if key != self.key:
            env = dict(self.params)
            env.update({name: time[k] for name, k in self.loop_names})
            self.key, self.array = key, self._new(env)

    def get(self) -> Any:
        if self.array is None:
            raise ScheduleError(
                f"interpret: buffer {self.buffer.name!r} is used outside the loop it is "
                "allocated in (allocate_at)"
            )
        return self.array


class _Stored:
    """A data space seen through its placement in a buffer (what ``_ld``/``_st`` index)."""

    def __init__(
        self,
        name: str,
        shape: tuple[int, ...],
        buffer: str,
        get: Callable[[], Any],
        index: Sequence[Callable[[Mapping[str, int]], int]],
        params: Mapping[str, int],
    ) -> None:
        self.name, self.shape, self.buffer_name = name, shape, buffer
        self._get, self._index, self._params = get, index, dict(params)

    def _where(self, idx: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
        env = dict(self._params)
        env.update({f"t{k}": v for k, v in enumerate(idx)})
        phys = tuple(fn(env) for fn in self._index)
        arr = self._get()
        if len(phys) != arr.ndim or not all(
            0 <= v < n for v, n in zip(phys, arr.shape, strict=True)
        ):
            raise ArgumentError(
                f"interpret: {self.name}({', '.join(map(str, idx))}) is stored at "
                f"{self.buffer_name}({', '.join(map(str, phys))}), outside the buffer's shape "
                f"{tuple(arr.shape)}"
            )
        return arr, phys

    @property
    def dtype(self) -> Any:
        """The element type of the buffer that holds the data space."""
        return self._get().dtype

    def __getitem__(self, idx: tuple[int, ...]) -> Any:
        arr, phys = self._where(idx)
        return arr[phys]

    def __setitem__(self, idx: tuple[int, ...], value: Any) -> None:
        arr, phys = self._where(idx)
        arr[phys] = value


def _constant(array: Any) -> Callable[[], Any]:
    return lambda: array


class _Storage:
    """The buffers of one interpretation and the data spaces stored in them."""

    def __init__(self, ir: ComputationIR, params: Mapping[str, int], arrays: dict[str, Any]):
        from spf.sets.expr import compile_expr

        self.allocations: list[_Allocation] = []
        getters: dict[str, Callable[[], Any]] = {}
        for buffer in ir.buffers:
            if buffer.argument:
                getters[buffer.name] = _constant(arrays[buffer.name])
            else:
                alloc = _Allocation(ir, buffer, params)
                self.allocations.append(alloc)
                getters[buffer.name] = alloc.get
        for placement in ir.placements:
            ds = placement.data_space
            space = ir.data_space_table[ds]
            rank = space.rank or 0
            if space.shape is None:
                shape = (sys.maxsize,) * rank
            else:
                shape = tuple(
                    d if isinstance(d, int) else compile_expr(d)[0](params) for d in space.shape
                )
            index = [compile_expr(e)[0] for e in placement.exprs]
            arrays[ds] = _Stored(
                ds, shape, placement.buffer, getters[placement.buffer], index, params
            )

        self.private: list[tuple[Any, int, list[tuple[int, ...] | None]]] = []
        from spf.analysis.private import private_position

        for space in ir.data_spaces:
            name = space.name
            pos = private_position(ir, name) if space.private is not None else None
            if pos is not None:  # a fresh zeroed copy per iteration of its loop
                self.private.append((arrays[name], pos, [None]))

    def enter(self, time: Sequence[int]) -> None:
        for alloc in self.allocations:
            alloc.enter(time)
        for array, pos, seen in self.private:
            key = tuple(time[: pos + 1])
            if key != seen[0]:
                seen[0] = key
                array[...] = 0


def _signature(ir: ComputationIR, args: Mapping[str, Any]) -> Signature:
    """The kernel's signature, each UF taking the index dtype (int32 or int64) passed."""
    from spf.codegen.program import signature

    sig = signature(ir, ir.name)
    out = []
    for a in sig.args:
        value = args.get(a.name)
        uf = a.uf
        if uf is not None and isinstance(value, np.ndarray) and value.dtype.name != uf.dtype:
            dtype = value.dtype.name
            if dtype in _INDEX_DTYPES:
                uf = dataclasses.replace(uf, dtype=dtype)
                a = dataclasses.replace(a, ctype=f"{dtype}_t", uf=uf)
        out.append(a)
    return dataclasses.replace(sig, args=tuple(out))


def _locals(ir: ComputationIR, params: Mapping[str, int]) -> dict[str, Any]:
    """Zeroed arrays for the computation's own data spaces (as generated code allocates)."""
    from spf.sets.expr import compile_expr

    out: dict[str, Any] = {}
    for ds in ir.data_spaces:
        name = ds.name
        if ds.role != "local" or storage_of(ir, name) is not None:
            continue
        shape = tuple(
            d if isinstance(d, int) else compile_expr(d)[0](params) for d in ds.shape or ()
        )
        out[name] = np.zeros(shape, dtype=ds.dtype)
    return out
