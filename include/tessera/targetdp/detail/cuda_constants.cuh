#pragma once
// The CUDA side of tessera/targetdp.h, for files compiled by nvcc: TARGET_CONST variables live
// in constant memory, launches go to the target's stream, and masked copies pack on the GPU.
// Included by targetdp.h only.

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

inline cudaStream_t tessera_tdp_stream(const char* where) {
  void* stream = tdp_cuda_stream(where);
  if (!stream) tdp_check_(tdpErrorTarget, "TARGET_LAUNCH");
  return static_cast<cudaStream_t>(stream);
}

inline unsigned tessera_tdp_blocks(std::size_t extent) {
  const std::size_t chunks = (extent + VVL - 1) / VVL;
  std::size_t blocks = (chunks + TPB - 1) / TPB;
  if (blocks == 0) blocks = 1;               // an empty launch still needs a valid grid
  if (blocks > 0x7fffffff) blocks = 0x7fffffff;  // the TLP loop strides over the rest
  return static_cast<unsigned>(blocks);
}

inline void tessera_tdp_cuda_check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  tdp_check_(tdp_report_cuda_error(call, cudaGetErrorName(e), cudaGetErrorString(e)), call);
}

// A launch that failed to start (a bad configuration, too many resources) leaves its error for
// the next runtime call to find; syncTarget looks before waiting, so it is reported, not lost.
static inline void syncTarget(void) {
  tessera_tdp_cuda_check(cudaGetLastError(), "syncTarget (a TARGET_LAUNCH failed to start)");
  tdp_check_(tdp_sync(), "syncTarget");
}

#define TDP_CUDA_CONSTANT_COPY_(name, type)                                                              \
  static inline void name(type* target_constant, const type* host_value, size_t size) {                  \
    cudaStream_t s = tessera_tdp_stream(#name);                                                          \
    tessera_tdp_cuda_check(                                                                              \
        cudaMemcpyToSymbolAsync(static_cast<const void*>(target_constant), host_value, size, 0, cudaMemcpyHostToDevice, s), #name); \
    tessera_tdp_cuda_check(cudaStreamSynchronize(s), #name);                                             \
  }
TDP_CUDA_CONSTANT_COPY_(copyConstantIntToTarget, int)
TDP_CUDA_CONSTANT_COPY_(copyConstantDoubleToTarget, double)
TDP_CUDA_CONSTANT_COPY_(copyConstantInt1DArrayToTarget, int)
TDP_CUDA_CONSTANT_COPY_(copyConstantDouble1DArrayToTarget, double)
TDP_CUDA_CONSTANT_COPY_(copyConstantInt2DArrayToTarget, int)
TDP_CUDA_CONSTANT_COPY_(copyConstantDouble2DArrayToTarget, double)
#undef TDP_CUDA_CONSTANT_COPY_

template <bool Pack>
__global__ void tessera_tdp_masked_kernel(double* packed, double* data, const std::size_t* sites, std::size_t n,
                                          std::size_t nsites, std::size_t nfields) {
  const std::size_t total = n * nfields;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::size_t>(blockDim.x) * gridDim.x) {
    const std::size_t f = i / n, k = i % n;
    if (Pack)
      packed[i] = data[f * nsites + sites[k]];
    else
      data[f * nsites + sites[k]] = packed[i];
  }
}

// Packs the selected sites on the GPU, moves only them, unpacks on the host (or the reverse).
inline void tessera_tdp_masked_copy(bool to_target, double* target_data, double* host_data, std::size_t nsites,
                                    std::size_t nfields, const char* mask, std::size_t mask_length,
                                    const char* call) {
  tdp_check_(tdp_check_masked_copy(call, target_data, host_data, nsites, nfields, mask, mask_length), call);
  std::vector<std::size_t> sites;
  for (std::size_t s = 0; s < nsites; ++s)
    if (mask[s]) sites.push_back(s);
  const std::size_t n = sites.size(), total = n * nfields;
  if (total == 0) return;
  std::vector<double> staging(total);
  void* t_sites = nullptr;
  void* t_packed = nullptr;
  targetMalloc(&t_sites, n * sizeof(std::size_t));
  targetMalloc(&t_packed, total * sizeof(double));
  copyToTarget(t_sites, sites.data(), n * sizeof(std::size_t));
  const unsigned blocks = static_cast<unsigned>((total + 255) / 256 < 65535 ? (total + 255) / 256 : 65535);
  cudaStream_t s = tessera_tdp_stream(call);
  if (to_target) {
    for (std::size_t f = 0; f < nfields; ++f)
      for (std::size_t k = 0; k < n; ++k) staging[f * n + k] = host_data[f * nsites + sites[k]];
    copyToTarget(t_packed, staging.data(), total * sizeof(double));
    tessera_tdp_masked_kernel<false><<<blocks, 256, 0, s>>>(static_cast<double*>(t_packed), target_data,
                                                            static_cast<const std::size_t*>(t_sites), n, nsites,
                                                            nfields);
    tessera_tdp_cuda_check(cudaGetLastError(), call);
    syncTarget();
  } else {
    tessera_tdp_masked_kernel<true><<<blocks, 256, 0, s>>>(static_cast<double*>(t_packed), target_data,
                                                           static_cast<const std::size_t*>(t_sites), n, nsites,
                                                           nfields);
    tessera_tdp_cuda_check(cudaGetLastError(), call);
    copyFromTarget(staging.data(), t_packed, total * sizeof(double));
    for (std::size_t f = 0; f < nfields; ++f)
      for (std::size_t k = 0; k < n; ++k) host_data[f * nsites + sites[k]] = staging[f * n + k];
  }
  targetFree(t_packed);
  targetFree(t_sites);
}

static inline void copyToTargetMasked(double* target_data, const double* data, size_t nsites, size_t nfields,
                                      const char* site_mask, size_t mask_length) {
  tessera_tdp_masked_copy(true, target_data, const_cast<double*>(data), nsites, nfields, site_mask, mask_length,
                          "copyToTargetMasked");
}
static inline void copyFromTargetMasked(double* data, const double* target_data, size_t nsites, size_t nfields,
                                        const char* site_mask, size_t mask_length) {
  tessera_tdp_masked_copy(false, const_cast<double*>(target_data), data, nsites, nfields, site_mask, mask_length,
                          "copyFromTargetMasked");
}
