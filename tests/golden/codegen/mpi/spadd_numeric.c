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
#define spf_ds_lst(t0) lst[spf_ws_lst + (t0)]
#define spf_ds_len(t0) len[spf_ws_len + (t0)]
#define val(t0) val[spf_ws_val + (t0)]
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
#define s0(i) spf_ds_len(0) = 0
#define s1(i, A_k, B_k) do { \
  spf_ds_lst(len(0)) = A_col(A_k); \
  val(len(0)) = A(A_k) + B(B_k); \
  spf_ds_len(0) += len(0) < J - 1; \
} while (0)
#define s2(i, A_k) do { \
  spf_ds_lst(len(0)) = A_col(A_k); \
  val(len(0)) = A(A_k); \
  spf_ds_len(0) += len(0) < J - 1; \
} while (0)
#define s3(i, B_k) do { \
  spf_ds_lst(len(0)) = B_col(B_k); \
  val(len(0)) = B(B_k); \
  spf_ds_len(0) += len(0) < J - 1; \
} while (0)
#define s4(i, p) do { \
  C_col(p) = lst((p) - C_rowptr(i)); \
  C(p) = val((p) - C_rowptr(i)); \
} while (0)

void einsum_C_numeric(MPI_Comm comm, int64_t A_NNZ, int64_t B_NNZ, int64_t C_NNZ, int64_t I, int64_t J, const int32_t *restrict A_col, const int32_t *restrict A_rowptr, const int32_t *restrict B_col, const int32_t *restrict B_rowptr, const int32_t *restrict C_rowptr, const double *restrict A, const double *restrict B, int32_t *restrict C_col, double *restrict C)
{
  (void)A_NNZ;
  (void)B_NNZ;
  (void)C_NNZ;
  (void)I;
  (void)J;
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
  int32_t *restrict lst = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((J))), sizeof(int32_t));
  int32_t *restrict len = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((1))), sizeof(int32_t));
  double *restrict val = (double *)calloc((size_t)(spf_thread_count() * spf_ws_stride((J))), sizeof(double));
  if (!lst || !len || !val) { free(lst); free(len); free(val); MPI_Abort(comm, 1); return; }
  #pragma omp parallel for
  for (int64_t i = 0; i < I; i++)
  {
    const int64_t spf_ws_lst = spf_thread_id() * spf_ws_stride((J));
    (void)spf_ws_lst;
    const int64_t spf_ws_len = spf_thread_id() * spf_ws_stride((1));
    (void)spf_ws_len;
    const int64_t spf_ws_val = spf_thread_id() * spf_ws_stride((J));
    (void)spf_ws_val;
    uint64_t spf_bad = 0;
    s0(i);
    {
      int64_t A_k = A_rowptr(i);
      int64_t B_k = B_rowptr(i);
      const int64_t spf_end_A_k = A_rowptr(i + 1);
      const int64_t spf_end_B_k = B_rowptr(i + 1);
      while (A_k < spf_end_A_k && B_k < spf_end_B_k)
      {
        const int64_t spf_key_A_k = A_col(A_k);
        const int64_t spf_key_B_k = B_col(B_k);
        if (spf_key_A_k == spf_key_B_k)
        {
          s1(i, A_k, B_k);
          A_k++;
          B_k++;
        }
        else if (spf_key_A_k < spf_key_B_k)
        {
          s2(i, A_k);
          A_k++;
        }
        else
        {
          s3(i, B_k);
          B_k++;
        }
      }
      for (; A_k < spf_end_A_k; A_k++)
      {
        s2(i, A_k);
      }
      for (; B_k < spf_end_B_k; B_k++)
      {
        s3(i, B_k);
      }
    }
    const int64_t C_rowptr_1_i = C_rowptr(1 + i);
    const int64_t C_rowptr_i = C_rowptr(i);
    for (int64_t p = C_rowptr_i; p < C_rowptr_1_i; p++)
    {
      s4(i, p);
    }
    if (spf_bad) __atomic_fetch_or(&spf_bad_all, spf_bad, __ATOMIC_RELAXED);
  }
  if (spf_fault[0]) MPI_Abort(comm, 1);  /* a run-time fault */
  free(lst); free(len); free(val);
}
