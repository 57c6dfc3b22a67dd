"""Shared test setup: tool markers that auto-skip, the SuiteSparse fixture, hypothesis profile.

Markers (registered in ``pyproject.toml``) skip a test only when the tool is truly absent:

* ``requires_nvcc``: ``nvcc`` on ``PATH`` (compile only).
* ``requires_gpu``: a GPU is present (``nvidia-smi -L`` succeeds).
* ``requires_mpi``: ``mpicc`` and ``mpiexec`` on ``PATH``.
* ``requires_graphviz``: ``dot`` on ``PATH``.

``make test`` builds kernels at ``-O0`` (``SPF_TEST_OPT_LEVEL=0``,
:func:`spf.runtime.build.default_opt_flags`); a test marked ``default_flags`` runs with spf's
own ``-O3`` (:func:`pytest_runtest_setup`).
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import gc
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from spf.runtime import threads
from spf.runtime.build import TEST_OPT_LEVEL_ENV

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# "ci" (the default) replays the same examples on every run so `make test` is deterministic,
# 50 of them for the tests that do not set their own count (tests/unit/frontend/test_errors.py's
# three fuzz tests: the file took 14.1-14.4 s CPU at 100, 8.0-9.3 s at 50, loaded machine);
# "explore" draws new random examples each run (HYPOTHESIS_PROFILE=explore) to hunt for bugs,
# whose counterexamples then become regression tests.
settings.register_profile("ci", deadline=None, max_examples=50, derandomize=True)
settings.register_profile("explore", deadline=None, max_examples=300)
settings.register_profile("dev", deadline=None, max_examples=20)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The ranks of the suite's MPI jobs (Open MPI's mpiexec, every launch inheriting this
# environment) give up the core while they wait for another rank instead of polling at full
# speed: check_protocol.py on 2 ranks, twice each way alternated on the loaded machine, took
# 2.3-2.4 s CPU against 2.6-2.7 s. Only the waiting changes, not what any rank computes.
os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")

# Parallel kernels run with every OpenMP thread they ask for, however busy the machine: the
# suite checks parallel schedules by running them in parallel (spf.runtime.threads would
# otherwise run them on one thread when other processes hold the cores). The tests of that
# cap turn it on themselves (tests/unit/runtime/test_threads.py).
# The governor read the environment when spf was imported (above, by spf.runtime.build): it
# is set from the variable again, or this process's kernels would still be capped.
os.environ.setdefault(threads.ENV, "0")
threads.set_adaptive(threads.ThreadGovernor().enabled)

SUITESPARSE_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "suitesparse"


def _have(*commands: str) -> bool:
    return all(shutil.which(command) is not None for command in commands)


@functools.cache
def _have_gpu() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        result = subprocess.run(
            ["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0 and "GPU" in result.stdout


_REQUIREMENTS: dict[str, tuple[Callable[[], bool], str]] = {
    "requires_nvcc": (lambda: _have("nvcc"), "nvcc not found on PATH"),
    "requires_gpu": (_have_gpu, "no GPU (`nvidia-smi -L` failed)"),
    "requires_mpi": (lambda: _have("mpicc", "mpiexec"), "mpicc/mpiexec not found on PATH"),
    "requires_graphviz": (lambda: _have("dot"), "Graphviz `dot` not found on PATH"),
}


_OPT_LEVEL_SAVED = pytest.StashKey["str | None"]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``default_flags`` (vectorised schedules, built as users build them, and
    tests of the flags themselves) builds with spf's default flags:
    the suite's lower level (``SPF_TEST_OPT_LEVEL``, set by ``make test``) is unset from
    before its fixtures run until its teardown."""
    if item.get_closest_marker("default_flags") is not None:
        item.stash[_OPT_LEVEL_SAVED] = os.environ.pop(TEST_OPT_LEVEL_ENV, None)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    saved = item.stash.get(_OPT_LEVEL_SAVED, None)
    if saved is not None:
        os.environ[TEST_OPT_LEVEL_ENV] = saved


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip tests whose ``requires_*`` marker names a tool that is absent here, and run the
    ``slow`` tests first (otherwise in collection order): the workers of a parallel run
    (``make test``: ``-n auto --dist worksteal``) then share the long tests out at the start
    and end the run together on short ones, instead of one worker finishing a long test
    found last while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    available: dict[str, bool] = {}
    for item in items:
        for marker, (check, reason) in _REQUIREMENTS.items():
            if item.get_closest_marker(marker) is None:
                continue
            if marker not in available:
                available[marker] = check()
            if not available[marker]:
                item.add_marker(pytest.mark.skip(reason=reason))


CPU_LOG_ENV = "SPF_TEST_CPU_LOG"
"""``SPF_TEST_CPU_LOG=<folder>``: every process of the run (xdist's controller and each
worker) writes ``<worker>-<pid>.tsv`` there: a line per test (node id, CPU seconds of the
process, of the children it waited for, wall seconds, from setup to teardown) and lines
``#configured``, ``#collected`` and ``#end`` with the process's CPU so far and its garbage
collector's (``.ci/cpu_report.py`` sums them up by file and test)."""


def _cpu_log(line: str) -> None:
    folder = os.environ.get(CPU_LOG_ENV)
    if not folder:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{worker}-{os.getpid()}.tsv"), "a") as log:
        log.write(line + "\n")


def _cpu_now() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


_GC_SECONDS = [0.0, 0.0]
"""CPU seconds in the cyclic garbage collector so far, and when the running pass began."""


def _gc_timed(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _GC_SECONDS[1] = time.process_time()
    else:
        _GC_SECONDS[0] += time.process_time() - _GC_SECONDS[1]


def _cpu_mark(name: str) -> None:
    """A ``#name`` line: the process's CPU so far, its waited-for children's, the time, and
    the garbage collector's CPU since ``#configured`` (when the log is on)."""
    if not os.environ.get(CPU_LOG_ENV):
        return
    if name == "configured":
        gc.callbacks.append(_gc_timed)
    own, children = _cpu_now()
    _cpu_log(f"#{name}\t{own:.3f}\t{children:.3f}\t{time.time():.3f}\t{_GC_SECONDS[0]:.3f}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not os.environ.get(CPU_LOG_ENV):
        yield
        return
    own, children, wall = (*_cpu_now(), time.perf_counter())
    yield
    own_after, children_after = _cpu_now()
    _cpu_log(
        f"{item.nodeid}\t{own_after - own:.3f}\t{children_after - children:.3f}"
        f"\t{time.perf_counter() - wall:.3f}"
    )


def pytest_collection_finish() -> None:
    """The garbage collector, off while the process collected (:func:`pytest_collection`),
    runs again; what the collection made (modules, test items, their marks and parameters:
    kept to the end) leaves its generations, so that its full passes during the tests no
    longer walk it each time."""
    gc.freeze()
    gc.enable()
    _cpu_mark("collected")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """The garbage collector stays off while the process collects (its passes over the
    growing heap of modules and test items took 3.2 s of each worker's 16 s collection in a
    fresh clone's ``make test``; :func:`pytest_collection_finish` turns it on again).

    Each xdist worker of a fresh checkout writes pytest's assert-rewritten bytecode of the
    test modules before it collects them, worker k of n starting k/n of the way down the list
    (and going round) and skipping every module whose bytecode is already written: each
    rewrites about 1/n of them, then imports the modules the others rewrote. Collected in the
    same order, the two workers of ``make test`` rewrote every module side by side, each
    paying all of it. Only where bytecode is written (``make test``, not under
    ``PYTHONDONTWRITEBYTECODE``); the bytecode is what pytest's own import hook writes, and
    reads back when it imports the module (:mod:`_pytest.assertion.rewrite`)."""
    if session.config.pluginmanager.get_plugin("dsession") is not None:
        return  # xdist's controller: collects nothing, and keeps its garbage collector on
    gc.disable()  # the collection's objects live to the end: they are no garbage to look for
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is None or sys.dont_write_bytecode:
        return
    try:
        from _pytest.assertion import rewrite

        rewrite.get_cache_dir, rewrite.try_makedirs, rewrite._rewrite_test, rewrite._write_pyc  # noqa: B018
    except (ImportError, AttributeError):  # another pytest: collection rewrites as before
        return
    state = session.config.stash.get(rewrite.assertstate_key, None)
    if state is None or state.hook is None:  # assertions not rewritten (--assert=plain)
        return
    files = _test_modules(Path(__file__).resolve().parent, session.config.getini("python_files"))
    first = len(files) * int(workerinput["workerid"][2:]) // int(workerinput["workercount"])
    for path in files[first:] + files[:first]:
        cache = rewrite.get_cache_dir(path)
        pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
        if pyc.is_file() or not rewrite.try_makedirs(cache):
            continue
        try:
            source_hash, code = rewrite._rewrite_test(path, session.config)
        except Exception:  # a syntax error, a file gone: its collection reports it as usual
            continue
        rewrite._write_pyc(state, code, source_hash, pyc)


def _test_modules(root: Path, patterns: list[str]) -> list[Path]:
    """The test modules and ``conftest.py`` files under ``root`` (``python_files``)."""
    found = [
        path
        for path in root.rglob("*.py")
        if path.name == "conftest.py" or any(fnmatch.fnmatch(path.name, p) for p in patterns)
    ]
    return sorted(path for path in found if "__pycache__" not in path.parts)


@pytest.fixture(autouse=True)
def _openmp_team_kept() -> Iterator[None]:
    """Each test starts with the OpenMP thread count the one before it found: a test that
    sets it and leaves it (a benchmark run in-process sets its ``--threads``) would change the
    next tests of its worker, whose einsums and plans take their path by the team (a fresh
    interpreter's remembered einsum then differs: tests/unit/test_einsum_remembered.py)."""
    before = threads.default_team()
    yield
    gomp = threads.openmp_library()
    if gomp is not None and threads.default_team() != before:
        gomp.omp_set_num_threads(before)


@pytest.fixture(scope="session")
def suitesparse_dir() -> Path:
    """The shared SuiteSparse ``.mtx`` matrices (``../shared/data/suitesparse``); skip if absent."""
    if not SUITESPARSE_DIR.is_dir():
        pytest.skip(f"SuiteSparse matrices not found at {SUITESPARSE_DIR}")
    return SUITESPARSE_DIR


GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the expected files under tests/golden/ instead of comparing with them",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """``golden("ir/gemm.txt", text)``: ``text`` must equal the file under ``tests/golden/``;
    with ``pytest --update-golden`` the file is (re)written instead (review the diff)."""
    update = bool(request.config.getoption("--update-golden"))

    def check(relative: str, text: str) -> None:
        path = GOLDEN_DIR / relative
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        assert path.is_file(), f"no golden file {path}; run pytest --update-golden to write it"
        expected = path.read_text()
        if text != expected:
            pytest.fail(golden_mismatch(relative, expected, text), pytrace=False)

    return check


@pytest.fixture
def fresh_python() -> Callable[..., list[str]]:
    """``fresh_python(code, **env)``: the lines ``code`` prints, run in a fresh interpreter
    that imports this checkout's spf (what a new process loads, and when), with ``env`` added
    to the environment (``SPF_CACHE_DIR=...`` for a cold cache)."""
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])

    def run(code: str, **env: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
            env={**os.environ, "PYTHONPATH": path, **env},
        )
        return done.stdout.splitlines()

    return run


def golden_mismatch(relative: str, expected: str, actual: str) -> str:
    """The failure message of a golden comparison: a unified diff from the file under
    ``tests/golden/`` to the text the test produced, and how to accept the new text."""
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile=f"tests/golden/{relative}",
        tofile=f"{relative} (generated now)",
    )
    lines = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff
    ]
    return (
        f"{relative} differs from its golden file:\n{''.join(lines)}"
        "If the change is intended, check this diff, then run "
        "`pytest --update-golden` on this test and commit the rewritten file."
    )


CACHE_ENV = "SPF_CACHE_DIR"
"""spf's kernel cache folder (:mod:`spf._cachedir`); the suite sets it before spf runs."""

SHARED_CACHE_ENV = "SPF_TEST_SHARED_CACHE"
"""Names the kernel cache that every process of one test run shares (:func:`shared_cache`)."""

_SHARED_CACHE_OWNED = pytest.StashKey[str]()
_USER_CACHE = pytest.StashKey["str | None"]()


def pytest_configure(config: pytest.Config) -> None:
    """The first process of a run (xdist's controller, or the only one) makes the shared
    cache folder and names it in the environment, which the xdist workers it starts next
    inherit; a worker finds it set and uses the same folder.

    The folder is also every test's default kernel cache (``SPF_CACHE_DIR``, inherited by the
    interpreters tests start): the suite never writes to the user's own cache, starts cold
    on every run as a fresh clone does, and builds each distinct kernel once per run in all
    its processes. ``SPF_TEST_SHARED_CACHE=<folder>`` set beforehand keeps the kernels
    between runs (the folder is then neither made nor removed)."""
    _cpu_mark("configured")
    folder = os.environ.get(SHARED_CACHE_ENV)
    if not folder:
        folder = tempfile.mkdtemp(prefix="spf-test-cache-")
        os.environ[SHARED_CACHE_ENV] = folder
        config.stash[_SHARED_CACHE_OWNED] = folder
    config.stash[_USER_CACHE] = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = folder


def pytest_unconfigure(config: pytest.Config) -> None:
    _cpu_mark("end")
    user = config.stash.get(_USER_CACHE, None)
    if user is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = user
    folder = config.stash.get(_SHARED_CACHE_OWNED, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(SHARED_CACHE_ENV, None)


@pytest.fixture(scope="session")
def shared_cache() -> Path:
    """A kernel cache (``SPF_CACHE_DIR``) for tests that must not use the user's own: one
    temporary folder for the whole run, shared by every xdist worker, so a kernel that the
    docs pages, the examples and the CLI tests all build is compiled once per run, not once
    per test (the cache is safe for concurrent writers: every file is written to a temporary
    name and renamed into place). Removed when the run ends."""
    folder = Path(os.environ[SHARED_CACHE_ENV])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


MEMO_FOLDERS = (*(f"{k:02x}" for k in range(256)), "warm", "generated", "einsum", "parser")
"""The folders of an spf cache that only remember what a computation gives (libraries by a
hash of their source, remembered compiles, generated sources, einsum kernels, parser tables):
sharing them changes no result. The rest (``tune``, ``formats_tune``: the records of searches,
which decide ``reused``) is not shared."""


@pytest.fixture(scope="session")
def kernel_cache_factory(
    tmp_path_factory: pytest.TempPathFactory, shared_cache: Path
) -> Callable[[str], Path]:
    """``make(name)``: a new, empty-looking ``SPF_CACHE_DIR`` whose :data:`MEMO_FOLDERS` are
    links to the run's :func:`shared_cache`; a test (or a page of the docs) sees no search
    record of another, but builds no kernel another has built."""

    def make(name: str) -> Path:
        folder = tmp_path_factory.mktemp(name)
        for memo in MEMO_FOLDERS:
            (shared_cache / memo).mkdir(exist_ok=True)
            (folder / memo).symlink_to(shared_cache / memo, target_is_directory=True)
        return folder

    return make


@pytest.fixture
def kernel_cache(kernel_cache_factory: Callable[[str], Path]) -> Path:
    """A cache of the test's own that shares the run's compiled kernels
    (:func:`kernel_cache_factory`)."""
    return kernel_cache_factory("spf-cache")
