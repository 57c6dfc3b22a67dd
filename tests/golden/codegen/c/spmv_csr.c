#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define rowptr(t0) rowptr[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define s0_target(i, k, j) y(i)
#define s0_value(i, k, j) A(k) * x(j)
#define s0(i, k, j) y(i) += A(k) * x(j)

void spmv_csr(int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)y;
  (void)A;
  (void)x;
  if (M >= 1 && NNZ >= 1)
  {
    for (int64_t i = 0; i < N; i++)
    {
      const int64_t rowptr_1_i = rowptr(1 + i);
      const int64_t rowptr_i = rowptr(i);
      {
        double spf_acc = s0_target(i, 0, 0);
        for (int64_t k = rowptr_i; k < rowptr_1_i; k++)
        {
          const int64_t col_k = col(k);
          spf_acc += s0_value(i, k, col_k);
        }
        s0_target(i, 0, 0) = spf_acc;
      }
    }
  }
}
