// The Buffer coherence suite on a real GPU: random host requests and kernels on the GPU's two
// compute streams must see and leave the values of a sequential model, with validity and copied
// bytes tracked exactly. The sim version is tests/memory/test_buffer_coherence.cpp; here the
// "kernel" is a CUDA kernel that checks the rows it reads and writes new values. Skips without a GPU.
#include "../memory/buffer_test_support.hpp"
#include "cuda_test_support.hpp"

#include <tessera/memory/buffer.hpp>

#include <cuda_runtime.h>

#include <random>
#include <string>
#include <vector>

using namespace tessera;
using namespace buffer_test;

namespace {

constexpr std::size_t kRows = 40;

struct RowValues {
  std::uint32_t old_value[kRows];
  std::uint32_t new_value[kRows];
};

__device__ std::uint32_t device_word(std::uint32_t value, std::size_t w) {
  return value * 2654435761u + static_cast<std::uint32_t>(w) * 40503u;
}

// One thread per row of [begin, end): counts rows that do not hold the model's old value (for
// reading modes) and stores the new one (for writing modes).
__global__ void access_rows(std::uint32_t* base, std::size_t begin, std::size_t end, bool reads, bool writes,
                            RowValues v, int* stale) {
  const std::size_t row = begin + blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= end) return;
  std::uint32_t* p = base + row * words_per_row;
  if (reads)
    for (std::size_t w = 0; w < words_per_row; ++w)
      if (p[w] != device_word(v.old_value[row - begin], w)) {
        atomicAdd(stale, 1);
        break;
      }
  if (writes)
    for (std::size_t w = 0; w < words_per_row; ++w) p[w] = device_word(v.new_value[row - begin], w);
}

}  // namespace

TEST(CudaBufferCoherence, RandomAccessesMatchASequentialModel) {
  std::string why;
  if (!tessera_test::have_gpu(why)) GTEST_SKIP() << why;
  auto devices = DeviceSet::cuda(tessera_test::small_cuda_options());
  Device& gpu = devices.accelerator(0);
  MemoryManager memory(devices);
  int* stale = nullptr;
  gpu.make_current();
  CUDA_OK(cudaMalloc(&stale, sizeof(int)));
  CUDA_OK(cudaMemset(stale, 0, sizeof(int)));

  std::mt19937 rng(11);
  Buffer buf(memory, kRows, row_bytes, "gpu-coherence");
  std::vector<std::uint32_t> values(kRows);
  std::vector<std::vector<bool>> valid(2, std::vector<bool>(kRows, false));
  {
    void* h = buf.request(Access::write).get();
    for (std::size_t r = 0; r < kRows; ++r) put(h, r, values[r] = static_cast<std::uint32_t>(r + 7));
    buf.release();
    valid[0].assign(kRows, true);
  }
  std::uint32_t next_value = 1u << 20;
  for (int step = 0; step < 1000; ++step) {
    const std::size_t space = rng() % 2;
    const auto mode = static_cast<Access>(rng() % 4);
    const RowRange r = random_rows(rng, kRows);
    SCOPED_TRACE("step " + std::to_string(step) + ": " + std::string(to_string(mode)) + " of rows " + r.to_string() +
                 " in space " + std::to_string(space));
    std::size_t rows_to_copy = 0;
    if (access_reads(mode))
      for (std::size_t i = r.begin; i < r.end; ++i) rows_to_copy += !valid[space][i];
    const std::size_t copied_before = buf.bytes_transferred().total();

    RowValues v{};
    for (std::size_t i = r.begin; i < r.end; ++i) {
      v.old_value[i - r.begin] = values[i];
      std::uint32_t now = values[i];
      if (mode == Access::write) now = next_value++;
      if (mode == Access::read_write) now = now * 3 + 1;
      if (mode == Access::reduce) now = now + static_cast<std::uint32_t>(step);
      v.new_value[i - r.begin] = now;
    }
    if (space == 0) {
      void* h = buf.request(mode, r).get();
      if (access_reads(mode))
        for (std::size_t i = r.begin; i < r.end; ++i) ASSERT_TRUE(holds(h, i, v.old_value[i - r.begin])) << "row " << i;
      if (access_writes(mode))
        for (std::size_t i = r.begin; i < r.end; ++i) put(h, i, v.new_value[i - r.begin]);
      buf.release();
    } else {
      Stream& s = gpu.compute_stream(rng() % 2);
      auto* d = static_cast<std::uint32_t*>(buf.prepare(space, s, mode, r));
      const auto rows = static_cast<unsigned>(r.size());
      access_rows<<<1, rows, 0, static_cast<cudaStream_t>(s.native_handle())>>>(d, r.begin, r.end, access_reads(mode),
                                                                                 access_writes(mode), v, stale);
      CUDA_OK(cudaGetLastError());
      buf.finish(space, s, mode, r);
    }
    for (std::size_t i = r.begin; i < r.end; ++i) {
      values[i] = v.new_value[i - r.begin];
      if (access_writes(mode)) valid[0][i] = valid[1][i] = false;
      valid[space][i] = true;
    }
    for (std::size_t sp = 0; sp < 2; ++sp) ASSERT_EQ(buf.valid_rows(sp), ranges_of(valid[sp])) << "space " << sp;
    ASSERT_EQ(buf.bytes_transferred().total() - copied_before, rows_to_copy * row_bytes);
  }
  const void* h = buf.request(Access::read).get();
  for (std::size_t i = 0; i < kRows; ++i) EXPECT_TRUE(holds(h, i, values[i])) << "row " << i;
  buf.release();
  memory.synchronize();
  int stale_rows = -1;
  CUDA_OK(cudaMemcpy(&stale_rows, stale, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(stale_rows, 0) << "GPU kernels read rows the model had already overwritten";
  CUDA_OK(cudaFree(stale));
}
