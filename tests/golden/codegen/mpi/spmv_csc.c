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
#define colptr(t0) colptr[t0]
#define row(t0) row[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define s0_target(j, k, i) y(i)
#define s0_value(j, k, i) A(k) * x(j)
#define s0(j, k, i) y(i) += A(k) * x(j)

void spmv_csc(MPI_Comm comm, int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict colptr, const int32_t *restrict row, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NNZ;
  (void)colptr;
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
  if (NNZ >= 1 && N >= 1)
  {
    for (int64_t j = 0; j < M; j++)
    {
      const int64_t colptr_1_j = colptr(1 + j);
      const int64_t colptr_j = colptr(j);
      for (int64_t k = colptr_j; k < colptr_1_j; k++)
      {
        const int64_t row_k = row(k);
        s0(j, k, row_k);
      }
    }
  }
}
