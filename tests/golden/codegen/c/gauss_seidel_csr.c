#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define diag(t0) diag[t0]
#define rowptr(t0) rowptr[t0]
#define x(t0) x[t0]
#define A(t0) A[t0]
#define b(t0) b[t0]
#define s0(i) x(i) = b(i)
#define s1(i, k, j) x(i) -= A(k) * x(j)
#define s2(i, k, j) x(i) -= A(k) * x(j)
#define s3_target(i, k) x(i)
#define s3_value(i, k) A(k)
#define s3(i, k) x(i) = x(i) / A(k)

void gauss_seidel_csr(int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict diag, const int32_t *restrict rowptr, double *restrict x, const double *restrict A, const double *restrict b)
{
  (void)N;
  (void)NNZ;
  (void)col;
  (void)diag;
  (void)rowptr;
  (void)x;
  (void)A;
  (void)b;
  {
    double spf_prev = 0;
    int64_t spf_prev_at0 = INT64_MIN;
    for (int64_t i = 0; i < N; i++)
    {
      {
        double spf_row;
        spf_row = b(i);
        const int64_t diag_i = diag(i);
        const int64_t rowptr_i = rowptr(i);
        {
          const int64_t spf_first_k = rowptr_i;
          const int64_t spf_end_k = diag_i;
          if (spf_first_k < spf_end_k)
          {
            for (int64_t k = spf_first_k; k < spf_end_k - 1; k++)
            {
              const int64_t col_k = col(k);
              spf_row -= A(k) * x(col_k);
            }
            {
              const int64_t k = spf_end_k - 1;
              const int64_t col_k = col(k);
              spf_row -= A(k) * (col_k == spf_prev_at0 ? spf_prev : x(col_k));
            }
          }
        }
        const int64_t rowptr_1_i = rowptr(1 + i);
        {
          const int64_t spf_first_k = diag_i + 1;
          const int64_t spf_end_k = rowptr_1_i;
          if (spf_first_k < spf_end_k)
          {
            for (int64_t k = spf_first_k; k < spf_end_k - 1; k++)
            {
              const int64_t col_k = col(k);
              spf_row -= A(k) * x(col_k);
            }
            {
              const int64_t k = spf_end_k - 1;
              const int64_t col_k = col(k);
              spf_row -= A(k) * (col_k == spf_prev_at0 ? spf_prev : x(col_k));
            }
          }
        }
        spf_row = spf_row / A(diag_i);
        x(i) = spf_row;
        spf_prev = spf_row;
        spf_prev_at0 = i;
      }
    }
  }
}
