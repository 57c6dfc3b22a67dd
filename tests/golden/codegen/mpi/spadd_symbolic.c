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
#define A(t0) A[t0]
#define B(t0) B[t0]
#define C_rowptr(t0) C_rowptr[t0]
#define s0(i) C_rowptr((i) + 1) = 0
#define s1_target(i, A_k, B_k) C_rowptr((i) + 1)
#define s1_value(i, A_k, B_k) 1
#define s1(i, A_k, B_k) C_rowptr((i) + 1) += 1
#define s2_target(i, A_k) C_rowptr((i) + 1)
#define s2_value(i, A_k) 1
#define s2(i, A_k) C_rowptr((i) + 1) += 1
#define s3_target(i, B_k) C_rowptr((i) + 1)
#define s3_value(i, B_k) 1
#define s3(i, B_k) C_rowptr((i) + 1) += 1
#define s4(z) C_rowptr(0) = 0
#define s5(i) C_rowptr((i) + 1) += C_rowptr(i)

void einsum_C_symbolic(MPI_Comm comm, int64_t A_NNZ, int64_t B_NNZ, int64_t I, int64_t J, const int32_t *restrict A_col, const int32_t *restrict A_rowptr, const int32_t *restrict B_col, const int32_t *restrict B_rowptr, const double *restrict A, const double *restrict B, int32_t *restrict C_rowptr)
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
  int spf_rank = 0;
  int spf_size = 1;
  MPI_Comm_rank(comm, &spf_rank);
  MPI_Comm_size(comm, &spf_size);
  (void)spf_rank;
  (void)spf_size;
  #pragma omp parallel for
  for (int64_t i = 0; i < I; i++)
  {
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
        }
        else if (spf_key_A_k < spf_key_B_k)
        {
          s2(i, A_k);
        }
        else
        {
          s3(i, B_k);
        }
        A_k += spf_key_A_k <= spf_key_B_k;
        B_k += spf_key_B_k <= spf_key_A_k;
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
  }
  if (I >= 0)
  {
    s4(0);
  }
  for (int64_t i = 0; i < I; i++)
  {
    s5(i);
  }
}
