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

/// A node of a graph threw. `node_name()` names it; `original()` holds what it threw, so a
/// caller can rethrow the original type with `std::rethrow_exception(e.original())`.
class NodeError : public Error {
public:
  NodeError(std::string node_name, std::exception_ptr original, const std::string& what)
      : Error("node '" + node_name + "' threw: " + what),
        node_name_(std::move(node_name)),
        original_(std::move(original)) {}

  const std::string& node_name() const noexcept { return node_name_; }
  std::exception_ptr original() const noexcept { return original_; }

private:
  std::string node_name_;
  std::exception_ptr original_;
};

}  // namespace tessera
