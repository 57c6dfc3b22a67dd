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
#define A_col(t0) A_col[t0]
#define A_rowptr(t0) A_rowptr[t0]
#define B_col(t0) B_col[t0]
#define B_rowptr(t0) B_rowptr[t0]
#define C_rowptr(t0) C_rowptr[t0]
#define A(t0) A[t0]
#define B(t0) B[t0]
#define C_col(t0) C_col[t0]
#define C(t0) C[t0]
#define mark(t0) mark[spf_ws_mark + (t0)]
#define acc(t0) acc[spf_ws_acc + (t0)]
#define spf_ds_lst(t0) lst[spf_ws_lst + (t0)]
#define spf_ds_len(t0) len[spf_ws_len + (t0)]
#define spf_ds_srt(t0) srt[spf_ws_srt + (t0)]
#define spf_ds_thr(t0) thr[t0]
#define spf_ds_base(t0) base[t0]
#define spf_ds_bits(t0) bits[t0]
#define spf_ds_rnk(t0) rnk[spf_ws_rnk + (t0)]
#define spf_ds_cnt(t0) cnt[spf_ws_cnt + (t0)]
#define spf_ds_cnt2(t0) cnt2[spf_ws_cnt2 + (t0)]
#define spf_ds_dig(t0) dig[spf_ws_dig + (t0)]
#define spf_ds_tmp(t0) tmp[spf_ws_tmp + (t0)]
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
static inline int32_t spf_index_in_int32_t(int32_t v, int32_t l, int32_t h, int32_t r, uint64_t bit, uint64_t *bad)
{
  const int out = (v < l) | (v > h);
  *bad |= (uint64_t)out << bit;
  return out ? r : v;
}
static inline int64_t spf_index_in_int64_t(int64_t v, int64_t l, int64_t h, int64_t r, uint64_t bit, uint64_t *bad)
{
  const int out = (v < l) | (v > h);
  *bad |= (uint64_t)out << bit;
  return out ? r : v;
}
#define lst(t0) lst[spf_ws_lst + (t0)]
#define len(t0) len[spf_ws_len + (t0)]
#define srt(t0) srt[spf_ws_srt + (t0)]
#define thr(t0) thr[t0]
#define base(t0) base[t0]
#define bits(t0) bits[t0]
#define rnk(t0) rnk[spf_ws_rnk + (t0)]
#define cnt(t0) cnt[spf_ws_cnt + (t0)]
#define cnt2(t0) cnt2[spf_ws_cnt2 + (t0)]
#define dig(t0) dig[spf_ws_dig + (t0)]
#define tmp(t0) tmp[spf_ws_tmp + (t0)]
#define s0(i) spf_ds_len(0) = 0
#define s1(i, a) spf_ds_lst(a) = M - 1
#define s2(i, A_k, k, B_k, j) do { \
  if (mark(j) != (i) + 1) \
  { \
    mark(j) = (i) + 1; \
    spf_ds_lst(len(0)) = j; \
    spf_ds_len(0) += 1; \
    acc(j) = 0; \
  } \
  acc(j) += A(A_k) * B(B_k); \
} while (0)
#define s3(z) do { \
  spf_ds_thr(z) = (int64_t) fmin((double) M, sqrt(32.0 * sqrt((double) M))); \
  spf_ds_bits(z) = (int64_t) ceil(log2((double) M + 1.0) / 2.0); \
  spf_ds_base(z) = (int64_t) 1 << bits(z); \
} while (0)
#define s4(i, a) spf_ds_lst(a) = M - 1
#define s5_target(i, v, a, l) spf_ds_rnk(16 * (v) + (l))
#define s5_value(i, v, a, l) lst(a) < lst(16 * (v) + (l))
#define s5(i, v, a, l) spf_ds_rnk(16 * (v) + (l)) += lst(a) < lst(16 * (v) + (l))
#define s6(i, a) do { \
  spf_ds_srt(rnk(a)) = lst(a); \
  spf_ds_rnk(a) = 0; \
} while (0)
#define s7(i, j) do { \
  spf_ds_cnt(j) = 0; \
  spf_ds_cnt2(j) = 0; \
} while (0)
#define s8(i, a) do { \
  spf_ds_dig(a) = lst(a) >> bits(0); \
  spf_ds_cnt2(dig(a) + 1) += 1; \
  spf_ds_dig(a) = lst(a) & (base(0) - 1); \
  spf_ds_cnt(dig(a) + 1) += 1; \
} while (0)
#define s9(i, j) do { \
  spf_ds_cnt(j) += cnt((j) - 1); \
  spf_ds_cnt2(j) += cnt2((j) - 1); \
} while (0)
#define s10(i, a) do { \
  spf_ds_tmp(cnt(dig(a))) = lst(a); \
  spf_ds_cnt(dig(a)) += 1; \
} while (0)
#define s11(i, a) do { \
  spf_ds_dig(a) = tmp(a) >> bits(0); \
  spf_ds_srt(cnt2(dig(a))) = tmp(a); \
  spf_ds_cnt2(dig(a)) += 1; \
} while (0)
#define s12(i, p) do { \
  C_col(p) = srt((p) - C_rowptr(i)); \
  C(p) = acc(srt((p) - C_rowptr(i))); \
} while (0)

void spgemm_csr_numeric(MPI_Comm comm, int64_t A_NNZ, int64_t B_NNZ, int64_t C_NNZ, int64_t K, int64_t M, int64_t N, const int32_t *restrict A_col, const int32_t *restrict A_rowptr, const int32_t *restrict B_col, const int32_t *restrict B_rowptr, const int32_t *restrict C_rowptr, const double *restrict A, const double *restrict B, int32_t *restrict C_col, double *restrict C)
{
  (void)A_NNZ;
  (void)B_NNZ;
  (void)C_NNZ;
  (void)K;
  (void)M;
  (void)N;
  (void)A_col;
  (void)A_rowptr;
  (void)B_col;
  (void)B_rowptr;
  (void)C_rowptr;
  (void)A;
  (void)B;
  (void)C_col;
  (void)C;
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  int64_t spf_fault[4] = {0};
  uint64_t spf_bad = 0, spf_bad_all = 0;
  (void)spf_bad; (void)spf_bad_all;
  int32_t thr[1] = {0};
  (void)thr;
  int32_t base[1] = {0};
  (void)base;
  int32_t bits[1] = {0};
  (void)bits;
  int32_t *restrict mark = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M))), sizeof(int32_t));
  double *restrict acc = (double *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M))), sizeof(double));
  int32_t *restrict lst = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 16))), sizeof(int32_t));
  int32_t *restrict len = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((1))), sizeof(int32_t));
  int32_t *restrict srt = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 1))), sizeof(int32_t));
  int32_t *restrict rnk = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 16))), sizeof(int32_t));
  int32_t *restrict cnt = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 2))), sizeof(int32_t));
  int32_t *restrict cnt2 = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 2))), sizeof(int32_t));
  int32_t *restrict dig = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M))), sizeof(int32_t));
  int32_t *restrict tmp = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((M + 1))), sizeof(int32_t));
  if (!mark || !acc || !lst || !len || !srt || !rnk || !cnt || !cnt2 || !dig || !tmp) { free(mark); free(acc); free(lst); free(len); free(srt); free(rnk); free(cnt); free(cnt2); free(dig); free(tmp); MPI_Abort(comm, 1); return; }
  s3(0);
  if (N >= 1)
  {
    const int64_t thr_0 = thr(0);
    const int64_t base_0 = base(0);
    #pragma omp parallel for
    for (int64_t i = 0; i < N; i++)
    {
      const int64_t spf_ws_mark = spf_thread_id() * spf_ws_stride((M));
      (void)spf_ws_mark;
      const int64_t spf_ws_acc = spf_thread_id() * spf_ws_stride((M));
      (void)spf_ws_acc;
      const int64_t spf_ws_lst = spf_thread_id() * spf_ws_stride((M + 16));
      (void)spf_ws_lst;
      const int64_t spf_ws_len = spf_thread_id() * spf_ws_stride((1));
      (void)spf_ws_len;
      const int64_t spf_ws_srt = spf_thread_id() * spf_ws_stride((M + 1));
      (void)spf_ws_srt;
      const int64_t spf_ws_rnk = spf_thread_id() * spf_ws_stride((M + 16));
      (void)spf_ws_rnk;
      const int64_t spf_ws_cnt = spf_thread_id() * spf_ws_stride((M + 2));
      (void)spf_ws_cnt;
      const int64_t spf_ws_cnt2 = spf_thread_id() * spf_ws_stride((M + 2));
      (void)spf_ws_cnt2;
      const int64_t spf_ws_dig = spf_thread_id() * spf_ws_stride((M));
      (void)spf_ws_dig;
      const int64_t spf_ws_tmp = spf_thread_id() * spf_ws_stride((M + 1));
      (void)spf_ws_tmp;
      uint64_t spf_bad = 0;
      s0(i);
      if (M >= 1)
      {
        for (int64_t A_k = 1; A_k <= 16; A_k++)
        {
          s1(i, -1 + A_k);
        }
        if (K >= 1 && B_NNZ >= 1)
        {
          const int64_t A_rowptr_1_i = A_rowptr(1 + i);
          const int64_t A_rowptr_i = A_rowptr(i);
          for (int64_t A_k = A_rowptr_i; A_k < A_rowptr_1_i; A_k++)
          {
            const int64_t A_col_A_k = A_col(A_k);
            const int64_t B_rowptr_1_k = B_rowptr(1 + A_col_A_k);
            const int64_t B_rowptr_k = B_rowptr(A_col_A_k);
            for (int64_t B_k = B_rowptr_k; B_k < B_rowptr_1_k; B_k++)
            {
              const int64_t B_col_B_k = B_col(B_k);
              s2(i, A_k, A_col_A_k, B_k, B_col_B_k);
            }
          }
        }
      }
      const int64_t C_rowptr_i = C_rowptr(i);
      const int64_t C_rowptr_1_i = C_rowptr(1 + i);
      if (C_rowptr_1_i >= C_rowptr_i + thr_0 + 1)
      {
        for (int64_t j = 0; j <= base_0; j++)
        {
          s7(i, j);
        }
        for (int64_t a = 0; a < C_rowptr_1_i - C_rowptr_i; a++)
        {
          s8(i, a);
        }
        for (int64_t j = 1; j <= base_0; j++)
        {
          s9(i, j);
        }
        for (int64_t a = 0; a < C_rowptr_1_i - C_rowptr_i; a++)
        {
          s10(i, a);
        }
        for (int64_t a = 0; a < C_rowptr_1_i - C_rowptr_i; a++)
        {
          s11(i, a);
        }
      }
      else
      {
        if (C_rowptr_1_i >= C_rowptr_i + 17)
        {
          for (int64_t a = C_rowptr_1_i - C_rowptr_i; a <= -((C_rowptr_1_i - C_rowptr_i - 1) % 16) + C_rowptr_1_i - C_rowptr_i + 14; a++)
          {
            s4(i, a);
          }
        }
        for (int64_t v = 0; v <= spf_floord(C_rowptr_1_i - C_rowptr_i - 1, 16); v++)
        {
          {
            int32_t spf_tile[16];
            for (int64_t l = 0; l < 16; l++)
              spf_tile[l] = s5_target(0, v, 0, l);
            for (int64_t a = 0; a < C_rowptr_1_i - C_rowptr_i; a++)
            {
              for (int64_t l = 0; l <= 15; l++)
              {
                spf_tile[l] += s5_value(i, v, a, l);
              }
            }
            for (int64_t l = 0; l < 16; l++)
              s5_target(0, v, 0, l) = spf_tile[l];
          }
        }
        for (int64_t a = 0; a <= 16 * spf_floord(C_rowptr_1_i - C_rowptr_i - 1, 16) + 15; a++)
        {
          s6(i, a);
        }
      }
      for (int64_t p = C_rowptr_i; p < C_rowptr_1_i; p++)
      {
        s12(i, p);
      }
      if (spf_bad) __atomic_fetch_or(&spf_bad_all, spf_bad, __ATOMIC_RELAXED);
    }
  }
  if (spf_fault[0]) MPI_Abort(comm, 1);  /* a run-time fault */
  free(mark); free(acc); free(lst); free(len); free(srt); free(rnk); free(cnt); free(cnt2); free(dig); free(tmp);
}
