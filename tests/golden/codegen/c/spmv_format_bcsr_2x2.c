#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define bcol(t0) bcol[t0]
#define browptr(t0) browptr[t0]
#define y(t0) y[t0]
#define A(t0, t1, t2) A[((t0) * (int64_t) 2 + (t1)) * (int64_t) 2 + (t2)]
#define x(t0) x[t0]
#define spmv_target(ib, kb, ri, ci, i, j) y(i)
#define spmv_value(ib, kb, ri, ci, i, j) A(kb, ri, ci) * x(j)
#define spmv(ib, kb, ri, ci, i, j) y(i) += A(kb, ri, ci) * x(j)

void spmv_bcsr2x2_generated(int64_t MB, int64_t NB, int64_t NNZB, const int32_t *restrict bcol, const int32_t *restrict browptr, double *restrict y, const double *restrict A, const double *restrict x)
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
    for (int64_t ib = 0; ib < NB; ib++)
    {
      const int64_t browptr_1_ib = browptr(1 + ib);
      const int64_t browptr_ib = browptr(ib);
      for (int64_t kb = browptr_ib; kb < browptr_1_ib; kb++)
      {
        const int64_t bcol_kb = bcol(kb);
        for (int64_t ri = 0; ri <= 1; ri++)
        {
          {
            double spf_acc = spmv_target(0, 0, 0, 0, ri + 2 * ib, 0);
            for (int64_t ci = 0; ci <= 1; ci++)
            {
              spf_acc += spmv_value(ib, kb, ri, ci, ri + 2 * ib, 2 * bcol_kb + ci);
            }
            spmv_target(0, 0, 0, 0, ri + 2 * ib, 0) = spf_acc;
          }
        }
      }
    }
  }
}
