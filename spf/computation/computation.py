"""``Computation``: data spaces, UFs and statements (IEGenLib's ``Computation`` in Python)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from spf._gc import with_fewer_collections
from spf.clang import check_reserved
from spf.computation.access import access_relation, iterator_names
from spf.computation.checkpoints import keep
from spf.computation.data_space import DataSpace, make_data_space
from spf.computation.distribution import Distribution, check_request
from spf.computation.fingerprint import Memo
from spf.computation.layout import Buffer, Layout, extent_names, make_buffer
from spf.computation.operations import OperationStmt, make_barrier, make_copy, make_transfer
from spf.computation.statement import AccessList, Stmt
from spf.errors import (
    ArgumentError,
    ArityError,
    CodegenError,
    IllegalScheduleError,
    ScheduleError,
    SpfError,
    UndeclaredError,
    VerifyError,
)
from spf.sets import UF, Relation, Set
from spf.sets.expr import compile_expr
from spf.sets.set_like import expression_params

if TYPE_CHECKING:
    from pathlib import Path

    from spf.computation.dependence import Dependence
    from spf.computation.inline import AppendResult
    from spf.computation.layers import Layers
    from spf.computation.products import CompiledKernel, DataflowGraph, DataflowHistory
    from spf.dtypes import TypeLike
    from spf.ir import ComputationIR
    from spf.ir.source import ParsedSource
    from spf.schedule.trace import Trace
    from spf.sets.facts import Fact

_R = TypeVar("_R")


class Computation:
    """A named collection of data spaces, UF declarations and statements (docs/getting_started.md).

    >>> comp = Computation("scale")
    >>> comp.add_data_space("x", "double", shape=("N",))
    >>> s = comp.add_stmt(Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
    >>> s.name, str(s.schedule)
    ('s0', '{[i] -> [0, i, 0]}')
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise VerifyError(f"computation name {name!r} is not a valid C identifier")
        self._name = name
        self._data: dict[str, DataSpace] = {}
        self._ufs: dict[str, UF] = {}
        self._stmts: list[Stmt] = []
        self._returns: list[str] = []
        self._layout = Layout()
        self._constants: dict[str, str] = {}
        self._assumptions: list[Fact] = []
        self._memo = Memo()
        self._distribution: Distribution | None = None

    # --- copies (``clone`` is the documented way; these keep ``copy``/``pickle`` honest)
    _TRACE_STATE = "__spf_trace__"
    _LOG_STATE = "__spf_checkpoints__"

    def __copy__(self) -> Computation:
        """An independent copy (``copy.copy``): a shallow copy would share the statements,
        data spaces and layout with this computation, so that changing one changed both."""
        if type(self) is Computation:
            return self.clone()
        import copy

        return copy.deepcopy(self)

    def __getstate__(self) -> dict[str, Any]:
        """The attributes, and the trace of scheduling commands and the history's snapshots,
        which spf keeps beside the object (``pickle``, ``copy.deepcopy``); remembered results
        stay behind."""
        from spf.computation.checkpoints import saved_log
        from spf.schedule.trace import trace_of

        state = dict(self.__dict__)
        if "_memo" in state:
            state["_memo"] = Memo()
        state[self._TRACE_STATE] = trace_of(self).entries
        state[self._LOG_STATE] = saved_log(self)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        from spf.computation.checkpoints import restore_log
        from spf.schedule.trace import Trace, set_trace

        state = dict(state)
        entries = state.pop(self._TRACE_STATE, ())
        log = state.pop(self._LOG_STATE, {})
        self.__dict__.update(state)
        set_trace(self, Trace(entries))
        restore_log(self, log)

    @property
    def version(self) -> int:
        """A number that grows with every change to the computation (a declaration, a
        statement, an assumption, a scheduling command or effect, a tag, a buffer, an
        operation): results of the analysis are remembered per version.

        >>> comp = Computation("v")
        >>> v = comp.version
        >>> comp.add_data_space("x", "double", shape=("N",))
        >>> comp.version > v, comp.version == comp.version
        (True, True)
        """
        return self._memo.refresh(self)

    def _remembered(self, key: object, compute: Callable[[], _R]) -> _R:
        """``compute()``, remembered for the current version under ``key``.

        One fingerprint a call, taken before computing: a ``compute`` that changed the
        computation leaves its value under the fingerprint it started from, which the next
        call's fingerprint tells apart (a change bumps the version and forgets every value);
        a value is kept only if no fingerprint taken while computing (a nested call) bumped
        the version. A second fingerprint after computing cost a warm ``compile()`` of a
        scheduled einsum one of its two ~1 ms walks (of ~5 ms)."""
        memo = self._memo
        version = memo.refresh(self)
        if key in memo.results:
            found: _R = memo.results[key]
            return found
        value = compute()
        if memo.version == version:  # no change seen while computing: remember it
            memo.results[key] = value
        return value

    # --- declarations
    @property
    def name(self) -> str:
        return self._name

    def add_data_space(
        self,
        name: str,
        type: TypeLike,
        shape: object = None,
        *,
        index: bool = False,
        range: str | Set | None = None,
        monotonic: str | None = None,
    ) -> None:
        """Declare an array or scalar; re-adding the same name with another type raises.

        ``type`` is a C name (``"double"``, ``"int32_t"``, pointer form ``"double*"``), a numpy
        name (``"float64"``) or a numpy dtype (``np.float64``): see :mod:`spf.dtypes`.
        ``index=True`` declares a run-time index array: an integer array statements may
        write and later statements read as the UF ``name(...)`` (domain: the shape).
        ``range`` and ``monotonic`` are its UF's properties (as for :class:`spf.UF`; also
        :meth:`declare_uf`): the analysis uses them like a declared UF's, every read checks
        the range and the kernel checks the order when it returns (docs/formats.md)."""
        self._add_index_or_space(name, type, shape, "data", index, None, range, monotonic)

    def _add_index_or_space(
        self,
        name: str,
        type: TypeLike,
        shape: object,
        role: str,
        index: object,
        private: object = None,
        range: object = None,
        monotonic: object = None,
        trusted: object = False,
    ) -> None:
        if not isinstance(index, bool):
            raise ArgumentError(f"data space {name!r}: index= must be True or False, got {index!r}")
        fields = {k: v for k, v in (("range", range), ("monotonic", monotonic)) if v is not None}
        if fields and not index:
            raise VerifyError(
                f"data space {name!r}: {' and '.join(f'{k}=' for k in fields)} are properties "
                "of a run-time index array's values; pass index=True too (an index array "
                "given as an argument is declared with declare_uf)"
            )
        if trusted is not False and (trusted is not True or index is not True):
            raise VerifyError(
                f"local {name!r}: trusted=True says the statements keep a run-time index "
                "array's values within its range; pass it with index=True (and range=...), "
                f"got trusted={trusted!r}, index={index!r}"
            )
        ds = make_data_space(
            name, type, shape, role=role, index=index, private=private, trusted=trusted is True
        )
        if index and name in self._ufs and not self._is_index(name):
            raise VerifyError(
                f"{name!r} is already declared as a UF (an input index array); an index array "
                "computed by statements is declared only with add_data_space(..., index=True)"
            )
        if fields:
            from spf.computation.index_arrays import index_uf

            index_uf(ds, fields)  # the fields are valid before anything is declared
        self._add_space(ds)
        if index and name not in self._ufs:
            from spf.computation.index_arrays import index_uf

            self._ufs[name] = index_uf(ds, {})
        if fields:
            self.declare_uf(name, **fields)

    def _is_index(self, name: str) -> bool:
        ds = self._data.get(name)
        return ds is not None and ds.index

    def add_parameter(self, name: str, type: TypeLike) -> None:
        """A parameter of a function Computation (``double*``: by reference, else by value)."""
        self._add_space(make_data_space(name, type, None, role="parameter"))

    def add_return_value(self, name: str) -> None:
        """Mark a data space (declared before or after) as a return value."""
        if not isinstance(name, str) or not name.isidentifier():
            raise VerifyError(f"return value name {name!r} is not a valid identifier")
        if name in self._returns:
            raise VerifyError(f"{name!r} is already a return value of {self._name}")
        self._returns.append(name)

    def _add_space(self, ds: DataSpace) -> None:
        check_reserved("data space" if ds.role == "data" else ds.role, ds.name, in_macros=True)
        for p in sorted(_shape_params(ds)):
            check_reserved(f"data space {ds.name!r}: symbolic constant", p, in_macros=True)
        old = self._data.get(ds.name)
        if old is not None:
            if (old.ctype, old.pointer, old.shape, old.role, old.private) == (
                ds.ctype,
                ds.pointer,
                ds.shape,
                ds.role,
                ds.private,
            ):
                return
            raise VerifyError(
                f"data space {ds.name!r} is already declared as {old.type_text}"
                f"{old.shape_text()} ({_role_text(old)}); cannot redeclare it as "
                f"{ds.type_text}{ds.shape_text()} ({_role_text(ds)})"
            )
        if ds.name in self._ufs and not ds.index:
            raise VerifyError(
                f"{ds.name!r} is already declared as a UF; to compute an index array in the "
                f"computation, declare it add_data_space({ds.name!r}, ..., index=True) "
                "instead of declare_uf"
            )
        if ds.name in self._constants:
            raise VerifyError(f"{ds.name!r} is already declared as a symbolic constant")
        if ds.name in self._layout.buffers:
            raise VerifyError(f"{ds.name!r} is already declared as a buffer")
        if ds.role == "data" and ds.name in self.params:
            raise VerifyError(
                f"{ds.name!r} is already a symbolic constant of {self._name}; name the data "
                "space otherwise"
            )
        self._data[ds.name] = ds

    def add_constant(self, name: str, type: TypeLike = "int64_t") -> None:
        """Declare a symbolic constant (a kernel argument of C type ``type``) before any
        statement uses it, e.g. one used only in a statement source.

        >>> comp = Computation("c")
        >>> comp.add_constant("TSTEPS")
        >>> comp.add_data_space("DT", "double")
        >>> s = comp.add_stmt(Stmt("$DT$ = 1.0/(double)TSTEPS;", "{[]}"))
        >>> sorted(comp.params), comp.constants
        (['TSTEPS'], {'TSTEPS': 'int64_t'})
        """
        from spf.computation.facts import check_constant

        self._constants[name] = check_constant(self, name, type)

    @property
    def constants(self) -> dict[str, str]:
        """The constants declared with :meth:`add_constant` and their C types."""
        return dict(self._constants)

    def constant_type(self, name: str) -> str:
        """The C type of symbolic constant ``name`` (``int64_t`` unless declared)."""
        return self._constants.get(name, "int64_t")

    def add_local(
        self,
        name: str,
        type: TypeLike,
        shape: object = (),
        *,
        index: bool = False,
        private: str | None = None,
        range: str | Set | None = None,
        monotonic: str | None = None,
        trusted: bool = False,
    ) -> None:
        """A temporary of the generated function (never a kernel argument), e.g. a scalar
        ``temp2`` or an array ``w[N]``: a data space the function allocates itself.
        ``index=True``: a run-time index array (as for :meth:`add_data_space`, ``range`` and
        ``monotonic`` included) the function keeps to itself, e.g. a workspace listing the
        columns of a row.

        ``private="i"``: each iteration of loop ``i`` (and of the loops around it) has its
        own zeroed copy, as a C scalar declared inside the loop body: the local carries no
        dependence across those iterations, and generated code declares it inside the loop
        (docs/assumptions.md).

        >>> comp = Computation("rowsum")
        >>> comp.add_data_space("y", "double", shape=("N",))
        >>> comp.add_data_space("A", "double", shape=("N", "M"))
        >>> comp.add_local("t", "double", private="i")
        >>> _ = comp.add_stmt(Stmt("$t$ += $A$(i, j);", "{[i,j]: 0 <= i < N && 0 <= j < M}",
        ...                        "{[i,j] -> [0,i,0,j,0]}"))
        >>> _ = comp.add_stmt(Stmt("$y$(i) = $t$;", "{[i]: 0 <= i < N}", "{[i] -> [0,i,1]}"))
        >>> comp.is_parallel_legal("s1", "i")
        True
        """
        self._add_index_or_space(
            name, type, shape, "local", index, private, range, monotonic, trusted
        )

    def assume(self, text: str) -> Fact:
        """Add a fact the analysis may use and a kernel checks with ``check=True``:
        ``"N >= 1"`` or ``"forall i, k: rowptr(i) <= k < rowptr(i+1) => col(k) <= i"``
        (see ``docs/assumptions.md``). Returns the parsed :class:`~spf.sets.facts.Fact`."""
        from spf.computation.facts import parse_assumption

        fact, ufs = parse_assumption(self, text)
        if fact.is_parameter_fact:
            _check_consistent(self._name, self.assumptions, fact)
        self._ufs = ufs
        if all(f.text != fact.text for f in self._assumptions):
            self._assumptions.append(fact)
        return fact

    @property
    def assumptions(self) -> tuple[Fact, ...]:
        """The facts added with :meth:`assume`, in order, read with the symbolic constants
        the computation has now: a name a fact quantified because it was no constant yet
        when it was added (used in a UF argument) and that is one now is read as the
        constant, as the text reads when added last. So the facts follow from the
        computation's content (its IR holds the texts), whatever the order of the calls
        that built it (before, ``assume`` ahead of the statement that made ``M`` a constant
        quantified ``M`` in ``forall i: rowptr(i) <= rowptr(M)``, and a JSON round trip
        changed the fact)."""
        if not self._assumptions:
            return ()
        from spf.sets.facts import Fact as Parsed

        params = self.params
        return tuple(
            f if not set(f.vars) & params else Parsed.parse(f.text, self.ufs, params)
            for f in self._assumptions
        )

    def facts(self) -> tuple[Fact, ...]:
        """Every trusted fact: the assumptions, then the declared UF domains, ranges and
        monotonicity written as facts (what a proof may use and a kernel checks)."""
        from spf.computation.facts import declared_facts

        return (*self.assumptions, *declared_facts(self))

    def declare_uf(self, name: str, **fields: Any) -> UF:
        """Declare an index array (the fields of :class:`spf.UF`). For a run-time index
        array (``add_data_space(..., index=True)``) it adds facts about the values the
        statements compute (``range``, ``monotonic``); its domain defaults to the shape."""
        if isinstance(name, str) and self._is_index(name):
            from spf.computation.index_arrays import check_redeclared, index_uf

            uf = index_uf(self._data[name], fields)
            check_redeclared(self, uf)
            self._ufs[name] = uf
            return uf
        if name in self._data:
            raise VerifyError(
                f"{name!r} is already declared as a data space; to read an array the "
                f"computation writes as a UF, declare it add_data_space({name!r}, ..., "
                "index=True)"
            )
        if name in self._constants:
            raise VerifyError(f"{name!r} is already declared as a symbolic constant")
        if isinstance(name, str):
            check_reserved("UF", name, in_macros=True, in_sets=True)
        try:
            uf = UF(name, **fields)
        except SpfError:  # the UF's own checks (ArgumentError is a TypeError) name the field
            raise
        except TypeError as err:
            raise VerifyError(f"declare_uf({name!r}): {err}") from err
        for p in sorted(_uf_params(uf)):
            check_reserved(f"UF {name!r}: symbolic constant", p, in_macros=True)
        _interval_range(uf)
        old = self._ufs.get(name)
        if old is not None and old.arity != uf.arity:
            raise ArityError(f"UF {name!r} is already declared with arity {old.arity}: {old}")
        if old is not None and old != uf:
            raise VerifyError(f"UF {name!r} is already declared as {old}")
        self._ufs[name] = uf
        if uf.inverse is not None and uf.inverse not in self._ufs:
            self.declare_uf(uf.inverse, **_fields(uf.inverse_uf()))
        return uf

    @property
    def ufs(self) -> dict[str, UF]:
        return dict(self._ufs)

    @property
    def data_spaces(self) -> dict[str, DataSpace]:
        return dict(self._data)

    @property
    def return_values(self) -> tuple[str, ...]:
        return tuple(self._returns)

    @property
    def stmts(self) -> tuple[Stmt, ...]:
        return tuple(self._stmts)

    def stmt(self, key: str | int | Stmt) -> Stmt:
        """A statement by name, index or itself."""
        if isinstance(key, Stmt):
            if key._comp is not self:
                raise UndeclaredError("statement", key.name, [s.name for s in self._stmts])
            return key
        if isinstance(key, int) and not isinstance(key, bool):
            if -len(self._stmts) <= key < len(self._stmts):
                return self._stmts[key]
            raise UndeclaredError(
                "statement",
                str(key),
                [s.name for s in self._stmts],
                hint=f"{self._name} has {len(self._stmts)} statement(s)",
            )
        for s in self._stmts:
            if s.name == key:
                return s
        raise UndeclaredError("statement", str(key), [s.name for s in self._stmts])

    @property
    def params(self) -> frozenset[str]:
        """Symbolic constants: free names of domains, schedules and data-space shapes."""
        out: set[str] = set()
        for s in self._stmts:
            out |= s.domain.params | s.schedule.params
        for ds in self._data.values():
            out |= _shape_params(ds)
        for uf in self._ufs.values():  # a constant bounding only a UF's domain is an argument
            out |= _uf_params(uf)
        loop_names: set[str] = set()
        for s in self._stmts:
            loop_names |= set(s.loops) | set(iterator_names(s.domain))
            if isinstance(s, OperationStmt):
                out |= _operation_params(s)
        for b in self._layout.buffers.values():
            out |= extent_names(b.shape) - loop_names
        for f in self._assumptions:
            out |= f.params
        return frozenset(out | set(self._constants))

    # --- Layer III: buffers (spf.computation.layout)
    def add_buffer(
        self, name: str, shape: object, dtype: TypeLike, scope: str = "global"
    ) -> Buffer:
        """Declare a buffer (Tiramisu Layer III); ``scope`` is ``global``/``constant`` (a
        kernel argument), ``stack``, ``local`` or ``shared`` (owned by the function).

        >>> comp = Computation("c")
        >>> comp.add_buffer("b", ("N",), "double", scope="stack")
        Buffer(name='b', shape=('N',), dtype='double', scope='stack')
        """
        if isinstance(name, str):
            check_reserved("buffer", name, in_macros=True)
        buffer = make_buffer(self, name, shape, dtype, scope)
        self._layout.buffers[name] = buffer
        return buffer

    def buffer(self, name: str | Buffer) -> Buffer:
        """A buffer by name (``UndeclaredError`` lists the buffers)."""
        if isinstance(name, Buffer):
            return self._layout.buffer(name.name)
        if not isinstance(name, str):
            raise ArgumentError(f"buffer: expected a buffer name, got {name!r}")
        return self._layout.buffer(name)

    @property
    def buffers(self) -> dict[str, Buffer]:
        """The buffers, in declaration order (``storage_fold`` adds its own)."""
        return dict(self._layout.buffers)

    def storage_of(self, data_space: str) -> tuple[str, tuple[str, ...]] | None:
        """``(buffer, index)`` where ``data_space`` lives (index: expressions of ``t0, t1,
        ...``, the data space's coordinates), or None when it is not stored in a buffer."""
        placement = self._layout.placements.get(data_space)
        if placement is None:
            return None
        return placement.buffer, placement.exprs

    # --- Layer IV: communication operations (spf.computation.operations)
    def cache_read(
        self,
        data_space: str,
        at: tuple[str | int | Stmt, str | int],
        layout: Sequence[str] | None = None,
        scope: str = "local",
        name: str | None = None,
    ) -> Stmt:
        """``at=(stmt, loop)``: ``stmt.cache_read(data_space, loop, layout, scope, name)``
        (pack what ``stmt`` reads of ``data_space`` in each iteration of ``loop``); returns
        the copy statement (docs/scheduling.md, "Packing")."""
        if not isinstance(at, (tuple, list)) or len(at) != 2:
            raise ArgumentError(
                f"cache_read({data_space!r}): at must be (statement, loop), got {at!r}"
            )
        return self.stmt(at[0]).cache_read(data_space, at[1], layout, scope, name)

    def send(
        self,
        domain: str | Set,
        buffer: object,
        index: Sequence[object],
        count: object,
        dest: object,
    ) -> OperationStmt:
        """Each point of ``domain`` (its first variable is the executing rank, distributed)
        sends ``count`` elements of ``buffer`` from ``index`` on to rank ``dest``."""
        return self._add_operation(make_transfer(self, "send", domain, buffer, index, count, dest))

    def receive(
        self,
        domain: str | Set,
        buffer: object,
        index: Sequence[object],
        count: object,
        src: object,
    ) -> OperationStmt:
        """Each point of ``domain`` receives ``count`` elements into ``buffer`` at ``index``
        from rank ``src``."""
        return self._add_operation(
            make_transfer(self, "receive", domain, buffer, index, count, src)
        )

    def barrier_at(self, stmt: str | int | Stmt, level: Any) -> OperationStmt:
        """A barrier inside loop ``level`` of ``stmt``, right after ``stmt``."""
        target = self.stmt(stmt)
        op, schedule = make_barrier(self, target, level)
        self._add_operation(op, schedule)
        return op.after(target, level)  # type: ignore[return-value]

    def host_to_device(self, buffer: object) -> OperationStmt:
        """Copy ``buffer`` (a Buffer or data-space name) to the device."""
        return self._add_operation(make_copy(self, "host_to_device", buffer))

    def device_to_host(self, buffer: object) -> OperationStmt:
        """Copy ``buffer`` (a Buffer or data-space name) back to the host."""
        return self._add_operation(make_copy(self, "device_to_host", buffer))

    def _add_operation(
        self, op: OperationStmt, schedule: str | None = None, *, position: int | None = None
    ) -> OperationStmt:
        """Add a Layer IV operation (no C source; accesses given by the operation)."""
        name = op._name or self._fresh_stmt_name()
        if any(s.name == name for s in self._stmts):
            raise VerifyError(f"{self._name} already has a statement named {name!r}")
        where = f"{op.kind} operation {name}"
        ufs = self._ufs_with(op.domain, where)
        domain = Set(str(op.domain), ufs=ufs)
        if schedule is not None:
            op._given_schedule = Relation(schedule, ufs=ufs)
        sched = self._schedule_for(op, domain, ufs, where)
        from spf.ir.source import parse_source

        parsed = parse_source("", data_spaces={}, ufs={}, stmt=name)
        reads = tuple((d, Relation(str(r), ufs=ufs)) for d, r in op._given_reads or ())
        writes = tuple((d, Relation(str(r), ufs=ufs)) for d, r in op._given_writes or ())
        op._name = name
        op._domain = domain
        op._schedule = sched
        op._original = sched
        op._parsed = parsed
        op._reads, op._writes = reads, writes
        op._comp = self
        if op.kind in ("send", "receive") and op.loops:
            op._tags = {op.loops[0]: ("distribute",)}
        if position is None:
            self._stmts.append(op)
        else:
            self._stmts.insert(position, op)
        return op

    def layers(self) -> Layers:
        """Tiramisu Layers I-IV as isl-style text (``str(layers)`` prints all four)."""
        from spf.computation.layers import layers

        found = layers(self)
        if not any(
            t.startswith("wavefront(") for s in self.stmts for ts in s.tags.values() for t in ts
        ):
            return found
        from dataclasses import replace

        from spf.analysis.executor import inspection_text, inspectors
        from spf.computation.layers import layers

        shown = [
            (names, insp.name, layers(Computation.from_ir(insp)).algorithm)
            for names, insp in inspectors(self.ir)
        ]
        return replace(found, inspection=inspection_text(shown))

    # --- statements
    def add_stmt(self, stmt: Stmt) -> Stmt:
        """Add ``stmt`` (named ``s<k>`` unless named); on error nothing changes."""
        if not isinstance(stmt, Stmt):
            raise ArgumentError(f"add_stmt expects an spf.Stmt, got {type(stmt).__name__}")
        if stmt._comp is not None:
            raise VerifyError(f"statement {stmt.name} is already part of a computation")
        name = stmt._name or self._fresh_stmt_name()
        if any(s.name == name for s in self._stmts):
            raise VerifyError(f"{self._name} already has a statement named {name!r}")
        where = f"statement {name} ({stmt.source.strip()!r})"
        self._check_stmt_names(name, stmt, where)
        ufs = self._ufs_with(stmt.domain, where)
        domain = Set(str(stmt.domain), ufs=ufs)
        schedule = self._schedule_for(stmt, domain, ufs, where)
        parsed = self._parse_source(stmt, name)
        data = self._data_with_ranks(parsed, where)
        ufs = self._ufs_with_source(parsed, ufs, where)
        reads, writes = self._accesses(stmt, parsed, domain, ufs, where)
        self._check_names(parsed, domain, where)
        # commit
        self._ufs = ufs
        self._data = data
        stmt._name = name
        stmt._domain = domain
        stmt._schedule = schedule
        stmt._original = schedule
        stmt._parsed = parsed
        stmt._reads, stmt._writes = reads, writes
        stmt._comp = self
        self._stmts.append(stmt)
        return stmt

    def _check_stmt_names(self, name: str, stmt: Stmt, where: str) -> None:
        """The statement's name, iterators and constants are usable in generated code."""
        check_reserved("statement", name)
        for v in iterator_names(stmt.domain):
            check_reserved(f"{where}: iterator", v)
            kind = "data space" if v in self._data else "UF" if v in self._ufs else None
            if kind is not None:
                raise VerifyError(
                    f"{where}: iterator {v!r} is also the name of a {kind}; the loop variable "
                    f"would hide it in the generated code: rename the iterator"
                )
        for p in sorted(stmt.domain.params):
            check_reserved(f"{where}: symbolic constant", p, in_macros=True)
            if p in self._data and self._data[p].role == "data":
                raise VerifyError(
                    f"{where}: {p!r} is a data space, not a symbolic constant; write "
                    f"${p}$ in the source, or name the constant otherwise"
                )

    def _fresh_stmt_name(self) -> str:
        taken = {s.name for s in self._stmts} | set(self._data) | set(self._ufs) | self.params
        k = len(self._stmts)
        while f"s{k}" in taken:
            k += 1
        return f"s{k}"

    def _ufs_with(self, s: Set | Relation, where: str) -> dict[str, UF]:
        """Declared UFs plus those ``s`` calls (arity inferred); arity mismatches raise."""
        ufs = dict(self._ufs)
        for call in s.uf_calls:
            uf_name = call.split("(", 1)[0]
            arity = _call_arity(call)
            decl = ufs.get(uf_name)
            if decl is None:
                if uf_name in self._data:
                    raise VerifyError(f"{where}: {uf_name!r} is a data space, not a UF: {s}")
                ufs[uf_name] = s.inferred_ufs[uf_name]  # a component f(k)[c]: tuple-valued
            elif decl.arity != arity:
                raise ArityError(
                    f"{where}: UF {uf_name!r} takes {decl.arity} argument(s), called as {call}"
                )
        return ufs

    def _schedule_for(self, stmt: Stmt, domain: Set, ufs: dict[str, UF], where: str) -> Relation:
        given = stmt._given_schedule
        if given is None:
            from spf.ir.build import program_order

            return Relation(program_order(domain, self._next_root()), ufs=ufs)
        if given.in_arity != domain.arity:
            raise ArityError(
                f"{where}: the schedule {given} takes {given.in_arity}-tuples but the domain "
                f"{domain} has arity {domain.arity}"
            )
        return Relation(str(given), ufs=self._ufs_with(given, where) | ufs)

    def _next_root(self) -> int:
        """After every statement in the current and in the program order."""
        from spf.ir.build import next_root

        return next_root(x for s in self._stmts for x in (s.schedule, s.original_schedule))

    def _parse_source(self, stmt: Stmt, name: str) -> ParsedSource:
        from spf.ir.source import parse_source

        ranks = {n: ds.rank for n, ds in self._data.items()}
        return parse_source(
            stmt.source,
            data_spaces=ranks,
            ufs={n: u.arity for n, u in self._ufs.items()},
            stmt=name,
        )

    def _data_with_ranks(self, parsed: ParsedSource, where: str) -> dict[str, DataSpace]:
        data = dict(self._data)
        for acc in (*parsed.reads, *parsed.writes):
            ds = data[acc.data_space]
            if ds.rank is None:
                data[acc.data_space] = ds.with_rank(len(acc.indices))
            elif ds.rank != len(acc.indices):
                raise ArityError(
                    f"{where}: data space {ds.name!r} has rank {ds.rank}, accessed with "
                    f"{len(acc.indices)} index(es): {ds.name}({', '.join(acc.indices)})"
                )
        return data

    def _ufs_with_source(
        self, parsed: ParsedSource, ufs: dict[str, UF], where: str
    ) -> dict[str, UF]:
        out = dict(ufs)
        for uf_name, args in parsed.uf_calls:
            if uf_name in self._data and not self._data[uf_name].index:
                raise VerifyError(f"{where}: {uf_name!r} is a data space, not a UF")
            decl = out.get(uf_name)
            if decl is None:
                out[uf_name] = UF(uf_name, arity=len(args))
            elif decl.arity != len(args):
                raise ArityError(
                    f"{where}: UF {uf_name!r} takes {decl.arity} argument(s), "
                    f"called with {len(args)}"
                )
        return out

    def _accesses(
        self, stmt: Stmt, parsed: ParsedSource, domain: Set, ufs: dict[str, UF], where: str
    ) -> tuple[AccessList, AccessList]:
        from spf.computation.index_arrays import index_reads

        implicit = index_reads(self._data, domain, parsed.uf_calls, ufs, where)
        shown = [(ds, str(r)) for ds, r in implicit]
        found = []
        for kind, accs, given in (
            ("reads", parsed.reads, stmt._given_reads),
            ("writes", parsed.writes, stmt._given_writes),
        ):
            inferred = tuple(
                (a.data_space, access_relation(domain, a.indices, ufs, where)) for a in accs
            )
            if given is not None:
                n = len(implicit)
                if kind == "reads" and n and [(d, str(r)) for d, r in given[-n:]] == shown:
                    given = given[:-n]  # a saved statement lists its implicit reads last
                _check_given(kind, given, inferred, domain, self._data, where)
                found.append(tuple((ds, Relation(str(r), ufs=ufs)) for ds, r in given))
            else:
                found.append(inferred)
        return found[0] + implicit, found[1]

    def _check_names(self, parsed: ParsedSource, domain: Set, where: str) -> None:
        floating = sorted(
            n for n in domain.params if self._constants.get(n, "int64_t") in ("double", "float")
        )
        if floating:
            raise VerifyError(
                f"{where}: the domain uses {floating[0]!r}, a constant of type "
                f"{self._constants[floating[0]]}; domains take integer constants only"
            )
        iterators = set(iterator_names(domain))
        known = iterators | set(self.params) | domain.params
        unknown = sorted(parsed.names - known)
        if unknown:
            raise UndeclaredError(
                "iterator or parameter",
                unknown[0],
                sorted(known),
                hint=f"in {where}: a name in a statement must be an iterator of its domain, "
                "a symbolic constant of the computation, a data space or a UF; declare a "
                f"constant used only in statement sources first: "
                f"comp.add_constant({unknown[0]!r})",
            )

    # --- analysis (delegates)
    def schedule_width(self) -> int:
        """The common schedule arity after padding (the longest schedule)."""
        return max((s.schedule.out_arity for s in self._stmts), default=0)

    def dependences(self) -> list[Dependence]:
        """Flow, anti and output dependences between statement instances
        (docs/getting_started.md)."""
        from spf.analysis.dependences import compute_dependences

        return list(compute_dependences(self.ir))

    def check_legality(self) -> None:
        """Raise ``IllegalScheduleError`` for the first dependence the schedule violates
        (the verdict is remembered by the value of :attr:`ir`, :mod:`spf.analysis.memo`).
        Distributed loops are judged as ``target="mpi"`` runs them (each rank its own
        arrays); ``codegen``/``compile`` for other targets judge them as ordinary loops."""
        from spf.analysis.legality import check

        check(self.ir)

    # The model's own modules reach the analysis through these (spf.computation does not
    # import spf.analysis; docs/design.md, "Architecture").
    def _loop_position(self, stmt: Stmt, loop: str | int) -> int:
        """Position of ``loop`` (a name or a depth) of ``stmt`` in the padded schedule;
        ``UndeclaredError`` for a loop it does not have."""
        from spf.analysis.dependences import position_in

        return position_in(stmt, loop, self.schedule_width())

    def _compute_at_footprint(
        self, producer: Stmt, write: Relation, consumer: Stmt, reads: Sequence[Relation]
    ) -> Relation:
        """``compute_at``: the producer instances each consumer instance needs."""
        from spf.analysis.recompute import flow_footprint

        return flow_footprint(producer, write, consumer, reads, self.schedule_width())

    def _check_compute_at(
        self,
        producer: Stmt,
        consumer: Stmt,
        level: object,
        ds: str,
        copy: tuple[list[str], Set, Relation, AccessList, AccessList],
        shifted: dict[Stmt, Relation],
    ) -> None:
        """``compute_at``: raise unless every copy of the producer keeps its place."""
        from spf.analysis.recompute import check_copies

        by_name = {s.name: sched for s, sched in shifted.items()}
        check_copies(self.ir, producer, consumer, level, ds, copy, by_name)

    def _compute_at_leftover(
        self,
        producer: Stmt,
        consumer: Stmt,
        write: Relation,
        ds: str,
        needed: Relation,
        outer: Relation,
    ) -> Set | None:
        """``compute_at``: the producer instances no consumer reads whose values are results,
        as points of the shared loops after the consumer's last (None: there are none)."""
        from spf.analysis.leftover import rest_after_last

        return rest_after_last(self.ir, producer, consumer, (write, ds), needed, outer)

    def is_parallel_legal(
        self, stmt: str | int | Stmt, loop: str | int, reduction: str | None = None
    ) -> bool:
        """Whether ``loop`` of ``stmt`` carries no dependence (Tiramisu's semantics); with
        ``reduction="atomic"``/``"privatize"`` (or a loop tagged so by ``parallelize(loop,
        reduction=...)``), whether every dependence it carries is a reduction."""
        from spf.analysis.dependences import is_parallel_legal
        from spf.analysis.reductions import is_reduction_legal

        name, ir = self.stmt(stmt).name, self.ir
        if reduction is not None:
            return is_reduction_legal(ir, name, loop, reduction)
        return is_parallel_legal(ir, name, loop) or is_reduction_legal(ir, name, loop)

    @with_fewer_collections
    def wavefront(self, loop: str, method: str = "auto") -> None:
        """Run ``loop`` of every statement that has it by dependence levels computed at run
        time (``method``: ``"auto"``, ``"levels"``, ``"p2p"`` or ``"coarse"``); refused with
        ``IllegalScheduleError`` when the loop carries no dependence (parallelize it) or one
        the inspector cannot order (docs/inspection.md). Statements of kernels fused into the
        loop (``append_computation`` and ``fuse``) are part of it: one inspector orders the
        dependences within each kernel and between them."""
        from spf.analysis.inspector import wavefront_members

        stmts = [self.stmt(s.name) for s in wavefront_members(self.ir, loop)]
        if not stmts:
            loops = sorted({name for s in self.stmts for name in s.loops})
            raise UndeclaredError(
                "loop", str(loop), loops, hint=f"wavefront: no statement of {self.name} has it"
            )
        self._wavefront(stmts, loop, method)

    def _wavefront(self, stmts: Sequence[Stmt], loop: str, method: str) -> None:
        """Check the dependences ``loop`` carries over ``stmts``, then tag it in each."""
        from spf.analysis.inspector import analyze_wavefront
        from spf.schedule.commands import Wavefront

        Wavefront(loop=loop, how=method)  # checks the method first
        analysis = analyze_wavefront(self.ir, [s.name for s in stmts], loop)
        if analysis.groups > 1 and method == "p2p":
            raise CodegenError(
                f"wavefront({loop!r}, method={method!r}): {analysis.groups} kernels are fused "
                f"into loop {loop!r}; spf runs fused kernels by levels or coarse levels (the "
                "waits of method='p2p' are not generated between their nodes): use "
                "method='auto', 'coarse' or 'levels'"
            )
        start = len(self.trace)
        whole = loop if len(stmts) > 1 else None  # the trace prints them as one call
        for s in stmts:  # a fused kernel's statement names the loop its own way
            own = loop if loop in s.loops else s.loops[0]
            s._run(Wavefront(loop=own, how=method, whole=whole))
        keep(self, start)  # one step: the statements are tagged together (pdfg_history)

    def distribute_rows(self, loop: str, data: Mapping[str, int], owner: str = "block") -> None:
        """Split the iterations of ``loop`` and dimension ``data[name]`` of each named data
        space over the ranks of an MPI job (API.md §19, docs/backends/mpi.md): contiguous
        blocks (``owner="block"``; an ``owner`` array given at call time overrides them) or
        only by that array (``owner="array"``). Reads through index arrays of entries
        another rank owns become a generated ghost exchange, accumulations through them are
        summed at the owner, and accumulations into scalars are summed over the ranks;
        ``compile(target="mpi")`` then builds the inspector and executor."""
        self._distribute_rows(loop, data, owner, ())

    def _distribute_rows(
        self, loop: str, data: Mapping[str, int], owner: str, local: tuple[str, ...]
    ) -> None:
        """:meth:`distribute_rows` with ``local`` index arrays giving the loop's variable
        in rank-local rows (``spf.mpi.spmv(SELL)``; see ``Distribution.local``)."""
        import dataclasses

        from spf.distributed.analysis import analyse

        request = dataclasses.replace(check_request(self, loop, data, owner), local=local)
        analyse(self.ir, request)  # what cannot be distributed is refused here
        self._distribution = request

    @property
    def distribution(self) -> Distribution | None:
        """What :meth:`distribute_rows` recorded (None before)."""
        return self._distribution

    def inspector(self, loop: str) -> Computation:
        """The generated inspector of the wavefront loop ``loop``: a Computation that writes
        ``level[i]`` (the dependence level of each iteration) and ``nlevels``."""
        from spf.analysis.executor import wavefront_stmts
        from spf.analysis.inspector import analyze_wavefront, build_inspector

        stmts = wavefront_stmts(self.ir, loop)
        if not stmts:
            raise ScheduleError(
                f"inspector({loop!r}): no statement of {self.name} runs loop {loop!r} as a "
                f"wavefront; call comp.wavefront({loop!r}) first"
            )
        analysis = analyze_wavefront(self.ir, [s.name for s in stmts], loop)
        return Computation.from_ir(build_inspector(self.ir, analysis))

    def interpret(self, *positional: object, **arrays: Any) -> None:
        """Run every statement instance in schedule order on numpy arrays (slow, exact)."""
        if positional:
            names = [*sorted(self.params), *sorted(self._ufs), *self._data]
            raise ArgumentError.positional(
                f"interpret({self._name})", len(positional), "interpret", names
            )
        from spf.analysis.dependences import broken_until_run_time
        from spf.runtime.interpret import interpret

        dep = broken_until_run_time(self.ir)
        if dep is not None:
            raise IllegalScheduleError(
                f"interpret({self._name}): the schedule runs kernels fused into one loop in "
                f"an order that breaks the {dep.kind} dependence on {dep.data_space!r} from "
                f"{dep.source} to {dep.sink}, which a wavefront's inspector orders at run time "
                "and the interpreter (schedule order) does not: interpret the computation "
                "before the fusion, or run the compiled kernel"
            )
        interpret(self.ir, arrays)

    @property
    def trace(self) -> Trace:
        """The scheduling commands applied so far (printable as Python, replayable)."""
        from spf.schedule import trace_of

        return trace_of(self)

    # --- inlining function computations
    def append_computation(
        self,
        callee: Computation,
        domain: str | Set,
        schedule: str | Relation,
        args: Sequence[str] | Mapping[str, str] = (),
    ) -> AppendResult:
        """Inline ``callee`` under ``domain``/``schedule`` (IEGenLib ``appendComputation``):
        ``args`` lists the arguments of its parameters in order, or maps names of its data
        spaces (parameters or not: a ready-made kernel's arrays) to the caller's arguments."""
        from spf.computation.inline import append_computation

        if not isinstance(callee, Computation):
            raise ArgumentError(f"append_computation expects a Computation, got {callee!r}")
        if isinstance(args, str) or not isinstance(args, (Sequence, Mapping)):
            raise ArgumentError(
                "append_computation: args is a list of argument texts (or a mapping from the "
                f"callee's data spaces to them), got {type(args).__name__}"
            )
        return append_computation(self, callee, domain, schedule, args)

    def replace_data_space_name(self, old: str, new: str) -> None:
        """Rename data space ``old`` to ``new`` everywhere (IEGenLib's
        ``replaceDataSpaceName``): statement sources and accesses, the UF of a run-time
        index array, buffers' placements, operations, return values and the trace; the
        ``Stmt`` and ``Buffer`` objects stay valid. ``UndeclaredError`` for an unknown
        ``old``, ``SpfError`` for a ``new`` that names something else (docs/inlining.md).

        >>> comp = Computation("scale")
        >>> comp.add_data_space("x", "double", shape=("N",))
        >>> s = comp.add_stmt(Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
        >>> comp.replace_data_space_name("x", "v")
        >>> s.source, list(comp.data_spaces)
        ('$v$(i) = 2 * $v$(i);', ['v'])
        """
        from spf.computation.renaming import replace_data_space_name

        replace_data_space_name(self, old, new)

    def clone(self, prefix: str | None = None) -> Computation:
        """A copy of this computation (statements, schedules, buffers, operations, trace);
        with ``prefix``, every data space (locals, parameters and run-time index arrays
        included), statement and buffer is renamed ``prefix + name`` (UFs, symbolic
        constants and iterators keep theirs). The copy computes the same thing, on
        arguments renamed alike (docs/inlining.md)."""
        if prefix is None:  # a copy sharing the immutable parts (spf.computation.snapshot)
            from spf.computation.snapshot import copy_of

            return copy_of(self)
        from spf.computation.renaming import clone

        return clone(self, prefix)

    def uniquely_named_clone(self) -> Computation:
        """:meth:`clone` with a fresh prefix ``_c<n>_`` (IEGenLib's
        ``getUniquelyNamedClone``): its names clash with no name of this computation nor of
        an earlier clone, e.g. before ``append_computation`` of it twice into one caller."""
        from spf.computation.renaming import uniquely_named_clone

        return uniquely_named_clone(self)

    def _add_local(self, name: str, ds: DataSpace) -> None:
        """A data space of the generated function itself (not a kernel argument)."""
        rank = ds.rank if ds.rank is not None else 0
        local = DataSpace(
            name=name,
            ctype=ds.ctype,
            shape=ds.shape,
            rank=rank if ds.shape is None else None,
            pointer=False,
            role="local",
            private=ds.private,
        )
        if ds.shape is not None:
            local = local.with_rank(len(ds.shape))
        self._add_space(local)

    # --- code generation (facades over spf.codegen and spf.runtime)
    def loop_structure(self) -> str:
        """The loop skeleton: ``for <loop> [tags]:`` lines and statement names."""
        from spf.codegen import loop_structure

        return loop_structure(self.ir)

    @with_fewer_collections
    def codegen(
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> str:
        """A complete translation unit for ``target`` (legality checked unless ``check``);
        ``options`` are the target printer's (``hls_bounds``, ``hls_tripcounts`` for HLS)."""
        from spf.codegen import codegen

        if target == "mpi" and self._distribution is not None:
            from spf.distributed.kernel import DistributedKernel

            return DistributedKernel(self.ir, self._distribution, name, check, build=False).source
        executor = self._executor(target, check)
        if executor is not None:
            return codegen(executor.ir, target, name or self.name, check, **options)
        return codegen(self.ir, target, name, check, **options)

    @with_fewer_collections
    def compile(
        self, target: str = "c", name: str | None = None, check: bool = True, **options: Any
    ) -> CompiledKernel:
        """Generate, build (cached) and load a callable kernel (docs/backends/c.md): a
        :class:`spf.runtime.Kernel` (``CudaKernel``, ``HlsKernel``, ``MPIKernel`` for those
        targets)."""
        from spf.runtime.compile import compile_kernel

        if target == "mpi" and self._distribution is not None:
            from spf.distributed.kernel import compile_distributed

            return compile_distributed(self.ir, self._distribution, name, check, **options)
        executor = self._executor(target, check)
        if executor is not None:
            from spf.runtime.plan import compile_wavefront

            return compile_wavefront(self.ir, executor, name, check, **options)
        return compile_kernel(self.ir, target, name, check, **options)

    def _coiterate_tags(
        self, stmt: Stmt, i: str, j: str, left: str | None, right: str | None
    ) -> dict[str, tuple[str, ...]]:
        """``stmt``'s tags with ``coiterate(i, j, left, right)`` checked and recorded
        (``stmt.coiterate``; :func:`spf.analysis.coiteration.coiterate_tags`)."""
        from spf.analysis.coiteration import coiterate_tags

        return coiterate_tags(self.ir, stmt, i, j, left, right)

    def _executor(self, target: str, check: bool) -> Any:
        """The :class:`spf.analysis.executor.Executor` that runs this computation's wavefront
        loops (None without one); legality is checked here, on the computation the user
        scheduled."""
        tagged = (t for s in self.stmts for tags in s.tags.values() for t in tags)
        if not any(t.startswith("wavefront(") for t in tagged):
            return None  # no wavefront: the analysis layer need not even be imported
        from spf.analysis.executor import build_executor

        if check:
            from spf.analysis.legality import check as check_legality

            check_legality(self.ir, target)
        return build_executor(self.ir, target)

    # --- the polyhedral dataflow graph
    def pdfg(self, params: Mapping[str, int] | None = None) -> DataflowGraph:
        """The PDFG view, a :class:`spf.pdfg.PDFG` (docs/pdfg.md); with ``params``
        (``{"N": 1000}``) its nodes and edges carry sizes for those parameter values."""
        from spf.pdfg import PDFG

        if params is not None:
            return PDFG(self, params)
        return PDFG(self)

    def pdfg_history(self, params: Mapping[str, int] | None = None) -> DataflowHistory:
        """The PDFG at every step: ``[(command_text, PDFG), ...]``, the graph before any
        command (``"initial"``), then after each command of :attr:`trace`, each rebuilt by
        replaying the trace on a copy; in a notebook, the graphs side by side with the
        command under each (docs/pdfg.md, "Step by step"). ``params`` prices every step's
        graph as :meth:`pdfg` does."""
        from spf.computation.history import pdfg_history

        return pdfg_history(self, params)

    def fuse(self, s1: str | Stmt, s2: str | Stmt, level: Any) -> list[Relation]:
        """PDFG fuse: ``s2`` joins ``s1``'s loop nest right after ``s1``, sharing the outer
        ``level`` loops (a count: ``1`` the outermost, ``0`` none; or the name of the innermost
        shared loop); illegal fusions raise ``IllegalScheduleError`` and change nothing, except
        one that breaks only dependences between sparse kernels fused into one loop: it is kept
        for ``wavefront`` on that loop to order them at run time (``compile`` refuses it until
        then, docs/inspection.md)."""
        from spf.computation.graph_ops import fuse

        return fuse(self, s1, s2, level)

    def reschedule(self, s1: str | Stmt, s2: str | Stmt) -> list[Relation]:
        """PDFG reschedule: ``s1`` moves to just before ``s2`` (either direction)."""
        from spf.computation.graph_ops import reschedule

        return reschedule(self, s1, s2)

    def _inline_temporary(self, data_space: str) -> list[str]:
        """PDFG inline (``PDFG.inline``, :class:`spf.pdfg.subject.GraphSubject`):
        producer-consumer inlining of ``data_space``, recorded in the trace; returns the
        rewritten consumers."""
        from spf.computation.graph_ops import inline

        return inline(self, data_space)

    def _removable_temporaries(self) -> dict[str, tuple[str, ...]]:
        """The temporaries an operation would remove, for the PDFG's ``removable_by``
        (:class:`spf.pdfg.subject.GraphSubject`)."""
        from spf.computation.temporaries import removable_temporaries

        return removable_temporaries(self)

    def to_dot(self) -> str:
        """Deterministic Graphviz text of the PDFG."""
        return self.pdfg().to_dot()

    def write_dot(self, path: str | Path) -> None:
        """Write the PDFG's DOT text to ``path`` (``SpfError`` when it is a directory or its
        directory does not exist)."""
        self.pdfg().write(path)

    # --- the frozen IR (spf.ir)
    @property
    def ir(self) -> ComputationIR:
        """This computation as an immutable value, a :class:`spf.ir.ComputationIR`: equal
        for equal computations, hashable, with a stable ``fingerprint`` and a deterministic
        ``str`` (docs/ir.md). Taken again only after a change (it is remembered per
        :attr:`version`); later changes to the computation leave it as it was.

        >>> comp = Computation("scale")
        >>> comp.add_data_space("x", "double", shape=("N",))
        >>> s = comp.add_stmt(Stmt("$x$(i) = 2 * $x$(i);", "{[i]: 0 <= i < N}"))
        >>> ir = comp.ir
        >>> ir.stmts[0].current_schedule, ir.params, ir is comp.ir
        ('{[i] -> [0, i, 0]}', ('N',), True)
        >>> Computation.from_ir(ir).ir == ir
        True
        """
        from spf.computation.snapshot import snapshot

        return self._remembered(("ir",), lambda: snapshot(self))

    @classmethod
    def from_ir(cls, ir: ComputationIR) -> Computation:
        """A new computation equal to ``ir`` (``Computation.from_ir(c.ir).ir == c.ir``):
        its declarations, statements, current schedules and tags, layout, operations and
        trace."""
        from spf.computation.snapshot import build

        return build(ir)

    # --- printing and serialization
    def to_json(self) -> str:
        from spf.computation.serialize import to_json

        return to_json(self)

    @classmethod
    def from_json(cls, text: str) -> Computation:
        from spf.computation.serialize import from_json

        return from_json(text)

    def __str__(self) -> str:
        from spf.computation.printer import computation_text

        return computation_text(self)

    def __repr__(self) -> str:
        return (
            f"Computation(name={self._name!r}, stmts={len(self._stmts)}, "
            f"ufs={tuple(sorted(self._ufs))})"
        )


def _interval_range(uf: UF) -> None:
    """Refuse a one-value UF whose declared range is not one interval (a union with a gap,
    a stride, ``v != c``): a checked call tests an index value against the range's lowest
    and highest values only, while the analyses trust the range as declared, so a value in
    a gap passed every check and a schedule the gap made legal computed something else
    (audit 24). The interval to declare and the assumption to state instead are named."""
    rng = uf.range
    if rng is None or uf.out_arity != 1:
        return
    hull = rng.polyhedral_hull()
    if not rng.is_equal(hull):
        raise VerifyError(
            f"UF {uf.name!r}: its range {rng} is not an interval (a gap or a stride): a "
            "checked call tests an index value against the range's lowest and highest values "
            f"only; declare the interval {hull} and state the rest as an assumption "
            f"(comp.assume('forall k: ... => ...{uf.name}(k)...')), which every checked "
            "call checks"
        )


def _fields(uf: UF) -> dict[str, Any]:
    """The keyword arguments of ``declare_uf`` that declare ``uf`` again."""
    return {
        "arity": uf.arity,
        "domain": uf.domain,
        "range": uf.range,
        "monotonic": uf.monotonic,
        "dtype": uf.dtype,
        "out_arity": uf.out_arity,
        "inverse": uf.inverse,
    }


def _call_arity(call: str) -> int:
    """Number of top-level arguments of a call text ``f(a, g(b, c))``."""
    depth, count = 0, 1
    for ch in call[call.index("(") + 1 : -1]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def _operation_params(op: OperationStmt) -> set[str]:
    out: set[str] = set()
    for _, r in (*op.reads, *op.writes):
        out |= r.params
    its = set(iterator_names(op.domain))
    for text in (op.peer, op.count):
        if text:
            out |= set(compile_expr(text)[1]) - its
    return out


def _uf_params(uf: UF) -> frozenset[str]:
    """Symbolic constants of a UF's declared domain and range."""
    out: frozenset[str] = frozenset()
    for s in (uf.domain, uf.range):
        if s is not None:
            out |= s.params
    return out


def _role_text(ds: DataSpace) -> str:
    """``local`` or ``local, private to loop i``."""
    return ds.role if ds.private is None else f"{ds.role}, private to loop {ds.private}"


def _shape_params(ds: DataSpace) -> set[str]:
    out: set[str] = set()
    for d in ds.shape or ():
        if isinstance(d, str):
            out |= expression_params(d)
    return out


def _check_given(
    kind: str,
    given: AccessList,
    inferred: AccessList,
    domain: Set,
    data: Mapping[str, DataSpace],
    where: str,
) -> None:
    for ds, rel in given:
        if ds not in data:
            raise UndeclaredError("data space", ds, data, hint=f"in the {kind} of {where}")
        if rel.in_arity != domain.arity:
            raise ArityError(
                f"{where}: {kind} relation {rel} for {ds!r} takes {rel.in_arity}-tuples, the "
                f"domain has arity {domain.arity}"
            )

    def covered(a: AccessList, b: AccessList) -> bool:
        return all(
            any(ds == ds2 and r.out_arity == r2.out_arity and r.is_equal(r2) for ds2, r2 in b)
            for ds, r in a
        )

    def show(lst: AccessList) -> str:
        return "[" + ", ".join(f"({d!r}, '{r}')" for d, r in lst) + "]"

    if not (covered(given, inferred) and covered(inferred, given)):
        raise VerifyError(
            f"{where}: the given {kind} {show(given)} do not match the {kind} in the source "
            f"{show(inferred)}"
        )


def _check_consistent(name: str, earlier: Sequence[Fact], fact: Fact) -> None:
    """``ArgumentError`` when the parameter fact ``fact`` and the parameter facts among
    ``earlier`` allow no parameter values together: every legality and bounds proof would
    then hold vacuously (a parallel loop carrying a dependence was accepted) while every
    checked call is refused."""
    from spf.sets.facts import parameter_context

    before = parameter_context(earlier)
    both = parameter_context([*earlier, fact])
    if both is not None and both.is_empty() and (before is None or not before.is_empty()):
        others = [f"{f.text!r}" for f in earlier if f.is_parameter_fact]
        why = (
            f"contradicts the assumption(s) {', '.join(others)}: no parameter values satisfy "
            "them all; drop one"
            if others
            else "holds for no parameter values"
        )
        raise ArgumentError(f"{name}: assume({fact.text!r}) {why}")
