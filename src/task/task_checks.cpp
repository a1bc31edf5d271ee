// What is checked when a task is built, with messages that say which argument was wrong.
#include <tessera/core/error.hpp>
#include <tessera/task/detail/task_payload.hpp>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

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
    throw Error(arg_name(task, position, o) + ": " + param +
                " is not a pointer; an object argument is passed as T* or const T*");
  if (!pointee_void && pointee != o.type)
    throw Error(arg_name(task, position, o) + ": " + param + " points to " + type_name(pointee) +
                "; the element types must match");
  if (!pointee_void && pointee_bytes != o.element_bytes)
    throw Error(arg_name(task, position, o) + ": elements of " + std::to_string(o.element_bytes) + " bytes, but " +
                param + " points to elements of " + std::to_string(pointee_bytes) + " bytes");
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
                    " among the objects); an object appears once per task: " +
                    (access_writes(args[i].mode) || access_writes(args[j].mode)
                         ? "pass it once, with read_write, since the task both reads and writes it"
                         : "pass it once, with read, and use the one pointer for both reads"));
}

void check_grid(const std::string& task, const Grid& grid) {
  if (grid.groups.volume() != 0 && grid.items.volume() != 0) return;
  throw Error("task '" + task + "': the grid " + grid.groups.to_string() + " groups of " + grid.items.to_string() +
              " items is empty; every extent must be at least 1");
}

}  // namespace tessera::detail
