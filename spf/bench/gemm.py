"""DGEMM ``C += A·B`` (n x n, row-major): spf's packed schedule, hand-written C, OpenBLAS.

* ``spf``: ``spf.kernels.gemm()`` scheduled with spf's commands only (:func:`schedule`), as
  BLIS structures DGEMM: ``j`` split by ``NC`` and ``NR``, ``k`` by ``KC``, ``i`` by ``MC`` and
  ``MR`` (``split``), the loops ordered ``j0, k0, i0, j2, i2, k1, i3, j3`` (``interchange``);
  the ``KC x NC`` panel of ``B`` packed at ``k0`` as ``NC/NR`` slivers of ``KC x NR``
  (``cache_read("B", "k0", layout=["j2", "k1", "j3"])``), the ``MC x KC`` block of ``A``
  packed at ``i0`` as ``MC/MR`` slivers of ``KC x MR`` (``cache_read("A", "i0", layout=["i2",
  "k1", "i3"])``), so the micro-kernel reads both contiguously; the ``MR x NR`` register tile
  by unroll-and-jam (``vectorize(j3, VEC)``, ``unroll(i3)``, ``unroll(j30)``: the C printer
  keeps the tile of ``C`` in a local array across ``k1``, which gcc holds in registers), the
  ``A`` block allocated per ``i0`` iteration (``allocate_at``) and ``parallelize(i0)``: one
  parallel region per ``KC`` panel, each thread packing its own blocks of ``A``. The tile is
  chosen per instruction set (:data:`BLOCKINGS`): 6 x 32 (24 zmm accumulators) with AVX-512,
  6 x 8 (12 ymm) with AVX2. Compiled with ``-ffp-contract=fast`` (gcc's ``-std=c99``
  otherwise forbids fused multiply-adds).
* ``hand C``: a 4 x 32 register-tiled loop nest written by hand (``n`` a multiple of 256),
  with the tile of ``C`` held in a local array across the ``k`` loop; no packing.
* ``OpenBLAS``: numpy's ``np.matmul(A, B, out=C)`` (``C = A·B``, the same flop count).

All arrays are 64-byte aligned (:func:`spf.memory.aligned_empty`) for every code.
:func:`register_check` compiles spf's micro-kernel to assembly for AVX-512 and for AVX2 and
counts stack accesses in its ``k1`` loop (spilled accumulators): a note, not a timing.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import spf.kernels
from spf.bench.common import Context, Section, Variant, load_c, load_note, measure_groups, median
from spf.memory import aligned_copy, aligned_zeros
from spf.tuning.blocking import native_isa

CFLAGS = ["-O3", "-march=native", "-ffp-contract=fast"]


@dataclass(frozen=True)
class Blocking:
    """BLIS's blocking: register tile ``mr x nr`` (``vec`` doubles per vector), ``kc`` deep
    panels, ``mc`` rows of ``A`` per block, ``nc`` columns of ``B`` per panel."""

    mr: int
    nr: int
    vec: int
    kc: int
    mc: int
    nc: int

    @property
    def accumulators(self) -> int:
        """Vector registers the tile of ``C`` takes."""
        return self.mr * self.nr // self.vec

    def text(self) -> str:
        return (
            f"MR x NR = {self.mr} x {self.nr} ({self.accumulators} accumulators of "
            f"{self.vec} doubles), KC = {self.kc}, MC = {self.mc}, NC = {self.nc}"
        )


BLOCKINGS = {
    "avx512": Blocking(mr=6, nr=32, vec=8, kc=384, mc=96, nc=1536),
    "avx2": Blocking(mr=6, nr=8, vec=4, kc=384, mc=96, nc=1536),
}
"""Per instruction set: the accumulators, ``NR / vec`` vectors of ``B`` and one broadcast of
``A`` fit the 32 zmm (16 ymm) registers: 24 + 4 + 1 <= 32, 12 + 2 + 1 <= 16."""
ISA_FLAGS = {"avx512": [], "avx2": ["-mno-avx512f", "-mavx2", "-mfma"]}


HAND_C = r"""
#include <stdint.h>
/* C += A*B, row-major n x n, n a multiple of 256: 4x32 register block (16 zmm accumulators),
   k blocked by 256 so the 256x32 panel of B stays in L2. */
void hand_gemm(int64_t n, double *restrict C, const double *restrict A, const double *restrict B)
{
  #pragma omp parallel for schedule(static)
  for (int64_t j0 = 0; j0 < n / 32; j0++)
    for (int64_t k0 = 0; k0 < n; k0 += 256)
      for (int64_t i0 = 0; i0 < n / 4; i0++) {
        double acc[4][32];
        for (int i1 = 0; i1 < 4; i1++)
          for (int j = 0; j < 32; j++) acc[i1][j] = C[(4 * i0 + i1) * n + 32 * j0 + j];
        for (int64_t k = k0; k < k0 + 256; k++) {
          const double *b = B + k * n + 32 * j0;
          #pragma GCC unroll 4
          for (int i1 = 0; i1 < 4; i1++) {
            const double a = A[(4 * i0 + i1) * n + k];
            #pragma omp simd
            for (int j = 0; j < 32; j++) acc[i1][j] += a * b[j];
          }
        }
        for (int i1 = 0; i1 < 4; i1++)
          for (int j = 0; j < 32; j++) C[(4 * i0 + i1) * n + 32 * j0 + j] = acc[i1][j];
      }
}
"""
HAND_CDEF = "void hand_gemm(int64_t n, double *C, const double *A, const double *B);"


def schedule(blocking: Blocking | None = None) -> spf.Computation:
    """``gemm()`` packed and blocked as BLIS does (module docstring), commands only."""
    b = blocking or BLOCKINGS[native_isa()]
    comp = spf.kernels.gemm()
    s = comp.stmt(0)
    s.split("j", b.nc, "j0", "jj")
    s.split("jj", b.nr, "j2", "j3")
    s.split("k", b.kc, "k0", "k1")
    s.split("i", b.mc, "i0", "ii")
    s.split("ii", b.mr, "i2", "i3")
    for pos, name in enumerate(("j0", "k0", "i0", "j2", "i2", "k1", "i3", "j3")):
        if s.loops[pos] != name:
            s.interchange(s.loops[pos], name)
    s.cache_read("B", "k0", layout=["j2", "k1", "j3"])  # KC x NR slivers of the panel
    s.cache_read("A", "i0", layout=["i2", "k1", "i3"])  # KC x MR slivers of the block
    comp.buffer("A_pack_buf").allocate_at(s, "i0")  # one block per i0: i0 runs in parallel
    s.vectorize("j3", b.vec)  # j3 -> j30, j31 (omp simd)
    s.unroll("i3", b.mr)
    s.unroll("j30", b.nr // b.vec)
    s.parallelize("i0")
    return comp


# ----------------------------------------------------------------------------- assembly
@dataclass(frozen=True)
class TileCheck:
    """What the micro-kernel's ``k1`` loop does in the assembly gcc writes."""

    isa: str
    blocking: Blocking
    fmas: int
    """Vector fused multiply-adds in the loop."""
    vector_spills: int
    """Vector loads/stores of the stack in the loop (spilled accumulators)."""
    scalar_spills: int

    @property
    def holds(self) -> bool:
        return self.fmas >= self.blocking.accumulators and self.vector_spills == 0


def _loops(asm: list[str]) -> list[list[str]]:
    """Bodies of the innermost backward-jump loops of an assembly listing."""
    where = {line[:-1]: k for k, line in enumerate(asm) if re.match(r"^\.L\w+:$", line)}
    out = []
    for k, line in enumerate(asm):
        m = re.match(r"^\s+j\w+\s+(\.L\w+)$", line)
        if m and m.group(1) in where and where[m.group(1)] < k:
            body = asm[where[m.group(1)] + 1 : k]
            if not any(re.match(r"^\s+j\w+\s+\.L", x) for x in body):
                out.append(body)
    return out


def micro_kernel(asm: str, isa: str, blocking: Blocking) -> TileCheck:
    """The innermost loop with the most vector FMAs, and its stack traffic."""
    reg = "zmm" if isa == "avx512" else "ymm"
    best: list[str] = []
    for body in _loops(asm.splitlines()):
        if sum("vfmadd" in x and reg in x for x in body) > sum(
            "vfmadd" in x and reg in x for x in best
        ):
            best = body
    stack = [x for x in best if "(%rsp)" in x or "(%rbp)" in x]
    vector = [x for x in stack if "mm" in x]
    fmas = sum("vfmadd" in x and reg in x for x in best)
    return TileCheck(isa, blocking, fmas, len(vector), len(stack) - len(vector))


def register_check(work: Path, native: str | None = None, quick: bool = False) -> list[TileCheck]:
    """Compile each instruction set's schedule to assembly (gcc ``-S``, the kernel's flags
    plus :data:`ISA_FLAGS`) and inspect the micro-kernel; also the AVX-512 tile compiled for
    AVX2, which cannot hold (48 ymm accumulators). ``native``: the source already generated
    for this machine's instruction set; ``quick``: that one only."""
    out = []
    mine = native_isa()
    cases = [(isa, BLOCKINGS[isa]) for isa in ("avx512", "avx2")]
    cases.append(("avx2", BLOCKINGS["avx512"]))
    if quick:
        cases = [(mine, BLOCKINGS[mine])]
    for isa, blocking in cases:
        ready = native is not None and isa == mine and blocking == BLOCKINGS[mine]
        source = native if ready and native is not None else schedule(blocking).codegen()
        with tempfile.TemporaryDirectory(dir=work) as tmp:
            src, asm = Path(tmp) / "k.c", Path(tmp) / "k.s"
            src.write_text(source)
            cmd = ["gcc", "-std=c99", *CFLAGS, *ISA_FLAGS[isa], "-fopenmp", "-S", str(src)]
            subprocess.run([*cmd, "-o", str(asm)], check=True, capture_output=True)
            out.append(micro_kernel(asm.read_text(), isa, blocking))
    return out


def _register_notes(sec: Section, checks: list[TileCheck]) -> None:
    rows = []
    for c in checks:
        rows.append([c.isa, f"{c.blocking.mr} x {c.blocking.nr}", str(c.blocking.accumulators),
                     str(c.fmas), str(c.vector_spills), str(c.scalar_spills),
                     "yes" if c.holds else "no"])  # fmt: skip
    sec.line(
        "Register tile (gcc -S of spf's kernel, the micro-kernel's `k1` loop: vector FMAs "
        "and stack accesses; `-march=native` for AVX-512, plus `-mno-avx512f -mavx2 -mfma` "
        "for AVX2):\n"
    )
    sec.table(
        [
            "ISA",
            "MR x NR",
            "accumulators",
            "FMAs in k1 loop",
            "vector stack accesses",
            "scalar stack accesses",
            "tile held",
        ],
        rows,
    )
    sec.data["register_check"] = [
        {
            "isa": c.isa,
            "mr": c.blocking.mr,
            "nr": c.blocking.nr,
            "fmas": c.fmas,
            "vector_spills": c.vector_spills,
            "holds": c.holds,
        }
        for c in checks
    ]


def run(ctx: Context) -> Section:
    sec = Section("gemm")
    isa = native_isa()
    blocking = BLOCKINGS[isa]
    kernel = schedule(blocking).compile(cflags=CFLAGS, cache_dir=str(ctx.work / "kernels"))
    ffi, hand, hand_cmd = load_c(HAND_C, HAND_CDEF, "bench_hand_gemm", str(ctx.work))
    sec.data["spf_command"] = kernel.command
    sec.data["hand_command"] = hand_cmd
    sec.data["spf_source"] = kernel.source
    sec.data["blocking"] = {"isa": isa, **blocking.__dict__}
    blk = blocking
    sec.line(
        "### DGEMM `C += A·B` (GFLOP/s = 2n³ / median time; all arrays 64-byte aligned)\n\n"
        f"spf schedule (BLIS's, {isa}: {blk.text()}): `split(j, NC)`, `split(jj, NR)`, "
        "`split(k, KC)`, `split(i, MC)`, `split(ii, MR)`, interchange to "
        "`j0, k0, i0, j2, i2, k1, i3, j3`, "
        '`cache_read("B", "k0", layout=["j2", "k1", "j3"])`, '
        '`cache_read("A", "i0", layout=["i2", "k1", "i3"])`, '
        f"`vectorize(j3, {blk.vec})`, `unroll(i3, {blk.mr})`, `unroll(j30, {blk.nr // blk.vec})`, "
        '`buffer("A_pack_buf").allocate_at(s, "i0")`, '
        f"`parallelize(i0)`; spf and hand C built with `{' '.join(CFLAGS)}`.\n"
    )
    rng = np.random.default_rng(0)
    for n in ctx.cfg.gemm_sizes:
        ctx.log(f"gemm: n = {n}")
        a, b = aligned_copy(rng.uniform(-1, 1, (n, n))), aligned_copy(rng.uniform(-1, 1, (n, n)))
        cs = {key: aligned_zeros((n, n)) for key in ("spf", "hand", "blas")}
        fb = ffi.from_buffer
        hb = (fb("double[]", cs["hand"]), fb("double[]", a), fb("double[]", b))

        def spf_call(c: Any = cs["spf"], a: Any = a, b: Any = b) -> None:
            kernel(C=c, A=a, B=b, check=False)

        def hand_call(n: int = n, hb: Any = hb) -> None:
            hand.hand_gemm(n, *hb)

        def blas_call(c: Any = cs["blas"], a: Any = a, b: Any = b) -> None:
            np.matmul(a, b, out=c)

        want = a @ b
        for name, fn, out in (("spf", spf_call, "spf"), ("hand C", hand_call, "hand"),
                              ("OpenBLAS", blas_call, "blas")):  # fmt: skip
            cs[out][:] = 0.0
            fn()
            if not np.allclose(cs[out], want, rtol=1e-10, atol=1e-9):
                raise SystemExit(f"gemm n={n}: {name} gives a wrong C")
        ours: list[Variant] = []
        for t in ctx.threads:
            ours += [("spf", t, spf_call), ("hand C", t, hand_call)]
        blas: list[Variant] = [("OpenBLAS", t, blas_call) for t in ctx.threads]
        times, load = measure_groups(ctx, [ours, blas], ctx.cfg.gemm_rounds, warmup=1)
        gf = {key: 2 * n**3 / median(ts) / 1e9 for key, ts in times.items()}
        sec.line(f"#### n = {n}\n\n{load_note(load)}\n")
        rows = []
        for t in ctx.threads:
            best = max(gf["hand C", t], gf["OpenBLAS", t])
            for code in ("spf", "hand C", "OpenBLAS"):
                rows.append([code, str(t), f"{1e3 * median(times[code, t]):.2f}",
                             f"{gf[code, t]:.1f}", f"{gf[code, t] / gf['OpenBLAS', t]:.2f}",
                             f"{gf[code, t] / best:.2f}"])  # fmt: skip
            r = gf["spf", t] / gf["OpenBLAS", t]
            sec.target(
                f"DGEMM n={n}, {t} thread(s): spf >= 0.8x OpenBLAS throughput",
                f"{r:.2f}x ({gf['spf', t]:.1f} vs {gf['OpenBLAS', t]:.1f} GFLOP/s)",
                r >= 0.8,
                "" if r >= 0.8 else "see the register-tile check below",
            )
        sec.table(["code", "threads", "median ms", "GFLOP/s", "of OpenBLAS", "of best other"], rows)
        sec.data[str(n)] = {"gflops": {f"{c}@{t}": v for (c, t), v in gf.items()}, "load": load}
    _register_notes(sec, register_check(ctx.work, kernel.source, ctx.cfg.quick))
    return sec
