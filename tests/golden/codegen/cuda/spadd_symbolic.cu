/* spf CUDA translation unit: 0 kernel(s) and the host function einsum_C_symbolic. */
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#endif

/* One launch macro: CUDA's <<<>>> under nvcc; spf's emulator and GPU bridge define their own. */
#ifndef SPF_LAUNCH
#define SPF_LAUNCH(kernel, grid, block, ...) kernel<<<(grid), (block)>>>(__VA_ARGS__)
#endif

#define spf_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define spf_min(a, b) ((a) < (b) ? (a) : (b))
#define spf_max(a, b) ((a) > (b) ? (a) : (b))
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

#if !defined(__CUDACC_RTC__) && !defined(SPF_DEVICE_ONLY)
static char spf_message[512];
extern "C" const char *einsum_C_symbolic_spf_error(void) { return spf_message; }
#define SPF_CHECK(call) do { cudaError_t spf_e = (call); if (spf_e != cudaSuccess) { snprintf(spf_message, sizeof spf_message, "%s: %s", #call, cudaGetErrorString(spf_e)); spf_status = 1; goto spf_done; } } while (0)

extern "C" int einsum_C_symbolic(int64_t A_NNZ, int64_t B_NNZ, int64_t I, int64_t J, const int32_t *__restrict__ A_col, const int32_t *__restrict__ A_rowptr, const int32_t *__restrict__ B_col, const int32_t *__restrict__ B_rowptr, const double *__restrict__ A, const double *__restrict__ B, int32_t *__restrict__ C_rowptr, const int64_t *spf_count)
{
  int spf_status = 0;
  spf_message[0] = 0;
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
  (void)spf_count;
  {
    /* parallel loop: runs serially on the host in the CUDA target */
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
    SPF_CHECK(cudaDeviceSynchronize());
  }
  spf_done:
  return spf_status;
}
#endif /* host code */
