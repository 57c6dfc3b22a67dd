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
#define rowptr(t0) rowptr[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define spmv_target(i, k, j) y(i)
#define spmv_value(i, k, j) A(k) * x(j)
#define spmv(i, k, j) y(i) += A(k) * x(j)

void spmv_csr_generated(MPI_Comm comm, int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)y;
  (void)A;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  if (M >= 1 && NNZ >= 1)
  {
    for (int64_t i = 0; i < N; i++)
    {
      const int64_t rowptr_1_i = rowptr(1 + i);
      const int64_t rowptr_i = rowptr(i);
      {
        double spf_acc = spmv_target(i, 0, 0);
        for (int64_t k = rowptr_i; k < rowptr_1_i; k++)
        {
          const int64_t col_k = col(k);
          spf_acc += spmv_value(i, k, col_k);
        }
        spmv_target(i, 0, 0) = spf_acc;
      }
    }
  }
}
