"""spf.runtime.plan_method.install puts the look helper's method in place of a class's
Python ``__call__`` once, and not where the method's direct write of ``_last_threads``
would differ from setting the attribute."""

from __future__ import annotations

import pytest

from spf.runtime import plan_look, plan_method
from spf.testing import look_helper


class Plain:
    def __call__(self, *positional: object, check: bool = True, **args: object) -> str:
        """The Python call."""
        return "python"


class Watched(Plain):
    def __call__(self, *positional: object, check: bool = True, **args: object) -> str:
        return "python"

    @property
    def _last_threads(self) -> int:
        return 1


def test_install_once_and_only_where_the_write_is_an_attributes() -> None:
    look_helper()
    if not plan_look.HOT_METHOD:
        pytest.skip("the helper did not load as an extension")
    python = Plain.__dict__["__call__"]
    try:
        assert plan_method.install(Plain)
        method = Plain.__dict__["__call__"]
        assert type(method).__name__ == "method"
        assert method.__wrapped__ is python
        assert plan_method.install(Plain)
        assert Plain.__dict__["__call__"] is method
        assert plan_method.python_call(Plain) is python
        assert Plain()(check=False, plan=None) == "python"  # no record: the Python call
        assert Plain()(1, check=True) == "python"
        assert Plain.__call__.__doc__ == "The Python call."
        assert not plan_method.install(Watched)  # a property of that name: not installed
        assert Watched.__dict__["__call__"].__class__.__name__ == "function"
    finally:
        Plain.__call__ = python  # type: ignore[method-assign]
    with pytest.raises(TypeError, match="slots plan and hot"):
        plan_look.HOT_METHOD[0](python, Plain)
