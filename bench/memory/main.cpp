// tessera-bench-memory [--json FILE] [--quick] [--only pools|copies|device-nodes|cuda]
// (the copy benchmarks are in copies.cpp)
// PoolAllocator against malloc/free for a churn of mixed sizes (1 and 2 threads), and Arena
// against malloc/free for per-iteration scratch. The benchmark never touches the blocks, so
// these are the allocators' own costs; malloc writing its headers into the blocks is part of its.
#include "common/report.hpp"
#include "copies.hpp"
#include "device_nodes.hpp"
#ifdef TESSERA_BENCH_HAVE_CUDA
#include "cuda_benchmarks.hpp"
#endif

#include <tessera/memory/arena.hpp>
#include <tessera/memory/bytes.hpp>
#include <tessera/memory/pool_allocator.hpp>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using tessera::bench::median_seconds;

constexpr std::size_t kMinBytes = 64, kMaxBytes = 64 << 10;
constexpr std::size_t kWorkingSet = 4096;   // live blocks per thread
constexpr std::size_t kScratchBlocks = 64;  // allocations between two arena resets

// Keeps the compiler from pairing a malloc with its free and removing both.
inline void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

/// A fixed-seed script: which live slot to replace next and the size of its new block, drawn
/// log-uniform over 64 B..64 KiB so every size class is busy.
struct Script {
  std::vector<std::size_t> sizes;
  std::vector<std::uint32_t> slots;

  explicit Script(std::uint64_t seed, std::size_t length = 1 << 16) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> exponent(std::log(double(kMinBytes)), std::log(double(kMaxBytes)));
    for (std::size_t i = 0; i < length; ++i) {
      sizes.push_back(static_cast<std::size_t>(std::exp(exponent(rng))));
      slots.push_back(static_cast<std::uint32_t>(rng() % kWorkingSet));
    }
  }
};

struct Malloc {
  void* allocate(std::size_t bytes) { return std::malloc(bytes); }
  void deallocate(void* p, std::size_t) { std::free(p); }
};

struct Pool {
  tessera::PoolAllocator& pool;
  void* allocate(std::size_t bytes) { return pool.allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) { pool.deallocate(p, bytes); }
};

/// One thread's churn: `ops` times, free a random live block and allocate a new one in its place.
template <class Allocator>
class Churn {
 public:
  Churn(Allocator a, std::uint64_t seed) : alloc_(a), script_(seed) {
    for (std::size_t i = 0; i < kWorkingSet; ++i)
      live_.push_back({alloc_.allocate(script_.sizes[i]), script_.sizes[i]});
  }
  ~Churn() {
    for (auto [p, bytes] : live_) alloc_.deallocate(p, bytes);
  }
  void run(std::size_t ops) {
    const std::size_t n = script_.sizes.size();
    for (std::size_t k = 0; k < ops; ++k, ++cursor_) {
      auto& slot = live_[script_.slots[cursor_ % n]];
      alloc_.deallocate(slot.first, slot.second);
      slot.second = script_.sizes[cursor_ % n];
      slot.first = alloc_.allocate(slot.second);
      escape(slot.first);
    }
  }

 private:
  Allocator alloc_;
  Script script_;
  std::vector<std::pair<void*, std::size_t>> live_;
  std::size_t cursor_ = kWorkingSet;
};

/// Nanoseconds per allocate+free pair with `threads` threads churning at once (each its own
/// working set, one shared allocator): the median over reps of the slowest thread's time.
template <class Allocator>
double churn_ns(Allocator a, int threads, std::size_t ops, int reps) {
  std::vector<std::vector<double>> seconds(static_cast<std::size_t>(threads));
  std::barrier start(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      Churn<Allocator> churn(a, 1000 + static_cast<std::uint64_t>(t));
      // Warm-up, the same length in --quick: malloc needs about a million pairs to settle
      // (fewer left it ~50% slower than its steady state), the pool needs its slabs.
      churn.run(std::max<std::size_t>(ops, 1'000'000));
      for (int r = 0; r < reps; ++r) {
        start.arrive_and_wait();
        const auto t0 = std::chrono::steady_clock::now();
        churn.run(ops);
        seconds[static_cast<std::size_t>(t)].push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    });
  for (auto& w : workers) w.join();
  std::vector<double> slowest(static_cast<std::size_t>(reps), 0.0);
  for (const auto& per_thread : seconds)
    for (std::size_t r = 0; r < slowest.size(); ++r) slowest[r] = std::max(slowest[r], per_thread[r]);
  std::sort(slowest.begin(), slowest.end());
  return slowest[slowest.size() / 2] * 1e9 / static_cast<double>(ops);
}

/// Nanoseconds per block for the scratch pattern: kScratchBlocks allocations, then all freed.
template <class AllocateAll, class FreeAll>
double scratch_ns(AllocateAll allocate_all, FreeAll free_all, std::size_t iterations, int reps) {
  return median_seconds(
             [&] {
               for (std::size_t i = 0; i < iterations; ++i) {
                 allocate_all(i);
                 free_all();
               }
             },
             reps) *
         1e9 / static_cast<double>(iterations * kScratchBlocks);
}

}  // namespace

int main(int argc, char** argv) {
  auto args = tessera::bench::parse_args(argc, argv);
  tessera::bench::Report report("memory");
  const std::size_t ops = args.quick ? 200'000 : 2'000'000;
  const int reps = args.quick ? 3 : 7;
  std::printf("memory suite on %u hardware threads%s: %zu live blocks per thread, sizes %s..%s log-uniform\n",
              std::thread::hardware_concurrency(), args.quick ? " (quick)" : "", kWorkingSet,
              tessera::format_bytes(kMinBytes).c_str(), tessera::format_bytes(kMaxBytes).c_str());
  report.header();

  // The region is reserved, never written: the pool keeps all its bookkeeping elsewhere.
  const std::size_t region_bytes = std::size_t{1} << 30;
  std::unique_ptr<std::byte[]> region(new std::byte[region_bytes]);
  if (args.runs("pools")) {
  for (int threads : {1, 2}) {
    const std::string name = "churn-64B-64KiB-" + std::to_string(threads) + "thread";
    const double malloc_ns = churn_ns(Malloc{}, threads, ops, reps);
    tessera::PoolAllocator pool(region.get(), region_bytes, "bench");
    const double pool_ns = churn_ns(Pool{pool}, threads, ops, reps);
    report.add({name, "malloc-free", "per-pair", malloc_ns, "ns", "", 0, 0});
    report.add({name, "PoolAllocator", "per-pair", pool_ns, "ns", "malloc-free", malloc_ns, 0});
  }

  // Per-iteration scratch (Ripple resets its arena per graph run): bump and reset vs malloc/free.
  const Script script(7);
  const std::size_t iterations = ops / kScratchBlocks * 4;
  std::vector<void*> blocks(kScratchBlocks);
  auto size_of = [&](std::size_t i, std::size_t b) {
    return script.sizes[(i * kScratchBlocks + b) % script.sizes.size()];
  };
  const double malloc_ns = scratch_ns(
      [&](std::size_t i) {
        for (std::size_t b = 0; b < kScratchBlocks; ++b) escape(blocks[b] = std::malloc(size_of(i, b)));
      },
      [&] {
        for (void* p : blocks) std::free(p);
      },
      iterations, reps);
  tessera::Arena arena(region.get(), kScratchBlocks * (kMaxBytes + 256), "bench-scratch");
  const double arena_ns = scratch_ns(
      [&](std::size_t i) {
        for (std::size_t b = 0; b < kScratchBlocks; ++b) escape(arena.allocate(size_of(i, b)));
      },
      [&] { arena.reset(); }, iterations, reps);
  report.add({"scratch-64-per-reset", "malloc-free", "per-block", malloc_ns, "ns", "", 0, 0});
  report.add({"scratch-64-per-reset", "Arena", "per-block", arena_ns, "ns", "malloc-free", malloc_ns, 0});
  }
  if (args.runs("copies")) tessera::bench::run_copy_benchmarks(report, args.quick);
  if (args.runs("device-nodes")) tessera::bench::run_device_node_benchmarks(report, args.quick);
#ifdef TESSERA_BENCH_HAVE_CUDA
  if (args.runs("cuda")) tessera::bench::run_cuda_benchmarks(report, args.quick);
#endif
  report.write_json(args.json);
}
