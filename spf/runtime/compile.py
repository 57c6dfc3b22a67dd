"""``Computation.compile``: generate, build with the target's compiler, load a ``Kernel``.

The functions here take the computation as its IR (:class:`~spf.ir.ComputationIR`,
``comp.ir``): generating, the remembered sources and the warm keys read nothing else."""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from spf.errors import ArgumentError, CodegenError
from spf.runtime.warm import source_identity

if TYPE_CHECKING:
    from spf.analysis.preconditions import Precondition
    from spf.codegen.signature import Signature
    from spf.codegen.unit import TranslationUnit
    from spf.ir import ComputationIR
    from spf.runtime import Kernel


_GENERATED: dict[str, TranslationUnit] = {}
"""Generated units by hash of (spf version, computation IR, target, name, check): a warm
compile skips dependence analysis and scanning (the IR holds schedules and tags). On disk
each is its record (:meth:`~spf.codegen.unit.TranslationUnit.to_data`) with a ``.sha256``
digest beside it; one that does not match or does not parse (an older spf wrote only the
source, as ``<key>.c``) is generated again. The last :data:`GENERATED_KEPT` stay in memory
(a process that compiles many states, a tuner's candidates, would keep them all)."""
GENERATED_KEPT = 256
"""Generated units :data:`_GENERATED` keeps (the oldest entered is dropped first: it is read
from the disk cache again when asked for)."""


def _generated_path(key: str, cache_dir: str | None) -> Path:
    from spf.runtime.cache import resolve_cache_dir

    return Path(resolve_cache_dir(cache_dir)) / "generated" / key[:2] / f"{key}.json"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read_generated(key: str, cache_dir: str | None) -> TranslationUnit | None:
    from spf.codegen.unit import TranslationUnit

    path = _generated_path(key, cache_dir)
    try:
        text = path.read_text()
        recorded = path.with_suffix(".sha256").read_text().strip()
        if recorded != _digest(text):
            return None
        return TranslationUnit.from_data(json.loads(text))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None


def _write_generated(key: str, unit: TranslationUnit, cache_dir: str | None) -> None:
    from spf.runtime.cache import atomic_write

    path = _generated_path(key, cache_dir)
    text = json.dumps(unit.to_data())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
        atomic_write(path.with_suffix(".sha256"), _digest(text) + "\n")
    except OSError:
        pass  # the cache is an optimisation; generating again is always correct


@dataclass(frozen=True)
class _Generated:
    """A C kernel generated and not yet built: what :func:`_finish` needs to load it."""

    ir: ComputationIR
    unit: TranslationUnit
    signature: Signature
    obligations: list[tuple[str, str]]
    remembered: str | None
    """Its warm key (:mod:`spf.runtime.warm`), None when the compile is not remembered."""
    argv: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    """The compiler and flags a remembered kernel is built with (what its entry names)."""


UnitKind = Literal["kernel", "light", "sparse_output"]
"""What a translation unit holds, for :func:`optimisation_flags`: ordinary kernels, code run
once per content of the index arrays (a wavefront's inspector stages), or the phases of a
sparse einsum output (:mod:`spf.index_notation.sparse_output`)."""


def optimisation_flags(
    cflags: Sequence[str] | None,
    kind: UnitKind = "kernel",
    light_flags: Sequence[str] | None = None,
) -> Sequence[str] | None:
    """The optimisation flags a C translation unit of ``kind`` is built with, the one place
    spf chooses them (None: :func:`~spf.runtime.build.default_opt_flags`, ``-O3
    -march=native`` unless the test suite's ``SPF_TEST_OPT_LEVEL`` names another level).
    The caller's ``cflags``, when given, always win. Otherwise:

    * ``"light"`` (a wavefront's inspector stages): ``light_flags`` (None: the default);
    * ``"sparse_output"`` (a sparse einsum output's sizing, filling, single pass and bound):
      :func:`~spf.runtime.build.light_opt_flags`, ``-O2 -march=native`` (the test suite's
      level when ``SPF_TEST_OPT_LEVEL`` names one). Their loops are
      index-array driven scalar code (marks, a dense row, a column list and its sort, merges):
      their run time was measured the same at ``-O2`` as at ``-O3`` within the noise, with
      the same cache misses (SpAdd, sorted and unsorted SpGEMM on 2-D Poisson and a random
      matrix, single pass and both phases: ``benchmarks/opt_levels.py``,
      ``docs/einsum.md``), and gcc builds them in about 2/3 of its ``-O3`` time;
    * ``"kernel"``: the default. A kernel with dense affine loops is what ``-O3`` pays on
      (vectorizing, unrolling and interchanging them), so a kind moves to ``-O2`` only where
      its kernels were measured as fast there.

    ``-O2`` and ``-O3`` give the same results bit for bit: neither reassociates floating
    point, and ``-std=c99`` keeps contractions off."""
    if cflags is not None:
        return cflags
    if kind == "light":
        return light_flags
    if kind == "sparse_output":
        from spf.runtime.build import light_opt_flags

        return light_opt_flags()
    return None


def compile_kernel(
    ir: ComputationIR,
    target: str = "c",
    name: str | None = None,
    check: bool = True,
    *,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> Kernel:
    """Generate ``ir`` for ``target``, compile it (cached on disk) and load it; a
    :class:`~spf.errors.PreconditionWarning` names the kernel's preconditions, if any."""
    from spf.runtime.kernel import Kernel

    if target == "c" and options:
        raise ArgumentError(f"compile: unknown option(s) {', '.join(sorted(options))}")
    _refuse_wavefront(ir)
    _check_cache_dir(cache_dir)
    cflags = optimisation_flags(cflags)
    flags: dict[str, Any] = {"openmp": openmp, "cflags": cflags, "cache_dir": cache_dir}
    got = _generate(ir, target, name, check, **flags, **options)
    if isinstance(got, Kernel):
        return got
    if target != "c":
        # Each other backend builds and loads in ``spf.runtime.<target>.compile_kernel``.
        backend = importlib.import_module(f"spf.runtime.{target}")
        kernel: Kernel = backend.compile_kernel(
            got.unit,
            got.signature,
            got.signature.function,
            openmp=openmp,
            cflags=cflags,
            cache_dir=cache_dir,
            **options,
        )
        _remember(got, kernel, got.unit.source, cache_dir=cache_dir)
        return kernel
    return _build_one(got, flags)


def _refuse_wavefront(ir: ComputationIR) -> None:
    """``CodegenError`` for an IR with a ``wavefront(...)`` tag: only
    ``Computation.compile`` builds its inspector and executor; compiled here it ran its loops
    in their sequential order (the tag ignored), and a wavefront over fused kernels relies on
    the inspector's order to keep their dependences."""
    for stmt in ir.stmts:
        for loop, tags in stmt.tags:
            for tag in tags:
                if tag.startswith("wavefront("):
                    raise CodegenError(
                        f"compile_kernel({ir.name}): loop {loop!r} of statement {stmt.name} "
                        f"is tagged {tag}, and only Computation.compile builds a wavefront (its "
                        "inspector and executor); compile_kernel would run the loop "
                        "sequentially, ignoring the tag. Compile it with "
                        "spf.Computation.from_ir(ir).compile(), or remove the wavefront tags "
                        "(spf.analysis.executor.serial_computation(ir)) for a sequential kernel"
                    )


def _check_cache_dir(cache_dir: object) -> None:
    """``cache_dir`` refused before any analysis when it is not a directory path (the warm
    look-ups would read a bad one as a miss, and only the build would say so)."""
    if cache_dir is not None:
        from spf.runtime.cache import resolve_cache_dir

        resolve_cache_dir(cache_dir)  # type: ignore[arg-type]


def _build_one(got: _Generated, flags: dict[str, Any]) -> Kernel:
    """Compile and load one generated C kernel on its own, and record its warm entry."""
    from spf.runtime.kernel import Kernel

    built = Kernel.build(got.signature, got.unit, **flags)
    _remember(got, built, got.unit.source, cache_dir=flags["cache_dir"])
    return built


def compile_kernels(
    kernels: Sequence[tuple[ComputationIR, str | None, bool]],
    library: str,
    *,
    light: int = 0,
    light_flags: Sequence[str] | None = None,
    kind: UnitKind = "kernel",
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> list[Kernel]:
    """:func:`compile_kernel` (target ``"c"``) of each ``(ir, name, check)`` of ``kernels``,
    the ones not remembered built together: one translation unit (:mod:`spf.runtime.combine`)
    and one compiler run, a shared library named after ``library`` that each kernel loads
    its own functions from. Sources that cannot share a unit are built one by one.

    The last ``light`` kernels (code run once per index-array content, such as a wavefront's
    inspector stages) form a second unit, ``library + "_light"``, built as
    :func:`compile_units` builds a light unit; the first is built as ``kind``
    (:func:`optimisation_flags`)."""
    cut = len(kernels) - light
    first = UnitParts(kernels[:cut], library, sparse_output=kind == "sparse_output")
    units = [first, UnitParts(kernels[cut:], f"{library}_light", True)]
    built = compile_units(
        units,
        light_flags=light_flags,
        openmp=openmp,
        cflags=cflags,
        cache_dir=cache_dir,
        **options,
    )
    return [k for part in built for k in part]


@dataclass(frozen=True)
class UnitParts:
    """The kernels of one translation unit of :func:`compile_units`."""

    kernels: Sequence[tuple[ComputationIR, str | None, bool]]
    """Each ``(ir, name, check)``, as :func:`compile_kernel` takes them."""
    library: str
    """The shared library's name."""
    light: bool = False
    """Code run once per index-array content (a wavefront's inspector stages): built with
    the light flags."""
    sparse_output: bool = False
    """The phases of a sparse einsum output (:func:`optimisation_flags`)."""
    unchecked: frozenset[int] = frozenset()
    """The positions in :attr:`kernels` of kernels only ever called with ``check=False`` (a
    wavefront's sorts, which read the levels its pass wrote): no checked function is printed
    for them (:func:`_generate`'s ``checked_calls``)."""

    @property
    def kind(self) -> UnitKind:
        """What :func:`optimisation_flags` builds the unit as."""
        return "light" if self.light else "sparse_output" if self.sparse_output else "kernel"


def compile_units(
    units: Sequence[UnitParts],
    *,
    light_flags: Sequence[str] | None = None,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> list[list[Kernel]]:
    """The kernels of each of ``units``, each unit's kernels not remembered built together
    (as :func:`compile_kernels` builds its first unit), in the order given.

    Each unit is built with the flags :func:`optimisation_flags` gives its kind: the given
    ``cflags``, or where there are none, ``light_flags`` for a ``light`` unit (None: spf's
    default flags) and ``-O2`` for a sparse output's. Each unit's compiler starts as soon as the
    unit is generated, on a thread of its own, so one unit compiles while this thread
    generates the next (a wavefront's executor while its inspector stages are generated);
    the kernels are then loaded on this thread, in order (each finds its library built and
    cached). A unit whose kernels are all remembered, or whose library is cached (one that
    several computations share, such as a wavefront's counting sorts), runs no compiler."""
    built, _ = compile_units_deferring(
        units,
        (),
        light_flags=light_flags,
        openmp=openmp,
        cflags=cflags,
        cache_dir=cache_dir,
        **options,
    )
    return built


def compile_units_deferring(
    units: Sequence[UnitParts],
    deferred: Sequence[UnitParts],
    *,
    light_flags: Sequence[str] | None = None,
    openmp: bool = True,
    cflags: Sequence[str] | None = None,
    cache_dir: str | None = None,
    **options: Any,
) -> tuple[list[list[Kernel]], list[DeferredUnit]]:
    """:func:`compile_units` of ``units``, and each of ``deferred`` generated (its analysis
    done and its errors raised here, while the compilers of ``units`` run) but compiled and
    loaded only when :meth:`DeferredUnit.kernels` is first asked: a wavefront's executor,
    which a first call that plans the loop serial never runs."""
    if options:
        raise ArgumentError(f"compile: unknown option(s) {', '.join(sorted(options))}")
    _check_cache_dir(cache_dir)
    groups = [(u, optimisation_flags(cflags, u.kind, light_flags)) for u in units if u.kernels]
    built: list[_Unit] = []
    later: list[DeferredUnit] = []

    def generate_deferred() -> None:
        for part in deferred:
            flags = optimisation_flags(cflags, part.kind, light_flags)
            later.append(DeferredUnit(_Unit(part, openmp, flags, cache_dir)))

    if len(groups) == 1 and not deferred:
        part, flags = groups[0]
        built.append(_Unit(part, openmp, flags, cache_dir))
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=max(len(groups), 1)) as pool:
            running = []
            for part, flags in groups:
                built.append(_Unit(part, openmp, flags, cache_dir))
                if built[-1].compiles:
                    running.append(pool.submit(built[-1].compile))
            generate_deferred()
            for r in running:
                r.result()
    loaded = iter([u.build() for u in built])
    return [next(loaded) if u.kernels else [] for u in units], later


class DeferredUnit:
    """A generated unit (:func:`compile_units_deferring`) compiled and loaded on first use."""

    def __init__(self, unit: _Unit) -> None:
        self._unit = unit
        self._lock = threading.Lock()
        self._kernels: list[Kernel] | None = None

    @property
    def signatures(self) -> list[Signature]:
        """Each kernel's signature (its arguments and preconditions), known without
        compiling."""
        return [g.signature if isinstance(g, _Generated) else g._signature for g in self._unit.got]

    @property
    def units(self) -> list[TranslationUnit]:
        """Each kernel's generated source record, known without compiling."""
        return [g.unit for g in self._unit.got]

    @property
    def compiles(self) -> bool:
        """Whether loading the kernels runs a compiler (False: every kernel remembered)."""
        return bool(self._unit.todo)

    def kernels(self) -> list[Kernel]:
        """The unit's kernels, compiled (cached like any build) and loaded on the first
        call; one build when threads race."""
        with self._lock:
            if self._kernels is None:
                self._kernels = self._unit.build()
            return self._kernels


class _Unit:
    """Kernels generated for one translation unit (built by :meth:`build`)."""

    def __init__(
        self,
        parts: UnitParts,
        openmp: bool,
        cflags: Sequence[str] | None,
        cache_dir: str | None,
    ) -> None:
        from spf.runtime.combine import combine

        self.kernels, self.library = parts.kernels, parts.library
        self.flags: dict[str, Any] = {"openmp": openmp, "cflags": cflags, "cache_dir": cache_dir}
        self.got = [
            _generate(ir, "c", name, check, **self.flags, checked_calls=k not in parts.unchecked)
            for k, (ir, name, check) in enumerate(parts.kernels)
        ]
        self.todo = [g for g in self.got if isinstance(g, _Generated)]
        self.unit = combine([g.unit for g in self.todo]) if len(self.todo) > 1 else None
        self.source = self.unit.source if self.unit is not None else None

    @property
    def compiles(self) -> bool:
        """Whether the unit has a library to compile: one shared unit, or one kernel that
        is not remembered (kernels that cannot share a unit are compiled by :meth:`build`,
        one by one)."""
        return self.source is not None or len(self.got) == len(self.todo) == 1

    def compile(self) -> None:
        """Run the compiler on the unit (a cached library runs none) as :meth:`build` would,
        which then loads it."""
        from spf.runtime.build import build

        if self.source is not None:
            build(self.source, name=self.library, **self.flags)
        else:  # one kernel, as Kernel.build names and builds it
            (got,) = self.todo
            build(got.unit.source, name=got.signature.function, **self.flags)

    def build(self) -> list[Kernel]:
        """Compile the unit (or each kernel, when they cannot share one) and load each kernel."""
        from spf.runtime.kernel import Kernel

        got, todo, source, flags = self.got, self.todo, self.source, self.flags
        if source is None:  # each kernel built as generated (generating it again cost ~1%)
            return [g if isinstance(g, Kernel) else _build_one(g, flags) for g in got]
        parts = [(g.signature, g.unit) for g in todo]
        built = Kernel.build_many(parts, source, self.library, **flags)
        done = dict(zip(map(id, todo), built, strict=True))
        for g, kernel in zip(todo, built, strict=True):
            _remember(g, kernel, source, library=self.library, cache_dir=flags["cache_dir"])
        return [done[id(g)] if isinstance(g, _Generated) else g for g in got]


def _generate(
    ir: ComputationIR,
    target: str,
    name: str | None,
    check: bool,
    *,
    openmp: bool,
    cflags: Sequence[str] | None,
    cache_dir: str | None,
    checked_calls: bool = True,
    **options: Any,
) -> Kernel | _Generated:
    """The remembered kernel of ``ir`` (a warm compile, :mod:`spf.runtime.warm`), or its
    generated source and signature (the generated source cached by a hash of the state).
    ``checked_calls=False``: a C kernel no call runs checked, printed without its checked
    function (:mod:`spf.codegen.arg_checks`)."""
    from spf.analysis.preconditions import warn_preconditions
    from spf.codegen import TARGETS

    if target not in TARGETS:
        raise CodegenError(f"compile: unknown target {target!r}; available: {', '.join(TARGETS)}")
    remembered = None
    build = _remembered_build(target, openmp, cflags, options)
    argv: list[str] = []
    flags: list[str] = []
    if build is not None:  # a state compiled before loads without analysis or codegen
        from spf.runtime import warm

        argv, flags, extra, kind = build
        if not checked_calls:
            extra = [*extra, "no checked function"]
        remembered = warm.warm_key(ir, name or ir.name, check, argv=argv, flags=flags, extra=extra)
        if remembered is not None:
            hit = warm.load(remembered, ir, argv=argv, flags=flags, cache_dir=cache_dir, kind=kind)
            if hit is not None:
                warn_preconditions(ir.name, hit.preconditions)
                return hit
    from spf.codegen import generate, printer_options
    from spf.codegen.program import c_function_name, signature

    fname = c_function_name(name or ir.name)
    printing = {k: v for k, v in options.items() if k in printer_options(target)}
    if target == "c":  # the checked function a call with check=True runs (arg_checks.py)
        printing["arg_checks"] = checked_calls
    key = hashlib.sha256(
        "\0".join(
            [
                source_identity(),  # a changed printer never reuses older C
                ir.text,
                target,
                fname,
                str(check),
                repr(sorted(printing.items())),
            ]
        ).encode()
    ).hexdigest()
    unit = _GENERATED.get(key) or _read_generated(key, cache_dir)
    preconditions = None
    if unit is None:
        unit, preconditions = generate(ir, target, fname, check, **printing)
        _write_generated(key, unit, cache_dir)
    if key not in _GENERATED:
        while _GENERATED and len(_GENERATED) >= GENERATED_KEPT:
            del _GENERATED[next(iter(_GENERATED))]
        _GENERATED[key] = unit
    if preconditions is None:
        preconditions = bounds_preconditions(ir, check)
    warn_preconditions(ir.name, preconditions)
    obligations = bounds_obligations(ir, check)
    sig = with_obligations(signature(ir, fname), obligations, ir)
    sig = replace(sig, preconditions=preconditions)
    return _Generated(ir, unit, sig, obligations, remembered, tuple(argv), tuple(flags))


def _remembered_build(
    target: str, openmp: bool, cflags: Sequence[str] | None, options: dict[str, Any]
) -> tuple[list[str], list[str], list[str], type[Kernel] | None] | None:
    """The compiler, flags, further key parts and kernel class of a compile that is
    remembered (:mod:`spf.runtime.warm`): target ``"c"``, and target ``"mpi"`` with no
    option but ``compiler`` (an unknown option takes the path that names it); else None."""
    from spf.runtime.build import compile_flags, compiler_argv

    if target == "c":
        return compiler_argv(None, "c"), compile_flags(openmp=openmp, cflags=cflags), [], None
    if target != "mpi" or not set(options) <= {"compiler"}:
        return None
    from spf.runtime import mpi

    compiler = options.get("compiler", mpi.MPICC)
    if not isinstance(compiler, str) or not compiler.strip():
        return None  # the build names what is wrong with it
    flags = compile_flags(openmp=openmp, cflags=cflags)
    return compiler_argv(compiler, "c"), flags, mpi.remembered_parts(compiler), mpi.MPIKernel


def _remember(
    got: _Generated,
    kernel: Kernel,
    library_source: str,
    *,
    cache_dir: str | None,
    library: str | None = None,
) -> None:
    """Record the warm entry of a kernel just built (from ``library_source``, its own source
    or the translation unit it shares with others, built under the name ``library``) with
    the compiler and flags it was keyed by."""
    if got.remembered is None:
        return
    from spf.runtime import warm

    library_key = warm.library_key(library_source, argv=got.argv, flags=got.flags)
    shared = None if library is None else (library, library_source)
    warm.store(
        got.remembered,
        kernel,
        got.signature,
        library_key,
        got.obligations,
        cache_dir,
        library=shared,
    )


def bounds_preconditions(ir: ComputationIR, check: bool) -> tuple[Precondition, ...]:
    """The parameter conditions a call with ``check`` verifies (empty without ``check``):
    accesses in bounds for some parameter values only (spf.analysis.preconditions)."""
    if not check:
        return ()
    from spf.analysis import check_bounds

    return check_bounds(ir).preconditions


def bounds_obligations(ir: ComputationIR, check: bool) -> list[tuple[str, str]]:
    """The bounds obligations a call with ``check`` verifies: (fact text, how a failed check
    names it), empty without ``check`` or UF calls (every access is then decided statically)."""
    if not check or not ir.ufs:
        return []
    from spf.analysis import check_bounds

    return [
        (
            o.text,
            f"the bounds of {o.access} in statement {o.stmt} (data space {o.data_space!r}: "
            f"{o.text!r})",
        )
        for o in check_bounds(ir).obligations
    ]


def with_obligations(
    sig: Signature, obligations: Sequence[tuple[str, str]], ir: ComputationIR
) -> Signature:
    """``sig`` whose facts are its assumptions and then ``obligations`` (parsed with the UFs
    and symbolic constants of ``ir``)."""
    if not obligations:
        return sig
    from spf.runtime.fact_check import assumption_label
    from spf.sets.facts import Fact

    facts = [*sig.facts]
    labels = [assumption_label(f) for f in sig.facts]
    for text, label in obligations:
        facts.append(Fact.parse(text, ir.uf_decls, ir.params))
        labels.append(label)
    return replace(sig, facts=tuple(facts), fact_labels=tuple(labels))
