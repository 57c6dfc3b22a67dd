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
#define B(t0, t1) B[(t0) * N + (t1)]
#define A(t0, t1) A[(t0) * N + (t1)]
#define s0(i, j) B(i, j) = 0.2 * (A(i, j) + A((i) - 1, j) + A((i) + 1, j) + A(i, (j) - 1) + A(i, (j) + 1))

void jacobi2d(MPI_Comm comm, int64_t N, double *restrict B, const double *restrict A)
{
  (void)N;
  (void)B;
  (void)A;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  for (int64_t i = 1; i < N - 1; i++)
  {
    for (int64_t j = 1; j < N - 1; j++)
    {
      s0(i, j);
    }
  }
}
