#pragma once
// TaskError: how a task's failure reaches its handle and the tasks that depend on it.

#include <tessera/core/error.hpp>

#include <exception>
#include <string>

namespace tessera {

/// A task threw, or did not run because a task it depends on failed. `task_name()` names the
/// task that failed first; `original()` holds what it threw.
///
///   try { handle.get(); }
///   catch (const tessera::TaskError& e) { std::cerr << e.task_name() << ": " << e.what() << '\n'; }
class TaskError : public Error {
public:
  TaskError(std::string task_name, std::exception_ptr original, const std::string& message)
      : Error(message), task_name_(std::move(task_name)), original_(std::move(original)) {}

  const std::string& task_name() const noexcept { return task_name_; }
  std::exception_ptr original() const noexcept { return original_; }

private:
  std::string task_name_;
  std::exception_ptr original_;
};

}  // namespace tessera
