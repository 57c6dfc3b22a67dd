"""Every fault kind a generated function records (the first word of its fault record) is
one number for one meaning: the kernel decides by that number whether to raise, to run the
checked-reads fallback or to look up new contents (two kinds once shared 11, and a range
fault on a settled look then ran as new contents)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spf.codegen import arg_checks, each_call, faults, range_pass

if TYPE_CHECKING:
    from types import ModuleType

MODULES: tuple[ModuleType, ...] = (faults, arg_checks, each_call, range_pass)


def test_the_fault_kinds_are_distinct() -> None:
    kinds = {
        f"{m.__name__}.{name}": value
        for m in MODULES
        for name, value in vars(m).items()
        if name.startswith("FAULT_") and name != "FAULT_WORDS" and isinstance(value, int)
    }
    assert len(kinds) >= 12, kinds
    by_value: dict[int, list[str]] = {}
    for name, value in kinds.items():
        by_value.setdefault(value, []).append(name)
    shared = {v: names for v, names in by_value.items() if len(names) > 1}
    assert not shared, shared
