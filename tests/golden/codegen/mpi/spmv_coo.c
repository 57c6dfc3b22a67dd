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
#define col(t0) col[t0]
#define row(t0) row[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define s0_target(k, i, j) y(i)
#define s0_value(k, i, j) A(k) * x(j)
#define s0(k, i, j) y(i) += A(k) * x(j)

void spmv_coo(MPI_Comm comm, int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict row, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NNZ;
  (void)col;
  (void)row;
  (void)y;
  (void)A;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  if (M >= 1 && N >= 1)
  {
    for (int64_t k = 0; k < NNZ; k++)
    {
      const int64_t col_k = col(k);
      const int64_t row_k = row(k);
      s0(k, row_k, col_k);
    }
  }
}
