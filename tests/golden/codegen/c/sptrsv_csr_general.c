#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define rowptr(t0) rowptr[t0]
#define u(t0) u[t0]
#define L(t0) L[t0]
#define f(t0) f[t0]
#define s0(i) u(i) = f(i)
#define s1(i, k, j) u(i) -= L(k) * u(j)
#define s2_target(i, k) u(i)
#define s2_value(i, k) L(k)
#define s2(i, k) u(i) = u(i) / L(k)

void sptrsv_csr(int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, double *restrict u, const double *restrict L, const double *restrict f)
{
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)u;
  (void)L;
  (void)f;
  {
    double spf_prev = 0;
    int64_t spf_prev_at0 = INT64_MIN;
    for (int64_t i = 0; i < N; i++)
    {
      {
        double spf_row;
        spf_row = f(i);
        const int64_t rowptr_1_i = rowptr(1 + i);
        const int64_t rowptr_i = rowptr(i);
        {
          const int64_t spf_first_k = rowptr_i;
          const int64_t spf_end_k = rowptr_1_i - 1;
          if (spf_first_k < spf_end_k)
          {
            for (int64_t k = spf_first_k; k < spf_end_k - 1; k++)
            {
              const int64_t col_k = col(k);
              spf_row -= L(k) * (__builtin_expect(col_k == i, 0) ? spf_row : u(col_k));
            }
            {
              const int64_t k = spf_end_k - 1;
              const int64_t col_k = col(k);
              spf_row -= L(k) * (__builtin_expect(col_k == i, 0) ? spf_row : col_k == spf_prev_at0 ? spf_prev : u(col_k));
            }
          }
        }
        spf_row = spf_row / L(rowptr_1_i - 1);
        u(i) = spf_row;
        spf_prev = spf_row;
        spf_prev_at0 = i;
      }
    }
  }
}
