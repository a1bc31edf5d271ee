#pragma once
// Graph: the static-graph front end of Ripple §5.3–5.4. Operations are added level by level
// (emplace joins the current level, then starts a new one); an operation on tensors is split
// into one node per tensor block, and a block's node waits only for the previous level's nodes
// of the same block (and for non-tensor nodes), so blocks on different devices run as soon as
// their own data is ready; nodes of one level whose declared accesses conflict (two writers of a
// block) run in the order added (the data layer's AccessOrder). Padded-access modifiers add
// halo-transfer nodes. The graph is built
// once and run many times; it lowers to NodeGraphs run by the Executor.
//
//   tessera::Graph step("euler step");
//   step.split(set_wavespeeds, in, wavespeeds)
//       .then_reduce(wavespeeds, max_speed, tessera::Max{})
//       .then(set_dt, std::ref(max_speed))
//       .then_split(update_x, tessera::concurrent_padded_access(in), out, std::cref(dt))
//       .then_split(update_y, tessera::concurrent_padded_access(out), in, std::cref(dt));
//   step.run_n(executor, 100).get();
//
// Kernel arguments are as for tessera::for_each; a std::reference_wrapper argument
// (std::cref(dt)) is read each time the node runs and handed to the kernel by value; a
// reduce_into(result, reducer) argument adds a final node that combines the blocks' partials.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/core/host_device.hpp"
#include "tessera/core/ranks.hpp"
#include "tessera/exec/exec_options.hpp"
#include "tessera/exec/for_each.hpp"
#include "tessera/exec/reduction.hpp"
#include "tessera/exec/tensor_concept.hpp"
#include "tessera/graph/detail/graph_args.hpp"
#include "tessera/graph/detail/partial_slots.hpp"
#include "tessera/graph/padded_access.hpp"
#include "tessera/sched/executor.hpp"
#include "tessera/sched/node_graph.hpp"

namespace tessera {

namespace detail {
struct GraphStage;
/// A node of a Graph with the tensor blocks it touches (none: not a tensor node; two for a
/// halo transfer) and which partitioning the block numbers refer to: block nodes of
/// operations over differently cut tensors do not match block by block.
struct GraphEntry {
  Node* node;
  std::vector<std::size_t> blocks;
  std::size_t partitioning;
};
/// A message completion that finishes an asynchronous node: successfully, or with the error.
inline Ranks::Done finish_async(AsyncDone done) {
  return [done](std::exception_ptr error) {
    if (error)
      done.fail(error);
    else
      done.complete();
  };
}
}  // namespace detail

/// A callable with its arguments, to be added to a Graph beside others in one call.
///
///   g.emplace(tessera::make_node(load, "a.dat"), tessera::make_node(load, "b.dat"));
struct GraphNodeSpec {
  std::function<void()> work;
};
template <class F, class... Args>
GraphNodeSpec make_node(F&& f, Args&&... args) {
  return GraphNodeSpec{[f = std::forward<F>(f), ... a = std::forward<Args>(args)]() mutable { std::invoke(f, a...); }};
}

/// What a node of a Graph is for (DOT export and tests tell them apart by it).
enum class GraphNodeRole : std::uint8_t { plain, split, halo, reduce_partial, reduce_final, sync };

class Graph {
 public:
  /// A graph whose tensor operations run each block where it lives.
  explicit Graph(std::string name = "graph");
  /// A graph whose tensor operations run on `kind` by default: ExecKind::cpu moves device
  /// blocks to the host's workers; ExecKind::gpu requires every block to be on a device.
  explicit Graph(ExecKind kind, std::string name = "graph");
  /// Waits for runs still in flight.
  ~Graph();
  // Nodes refer to the graph's run context: a graph stays where it was built.
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const noexcept { return name_; }

  // -- operations on non-tensor data ------------------------------------------------------------

  /// Adds `f(args...)` to the current level: it runs after the previous level.
  template <class F, class... Args>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Graph> && !std::is_same_v<std::remove_cvref_t<F>, GraphNodeSpec>)
  Graph& emplace(F&& f, Args&&... args) {
    begin_operation(false, "emplace");
    add_plain(stage_graph().emplace(std::forward<F>(f), std::forward<Args>(args)...), GraphNodeRole::plain);
    return *this;
  }
  /// Adds `f(args...)` as a new level: it runs after every node of the current level.
  template <class F, class... Args>
    requires(!std::is_same_v<std::remove_cvref_t<F>, Graph> && !std::is_same_v<std::remove_cvref_t<F>, GraphNodeSpec>)
  Graph& then(F&& f, Args&&... args) {
    begin_operation(true, "then");
    add_plain(stage_graph().emplace(std::forward<F>(f), std::forward<Args>(args)...), GraphNodeRole::plain);
    return *this;
  }
  /// Adds several nodes made with make_node to the current level, or (then) as a new level.
  template <class... Specs>
    requires(sizeof...(Specs) > 0 && (std::is_same_v<std::remove_cvref_t<Specs>, GraphNodeSpec> && ...))
  Graph& emplace(Specs&&... specs) {
    begin_operation(false, "emplace");
    (add_plain(stage_graph().emplace(std::move(specs.work)), GraphNodeRole::plain), ...);
    return *this;
  }
  template <class... Specs>
    requires(sizeof...(Specs) > 0 && (std::is_same_v<std::remove_cvref_t<Specs>, GraphNodeSpec> && ...))
  Graph& then(Specs&&... specs) {
    begin_operation(true, "then");
    (add_plain(stage_graph().emplace(std::move(specs.work)), GraphNodeRole::plain), ...);
    return *this;
  }
  /// Adds `sub`'s nodes beside the current level (a conditional subgraph cannot run beside
  /// others: use then). `sub` is left empty.
  Graph& emplace(Graph& sub);
  /// Adds `sub` after the current level, block nodes joined to the same blocks' nodes. A
  /// conditional `sub` runs its loop there. `sub` is left empty.
  Graph& then(Graph& sub);
  /// Adds `f(args...)` after everything added so far has finished (not just the last level).
  template <class F, class... Args>
  Graph& sync(F&& f, Args&&... args) {
    begin_sync();
    add_plain(stage_graph().emplace(std::forward<F>(f), std::forward<Args>(args)...), GraphNodeRole::sync);
    return *this;
  }
  Graph& sync() {
    return sync([] {});
  }

  // -- operations on tensors -----------------------------------------------------------------------

  /// One node per block running `kernel` over the tensor arguments (as for_each does), in the
  /// current level. Leading ExecKind or ExecOptions arguments override the graph's defaults.
  template <class... A, class Variant = detail::build_variant>
  Graph& split(A&&... a) {
    return add_split(false, std::forward<A>(a)...);
  }
  /// As split, as a new level: block b's node waits for block b's nodes of the current level
  /// (and its non-tensor nodes), not for other blocks'.
  template <class... A, class Variant = detail::build_variant>
  Graph& then_split(A&&... a) {
    return add_split(true, std::forward<A>(a)...);
  }
  /// Per-block partial reductions of `map(it)` with `reducer`, each starting as soon as its
  /// block is ready, and a final node that combines them in block order into `result` and
  /// marks it complete (Ripple figure 4), in the current level.
  template <TensorLike Tn, class R, class Reducer, class Map = detail::SiteValue,
            class Variant = detail::build_variant>
  Graph& reduce(Tn& tensor, ReductionResult<R>& result, const Reducer& reducer, const Map& map = {}) {
    return add_reduce(false, tensor, result, reducer, map);
  }
  /// As reduce, as a new level.
  template <TensorLike Tn, class R, class Reducer, class Map = detail::SiteValue,
            class Variant = detail::build_variant>
  Graph& then_reduce(Tn& tensor, ReductionResult<R>& result, const Reducer& reducer, const Map& map = {}) {
    return add_reduce(true, tensor, result, reducer, map);
  }

  // -- control ---------------------------------------------------------------------------------------

  /// Makes everything added so far run again, after each pass, while `keep_running()` is true
  /// (checked after a pass, so the pass runs at least once). Later operations run once the
  /// loop is over. Throws tessera::Error when nothing was added yet.
  Graph& conditional(std::function<bool()> keep_running);
  /// Names the nodes of the last operation: `name`, with " [b<k>]" for block k's node and
  /// " halo <s>-><d>" for a halo transfer.
  Graph& named(std::string name);

  /// The first node with this name (in any pass), or nullptr. Edges may be added to it with
  /// Node::precede; a cycle made so is reported when the graph runs.
  Node* find(std::string_view node_name) const noexcept;
  /// Nodes in all passes.
  std::size_t size() const noexcept;
  /// Nodes with this role.
  std::size_t count(GraphNodeRole role) const noexcept;
  GraphNodeRole role_of(const Node& node) const;
  /// Passes: groups of nodes run one after the other (a conditional ends one).
  std::size_t num_passes() const noexcept;
  NodeGraph& pass(std::size_t i) const;

  // -- running ---------------------------------------------------------------------------------------

  /// Captures each pass's device part and replays it (NodeGraph::capture): from the second run
  /// after the graph last changed, kernels and device copies run from a recording (CUDA: one
  /// CUDA graph per part), while host nodes, host-staged halo copies, reductions' finals on the
  /// host and conditionals still run every time. A promise that kernels are launched with the same
  /// arguments every run; call recapture() after changing them.
  Graph& capture(bool on = true);
  bool captures() const noexcept { return capture_; }
  /// The next run records each pass's device part again (NodeGraph::recapture).
  void recapture();

  /// Runs the graph once on `executor`; the future rethrows a node's or predicate's exception.
  /// A graph over tensors spread over ranks is the exception: the other ranks wait for this
  /// one's messages, so a node that throws ends every rank (Ranks::fail, with the error).
  std::future<void> run(Executor& executor);
  /// Runs the graph n times in a row.
  std::future<void> run_n(Executor& executor, std::size_t n);
  /// Runs the graph until `stop()` is true (checked before every run).
  std::future<void> run_until(Executor& executor, std::function<bool()> stop);

  /// Graphviz DOT: one cluster per pass; block nodes as boxes labelled with their block,
  /// halo transfers dashed, reduction finals as diamonds, conditional passes labelled.
  void dump_dot(std::ostream& out) const;
  std::string to_dot() const;

 private:
  using Entry = detail::GraphEntry;

  // Each template that reaches a kernel launch carries detail::build_variant (core/host_device.hpp).
  template <class First, class... Rest, class Variant = detail::build_variant>
  Graph& add_split(bool new_level, First&& first, Rest&&... rest) {
    using F0 = std::remove_cvref_t<First>;
    if constexpr (std::is_same_v<F0, ExecKind>) {
      ExecOptions o;
      o.kind = first;
      return add_kernel(new_level, o, std::forward<Rest>(rest)...);
    } else if constexpr (std::is_same_v<F0, ExecOptions>) {
      ExecOptions o = first;
      if (!o.kind) o.kind = default_kind_;
      return add_kernel(new_level, o, std::forward<Rest>(rest)...);
    } else {
      ExecOptions o;
      o.kind = default_kind_;
      return add_kernel(new_level, o, std::forward<First>(first), std::forward<Rest>(rest)...);
    }
  }

  template <class F, class... A, class Variant = detail::build_variant>
  Graph& add_kernel(bool new_level, const ExecOptions& options, F&& kernel, A&&... args) {
    static_assert((detail::is_graph_tensor_argument<A>() || ...),
                  "Graph::split needs at least one tensor argument to split over");
    constexpr const char* what = "Graph::split";
    auto stored = std::make_tuple(detail::store_graph_arg(std::forward<A>(args))...);
    const std::size_t blocks = std::apply(
        [&](auto&... s) { return detail::check_kernel_arguments(what, options, detail::launch_view(s)...); }, stored);
    auto& first = std::apply([](auto&... s) -> decltype(auto) { return detail::first_tensor(detail::launch_view(s)...); },
                             stored);
    const std::size_t key = detail::partitioning_key(first);
    static_assert(detail::count_reduce_into<A...>() <= 1, "Graph::split takes at most one reduce_into argument");
    // A reduction's slots pinned where a device holds a block, so its totals arrive in stream order.
    Device* pinned_from = nullptr;
    for (std::size_t b = 0; b < blocks && pinned_from == nullptr; ++b)
      if (first.space(b) != 0) pinned_from = &first.memory().device(first.space(b));
    bool one_process = true;
    if constexpr (requires { first.ranks(); }) one_process = first.ranks() == nullptr;
    auto size_partials = [blocks, pinned_from, one_process](auto& s) {
      if constexpr (detail::is_stored_reduction<std::remove_cvref_t<decltype(s)>>::value)
        s.size_partials(blocks, pinned_from, one_process);
    };
    std::apply([&](auto&... s) { (size_partials(s), ...); }, stored);
    begin_operation(new_level, "split");

    // Halo transfers of padded arguments, and the blocks each one reads (source) and writes.
    std::vector<std::vector<Node*>> into(blocks), out_of(blocks);
    auto add_halos = [&](auto& s) {
      if constexpr (detail::is_stored_padded<std::remove_cvref_t<decltype(s)>>::value) {
        using Stored = std::remove_cvref_t<decltype(s)>;
        auto& t = s.tensor();
        check_padded(t.name(), t.padding(), "padded access");
        // Copies staged through the host take host holds on both blocks, and a writing hold
        // needs its rows alone (two transfers into one block may share corner rows): they run
        // one after another, and before the source's kernel. On a distributed tensor the packs
        // of messages to other ranks come first and the unpacks of theirs last, so no rank's
        // sends wait for another rank's. A copy on the devices and a host hold on the same block
        // must not overlap either (the memory layer refuses a device access to rows the host
        // holds): the later of the two waits for the earlier.
        Node* staged = nullptr;
        std::vector<std::vector<Node*>> host_holds(blocks), device_copies(blocks);
        auto chain = [&](Node& n, const std::vector<std::size_t>& touched) {
          if (staged != nullptr) staged->precede(n);
          staged = &n;
          for (std::size_t b : touched) {
            for (Node* d : device_copies[b]) d->precede_once(n);
            host_holds[b].push_back(&n);
          }
        };
        auto on_devices = [&](Node& n, const std::vector<std::size_t>& touched) {
          for (std::size_t b : touched) {
            for (Node* h : host_holds[b]) h->precede_once(n);
            device_copies[b].push_back(&n);
          }
        };
        // One channel for this operation's messages of this tensor, both ways.
        std::uint64_t channel = 0;
        const StencilShape stencil = s.stencil;
        if constexpr (requires { t.halo_sends(stencil); })
          if (t.ranks() != nullptr) add_rank_sends(t, stencil, key, channel = t.ranks()->next_channel(), out_of, chain);
        for (const auto& h : t.halo_transfers(stencil)) {
          Node& n = stage_graph().emplace([t = &t, h] { t->transfer(h); });
          Entry e{&n, {h.source, h.destination}, key};
          connect(e);
          record(e, GraphNodeRole::halo, " halo " + std::to_string(h.source) + "->" + std::to_string(h.destination));
          into[h.destination].push_back(&n);
          const bool through_host = !t.copies_on_devices(h);
          // A concurrent kernel only reads its block (staged or not); an exclusive one writes it.
          if (Stored::mode == PaddedAccess::exclusive || through_host)
            out_of[h.source].push_back(&n);
          if (through_host)
            chain(n, {h.source, h.destination});
          else
            on_devices(n, {h.source, h.destination});
        }
        if constexpr (requires { t.halo_recvs(stencil); })
          if (t.ranks() != nullptr) add_rank_receives(t, stencil, key, channel, into, chain);
      }
    };
    std::apply([&](auto&... s) { (add_halos(s), ...); }, stored);

    auto context = context_;
    std::vector<Node*> parts;
    for (std::size_t b = 0; b < blocks; ++b) {
      Node* node;
      if (detail::runs_on_device(first, b, options)) {
        node = &stage_graph().emplace_on(detail::block_stream(first, b),
                                         [options, b, kernel, stored](Stream&) mutable {
                                           std::apply(
                                               [&](auto&... s) {
                                                 (detail::reset_result(s), ...);
                                                 detail::launch_block(nullptr, options, b, kernel,
                                                                      detail::launch_arg(s)...);
                                               },
                                               stored);
                                         });
      } else {
        node = &stage_graph().emplace([context, options, b, kernel, stored]() mutable {
          Executor* ex = detail::run_executor(*context);
          std::apply(
              [&](auto&... s) {
                (detail::reset_result(s), ...);
                detail::launch_block(ex, options, b, kernel, detail::launch_arg(s)...);
              },
              stored);
        });
      }
      Entry e{node, {b}, key};
      connect(e);
      for (Node* h : into[b]) h->precede(*node);
      for (Node* h : out_of[b]) h->precede(*node);
      std::apply([&](auto&... s) { (declare_block_access(*node, b, detail::launch_view(s)), ...); }, stored);
      record(e, GraphNodeRole::split, " [b" + std::to_string(b) + "]");
      parts.push_back(node);
    }
    // A reduce_into: the blocks' partials combined, as a reduce's are.
    auto add_final = [&](auto& s) {
      using S = std::remove_cvref_t<decltype(s)>;
      if constexpr (detail::is_stored_tensor_reduction<S>::value) {
        if (s.partials == nullptr) return;  // the block wrote the tensor
        auto* target = s.tensor;
        Node& final_node =
            folds_on_device(first, *target, *s.partials, options)
                ? add_device_reduce_final<Variant>(*target, s.partials, s.reducer, parts)
                : add_reduce_final(
                      first, s.partials,
                      [target](const typename S::value_type& total) { detail::write_total(*target, total); }, s.reducer,
                      parts);
        declare_access(final_node, target->buffer(0), Access::read_write);
      } else if constexpr (detail::is_stored_reduction<S>::value) {
        auto* result = s.result;
        add_reduce_final(
            first, s.partials, [result](const auto& total) { result->set(total); }, s.reducer, parts);
      }
    };
    std::apply([&](auto&... s) { (add_final(s), ...); }, stored);
    return *this;
  }

  template <TensorLike Tn, class R, class Reducer, class Map, class Variant = detail::build_variant>
  Graph& add_reduce(bool new_level, Tn& tensor, ReductionResult<R>& result, const Reducer& reducer, const Map& map) {
    const std::size_t blocks = tensor.num_blocks();
    const std::size_t key = detail::partitioning_key(tensor);
    begin_operation(new_level, "reduce");
    // Pinned where a device holds a block, so its total arrives in stream order.
    Device* pinned_from = nullptr;
    for (std::size_t b = 0; b < blocks && pinned_from == nullptr; ++b)
      if (tensor.space(b) != 0 && default_kind_ != ExecKind::cpu)
        pinned_from = &tensor.memory().device(tensor.space(b));
    auto partials = std::make_shared<detail::PartialSlots<R>>(blocks, Reducer::template identity<R>(), pinned_from);
    keep_alive(partials);
    auto context = context_;
    std::vector<Node*> parts;
    for (std::size_t b = 0; b < blocks; ++b) {
      R* slot = &(*partials)[b];
      Node* node;
      if (tensor.space(b) != 0 && default_kind_ != ExecKind::cpu) {
        Device& device = tensor.memory().device(tensor.space(b));
        node = &stage_graph().emplace_on(device.block_stream(b),
                                         [&tensor, &result, b, reducer, map, slot](Stream&) {
                                           result.reset();
                                           detail::reduce_block<R>(nullptr, tensor, b, reducer, map, slot);
                                         });
      } else {
        node = &stage_graph().emplace([context, &tensor, &result, b, reducer, map, slot] {
          result.reset();
          detail::reduce_block<R>(detail::run_executor(*context), tensor, b, reducer, map, slot, true);
        });
      }
      Entry e{node, {b}, key};
      connect(e);
      declare_access(*node, tensor.buffer(b), Access::read);
      record(e, GraphNodeRole::reduce_partial, " [b" + std::to_string(b) + "]");
      parts.push_back(node);
    }
    add_reduce_final(
        tensor, partials, [&result](const R& total) { result.set(total); }, reducer, parts);
    return *this;
  }

  // The node that combines a reduction's per-block partials (made by `parts`) in block order,
  // across ranks for a distributed tensor, and hands the total to `deliver` (which sets a
  // ReductionResult complete, or writes a tensor's site).
  template <class Tn, class Partials, class Deliver, class Reducer>
  Node& add_reduce_final(Tn& tensor, std::shared_ptr<Partials> partials, Deliver deliver, const Reducer& reducer,
                         const std::vector<Node*>& parts) {
    using R = std::remove_cvref_t<decltype(*partials->begin())>;
    Node* final_ptr = nullptr;
    if constexpr (requires { tensor.ranks(); }) {
      if (tensor.ranks() != nullptr) final_ptr = &add_rank_reduce_final<R>(*tensor.ranks(), partials, deliver, reducer);
    }
    if (final_ptr == nullptr)
      final_ptr = &stage_graph().emplace([partials, deliver, reducer] {
        deliver(detail::fold_in_order(partials->data(), partials->size(), reducer));
      });
    return add_final_after(*final_ptr, parts);
  }
  // A reduction's final node, after its parts.
  Node& add_final_after(Node& final_node, const std::vector<Node*>& parts) {
    for (Node* p : parts) p->precede(final_node);
    record(Entry{&final_node, {}, 0}, GraphNodeRole::reduce_final, " final");
    return final_node;
  }

  // Whether a reduce_into(tensor)'s partials are combined by a node on the tensor's device, in
  // stream order, instead of on the host: in one process, where the tensor's block is on a
  // device and the kernel runs there, and the device can read the partials (a simulated
  // device reads any host memory, a GPU pinned memory only).
  template <class First, class Tn, class Partials>
  static bool folds_on_device(First& first, Tn& target, const Partials& partials, const ExecOptions& options) {
    if constexpr (requires { first.ranks(); })
      if (first.ranks() != nullptr) return false;
    if (!detail::runs_on_device(target, 0, options)) return false;
    return partials.pinned() || detail::block_stream(target, 0).native_handle() == nullptr;
  }
  // The final node of a reduce_into(tensor) that folds on the tensor's device (folds_on_device):
  // the device waits for the blocks' partials, folds them in block order and writes the site.
  template <class Variant, class Tn, class Partials, class Reducer>
  Node& add_device_reduce_final(Tn& target, std::shared_ptr<Partials> partials, const Reducer& reducer,
                                const std::vector<Node*>& parts) {
    return add_final_after(
        stage_graph().emplace_on(detail::block_stream(target, 0),
                                 [&target, partials, reducer](Stream& stream) {
                                   detail::combine_into_site<Variant>(stream, target, partials->data(),
                                                                      partials->size(), reducer);
                                 }),
        parts);
  }

  // Distributed tensors: per neighbouring rank, a node packing the halo into a message and an
  // asynchronous send; an asynchronous receive (posted when the pass starts) and a node
  // unpacking it into the padding, which the destination blocks' kernels wait for.
  template <class Tn, class Chain>
  void add_rank_sends(Tn& t, StencilShape stencil, std::size_t key, std::uint64_t channel,
                      std::vector<std::vector<Node*>>& out_of, Chain& chain) {
    Ranks* ranks = ranks_ = t.ranks();
    for (std::size_t k = 0; k < t.halo_sends(stencil).size(); ++k) {
      const auto& h = t.halo_sends(stencil)[k];
      auto bytes = std::make_shared<std::vector<std::byte>>(h.sites * sizeof(typename Tn::value_type));
      keep_alive(bytes);
      const std::vector<std::size_t> blocks = rank_halo_blocks(h);
      Node& pack = stage_graph().emplace(
          [t = &t, stencil, k, out = bytes->data()] { t->pack_halo(t->halo_sends(stencil)[k], out); });
      Entry e{&pack, blocks, key};
      connect(e);
      record(e, GraphNodeRole::halo, " pack for rank " + std::to_string(h.peer));
      chain(pack, blocks);
      for (std::size_t b : blocks) out_of[b].push_back(&pack);
      Node& send = stage_graph().emplace_async([ranks, bytes, peer = h.peer, channel](AsyncDone done) {
        ranks->post_send(bytes->data(), bytes->size(), peer, channel, detail::finish_async(done));
      });
      pack.precede(send);
      record(Entry{&send, blocks, key}, GraphNodeRole::halo, " send to rank " + std::to_string(h.peer));
    }
  }
  template <class Tn, class Chain>
  void add_rank_receives(Tn& t, StencilShape stencil, std::size_t key, std::uint64_t channel,
                         std::vector<std::vector<Node*>>& into, Chain& chain) {
    Ranks* ranks = ranks_ = t.ranks();
    for (std::size_t k = 0; k < t.halo_recvs(stencil).size(); ++k) {
      const auto& h = t.halo_recvs(stencil)[k];
      auto bytes = std::make_shared<std::vector<std::byte>>(h.sites * sizeof(typename Tn::value_type));
      keep_alive(bytes);
      const std::vector<std::size_t> blocks = rank_halo_blocks(h);
      Node& receive = stage_graph().emplace_async([ranks, bytes, peer = h.peer, channel](AsyncDone done) {
        ranks->post_recv(bytes->data(), bytes->size(), peer, channel, detail::finish_async(done));
      });
      record(Entry{&receive, blocks, key}, GraphNodeRole::halo, " receive from rank " + std::to_string(h.peer));
      Node& unpack = stage_graph().emplace(
          [t = &t, stencil, k, in = bytes->data()] { t->unpack_halo(t->halo_recvs(stencil)[k], in); });
      Entry e{&unpack, blocks, key};
      connect(e);
      receive.precede(unpack);
      record(e, GraphNodeRole::halo, " unpack from rank " + std::to_string(h.peer));
      chain(unpack, blocks);
      for (std::size_t b : blocks) into[b].push_back(&unpack);
    }
  }
  template <class H>
  static std::vector<std::size_t> rank_halo_blocks(const H& h) {
    std::vector<std::size_t> blocks;
    for (const auto& box : h.boxes)
      if (std::find(blocks.begin(), blocks.end(), box.first) == blocks.end()) blocks.push_back(box.first);
    return blocks;
  }
  // The final node of a reduction over a distributed tensor: this rank's blocks combined in
  // order, every rank's totals gathered, and combined in rank order, the same on every rank.
  template <class R, class Partials, class Deliver, class Reducer>
  Node& add_rank_reduce_final(Ranks& ranks, std::shared_ptr<Partials> partials, Deliver deliver,
                              const Reducer& reducer) {
    static_assert(std::is_trivially_copyable_v<R>, "a reduction over ranks sends its value as bytes");
    struct Totals {
      R mine;
      std::vector<R> all;
    };
    ranks_ = &ranks;
    auto totals = std::make_shared<Totals>(
        Totals{Reducer::template identity<R>(), std::vector<R>(static_cast<std::size_t>(ranks.size()))});
    keep_alive(totals);
    const std::uint64_t channel = ranks.next_channel();
    return stage_graph().emplace_async([&ranks, partials, totals, deliver, reducer, channel](AsyncDone done) {
      totals->mine = detail::fold_in_order(partials->data(), partials->size(), reducer);
      post_all_gather(ranks, channel, &totals->mine, sizeof(R), totals->all.data(),
                      [totals, deliver, reducer, done](std::exception_ptr error) {
                        if (error) return done.fail(error);
                        const R total = detail::fold_in_order(totals->all.data(), totals->all.size(), reducer);
                        try {
                          deliver(total);
                        } catch (...) {
                          return done.fail(std::current_exception());
                        }
                        done.complete();
                      });
    });
  }

  NodeGraph& stage_graph();
  detail::GraphStage& stage();
  void begin_operation(bool new_level, const char* what);
  void begin_sync();
  void add_plain(Node& node, GraphNodeRole role);
  /// Adds edges from the previous level's nodes that `e` depends on.
  void connect(const Entry& e);
  /// Declares that `node` accesses `buffer` in `mode`, and adds edges from the nodes of this
  /// pass it must follow (the data layer's AccessOrder): conflicting nodes of one level run in
  /// the order they were added, readers of one block together.
  void declare_access(Node& node, const Buffer& buffer, Access mode);
  template <typename V>
  void declare_block_access(Node& node, std::size_t b, V& view) {
    if constexpr (detail::is_tensor_argument<V>())
      declare_access(node, detail::tensor_of(view).buffer(b), detail::access_of<V>());
    else if constexpr (detail::is_uniform<std::remove_cvref_t<V>>::value)
      declare_access(node, view.tensor.buffer(0), Access::read);
    else if constexpr (detail::is_tensor_reduction_slots<std::remove_cvref_t<V>>::value)
      if (view.slots == nullptr) declare_access(node, view.tensor->buffer(0), Access::read_write);
  }
  /// Puts `e` in the current level, with its role and default name (operation + suffix).
  void record(const Entry& e, GraphNodeRole role, std::string suffix);
  void keep_alive(std::shared_ptr<void> p);
  void check_padded(const std::string& tensor, const std::vector<std::int64_t>& padding, const char* what) const;
  template <std::size_t D>
  void check_padded(const std::string& tensor, const Index<D>& padding, const char* what) const {
    check_padded(tensor, std::vector<std::int64_t>(padding.coords, padding.coords + D), what);
  }
  void join(Graph& sub, bool new_level);
  bool single_pass() const noexcept;
  void run_passes(Executor& executor);
  void run_exchanging(Executor& executor);
  std::future<void> start(Executor& executor, std::function<void()> driver);

  std::string name_;
  std::optional<ExecKind> default_kind_;
  std::shared_ptr<detail::GraphRunContext> context_;
  std::vector<std::unique_ptr<detail::GraphStage>> stages_;
  std::size_t operations_ = 0;
  std::string operation_name_;
  std::vector<std::pair<Node*, std::string>> last_operation_;
  std::vector<std::shared_ptr<void>> kept_;
  // The ranks this graph exchanges messages with (null: none): a failed run must end them too.
  Ranks* ranks_ = nullptr;
  bool capture_ = false;
  /// Hands capture_ to every pass (passes are made as operations are added).
  void apply_capture();
  std::shared_ptr<std::atomic<int>> in_flight_;
};

}  // namespace tessera
