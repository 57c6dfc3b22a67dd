#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define levelptr_i(t0) levelptr_i[t0]
#define order_i(t0) order_i[t0]
#define partptr_i(t0) partptr_i[t0]
#define rowptr(t0) rowptr[t0]
#define u(t0) u[t0]
#define L(t0) L[t0]
#define f(t0) f[t0]
#define s0(i_lev, i_part, i_pos, i) u(i) = f(i)
#define s1(i_lev, i_part, i_pos, i, k, j) u(i) -= L(k) * u(j)
#define s2_target(i_lev, i_part, i_pos, i, k) u(i)
#define s2_value(i_lev, i_part, i_pos, i, k) L(k)
#define s2(i_lev, i_part, i_pos, i, k) u(i) = u(i) / L(k)

void sptrsv_csr(int64_t N, int64_t NNZ, int64_t nlevels_i, int64_t nparts_i, const int32_t *restrict col, const int32_t *restrict levelptr_i, const int32_t *restrict order_i, const int32_t *restrict partptr_i, const int32_t *restrict rowptr, double *restrict u, const double *restrict L, const double *restrict f)
{
  (void)N;
  (void)NNZ;
  (void)nlevels_i;
  (void)nparts_i;
  (void)col;
  (void)levelptr_i;
  (void)order_i;
  (void)partptr_i;
  (void)rowptr;
  (void)u;
  (void)L;
  (void)f;
  if (N >= 1 && nparts_i >= 1)
  {
    #pragma omp parallel
    {
      for (int64_t i_lev = 0; i_lev < nlevels_i; i_lev++)
      {
        const int64_t levelptr_i_1_i_lev = levelptr_i(1 + i_lev);
        const int64_t levelptr_i_i_lev = levelptr_i(i_lev);
        #pragma omp for schedule(static, 1)
        for (int64_t i_part = levelptr_i_i_lev; i_part < spf_min(levelptr_i_1_i_lev, nparts_i); i_part++)
        {
          const int64_t partptr_i_1_i_part = partptr_i(1 + i_part);
          const int64_t partptr_i_i_part = partptr_i(i_part);
          {
            double spf_prev = 0;
            int64_t spf_prev_at0 = INT64_MIN;
            for (int64_t i_pos = partptr_i_i_part; i_pos < partptr_i_1_i_part; i_pos++)
            {
              const int64_t order_i_i_pos = order_i(i_pos);
              {
                double spf_row;
                spf_row = f(order_i_i_pos);
                const int64_t rowptr_1_i = rowptr(1 + order_i_i_pos);
                const int64_t rowptr_i = rowptr(order_i_i_pos);
                {
                  const int64_t spf_first_k = rowptr_i;
                  const int64_t spf_end_k = rowptr_1_i - 1;
                  if (spf_first_k < spf_end_k)
                  {
                    for (int64_t k = spf_first_k; k < spf_end_k - 1; k++)
                    {
                      const int64_t col_k = col(k);
                      spf_row -= L(k) * u(col_k);
                    }
                    {
                      const int64_t k = spf_end_k - 1;
                      const int64_t col_k = col(k);
                      spf_row -= L(k) * (col_k == spf_prev_at0 ? spf_prev : u(col_k));
                    }
                  }
                }
                spf_row = spf_row / L(rowptr_1_i - 1);
                u(order_i_i_pos) = spf_row;
                spf_prev = spf_row;
                spf_prev_at0 = order_i_i_pos;
              }
            }
          }
        }
      }
    }
  }
}
