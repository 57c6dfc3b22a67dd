#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * M + (t1)]
#define x(t0) x[t0]
#define s0_target(i, j) y(i)
#define s0_value(i, j) A(i, j) * x(j)
#define s0(i, j) y(i) += A(i, j) * x(j)

void dense_mv(int64_t M, int64_t N, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)y;
  (void)A;
  (void)x;
  for (int64_t i = 0; i < N; i++)
  {
    {
      double spf_acc = s0_target(i, 0);
      for (int64_t j = 0; j < M; j++)
      {
        spf_acc += s0_value(i, j);
      }
      s0_target(i, 0) = spf_acc;
    }
  }
}
