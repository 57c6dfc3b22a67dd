#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define bcol(t0) bcol[t0]
#define browptr(t0) browptr[t0]
#define y(t0) y[t0]
#define A(t0) A[t0]
#define x(t0) x[t0]
#define s0_target(i, k, j, ii, jj) y(2 * (i) + (ii))
#define s0_value(i, k, j, ii, jj) A(4 * (k) + 2 * (ii) + (jj)) * x(2 * (j) + (jj))
#define s0(i, k, j, ii, jj) y(2 * (i) + (ii)) += A(4 * (k) + 2 * (ii) + (jj)) * x(2 * (j) + (jj))

void spmv_bcsr_2x2(int64_t MB, int64_t NB, int64_t NNZB, const int32_t *restrict bcol, const int32_t *restrict browptr, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)MB;
  (void)NB;
  (void)NNZB;
  (void)bcol;
  (void)browptr;
  (void)y;
  (void)A;
  (void)x;
  if (MB >= 1 && NNZB >= 1)
  {
    for (int64_t i = 0; i < NB; i++)
    {
      const int64_t browptr_1_i = browptr(1 + i);
      const int64_t browptr_i = browptr(i);
      for (int64_t k = browptr_i; k < browptr_1_i; k++)
      {
        const int64_t bcol_k = bcol(k);
        for (int64_t ii = 0; ii <= 1; ii++)
        {
          {
            double spf_acc = s0_target(i, 0, 0, ii, 0);
            for (int64_t jj = 0; jj <= 1; jj++)
            {
              spf_acc += s0_value(i, k, bcol_k, ii, jj);
            }
            s0_target(i, 0, 0, ii, 0) = spf_acc;
          }
        }
      }
    }
  }
}
