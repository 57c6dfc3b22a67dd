"""The PLDI'19 dependence set: how many of its expected-empty relations spf proves empty.

Mohammadi et al. (PLDI 2019, "Sparse computation data dependence simplification for
efficient compiler-generated inspectors") published, for eleven sparse kernels (Gauss-Seidel
CSR / BCSR, ILU0, IC0 CSC, left-looking LU and Cholesky, forward solves, SpMV, SpMM, gaxpy),
the data-dependence relations with uninterpreted functions, the UF declarations (domain,
range, monotonicity), the universally quantified properties the kernels' index arrays have
(triangularity, co-monotonicity such as ``rowptr(i) <= diagptr(i)``), and which relations
are unsatisfiable. The JSON files (IEGenLib's ``data/`` folder) live in
``../shared/data/pldi19/`` of a source checkout, or wherever ``SPF_PLDI19_DIR`` points.

:func:`read_file` turns each relation into an spf :class:`~spf.sets.Relation` with its UFs
declared (``Monotonic_Increasing`` is IEGenLib's *strictly* increasing, spf's
``"increasing"``) and its properties as :class:`~spf.sets.facts.Fact`\\ s
(``forall e1, e2: p => q``); :func:`prove` asks
:func:`~spf.sets.facts.is_empty_under` whether it is empty. A relation the paper expects to
be satisfiable and spf proves empty would be an unsound proof: the section reports such
relations loudly (there are none).

The files' texts need three repairs, applied by :func:`relation_text`: a leading parameter
list ``[m] -> { ... }`` is dropped (spf takes free names as parameters), a doubled opening
brace ``{{`` is made single (SpMM), and entries with an empty or missing ``Relation`` (gaxpy's
and left-looking Cholesky's headers) are skipped.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from spf.bench.common import Context, Section
from spf.errors import ParseError, SpfError
from spf.sets import UF, Relation
from spf.sets.facts import Fact, is_empty_under
from spf.sets.memo import clear_all

__all__ = ["Case", "Outcome", "data_dir", "prove", "read_all", "read_file", "relation_text"]

TARGET_PROVEN = 60
"""Issue 18's target: at least this many expected-empty relations proven empty ..."""
TARGET_SECONDS = 60.0
"""... in under this many seconds in all."""

_MONOTONIC = {
    "Monotonic_NONE": None,
    "Monotonic_Increasing": "increasing",
    "Monotonic_Nondecreasing": "nondecreasing",
}
_PARAMS = re.compile(r"^\s*\[[^\]]*\]\s*->\s*(?=\{)")


@dataclasses.dataclass(frozen=True)
class Case:
    """One relation of the set with what spf needs to decide it."""

    kernel: str
    """The file's stem (``ilu0``, ``gs_csr``, ...)."""
    index: str
    """The relation's ``Index`` in its file (its position when the file gives none)."""
    text: str
    """The relation as spf parses it (see :func:`relation_text`)."""
    expected_empty: bool
    """The paper's verdict: ``Expected`` is ``Not Satisfiable``."""
    ufs: dict[str, UF]
    """The file's UF declarations."""
    facts: tuple[Fact, ...]
    """The file's user-defined properties."""
    helps: str = ""
    """What the paper says detects the unsatisfiability (``What helps to detect unsat``)."""

    @property
    def label(self) -> str:
        return f"{self.kernel} #{self.index}"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """spf's answer on one case."""

    case: Case
    proven_empty: bool
    seconds: float
    error: str = ""
    """A parse or analysis error (the relation then counts as not proven)."""

    @property
    def unsound(self) -> bool:
        """Proven empty although the paper expects it satisfiable: a bug in spf."""
        return self.proven_empty and not self.case.expected_empty


def data_dir() -> Path | None:
    """Where the JSON files are: ``$SPF_PLDI19_DIR``, else ``shared/data/pldi19`` beside the
    source checkout (None when neither exists)."""
    env = os.environ.get("SPF_PLDI19_DIR")
    candidates = [Path(env)] if env else []
    root = Path(__file__).resolve().parents[2]
    candidates += [root.parent / "shared" / "data" / "pldi19", root / "shared" / "data" / "pldi19"]
    return next((p for p in candidates if p.is_dir() and any(p.glob("*.json"))), None)


def relation_text(text: str) -> str:
    """The file's relation text in spf's syntax (``""`` when there is none)."""
    text = text.strip()
    while text.startswith("{{") and text.count("{") > text.count("}"):
        text = text[1:].lstrip()
    return _PARAMS.sub("", text)


def _uf(decl: dict[str, Any], where: str) -> UF:
    kind = str(decl.get("Monotonicity", "Monotonic_NONE")).split("::")[-1]
    if kind not in _MONOTONIC:
        raise ParseError(f"{where}: UF {decl.get('Name')!r}: unknown monotonicity {kind!r}")
    return UF(
        str(decl["Name"]),
        domain=decl.get("Domain") or None,
        range=decl.get("Range") or None,
        monotonic=_MONOTONIC[kind],  # type: ignore[arg-type]
    )


def _fact(prop: dict[str, Any], ufs: dict[str, UF]) -> Fact:
    names = str(prop["UniQuantVar"]).strip().strip("[]")
    return Fact.parse(f"forall {names}: {prop['p']} => {prop['q']}", ufs)


def read_file(path: Path) -> list[Case]:
    """The relations of one JSON file, with the UFs and properties the file declares (in
    its first entry that has them; they apply to every relation of the file)."""
    doc = json.loads(path.read_text())
    groups = doc if doc and isinstance(doc[0], list) else [doc]
    cases: list[Case] = []
    for group in groups:
        ufs: dict[str, UF] = {}
        facts: list[Fact] = []
        for position, entry in enumerate(group, start=1):
            where = f"{path.name} entry {position}"
            for decl in entry.get("UFS", []):
                ufs[str(decl["Name"])] = _uf(decl, where)
            facts += [_fact(p, ufs) for p in entry.get("User Defined", [])]
            text = relation_text(str(entry.get("Relation", "")))
            if not text:
                continue
            cases.append(
                Case(
                    kernel=path.stem,
                    index=str(entry.get("Index", position)),
                    text=text,
                    expected_empty=str(entry.get("Expected", "")).strip() == "Not Satisfiable",
                    ufs=dict(ufs),
                    facts=tuple(facts),
                    helps=str(entry.get("What helps to detect unsat 1:", "")),
                )
            )
    return cases


def read_all(directory: Path) -> list[Case]:
    """Every relation of every JSON file in ``directory``, files in name order."""
    return [c for path in sorted(directory.glob("*.json")) for c in read_file(path)]


def prove(case: Case, monotonic: str = "declared") -> Outcome:
    """Parse the case's relation and decide its emptiness with the file's facts.

    ``monotonic="nondecreasing"`` weakens every strictly increasing UF to nondecreasing
    (what CSR pointer arrays with empty rows satisfy), to see which proofs need strictness.
    """
    ufs = case.ufs
    if monotonic == "nondecreasing":
        ufs = {
            n: dataclasses.replace(u, monotonic="nondecreasing") if u.monotonic else u
            for n, u in ufs.items()
        }
    t0 = time.perf_counter()
    try:
        rel = Relation(case.text, ufs)
        facts = case.facts if ufs is case.ufs else _refacts(case.facts, ufs)
        empty = is_empty_under(rel, facts)
    except SpfError as err:
        return Outcome(case, False, time.perf_counter() - t0, error=str(err).split("\n", 1)[0])
    return Outcome(case, empty, time.perf_counter() - t0)


def _refacts(facts: tuple[Fact, ...], ufs: dict[str, UF]) -> tuple[Fact, ...]:
    return tuple(Fact.parse(f.text, ufs) for f in facts)


# ==================================================================================== section
def run(ctx: Context) -> Section:
    sec = Section("pldi19")
    sec.line("### PLDI'19 dependence relations: proven empty with the declared properties\n")
    directory = data_dir()
    if directory is None:
        sec.line("The PLDI'19 JSON files were not found (set SPF_PLDI19_DIR); nothing measured.")
        sec.target(
            f">= {TARGET_PROVEN} expected-empty relations proven empty in < 60 s",
            "no data",
            False,
            "data files not found",
        )
        return sec
    clear_all()  # cold: nothing remembered from earlier sections
    cases = read_all(directory)
    outcomes = [prove(c) for c in cases]
    weak = [] if ctx.cfg.quick else [prove(c, "nondecreasing") for c in cases if c.expected_empty]
    weak_by = {o.case.label: o for o in weak}
    rows: list[list[str]] = []
    data: list[dict[str, Any]] = []
    for kernel in dict.fromkeys(c.kernel for c in cases):
        mine = [o for o in outcomes if o.case.kernel == kernel]
        expected = [o for o in mine if o.case.expected_empty]
        proven = sum(o.proven_empty for o in expected)
        weak_proven = sum(weak_by[o.case.label].proven_empty for o in expected if weak_by)
        seconds = sum(o.seconds for o in mine)
        rows.append(
            [kernel, str(len(mine)), str(len(expected)), str(proven), str(weak_proven),
             f"{seconds:.2f}"]
        )  # fmt: skip
        data.append(
            {"kernel": kernel, "relations": len(mine), "expected_empty": len(expected),
             "proven_empty": proven, "proven_nondecreasing": weak_proven, "seconds": seconds}
        )  # fmt: skip
    expected = [o for o in outcomes if o.case.expected_empty]
    proven = sum(o.proven_empty for o in expected)
    weak_total = sum(o.proven_empty for o in weak)
    total = sum(o.seconds for o in outcomes)
    rows.append(
        ["**total**", str(len(outcomes)), str(len(expected)), str(proven), str(weak_total),
         f"{total:.2f}"]
    )  # fmt: skip
    sec.table(
        ["kernel", "relations", "expected empty", "proven empty", "proven, UFs nondecreasing",
         "seconds"],
        rows,
    )  # fmt: skip
    sec.line(
        "Seconds: parsing and deciding every relation of the file, cold (the set layer's "
        "memo tables emptied first). *proven, UFs nondecreasing*: the same with every "
        "strictly increasing UF weakened to nondecreasing (CSR pointers with empty rows); "
        "not measured with --quick."
    )
    missed = [o for o in expected if not o.proven_empty]
    if missed:
        sec.line("\nNot proven empty:\n")
        for o in missed:
            why = o.error or f"no proof found (the paper uses: {o.case.helps or 'n/a'})"
            sec.line(f"- {o.case.label}: {why}")
    needs_strict = [o.case.label for o in weak if not o.proven_empty]
    if needs_strict:
        sec.line(f"\nProofs that need strict monotonicity: {', '.join(needs_strict)}.")
    unsound = [o for o in outcomes if o.unsound]
    if unsound:
        sec.line("\n**BUG: proven empty although the paper expects them satisfiable:**\n")
        for o in unsound:
            sec.line(f"- **{o.case.label}**: `{o.case.text}`")
    else:
        satisfiable = len(outcomes) - len(expected)
        sec.line(f"\nNone of the {satisfiable} expected-satisfiable relations is proven empty.")
    sec.line()
    sec.data.update(
        kernels=data, proven=proven, expected_empty=len(expected), seconds=total,
        not_proven=[o.case.label for o in missed], unsound=[o.case.label for o in unsound],
    )  # fmt: skip
    sec.target(
        f">= {TARGET_PROVEN} of the PLDI'19 expected-empty relations proven empty in < 60 s",
        f"{proven} of {len(expected)} in {total:.1f} s",
        proven >= TARGET_PROVEN and total < TARGET_SECONDS and not unsound,
        "issue 18" + (f"; {len(unsound)} UNSOUND" if unsound else ""),
    )
    return sec
