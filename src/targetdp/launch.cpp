// TARGET_LAUNCH, the TLP share of each worker, and syncTarget.
//
// On the host every executor worker calls the kernel for its own run of VVL-site chunks (as each
// OpenMP thread runs the whole of a targetDP kernel's parallel region with its share of the TLP
// loop); on a sim device the stream's thread calls it once for all chunks, in stream order.

#include "target_state.hpp"

#include <tessera/device/submit.hpp>
#include <tessera/sched/executor.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <memory>

using tessera::DeviceKind;
using tessera::targetdp::detail::Failure;
using tessera::targetdp::detail::guarded;
using tessera::targetdp::detail::TargetState;

namespace {

// The chunks [lo, hi) of `chunks` that the calling thread's current launch gave it.
struct LaunchShare {
  bool active = false;
  std::size_t lo = 0;
  std::size_t hi = 0;
  std::size_t chunks = 0;
};
thread_local LaunchShare current_share;

struct ShareScope {
  LaunchShare saved;
  ShareScope(std::size_t lo, std::size_t hi, std::size_t chunks) : saved(current_share) {
    current_share = {true, lo, hi, chunks};
  }
  ~ShareScope() { current_share = saved; }
};

struct Kernel {
  void (*run)(void*);
  void* args;
  void (*release)(void*);
};

std::size_t chunk_count(std::size_t extent, int vvl) { return (extent + static_cast<std::size_t>(vvl) - 1) / vvl; }

void launch(std::size_t extent, int vvl, Kernel kernel, const char* where) {
  // Whatever happens, the arguments are released once: after the kernel ran, or now.
  std::unique_ptr<void, void (*)(void*)> owned(
      kernel.args, kernel.release ? kernel.release : [](void*) {});
  const char* name = where ? where : "kernel";
  if (vvl <= 0)
    throw Failure(tdpErrorInvalidValue, fmt::format("TARGET_LAUNCH of {}: VVL is {}, not positive", name, vvl));
  if (!kernel.run) throw Failure(tdpErrorInvalidValue, fmt::format("TARGET_LAUNCH of {}: the kernel is null", name));
  auto& state = TargetState::instance();
  tessera::Device& target = state.target();
  const std::size_t chunks = chunk_count(extent, vvl);
  switch (target.kind()) {
    case DeviceKind::host: {
      if (chunks == 0) return;
      auto& executor = tessera::default_executor();
      auto plan = executor.plan_loop(0, chunks, 0);
      struct Context {
        Kernel kernel;
        std::size_t chunks;
      } context{kernel, chunks};
      try {
        executor.run_loop(
            plan,
            [](void* c, std::size_t, std::size_t lo, std::size_t hi) {
              auto* ctx = static_cast<Context*>(c);
              ShareScope scope(lo, hi, ctx->chunks);
              ctx->kernel.run(ctx->kernel.args);
            },
            &context);
      } catch (const std::exception& e) {
        throw Failure(tdpErrorTarget, fmt::format("kernel {} failed on {}: {}", name, target.name(), e.what()));
      }
      return;
    }
    case DeviceKind::sim: {
      if (chunks == 0) return;  // nothing to run, as on the host
      auto* args = owned.release();
      std::string label = name;
      auto work = [kernel = Kernel{kernel.run, args, kernel.release}, chunks, label]() mutable {
        std::unique_ptr<void, void (*)(void*)> release(
            kernel.args, kernel.release ? kernel.release : [](void*) {});
        try {
          ShareScope scope(0, chunks, chunks);
          kernel.run(kernel.args);
        } catch (const std::exception& e) {
          TargetState::instance().note_kernel_failure(fmt::format("kernel {} failed: {}", label, e.what()));
        } catch (...) {
          TargetState::instance().note_kernel_failure(fmt::format("kernel {} failed", label));
        }
      };
      // Through the one device submission path, as every front end's device work goes.
      tessera::submit(state.stream(), {}, [&](tessera::Stream& s) { s.enqueue_host(std::move(work), label); });
      return;
    }
    case DeviceKind::cuda:
      throw Failure(tdpErrorTarget,
                    fmt::format("TARGET_LAUNCH of {}: the target {} runs only kernels compiled by nvcc; this one was "
                                "compiled for the host (compile the file as CUDA, or choose a host or sim target "
                                "with TESSERA_DEVICES)",
                                name, target.name()));
  }
}

}  // namespace

extern "C" {

tdp_tlp_share tdp_tlp_begin(size_t extent, int vvl) {
  const LaunchShare& s = current_share;
  if (!s.active || vvl <= 0) return {0, extent, extent, 1};
  if (s.chunks == 0) return {0, 0, extent, 1};
  // A TLP loop over the launch's own extent gets exactly the launch's chunks; another extent is
  // shared out in the same proportions, so every site is still visited once.
  const std::size_t chunks = chunk_count(extent, vvl);
  const std::size_t lo = s.chunks == chunks ? s.lo : s.lo * chunks / s.chunks;
  const std::size_t hi = s.chunks == chunks ? s.hi : s.hi * chunks / s.chunks;
  const std::size_t first = lo * static_cast<std::size_t>(vvl);
  std::size_t last = hi * static_cast<std::size_t>(vvl);
  if (last > extent) last = extent;
  return {first, last < first ? first : last, extent, 1};
}

tdpStatus tdp_launch(size_t extent, int vvl, void (*kernel)(void*), const void* args, size_t args_size,
                     const char* where) {
  return guarded("targetLaunch", [&] {
    if (!args && args_size > 0)
      throw Failure(tdpErrorInvalidValue,
                    fmt::format("targetLaunch of {}: the argument pointer is null", where ? where : "kernel"));
    void* copy = std::malloc(args_size == 0 ? 1 : args_size);
    if (!copy) throw std::bad_alloc();
    if (args_size) std::memcpy(copy, args, args_size);
    launch(extent, vvl, Kernel{kernel, copy, [](void* p) { std::free(p); }}, where);
  });
}

tdpStatus tdp_launch_owned(size_t extent, int vvl, void (*kernel)(void*), void* args, void (*release)(void*),
                           const char* where) {
  return guarded("TARGET_LAUNCH", [&] { launch(extent, vvl, Kernel{kernel, args, release}, where); });
}

tdpStatus tdp_sync(void) {
  return guarded("syncTarget", [] {
    auto& state = TargetState::instance();
    tessera::Device& target = state.target();
    if (target.kind() != DeviceKind::host) state.stream().synchronize();
    if (auto failure = state.take_kernel_failure())
      throw Failure(tdpErrorTarget, fmt::format("syncTarget on {}: {}", target.name(), *failure));
  });
}

void* tdp_cuda_stream(const char* where) {
  void* handle = nullptr;
  tdpStatus s = guarded("TARGET_LAUNCH", [&] {
    auto& state = TargetState::instance();
    tessera::Device& target = state.target();
    if (target.kind() != DeviceKind::cuda)
      throw Failure(tdpErrorTarget,
                    fmt::format("{}: this file was compiled by nvcc, so its kernels and TARGET_CONST variables need a "
                                "CUDA target, but the target is {} (set TESSERA_DEVICES=cuda, or build the file with "
                                "the host compiler for host and sim targets)",
                                where ? where : "targetDP", target.name()));
    target.make_current();
    handle = state.stream().native_handle();
  });
  return s == tdpSuccess ? handle : nullptr;
}

}  // extern "C"
