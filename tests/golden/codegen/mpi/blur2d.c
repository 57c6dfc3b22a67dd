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
#define out(t0, t1) out[(t0) * (M - 2) + (t1)]
#define bx(t0, t1) bx[(t0) * (M - 2) + (t1)]
#define img(t0, t1) img[(t0) * M + (t1)]
#define s0(i, j) bx(i, j) = (img(i, j) + img(i, (j) + 1) + img(i, (j) + 2)) / 3.0
#define s1(i, j) out(i, j) = (bx(i, j) + bx((i) + 1, j) + bx((i) + 2, j)) / 3.0

void blur2d(MPI_Comm comm, int64_t M, int64_t N, double *restrict out, double *restrict bx, const double *restrict img)
{
  (void)M;
  (void)N;
  (void)out;
  (void)bx;
  (void)img;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  for (int64_t i = 0; i < N; i++)
  {
    for (int64_t j = 0; j < M - 2; j++)
    {
      s0(i, j);
    }
  }
  for (int64_t i = 0; i < N - 2; i++)
  {
    for (int64_t j = 0; j < M - 2; j++)
    {
      s1(i, j);
    }
  }
}
