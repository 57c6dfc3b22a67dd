"""Target "mpi" end to end: C + MPI generated, built with mpicc and run on real ranks.

The rank checks run ``tests/e2e/mpi_progs/check_mpi.py`` under ``mpiexec -n 2`` and ``-n 4``
(in the run's one job per rank count: fixture ``mpi_checks``, tests/e2e/conftest.py)
through :func:`spf.mpi.run` (a subprocess with a timeout: a deadlock fails the test instead of
hanging it). On every rank the program compares its result with the sequential one: the
EXAMPLES.md ``dscale``, the distributed two-stage blur with its halo exchange
(examples/mpi_blur.py) against the same stages compiled for target "c" over the whole image
and numpy, and the row-distributed CSR SpMV (examples/mpi_spmv.py) against scipy (empty rows,
a rank with no rows, int32 and int64 index arrays). The pytest process itself never imports
mpi4py (importing it initialises MPI).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import spf
from spf import kernels
from spf.errors import CodegenError, SpfError
from spf.mpi import MPITimeoutError, command, run

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.e2e.conftest import MpiChecks

ROOT = Path(__file__).resolve().parents[2]
PROGS = Path(__file__).resolve().parent / "mpi_progs"
TIMEOUT = 240.0  # seconds for a whole job; the checks take ~10-20 s on 2 shared cores
# pytest-timeout of a test of the run's shared MPI job (fixture mpi_checks): it may run the whole
# job of its rank count (at most the sum of its programs' timeouts, 1,340 s), or wait for the
# worker running it.
MPI_CHECKS_TIMEOUT = 1500

pytestmark = pytest.mark.requires_mpi


@pytest.fixture(scope="module")
def mpi_env(shared_cache: Path) -> dict[str, str]:
    """Environment of launched jobs: the run's shared cache (hermetic), and this
    checkout's spf first on the path (the ranks would otherwise import an installed copy)."""
    import os

    env = dict(os.environ)
    env["SPF_CACHE_DIR"] = str(shared_cache)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _example(name: str) -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------- generated code


def _blur_source() -> str:
    blur = _example("mpi_blur").blur  # type: ignore[attr-defined]
    comp: spf.Computation = blur()
    return comp.codegen("mpi")


def test_signature_takes_the_communicator_first() -> None:
    src = _blur_source()
    assert "#include <mpi.h>" in src
    assert re.search(r"void mpi_blur\(MPI_Comm comm, int64_t NL, int64_t P, int64_t W, ", src)
    assert "const int64_t q = spf_rank;" in src
    assert "MPI_Comm_rank(comm, &spf_rank);" in src
    # P == 1 gives a rank loop of one iteration, which stays a rank loop: only rank 0 runs it
    body = src[src.index("void mpi_blur(") :]
    assert body.count("const int64_t q = spf_rank;") == 2, body
    assert "if (q >= 0 && q <= 0)" in body
    assert body.count("stage1(q, i, j);") == 2
    assert "spf_rank ==" not in body
    assert "stage1(0" not in body


def test_the_exchange_written_in_tiramisu_order_generates_the_same_code() -> None:
    """Stages created first, the send/receive after them, then ordered with ``then``: the
    operations take the place the order gives them (API.md section 10), not their creation
    order, so the anti dependence of stage1's read of the halo on the receive is not refused
    and the code is the creation-order code (operations named s2..s5 instead of s0..s3)."""
    blur = _example("mpi_blur").blur  # type: ignore[attr-defined]
    late: spf.Computation = blur(tiramisu_order=True)
    assert [s.name for s in late.stmts] == ["stage1", "stage2", "s2", "s3", "s4", "s5"]
    renamed = re.sub(r"\bs([2-5])\b", lambda m: f"s{int(m.group(1)) - 2}", late.codegen("mpi"))
    assert renamed == _blur_source()


def test_exchange_is_posted_then_waited_before_the_first_reader() -> None:
    src = _blur_source()
    body = src[src.index("void mpi_blur(") :]
    posts = [body.index(f"s{k}(q);") for k in range(4)]
    wait = body.index("spf_mpi_waitall(&spf_mpi);")
    stage1 = body.index("stage1(q, i, j);")
    assert max(posts) < wait < stage1, body
    # sends and receives are non-blocking, of W doubles at the operation's element
    assert re.search(r"#define s0\(q\) spf_mpi_isend\(.*&a\(1, 0\), \(int64_t\) W", src)
    assert re.search(r"#define s3\(q\) spf_mpi_irecv\(.*&a\(NL \+ 1, 0\)", src)
    assert "MPI_DOUBLE" in src
    assert body.rstrip().endswith(
        "spf_mpi_waitall(&spf_mpi);\n  free(spf_mpi.req);\n  free(spf_mpi.expect);\n}"
    )


@pytest.mark.parametrize("name", ["mpi_dscale", "mpi_blur", "mpi_spmv"])
def test_generated_code_compiles_warning_free_with_mpicc(name: str, tmp_path: Path) -> None:
    module = _example(name)
    comp: spf.Computation = getattr(module, name.removeprefix("mpi_"))()
    path = tmp_path / f"{name}.c"
    path.write_text(comp.codegen("mpi"))
    done = subprocess.run(
        ["mpicc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_unit_names_the_parameters_that_decide_who_communicates() -> None:
    """MPIKernel agrees on them before a call (a rank passing P - 1 hung its neighbour):
    the blur's P bounds its rank loops; dscale does not communicate."""
    from spf.codegen import codegen_unit
    from spf.codegen.unit import TranslationUnit

    blur = _example("mpi_blur").blur()  # type: ignore[attr-defined]
    unit = codegen_unit(blur.ir, "mpi", "mpi_blur", True)
    assert unit.agreed == ("P",)
    assert TranslationUnit.from_data(unit.to_data()).agreed == ("P",)
    dscale = _example("mpi_dscale").dscale()  # type: ignore[attr-defined]
    assert codegen_unit(dscale.ir, "mpi", "dscale", True).agreed == ()


def test_barrier_waits_then_calls_mpi_barrier() -> None:
    comp = spf.Computation("bar")
    comp.add_data_space("a", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i) = $a$(i) + q;", "{[q,i]: 0 <= q < P && 0 <= i < N}", "{[q,i]->[0,q,0,i,0]}"
        )
    )
    s.distribute("q")
    comp.barrier_at(s, "q")
    src = comp.codegen("mpi")
    assert "MPI_Barrier(r->comm);" in src
    body = src[src.index("void bar(") :]
    assert body.index("s0(q, i);") < body.index("s1(q);")


def test_operation_inside_a_parallel_loop_is_refused() -> None:
    comp = spf.Computation("par")
    comp.add_data_space("x", "double", shape=("P", "B"))
    op = comp.send("{[q,p]: 0 <= q < P && 0 <= p < P && p != q}", "x", ["q", "0"], "B", "p")
    op.parallelize("p")
    with pytest.raises(CodegenError, match=r"inside loop 'p'.*parallel"):
        comp.codegen("mpi", check=False)


def test_argument_named_comm_is_refused() -> None:
    comp = spf.Computation("clash")
    comp.add_data_space("comm", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$comm$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i]->[0,i,0]}"))
    with pytest.raises(CodegenError, match="'comm'"):
        comp.codegen("mpi")


def test_plain_computation_runs_on_every_rank_unchanged(
    golden: Callable[[str, str], None],
) -> None:
    """Without distribute or operations the MPI source is the C function plus ``comm``."""
    src = kernels.spmv_csr().codegen("mpi")
    golden("codegen/mpi/spmv_csr.c", src)  # void spmv_csr(MPI_Comm comm, int64_t M, ...)
    assert "spf_mpi_" not in src


def test_unknown_compile_option_is_refused() -> None:
    comp = kernels.dense_mv()
    with pytest.raises(SpfError, match="unknown option"):
        comp.compile(target="mpi", emulate=True)


# ------------------------------------------------------------------------- real ranks


@pytest.mark.timeout(MPI_CHECKS_TIMEOUT)
@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 4])
def test_results_on_real_ranks_match_the_sequential_run(
    ranks: int, mpi_checks: Callable[[int], MpiChecks]
) -> None:
    job = mpi_checks(ranks)  # check_mpi.py runs last: its every rank prints
    output = job.output("check_mpi.py") + job.stderr
    assert job.exit("check_mpi.py") == "0", job.failure("check_mpi.py")
    for rank in range(ranks):
        assert f"rank {rank} ok: all" in output, output[-6000:]
        checks = [
            "dscale",
            "blur nl=5 w=7",
            "blur tiramisu-order nl=5 w=7",
            "blur float32 on the last rank: ArgumentError on every rank nl=5 w=7",
            "blur P - 1 on the last rank: ArgumentError on every rank nl=5 w=7",
            "spmv n=37 m=29 int32",
            "spmv n=40 m=41 int64",
        ]
        checks += [f"shift P={p} n=7" for p in {1, 2, ranks}] + [f"shift P={ranks} n=0"]
        checks += ["rows2 nl=2 w=5", "rows2 nl=6 w=3"]
        for check in checks:
            assert f"rank {rank} ok: {check}" in output, output[-6000:]


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        (
            "mpi_dscale.py",
            [
                "a[0, 0] per rank = [2.0, 3.0]",
                "rank 0: a equals 2 * 1.0 + 0 = 2.0 in 32 of 32 entries (OpenMP threads: 1)",
                "rank 1: a equals 2 * 1.0 + 1 = 3.0 in 32 of 32 entries (OpenMP threads: 1)",
            ],
        ),
        (
            "mpi_blur.py",
            [
                "mpi_blur on 2 ranks (130x96 image): 2 ranks ok",
                "rank 0: out equals numpy's blur of the whole image on image rows 1..64, "
                "columns 1..94 (max |diff| ",
                "rank 1: out equals numpy's blur of the whole image on image rows 65..128, ",
                "halo rows received: 1; OpenMP threads: 1)",
            ],
        ),
        (
            "mpi_spmv.py",
            [
                "x blocks received per rank [1, 1]",
                "rank 0: y equals the serial SpMV (scipy A @ x) on rows 0..999 (1000 rows, ",
                "rank 1: y equals the serial SpMV (scipy A @ x) on rows 1000..1999 (1000 rows, ",
                "1 x blocks received; OpenMP threads: 1)",
            ],
        ),
        (
            "mpi_distributed_spmv.py",
            [
                "rank 0: y equals the single-process SpMV bitwise on rows 0..2047; received 64 "
                "entries of x in 1 messages (exact ghosts: 64 per neighbour; whole blocks would "
                "be 2048)",
                "rank 1: y equals the single-process SpMV bitwise on rows 2048..4095; received 64",
            ],
        ),
    ],
)
def test_examples_run_through_the_cli_launcher(
    example: str, expected: list[str], mpi_env: dict[str, str]
) -> None:
    """Each example says, rank by rank, what it checked (and MPI kernels' last_threads)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "spf.mpi",
            "-n",
            "2",
            "--timeout",
            str(TIMEOUT),
            str(ROOT / "examples" / example),
        ],
        capture_output=True,
        text=True,
        env={**mpi_env, "PYTHONWARNINGS": "error"},
        timeout=TIMEOUT + 30,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for line in expected:
        assert line in done.stdout, done.stdout
    assert "FAILED" not in done.stdout
    diffs = [float(d) for d in re.findall(r"max \|diff\| ([0-9.e+-]+)", done.stdout)]
    assert all(d < 1e-12 for d in diffs), diffs


def test_report_prints_every_ranks_check_and_fails_on_every_rank(
    tmp_path: Path, mpi_env: dict[str, str]
) -> None:
    script = tmp_path / "report.py"
    script.write_text(
        "from mpi4py import MPI\n"
        "import spf.mpi\n"
        "comm = MPI.COMM_WORLD\n"
        "r = comm.Get_rank()\n"
        "ok = spf.mpi.report(comm, f'checked {r}', ok=r != 1)\n"
        "import sys\n"
        "sys.stdout.write(f'all passed on rank {r}: {ok}\\n')  # one write, as report's\n"
        "sys.stdout.flush()\n"
    )
    done = run(script, 3, timeout=TIMEOUT, env=mpi_env)
    assert done.returncode == 0, done.stdout + done.stderr
    reported = [line for line in done.stdout.splitlines() if line.startswith("rank ")]
    assert reported == ["rank 0: checked 0", "rank 1: checked 1 -- FAILED", "rank 2: checked 2"]
    for rank in range(3):
        assert f"all passed on rank {rank}: False" in done.stdout


def test_ranks_passing_different_counts_abort_with_what_differs(
    tmp_path: Path, mpi_env: dict[str, str]
) -> None:
    """The blur's halo rows are W elements: rank 1 passing W - 1 sent its neighbours short
    rows and had theirs truncated, and the MPI errors were ignored (mpi4py's communicators
    return errors), so every rank finished with unwritten or truncated halos and no error.
    Each receive now checks what arrived; a mismatch aborts the job with the receive, the
    peer and both counts."""
    script = tmp_path / "counts.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'examples')!r})\n"
        "import numpy as np\n"
        "from mpi4py import MPI\n"
        "import mpi_blur\n"
        "comm = MPI.COMM_WORLD\n"
        "r, p = comm.Get_rank(), comm.Get_size()\n"
        "w = 6 - (r == 1)\n"
        "kernel = mpi_blur.blur().compile(target='mpi')\n"
        "a = np.ones((4, w))\n"
        "kernel(comm=comm, a=a, bx=np.zeros((4, w)), out=np.zeros((2, w)), P=p, NL=2, W=w)\n"
        "print(f'rank {r} finished', flush=True)\n"
    )
    done = run(script, 3, timeout=TIMEOUT, env=mpi_env)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "finished" not in done.stdout
    assert "the ranks disagree on the count of a message" in done.stderr, done.stderr[-3000:]
    assert "received 5 elements from rank 1, where this rank receives 6" in done.stderr


def test_a_deadlock_times_out_and_leaves_no_rank_behind(tmp_path: Path) -> None:
    script = tmp_path / "deadlock.py"
    script.write_text(
        "from mpi4py import MPI\n"
        "comm = MPI.COMM_WORLD\n"
        "print('started', flush=True)\n"
        "comm.recv(source=(comm.Get_rank() + 1) % comm.Get_size())  # nobody sends\n"
    )
    start = time.monotonic()
    with pytest.raises(MPITimeoutError, match="did not finish within 3 s"):
        run(script, 2, timeout=3)
    assert time.monotonic() - start < 30
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False)
    assert str(script) not in ps.stdout


SLEEPER = (
    "import os, sys, time\n"
    "from mpi4py import MPI\n"
    "path = os.path.join(sys.argv[1], f'pid{MPI.COMM_WORLD.Get_rank()}')\n"
    "with open(path + '.tmp', 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "os.replace(path + '.tmp', path)\n"
    "time.sleep(600)\n"
)


def _rank_pids(folder: Path, ranks: int, wait: float = 0.0) -> list[int]:
    """The PIDs the sleeping ranks wrote, waiting up to ``wait`` seconds for all of them
    (a rank writes ``pidN.tmp`` and renames it: a ``.tmp`` file may still be empty)."""

    def written() -> list[Path]:
        return sorted(p for p in folder.glob("pid[0-9]*") if p.suffix != ".tmp")

    deadline = time.monotonic() + wait
    while len(written()) < ranks and time.monotonic() < deadline:
        time.sleep(0.1)
    return [int(path.read_text()) for path in written()]


def _alive(pid: int) -> bool:
    """``pid`` is a live process (a zombie, dead but not reaped yet, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _assert_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:  # a failing test leaves no process behind either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"rank processes left running: {left} of {pids}"


def _timed_out_twice_over(folder: Path, first: float, job: Callable[[float], None]) -> None:
    """``job(timeout)`` runs two sleeping ranks past ``timeout`` (it raises
    ``MPITimeoutError``): no rank that started is left alive. A loaded machine may take longer
    than ``first`` seconds to start both ranks (an interpreter each): the job is run again
    with twice the time until both had started."""
    timeout = first
    while True:
        for old in folder.glob("pid*"):
            old.unlink()
        with pytest.raises(MPITimeoutError, match=f"did not finish within {timeout:g} s"):
            job(timeout)
        pids = _rank_pids(folder, 2)
        _assert_gone(pids)  # those that started, each time
        if len(pids) == 2 or timeout > 60:
            break
        timeout *= 2
    assert len(pids) == 2, f"the ranks did not start within {timeout:g} s"


def test_a_job_past_its_timeout_leaves_no_rank_pid_alive(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    before = signal.getsignal(signal.SIGTERM)

    def job(timeout: float) -> None:
        try:
            run(script, 2, [str(tmp_path)], timeout=timeout)
        finally:
            assert signal.getsignal(signal.SIGTERM) is before  # run's handler is gone again

    _timed_out_twice_over(tmp_path, 5, job)


def _signal_the_launcher(argv: list[str], sig: int, folder: Path) -> int:
    """Start ``argv`` (a Python launcher of the sleeping ranks), send it ``sig`` once every
    rank runs, check that no rank survives (by PID); its exit status."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen(  # Ctrl-C reaches it even from a shell that ignores SIGINT
        argv, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    try:
        pids = _rank_pids(folder, 2, wait=120)
        assert len(pids) == 2, "the ranks did not start"
        parent.send_signal(sig)
        status = parent.wait(timeout=60)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()  # reaped here, not by a later test's garbage collection
    _assert_gone(pids)
    return status


@pytest.mark.parametrize(
    ("handler", "status"),
    [("", -signal.SIGTERM), ("signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))\n", 7)],
    ids=["default", "own-handler"],
)
def test_sigterm_to_the_launcher_kills_every_rank_then_applies_its_own_disposition(
    handler: str, status: int, tmp_path: Path
) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    launcher = (
        f"import signal, sys\nfrom spf.mpi import run\n{handler}"
        f"run({str(script)!r}, 2, [{str(tmp_path)!r}], timeout=300)\n"
    )
    argv = [sys.executable, "-c", launcher]
    assert _signal_the_launcher(argv, signal.SIGTERM, tmp_path) == status


def test_ctrl_c_of_the_cli_launcher_kills_every_rank_and_exits_130(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER)
    argv = [sys.executable, "-m", "spf.mpi", "-n", "2", str(script), str(tmp_path)]
    assert _signal_the_launcher(argv, signal.SIGINT, tmp_path) == 130


def test_ranks_of_a_launcher_that_ignores_sigterm_are_killed_too(tmp_path: Path) -> None:
    """A stand-in for a stuck ``mpiexec``: it ignores SIGTERM and starts each rank in a
    process group of its own, as Open MPI does; run() still kills every rank by PID."""
    fake = tmp_path / "stuck-mpiexec"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import os, signal, subprocess, sys, time\n"
        "if sys.argv[1:] == ['--version']:\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "for rank in range(int(sys.argv[2])):\n"
        "    env = {**os.environ, 'RANK': str(rank)}\n"
        "    subprocess.Popen(sys.argv[3:], env=env, preexec_fn=os.setpgrp)\n"
        "time.sleep(600)\n"
    )
    fake.chmod(0o755)
    script = tmp_path / "sleeper.py"
    script.write_text(
        SLEEPER.replace("from mpi4py import MPI\n", "").replace(
            "MPI.COMM_WORLD.Get_rank()", 'os.environ["RANK"]'
        )
    )
    _timed_out_twice_over(tmp_path, 2, lambda timeout: run(
        script, 2, [str(tmp_path)], timeout=timeout, mpiexec=str(fake), mpi4py=False))  # fmt: skip


def test_launcher_command_line() -> None:
    argv = command("prog.py", 3, ["--size", "8"], python="py")
    assert argv[0] == shutil.which("mpiexec")
    assert argv[1:3] == ["-n", "3"]
    assert "--oversubscribe" in argv  # Open MPI here: more ranks than cores
    assert argv[argv.index("py") :] == ["py", "-m", "mpi4py", "prog.py", "--size", "8"]
    with pytest.raises(SpfError, match="positive int"):
        command("prog.py", 0)


def test_launcher_command_line_for_an_interpreter_without_mpi4py() -> None:
    argv = command("prog.py", 2, ["a"], python="/usr/bin/python3", mpi4py=False)
    assert argv[argv.index("/usr/bin/python3") :] == ["/usr/bin/python3", "prog.py", "a"]
    assert "--oversubscribe" in argv


def _overlap_source(stored: bool) -> str:
    """Receive a halo ``h``, compute on other data ``w`` (overlaps), then read the halo (and
    send ``w`` to the next rank: the message the previous rank's receive waits for).
    ``stored``: ``h`` lives in buffer ``hbuf`` (``store_in``) and the receive names the buffer."""
    comp = spf.Computation("overlap")
    for name in ("h", "w", "z"):
        comp.add_data_space(name, "double", shape=("N",))
    dom = "{[q,i]: 0 <= q < P && 0 <= i < N}"
    stmts = []
    target: object = "h"
    if stored:
        init = comp.add_stmt(spf.Stmt("$h$(i) = 0.0;", dom, "{[q,i]->[0,q,0,i,0]}"))
        target = comp.add_buffer("hbuf", ("N",), "double", scope="global")
        init.store_in(target, ["i"])
        stmts.append(init)
    stmts.append(comp.receive("{[q]: 1 <= q < P}", target, ["0"], "N", "q - 1"))
    stmts.append(comp.add_stmt(spf.Stmt("$w$(i) = 2.0 * $w$(i);", dom, "{[q,i]->[2,q,0,i,0]}")))
    stmts.append(comp.add_stmt(spf.Stmt("$z$(i) = $h$(i);", dom, "{[q,i]->[3,q,0,i,0]}")))
    stmts.append(comp.send("{[q]: 0 <= q < P - 1}", "w", ["0"], "N", "q + 1"))  # the halo's
    for s in stmts:
        if not s.tags:
            s.distribute("q")
    for prev, nxt in itertools.pairwise(stmts):
        prev.then(nxt, "q")
    src = comp.codegen("mpi")
    return src[src.index("void overlap(") :]


@pytest.mark.parametrize("stored", [False, True])
def test_statements_on_other_data_overlap_with_the_exchange(stored: bool) -> None:
    body = _overlap_source(stored)
    body = body[body.index("const int64_t q = spf_rank;") :]  # the first rank loop
    names = [f"s{k}" for k in range(4)] if stored else ["s0", "s1", "s2"]
    recv, other, use = (body.index(f"{n}(q") for n in names[-3:])
    wait = body.index("spf_mpi_waitall(&spf_mpi);")
    assert recv < other < wait < use, body  # w is computed while the halo arrives
    assert body.count("spf_mpi_waitall(&spf_mpi);") == 2  # before z = h, and at the end


def test_nested_distributed_loops_are_refused() -> None:
    comp = spf.Computation("nested")
    comp.add_data_space("a", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i) = q + r;",
            "{[q,r,i]: 0 <= q < P && 0 <= r < P && 0 <= i < N}",
            "{[q,r,i]->[0,q,0,r,0,i,0]}",
        )
    )
    s.distribute("q").distribute("r")
    with pytest.raises(CodegenError, match="inside another distributed loop"):
        comp.codegen("mpi", check=False)


def _prog(name: str, make: str) -> spf.Computation:
    """``make()`` of the program ``mpi_progs/<name>.py`` (shared with check_mpi.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, PROGS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    comp: spf.Computation = getattr(module, make)()
    return comp


def _shift() -> spf.Computation:
    return _prog("mpi_shift", "shift")


def _rank_loops_above_calls(node: object, inside: tuple[str, ...] = ()) -> dict[str, set[tuple]]:
    """For each statement call: the variables of the ``distribute`` loops around it."""
    from spf.codegen.loop_ast import Bind, Block, Call, For, If

    out: dict[str, set[tuple]] = {}

    def visit(n: object, inside: tuple[str, ...]) -> None:
        if isinstance(n, Call):
            out.setdefault(n.stmt, set()).add(inside)
        elif isinstance(n, Block):
            for item in n.items:
                visit(item, inside)
        elif isinstance(n, For):
            visit(n.body, (*inside, n.var) if "distribute" in n.tags else inside)
        elif isinstance(n, If):
            visit(n.then, inside)
            if n.orelse is not None:
                visit(n.orelse, inside)
        elif isinstance(n, Bind):
            visit(n.body, inside)

    visit(node, inside)
    return out


def test_rank_loops_of_one_iteration_stay_rank_loops() -> None:
    """``q = 0`` (no receive there) and ``P == 1`` are rank loops of one iteration: the scanner
    keeps them as loops, so only that rank runs them (isl alone would drop the loop and every
    rank would run the iteration)."""
    from spf.codegen.program import lower

    comp = _shift()
    sites = _rank_loops_above_calls(lower(comp.ir).body)
    assert set(sites) == {"s0", "s1", "copy", "add"}
    assert all(paths == {("q",)} for paths in sites.values()), sites
    src = comp.codegen("mpi")
    body = src[src.index("void shift(") :]
    assert body.count("const int64_t q = spf_rank;") == 4, body
    assert body.count("if (q >= 0 && q <= 0)") == 2, body  # q = 0 when P >= 2, and P == 1
    assert "if (q >= 1 && q < P)" in body
    assert "spf_rank ==" not in body
    assert "copy(0" not in body
    assert "add(q, i);" in body
    assert body.count("add(q, i);") == 3
    assert comp.loop_structure().count("for q [distribute]:") == 4


def test_rank_loop_of_one_iteration_is_a_loop_for_target_c() -> None:
    comp = spf.Computation("one")
    comp.add_data_space("a", "double", shape=("N",))
    s = comp.add_stmt(
        spf.Stmt(
            "$a$(i) = $a$(i) + 1.0;", "{[q,i]: 0 <= q < 1 && 0 <= i < N}", "{[q,i]->[0,q,0,i,0]}"
        )
    )
    s.distribute("q")
    assert comp.loop_structure() == "for q [distribute]:\n  for i:\n    s0"
    assert "for (int64_t q = 0; q <= 0; q++)" in comp.codegen("c")
    mpi = comp.codegen("mpi")
    assert "const int64_t q = spf_rank;" in mpi
    assert "if (q >= 0 && q <= 0)" in mpi


def _rows() -> spf.Computation:
    return _prog("mpi_rows", "rows")


def test_a_send_of_whole_rows_is_a_row_major_run_in_bounds() -> None:
    """``send(a(2, 0), count=2*W)`` moves rows 2 and 3 (row-major), not 2*W elements of row 2:
    its region is two whole rows, in bounds, and the receive into the halo rows is too."""
    comp = _rows()
    send, _, recv, _ = comp.stmts[:4]
    ((_, region),) = send.reads
    assert region.is_equal(spf.Relation("{[q] -> [e0, e1] : 2 <= e0 < 4 && 0 <= e1 < W}"))
    ((_, halo),) = recv.writes
    assert halo.is_equal(spf.Relation("{[q] -> [e0, e1] : 0 <= e0 < 2 && 0 <= e1 < W}"))
    src = comp.codegen("mpi")  # bounds proved: no CodegenError
    assert 'spf_mpi_isend(&spf_mpi, "send s0", &a(2, 0), (int64_t) (2 * W),' in src


@pytest.mark.parametrize(
    ("shape", "index", "count", "region"),
    [
        (
            ("N", "M", "K"),
            ["i", "0", "0"],
            "2*M*K",
            "i <= e0 < i + 2 && 0 <= e1 < M && 0 <= e2 < K",
        ),
        (("N", "M", "K"), ["i", "j", "0"], "K", "e0 = i && e1 = j && 0 <= e2 < K"),
        (("N", 4), ["i", "2"], "6", "0 <= e1 < 4 && 4i + 2 <= 4e0 + e1 < 4i + 8"),
        (("N", "M"), ["i", "1"], "3", "e0 = i && 1 <= e1 < 4"),
    ],
)
def test_transfer_regions_are_row_major_runs(
    shape: tuple[object, ...], index: list[str], count: str, region: str
) -> None:
    comp = spf.Computation("runs")
    comp.add_data_space("a", "double", shape=shape)
    op = comp.send("{[q, i, j]: 0 <= q < P && 0 <= i < N && 0 <= j < 2}", "a", index, count, "0")
    ((_, got),) = op.reads
    outs = ", ".join(f"e{k}" for k in range(len(shape)))
    assert got.is_equal(spf.Relation(f"{{[q, i, j] -> [{outs}] : {region}}}"))


def test_a_run_crossing_into_part_of_a_row_of_symbolic_length_is_refused() -> None:
    """``M + 1`` elements from ``(i, 0)`` cross into the next row by one element: with ``M``
    symbolic no affine region holds exactly that, so the run is read along the last
    dimension and the bounds proof refuses it (never a smaller, unsound region)."""
    comp = spf.Computation("partial")
    comp.add_data_space("a", "double", shape=("N", "M"))
    comp.assume("N >= 2")  # rows enough: only the run's shape is wrong
    comp.send("{[q]: 0 <= q < P}", "a", ["0", "0"], "M + 1", "0").distribute("q")
    with pytest.raises(CodegenError, match=r"index 1 can be at or above its extent M"):
        comp.codegen("mpi")
