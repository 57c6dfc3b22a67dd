"""Tiramisu's four layers of a computation as isl-style text (``comp.layers()``).

- Layer I (algorithm): each statement's domain, named by the statement, and its body:
  ``{s0[i, j] : 0 <= i < N and 0 <= j < M} : y(i) += A(i, j) * x(j);``
- Layer II (schedule): the scattering relations with loop tags:
  ``{s0[i, j] -> [0, i, 0, j, 0]}  i: parallel``
- Layer III (data): the buffers and the access relations of every statement after
  ``store_in`` (to the buffer that stores each data space): ``buffer bx_buf[3, M - 2] double
  (local)`` and ``{s0[i, j] -> bx_buf[i % 3, j]}``
- Layer IV (communication): the operations with their domains and schedules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spf import cexpr as cx
from spf.computation.layout import Placement, layout_of, physical, rename
from spf.computation.operations import OperationStmt
from spf.schedule.commands import ROOT

if TYPE_CHECKING:
    from spf.computation.computation import Computation
    from spf.computation.statement import Stmt
    from spf.sets import Relation, Set


@dataclass(frozen=True)
class Layers:
    """The four layers as text (``str(layers)`` prints them all, with headers)."""

    algorithm: str
    schedule: str
    data: str
    communication: str
    inspection: str = ""
    """The inspectors of wavefront loops (printed only when there is one)."""

    def __str__(self) -> str:
        parts = [
            ("Layer I (algorithm)", self.algorithm),
            ("Layer II (schedule)", self.schedule),
            ("Layer III (data)", self.data),
            ("Layer IV (communication)", self.communication),
        ]
        if self.inspection:
            parts.append(("Run-time inspection", self.inspection))
        return "\n\n".join(f"{head}:\n{body or '  (none)'}" for head, body in parts) + "\n"


def named_set(name: str, s: Set) -> str:
    """``{[i, j] : ...}`` as ``{name[i, j] : ...}``."""
    text = str(s)
    return "{" + name + text[1:] if text.startswith("{[") else text


def named_relation(src: str, dst: str, r: Relation, *, functional: bool = True) -> str:
    """``{[i] -> [j] : ...}`` as ``{src[i] -> dst[j] : ...}`` (outputs as expressions of the
    inputs when the relation is a function: ``{s0[i, j] -> bx_buf[i % 3, j]}``)."""
    if functional and r.in_vars and all(v.isidentifier() for v in r.in_vars):
        exprs = r.as_function()
        if exprs is not None:
            return f"{{{src}[{', '.join(r.in_vars)}] -> {dst}[{', '.join(_mods(exprs))}]}}"
    text = str(r)
    if not text.startswith("{["):
        return text
    head, arrow, rest = text[1:].partition("-> [")
    if not arrow:
        return text
    return "{" + src + head + "-> " + dst + "[" + rest


def _mods(exprs: tuple[str, ...]) -> list[str]:
    """``t0 - 3*floor(t0/3)`` read back as ``t0 % 3``."""
    out = []
    for e in exprs:
        m = _MOD.fullmatch(e.replace(" ", ""))
        if m and m.group(1) == m.group(3) and m.group(2) == m.group(4):
            out.append(f"{m.group(1)} % {m.group(2)}")
        else:
            out.append(e)
    return out


_MOD = re.compile(r"([A-Za-z_]\w*)-(\d+)\*floor\(([A-Za-z_]\w*)/(\d+)\)")


def _body(s: Stmt) -> str:
    """The statement's C with data-space accesses as ``A(i, j)``."""
    from spf.computation.access import iterator_names

    its = {it: it for it in iterator_names(s.domain)}
    return " ".join(s.parsed.render_c(cx.Access, cx.Call, its).split())


def _algorithm(comp: Computation) -> str:
    lines = []
    for s in comp.stmts:
        if isinstance(s, OperationStmt):
            continue
        body = _body(s)
        lines.append(f"  {named_set(s.name, s.domain)} : {body}")
    return "\n".join(lines)


def _schedule(comp: Computation) -> str:
    lines = []
    for s in comp.stmts:
        tags = "; ".join(f"{loop}: {', '.join(t)}" for loop, t in sorted(s.tags.items()))
        text = named_relation(s.name, "", s.schedule, functional=False)
        lines.append(f"  {text}" + (f"  [{tags}]" if tags else ""))
    return "\n".join(lines)


def _buffer_line(comp: Computation, name: str) -> str:
    b = layout_of(comp).buffers[name]
    shape = ", ".join(str(d) for d in b.shape)
    extra = []
    if b.allocation is not None:
        stmt, level = b.allocation
        extra.append(
            "allocated at the root" if level is ROOT else f"allocated at {stmt} loop {level}"
        )
    for p in b.partitions:
        extra.append(
            f"partition dim {p.dim} {p.kind}" + (f" {p.factor}" if p.kind != "complete" else "")
        )
    stored = b.data_spaces()
    if stored:
        extra.append(f"stores {', '.join(stored)}")
    tail = f"; {'; '.join(extra)}" if extra else ""
    return f"  buffer {b.name}[{shape}] {b.dtype} ({b.scope}){tail}"


def _accesses(comp: Computation, s: Stmt) -> list[str]:
    out = []
    placements = layout_of(comp).placements
    for kind, accs in (("write", s.writes), ("read", s.reads)):
        for ds, rel in accs:
            text = _through(s.name, placements[ds], rel) if ds in placements else None
            if text is None:
                storage, phys = physical(comp, ds, rel)
                text = named_relation(s.name, storage, phys)
            out.append(f"  {kind} {text}")
    return out


def _through(name: str, p: Placement, rel: Relation) -> str | None:
    """``{s0[i, j] -> bx_buf[(i + 1) % 3, j]}``: the placement applied to the access."""
    fn = rel.as_function()
    if fn is None or not all(v.isidentifier() for v in rel.in_vars):
        return None
    values = {f"t{k}": e if e.isidentifier() or e.isdigit() else f"({e})" for k, e in enumerate(fn)}
    exprs = [rename(e, values) for e in p.exprs]
    return f"{{{name}[{', '.join(rel.in_vars)}] -> {p.buffer}[{', '.join(exprs)}]}}"


def _data(comp: Computation) -> str:
    lines = [_buffer_line(comp, name) for name in layout_of(comp).buffers]
    for ds, p in layout_of(comp).placements.items():
        ts = ", ".join(f"t{k}" for k in range(p.relation.in_arity))
        lines.append(f"  store_in {{{ds}[{ts}] -> {p.buffer}[{', '.join(p.exprs)}]}}")
    for s in comp.stmts:
        lines += _accesses(comp, s)
    return "\n".join(lines)


def _communication(comp: Computation) -> str:
    lines = []
    for s in comp.stmts:
        if isinstance(s, OperationStmt):
            lines.append(f"  {named_set(s.name, s.domain)} : {s.describe()}")
    return "\n".join(lines)


def layers(comp: Computation) -> Layers:
    """The four layers of ``comp``."""
    return Layers(
        algorithm=_algorithm(comp),
        schedule=_schedule(comp),
        data=_data(comp),
        communication=_communication(comp),
    )
