"""Row-distributed sparse loops (API.md §19): ``distribute_rows`` and ``compile(target="mpi")``.

The rank checks run ``tests/e2e/mpi_progs/check_distributed.py`` on 1, 2, 3 and 4 ranks
(oversubscribed) through :func:`spf.mpi.run` (a deadlock fails instead of hanging), in the
run's one job per rank count (fixture ``mpi_checks``, tests/e2e/conftest.py): SpMV
bitwise equal to the single-process kernel (empty rows, one row, an empty matrix, int32 and
int64 indices, an owner array, a SuiteSparse matrix), the exact ghost count on 2-D Poisson,
A^T·x, a dot product, Jacobi and CG against their serial runs, and bad input raising
ArgumentError on every rank. The analysis and the generated C are checked here, without MPI.
"""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING

import pytest

import spf
from spf import kernels
from spf.errors import CodegenError, SpfError, UndeclaredError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.e2e.conftest import MpiChecks

# pytest-timeout of a test of the run's shared MPI job (fixture mpi_checks): it may run the whole
# job of its rank count (at most the sum of its programs' timeouts, 1,340 s), or wait for the
# worker running it.
MPI_CHECKS_TIMEOUT = 1500


@pytest.mark.timeout(MPI_CHECKS_TIMEOUT)
@pytest.mark.requires_mpi
@pytest.mark.slow
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_distributed_kernels_equal_serial_on_ranks(
    ranks: int, mpi_checks: Callable[[int], MpiChecks], suitesparse_dir: Path
) -> None:
    if shutil.which("mpiexec") is None:
        pytest.skip("mpiexec is not installed (make test installs Open MPI)")
    job = mpi_checks(ranks)
    assert job.exit("check_distributed.py") == "0", job.failure("check_distributed.py")
    done = job.output("check_distributed.py")
    lines = [line for line in done.splitlines() if line.startswith("rank ")]
    assert lines
    assert not [line for line in lines if "FAILED" in line]
    for r in range(ranks):
        assert f"rank {r}: spmv bcsstk13.mtx (2003x2003, int32): bitwise equal" in done
        assert f"rank {r}: CG 25 iterations" in done
        assert f"rank {r}: CG 25 iterations with an owner array: equals serial" in done
        assert f"rank {r}: owner array with a rank outside the job on rank 0: ArgumentError" in done
        repeat = "N differs on rank 0 after a good call the others repeat: ArgumentError"
        assert f"rank {r}: {repeat}" in done
        assert f"rank {r}: a new index array on rank 0 while the others repeat" in done
        assert (
            f"rank {r}: x reshaped in place on rank 0 after repeated calls: ArgumentError" in done
        )
        assert f"rank {r}: parallel rows: bitwise equal to serial; last_threads is each" in done
        assert f"rank {r}: y and x the same array on rank 0: ArgumentError" in done
        assert f"rank {r}: read-only x, rowptr, col and A: bitwise equal to the serial" in done
        assert f"rank {r}: a positional argument on the last rank: ArgumentError" in done
        assert f"rank {r}: an unchecked plan keeps the index arrays its key addresses: True" in done
    if ranks > 1:
        assert "rank 1 calls another computation: ArgumentError" in done


@pytest.mark.timeout(MPI_CHECKS_TIMEOUT)
@pytest.mark.requires_mpi
@pytest.mark.slow
@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_spmv_of_every_splittable_format_equals_serial_on_ranks(
    ranks: int, mpi_checks: Callable[[int], MpiChecks]
) -> None:
    """check_formats.py: CSR, ELL, SELL(4, 1), SELL(2, 4), COO, DIA, BDIA(4), BCSR(2, 2),
    BCSR(3, 2) bitwise equal to their serial kernels, ELL, SELL and COO exchanging CSR's
    ghosts, DIA and BDIA the image of their diagonals, BCSR whole blocks; CSC to round-off;
    a freed communicator raises."""
    if shutil.which("mpiexec") is None:
        pytest.skip("mpiexec is not installed (make test installs Open MPI)")
    job = mpi_checks(ranks)
    assert job.exit("check_formats.py") == "0", job.failure("check_formats.py")
    done = job.output("check_formats.py")
    assert "FAILED" not in done
    for r in range(ranks):
        for fmt in ("CSR", "ELL", "SELL4_1", "SELL2_4", "COO", "DIA", "BDIA4", "BCSR2x2"):
            for case in ("random 37x37, empty rows (int64)", "empty 5x5 (int32)",
                         "random 37x37, owner array (int32)"):  # fmt: skip
                assert f"rank {r}: {fmt} {case}: bitwise equal" in done
            if fmt == "BCSR2x2":
                assert f"rank {r}: {fmt} odd 23x31 (int32): receives whole blocks of x" in done
            elif fmt in ("DIA", "BDIA4"):
                assert f"rank {r}: {fmt} odd 23x31 (int32): receives the image of its rows'" in done
            elif fmt != "CSR":
                assert f"rank {r}: {fmt} odd 23x31 (int32): exchanges what CSR exchanges" in done
        csc = "CSC random 37x37, empty rows (int32): sends one partial sum per row"
        assert f"rank {r}: {csc}" in done
        assert f"rank {r}: COO entries in blocks of the entry list: summed" in done
        assert f"rank {r}: a Dup freed through another reference: ArgumentError" in done


@pytest.mark.timeout(MPI_CHECKS_TIMEOUT)
@pytest.mark.requires_mpi
@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_repeated_calls_agree_without_a_blocking_collective_and_settle_every_case(
    ranks: int, mpi_checks: Callable[[int], MpiChecks]
) -> None:
    """check_protocol.py: stale plans with and without neighbours and through receivers
    only, bad arguments, other computations, resumed accumulations; same verdict on every
    rank, no deadlock (run() kills a hung job)."""
    if shutil.which("mpiexec") is None:
        pytest.skip("mpiexec is not installed (make test installs Open MPI)")
    job = mpi_checks(ranks)
    assert job.exit("check_protocol.py") == "0", job.failure("check_protocol.py")
    done = job.output("check_protocol.py")
    for r in range(ranks):
        for check in (
            "stale plan with neighbours (2-D Poisson), the other ranks repeat: bitwise equal",
            "stale plan without neighbours (block diagonal), the other ranks repeat: bitwise",
            "stale plan only through its receivers (block diagonal; rank 0 repeats)",
            f"a bad argument on rank {ranks - 1} (without neighbours) while the others repeat: "
            "ArgumentError (",
            "rank 1 calls another computation while the others repeat theirs: ArgumentError (",
            "every rank switches between SpMV and A^T x: both equal serial",
            "A^T x resumed after a stale plan on rank 0: bitwise equal to the plain call",
            "CG resumed after a stale plan on rank 0 at iteration 5: bitwise equal",
        ):
            assert f"rank {r}: {check}" in done, done[-3000:]
    assert "FAILED" not in done


def test_executor_agrees_without_blocking_and_resumes_after_the_verdict_point() -> None:
    src = distributed_spmv().codegen("mpi")
    executor = src[src.index("int spmv_csr(MPI_Comm comm, int64_t spf_mode") :]
    assert "MPI_Allreduce" not in executor  # SpMV: no collective at all
    assert "MPI_Iallreduce" not in executor
    send = executor.index("MPI_Isend(spf_x_sbuf")
    agree = executor.index("MPI_Isend(spf_agree, 9, MPI_INT64_T")
    inner = executor.index("spmv_csr_local(M, N, NNZ, spf_min(spf_c + 4096, spf_inner")
    verdict = executor.index("if (spf_mode == 1 && (spf_top[0] != 0")
    rest = executor.index("/* rows that read ghosts: the rest */")
    assert send < agree < inner < executor.index("MPI_Waitall") < verdict < rest
    # resuming (mode 2) skips the rows without ghosts and the prefixes, done before the verdict;
    # they run in chunks, progressing the messages (MPI_Testall) after each
    assert "MPI_Testall(spf_nreq, spf_req, &spf_done" in executor[inner:verdict]
    assert executor[agree:verdict].count("if (spf_mode != 2) {") == 2
    assert "if (spf_mode != 2)" not in executor[verdict:]


def test_rows_with_ghosts_split_at_their_first_ghost_column() -> None:
    """The prefix of each row with ghosts runs before the wait (spf.distributed.prefix):
    its end is the row's first entry whose renumbered column is a ghost (>= nown)."""
    import numpy as np

    from spf.distributed.prefix import split_points

    # rows: own only | ghost first | own, own, ghost, own | empty | ghost last
    rowptr = np.array([0, 2, 4, 8, 8, 11], dtype=np.int32)
    col = np.array([0, 1, 5, 0, 2, 3, 6, 1, 0, 1, 7], dtype=np.int32)  # nown = 5
    outer = np.array([1, 3, 4, 5], dtype=np.int64)  # rows 1, 2 and 4 read ghosts
    split = split_points(rowptr, col, 5, outer, 5)
    assert split.dtype == np.int32
    assert split.tolist() == [0, 2, 6, 8, 10]  # rows 0 and 3 (no ghosts): their start
    none = split_points(rowptr, np.zeros(11, dtype=np.int32), 5, np.array([0, 5]), 5)
    assert none.tolist() == rowptr[1:].tolist()  # no ghost at all: whole rows before
    assert split_points(rowptr[:1], col[:0], 5, np.zeros(0, dtype=np.int64), 0).size == 0


def test_prefixes_are_kept_only_where_they_shorten_the_slowest_rank() -> None:
    """prefix.worth: the largest rest after the wait over the ranks must fall to GAIN of
    the largest without prefixes (a rank whose rows start with a ghost gains nothing)."""
    import numpy as np

    from spf.distributed.prefix import worth

    class Peer:  # the other rank's (whole, rest), combined as MPI_Allreduce(MAX) would
        def __init__(self, whole: int, rest: int) -> None:
            self.other = np.array([whole, rest], dtype=np.int64)

        def Allreduce(self, send: np.ndarray, recv: np.ndarray, op: object) -> None:
            recv[:] = np.maximum(send, self.other)

    rowptr = np.array([0, 4, 8], dtype=np.int64)
    outer = np.array([0, 2], dtype=np.int64)
    half = np.array([2, 6], dtype=np.int64)  # each row: 2 of 4 entries before the wait
    assert worth(Peer(8, 4), rowptr, half, outer)  # both ranks halve their rest
    assert not worth(Peer(8, 8), rowptr, half, outer)  # the peer's rows start with a ghost
    assert not worth(Peer(0, 0), rowptr, rowptr[:2], outer)  # no prefix anywhere


def test_cg_splits_its_product_phase_around_the_ghost_read() -> None:
    from spf.bench.mpi_cg import cg_step
    from spf.distributed.analysis import analyse
    from spf.distributed.prefix import find

    comp = cg_step()
    assert comp.distribution is not None
    split = find(comp, analyse(comp, comp.distribution))
    assert split is not None
    assert (split.phase, split.stmt, split.before, split.after) == (1, "s3", ("s2",), ("s4",))
    assert (split.data, split.uf, split.bound) == ("p", "col", "rowptr")
    t = kernels.spmtv_csr()  # no ghost read: nothing to split
    t.distribute_rows("i", data={"y": 0, "x": 0})
    assert t.distribution is not None
    assert find(t, analyse(t, t.distribution)) is None


# ----------------------------------------------------------------------------- no MPI


def distributed_spmv() -> spf.Computation:
    comp = kernels.spmv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    return comp


def test_distributed_spmv_codegen_overlaps_exchange_with_rows_without_ghosts() -> None:
    src = distributed_spmv().codegen("mpi")
    post = src.index("MPI_Irecv(x + spf_x_nown")
    send = src.index("MPI_Isend(spf_x_sbuf")
    inner = src.index("spmv_csr_local(M, N, NNZ, spf_min(spf_c + 4096, spf_inner")
    wait = src.index("MPI_Waitall")
    prefixes = src.index("spmv_csr_split(M, N, NNZ, 0, 1, spf_min(spf_c + 4096, spf_outer")
    rest = src.index("spmv_csr_split(M, N, NNZ, 1, 0, spf_outer[2 * spf_r + 1], spf_outer")
    assert post < send < inner < prefixes < wait < rest
    assert "row_lo <= i" not in src  # the restriction is in the loop bounds
    assert re.search(r"for \(int64_t i = spf_max\(0, row_lo\); i < spf_min\(N, row_hi\);", src)


def test_distributed_inspector_marks_the_image_of_the_access() -> None:
    comp = distributed_spmv()
    from spf.distributed.analysis import analyse
    from spf.distributed.derived import inspector_computation

    assert comp.distribution is not None
    layout = analyse(comp, comp.distribution)
    assert layout.ghost_reads == ("x",)
    assert layout.renumbered == ("col",)
    insp = spf.Computation.from_ir(inspector_computation(comp, layout))  # an IR value
    assert [s.source for s in insp.stmts] == [
        "$dist_mark_x$(j) = 1;",
        "$dist_halo$(i) = $dist_halo$(i) | $dist_far_x$(j);",
        "$dist_near_x$(j) = $dist_near_x$(j) | $dist_halo$(i);",
    ]
    assert layout.rowwise == ()  # x is not indexed by i: rows with ghosts copy only what they read
    import numpy as np

    mark, far, halo = np.zeros(4, np.int8), np.array([0, 0, 1, 1], np.int8), np.zeros(2, np.int8)
    near = np.zeros(4, np.int8)
    insp.interpret(
        dist_mark_x=mark,
        dist_far_x=far,
        dist_halo=halo,
        dist_near_x=near,
        rowptr=np.array([0, 2, 3]),
        col=np.array([0, 3, 1]),
        N=2,
        M=4,
        NNZ=3,
    )
    assert mark.tolist() == [1, 1, 0, 1]
    assert halo.tolist() == [1, 0]
    assert near.tolist() == [1, 0, 0, 1]  # what row 0 (it reads a ghost) reads: x(0) and x(3)


def test_near_runs_cover_own_marked_entries_joining_small_gaps() -> None:
    import numpy as np

    from spf.distributed.plan import NEAR_GAP, ExchangePlan
    from spf.mpi import Partition

    part = Partition(100, 2)  # rank 1 owns 50 .. 99
    empty = np.zeros(0, dtype=np.int64)
    plan = ExchangePlan(50, empty, empty, empty, empty, empty, empty)
    marked = np.zeros(100, dtype=np.int8)
    joined = 2 + NEAR_GAP + 1  # NEAR_GAP unread entries after local 2: one copy
    apart = joined + NEAR_GAP + 2  # one more unread entry: a copy of its own
    marked[[3, 50, 51, 52, 50 + joined, 50 + apart]] = 1  # 3 is rank 0's: not copied
    assert plan.near(part, 1, marked).tolist() == [0, joined + 1, apart, apart + 1]
    assert plan.near(part, 1, np.zeros(100, dtype=np.int8)).tolist() == []

    rows = np.array([apart + 7, apart + 8], dtype=np.int64)  # rows with ghosts (p(i) in CG)
    assert plan.near(part, 1, marked, rows).tolist() == [0, joined + 1, apart, apart + 9]


def test_send_buffer_is_packed_by_runs_only_where_runs_are_long() -> None:
    import numpy as np

    from spf.distributed.plan import RUN_LENGTH, ExchangePlan

    def plan(sidx: list[int]) -> ExchangePlan:
        empty = np.zeros(0, dtype=np.int64)
        return ExchangePlan(50, empty, empty, empty, empty, empty, np.array(sidx, np.int64))

    boundary = list(range(10, 10 + 2 * RUN_LENGTH))  # a mesh row: one run
    runs = plan(boundary).send_runs()
    assert runs is not None
    assert runs.tolist() == [10, 10 + 2 * RUN_LENGTH]
    two = list(range(0, RUN_LENGTH)) + list(range(20, 20 + RUN_LENGTH))  # to two neighbours
    runs = plan(two).send_runs()
    assert runs is not None
    assert runs.tolist() == [0, RUN_LENGTH, 20, 20 + RUN_LENGTH]
    assert plan(list(range(0, 4 * RUN_LENGTH, 2))).send_runs() is None  # every other entry
    assert plan([]).send_runs() is None
    src = distributed_spmv().codegen("mpi")
    pack = src[src.index("if (spf_x_nsrun >= 0) {") : src.index("/* x: packed */")]
    assert "memcpy(spf_x_sbuf + spf_d, spf_x_user + spf_x_srun[2 * spf_q]" in pack
    assert "spf_x_sbuf[spf_q] = spf_x_user[spf_x_sidx[spf_q]];" in pack
    executor = src[src.index("int spmv_csr(MPI_Comm comm") :]
    # receives posted before the packing; the own entries copied after the sends
    assert executor.index("MPI_Irecv(x + spf_x_nown") < executor.index("if (spf_x_nsrun >= 0)")
    assert executor.index("MPI_Isend(spf_x_sbuf") < executor.index("memcpy(x + spf_x_near")


def test_cg_executor_copies_only_the_entries_of_rows_with_ghosts() -> None:
    from spf.bench.mpi_cg import cg_step
    from spf.distributed.analysis import analyse

    comp = cg_step()
    assert comp.distribution is not None
    layout = analyse(comp, comp.distribution)
    assert (layout.ghost_reads, layout.rowwise, layout.copy_back) == (("p",), ("p",), ("p",))
    src = comp.codegen("mpi")
    assert "memcpy(p, spf_p_user" not in src
    assert "memcpy(spf_p_user, p," not in src
    inner = re.findall(r"cg_step_local\(M, N, NNZ, \d, [^;]*spf_inner[^;]*;", src)
    assert len(inner) == 3
    assert all("(double *)spf_p_user" in call for call in inner)
    outer = re.findall(r"cg_step_local\(M, N, NNZ, \d, spf_outer[^;]*;", src)
    assert len(outer) == 2  # phase 1's rows with ghosts split at their first ghost instead
    split = re.findall(r"cg_step_split\([^;]*spf_outer[^;]*;", src)
    assert len(split) == 2
    assert not any("spf_p_user" in call for call in outer + split)
    assert "memcpy(spf_p_user + spf_outer[2 * spf_r], p + spf_outer[2 * spf_r]" in src


def test_distributed_accumulations_and_reductions_are_classified() -> None:
    comp = kernels.spmtv_csr()
    comp.distribute_rows("i", data={"y": 0, "x": 0})
    src = comp.codegen("mpi")
    assert "spf_y_user[spf_y_sidx[spf_q]] += spf_y_sbuf[spf_q];" in src
    dot = spf.Computation("ddot")
    dot.add_data_space("s", "double", shape=())
    dot.add_data_space("x", "double", shape=("N",))
    dot.add_stmt(spf.Stmt("$s$() += $x$(i) * $x$(i);", "{[i]: 0 <= i < N}"))
    dot.distribute_rows("i", data={"x": 0})
    assert "MPI_Allreduce(MPI_IN_PLACE, s, 1, MPI_DOUBLE, MPI_SUM, comm);" in dot.codegen("mpi")


def _csr_comp(stmt: str, extra: str = "") -> spf.Computation:
    comp = spf.Computation("bad")
    comp.declare_uf("rowptr", domain="{[i]: 0 <= i <= N}", range="{[v]: 0 <= v <= NNZ}",
                    monotonic="nondecreasing")  # fmt: skip
    comp.declare_uf("col", domain="{[k]: 0 <= k < NNZ}", range="{[v]: 0 <= v < M}")
    comp.add_data_space("y", "double", shape=("M",))
    comp.add_data_space("x", "double", shape=("M",))
    comp.add_data_space("A", "double", shape=("NNZ",))
    comp.add_data_space("s", "double", shape=())
    domain = "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)" + extra + "}"
    comp.add_stmt(spf.Stmt(stmt, domain))
    return comp


@pytest.mark.parametrize(
    ("stmt", "data", "message"),
    [
        ("$y$(j) = $A$(k) * $x$(i);", {"y": 0, "x": 0}, "must be an accumulation"),
        ("$x$(i) += $A$(k) * $x$(j);", {"x": 0}, "Gauss-Seidel"),
        ("$y$(i) += $A$(k) * $x$(i + 1);", {"y": 0, "x": 0}, "stencil halo"),
        ("$s$() = $A$(k) * $x$(j);", {"x": 0}, "only accumulations"),
        ("$y$(i) += $A$(k) * $x$(j);", {"x": 0, "A": 0}, "accesses A(k)"),
    ],
)
def test_distribute_rows_refuses_what_it_cannot_distribute(
    stmt: str, data: dict[str, int], message: str
) -> None:
    with pytest.raises(CodegenError, match=re.escape(message)):
        _csr_comp(stmt).distribute_rows("i", data=data)


def test_a_loop_given_by_an_index_array_value_is_refused_unless_packed_locally() -> None:
    """``i = perm(p)``: each rank runs its rows numbered from 0, so a global perm's values
    would be read as local rows (on 2 ranks of 10 rows, rows 0-1 and 7-9 were never
    scaled, silently); refused. spf.mpi.spmv(SELL) keeps it: scatter packs perm locally."""
    comp = spf.Computation("pscale")
    comp.declare_uf("perm", domain="{[p]: 0 <= p < N}", range="{[v]: 0 <= v < N}")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$y$(i) += 2.0 * $x$(i);", "{[p, i]: 0 <= p < N && i = perm(p)}"))
    with pytest.raises(CodegenError, match=r"loop variable i is the value of index array perm"):
        comp.distribute_rows("i", data={"y": 0, "x": 0})
    assert comp.distribution is None
    # A^T·x's loop over the columns j = col(k) (the distributed dimension is no row)
    csr = _csr_comp("$y$(j) += $A$(k) * $x$(i);")
    with pytest.raises(CodegenError, match=r"loop variable j is the value of index array col"):
        csr.distribute_rows("j", data={"y": 0})
    from spf.formats import SELL

    sell = spf.mpi.spmv(SELL(2, 4))
    assert sell.distribution is not None
    assert sell.distribution.local == ("perm",)
    assert "(MPI_Comm comm" in sell.codegen("mpi")


def test_distribute_rows_names_unknown_loops_and_data_spaces() -> None:
    comp = kernels.spmv_csr()
    with pytest.raises(UndeclaredError, match="unknown loop 'r'"):
        comp.distribute_rows("r", data={"y": 0})
    with pytest.raises(UndeclaredError, match="unknown data space 'z'"):
        comp.distribute_rows("i", data={"z": 0})
    with pytest.raises(spf.ArityError, match="dimension 1 of data space y"):
        comp.distribute_rows("i", data={"y": 1})
    with pytest.raises(SpfError, match="owner must be 'block'"):
        comp.distribute_rows("i", data={"y": 0}, owner="cyclic")
    same = spf.Computation("square")
    same.declare_uf("col", domain="{[k]: 0 <= k < N}", range="{[v]: 0 <= v < N}")
    same.add_data_space("y", "double", shape=("N",))
    same.add_data_space("x", "double", shape=("N",))
    same.add_stmt(spf.Stmt("$y$(i) += $x$(col(i));", "{[i]: 0 <= i < N}"))
    with pytest.raises(CodegenError, match="declare x with its own extent parameter"):
        same.distribute_rows("i", data={"y": 0, "x": 0})


class _Comm:
    """The calls spf.mpi.scatter_csr and gather make, for rank ``rank`` of ``size`` (the
    others' vectors given), so the splitting is checked without MPI."""

    def __init__(self, rank: int, size: int, pieces: list[object] | None = None) -> None:
        self.rank, self.size, self.pieces = rank, size, pieces

    def Get_rank(self) -> int:
        return self.rank

    def Get_size(self) -> int:
        return self.size

    def allgather(self, value: object) -> list[object]:
        assert self.pieces is not None
        import numpy as np

        if isinstance(value, int):  # each rank's count, as gather sends it (< 0: no vector)
            return [len(p) if np.ndim(p) == 1 else -1 - np.ndim(p) for p in self.pieces]  # type: ignore[arg-type]
        return list(self.pieces)


def test_scatter_csr_gives_each_rank_its_rows_with_global_columns() -> None:
    import numpy as np
    import scipy.sparse as sp

    matrix = sp.csr_array(np.arange(35.0).reshape(7, 5) % 3)
    for rank, rows in ((0, [0, 1, 2]), (1, [3, 4]), (2, [5, 6])):
        args = spf.mpi.scatter_csr(matrix, _Comm(rank, 3), index_dtype="int64")
        assert args["rowptr"].dtype == np.int64
        assert (args["N"], args["M"], args["NNZ"]) == (7, 5, matrix[rows].nnz)
        dense = sp.csr_array((args["A"], args["col"], args["rowptr"]), shape=(len(rows), 5))
        assert np.array_equal(dense.toarray(), matrix[rows].toarray())
        assert spf.mpi.owned_rows(7, _Comm(rank, 3)).tolist() == rows
    owner = np.array([1, 0, 1, 1, 0, 0, 1])
    args = spf.mpi.scatter_csr(matrix, _Comm(0, 2), owner)
    assert args["owner"].tolist() == owner.tolist()
    assert args["rowptr"].size == 4  # rows 1, 4, 5
    with pytest.raises(spf.ArgumentError, match="owner is not a partition"):
        spf.mpi.scatter_csr(matrix, _Comm(0, 2), np.array([0, 1, 2, 0, 0, 0, 0]))
    with pytest.raises(spf.ArgumentError, match="one rank per row"):
        spf.mpi.scatter_csr(matrix, _Comm(0, 2), np.zeros(3, dtype=np.int64))


def test_scatter_splits_each_format_as_its_distributed_spmv_reads_it() -> None:
    import numpy as np
    import scipy.sparse as sp

    from spf.formats import COO, CSC, CSR, DIA, ELL, SELL

    dense = np.arange(35.0).reshape(7, 5) % 3
    dense[4, :3] = 0.0  # row 4: one entry, two padding slots in ELL
    matrix = sp.csr_array(dense)
    for fmt in (CSR, ELL, SELL(2, 1), SELL(2, 4)):
        args = spf.mpi.scatter(matrix, fmt, _Comm(1, 3))
        assert (args["N"], args["M"]) == (7, 5)
        rows = sp.csr_array(matrix[[3, 4]])
        want = fmt.args(rows)
        assert all(np.array_equal(want[k], args[k]) for k in want if k not in ("N", "M", "col",
                                                                           "scol"))  # fmt: skip
    ell = spf.mpi.scatter(matrix, ELL, _Comm(1, 3))
    assert ell["col"][ell["A"] == 0].tolist() == [2, 2]  # x(2) is rank 1's: no ghost
    assert spf.mpi.scatter(matrix, CSR, _Comm(2, 3))["col"].tolist() == (
        spf.mpi.scatter_csr(matrix, _Comm(2, 3))["col"].tolist()
    )
    coo = spf.mpi.scatter(matrix, COO, _Comm(1, 3), index_dtype="int64")
    assert set(coo["row"].tolist()) == {3, 4}
    assert coo["row"].dtype == np.int64
    csc = spf.mpi.scatter(matrix, CSC, _Comm(1, 3))  # x's entries 2 and 3: columns 2, 3
    assert np.array_equal(csc["colptr"], sp.csc_array(matrix[:, [2, 3]]).indptr)
    assert (csc["N"], csc["M"], csc["NNZ"]) == (7, 5, matrix[:, [2, 3]].nnz)
    owner = np.array([1, 0, 1, 1, 0, 0, 1])
    assert spf.mpi.scatter(sp.csr_array(np.eye(7)), COO, _Comm(0, 2), owner)["row"].tolist() == [
        1, 4, 5
    ]  # fmt: skip
    assert [spf.mpi.spmv(f).distribution.loop for f in (CSR, ELL, SELL(4), COO, CSC)] == [
        "i", "i", "i", "k", "j"
    ]  # fmt: skip
    dia = spf.mpi.scatter(sp.csr_array(np.diag([1.0, 2.0, 3.0, 4.0], 1)), DIA, _Comm(1, 2))
    # rows 3, 4 of the 5 x 5 superdiagonal: local row 0 + offset 4 = global column 4
    assert (dia["offsets"].tolist(), dia["A"].tolist()) == ([4], [[4.0, 0.0]])


def test_diagonal_formats_read_a_window_of_x_at_the_row_plus_the_offset() -> None:
    """DIA's x(p + offsets(d)) is a ghost read whose offsets the executor shifts into a
    window of x (spf.distributed.window): ghosts received apart, then placed."""
    from spf.distributed.analysis import analyse
    from spf.formats import BDIA, DIA

    for fmt, uf in ((DIA, "offsets"), (BDIA(4), "doff")):
        comp = spf.mpi.spmv(fmt)
        assert comp.distribution is not None
        layout = analyse(comp, comp.distribution)
        assert (layout.shifted, layout.renumbered) == (("x",), (uf,))
        src = comp.codegen("mpi")
        assert "MPI_Irecv(spf_x_stage + spf_x_rdsp[spf_p]" in src
        assert "  x[spf_x_gpos[spf_q]] = spf_x_stage[spf_q];" in src
        assert src.index("MPI_Waitall(spf_nreq") < src.index("x[spf_x_gpos[spf_q]]")


def test_block_csr_distributes_its_block_rows_and_vectors_of_blocks() -> None:
    """BCSR's y[r*NB] and x[c*MB] are vectors of blocks: partitioned, marked and renumbered
    by block, exchanged by entry; scatter gives a rank its block rows, owned_rows and gather
    take the block size."""
    import numpy as np
    import scipy.sparse as sp

    from spf.distributed.analysis import analyse
    from spf.formats import BCSR

    for comp, loop in ((spf.mpi.spmv(BCSR(2, 3)), "ib"), (kernels.spmv_bcsr(2, 3), "i")):
        if comp.distribution is None:
            comp.distribute_rows(loop, data={"y": 0, "x": 0})
        assert comp.distribution is not None
        layout = analyse(comp, comp.distribution)
        assert (layout.block, layout.extent) == ({"y": 2, "x": 3}, {"y": "NB", "x": "MB"})
        assert "MPI_Irecv(x + spf_x_nown" in comp.codegen("mpi")
    args = spf.mpi.scatter(sp.csr_array(np.eye(7)), BCSR(2, 3), _Comm(1, 2))
    assert (args["NB"], args["MB"], args["NNZB"], args["bcol"].tolist()) == (4, 3, 2, [1, 2])
    assert spf.mpi.owned_rows(8, _Comm(1, 2), block=2).tolist() == [4, 5, 6, 7]
    blocks = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([5.0, 6.0])]
    assert spf.mpi.gather(blocks[0], _Comm(0, 2, [b[0::2] for b in blocks]), block=2).size == 6
    bad = spf.Computation("bad")
    bad.add_data_space("y", "double", shape=("2*NB",))
    bad.add_stmt(spf.Stmt("$y$(i) += 1.0;", "{[i]: 0 <= i < NB}"))
    with pytest.raises(CodegenError, match=r"index must be 2\*b \+ t"):
        bad.distribute_rows("i", data={"y": 0})
    with pytest.raises(spf.ArgumentError, match="expected a built-in format"):
        spf.mpi.spmv("CSR")


def test_gather_puts_the_vector_together_in_global_order() -> None:
    import numpy as np

    owner = np.array([1, 0, 1, 0])
    pieces = [np.array([10.0, 30.0]), np.array([0.0, 20.0])]
    assert spf.mpi.gather(pieces[0], _Comm(0, 2, pieces), owner).tolist() == [0, 10, 20, 30]
    blocks = [np.array([1.0, 2.0]), np.array([3.0])]
    assert spf.mpi.gather(blocks[1], _Comm(1, 2, blocks)).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(spf.ArgumentError, match="rank 0 passed 1 entries but owns 2"):
        spf.mpi.gather(np.ones(1), _Comm(0, 2, [np.ones(1), np.ones(2)]))


def test_gather_tells_every_rank_that_one_rank_passed_no_vector() -> None:
    """gather raised only on the rank whose v_loc was not a vector, before the collective the
    others were already waiting in (a hang under mpiexec; here the other rank's call put a
    (1, 2) piece into one entry: a raw numpy ValueError)."""
    import numpy as np

    pieces = [np.ones(2), np.ones((1, 2))]
    with pytest.raises(spf.ArgumentError, match=r"rank 1's v_loc must be a vector, got another"):
        spf.mpi.gather(pieces[0], _Comm(0, 2, pieces))
    with pytest.raises(spf.ArgumentError, match=r"rank 1's v_loc must be a vector, got shape"):
        spf.mpi.gather(pieces[1], _Comm(1, 2, pieces))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: spf.mpi.owned_rows(3.5, c), "owned_rows: size must be an int >= 0, got 3.5"),
        (lambda c: spf.mpi.owned_rows(-1, c), "owned_rows: size must be an int >= 0, got -1"),
        (lambda c: spf.mpi.owned_rows(4, c, block=0), "owned_rows: block must be an int >= 1"),
        (lambda c: spf.mpi.gather([1.0], c, block=0), "gather: block must be an int >= 1"),
    ],
)
def test_owned_rows_and_gather_name_a_bad_size_or_block(
    call: Callable[[object], object], message: str
) -> None:
    """A float size, a negative one and block=0 gave a raw TypeError, an empty result and a
    ZeroDivisionError / ValueError."""
    import numpy as np

    with pytest.raises(spf.ArgumentError, match=re.escape(message)):
        call(_Comm(0, 1, [np.ones(1)]))


def test_scatter_csr_refuses_a_complex_matrix_and_a_float_index_dtype() -> None:
    """A complex matrix lost its imaginary parts (numpy's ComplexWarning only) and
    index_dtype="float64" gave float index arrays."""
    import numpy as np
    import scipy.sparse as sp

    matrix = sp.csr_array(np.eye(3) * (1 + 2j))
    with pytest.raises(spf.ArgumentError, match="expected a real matrix"):
        spf.mpi.scatter_csr(matrix, _Comm(0, 1))
    with pytest.raises(spf.ArgumentError, match="an integer index_dtype"):
        spf.mpi.scatter_csr(sp.csr_array(np.eye(3)), _Comm(0, 1), index_dtype="float64")


def test_scalar_statements_and_reductions_split_the_computation_into_phases() -> None:
    from spf.distributed.analysis import analyse

    comp = spf.Computation("normalize")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("s", "double", shape=())
    comp.add_data_space("inv", "double", shape=())
    comp.add_stmt(spf.Stmt("$s$() += $x$(i) * $x$(i);", "{[i]: 0 <= i < N}", "{[i] -> [0, i]}"))
    comp.add_stmt(spf.Stmt("$inv$() = 1.0 / sqrt($s$());", "{[c]: c = 0}", "{[c] -> [1, c]}"))
    comp.add_stmt(spf.Stmt("$x$(i) = $x$(i) * $inv$();", "{[i]: 0 <= i < N}", "{[i] -> [2, i]}"))
    comp.distribute_rows("i", data={"x": 0})
    assert comp.distribution is not None
    phases = analyse(comp, comp.distribution).phases
    assert [(p.stmts, p.replicated, p.reductions) for p in phases] == [
        (("s0",), False, ("s",)),
        (("s1",), True, ()),
        (("s2",), False, ()),
    ]
    src = comp.codegen("mpi")
    assert src.index("MPI_Allreduce(MPI_IN_PLACE, s,") < src.index("phase 1: s1 on every rank")


def test_a_statement_outside_the_loop_touching_a_vector_is_refused() -> None:
    comp = spf.Computation("outside")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt("$x$(i) = 1.0;", "{[i]: 0 <= i < N}", "{[i] -> [0, i]}"))
    comp.add_stmt(spf.Stmt("$x$(0) = 2.0;", "{[c]: c = 0}", "{[c] -> [1, c]}"))
    with pytest.raises(CodegenError, match="keep statements outside it to scalars"):
        comp.distribute_rows("i", data={"x": 0})


@pytest.mark.parametrize(
    ("stmt", "what"),
    [
        ("$s$() = fmax($s$(), $x$(i));", "with a max"),
        ("$s$() = fmin($s$(), $x$(i));", "with a min"),
        ("$s$() *= $x$(i);", "with a product"),
        ("$s$() /= $x$(i);", "with a product"),
    ],
)
def test_a_max_min_or_product_into_a_replicated_scalar_is_refused(stmt: str, what: str) -> None:
    """The executor zeroes each rank's accumulator and sums the ranks' values (MPI_SUM):
    a max (the infinity norm), a min or a product came out as the sum of the ranks' partial
    results (2 ranks, fmax over x = 0.5..5: 6.5 instead of 5.0)."""
    comp = spf.Computation("norm")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("s", "double", shape=())
    comp.add_stmt(spf.Stmt(stmt, "{[i]: 0 <= i < N}", "{[i] -> [0, i]}"))
    with pytest.raises(CodegenError, match=re.escape(f"accumulates into the replicated s {what}")):
        comp.distribute_rows("i", data={"x": 0})


def _reads_a_sum(first: str, second: str, same_nest: bool) -> spf.Computation:
    comp = spf.Computation("partial")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("h", "double", shape=(2,))
    comp.add_stmt(spf.Stmt(first, "{[i]: 0 <= i < N}", "{[i] -> [0, i, 0]}"))
    root = 0 if same_nest else 1
    comp.add_stmt(spf.Stmt(second, "{[i]: 0 <= i < N}", f"{{[i] -> [{root}, i, 1]}}"))
    return comp


@pytest.mark.parametrize(
    ("first", "second", "reader"),
    [
        ("$h$(0) += $h$(1) * $x$(i);", "$y$(i) = $x$(i);", "s0"),  # another entry of the sum
        ("$h$(0) += $x$(i);", "$y$(i) = $h$(0);", "s1"),  # a running sum
        ("$h$(0) += $x$(i);", "$y$(i) = $h$(1) * $x$(i);", "s1"),
    ],
)
def test_a_scalar_read_in_the_loop_nest_that_sums_into_it_is_refused(
    first: str, second: str, reader: str
) -> None:
    """Each rank's accumulator starts its phase at zero: a read of it in the nest that sums
    into it read 0 or the rank's partial sum (h(0) = 1 where one process has 56)."""
    with pytest.raises(CodegenError, match=f"{reader} reads h in the loop nest in which s0"):
        _reads_a_sum(first, second, same_nest=True).distribute_rows("i", data={"x": 0, "y": 0})


def test_a_scalar_read_before_a_later_nest_sums_into_it_reads_its_value_on_entry() -> None:
    """``y(i) = h(0) * x(i)`` then, in a later nest, ``h(0) += x(i)``: the phase zeroed h
    before the first nest ran, so y was 0 on every rank; the sum now starts a phase of its
    own."""
    from spf.distributed.analysis import analyse

    comp = _reads_a_sum("$y$(i) = $h$(0) * $x$(i);", "$h$(0) += $x$(i);", same_nest=False)
    comp.distribute_rows("i", data={"x": 0, "y": 0})
    assert comp.distribution is not None
    phases = analyse(comp, comp.distribution).phases
    assert [(p.stmts, p.reductions) for p in phases] == [(("s0",), ()), (("s1",), ("h",))]
    src = comp.codegen("mpi")
    assert src.index("phase 0: rows that read no ghost") < src.index("h[spf_q] = 0;")


@pytest.mark.parametrize(
    ("target", "domain"),
    [
        ("$d$(t) += $x$(i) * (t + 1);", "{[i,t]: 0 <= i < N && 0 <= t < 3}"),
        ("$d$(N - 1) += $x$(i);", "{[i]: 0 <= i < N}"),
    ],
)
def test_a_write_into_a_vector_that_is_not_distributed_at_no_row_is_refused(
    target: str, domain: str
) -> None:
    """``d(t) += x(i) * (t + 1)`` (three dot products at once) left each rank with its own
    rows' part of d (2 ranks, x = 0..6: [6, 12, 18] and [15, 30, 45] where one process has
    [21, 42, 63]), no error; only scalars at constant indices are summed over the ranks."""
    comp = spf.Computation("several_dots")
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_data_space("d", "double", shape=(3,))
    comp.add_stmt(spf.Stmt(target, domain))
    with pytest.raises(CodegenError, match=r"at an index that does not depend on the rows"):
        comp.distribute_rows("i", data={"x": 0})


def test_rank_local_writes_indexed_through_the_rows_stay_allowed() -> None:
    """A temporary of the rank's nonzeros (``w(k)``, k bounded by ``rowptr(i)``) is the
    rank's own, as A is."""
    comp = spf.kernels.spmv_csr()
    comp.add_data_space("w", "double", shape=("NNZ",))
    comp.add_stmt(
        spf.Stmt(
            "$w$(k) = $A$(k) * $x$(j);",
            "{[i,k,j]: 0 <= i < N && rowptr(i) <= k < rowptr(i+1) && j = col(k)}",
            "{[i,k,j] -> [1, i, k, j]}",
        )
    )
    comp.distribute_rows("i", data={"y": 0, "x": 0})


@pytest.mark.parametrize(
    ("source", "domain", "message"),
    [
        ("$y$(i) = i * 1.0;", "{[i]: 0 <= i < N}", "s0 uses i as a value"),
        ("$y$(i) = $x$(i) * (i + 1);", "{[i]: 0 <= i < N}", "s0 uses i as a value"),
        ("if (i == 0) $y$(i) = 5.0;", "{[i]: 0 <= i < N}", "s0 uses i as a value"),
        ("$y$(i) = $x$(i);", "{[i]: 1 <= i < N - 1}", "constrains i by '1 <= i'"),
        ("$y$(i) = $x$(i);", "{[i]: 0 <= i < N && i % 2 = 0}", "constrains i by"),
        ("$y$(i) = $x$(i) * p;", "{[i,p]: 0 <= i < N && p = i}", "s0 uses p as a value"),
    ],
)
def test_the_rows_local_number_used_as_a_value_or_bound_is_refused(
    source: str, domain: str, message: str
) -> None:
    """Each rank runs its rows numbered from 0: ``y(i) = i * 1.0`` gave [0..4, 0..4] on
    2 ranks of 10 rows instead of 0..9, ``if (i == 0)`` ran on every rank's first row and
    ``1 <= i < N - 1`` left out every rank's first and last row, with no error."""
    comp = spf.Computation("by_row")
    comp.add_data_space("y", "double", shape=("N",))
    comp.add_data_space("x", "double", shape=("N",))
    comp.add_stmt(spf.Stmt(source, domain))
    with pytest.raises(CodegenError, match=re.escape(message)):
        comp.distribute_rows("i", data={"y": 0, "x": 0})


def test_every_built_in_format_uses_its_rows_only_as_rows() -> None:
    from spf.formats import BCSR, BDIA, COO, CSC, CSR, DIA, ELL, SELL

    for fmt in (CSR, ELL, SELL(4, 8), COO, CSC, DIA, BDIA(4), BCSR(2, 2)):
        assert spf.mpi.spmv(fmt).distribution is not None


def test_a_row_count_used_as_a_value_or_another_iterators_bound_is_refused() -> None:
    """N is each rank's count of rows inside the distributed computation: ``y(i) = x(i) / N``
    divided by 5 on 2 ranks of 10 rows, and a mean ``m() = s() / N`` outside the loop came
    out 11.0 instead of 5.5, with no error."""

    def comp(extra: list[tuple[str, str, str]]) -> spf.Computation:
        c = spf.Computation("counts")
        c.add_data_space("y", "double", shape=("N",))
        c.add_data_space("x", "double", shape=("N",))
        c.add_data_space("w", "double", shape=(8,))
        for name in ("s", "m"):
            c.add_data_space(name, "double", shape=())
        for source, domain, schedule in extra:
            c.add_stmt(spf.Stmt(source, domain, schedule))
        return c

    rows = "{[i]: 0 <= i < N}"
    for extra, message in (
        ([("$y$(i) = $x$(i) / N;", rows, "{[i] -> [0, i, 0]}")], "s0 uses N as a value"),
        (
            [
                ("$s$() += $x$(i);", rows, "{[i] -> [0, i, 0]}"),
                ("$m$() = $s$() / N;", "{[c]: c = 0}", "{[c] -> [1, c, 0]}"),
            ],
            "s1 uses N as a value",
        ),
        (
            [("$y$(i) += $w$(t);", "{[i,t]: 0 <= i < N && 0 <= t < N}", "{[i,t] -> [0,i,t]}")],
            "the domain of s0 bounds t by",
        ),
    ):
        with pytest.raises(CodegenError, match=re.escape(message)):
            comp(extra).distribute_rows("i", data={"y": 0, "x": 0})


def test_a_parallel_reduction_keeps_its_option_in_the_ranks_local_computation() -> None:
    """The local computation re-applied parallelize(loop) without the reduction option, so
    a distributed dot product parallelized with reduction='atomic' was refused with a
    message asking for exactly that option. A privatized accumulation through an index
    array (A^T x) is refused instead: its per-thread copies span the declared extent of y,
    where a rank holds the compact buffer of its entries and ghosts (the merge wrote past it)."""
    comp = kernels.spmv_csr()
    comp.add_data_space("w", "double", shape=("N",))
    comp.add_data_space("s", "double", shape=())
    comp.add_stmt(spf.Stmt("$s$() += $y$(i) * $w$(i);", "{[i]: 0 <= i < N}", "{[i]->[1,i,0,0]}"))
    comp.stmts[1].parallelize("i", reduction="atomic")
    comp.distribute_rows("i", data={"y": 0, "x": 0, "w": 0})
    assert "#pragma omp atomic" in comp.codegen("mpi")
    atx = kernels.spmtv_csr()
    atx.stmts[0].parallelize("i", reduction="atomic")
    atx.distribute_rows("i", data={"y": 0, "x": 0})
    assert "#pragma omp atomic" in atx.codegen("mpi")
    private = kernels.spmtv_csr()
    private.stmts[0].parallelize("i", reduction="privatize")
    private.distribute_rows("i", data={"y": 0, "x": 0})
    with pytest.raises(CodegenError, match=r"reduction='privatize'.*use parallelize\('i', reduc"):
        private.codegen("mpi")


@pytest.mark.requires_mpi
def test_processes_compiling_one_distributed_kernel_at_once_make_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranks compiling the same row-distributed kernel at the same time: one generates it
    and stores its remembered entry under the entry's lock, the others wait and load it,
    inspector included (threads stand for the ranks: each holds the lock through its own
    open file, as a process does)."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from spf.distributed import kernel as dk

    made: list[str] = []
    lock = threading.Lock()
    generate = dk._generate

    def slow_generate(*args: object, **kwargs: object) -> object:
        with lock:
            made.append(threading.current_thread().name)
        time.sleep(0.5)  # long enough for the other threads to miss the entry too
        return generate(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(dk, "_generate", slow_generate)
    monkeypatch.setenv("SPF_CACHE_DIR", str(tmp_path / "cache"))
    comp = spf.mpi.spmv(spf.formats.builtin("CSR"))
    with ThreadPoolExecutor(3) as pool:
        built = list(pool.map(lambda _: comp.compile(target="mpi"), range(3)))
    assert len(made) == 1
    assert len({k.path for k in built}) == 1
    assert all(k.layout.accesses for k in built)
    assert all(k._inspector_kernel is not None for k in built)  # built with the executor
