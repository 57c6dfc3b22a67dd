#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define colptr(t0) colptr[t0]
#define row(t0) row[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define s0_target(j, k, i) y(i)
#define s0_value(j, k, i) A(k) * x(j)
#define s0(j, k, i) y(i) += A(k) * x(j)

void spmv_csc(int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict colptr, const int32_t *restrict row, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NNZ;
  (void)colptr;
  (void)row;
  (void)y;
  (void)A;
  (void)x;
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
