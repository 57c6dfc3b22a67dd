/* spf CUDA translation unit: 0 kernel(s) and the host function spmv_bdia2_generated. */
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
#define doff(t0) doff[t0]
#define dptr(t0) dptr[t0]
#define y(t0) y[t0]
#define A(t0, t1) A[(t0) * (int64_t) 2 + (t1)]
#define x(t0) x[t0]
#define spmv_target(b, s, r, i, j) y(i)
#define spmv_value(b, s, r, i, j) A(s, r) * x(j)
#define spmv(b, s, r, i, j) y(i) += A(s, r) * x(j)

#if !defined(__CUDACC_RTC__) && !defined(SPF_DEVICE_ONLY)
static char spf_message[512];
extern "C" const char *spmv_bdia2_generated_spf_error(void) { return spf_message; }
extern "C" const char *spmv_bdia2_generated_spf_device_args(void) { return "hbhhh"; }  /* per array argument: d = may be a device array */
extern "C" int spmv_bdia2_generated_spf_to_host(void *dst, const void *src, size_t bytes) { return cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) != cudaSuccess; }
extern "C" int spmv_bdia2_generated_spf_where(const void *ptr, int *where) {
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

extern "C" int spmv_bdia2_generated(int64_t M, int64_t N, int64_t NB, int64_t NS, const int32_t *__restrict__ doff, const int32_t *__restrict__ dptr, double *__restrict__ y, const double *__restrict__ A, const double *__restrict__ x, const int64_t *spf_count, const unsigned char *spf_on_device)
{
  int spf_status = 0;
  spf_message[0] = 0;
  (void)M;
  (void)N;
  (void)NB;
  (void)NS;
  (void)doff;
  (void)dptr;
  (void)y;
  (void)A;
  (void)x;
  (void)spf_count;
  (void)spf_on_device;
  {
    if (spf_on_device[0] || spf_on_device[1] || spf_on_device[2] || spf_on_device[3] || spf_on_device[4]) { snprintf(spf_message, sizeof spf_message, "a device array for an argument the host code needs on the host"); spf_status = 1; goto spf_done; }
    if (M >= 1 && NS >= 1)
    {
      for (int64_t b = 0; b < spf_min(NB, spf_floord(N + 1, 2)); b++)
      {
        const int64_t dptr_1_b = dptr(1 + b);
        const int64_t dptr_b = dptr(b);
        for (int64_t s = dptr_b; s < dptr_1_b; s++)
        {
          const int64_t doff_s = doff(s);
          for (int64_t r = spf_max(0, -doff_s - 2 * b); r <= spf_min(spf_min(1, N - 2 * b - 1), M - doff_s - 2 * b - 1); r++)
          {
            spmv(b, s, r, r + 2 * b, doff_s + 2 * b + r);
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
