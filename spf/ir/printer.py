"""The deterministic text of a :class:`~spf.ir.model.ComputationIR` (``str(ir)``).

One line per field, in field order; a collection of records (statements, data spaces ...)
prints one indented block per record, named by its first field. Values print as JSON
(strings quoted and escaped, tuples as lists), trace entries as the Python that applies
them. The text is complete (two IRs print alike exactly when they are equal), so golden
files can hold it and :attr:`~spf.ir.model.ComputationIR.fingerprint` hashes it.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spf.ir.model import ComputationIR
    from spf.schedule.trace import TraceEntry

_INDENT = "  "


def ir_text(ir: ComputationIR) -> str:
    """``str(ir)``."""
    lines = [f"computation {ir.name}"]
    for f in dataclasses.fields(ir)[1:]:
        value = getattr(ir, f.name)
        if f.name == "trace":
            lines += _trace_lines(value)
        elif _is_records(value):
            lines += _record_lines(f.name, value)
        elif value not in ((), None):
            lines.append(f"{_INDENT}{f.name}: {_json(value)}")
    return "\n".join(lines) + "\n"


def _is_records(value: object) -> bool:
    return isinstance(value, tuple) and any(dataclasses.is_dataclass(v) for v in value)


def _record_lines(kind: str, records: tuple[object, ...]) -> list[str]:
    lines: list[str] = []
    for record in records:
        fields = dataclasses.fields(record)  # type: ignore[arg-type]
        head = getattr(record, fields[0].name)
        lines.append(f"{_INDENT}{kind.removesuffix('s')} {_json(head)}:")
        for f in fields[1:]:
            lines.append(f"{_INDENT * 2}{f.name}: {_json(getattr(record, f.name))}")
    return lines


def _trace_lines(entries: tuple[TraceEntry, ...]) -> list[str]:
    if not entries:
        return []
    lines = [f"{_INDENT}trace:"]
    for e in entries:
        lines.append(f"{_INDENT * 2}{e.as_python()}  # {_json(e.to_data()['args'])}")
    return lines


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
