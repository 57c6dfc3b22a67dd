#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define offsets(t0) offsets[t0]
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * N + (t1)]
#define x(t0) x[t0]
#define spmv_target(d, p, i, j) y(i)
#define spmv_value(d, p, i, j) A(d, p) * x(j)
#define spmv(d, p, i, j) y(i) += A(d, p) * x(j)

void spmv_dia_generated(int64_t M, int64_t N, int64_t ND, const int32_t *restrict offsets, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)ND;
  (void)offsets;
  (void)y;
  (void)A;
  (void)x;
  if (M >= 1 && N >= 1)
  {
    for (int64_t d = 0; d < ND; d++)
    {
      const int64_t offsets_d = offsets(d);
      for (int64_t p = spf_max(0, -offsets_d); p < spf_min(N, M - offsets_d); p++)
      {
        spmv(d, p, p, offsets_d + p);
      }
    }
  }
}
