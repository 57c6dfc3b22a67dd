#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define B(t0, t1) B[(t0) * N + (t1)]
#define A(t0, t1) A[(t0) * N + (t1)]
#define s0(i, j) B(i, j) = 0.2 * (A(i, j) + A((i) - 1, j) + A((i) + 1, j) + A(i, (j) - 1) + A(i, (j) + 1))

void jacobi2d(int64_t N, double *restrict B, const double *restrict A)
{
  (void)N;
  (void)B;
  (void)A;
  for (int64_t i = 1; i < N - 1; i++)
  {
    for (int64_t j = 1; j < N - 1; j++)
    {
      s0(i, j);
    }
  }
}
