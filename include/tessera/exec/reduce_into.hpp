#pragma once
// reduce_into: a kernel that reduces as it runs (Kokkos' parallel_reduce, OPS's global
// reductions in a loop). Passed among for_each's or Graph::split's arguments, it gives the
// kernel a Contribution, through which each site stores its share; the shares are folded with
// the reducer into a ReductionResult, across blocks, devices and ranks, as reduce() folds a
// tensor.
//
//   tessera::ReductionResult<double> largest;
//   tessera::for_each(ex, [] TESSERA_HOST_DEVICE (auto in, auto out, auto change) {
//     const double v = 0.5 * (*in.offset(0, -1) + *in.offset(0, 1));
//     *change = std::fabs(v - *in);
//     *out = v;
//   }, tessera::read_only(u), tessera::write_only(next), tessera::reduce_into(largest, tessera::Max{}));
//   double e = largest.value();
//
// Where a kernel would otherwise write a tensor of per-site values for reduce() to read back,
// this saves a write and a read of memory per site. The result is the same reduction of the
// same values: with Max and Min the same bits as reduce() over that tensor; with Sum, the same
// bits for a given executor and partition (rows are folded in order, blocks in block order; on
// CUDA, for a given ExecOptions::block too, which fixes the order the thread blocks fold in).

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include "tessera/core/error.hpp"
#include "tessera/device/device.hpp"
#include "tessera/device/stream.hpp"
#include "tessera/exec/detail/block_args.hpp"
#include "tessera/exec/detail/cuda_reduce.hpp"
#include "tessera/exec/detail/kernel_launch.hpp"
#include "tessera/exec/detail/site_reduction.hpp"
#include "tessera/exec/reduction.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/memory/detail/stream_accesses.hpp"
#include "tessera/tensor/block_geometry.hpp"

namespace tessera {

/// A reduction argument: what reduce_into returns.
template <typename R, typename Reducer>
struct ReduceInto {
  ReductionResult<R>* result;
  Reducer reducer;
};

/// The kernel reduces its sites' contributions with `reducer` (Sum, Max, Min, or a type with
/// the same members) into `result`, which is complete once the for_each returns (or, in a
/// Graph, once the split's blocks have all run). At most one per kernel.
template <typename R, typename Reducer>
ReduceInto<R, Reducer> reduce_into(ReductionResult<R>& result, const Reducer& reducer) {
  static_assert(std::is_trivially_copyable_v<R>, "reduce_into reduces values that can be copied as bytes");
  return ReduceInto<R, Reducer>{&result, reducer};
}

/// A reduction into a tensor of one site: what reduce_into(tensor, reducer) returns.
template <TensorLike Tn, typename Reducer>
struct ReduceIntoTensor {
  Tn* tensor;
  Reducer reducer;
};

/// As above, but the total goes into the one site of `tensor` (a Tensor of extent 1, one block)
/// instead of a ReductionResult: it stays where the tensor lives, so a later kernel reads it
/// through tessera::uniform(tensor) without the host waiting for it. A Graph split of one block
/// (one device, one rank) folds into the site in place, in stream order; a split of several
/// blocks in one process whose tensor is on a device combines the blocks' partials there, in a
/// final node on that device's stream (in block order, as the host would). Otherwise (ranks,
/// a tensor on the host) and in an eager for_each (which waits anyway), the partials are
/// combined on the host, as for a ReductionResult, and the site written there.
///
///   tessera::Tensor<double, 1> largest(memory, tessera::Extent<1>{1});
///   tessera::for_each(ex, kernel, u, tessera::reduce_into(largest, tessera::Max{}));
///   tessera::for_each(ex, next_kernel, u, tessera::uniform(largest));
template <TensorLike Tn, typename Reducer>
ReduceIntoTensor<Tn, Reducer> reduce_into(Tn& tensor, const Reducer& reducer) {
  static_assert(std::is_arithmetic_v<typename Tn::value_type>,
                "reduce_into a tensor reduces numbers: the tensor's value type must be arithmetic");
  return ReduceIntoTensor<Tn, Reducer>{&tensor, reducer};
}

namespace detail {
template <typename A>
struct is_reduce_into : std::false_type {};
template <typename R, typename Reducer>
struct is_reduce_into<ReduceInto<R, Reducer>> : std::true_type {};
template <typename Tn, typename Reducer>
struct is_reduce_into<ReduceIntoTensor<Tn, Reducer>> : std::true_type {};
template <typename A>
struct is_reduce_into_tensor : std::false_type {};
template <typename Tn, typename Reducer>
struct is_reduce_into_tensor<ReduceIntoTensor<Tn, Reducer>> : std::true_type {};

/// A reduce_into(tensor) as a block's launch takes it: the blocks' partial slots (one per block,
/// combined and written into the tensor afterwards), or null, when the split's only block
/// writes its total straight into the tensor's site where it runs.
template <typename Tn, typename Reducer>
struct TensorReductionSlots {
  using value_type = typename Tn::value_type;
  Tn* tensor;
  value_type* slots;
  Reducer reducer;
};
template <typename A>
struct is_tensor_reduction_slots : std::false_type {};
template <typename Tn, typename Reducer>
struct is_tensor_reduction_slots<TensorReductionSlots<Tn, Reducer>> : std::true_type {};

/// Throws tessera::Error unless `t` can hold a reduction's total: one site in one block, in
/// this process (each rank reduces into its own copy).
template <TensorLike Tn>
void check_reduction_tensor(const char* what, const Tn& t) {
  if (t.num_blocks() != 1 || t.size().volume() != 1)
    throw Error(std::string(what) + ": reduce_into tensor '" + t.name() + "' has " + std::to_string(t.size().volume()) +
                " sites in " + std::to_string(t.num_blocks()) +
                " blocks; a reduction's total goes into a tensor of one site (extent 1, one partition)");
  if constexpr (requires { t.ranks(); })
    if (t.ranks() != nullptr)
      throw Error(std::string(what) + ": reduce_into tensor '" + t.name() +
                  "' is spread over ranks; every rank reduces into a tensor of its own");
}

/// Writes `total` into the one site of `t`, from the host.
template <TensorLike Tn>
void write_total(Tn& t, const typename Tn::value_type& total) {
  t.fill_from(&total);
}

/// Enqueues on `stream` (of the device that holds `t`'s block) the fold of `count` partials in
/// order, from the reducer's identity, into the one site of `t` there: the same bits as the
/// fold on the host, with nothing on the host between the blocks' reductions and the work that
/// reads the total. The partials must be readable where the stream runs (host memory for a
/// simulated device's CPU thread, pinned host memory for a GPU) and stay put until it has run.
template <typename Variant, TensorLike Tn, typename Reducer>
void combine_into_site(Stream& stream, Tn& t, const typename Tn::value_type* partials, std::size_t count,
                       const Reducer& reducer) {
  using T = typename Tn::value_type;
  StreamAccesses site_access(t.space(0), stream);
  T* site = only_site<T, Tn::dims, typename Tn::layout_type>(site_access.prepare(t.buffer(0), Access::read_write),
                                                             t.geometry(0));
  auto label = [&] { return "reduce_into '" + t.name() + "' total"; };
  launch_on_stream(
      stream, label, [partials, count, reducer, site] { *site = fold_in_order(partials, count, reducer); },
      [&](void* native_stream) {
        cuda_body<Variant>(native_stream, stream.device(), label, [&](auto native) {
          if (const char* failed = combine_in_order_on_cuda(native, partials, count, reducer, site))
            throw_cuda_launch_error(label(), stream.device(), failed);
        });
      });
  site_access.finish();
}

template <typename... A>
constexpr std::size_t count_reduce_into() {
  return (std::size_t{is_reduce_into<std::remove_cvref_t<A>>::value} + ... + 0);
}

/// The ReduceInto among `args` (the caller knows there is one).
template <typename A0, typename... A>
auto& reduce_into_arg(A0& a0, A&... rest) {
  if constexpr (is_reduce_into<std::remove_cvref_t<A0>>::value)
    return a0;
  else
    return reduce_into_arg(rest...);
}

// A launch on CUDA: each reduction argument gets one partial per thread block in device memory,
// folded after the kernel. Other arguments pass through.
template <typename A>
const A& contributions_on_cuda(Device&, std::size_t, const A& a) {
  return a;
}
template <typename A>
void fold_contributions_on_cuda(Device&, Stream&, const A&) {}
template <typename R, typename Reducer>
DeviceReduceArg<R, Reducer> contributions_on_cuda(Device& device, std::size_t thread_blocks,
                                                  const ReduceBlockArg<R, Reducer>& a);
template <typename R, typename Reducer>
void fold_contributions_on_cuda(Device& device, Stream& stream, const DeviceReduceArg<R, Reducer>& a);

}  // namespace detail

}  // namespace tessera

#if defined(__CUDACC__)
namespace tessera::detail {

template <typename R, typename Reducer>
DeviceReduceArg<R, Reducer> contributions_on_cuda(Device& device, std::size_t thread_blocks,
                                                  const ReduceBlockArg<R, Reducer>& a) {
  const std::size_t count = std::max<std::size_t>(1, thread_blocks);
  R* partials = static_cast<R*>(device.allocate(count * sizeof(R)));
  return DeviceReduceArg<R, Reducer>{partials, count, a.slot, a.reducer};
}

template <typename R, typename Reducer>
void fold_contributions_on_cuda(Device& device, Stream& stream, const DeviceReduceArg<R, Reducer>& a) {
  // The partials as one dense row (a D-dimensional view would pad rows to 64 bytes).
  const Extent<1> all{a.count};
  const TensorBlockArg<R, 1, Contiguous, Access::read> partials{
      reinterpret_cast<std::byte*>(a.partials), make_block_geometry<R, Contiguous>(Box<1>(all), Index<1>{})};
  LaunchShape<1> dense;
  dense.global_size = all;
  dense.block_size = Extent<1>{1};
  reduce_block_on_cuda<R>(device, stream, partials, dense, all, a.reducer, SiteValue{}, a.slot);
  // Freed once the stream has passed the fold (kept for every replay of a captured graph).
  Device* dev = &device;
  const std::size_t bytes = a.count * sizeof(R);
  stream.retain(std::shared_ptr<const void>(
      a.partials, [dev, bytes](const void* p) { dev->deallocate(const_cast<void*>(p), bytes); }));
}

}  // namespace tessera::detail
#endif
