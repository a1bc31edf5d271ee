#pragma once
// Internal: the typed part of a task. Its arguments are stored as built (object arguments as
// slots into the replica pointers the runtime resolves on the chosen device), and its kernel is
// called with them on the host, or launched through the kernel engine: a Group kernel runs on
// the engine's CPU backend (run_groups) or its CUDA backend (launch_groups_on_cuda), the latter
// only where nvcc compiled the file that built the task (Variant).

#include <tessera/exec/detail/cpu_groups.hpp>
#include <tessera/exec/detail/cuda_groups.hpp>
#include <tessera/exec/detail/kernel_launch.hpp>
#include <tessera/exec/group.hpp>
#include <tessera/task/detail/callable_params.hpp>
#include <tessera/task/detail/task_state.hpp>
#include <tessera/task/task_args.hpp>
#include <tessera/task/task_context.hpp>

#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace tessera::detail {

template <class T, Access M>
struct Slot {
  std::uint32_t index;
};

template <class A>
struct stored_arg {
  using type = std::decay_t<A>;
  static constexpr bool is_object = false;
};
template <class T, Access M>
struct stored_arg<ObjectAccess<T, M>> {
  using type = Slot<T, M>;
  using element = T;
  static constexpr Access mode = M;
  static constexpr bool is_object = true;
};

template <class X>
inline constexpr bool is_slot_v = false;
template <class T, Access M>
inline constexpr bool is_slot_v<Slot<T, M>> = true;

// Resolving a stored argument to what the kernel receives. P is the kernel's parameter type
// at that position (used for objects typed at run time).
template <class P, class S>
TESSERA_HOST_DEVICE const S& resolve(const S& s, void* const*) {
  return s;
}
template <class P, class T, Access M>
TESSERA_HOST_DEVICE auto resolve(const Slot<T, M>& s, void* const* ptrs) {
  if constexpr (M == Access::read)
    return static_cast<const T*>(ptrs[s.index]);
  else
    return static_cast<T*>(ptrs[s.index]);
}
template <class P, Access M>
TESSERA_HOST_DEVICE P resolve(const Slot<void, M>& s, void* const* ptrs) {
  return static_cast<P>(ptrs[s.index]);
}

// Checks made while a task is built (task_checks.cpp); each throws tessera::Error.
void check_count(const std::string& task, std::size_t position, const ObjectState& object, std::size_t count);
void check_erased(const std::string& task, std::size_t position, const ObjectState& object, Access mode,
                  const std::type_info& pointee, std::size_t pointee_bytes, bool pointee_const, bool pointee_void,
                  bool is_pointer);
void check_distinct(const std::string& task, const ArgBinding* args, std::size_t n);
void check_grid(const std::string& task, const Grid& grid);

/// Binds one argument: objects into `bindings` (and a slot in the stored tuple), values as they are.
template <class K, std::size_t Offset, std::size_t Position, class A>
auto bind_arg(const std::string& task, A&& a, ArgBinding* bindings, std::uint32_t& next) {
  using D = std::decay_t<A>;
  if constexpr (stored_arg<D>::is_object) {
    const auto& state = a.object;
    check_count(task, Position, *state, a.count);
    using Slotted = typename stored_arg<D>::type;
    constexpr Access mode = stored_arg<D>::mode;
    if constexpr (std::is_void_v<typename stored_arg<D>::element>) {
      static_assert(callable_params<K>::known,
                    "an AnyObject argument needs a kernel with one non-template operator() (not a generic lambda), "
                    "so that its element type can be checked");
      using P = typename param_at<K, Position + Offset>::type;
      using Pointee = std::remove_pointer_t<P>;
      using Bare = std::remove_cv_t<Pointee>;
      constexpr bool is_void = std::is_void_v<Bare>;
      constexpr std::size_t bytes = [] {
        if constexpr (std::is_void_v<Bare>)
          return std::size_t{0};
        else
          return sizeof(Bare);
      }();
      check_erased(task, Position, *state, mode, typeid(std::conditional_t<is_void, char, Bare>), bytes,
                   std::is_const_v<Pointee>, is_void, std::is_pointer_v<P>);
    }
    bindings[next].object = state;
    bindings[next].mode = mode;
    return Slotted{next++};
  } else {
    return D(std::forward<A>(a));
  }
}

/// The payload: a kernel (portable: called per group with a Group; native: called once with a
/// TaskContext) and its stored arguments. Variant is the build_variant of the file that built it.
template <bool Native, class Variant, class K, class... S>
class TaskOf final : public TaskState {
public:
  static constexpr std::size_t num_objects = (std::size_t{0} + ... + (is_slot_v<S> ? 1 : 0));

  template <class KK, class... A>
  TaskOf(std::string label, TaskKind target, KK&& kernel, A&&... a)
      : TaskOf(std::index_sequence_for<A...>{}, std::move(label), target, std::forward<KK>(kernel), std::forward<A>(a)...) {}

  void run_host(const TaskContext& ctx, void* const* p) override {
    if constexpr (Native) {
      call(ctx, p, std::index_sequence_for<S...>{});
    } else {
      struct Closure {
        TaskOf* self;
        void* const* p;
      } c{this, p};
      run_groups(ctx.executor(), grid, shared_bytes, [](void* context, Dim3 id, void* scratch) {
        auto& cl = *static_cast<Closure*>(context);
        const Group g(id, cl.self->grid.groups, cl.self->grid.items, scratch);
        cl.self->call(g, cl.p, std::index_sequence_for<S...>{});
      }, &c);
    }
  }

  void launch_cuda(const TaskContext& ctx, void* const* p) override {
    if constexpr (Native) {
      call(ctx, p, std::index_sequence_for<S...>{});  // the body enqueues on ctx.cuda_stream()
    } else {
      cuda_body<Variant>(ctx.cuda_stream(), ctx.device(), [this] { return "task '" + name + "'"; },
                         [&](auto native) { launch_groups(ctx, p, native, std::index_sequence_for<S...>{}); });
    }
  }

  template <class Front, std::size_t... I>
  void call(const Front& front, void* const* p, std::index_sequence<I...>) const {
    (void)p;  // no object arguments
    kernel_(front, resolve<typename param_at<K, I + 1>::type>(std::get<I>(stored_), p)...);
  }

private:
  template <std::size_t... I, class KK, class... A>
  TaskOf(std::index_sequence<I...>, std::string label, TaskKind target, KK&& kernel, A&&... a)
      : TaskState(std::move(label), target, TaskRole::kernel),
        kernel_(std::forward<KK>(kernel)),
        // Braced initialisation evaluates in order, so slots number the objects in argument order.
        stored_{bind_arg<K, 1, I>(this->name, std::forward<A>(a), bindings_.data(), next_slot_)...} {
    args = bindings_.data();
    ptrs = ptr_storage_.data();
    num_args = num_objects;
    check_distinct(this->name, bindings_.data(), num_objects);
  }

  template <std::size_t... I>
  void launch_groups(const TaskContext& ctx, void* const* p, void* native, std::index_sequence<I...>) {
    launch_groups_on_cuda(native, ctx.device(), "task '" + name + "'", grid, shared_bytes, kernel_,
                          resolve<typename param_at<K, I + 1>::type>(std::get<I>(stored_), p)...);
  }

  std::array<ArgBinding, num_objects> bindings_{};
  std::array<void*, num_objects> ptr_storage_{};
  std::uint32_t next_slot_ = 0;
  K kernel_;
  std::tuple<S...> stored_;
};

}  // namespace tessera::detail
