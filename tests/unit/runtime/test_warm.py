"""Remembered compiles (spf.runtime.warm): a compile of a state compiled before skips analysis
and codegen, gives the same kernel, and any change to the computation misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import numpy as np
import pytest

import spf
import spf.runtime.compile as compile_module
from spf import Computation, Stmt

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


class _AnalysedError(Exception):
    """Raised where a compile that does not remember would start its analysis."""


def _refuse(*_: object) -> list[tuple[str, str]]:
    raise _AnalysedError


@pytest.fixture
def no_analysis(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Calling it makes every compile that is not remembered raise ``_AnalysedError``."""
    return lambda: monkeypatch.setattr(compile_module, "bounds_obligations", _refuse)


def _gather(name: str = "gather") -> Computation:
    """``y(i) = x(f(i))``; ``f`` has no declared range, so ``check=True`` verifies at run time
    that ``0 <= f(i) < M`` (a bounds obligation in the signature)."""
    comp = Computation(name)
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.declare_uf("f", domain="{[i]: 0 <= i < N}")
    comp.add_stmt(Stmt("y(i) = x(f(i));", "{[i]: 0 <= i < N}"))
    return comp


def test_a_second_compile_of_the_same_state_skips_analysis(
    tmp_path: Path, no_analysis: Callable[[], None]
) -> None:
    first = _gather().compile(openmp=False, cache_dir=tmp_path)
    assert list((tmp_path / "warm").rglob("*.json"))
    no_analysis()
    again = _gather().compile(openmp=False, cache_dir=tmp_path)
    assert (again.source, again.signature, again.path, again.command) == (
        first.source,
        first.signature,
        first.path,
        first.command,
    )
    assert again.arguments == first.arguments


def test_a_remembered_kernel_behaves_the_same(tmp_path: Path) -> None:
    """Same results, same argument errors, same run-time bounds check (whose own check
    kernel is compiled on the first call that checks, outside the patched compile)."""
    kernels = [_gather().compile(openmp=False, cache_dir=tmp_path)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compile_module, "bounds_obligations", _refuse)
        kernels.append(_gather().compile(openmp=False, cache_dir=tmp_path))
    messages = []
    for kernel in kernels:
        y = np.zeros(3)
        kernel(y=y, x=np.array([1.0, 2.0]), f=np.array([1, 0, 1], dtype=np.int32))
        np.testing.assert_array_equal(y, [2.0, 1.0, 2.0])
        with pytest.raises(spf.ArgumentError) as bounds:
            kernel(y=np.zeros(3), x=np.zeros(2), f=np.array([0, 2, 1], dtype=np.int32))
        with pytest.raises(spf.ArgumentError) as dtype:
            kernel(y=np.zeros(3), x=np.zeros(2), f=np.array([0, 1, 1]))
        kernel(y=np.zeros(3), x=np.zeros(2), f=np.array([0, 2, 1], dtype=np.int32), check=False)
        messages.append((str(bounds.value), str(dtype.value)))
    assert "the bounds of" in messages[0][0]
    assert messages[0] == messages[1]


def _dense() -> Computation:
    return spf.kernels.gemm()


_CHANGES: dict[str, tuple[Callable[[], Computation], Callable[[Computation], object]]] = {
    "data space added": (_gather, lambda c: c.add_data_space("z", "double", shape=("N",))),
    "constant added": (_gather, lambda c: c.add_constant("K")),
    "local added": (_gather, lambda c: c.add_local("t", "double")),
    "assumption": (_gather, lambda c: c.assume("forall i: 0 <= i < N => 0 <= f(i) < M")),
    "UF added": (_gather, lambda c: c.declare_uf("g", domain="{[i]: 0 <= i < N}")),
    "statement added": (
        _gather,
        lambda c: c.add_stmt(Stmt("y(i) = 0;", "{[i]: 0 <= i < N}")),
    ),
    "buffer": (_gather, lambda c: c.add_buffer("b", ("N",), "double")),
    "schedule": (_dense, lambda c: c.stmt("s0").interchange("j", "k")),
    "tag": (_dense, lambda c: c.stmt("s0").parallelize("i")),
    "split (trace)": (_dense, lambda c: c.stmt("s0").split("j", 4, "j0", "j1")),
}


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_any_change_to_the_computation_misses(
    change: str, tmp_path: Path, no_analysis: Callable[[], None]
) -> None:
    build, mutate = _CHANGES[change]
    build().compile(openmp=False, cache_dir=tmp_path)
    no_analysis()
    build().compile(openmp=False, cache_dir=tmp_path)  # remembered
    comp = build()
    mutate(comp)
    with pytest.raises(_AnalysedError):
        comp.compile(openmp=False, cache_dir=tmp_path)


def _variant(kind: str) -> tuple[Computation, dict[str, object]]:
    """The gather computation changed in one way that is not an attribute of it."""
    if kind == "statement text":
        comp = Computation("gather")
        comp.add_data_space("y", "double", shape=("N",))
        comp.add_data_space("x", "double", shape=("M",))
        comp.declare_uf("f", domain="{[i]: 0 <= i < N}")
        comp.add_stmt(Stmt("y(i) = 2 * x(f(i));", "{[i]: 0 <= i < N}"))
        return comp, {}
    if kind == "data space type":
        comp = Computation("gather")
        comp.add_data_space("y", "float", shape=("N",))
        comp.add_data_space("x", "double", shape=("M",))
        comp.declare_uf("f", domain="{[i]: 0 <= i < N}")
        comp.add_stmt(Stmt("y(i) = x(f(i));", "{[i]: 0 <= i < N}"))
        return comp, {}
    if kind == "UF declaration":
        comp = Computation("gather")
        comp.add_data_space("y", "double", shape=("N",))
        comp.add_data_space("x", "double", shape=("M",))
        comp.declare_uf("f", domain="{[i]: 0 <= i < N}", range="{[j]: 0 <= j < M}")
        comp.add_stmt(Stmt("y(i) = x(f(i));", "{[i]: 0 <= i < N}"))
        return comp, {}
    options: dict[str, dict[str, object]] = {
        "name": {"name": "other"},
        "check": {"check": False},
        "cflags": {"cflags": ["-O1"]},
        "openmp": {"openmp": True},
    }
    return _gather(), options[kind]


@pytest.mark.parametrize(
    "kind",
    ["statement text", "data space type", "UF declaration", "name", "check", "cflags", "openmp"],
)
def test_other_statements_declarations_and_options_miss(
    kind: str, tmp_path: Path, no_analysis: Callable[[], None]
) -> None:
    _gather().compile(openmp=False, cache_dir=tmp_path)
    no_analysis()
    comp, options = _variant(kind)
    with pytest.raises(_AnalysedError):
        comp.compile(**{"openmp": False, "cache_dir": tmp_path, **options})  # type: ignore[arg-type]


def _entry(cache: Path) -> Path:
    (entry,) = (cache / "warm").rglob("*.json")
    return entry


@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "not json",
        "source edited",
        "older layout",
        "library removed",
        "library damaged",
    ],
)
def test_a_damaged_entry_is_rebuilt(tmp_path: Path, damage: str) -> None:
    first = _gather().compile(openmp=False, cache_dir=tmp_path)
    entry = _entry(tmp_path)
    text = entry.read_text()
    if damage == "truncated":
        entry.write_text(text[: len(text) // 2])
    elif damage == "not json":
        entry.write_bytes(b"\xff\x00")
    elif damage == "source edited":
        data = json.loads(text)
        unit = data["payload"]["unit"]
        unit["source"] = unit["source"].replace("= x", "= -x")
        entry.write_text(json.dumps(data))
    elif damage == "older layout":  # format 1: the source without its record, digest valid
        from spf.runtime.warm import payload_digest

        payload = json.loads(text)["payload"]
        payload = dict(payload, format=1, source=payload.pop("unit")["source"])
        entry.write_text(json.dumps({"payload": payload, "sha256": payload_digest(payload)}))
    elif damage == "library removed":
        first.path.unlink()
    else:  # a new file: the loaded library's pages must stay as they are
        first.path.unlink()
        first.path.write_bytes(b"\0" * 64)
    again = _gather().compile(openmp=False, cache_dir=tmp_path)
    assert again.source == first.source
    y = np.zeros(2)
    again(y=y, x=np.array([5.0, 7.0]), f=np.array([1, 0], dtype=np.int32))
    np.testing.assert_array_equal(y, [7.0, 5.0])
    assert json.loads(_entry(tmp_path).read_text())["payload"]["unit"] == first.unit.to_data()


_CHILD = """
import sys, time
import spf
import spf.runtime.compile as c
remembered = sys.argv[1] == "remembered"
if remembered:
    def refuse(*_):
        raise SystemExit("analysed: not remembered")
    c.bounds_obligations = refuse
comp = spf.kernels.spmv_csr()
kernel = comp.compile(openmp=False)
print(kernel.path)
"""


def test_a_fresh_interpreter_remembers_through_spf_cache_dir(tmp_path: Path) -> None:
    env = {**os.environ, "SPF_CACHE_DIR": str(tmp_path / "env-cache")}
    paths = []
    for mode in ("first", "remembered"):
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, mode],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        paths.append(done.stdout.strip())
    assert paths[0] == paths[1]
    assert paths[0].startswith(str(tmp_path / "env-cache"))
    assert list((tmp_path / "env-cache" / "warm").rglob("*.json"))


def test_the_key_is_the_ir_an_attribute_outside_it_is_not_read(
    tmp_path: Path, no_analysis: Callable[[], None]
) -> None:
    """Compiling reads the computation's IR only (``comp.ir``), so the entry is keyed by its
    fingerprint: an attribute the IR does not hold (a function here) cannot change the
    kernel, and the state holding it is remembered like any other."""
    first = _gather().compile(openmp=False, cache_dir=tmp_path)
    no_analysis()
    comp = _gather()
    comp.stmts[0].__dict__["note"] = lambda: 1
    again = comp.compile(openmp=False, cache_dir=tmp_path)  # remembered: no analysis
    assert (again.source, again.path) == (first.source, first.path)


def test_spf_functions_key_by_name_and_foreign_ones_do_not_key() -> None:
    """A built-in format's packer (an spf function, or a partial of one) keys by its name;
    a lambda or a partial of a user's function cannot be keyed (its code is not captured)."""
    import functools

    from spf.formats import BCSR, CSR
    from spf.runtime.warm import UnkeyableError, _key
    from spf.sparse import csr_args

    assert _key(csr_args, set()) == ("function", "spf.sparse.csr_args")
    assert _key(BCSR(2, 2), set()) == _key(BCSR(2, 2), set()) != _key(BCSR(2, 3), set())
    assert _key(CSR, set()) is not None
    for foreign in (lambda: 1, functools.partial(print, 1), functools.partial(lambda r: r, 2)):
        with pytest.raises(UnkeyableError):
            _key(foreign, set())
