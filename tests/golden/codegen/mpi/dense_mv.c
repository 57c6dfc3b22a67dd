#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#ifndef SPF_FAULT_NOTE
#define SPF_FAULT_NOTE
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
  __attribute__((cold, noinline, unused));
static void spf_fault_note(int64_t *f, int64_t kind, int64_t uf, int64_t at, int64_t v)
{
  int64_t none = 0;
  if (__atomic_compare_exchange_n(&f[0], &none, kind, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
  {
    f[1] = uf;
    f[2] = at;
    f[3] = v;
  }
}
#endif
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * M + (t1)]
#define x(t0) x[t0]
#define s0_target(i, j) y(i)
#define s0_value(i, j) A(i, j) * x(j)
#define s0(i, j) y(i) += A(i, j) * x(j)

void dense_mv(MPI_Comm comm, int64_t M, int64_t N, double *restrict y, const double *restrict A, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)y;
  (void)A;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
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
