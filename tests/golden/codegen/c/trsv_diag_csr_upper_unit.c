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
#define s0(t) x(N - 1 - (t)) = b(N - 1 - (t))
#define s1(t, k, j) x(N - 1 - (t)) -= A(k) * x(j)

void trsv_upper_unit_csr(int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict diag, const int32_t *restrict rowptr, double *restrict x, const double *restrict A, const double *restrict b)
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
    for (int64_t t = 0; t < N; t++)
    {
      {
        double spf_row;
        spf_row = b(N - 1 - t);
        const int64_t diag__1_N_t = diag(-1 + N + -t);
        const int64_t rowptr_N_t = rowptr(N + -t);
        {
          const int64_t spf_first_k = diag__1_N_t + 1;
          const int64_t spf_end_k = rowptr_N_t;
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
        x(N - 1 - t) = spf_row;
        spf_prev = spf_row;
        spf_prev_at0 = N - 1 - t;
      }
    }
  }
}
