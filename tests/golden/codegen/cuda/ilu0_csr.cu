/* spf CUDA translation unit: 0 kernel(s) and the host function ilu0_csr. */
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
#define col(t0) col[t0]
#define diag(t0) diag[t0]
#define rowptr(t0) rowptr[t0]
#define A(t0) A[t0]
#define s0(i, k, d) A(k) = A(k) / A(d)
#define s1(i, k, j1, j2) A(j1) -= A(k) * A(j2)

#if !defined(__CUDACC_RTC__) && !defined(SPF_DEVICE_ONLY)
static char spf_message[512];
extern "C" const char *ilu0_csr_spf_error(void) { return spf_message; }
extern "C" const char *ilu0_csr_spf_device_args(void) { return "hhbh"; }  /* per array argument: d = may be a device array */
extern "C" int ilu0_csr_spf_to_host(void *dst, const void *src, size_t bytes) { return cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess; }
extern "C" int ilu0_csr_spf_where(const void *ptr, int *where) {
  cudaPointerAttributes spf_a;
  int spf_current = -1;
  cudaError_t spf_e = cudaGetDevice(&spf_current);
  const char *spf_call = "cudaGetDevice";
  if (spf_e == cudaSuccess) {
    spf_e = cudaPointerGetAttributes(&spf_a, ptr);
    spf_call = "cudaPointerGetAttributes";
  }
  (void)cudaGetLastError();  /* nothing sticky stays behind */
  if (spf_e != cudaSuccess) {
    snprintf(spf_message, sizeof spf_message, "%s: %s", spf_call, cudaGetErrorString(spf_e));
    return 1;
  }
  where[0] = (int)spf_a.type;
  where[1] = spf_a.device;
  where[2] = spf_current;
  where[3] = spf_a.devicePointer != 0;
  return 0;
}
#define SPF_CHECK(call) do { cudaError_t spf_e = (call); if (spf_e != cudaSuccess) { snprintf(spf_message, sizeof spf_message, "%s: %s", #call, cudaGetErrorString(spf_e)); spf_status = 1; goto spf_done; } } while (0)

extern "C" int ilu0_csr(int64_t N, int64_t NNZ, const int32_t *__restrict__ col, const int32_t *__restrict__ diag, const int32_t *__restrict__ rowptr, double *__restrict__ A, const int64_t *spf_count, const unsigned char *spf_on_device)
{
  int spf_status = 0;
  spf_message[0] = 0;
  (void)N;
  (void)NNZ;
  (void)col;
  (void)diag;
  (void)rowptr;
  (void)A;
  (void)spf_count;
  (void)spf_on_device;
  {
    if (spf_on_device[0] || spf_on_device[1] || spf_on_device[2] || spf_on_device[3]) { snprintf(spf_message, sizeof spf_message, "a device array for an argument the host code needs on the host"); spf_status = 1; goto spf_done; }
    if (NNZ >= 2)
    {
      for (int64_t i = 0; i < N; i++)
      {
        const int64_t diag_i = diag(i);
        const int64_t rowptr_i = rowptr(i);
        for (int64_t k = rowptr_i; k < diag_i; k++)
        {
          const int64_t col_k = col(k);
          const int64_t diag_col_k = diag(col_k);
          s0(i, k, diag_col_k);
          {
            int64_t j1 = k + 1;
            int64_t j2 = diag(col(k)) + 1;
            const int64_t spf_end_j1 = rowptr(i + 1);
            const int64_t spf_end_j2 = rowptr(col(k) + 1);
            while (j1 < spf_end_j1 && j2 < spf_end_j2)
            {
              const int64_t spf_key_j1 = col(j1);
              const int64_t spf_key_j2 = col(j2);
              if (spf_key_j1 == spf_key_j2)
              {
                s1(i, k, j1, j2);
                j1++;
                j2++;
              }
              else if (spf_key_j1 < spf_key_j2)
              {
                int64_t spf_lo_j1 = j1;
                int64_t spf_step_j1 = 1;
                for (;;)
                {
                  j1 = spf_lo_j1 + spf_step_j1;
                  if (j1 >= spf_end_j1)
                  {
                    j1 = spf_end_j1;
                    break;
                  }
                  if (col(j1) >= spf_key_j2)
                  {
                    break;
                  }
                  spf_lo_j1 = j1;
                  spf_step_j1 += spf_step_j1;
                }
                int64_t spf_hi_j1 = j1;
                while (spf_hi_j1 - spf_lo_j1 > 1)
                {
                  j1 = spf_lo_j1 + (spf_hi_j1 - spf_lo_j1) / 2;
                  if (col(j1) >= spf_key_j2)
                  {
                    spf_hi_j1 = j1;
                  }
                  else
                  {
                    spf_lo_j1 = j1;
                  }
                }
                j1 = spf_hi_j1;
              }
              else
              {
                int64_t spf_lo_j2 = j2;
                int64_t spf_step_j2 = 1;
                for (;;)
                {
                  j2 = spf_lo_j2 + spf_step_j2;
                  if (j2 >= spf_end_j2)
                  {
                    j2 = spf_end_j2;
                    break;
                  }
                  if (col(j2) >= spf_key_j1)
                  {
                    break;
                  }
                  spf_lo_j2 = j2;
                  spf_step_j2 += spf_step_j2;
                }
                int64_t spf_hi_j2 = j2;
                while (spf_hi_j2 - spf_lo_j2 > 1)
                {
                  j2 = spf_lo_j2 + (spf_hi_j2 - spf_lo_j2) / 2;
                  if (col(j2) >= spf_key_j1)
                  {
                    spf_hi_j2 = j2;
                  }
                  else
                  {
                    spf_lo_j2 = j2;
                  }
                }
                j2 = spf_hi_j2;
              }
            }
          }
        }
      }
    }
    SPF_CHECK(cudaDeviceSynchronize());
  }
  spf_done:
  return spf_status;
}
#endif /* host code */
