#pragma once
// TESSERA_HOST_DEVICE marks a function callable from host and device code. It expands to
// `__host__ __device__` only when a CUDA compiler sees it, so the same kernel source builds
// with a plain C++ compiler.

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TESSERA_HOST_DEVICE __host__ __device__
#define TESSERA_DEVICE __device__
#define TESSERA_GLOBAL __global__
#else
#define TESSERA_HOST_DEVICE
#define TESSERA_DEVICE
#define TESSERA_GLOBAL
#endif

#if defined(__CUDA_ARCH__)
#define TESSERA_ON_DEVICE 1
#else
#define TESSERA_ON_DEVICE 0
#endif

// nvcc refuses a __host__ __device__ template that calls a host-only or device-only functor
// (e.g. a lambda written inside a kernel). The pragma drops that check for the next template:
// each instantiation is only ever used on the side its functor lives on.
#if defined(__CUDACC__) && !defined(__clang__)
#define TESSERA_NO_EXEC_CHECK _Pragma("nv_exec_check_disable")
#else
#define TESSERA_NO_EXEC_CHECK
#endif

// Templates whose bodies differ between nvcc (a CUDA launch) and a host compiler (an error that
// says to compile with nvcc) take a last template parameter defaulted to build_variant, a type
// that differs between the two. Their instantiations then have different names, so a program
// that links a .cu and a .cpp user of one kernel keeps both bodies (ODR-safe) instead of one
// silently replacing the other.
#if defined(__CUDACC__)
#define TESSERA_BUILD_VARIANT with_cuda
#else
#define TESSERA_BUILD_VARIANT host_only
#endif
namespace tessera::detail {
inline namespace TESSERA_BUILD_VARIANT {
struct build_variant {
  /// Whether templates instantiated with this variant have CUDA bodies (nvcc compiled the file).
  static constexpr bool has_cuda_bodies =
#if defined(__CUDACC__)
      true;
#else
      false;
#endif
};
}  // namespace TESSERA_BUILD_VARIANT
}  // namespace tessera::detail

#if defined(_MSC_VER)
#define TESSERA_FORCE_INLINE __forceinline
#else
#define TESSERA_FORCE_INLINE inline __attribute__((always_inline))
#endif
