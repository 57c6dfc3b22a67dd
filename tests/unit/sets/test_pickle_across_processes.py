"""Sets, facts and expressions pickled by another interpreter work in this one.

Python salts ``hash`` of text per process, so an atom or a set restored with the hash it
had where it was pickled is a different key here: a remembered einsum entry's facts
(spf.index_notation.remembered), loaded by a second process sharing the cache, printed a
check domain with the internal name ``__t0`` in its UF calls (the symbol of ``i`` not found
in the display map), and the checked call failed with a ParseError.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import spf
from spf import UF, Set
from spf.sets.affine import Aff, Call, Sym, floor
from spf.sets.facts import Fact, check_domain

UFS = {
    "rowptr": UF(
        "rowptr",
        domain="{[i] : 0 <= i <= N}",
        range="{[v] : 0 <= v <= NNZ}",
        monotonic="nondecreasing",
    ),
    "col": UF("col", domain="{[k] : 0 <= k < NNZ}", range="{[v] : 0 <= v < M}"),
}
SORTED = "forall i, k1, k2: rowptr(i) <= k1 < k2 < rowptr(i+1) => col(k1) < col(k2)"


def made() -> tuple[Fact, dict[str, UF], Set, Aff]:
    """A fact, its UFs, a set and an expression with a call and a floor (the child's too)."""
    fact = Fact.parse(SORTED, UFS, ["N", "M", "NNZ"])
    expr = Call("col", [Sym("k").aff() + 1]).aff() * 2 + floor(Sym("i").aff() / 3)
    return fact, dict(UFS), Set("{[i] : 0 <= i < N}"), expr


def _other_seed() -> str:
    """A hash seed this process does not have (its own may be fixed by the environment)."""
    return "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"


def _pickled_elsewhere() -> Any:
    child = textwrap.dedent(
        f"""
        import importlib.util, pickle, sys
        spec = importlib.util.spec_from_file_location("made_here", {__file__!r})
        here = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(here)
        fact, ufs, s, e = here.made()
        str(here.check_domain(fact, ufs)), hash(s), hash(e), hash(ufs["col"])  # cached
        sys.stdout.buffer.write(pickle.dumps((fact, ufs, s, e)))
        """
    )
    root = str(Path(spf.__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONHASHSEED": _other_seed(),
        "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return pickle.loads(done.stdout)


def test_objects_pickled_by_another_interpreter_hash_as_this_ones_do() -> None:
    fact, ufs, s, e = _pickled_elsewhere()
    fact_here, ufs_here, s_here, e_here = made()
    assert e == e_here
    assert hash(e) == hash(e_here)
    assert {e_here: 1}.get(e) == 1
    for atom, atom_here in zip(e.ordered(), e_here.ordered(), strict=True):
        assert hash(atom[0]) == hash(atom_here[0])
    assert s == s_here
    assert hash(s) == hash(s_here)
    assert hash(ufs["col"]) == hash(ufs_here["col"])
    assert e.xreplace({Sym("k"): Sym("j").aff()}) == e_here.xreplace({Sym("k"): Sym("j").aff()})
    assert fact.premise == fact_here.premise


def test_a_fact_pickled_by_another_interpreter_prints_its_check_domain() -> None:
    fact, ufs, _, _ = _pickled_elsewhere()
    fact_here, ufs_here, _, _ = made()
    text = str(check_domain(fact, ufs))
    assert "__" not in text
    assert text == str(check_domain(fact_here, ufs_here))
    Set(text, ufs)  # reads back (the run-time check builds its loops from this text)
