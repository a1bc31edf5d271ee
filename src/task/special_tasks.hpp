#pragma once
// Tasks the runtime makes itself: the host's hold on an object (request ... release) and copies
// of an object into and out of user memory. They take part in the object's dependency order like
// any task.

#include <tessera/core/error.hpp>
#include <tessera/task/detail/task_state.hpp>
#include <tessera/task/task_context.hpp>

#include <atomic>
#include <exception>
#include <functional>

namespace tessera::detail {

class SpecialTask : public TaskState {
public:
  SpecialTask(std::string label, TaskRole r, ObjectRef object, Access mode) : TaskState(std::move(label), TaskKind::cpu, r) {
    binding_.object = std::move(object);
    binding_.mode = mode;
    args = &binding_;
    ptrs = &ptr_;
    num_args = 1;
  }
  void run_host(const TaskContext&, void* const*) override {}
  void launch_cuda(const TaskContext&, void* const*) override {}

private:
  ArgBinding binding_;
  void* ptr_ = nullptr;
};

struct HoldTask final : SpecialTask {
  HoldTask(ObjectRef object, Access mode, std::function<void(void*, std::exception_ptr)> deliver_to)
      : SpecialTask("request(" + std::string(to_string(mode)) + ") of '" + object->buffer.name() + "'", TaskRole::hold,
                    object, mode),
        deliver(std::move(deliver_to)) {}
  std::function<void(void*, std::exception_ptr)> deliver;
  // 0 waiting for its turn, 1 granted (the host holds the object), 2 refused (the request threw).
  std::atomic<int> state{0};
};

struct CopyInTask final : SpecialTask {
  CopyInTask(ObjectRef object, const void* from, bool accelerator)
      : SpecialTask("copy_from into '" + object->buffer.name() + "'", TaskRole::copy_in, object, Access::write),
        source(from),
        to_accelerator(accelerator) {}
  const void* source;
  bool to_accelerator;  // straight into an accelerator's replica, not the host copy
};

struct CopyOutTask final : SpecialTask {
  CopyOutTask(ObjectRef object, void* to)
      : SpecialTask("copy_to of '" + object->buffer.name() + "'", TaskRole::copy_out, object, Access::read), destination(to) {}
  void* destination;
};

}  // namespace tessera::detail
