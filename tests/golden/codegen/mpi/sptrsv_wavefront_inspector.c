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
#define col(t0) col[t0]
#define rowptr(t0) rowptr[t0]
#define level(t0) level[t0]
#define nlevels() nlevels[0]
#define s0(i) level(i) = 0
#define s1(ip, k, j) level(ip) = spf_max(level(ip), level(j) + 1)
#define s2(i) nlevels() = spf_max(nlevels(), level(i) + 1)

void sptrsv_csr_inspector_i(MPI_Comm comm, int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, int64_t *restrict level, int64_t *restrict nlevels)
{
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)level;
  (void)nlevels;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  for (int64_t i = 0; i < N; i++)
  {
    s0(i);
  }
  if (NNZ >= 2)
  {
    for (int64_t ip = 1; ip < N; ip++)
    {
      const int64_t rowptr_1_i = rowptr(1 + ip);
      const int64_t rowptr_i = rowptr(ip);
      for (int64_t k = rowptr_i; k < rowptr_1_i - 1; k++)
      {
        const int64_t col_k = col(k);
        if (ip >= col_k + 1)
        {
          s1(ip, k, col_k);
        }
      }
    }
  }
  for (int64_t i = 0; i < N; i++)
  {
    s2(i);
  }
}
