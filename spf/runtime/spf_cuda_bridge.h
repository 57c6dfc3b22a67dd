/* spf's GPU bridge header: the host part of a generated .cu, compiled with g++, talking to a
 * GPU through Python (spf.runtime.gpu: pycuda or CuPy).
 *
 * spf puts spf_cuda_emu.h (for the CPU definitions the never-called kernel copies need) and
 * then this header in front of the same .cu text. cudaMalloc, cudaMemcpy,
 * cudaMemcpyToSymbol, cudaDeviceSynchronize and the launch macro call through the function
 * table that Python installs with spf_cuda_set_bridge(); the kernels themselves run on the
 * GPU from the module the Python runtime compiled from the same text (NVRTC or nvcc).
 * Every kernel argument spf generates is 8 bytes (int64_t or a device pointer).
 */
#ifndef SPF_CUDA_BRIDGE_H
#define SPF_CUDA_BRIDGE_H

extern "C" {
struct spf_bridge {
  int (*malloc)(void **ptr, size_t bytes);
  int (*free)(void *ptr);
  int (*memcpy)(void *dst, const void *src, size_t bytes, int kind);
  int (*to_symbol)(const char *symbol, const void *src, size_t bytes, size_t offset);
  int (*launch)(const char *kernel, unsigned int gx, unsigned int gy, unsigned int gz,
                unsigned int bx, unsigned int by, unsigned int bz, int nargs, void **args);
  int (*synchronize)(void);
};
}

static struct spf_bridge spf_bridge_table;
static thread_local cudaError_t spf_bridge_last = cudaSuccess;

extern "C" void spf_cuda_set_bridge(const struct spf_bridge *table) {
  spf_bridge_table = *table;
}

static inline cudaError_t spf_bridge_status(int rc) {
  return rc == 0 ? cudaSuccess : cudaErrorLaunchFailure;
}

template <typename T>
static inline cudaError_t cudaMalloc(T **ptr, size_t bytes) {
  void *p = nullptr;
  cudaError_t e = spf_bridge_status(spf_bridge_table.malloc(&p, bytes ? bytes : 1));
  *ptr = static_cast<T *>(p);
  return e;
}
static inline cudaError_t cudaFree(const void *ptr) {
  if (!ptr) return cudaSuccess;
  return spf_bridge_status(spf_bridge_table.free(const_cast<void *>(ptr)));
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                                     cudaMemcpyKind kind) {
  if (!bytes) return cudaSuccess;
  return spf_bridge_status(spf_bridge_table.memcpy(dst, src, bytes, (int)kind));
}
static inline cudaError_t spf_bridge_to_symbol(const char *symbol, const void *src,
                                               size_t bytes, size_t offset = 0) {
  return spf_bridge_status(spf_bridge_table.to_symbol(symbol, src, bytes, offset));
}
#define cudaMemcpyToSymbol(symbol, ...) spf_bridge_to_symbol(#symbol, __VA_ARGS__)
static inline cudaError_t cudaDeviceSynchronize(void) {
  return spf_bridge_status(spf_bridge_table.synchronize());
}
/* Where a device array's memory is, the GPU runtime answers in Python (GpuRuntime.placement,
 * spf.runtime.cuda): the host code cannot ask the runtime's context. */
static inline cudaError_t cudaGetDevice(int *device) {
  *device = -1;
  return cudaErrorNotSupported;
}
static inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *, const void *) {
  return cudaErrorNotSupported;
}
static inline cudaError_t cudaGetLastError(void) {
  cudaError_t e = spf_bridge_last;
  spf_bridge_last = cudaSuccess;
  return e;
}
static inline const char *cudaGetErrorString(cudaError_t e) {
  return e == cudaSuccess ? "no error" : "the GPU runtime failed (see the Python exception)";
}

template <typename... Ts>
static inline cudaError_t spf_bridge_launch(const char *kernel, dim3 g, dim3 b, Ts... args) {
  static_assert(((sizeof(Ts) == 8) && ...), "spf kernels take 8-byte arguments");
  void *params[] = {(void *)&args..., nullptr};
  return spf_bridge_status(spf_bridge_table.launch(kernel, g.x, g.y, g.z, b.x, b.y, b.z,
                                                   (int)sizeof...(Ts), params));
}
#define SPF_LAUNCH(kernel, grid, block, ...) \
  (spf_bridge_last = spf_bridge_launch(#kernel, (grid), (block), __VA_ARGS__))

#endif /* SPF_CUDA_BRIDGE_H */
