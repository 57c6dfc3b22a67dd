#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#ifndef SPF_FAULT_NOTE
#define SPF_FAULT_NOTE
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
  __attribute__((cold, noinline, unused));
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
{
  int64_t none = 0;
  if (__atomic_compare_exchange_n(&f[0], &none, kind, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
    f[1] = uf;
    f[2] = at;
    f[3] = v;
  }
}
#endif
#define doff(t0) doff[t0]
#define dptr(t0) dptr[t0]
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * (int64_t) 2 + (t1)]
#define x(t0) x[t0]
#define spmv_target(b, s, r, i, j) y(i)
#define spmv_value(b, s, r, i, j) A(s, r) * x(j)
#define spmv(b, s, r, i, j) y(i) += A(s, r) * x(j)

void spmv_bdia2_generated(MPI_Comm comm, int64_t M, int64_t N, int64_t NB, int64_t NS, const int32_t *restrict doff, const int32_t *restrict dptr, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NB;
  (void)NS;
  (void)doff;
  (void)dptr;
  (void)y;
  (void)A;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  if (M >= 1 && NS >= 1)
  {
    for (int64_t b = 0; b < spf_min(NB, spf_floord(N + 1, 2)); b++)
    {
      const int64_t dptr_1_b = dptr(1 + b);
      const int64_t dptr_b = dptr(b);
      for (int64_t s = dptr_b; s < dptr_1_b; s++)
      {
        const int64_t doff_s = doff(s);
        for (int64_t r = spf_max(0, -doff_s - 2 * b); r <= spf_min(spf_min(1, N - 2 * b - 1), M - doff_s - 2 * b - 1); r++)
        {
          spmv(b, s, r, r + 2 * b, doff_s + 2 * b + r);
        }
      }
    }
  }
}
