#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define C(t0, t1) C[(t0) * M + (t1)]
#define A(t0, t1) A[(t0) * K + (t1)]
#define B(t0, t1) B[(t0) * M + (t1)]
#define s0_target(i, j, k) C(i, j)
#define s0_value(i, j, k) A(i, k) * B(k, j)
#define s0(i, j, k) C(i, j) += A(i, k) * B(k, j)

void gemm(int64_t K, int64_t M, int64_t N, double *restrict C, const double *restrict A, const double *restrict B)
{
  (void)K;
  (void)M;
  (void)N;
  (void)C;
  (void)A;
  (void)B;
  for (int64_t i = 0; i < N; i++)
  {
    for (int64_t j = 0; j < M; j++)
    {
      {
        double spf_acc = s0_target(i, j, 0);
        for (int64_t k = 0; k < K; k++)
        {
          spf_acc += s0_value(i, j, k);
        }
        s0_target(i, j, 0) = spf_acc;
      }
    }
  }
}
