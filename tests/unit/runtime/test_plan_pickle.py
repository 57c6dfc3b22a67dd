"""A :class:`spf.runtime.plan.Plan` read back by pickle or copied by ``copy`` holds its
arrays read-only and is checked as a plan built from arrays is: before, it held writeable
arrays no check had seen, so an order entry edited out of range after ``pickle.loads`` or
``copy.deepcopy`` crashed an unchecked levels call (SIGSEGV) and hung a checked p2p call
(a row waiting on one that never ran)."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from spf.errors import ArgumentError
from spf.runtime.plan import Plan


def two_levels() -> Plan:
    """Rows 0 and 1 in level 0, row 2 in level 1; one group per level."""
    return Plan(
        loop="i",
        levels=2,
        level_of=np.array([0, 0, 1]),
        levelptr=np.array([0, 2, 3]),
        order=np.array([0, 1, 2]),
        strategy="wavefront",
        groups=2,
        groupptr=np.array([0, 2, 3]),
        one_thread=np.array([0, 0]),
        inspected=(),
    )


ARRAYS = ("level_of", "levelptr", "order", "groupptr", "one_thread")


@pytest.mark.parametrize(
    "again",
    [lambda p: pickle.loads(pickle.dumps(p)), copy.deepcopy, copy.copy],
    ids=["pickle", "deepcopy", "copy"],
)
def test_a_plan_read_back_or_copied_keeps_its_arrays_read_only(again: Any) -> None:
    plan = again(two_levels())
    assert isinstance(plan, Plan)
    for name in ARRAYS:
        arr = getattr(plan, name)
        assert not arr.flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        plan.order[0] = 10**8
    np.testing.assert_array_equal(plan.order, [0, 1, 2])


class _Tampered:
    """Pickles as a :class:`Plan` with the state ``state`` (what a file of a plan edited on
    disk, or written by other code, reads back as)."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state

    def __reduce__(self) -> tuple[Any, ...]:
        return (object.__new__, (Plan,), self.state)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("order", np.array([0, 10**8, 2]), "order holds a value outside"),
        ("order", np.array([0, 0, 2]), "not a permutation"),
        ("levelptr", np.array([0, 3, 3]), "levelptr"),
        ("strategy", "fastest", "strategy must be"),
    ],
)
def test_a_plan_read_back_is_checked_as_one_built_from_arrays(
    name: str, value: object, message: str
) -> None:
    state = dict(two_levels().__getstate__())
    state[name] = value
    with pytest.raises(ArgumentError, match=message):
        pickle.loads(pickle.dumps(_Tampered(state)))
