#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
#define spf_ws_stride(n) ((((int64_t)(n)) + 63) / 64 * 64)
#ifdef _OPENMP
#include <omp.h>
#define spf_thread_id() ((int64_t)omp_get_thread_num())
#define spf_thread_count() ((int64_t)omp_get_max_threads())
#else
#define spf_thread_id() ((int64_t)0)
#define spf_thread_count() ((int64_t)1)
#endif
#define A_col(t0) A_col[t0]
#define A_rowptr(t0) A_rowptr[t0]
#define B_col(t0) B_col[t0]
#define B_rowptr(t0) B_rowptr[t0]
#define A(t0) A[t0]
#define B(t0) B[t0]
#define C_rowptr(t0) C_rowptr[t0]
#define mark(t0) mark[spf_ws_mark + (t0)]
#define s0(i) C_rowptr((i) + 1) = 0
#define s1(i, A_k, j) do { \
  mark(j) = (i) + 1; \
  C_rowptr((i) + 1) += 1; \
} while (0)
#define s2_target(i, B_k, j) C_rowptr((i) + 1)
#define s2_value(i, B_k, j) mark(j) != (i) + 1
#define s2(i, B_k, j) C_rowptr((i) + 1) += mark(j) != (i) + 1
#define s3(z) C_rowptr(0) = 0
#define s4(i) C_rowptr((i) + 1) += C_rowptr(i)

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
void einsum_C_symbolic_spf_faults(int64_t A_NNZ, int64_t B_NNZ, int64_t I, int64_t J, const int32_t *restrict A_col, const int32_t *restrict A_rowptr, const int32_t *restrict B_col, const int32_t *restrict B_rowptr, const double *restrict A, const double *restrict B, int32_t *restrict C_rowptr, int64_t *restrict spf_fault)
{
  (void)A_NNZ;
  (void)B_NNZ;
  (void)I;
  (void)J;
  (void)A_col;
  (void)A_rowptr;
  (void)B_col;
  (void)B_rowptr;
  (void)A;
  (void)B;
  (void)C_rowptr;
  int32_t *restrict mark = (int32_t *)calloc((size_t)(spf_thread_count() * spf_ws_stride((J))), sizeof(int32_t));
  if (!mark) spf_fault_note(spf_fault, 4, 0, (int64_t)(spf_thread_count() * spf_ws_stride((J))), (int64_t)sizeof(int32_t));
  if (!mark) { free(mark); return; }
  const int64_t spf_ws_mark = 0;
  (void)spf_ws_mark;
  #pragma omp parallel for
  for (int64_t i = 0; i < I; i++)
  {
    const int64_t spf_ws_mark = spf_thread_id() * spf_ws_stride((J));
    (void)spf_ws_mark;
    {
      int32_t spf_row;
      spf_row = 0;
      if (J >= 1)
      {
        const int64_t A_rowptr_1_i = A_rowptr(1 + i);
        const int64_t A_rowptr_i = A_rowptr(i);
        for (int64_t A_k = A_rowptr_i; A_k < A_rowptr_1_i; A_k++)
        {
          const int64_t A_col_A_k = A_col(A_k);
          mark(A_col_A_k) = i + 1;
          spf_row += 1;
        }
        const int64_t B_rowptr_1_i = B_rowptr(1 + i);
        const int64_t B_rowptr_i = B_rowptr(i);
        for (int64_t B_k = B_rowptr_i; B_k < B_rowptr_1_i; B_k++)
        {
          const int64_t B_col_A_k = B_col(B_k);
          spf_row += mark(B_col_A_k) != i + 1;
        }
      }
      C_rowptr(i + 1) = spf_row;
    }
  }
  if (I >= 0)
  {
    s3(0);
  }
  for (int64_t i = 0; i < I; i++)
  {
    s4(i);
  }
  free(mark);
}
void einsum_C_symbolic(int64_t A_NNZ, int64_t B_NNZ, int64_t I, int64_t J, const int32_t *restrict A_col, const int32_t *restrict A_rowptr, const int32_t *restrict B_col, const int32_t *restrict B_rowptr, const double *restrict A, const double *restrict B, int32_t *restrict C_rowptr)
{
  int64_t spf_fault[4] = {0};
  einsum_C_symbolic_spf_faults(A_NNZ, B_NNZ, I, J, A_col, A_rowptr, B_col, B_rowptr, A, B, C_rowptr, spf_fault);
}
const char *einsum_C_symbolic_spf_fault_names(void) { return ";mark"; }
