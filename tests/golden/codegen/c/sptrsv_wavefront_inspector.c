#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define col(t0) col[t0]
#define rowptr(t0) rowptr[t0]
#define level(t0) level[t0]
#define nlevels() nlevels[0]
#define s0(i) level(i) = 0
#define s1(ip, k, j) level(ip) = spf_max(level(ip), level(j) + 1)
#define s2(i) nlevels() = spf_max(nlevels(), level(i) + 1)

void sptrsv_csr_inspector_i(int64_t N, int64_t NNZ, const int32_t *restrict col, const int32_t *restrict rowptr, int64_t *restrict level, int64_t *restrict nlevels)
{
  (void)N;
  (void)NNZ;
  (void)col;
  (void)rowptr;
  (void)level;
  (void)nlevels;
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
