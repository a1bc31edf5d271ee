#pragma once
// tessera::Error: the one exception type tessera throws for bad input and failed work.

#include <exception>
#include <stdexcept>
#include <string>

namespace tessera {

/// Thrown for every bad input and every failure tessera detects. The message says what was
/// wrong, the values involved, and what to do about it.
///
///   try { executor.run(graph); }
///   catch (const tessera::Error& e) { std::cerr << e.what() << '\n'; }
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// A unit of work threw, or did not run because work it depends on threw: a node of a graph
/// (Executor::run) or a task (TaskRuntime; `TaskError` is this type). `node_name()` names the
/// node or task that failed first; `original()` holds what it threw, so a caller can rethrow the
/// original type with `std::rethrow_exception(e.original())`.
///
///   try { executor.run(graph).get(); }
///   catch (const tessera::NodeError& e) { std::cerr << e.node_name() << ": " << e.what() << '\n'; }
class NodeError : public Error {
public:
  /// `message` is the whole of what(); `describe_exception(original)` gives its usual tail.
  NodeError(std::string node_name, std::exception_ptr original, const std::string& message)
      : Error(message), node_name_(std::move(node_name)), original_(std::move(original)) {}

  const std::string& node_name() const noexcept { return node_name_; }
  std::exception_ptr original() const noexcept { return original_; }

private:
  std::string node_name_;
  std::exception_ptr original_;
};

/// What `e` says: its what() when it derives from std::exception, else a fixed description.
std::string describe_exception(const std::exception_ptr& e);

}  // namespace tessera
