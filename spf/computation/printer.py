"""``str(Computation)``: a stable, IEGenLib ``printInfo``-like summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.computation.computation import Computation


def computation_text(comp: Computation) -> str:
    lines = [f"Computation {comp.name}"]
    params = sorted(comp.params)
    lines.append(f"  parameters: {', '.join(params) if params else '(none)'}")
    typed = sorted((n, t) for n, t in comp.constants.items() if t != "int64_t")
    if typed:
        lines.append(f"  constant types: {', '.join(f'{n}: {t}' for n, t in typed)}")
    lines.append("  data spaces:")
    for ds in comp.data_spaces.values():
        role = "" if ds.role == "data" else f"  ({ds.role})"
        if ds.private is not None:
            role = f"  ({ds.role}, private to loop {ds.private})"
        lines.append(f"    {ds.name}: {ds.type_text}{ds.shape_text()}{role}")
    if comp.return_values:
        lines.append(f"  return values: {', '.join(comp.return_values)}")
    if comp.ufs:
        lines.append("  UFs:")
        lines += [f"    {uf!r}" for _, uf in sorted(comp.ufs.items())]
    if comp.assumptions:
        lines.append("  assumptions:")
        lines += [f"    {f.text}" for f in comp.assumptions]
    lines.append("  statements:")
    for s in comp.stmts:
        lines.append(f"    {s.name}: {s.source.strip()}")
        lines.append(f"      domain:   {s.domain}")
        lines.append(f"      schedule: {s.schedule}")
        for kind, accs in (("reads", s.reads), ("writes", s.writes)):
            for space, rel in accs:
                lines.append(f"      {kind + ':':9} {space} {rel}")
    return "\n".join(lines)
