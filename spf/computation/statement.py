"""Statements: C source, iteration domain, scattering schedule and accesses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from spf.errors import SpfError, UndeclaredError
from spf.sets import Relation, Set

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.source import ParsedSource

AccessList = tuple[tuple[str, Relation], ...]
AccessSpec = Sequence[tuple[str, "Relation | str"]]


def is_constant(text: str) -> bool:
    """True for a schedule entry that is an integer constant (``0``, ``-1``)."""
    return text.lstrip("-").isdigit()


class Stmt:
    """One statement of a computation (API.md section 3).

    >>> s = Stmt("$y$(i) += $A$(i, j) * $x$(j);", "{[i,j]: 0 <= i < N && 0 <= j < M}",
    ...          "{[i,j] -> [0,i,0,j,0]}")
    >>> s.loops
    ('i', 'j')
    """

    def __init__(
        self,
        source: str,
        domain: str | Set,
        schedule: str | Relation | None = None,
        reads: AccessSpec | None = None,
        writes: AccessSpec | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(source, str):
            raise SpfError(f"Stmt source must be C text, got {type(source).__name__}")
        if name is not None and (not isinstance(name, str) or not name.isidentifier()):
            raise SpfError(f"statement name {name!r} is not a valid identifier")
        self._source = source
        self._name = name
        self._domain = domain if isinstance(domain, Set) else _parse_set(domain, "domain")
        self._given_schedule = (
            None
            if schedule is None
            else schedule
            if isinstance(schedule, Relation)
            else _parse_rel(schedule, "schedule")
        )
        self._given_reads = _access_spec(reads, "reads")
        self._given_writes = _access_spec(writes, "writes")
        self._schedule: Relation | None = self._given_schedule
        self._original: Relation | None = None
        self._reads: AccessList = ()
        self._writes: AccessList = ()
        self._parsed: ParsedSource | None = None
        self._comp: Computation | None = None
        self._tags: dict[str, tuple[str, ...]] = {}

    # --- API attributes
    @property
    def name(self) -> str:
        """``s<k>`` unless named; ``"?"`` before the statement is added."""
        return self._name or "?"

    @property
    def source(self) -> str:
        return self._source

    @property
    def domain(self) -> Set:
        return self._domain

    @property
    def schedule(self) -> Relation:
        """The current scattering relation."""
        if self._schedule is None:
            raise SpfError(f"statement {self.name}: no schedule until it is added to a Computation")
        return self._schedule

    @property
    def original_schedule(self) -> Relation:
        """The schedule given when the statement was added (program order)."""
        return self._original if self._original is not None else self.schedule

    @property
    def reads(self) -> AccessList:
        return self._reads

    @property
    def writes(self) -> AccessList:
        return self._writes

    @property
    def loops(self) -> tuple[str, ...]:
        """Current loop names, outer first (schedule entries that are not constants)."""
        if self._schedule is None:
            return ()
        return tuple(v for v in self._schedule.out_vars if not is_constant(v))

    @property
    def computation(self) -> Computation | None:
        return self._comp

    @property
    def parsed(self) -> ParsedSource:
        """The parsed source (after ``add_stmt``)."""
        if self._parsed is None:
            raise SpfError(f"statement {self.name}: not yet added to a Computation")
        return self._parsed

    # --- hardware tags (Tiramisu Layer II): recorded per loop name, checked at codegen
    @property
    def tags(self) -> dict[str, tuple[str, ...]]:
        """Tags by loop name (``{"i": ("parallel",)}``)."""
        return dict(self._tags)

    def parallelize(self, loop: str | int) -> Stmt:
        """Run ``loop`` in parallel (OpenMP ``parallel for`` in C); checked against the
        dependences by ``check_legality`` and ``codegen``."""
        self._tag(loop, "parallel")
        return self

    def _tag(self, loop: str | int, tag: str) -> None:
        loops = self.loops
        if isinstance(loop, int) and not isinstance(loop, bool):
            if not 0 <= loop < len(loops):
                raise UndeclaredError("loop", str(loop), loops, hint=f"of statement {self.name}")
            loop = loops[loop]
        if not isinstance(loop, str) or loop not in loops:
            raise UndeclaredError("loop", str(loop), loops, hint=f"of statement {self.name}")
        current = self._tags.get(loop, ())
        if tag not in current:
            self._tags[loop] = (*current, tag)

    def __repr__(self) -> str:
        return f"Stmt(name={self.name!r}, source={self._source!r})"


def _parse_set(text: object, what: str) -> Set:
    if not isinstance(text, str):
        raise SpfError(f"Stmt {what} must be set text or spf.Set, got {type(text).__name__}")
    return Set(text)


def _parse_rel(text: object, what: str) -> Relation:
    if not isinstance(text, str):
        raise SpfError(f"Stmt {what} must be relation text or spf.Relation, got {text!r}")
    return Relation(text)


def _access_spec(spec: AccessSpec | None, what: str) -> AccessList | None:
    if spec is None:
        return None
    out: list[tuple[str, Relation]] = []
    for item in spec:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise SpfError(f"Stmt {what}: expected (data space, relation) pairs, got {item!r}")
        ds, rel = item
        if not isinstance(ds, str):
            raise SpfError(f"Stmt {what}: data space name must be a string, got {ds!r}")
        out.append((ds, rel if isinstance(rel, Relation) else _parse_rel(rel, what)))
    return tuple(out)
