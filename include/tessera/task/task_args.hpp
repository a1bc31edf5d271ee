#pragma once
// How a task names what it touches: read(x), write(x), read_write(x). The kernel receives
// `const T*` for a read and `T*` for the others (device pointers on a device).

#include <tessera/memory/access.hpp>
#include <tessera/task/hetero_object.hpp>

#include <cstddef>

namespace tessera {

/// An object argument of a task with its access mode; `count` (0: any) is the least number of
/// elements the kernel will touch, checked when the task is built.
template <class T, Access M>
struct ObjectAccess {
  detail::ObjectRef object;
  std::size_t count = 0;
};

/// The task reads every element of `object`.
///
///   tessera::native_task("sum", tessera::TaskKind::cpu, sum, tessera::read(x, n), tessera::write(total));
template <class T>
ObjectAccess<T, Access::read> read(const HeteroObject<T>& object, std::size_t count = 0) {
  return {object.state(), count};
}
/// The task overwrites every element without reading them (no copy in).
template <class T>
ObjectAccess<T, Access::write> write(const HeteroObject<T>& object, std::size_t count = 0) {
  return {object.state(), count};
}
/// The task reads and changes the elements.
template <class T>
ObjectAccess<T, Access::read_write> read_write(const HeteroObject<T>& object, std::size_t count = 0) {
  return {object.state(), count};
}

/// The same for objects typed at run time: the element type is checked against the kernel's
/// parameter when the task is built.
inline ObjectAccess<void, Access::read> read(const AnyObject& object, std::size_t count = 0) {
  return {object.state(), count};
}
inline ObjectAccess<void, Access::write> write(const AnyObject& object, std::size_t count = 0) {
  return {object.state(), count};
}
inline ObjectAccess<void, Access::read_write> read_write(const AnyObject& object, std::size_t count = 0) {
  return {object.state(), count};
}

}  // namespace tessera
