#pragma once
// Task and TaskHandle: a kernel, its arguments with access modes, the processing elements it
// wants and the kind of device it targets (PREMA §3.1.2); and the handle to query or wait on.

#include <tessera/exec/grid.hpp>
#include <tessera/task/detail/task_payload.hpp>
#include <tessera/task/hetero_object.hpp>
#include <tessera/task/task_args.hpp>
#include <tessera/task/task_error.hpp>
#include <tessera/task/task_kind.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

namespace tessera {

class Device;

/// A submitted task (or one about to be): query it, wait for it, get its failure.
///
///   tessera::TaskHandle h = rt.submit(task);
///   if (!h.wait_for(std::chrono::seconds(5))) std::puts("still running");
///   h.get();  // rethrows a tessera::TaskError if the task (or one it depends on) failed
class TaskHandle {
public:
  TaskHandle() = default;
  TaskHandle(const TaskHandle& o) noexcept : state_(o.state_) {
    if (state_ != nullptr) state_->retain();
  }
  TaskHandle(TaskHandle&& o) noexcept : state_(std::exchange(o.state_, nullptr)) {}
  TaskHandle& operator=(TaskHandle o) noexcept {
    std::swap(state_, o.state_);
    return *this;
  }
  ~TaskHandle() {
    if (state_ != nullptr) state_->release();
  }

  /// Whether it has finished, successfully or not.
  bool done() const;
  /// Whether it finished with a failure (its own, or one inherited from a dependency).
  bool failed() const;
  /// Blocks until it has finished; never throws for the task's own failure.
  void wait() const;
  /// Waits at most `timeout`; true when it has finished.
  bool wait_for(std::chrono::nanoseconds timeout) const;
  /// Waits, then rethrows its failure as a tessera::TaskError.
  void get() const;
  /// The device it ran on (the host for CPU tasks). Throws tessera::Error before it has run.
  Device& device() const;
  const std::string& name() const;

  /// Internal: the state behind the handle.
  detail::TaskState* state() const noexcept { return state_; }
  /// Internal: adopts one reference.
  explicit TaskHandle(detail::TaskState* adopted) noexcept : state_(adopted) {}

protected:
  detail::TaskState& checked() const;
  detail::TaskState* state_ = nullptr;
};

/// A task not yet submitted (and, once submitted, its own handle). Build one with
/// tessera::native_task or tessera::kernel_task.
///
///   auto a = tessera::native_task("produce", tessera::TaskKind::cpu, produce, tessera::write(x));
///   auto b = tessera::native_task("log", tessera::TaskKind::cpu, log_done);
///   b.add_dependency(a);   // explicit; dependencies through x are inferred
///   rt.submit(a);
///   rt.submit(b);
class Task : public TaskHandle {
public:
  Task() = default;
  explicit Task(detail::TaskState* adopted) noexcept : TaskHandle(adopted) {}

  /// This task starts only after `before` has finished (and fails if it failed). Throws
  /// tessera::Error after submission, for an empty task, or for the task itself.
  Task& add_dependency(const Task& before);
  /// Bytes of scratch shared by the items of a group (Group::shared), for the kernel's duration.
  Task& shared_bytes(std::size_t bytes);
  /// How long the kernel is expected to take, for schedulers that balance work.
  Task& estimate(std::chrono::nanoseconds expected);
};

/// A task whose body is called once: `body(const TaskContext&, args...)`, object arguments
/// passed as `const T*` (read) or `T*` (write, read_write) on the chosen device, other
/// arguments by value. On a CUDA device the body enqueues its work on `ctx.cuda_stream()`.
///
///   auto t = tessera::native_task("axpy", tessera::TaskKind::cpu,
///       [](const tessera::TaskContext&, const double* x, double* y, double a, std::size_t n) {
///         for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
///       }, tessera::read(x), tessera::read_write(y), 2.0, n);
template <class Body, class... Args>
Task native_task(std::string name, TaskKind kind, Body&& body, Args&&... args) {
  using Payload = detail::TaskOf<true, detail::build_variant, std::decay_t<Body>,
                                 typename detail::stored_arg<std::decay_t<Args>>::type...>;
  return Task(new Payload(std::move(name), kind, std::forward<Body>(body), std::forward<Args>(args)...));
}

/// A portable kernel over a grid: `kernel(const Group&, args...)` runs once per group, on the
/// host's workers for TaskKind::cpu, on a GPU (when the calling file was compiled with nvcc) or
/// a sim device for TaskKind::gpu. Arguments as for native_task. Throws tessera::Error for an
/// empty grid.
///
///   struct Scale {
///     TESSERA_HOST_DEVICE void operator()(const tessera::Group& g, double* x, double a) const {
///       g.items([&](const tessera::Item& it) { x[it.global.x] *= a; });
///     }
///   };
///   auto t = tessera::kernel_task("scale", tessera::TaskKind::gpu, tessera::Grid{{n / 128}, {128}}, Scale{},
///                                 tessera::read_write(x), 2.0);
template <class Kernel, class... Args, class Variant = detail::build_variant>
Task kernel_task(std::string name, TaskKind kind, const Grid& grid, Kernel&& kernel, Args&&... args) {
  using Payload = detail::TaskOf<false, Variant, std::decay_t<Kernel>, typename detail::stored_arg<std::decay_t<Args>>::type...>;
  detail::check_grid(name, grid);
  auto* p = new Payload(std::move(name), kind, std::forward<Kernel>(kernel), std::forward<Args>(args)...);
  p->grid = grid;
  return Task(p);
}

template <class T>
TaskHandle HeteroObject<T>::copy_to(T* destination) {
  return copy_out(destination);
}

template <class T>
TaskHandle HeteroObject<T>::copy_from(const T* source, TaskKind where) {
  return copy_in(source, where == TaskKind::gpu);
}

}  // namespace tessera
