// What is checked when a task is built, with messages that say which argument was wrong; and
// the host's loop over a kernel's groups.
#include <tessera/core/error.hpp>
#include <tessera/sched/executor.hpp>
#include <tessera/task/detail/task_payload.hpp>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <vector>

namespace tessera::detail {

namespace {

std::string type_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && p ? std::string(p.get()) : std::string(t.name());
}

std::string arg_name(const std::string& task, std::size_t position, const ObjectState& o) {
  return "task '" + task + "': argument " + std::to_string(position) + " (object '" + o.buffer.name() + "', " +
         std::to_string(o.count) + " elements of " + type_name(o.type) + ")";
}

}  // namespace

void check_count(const std::string& task, std::size_t position, const ObjectState& o, std::size_t count) {
  if (count <= o.count) return;
  throw Error(arg_name(task, position, o) + " is smaller than the " + std::to_string(count) +
              " elements the task says it touches; pass a larger object, or a smaller count");
}

void check_erased(const std::string& task, std::size_t position, const ObjectState& o, Access mode,
                  const std::type_info& pointee, std::size_t pointee_bytes, bool pointee_const, bool pointee_void,
                  bool is_pointer) {
  const std::string param = "the kernel's parameter for it";
  if (!is_pointer)
    throw Error(arg_name(task, position, o) + ": " + param + " is not a pointer; an object argument is passed as T* or const T*");
  if (!pointee_void && pointee != o.type)
    throw Error(arg_name(task, position, o) + ": " + param + " points to " + type_name(pointee) +
                "; the element types must match");
  if (!pointee_void && pointee_bytes != o.element_bytes)
    throw Error(arg_name(task, position, o) + ": elements of " + std::to_string(o.element_bytes) + " bytes, but " + param +
                " points to elements of " + std::to_string(pointee_bytes) + " bytes");
  if (access_writes(mode) && pointee_const)
    throw Error(arg_name(task, position, o) + " is passed with " + std::string(to_string(mode)) + " but " + param +
                " is a pointer to const; take T* for write and read_write");
}

void check_distinct(const std::string& task, const ArgBinding* args, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (args[i].object == args[j].object)
        throw Error("task '" + task + "': object '" + args[i].object->buffer.name() + "' is passed twice (arguments " +
                    std::to_string(i) + " and " + std::to_string(j) +
                    " among the objects); pass it once, with read_write if the task both reads and writes it");
}

void check_grid(const std::string& task, const Grid& grid) {
  if (grid.groups.volume() != 0 && grid.items.volume() != 0) return;
  throw Error("task '" + task + "': the grid " + grid.groups.to_string() + " groups of " + grid.items.to_string() +
              " items is empty; every extent must be at least 1");
}

void check_cuda_launch(const std::string& task, const Grid& grid, std::size_t shared_bytes) {
  constexpr std::size_t max_items = 1024, max_shared = 48 * 1024;
  if (grid.items.volume() > max_items)
    throw Error("task '" + task + "': " + std::to_string(grid.items.volume()) + " items per group " + grid.items.to_string() +
                "; a GPU runs at most " + std::to_string(max_items) + " per group: use more groups of fewer items");
  if (shared_bytes > max_shared)
    throw Error("task '" + task + "': " + std::to_string(shared_bytes) + " bytes of shared scratch; a GPU group gets at most " +
                std::to_string(max_shared));
  if (grid.groups.x >= (std::size_t{1} << 31) || grid.groups.y > 65535 || grid.groups.z > 65535)
    throw Error("task '" + task + "': " + grid.groups.to_string() + " groups exceed what a GPU can launch (2^31 - 1, 65535, 65535)");
}

void throw_cuda_launch_error(const std::string& task, const char* what) {
  throw Error("task '" + task + "': the kernel launch failed: " + std::string(what));
}

void run_groups(const TaskContext& ctx, const Grid& grid, std::size_t shared_bytes,
                void (*group)(void* context, Dim3 id, void* scratch), void* context) {
  const Dim3 g = grid.groups;
  const std::size_t n = g.volume();
  auto run_range = [&](std::size_t begin, std::size_t end) {
    // One scratch region per thread, reused group after group (PREMA: stack memory on CPUs).
    thread_local std::vector<std::max_align_t> scratch;
    const std::size_t words = (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    if (scratch.size() < words) scratch.resize(words);
    for (std::size_t i = begin; i < end; ++i)
      group(context, Dim3{i % g.x, (i / g.x) % g.y, i / (g.x * g.y)}, scratch.data());
  };
  if (ctx.executor() == nullptr || n == 1) {
    run_range(0, n);
    return;
  }
  struct Range {
    decltype(run_range)* f;
  } r{&run_range};
  detail::LoopPlan plan = ctx.executor()->plan_loop(0, n, 1);
  ctx.executor()->run_loop(plan, [](void* c, std::size_t, std::size_t lo, std::size_t hi) { (*static_cast<Range*>(c)->f)(lo, hi); }, &r);
}

}  // namespace tessera::detail
