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
#define cl(t0) cl[t0]
#define cs(t0) cs[t0]
#define perm(t0) perm[t0]
#define scol(t0) scol[t0]
#define y(t0) y[t0]
#define val(t0) val[t0]
#define x(t0) x[t0]
#define spmv_target(ch, w, r, k, i, j) y(i)
#define spmv_value(ch, w, r, k, i, j) val(k) * x(j)
#define spmv(ch, w, r, k, i, j) y(i) += val(k) * x(j)

void spmv_sell4_8_generated(MPI_Comm comm, int64_t M, int64_t N, int64_t NC, int64_t NV, const int32_t *restrict cl, const int32_t *restrict cs, const int32_t *restrict perm, const int32_t *restrict scol, double *restrict y, const double *restrict val, const double *restrict x)
{
  (void)M;
  (void)N;
  (void)NC;
  (void)NV;
  (void)cl;
  (void)cs;
  (void)perm;
  (void)scol;
  (void)y;
  (void)val;
  (void)x;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  if (M >= 1 && NV >= 1)
  {
    for (int64_t ch = 0; ch <= spf_min(NC - 1, spf_floord(N - 1, 4)); ch++)
    {
      const int64_t cl_ch = cl(ch);
      const int64_t cs_ch = cs(ch);
      for (int64_t w = 0; w <= spf_min(cl_ch - 1, spf_floord(-cs_ch + NV - 1, 4)); w++)
      {
        for (int64_t r = 0; r <= spf_min(spf_min(3, N - 4 * ch - 1), -cs_ch + NV - 4 * w - 1); r++)
        {
          const int64_t perm_r_4_ch = perm(r + 4 * ch);
          const int64_t scol_k = scol(cs_ch + 4 * w + r);
          spmv(ch, w, r, cs_ch + 4 * w + r, perm_r_4_ch, scol_k);
        }
      }
    }
  }
}
