/* targetDP: a thin, C-compatible data-parallel layer for lattice codes, over tessera's devices,
 * memory and executor (Gray & Stratford, HPCC 2014). One source gives thread-level parallelism
 * over lattice sites (TLP) and instruction-level parallelism over a virtual vector length (ILP):
 *
 *   TARGET_CONST double t_a;
 *
 *   TARGET_ENTRY void scale(double* t_field, size_t n) {
 *     size_t baseIndex;
 *     TARGET_TLP(baseIndex, n) {
 *       int iDim, vecIndex;
 *       for (iDim = 0; iDim < 3; iDim++) {
 *         TARGET_ILP(vecIndex) t_field[iDim * n + baseIndex + vecIndex] *= t_a;
 *       }
 *     }
 *   }
 *
 *   targetMalloc((void**)&t_field, 3 * n * sizeof(double));
 *   copyToTarget(t_field, field, 3 * n * sizeof(double));
 *   copyConstantDoubleToTarget(&t_a, &a, sizeof(double));
 *   scale TARGET_LAUNCH(n) (t_field, n);        // C++ and CUDA; from C: targetLaunch(...)
 *   syncTarget();
 *   copyFromTarget(field, t_field, 3 * n * sizeof(double));
 *   targetFree(t_field);
 *
 * The target is the first accelerator that TESSERA_DEVICES selects (`sim:1`, `cuda`), or the
 * host's executor when it selects none; targetInit("sim:1") chooses it in the program instead.
 * A file compiled by a host compiler runs its kernels on the host or a sim device; the same file
 * compiled by nvcc runs them on a CUDA target (TARGET_ENTRY is then __global__).
 *
 * Errors: every call checks its arguments and the device's answer. C++ callers get a
 * tessera::Error naming the call, the target and what was wrong; C callers get the message on
 * stderr and exit(EXIT_FAILURE), or, calling the tdp_* functions below directly, a tdpStatus and
 * tdp_last_error(). See docs/targetdp.md. */
#ifndef TESSERA_TARGETDP_H
#define TESSERA_TARGETDP_H

#include <stddef.h>

/* The virtual vector length: sites per TLP chunk, the extent of every ILP loop. Define it before
 * including this header to tune it (docs/targetdp.md has the study). */
#ifndef VVL
#define VVL 8
#endif
/* CUDA threads per block (each thread takes one chunk of VVL sites). */
#ifndef TPB
#define TPB 128
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tdpStatus {
  tdpSuccess = 0,
  tdpErrorInvalidValue = 1, /* an argument is wrong: null pointer, unknown pointer, size too big */
  tdpErrorMemory = 2,       /* the target cannot hold the allocation */
  tdpErrorTarget = 3        /* the target failed, or cannot run this (e.g. needs nvcc) */
} tdpStatus;

/* ---- The C interface. Each returns tdpSuccess, or a status with tdp_last_error() set. ---- */

/* Chooses the target from a device selection ("host", "sim:1", "cuda", ...; NULL or "" reads
 * TESSERA_DEVICES). Implicit on first use; again only when no target allocation is live. */
tdpStatus tdp_init(const char* devices);
/* Synchronises, then releases the target (allocations still live are reported and freed). */
tdpStatus tdp_finalize(void);
/* "host", "sim:0", "cuda:0" (initialising the target if needed; "(none)" when that fails). */
const char* tdp_target_name(void);
/* The message of the last failed call on this thread ("" when none failed). */
const char* tdp_last_error(void);

tdpStatus tdp_malloc(void** address, size_t size);
tdpStatus tdp_calloc(void** address, size_t size);
tdpStatus tdp_free(void* target_pointer);
/* Bytes from host memory to target memory and back; the target range must lie inside one
 * allocation of targetMalloc. Blocking: the host memory may be reused on return. */
tdpStatus tdp_copy_to_target(void* target_pointer, const void* host_pointer, size_t size);
tdpStatus tdp_copy_from_target(void* host_pointer, const void* target_pointer, size_t size);
/* Only the sites whose mask entry is non-zero, of `nfields` SoA fields of `nsites` doubles
 * (field f of site s at [f * nsites + s]): packed on the target, moved, unpacked. `mask_length`
 * is the number of entries of `site_mask`, checked against `nsites`. */
tdpStatus tdp_copy_to_target_masked(double* target_data, const double* data, size_t nsites, size_t nfields,
                                    const char* site_mask, size_t mask_length);
tdpStatus tdp_copy_from_target_masked(double* data, const double* target_data, size_t nsites, size_t nfields,
                                      const char* site_mask, size_t mask_length);
/* A TARGET_CONST variable's target copy, written in order with launched kernels. `call` names
 * the copyConstant...ToTarget function in messages. */
tdpStatus tdp_copy_constant(void* target_constant, const void* host_value, size_t size, const char* call);
/* Waits until every launched kernel and copy has finished; reports a kernel's failure. */
tdpStatus tdp_sync(void);

/* Runs kernel(args) as a launch over `extent` sites in chunks of `vvl`: on the host every
 * executor worker calls it for its share of the chunks, on a sim device its stream runs it once
 * for all of them. `args_size` bytes of `args` are copied, so the launch may outlive them.
 * `where` names the launch in messages and traces. */
tdpStatus tdp_launch(size_t extent, int vvl, void (*kernel)(void*), const void* args, size_t args_size,
                     const char* where);
/* As tdp_launch, but `args` stays owned by the caller's `release`, called exactly once: after the
 * kernel has run, or before a failed launch returns (how the C++ launch hands over its captured
 * arguments). */
tdpStatus tdp_launch_owned(size_t extent, int vvl, void (*kernel)(void*), void* args, void (*release)(void*),
                           const char* where);
/* The target's CUDA stream (a cudaStream_t), made current, for kernels compiled by nvcc; NULL
 * with tdp_last_error() set where the target is not a CUDA device. */
void* tdp_cuda_stream(const char* where);

/* The calling launch's share of a TLP loop over [0, extent): sites [first, last). Outside any
 * launch (a kernel called as a plain function) the share is the whole range. */
typedef struct tdp_tlp_share {
  size_t first;
  size_t last;
  size_t extent;
  int more;
} tdp_tlp_share;
tdp_tlp_share tdp_tlp_begin(size_t extent, int vvl);

/* The checks of a masked copy (pointers, the mask's length, the target range), alone: for the
 * CUDA pack kernels that files compiled by nvcc instantiate. */
tdpStatus tdp_check_masked_copy(const char* call, const double* target_data, const double* data, size_t nsites,
                                size_t nfields, const char* site_mask, size_t mask_length);
/* Records a CUDA error of `call` on the target as the last error; returns tdpErrorTarget. */
tdpStatus tdp_report_cuda_error(const char* call, const char* error_name, const char* error_string);

/* Prints tdp_last_error() and exits: what a failed call does for C callers. */
void tdp_fail(const char* call);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- Execution: TLP over chunks of VVL sites, ILP within a chunk. ---- */

#if defined(__CUDACC__)
#define TARGET_ENTRY __global__
#define TARGET __device__
#define TARGET_CONST __constant__
/* One CUDA thread per chunk, grid-striding so any extent fits the grid. */
#define TARGET_TLP(baseIndex, extent)                                                                    \
  for (size_t tdp_extent_ = (size_t)(extent), tdp_once_ = 1; tdp_once_; tdp_once_ = 0)                  \
    for ((baseIndex) = VVL * ((size_t)blockIdx.x * blockDim.x + threadIdx.x); (size_t)(baseIndex) < tdp_extent_; \
         (baseIndex) += (size_t)VVL * blockDim.x * gridDim.x)                                            \
      for (int tdp_nv_ = tdp_extent_ - (size_t)(baseIndex) < VVL ? (int)(tdp_extent_ - (size_t)(baseIndex)) : VVL, \
               tdp_in_ = 1;                                                                              \
           tdp_in_; tdp_in_ = 0)
#define TARGET_LAUNCH(extent) \
  <<<tessera_tdp_blocks((size_t)(extent)), TPB, 0,                                                       \
     tessera_tdp_stream("TARGET_LAUNCH at " __FILE__ ":" TDP_STRINGIFY_(__LINE__))>>>
#else
#define TARGET_ENTRY
#define TARGET
#define TARGET_CONST
/* This launch's share of the chunks; the last chunk may hold fewer than VVL sites (tdp_nv_). */
#define TARGET_TLP(baseIndex, extent)                                                              \
  for (tdp_tlp_share tdp_share_ = tdp_tlp_begin((size_t)(extent), VVL); tdp_share_.more; tdp_share_.more = 0) \
    for ((baseIndex) = tdp_share_.first; (size_t)(baseIndex) < tdp_share_.last; (baseIndex) += VVL)          \
      for (int tdp_nv_ = tdp_share_.last - (size_t)(baseIndex) < VVL ? (int)(tdp_share_.last - (size_t)(baseIndex)) \
                                                                    : VVL,                                   \
               tdp_in_ = 1;                                                                                  \
           tdp_in_; tdp_in_ = 0)
#ifdef __cplusplus
/* kernel TARGET_LAUNCH(N) (args...): every executor worker (or the sim stream) calls the kernel
 * with a copy of the arguments. */
#define TARGET_LAUNCH(extent) \
  *::tessera::targetdp::detail::Launch((size_t)(extent), VVL, __FILE__ ":" TDP_STRINGIFY_(__LINE__))
#endif
#endif

/* The ILP loop over the chunk's sites: `omp simd` (needs only -fopenmp-simd, no OpenMP runtime)
 * so the compiler vectorises across sites, not across the 19 velocities. */
#define TDP_PRAGMA_(x) _Pragma(#x)
#define TARGET_ILP(vecIndex) TDP_PRAGMA_(omp simd) for (vecIndex = 0; vecIndex < tdp_nv_; vecIndex++)

/* From C (which cannot capture a call's arguments for other threads): the kernel takes one
 * pointer to an argument struct, copied into the launch.
 *
 *   struct scale_args { double* t_field; size_t n; };
 *   TARGET_ENTRY void scale(void* p) { const struct scale_args* a = p; ... TARGET_TLP ... }
 *   struct scale_args args = {t_field, n};
 *   targetLaunch(scale, n, &args); */
#define targetLaunch(kernel, extent, args_pointer)                                                      \
  tdp_check_((tdp_launch((size_t)(extent), VVL, (kernel), (args_pointer), sizeof *(args_pointer),       \
                         #kernel " at " __FILE__ ":" TDP_STRINGIFY_(__LINE__))),                        \
             "targetLaunch")

#define TDP_STRINGIFY2_(x) #x
#define TDP_STRINGIFY_(x) TDP_STRINGIFY2_(x)

/* ---- The targetDP names: checked wrappers over the C interface. ---- */

#ifdef __cplusplus
#include <tessera/targetdp/detail/checked.inc>
#else
#include <stdlib.h>
static inline void tdp_check_(tdpStatus status, const char* call) {
  if (status != tdpSuccess) tdp_fail(call);
}
#endif

#define TDP_CHECKED_(name, call) tdp_check_((call), name)

static inline void targetInit(const char* devices) { TDP_CHECKED_("targetInit", tdp_init(devices)); }
static inline void targetFinalize(void) { TDP_CHECKED_("targetFinalize", tdp_finalize()); }
static inline void targetMalloc(void** address, size_t size) { TDP_CHECKED_("targetMalloc", tdp_malloc(address, size)); }
static inline void targetCalloc(void** address, size_t size) { TDP_CHECKED_("targetCalloc", tdp_calloc(address, size)); }
static inline void targetFree(void* target_pointer) { TDP_CHECKED_("targetFree", tdp_free(target_pointer)); }
static inline void copyToTarget(void* target_pointer, const void* host_pointer, size_t size) {
  TDP_CHECKED_("copyToTarget", tdp_copy_to_target(target_pointer, host_pointer, size));
}
static inline void copyFromTarget(void* host_pointer, const void* target_pointer, size_t size) {
  TDP_CHECKED_("copyFromTarget", tdp_copy_from_target(host_pointer, target_pointer, size));
}
#if !defined(__CUDACC__)
static inline void syncTarget(void) { TDP_CHECKED_("syncTarget", tdp_sync()); }
#endif

#if defined(__CUDACC__)
#include <tessera/targetdp/detail/cuda_constants.cuh>
#else
static inline void copyToTargetMasked(double* target_data, const double* data, size_t nsites, size_t nfields,
                                      const char* site_mask, size_t mask_length) {
  TDP_CHECKED_("copyToTargetMasked",
               tdp_copy_to_target_masked(target_data, data, nsites, nfields, site_mask, mask_length));
}
static inline void copyFromTargetMasked(double* data, const double* target_data, size_t nsites, size_t nfields,
                                        const char* site_mask, size_t mask_length) {
  TDP_CHECKED_("copyFromTargetMasked",
               tdp_copy_from_target_masked(data, target_data, nsites, nfields, site_mask, mask_length));
}
/* TARGET_CONST variables are ordinary host variables here, written in order with launches. */
#define TDP_CONSTANT_COPY_(name, type)                                                        \
  static inline void name(type* target_constant, const type* host_value, size_t size) {       \
    TDP_CHECKED_(#name, tdp_copy_constant(target_constant, host_value, size, #name));         \
  }
TDP_CONSTANT_COPY_(copyConstantIntToTarget, int)
TDP_CONSTANT_COPY_(copyConstantDoubleToTarget, double)
TDP_CONSTANT_COPY_(copyConstantInt1DArrayToTarget, int)
TDP_CONSTANT_COPY_(copyConstantDouble1DArrayToTarget, double)
TDP_CONSTANT_COPY_(copyConstantInt2DArrayToTarget, int)
TDP_CONSTANT_COPY_(copyConstantDouble2DArrayToTarget, double)
#undef TDP_CONSTANT_COPY_
#endif

#endif /* TESSERA_TARGETDP_H */
