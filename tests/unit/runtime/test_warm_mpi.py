"""The keys and entries of remembered MPI compiles (spf.runtime.warm with target "mpi",
spf.distributed.remembered): everything the generated code and its build depend on is in the
key, and an entry that cannot be trusted is a miss. Nothing here imports mpi4py; the compiles
across processes are checked on real ranks in tests/e2e/test_mpi_remembered.py."""

from __future__ import annotations

import base64
import json
import pickle
from typing import TYPE_CHECKING

import spf.mpi
from spf.distributed import remembered
from spf.distributed.kernel import DistributedKernel
from spf.formats import builtin
from spf.runtime import warm
from spf.runtime.build import compile_flags
from spf.runtime.mpi import remembered_parts

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from spf import Computation

ARGV = ["gcc"]  # any compiler on PATH: the key reads its identity, never runs it
FLAGS = compile_flags()


def _spmv(name: str = "CSR") -> Computation:
    return spf.mpi.spmv(builtin(name))


def _key(comp: Computation, **change: object) -> str | None:
    args: dict[str, object] = {"name": "spmv", "check": True, "argv": ARGV, "flags": FLAGS}
    args.update(change)
    dist = args.pop("dist", comp._distribution)
    return remembered.key(comp.ir, dist, **args)  # type: ignore[arg-type]


def test_the_distributed_key_names_the_state_the_distribution_and_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    comp = _spmv()
    first = _key(comp)
    assert first is not None
    assert first == _key(_spmv())
    other_owner = _spmv()
    other_owner.distribute_rows("i", data={"y": 0, "x": 0}, owner="array")
    changed = [
        _key(_spmv("ELL")),  # another computation
        _key(other_owner),  # another distribution
        _key(comp, name="other"),
        _key(comp, check=False),
        _key(comp, flags=compile_flags(cflags=["-O1"])),
        _key(comp, flags=compile_flags(openmp=False)),
        _key(comp, argv=["cc"]),
    ]
    monkeypatch.setenv("OMPI_CC", "clang")  # the wrapper told to run another compiler
    changed.append(_key(comp))
    assert None not in changed
    assert len({first, *changed}) == len(changed) + 1
    assert _key(comp, argv=["no-such-mpicc-here"]) is None  # not found: nothing remembered


def test_the_mpi_target_keys_apart_from_c_and_by_the_wrapper_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ir = spf.kernels.spmv_csr().ir
    monkeypatch.delenv("OMPI_CFLAGS", raising=False)
    c = warm.warm_key(ir, "spmv", True, argv=ARGV, flags=FLAGS)
    mpi = warm.warm_key(ir, "spmv", True, argv=ARGV, flags=FLAGS, extra=remembered_parts("gcc"))
    monkeypatch.setenv("OMPI_CFLAGS", "-g")
    flagged = warm.warm_key(ir, "spmv", True, argv=ARGV, flags=FLAGS, extra=remembered_parts("gcc"))
    assert len({c, mpi, flagged}) == 3
    assert remembered_parts("gcc")[-1] == "OMPI_CFLAGS=-g"


def test_an_entry_round_trips_and_a_damaged_one_is_a_miss(tmp_path: Path) -> None:
    comp = _spmv()
    kernel = DistributedKernel(comp.ir, comp._distribution, build=False)
    key = _key(comp)
    assert key is not None
    assert remembered.load(key, tmp_path) is None  # no entry
    remembered.store(key, kernel._generated, "library-key", tmp_path)
    back = remembered.load(key, tmp_path)
    assert back is not None
    assert back.library_key == "library-key"
    assert back.generated.source == kernel.source
    assert back.generated.inspector.fingerprint == kernel.inspector.fingerprint
    assert back.generated.layout == kernel.layout
    assert back.generated.args == tuple(kernel.arguments)

    path = warm.entry_path(key, tmp_path)
    data = json.loads(path.read_text())
    data["payload"]["library_key"] = "another"  # edited: the digest no longer matches
    path.write_text(json.dumps(data))
    assert remembered.load(key, tmp_path) is None
    foreign = {"format": remembered.FORMAT, "library_key": "k",
               "generated": base64.b64encode(pickle.dumps([1, 2])).decode()}  # fmt: skip
    path.write_text(json.dumps({"payload": foreign, "sha256": warm.payload_digest(foreign)}))
    assert remembered.load(key, tmp_path) is None  # not a Generated
    path.write_text("{not json")
    assert remembered.load(key, tmp_path) is None
