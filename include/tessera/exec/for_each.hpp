#pragma once
// for_each: run a kernel at every interior site of one or more tensors, each block on the
// device that holds it (Ripple §5.2; targetDP's TLP + ILP on the CPU).
//
//   tessera::for_each(ex, [] TESSERA_HOST_DEVICE (auto x, auto y, float a) { *y += a * *x; },
//                     x, y, 2.0f);
//
// Tensor arguments become IndexedIterators (or, wrapped in in_shared(t), BlockIterators over a
// staged tile; read_only(t) and write_only(t) declare how the kernel uses a tensor); every other
// argument is passed by value. Blocks on the host run as parallel
// loops on the executor; blocks on a sim device run on its compute stream; blocks on a CUDA
// device run as a grid launch, which needs this call to be compiled by nvcc (a .cu file) with
// the kernel marked TESSERA_HOST_DEVICE. Each tensor block is accessed read-write through the
// memory layer (read only for read_only(t) arguments), so data moves to where the block runs
// and back only when needed. Returns once every block is done.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/device/device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/device/submit.hpp"
#include "tessera/exec/detail/block_launch.hpp"
#include "tessera/exec/detail/cpu_block.hpp"
#include "tessera/exec/detail/cpu_shared_block.hpp"
#include "tessera/exec/detail/cuda_block.hpp"
#include "tessera/exec/detail/kernel_launch.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/exec/reduce_into.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/memory/detail/host_holds.hpp"
#include "tessera/memory/detail/stream_accesses.hpp"
#include "tessera/memory/memory_manager.hpp"
#include "tessera/sched/executor.hpp"

namespace tessera {

namespace detail {

template <typename... A>
constexpr bool any_in_shared() {
  return (is_in_shared<std::remove_cvref_t<A>>::value || ...);
}

template <typename A0, typename... A>
auto& first_tensor(A0& a0, A&... rest) {
  if constexpr (is_tensor_argument<A0>())
    return tensor_of(a0);
  else
    return first_tensor(rest...);
}

/// Places each staged argument's tile in dynamic shared memory; returns the bytes needed.
template <std::size_t D, typename BA>
void place_stage(BA& a, const Extent<D>& tile, std::size_t& offset) {
  if constexpr (is_shared_block_arg<BA>::value) {
    a.stage = make_block_geometry<typename BA::value_type, typename BA::layout>(Box<D>(tile), a.geometry.padding);
    a.stage_offset = offset;
    offset += (a.stage.bytes() + 127) / 128 * 128;
  }
}

}  // namespace detail

namespace detail {

/// Whether block b of `first` runs on its device (true) or on the host's workers.
template <typename Tn>
bool runs_on_device(const Tn& first, std::size_t b, const ExecOptions& options) {
  return first.space(b) != 0 && options.kind != ExecKind::cpu;
}

/// The stream a device block's kernels go to: one of its device's compute streams, chosen by
/// block number so that the blocks on one device spread over its streams.
template <typename Tn>
Stream& block_stream(const Tn& first, std::size_t b) {
  return first.memory().device(first.space(b)).block_stream(b);
}

/// Checks for_each's arguments (see for_each); returns the block count.
template <typename... A>
std::size_t check_kernel_arguments(const char* what, const ExecOptions& options, A&... args) {
  const std::size_t blocks = check_same_blocks(what, args...);
  auto& first = first_tensor(args...);
  // One tensor twice would be two holds on its memory, and, on the CPU, two copies of the
  // tiles that staging makes (cpu_block.hpp), each written back over the other.
  std::vector<std::pair<const Buffer*, const std::string*>> seen;
  auto once = [&](auto& a) {
    if constexpr (is_uniform<std::remove_cvref_t<decltype(a)>>::value) {
      if (a.tensor.num_blocks() != 1 || a.tensor.size().volume() != 1)
        throw Error(std::string(what) + ": uniform tensor '" + a.tensor.name() + "' has " +
                    std::to_string(a.tensor.size().volume()) + " sites in " + std::to_string(a.tensor.num_blocks()) +
                    " blocks; every site reads the same value, so it must be a tensor of one site "
                    "(extent 1, one partition)");
      for (const auto& [buffer, name] : seen)
        if (buffer == &a.tensor.buffer(0))
          throw Error(std::string(what) + ": tensor '" + *name +
                      "' is passed twice, once as uniform; a kernel that writes it reads it through its iterator");
      seen.emplace_back(&a.tensor.buffer(0), &a.tensor.name());
    } else if constexpr (is_tensor_argument<decltype(a)>()) {
      auto& t = tensor_of(a);
      for (const auto& [buffer, name] : seen)
        if (buffer == &t.buffer(0))
          throw Error(std::string(what) + ": tensor '" + *name +
                      "' is passed twice; pass it once and read and write it through one iterator");
      seen.emplace_back(&t.buffer(0), &t.name());
    }
  };
  (once(args), ...);
  for (std::size_t b = 0; b < blocks; ++b) {
    auto check = [&](auto& a) {
      if constexpr (is_tensor_argument<decltype(a)>()) check_block_matches(what, b, first, tensor_of(a));
    };
    (check(args), ...);
  }
  if (options.kind == ExecKind::gpu)
    for (std::size_t b = 0; b < blocks; ++b)
      if (first.space(b) == 0)
        throw Error(std::string(what) + ": the kernel is to run on a GPU (ExecOptions::kind = gpu), but block " +
                    std::to_string(b) + " of tensor '" + first.name() + "' lives on the host" +
                    (first.memory().num_spaces() == 1
                         ? " and there is no device: select one (e.g. TESSERA_DEVICES=sim:2)"
                         : ": place the tensor's partitions on devices"));
  return blocks;
}

/// The block argument of uniform(t), whose one block's memory where the kernel runs is `data`.
template <typename Tn>
UniformArg<typename Tn::value_type> uniform_arg(Tn& t, std::byte* data) {
  using T = typename Tn::value_type;
  return UniformArg<T>{only_site<T, Tn::dims, typename Tn::layout_type>(data, t.geometry(0))};
}
/// The block argument of a reduce_into(tensor) for block b: its partial slot, or, when there are
/// none, the tensor's site where the block runs (`site_memory()` prepares it there).
template <typename Tn, typename Reducer, typename SiteMemory>
ReduceBlockArg<typename Tn::value_type, Reducer> tensor_reduction_arg(const TensorReductionSlots<Tn, Reducer>& a,
                                                                      std::size_t b, SiteMemory&& site_memory) {
  using T = typename Tn::value_type;
  if (a.slots != nullptr) return {a.slots + b, a.reducer};
  return {only_site<T, Tn::dims, typename Tn::layout_type>(site_memory(), a.tensor->geometry(0)), a.reducer};
}

/// Runs `kernel` over block b of the (already checked) arguments. A device block is submitted to
/// `block_stream(first, b)` (device/submit.hpp) and launched by the kernel engine
/// (kernel_launch.hpp); the call returns at once with the event that ends it, and the memory
/// layer orders later accesses to its tensors after it. A host block runs now, on `executor`'s
/// workers with the caller taking part (on the caller alone when `executor` is null), and the
/// call returns no event.
template <typename F, typename... A, typename Variant = build_variant>
std::optional<Event> launch_block(Executor* executor, const ExecOptions& options, std::size_t b, F& kernel,
                                  A&&... args) {
  constexpr const char* what = "tessera::for_each";
  auto& first = first_tensor(args...);
  // The rank and staging are named through types, never as local constants: GCC 13 (nvcc's host
  // compiler on the GPU machines) rejects a lambda that captures a LaunchShape<D> of a local D
  // as not capturing D.
  using First = std::remove_cvref_t<decltype(first)>;
  LaunchShape<First::dims> launch;
  launch.global_size = first.size();
  for (std::size_t d = 0; d < First::dims; ++d)
    launch.block_size.sizes[d] = d < 3 && options.block[d] > 0 ? options.block[d] : 1;
  const Extent<First::dims> n = first.geometry(b).interior.extent();

  if (runs_on_device(first, b, options)) {
    const std::size_t space = first.space(b);
    auto work = [&] {
      return std::string(what) + ": block " + std::to_string(b) + " of tensor '" + first.name() + "'";
    };
    return submit(block_stream(first, b), {}, [&](Stream& stream) {
      StreamAccesses prepared(space, stream);
      auto prepare = [&](auto& a) {
        using V = std::remove_cvref_t<decltype(a)>;
        if constexpr (is_tensor_argument<decltype(a)>())
          return block_arg(a, b, prepared.prepare(tensor_of(a).buffer(b), access_of<decltype(a)>()));
        else if constexpr (is_uniform<V>::value)
          return uniform_arg(a.tensor, prepared.prepare(a.tensor.buffer(0), Access::read));
        else if constexpr (is_tensor_reduction_slots<V>::value)
          return tensor_reduction_arg(a, b, [&] { return prepared.prepare(a.tensor->buffer(0), Access::read_write); });
        else
          return block_arg(a, b, nullptr);
      };
      auto block_args = std::make_tuple(prepare(args)...);
      launch_on_stream(
          stream, [&] { return first.name() + " kernel"; },
          [options, launch, n, kernel, block_args]() mutable {
            constexpr std::size_t rank = std::remove_cvref_t<decltype(n)>::rank;
            std::apply(
                [&](const auto&... ba) {
                  if constexpr (any_in_shared<A...>())
                    run_block_on_cpu_shared<rank>(nullptr, options, launch, n, kernel, read_uniform(ba)...);
                  else
                    run_block_on_cpu<rank>(nullptr, options, launch, n, kernel, read_uniform(ba)...);
                },
                block_args);
          },
          [&](void* native_stream) {
            cuda_body<Variant>(native_stream, stream.device(), work, [&](auto native) {
              constexpr std::size_t rank = std::remove_cvref_t<decltype(n)>::rank;
              constexpr bool staged = any_in_shared<A...>();
              static_assert(rank <= 3, "tessera::for_each on CUDA runs tensors of up to 3 dimensions");
              unsigned threads[3] = {1, 1, 1};
              Extent<rank> tile;
              for (std::size_t d = 0; d < rank; ++d) {
                threads[d] = static_cast<unsigned>(launch.block_size.sizes[d]);
                tile.sizes[d] = launch.block_size.sizes[d];
              }
              const CudaLaunchDims dims = cuda_launch_dims<staged>(threads, n);
              // A reduction's thread blocks fold in shared memory (where a staged launch keeps its
              // tiles: the two never meet) and write one partial each, folded after the kernel.
              std::size_t shared_bytes = std::apply(
                  [&](const auto&... ba) {
                    return thread_block_fold_bytes<typename reduced_type<std::remove_cvref_t<decltype(ba)>...>::type>(
                        dims);
                  },
                  block_args);
              std::apply([&](auto&... ba) { (place_stage<rank>(ba, tile, shared_bytes), ...); }, block_args);
              auto device_args = std::apply(
                  [&](const auto&... ba) {
                    return std::make_tuple(contributions_on_cuda(stream.device(), dims.thread_blocks(), ba)...);
                  },
                  block_args);
              // An edge kernel's grid covers only the edge sites (a reduction's contributions
              // need every site written, and a staged tile every thread, so those launch whole).
              std::optional<EdgeBoxes<rank>> edges;
              std::apply(
                  [&](const auto&... ba) {
                    using Reduced = typename reduced_type<std::remove_cvref_t<decltype(ba)>...>::type;
                    if constexpr (!staged && std::is_void_v<Reduced>)
                      if (options.edge_width > 0)
                        edges.emplace(block_origin<rank>(ba...), n, launch.global_size, options.edge_width);
                  },
                  block_args);
              const char* failed = std::apply(
                  [&](const auto&... ba) {
                    return launch_block_on_cuda<staged>(native, dims, shared_bytes, launch, n,
                                                        edges ? &*edges : nullptr, kernel, ba...);
                  },
                  device_args);
              // (Folded even after a failed launch, which frees them; the error below is what counts.)
              std::apply([&](const auto&... ba) { (fold_contributions_on_cuda(stream.device(), stream, ba), ...); },
                         device_args);
              if (failed != nullptr)
                throw_cuda_launch_error(work() + (staged ? " (in_shared: " + std::to_string(shared_bytes) +
                                                               " bytes of shared memory asked)"
                                                         : std::string()),
                                        stream.device(), failed);
            });
          });
      prepared.finish();
    });
  }

  HostHolds holds;
  auto hold = [&](auto& a) {
    using V = std::remove_cvref_t<decltype(a)>;
    if constexpr (is_tensor_argument<decltype(a)>())
      return block_arg(a, b, holds.hold(tensor_of(a).buffer(b), access_of<decltype(a)>()));
    else if constexpr (is_uniform<V>::value)
      return uniform_arg(a.tensor, holds.hold(a.tensor.buffer(0), Access::read));
    else if constexpr (is_tensor_reduction_slots<V>::value)
      return tensor_reduction_arg(a, b, [&] { return holds.hold(a.tensor->buffer(0), Access::read_write); });
    else
      return block_arg(a, b, nullptr);
  };
  auto block_args = std::make_tuple(hold(args)...);
  std::apply(
      [&](const auto&... ba) {
        if constexpr (any_in_shared<A...>())
          run_block_on_cpu_shared<First::dims>(executor, options, launch, n, kernel, read_uniform(ba)...);
        else
          run_block_on_cpu<First::dims>(executor, options, launch, n, kernel, read_uniform(ba)...);
      },
      block_args);
  return std::nullopt;
}

}  // namespace detail

namespace detail {
/// Runs `kernel` over `blocks` blocks of the (checked) arguments: device blocks first (they only
/// enqueue), then host blocks, then waits for the devices.
template <typename F, typename... A, typename Variant = build_variant>
void run_blocks(Executor& executor, const ExecOptions& options, std::size_t blocks, F& kernel, A&&... args) {
  auto& first = first_tensor(args...);
  std::vector<Event> pending;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (!runs_on_device(first, b, options)) continue;
    if (std::optional<Event> done = launch_block(&executor, options, b, kernel, args...))
      pending.push_back(std::move(*done));
  }
  for (std::size_t b = 0; b < blocks; ++b)
    if (!runs_on_device(first, b, options)) launch_block(&executor, options, b, kernel, args...);
  for (Event& e : pending) e.synchronize();
}

/// A for_each argument as a block's launch takes it: a reduce_into becomes its blocks' slots.
template <typename A, typename Slots>
decltype(auto) with_slots(A&& a, Slots& slots) {
  using V = std::remove_cvref_t<A>;
  if constexpr (is_reduce_into_tensor<V>::value)
    return TensorReductionSlots<std::remove_pointer_t<decltype(a.tensor)>, decltype(a.reducer)>{a.tensor, slots.data(),
                                                                                                a.reducer};
  else if constexpr (is_reduce_into<V>::value)
    return ReductionSlots<typename Slots::value_type, decltype(a.reducer)>{slots.data(), a.reducer};
  else
    return std::forward<A>(a);
}
/// The type a reduce_into argument reduces.
template <typename A>
struct reduce_into_value {
  using type = typename std::remove_cvref_t<decltype(*std::declval<A>().result)>::value_type;
};
template <typename Tn, typename Reducer>
struct reduce_into_value<ReduceIntoTensor<Tn, Reducer>> {
  using type = typename Tn::value_type;
};
}  // namespace detail

/// Runs `kernel` at every interior site of the tensor arguments (see the top of this file); with
/// a reduce_into argument, its result is complete on return (reduce_into.hpp).
/// Throws tessera::Error when no argument is a tensor, tensors differ in sizes, partitions or
/// placement, or a block is on a CUDA device and this call was not compiled by nvcc.
template <typename F, typename... A, typename Variant = detail::build_variant>
  requires(!std::is_same_v<std::remove_cvref_t<F>, ExecOptions>)
void for_each(Executor& executor, const ExecOptions& options, F&& kernel, A&&... args) {
  static_assert((detail::is_tensor_argument<A>() || ...),
                "tessera::for_each needs at least one tensor argument to iterate over");
  static_assert(detail::count_reduce_into<A...>() <= 1, "tessera::for_each takes at most one reduce_into argument");
  const std::size_t blocks = detail::check_kernel_arguments("tessera::for_each", options, args...);
  if constexpr (detail::count_reduce_into<A...>() == 1) {
    auto& into = detail::reduce_into_arg(args...);
    using Into = std::remove_cvref_t<decltype(into)>;
    using R = typename detail::reduce_into_value<Into>::type;
    if constexpr (detail::is_reduce_into_tensor<Into>::value)
      detail::check_reduction_tensor("tessera::for_each", *into.tensor);
    else
      into.result->reset();
    std::vector<R> partials(blocks, decltype(into.reducer)::template identity<R>());
    detail::run_blocks(executor, options, blocks, kernel, detail::with_slots(std::forward<A>(args), partials)...);
    const R total = detail::combine_partials(detail::first_tensor(args...), partials, into.reducer);
    if constexpr (detail::is_reduce_into_tensor<Into>::value)
      detail::write_total(*into.tensor, total);
    else
      into.result->set(total);
  } else {
    detail::run_blocks(executor, options, blocks, kernel, std::forward<A>(args)...);
  }
}

/// for_each with default ExecOptions.
template <typename F, typename... A, typename Variant = detail::build_variant>
  requires(!std::is_same_v<std::remove_cvref_t<F>, ExecOptions>)
void for_each(Executor& executor, F&& kernel, A&&... args) {
  for_each(executor, ExecOptions{}, std::forward<F>(kernel), std::forward<A>(args)...);
}

}  // namespace tessera
