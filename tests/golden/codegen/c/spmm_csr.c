#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define rowptr(t0) rowptr[t0]
#define C(t0, t1) C[(t0) * K + (t1)]
#define A(t0) A[t0]
#define B(t0, t1) B[(t0) * K + (t1)]
#define s0_target(i, k, j, c) C(i, c)
#define s0_value(i, k, j, c) A(k) * B(j, c)
#define s0(i, k, j, c) C(i, c) += A(k) * B(j, c)

void spmm_csr(int64_t K, int64_t M, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, double *restrict C, const double *restrict A, const double *restrict B)
{
  (void)K;
  (void)M;
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)C;
  (void)A;
  (void)B;
  if (K >= 1 && M >= 1 && NNZ >= 1)
  {
    for (int64_t i = 0; i < N; i++)
    {
      const int64_t rowptr_1_i = rowptr(1 + i);
      const int64_t rowptr_i = rowptr(i);
      for (int64_t k = rowptr_i; k < rowptr_1_i; k++)
      {
        const int64_t col_k = col(k);
        for (int64_t c = 0; c < K; c++)
        {
          s0(i, k, col_k, c);
        }
      }
    }
  }
}
