/* spf's CUDA emulation header: runs a generated .cu translation unit on the CPU.
 *
 * spf compiles the SAME .cu text that nvcc builds as C++ (g++), with this header in front.
 * Every CUDA thread of a block is a fiber (ucontext) with its own stack; the threads of a
 * block run on one OS thread, round-robin in threadIdx order (x fastest), and switch only at
 * __syncthreads(): a barrier releases when every thread of the block has reached it or has
 * returned (exited threads count as arrived, as on the hardware). __shared__ variables are
 * static thread_local, so the fibers of a block share them and blocks that run at the same
 * time on different OS threads (OpenMP, when built with -fopenmp) each have their own.
 * Device memory is host memory; cudaMemcpy is memcpy; __constant__ is a plain global.
 *
 * Deterministic by construction: a kernel that misses a barrier reads the values another
 * thread has not written yet on every run, instead of racing.
 */
#ifndef SPF_CUDA_EMU_H
#define SPF_CUDA_EMU_H

#define SPF_CUDA_EMULATE 1

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <ucontext.h>
#include <functional>
#ifdef _OPENMP
#include <omp.h>
#endif

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __constant__ static
#define __launch_bounds__(...)

struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
typedef dim3 uint3;

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidValue = 1,
       cudaErrorInvalidConfiguration = 9, cudaErrorLaunchFailure = 719,
       cudaErrorNotSupported = 801 };
enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1,
                      cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
                      cudaMemcpyDefault = 4 };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1,
                      cudaMemoryTypeDevice = 2, cudaMemoryTypeManaged = 3 };
struct cudaPointerAttributes {
  enum cudaMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
};

namespace spf_emu {

static thread_local dim3 thread_idx, block_idx, block_dim, grid_dim;
static thread_local cudaError_t last_error = cudaSuccess;
/* The most OS threads a launch by this thread ran its blocks on since spf_emu_take_threads. */
static thread_local int most_threads = 0;

/* Each fiber's stack; spf defines a larger one before this header when a unit's kernels
 * declare more local memory per thread than fits (spf.codegen.cuda_limits). */
#ifndef SPF_EMU_STACK
#define SPF_EMU_STACK (256 * 1024)
#endif

enum { RUNNABLE = 0, AT_BARRIER = 1, DONE = 2 };

/* The fibers of the block that runs on this OS thread. */
struct Block {
  ucontext_t main;
  ucontext_t *ctx = nullptr;
  char *stacks = nullptr;
  int *state = nullptr;
  int n = 0;
  int current = -1;
  const std::function<void()> *body = nullptr;

  bool reserve(int count) {
    if (count <= n) return true;
    release();
    ctx = static_cast<ucontext_t *>(calloc((size_t)count, sizeof(ucontext_t)));
    stacks = static_cast<char *>(malloc((size_t)count * SPF_EMU_STACK));
    state = static_cast<int *>(calloc((size_t)count, sizeof(int)));
    if (!ctx || !stacks || !state) { release(); return false; }
    n = count;
    return true;
  }
  void release() {
    free(ctx); free(stacks); free(state);
    ctx = nullptr; stacks = nullptr; state = nullptr; n = 0;
  }
  ~Block() { release(); }
};

static thread_local Block block;

static inline void set_thread(int t) {
  thread_idx.x = (unsigned)t % block_dim.x;
  thread_idx.y = ((unsigned)t / block_dim.x) % block_dim.y;
  thread_idx.z = (unsigned)t / (block_dim.x * block_dim.y);
}

static void trampoline() {
  (*block.body)();
  block.state[block.current] = DONE;
  /* returning switches to uc_link (the scheduler) */
}

/* Run one block: every thread until it returns, stopping all at each barrier. */
static bool run_block(int threads) {
  for (int t = 0; t < threads; t++) {
    ucontext_t *c = &block.ctx[t];
    if (getcontext(c) != 0) return false;
    c->uc_stack.ss_sp = block.stacks + (size_t)t * SPF_EMU_STACK;
    c->uc_stack.ss_size = SPF_EMU_STACK;
    c->uc_link = &block.main;
    makecontext(c, trampoline, 0);
    block.state[t] = RUNNABLE;
  }
  for (;;) {
    int done = 0;
    for (int t = 0; t < threads; t++) {
      if (block.state[t] == RUNNABLE) {
        block.current = t;
        set_thread(t);
        if (swapcontext(&block.main, &block.ctx[t]) != 0) return false;
      }
      done += block.state[t] == DONE;
    }
    if (done == threads) return true;
    for (int t = 0; t < threads; t++)  /* everyone arrived or exited: release */
      if (block.state[t] == AT_BARRIER) block.state[t] = RUNNABLE;
  }
}

static inline void syncthreads() {
  if (block.current < 0) return;  /* not inside a kernel */
  block.state[block.current] = AT_BARRIER;
  swapcontext(&block.ctx[block.current], &block.main);
}

static inline void run_blocks(dim3 grid, dim3 blk, int64_t first, int64_t last,
                              const std::function<void()> &body, int *failed) {
  int threads = (int)(blk.x * blk.y * blk.z);
  grid_dim = grid;
  block_dim = blk;
  if (!block.reserve(threads)) { *failed = cudaErrorMemoryAllocation; return; }
  block.body = &body;
  for (int64_t b = first; b < last; b++) {
    block_idx.x = (unsigned)(b % grid.x);
    block_idx.y = (unsigned)((b / grid.x) % grid.y);
    block_idx.z = (unsigned)(b / ((int64_t)grid.x * grid.y));
    if (!run_block(threads)) { *failed = cudaErrorLaunchFailure; break; }
  }
  block.current = -1;
  block.body = nullptr;
}

/* Why the last launch was refused with cudaErrorInvalidConfiguration (cudaGetErrorString). */
static thread_local char config_reason[160] = "";

/* A launch CUDA refuses: a block of more than 1024 threads (or more than 64 on z), a grid of
 * more than 2^31 - 1 blocks on x or 65535 on y or z. Names the limit it breaks. */
static inline bool refused(dim3 grid, dim3 blk) {
  int64_t threads = (int64_t)blk.x * blk.y * blk.z;
  if (threads < 1 || threads > 1024 || blk.z > 64)
    snprintf(config_reason, sizeof config_reason,
             "block of %u x %u x %u threads; CUDA allows 1 to 1024 per block, at most 64 on z",
             blk.x, blk.y, blk.z);
  else if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535)
    snprintf(config_reason, sizeof config_reason,
             "grid of %u x %u x %u blocks; CUDA allows at most 2147483647 on x and 65535 on "
             "y and z", grid.x, grid.y, grid.z);
  else
    return false;
  return true;
}

static inline void launch(dim3 grid, dim3 blk, const std::function<void()> &body) {
  int64_t blocks = (int64_t)grid.x * grid.y * grid.z;
  if (refused(grid, blk)) {
    last_error = cudaErrorInvalidConfiguration;
    return;
  }
  if (blocks == 0) return;
  int failed = cudaSuccess;
#ifdef _OPENMP
  int workers = omp_get_max_threads(), team = 1;
  if (workers > blocks) workers = (int)blocks;
#pragma omp parallel num_threads(workers)
  {
    int w = omp_get_thread_num(), nw = omp_get_num_threads();
    if (w == 0) team = nw;
    int64_t first = blocks * w / nw, last = blocks * (w + 1) / nw;
    int mine = cudaSuccess;
    run_blocks(grid, blk, first, last, body, &mine);
    if (mine != cudaSuccess) {
#pragma omp critical(spf_emu_failed)
      failed = mine;
    }
  }
  if (team > most_threads) most_threads = team;
#else
  run_blocks(grid, blk, 0, blocks, body, &failed);
  if (most_threads < 1) most_threads = 1;
#endif
  if (failed != cudaSuccess) last_error = failed;
}

}  // namespace spf_emu

/* CudaKernel.last_threads: the most OS threads one launch of the calling thread's host calls
 * has run its blocks on since the previous take (0: nothing launched); starts over at 0. */
extern "C" int spf_emu_take_threads(void) {
  int most = spf_emu::most_threads;
  spf_emu::most_threads = 0;
  return most;
}

#define threadIdx (spf_emu::thread_idx)
#define blockIdx (spf_emu::block_idx)
#define blockDim (spf_emu::block_dim)
#define gridDim (spf_emu::grid_dim)
#define __syncthreads() spf_emu::syncthreads()

/* atomicAdd: the threads of a block are fibers of one OS thread, but blocks run on several
 * (OpenMP), so the update is an OpenMP atomic (a plain update without -fopenmp). */
template <typename T, typename V>
static inline T atomicAdd(T *address, V value) {
  T old;
#pragma omp atomic capture
  { old = *address; *address += (T)value; }
  return old;
}

/* The host API (spf's GPU bridge header replaces this part with calls to the GPU). */
#ifndef SPF_CUDA_BRIDGE
#define SPF_LAUNCH(kernel, grid, block, ...) \
  spf_emu::launch((grid), (block), [&]() { kernel(__VA_ARGS__); })

static inline cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  *ptr = malloc(bytes ? bytes : 1);
  return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <typename T>
static inline cudaError_t cudaMalloc(T **ptr, size_t bytes) {
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  *ptr = static_cast<T *>(p);
  return e;
}
static inline cudaError_t cudaFree(const void *ptr) {
  free(const_cast<void *>(ptr));
  return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
  if (bytes) memcpy(dst, src, bytes);
  return cudaSuccess;
}
template <typename T>
static inline cudaError_t cudaMemcpyToSymbol(T &symbol, const void *src, size_t bytes,
                                             size_t offset = 0,
                                             cudaMemcpyKind = cudaMemcpyHostToDevice) {
  if (bytes) memcpy(reinterpret_cast<char *>(&symbol) + offset, src, bytes);
  return cudaSuccess;
}
static inline cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
/* The emulator's device memory is host memory, which its kernels read: every pointer is
 * managed memory of device 0 (spf's runtime does not ask: an emulated kernel takes host
 * memory only, spf.runtime.device_arrays.emulated). */
static inline cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}
static inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *attributes,
                                                   const void *ptr) {
  attributes->type = cudaMemoryTypeManaged;
  attributes->device = 0;
  attributes->devicePointer = attributes->hostPointer = const_cast<void *>(ptr);
  return cudaSuccess;
}
static inline cudaError_t cudaGetLastError(void) {
  cudaError_t e = spf_emu::last_error;
  spf_emu::last_error = cudaSuccess;
  return e;
}
static inline const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: {
      static thread_local char text[200];
      snprintf(text, sizeof text, "invalid configuration argument (%s)",
               spf_emu::config_reason[0] ? spf_emu::config_reason : "a launch CUDA refuses");
      return text;
    }
    case cudaErrorLaunchFailure: return "the emulator could not run a block";
    default: return "invalid argument";
  }
}

#endif /* !SPF_CUDA_BRIDGE */

#endif /* SPF_CUDA_EMU_H */
