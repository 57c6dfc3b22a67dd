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
#define col(t0, t1) col[(t0) * W + (t1)]
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * W + (t1)]
#define x(t0) x[t0]
#define spmv_target(p, w, i, j) y(i)
#define spmv_value(p, w, i, j) A(p, w) * x(j)
#define spmv(p, w, i, j) y(i) += A(p, w) * x(j)

void spmv_ell_generated(MPI_Comm comm, int64_t M, int64_t N, int64_t W, const int32_t *restrict col, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)W;
  (void)col;
  (void)y;
  (void)A;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  if (M >= 1)
  {
    for (int64_t p = 0; p < N; p++)
    {
      {
        double spf_acc = spmv_target(0, 0, p, 0);
        for (int64_t w = 0; w < W; w++)
        {
          const int64_t col_p_w = col(p, w);
          spf_acc += spmv_value(p, w, p, col_p_w);
        }
        spmv_target(0, 0, p, 0) = spf_acc;
      }
    }
  }
}
