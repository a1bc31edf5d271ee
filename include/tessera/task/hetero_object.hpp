#pragma once
// HeteroObject<T>: a typed, coherent array that tasks read and write on any device (PREMA
// §3.1.1). It wraps a Buffer (one row per element): the Buffer keeps the replicas coherent, the
// object orders the tasks that use it.

#include <tessera/memory/access.hpp>
#include <tessera/task/detail/task_state.hpp>

#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace tessera {

class TaskRuntime;
class TaskHandle;

namespace detail {

/// What HeteroObject<T> and AnyObject share: the reference to the object's state, and the
/// checks that a moved-from or destroyed handle is not used.
class ObjectHandle {
public:
  ObjectHandle(ObjectHandle&& other) noexcept;
  ObjectHandle& operator=(ObjectHandle&& other) noexcept;
  ~ObjectHandle() = default;

  /// The state; throws tessera::Error naming the object when the handle was destroyed or moved from.
  const ObjectRef& state() const;
  /// Elements.
  std::size_t size() const { return state()->count; }
  /// Bytes of one element.
  std::size_t element_bytes() const { return state()->element_bytes; }
  const std::type_info& element_type() const { return state()->type; }
  const std::string& name() const { return state()->buffer.name(); }
  /// The Buffer underneath, for code that mixes tasks with graph nodes or places data by hand.
  Buffer& buffer() const { return state()->buffer; }
  /// Whether the handle still refers to an object (not moved from, not destroyed).
  explicit operator bool() const noexcept { return state_ != nullptr; }

  /// Ends the host access taken by request(): tasks held back by it may run. Throws
  /// tessera::Error when the host holds nothing.
  void release();
  /// Drops this handle's object now, rather than at the end of its scope. Its memory on every
  /// device is freed once no task or transfer still uses it. Using the handle afterwards is a
  /// tessera::Error.
  void destroy();

protected:
  ObjectHandle(TaskRuntime& runtime, std::size_t count, std::size_t element_bytes, const std::type_info& type,
               std::string name);
  explicit ObjectHandle(ObjectRef state) : state_(std::move(state)) {}
  /// The host hold as a task in the object's dependency order; `deliver` gets the host replica
  /// (or the error) once the hold is granted.
  void request_host(Access mode, std::function<void(void*, std::exception_ptr)> deliver);
  TaskHandle copy_out(void* destination);
  TaskHandle copy_in(const void* source, bool to_accelerator);

private:
  ObjectRef state_;
  std::string gone_name_;  // the name, once destroyed or moved from, for the error message
  bool destroyed_ = false;
};

}  // namespace detail

class AnyObject;

/// `count` elements of T, on whichever devices the tasks that use it run.
///
///   tessera::TaskRuntime rt(devices);
///   tessera::HeteroObject<double> x(rt, 1024, "x");           // nothing allocated yet
///   double* h = x.request(tessera::Access::write).get();     // host access
///   std::fill_n(h, 1024, 1.0);
///   x.release();
///   rt.submit(tessera::native_task("scale", tessera::TaskKind::gpu, scale, tessera::read_write(x)));
///   std::vector<double> out(1024);
///   x.copy_to(out.data()).wait();                            // straight into `out`
///
/// Move-only. Tasks and transfers keep the object's state alive after the handle is gone; the
/// TaskRuntime (and its DeviceSet) must outlive both.
template <class T>
class HeteroObject : public detail::ObjectHandle {
  static_assert(std::is_trivially_copyable_v<T>, "HeteroObject<T>: T must be trivially copyable (it is copied between devices)");

public:
  /// Throws tessera::Error for a zero count.
  HeteroObject(TaskRuntime& runtime, std::size_t count, std::string name = "object")
      : ObjectHandle(runtime, count, sizeof(T), typeid(T), std::move(name)) {}

  /// Host access to every element (PREMA's request): the future is ready, with the host copy,
  /// once the tasks submitted before that conflict with `mode` have run and the data is on the
  /// host. Until release(), no task that conflicts runs. One request at a time per object.
  ///
  ///   const double* v = x.request(tessera::Access::read).get();
  ///   double first = v[0];
  ///   x.release();
  std::future<T*> request(Access mode) {
    auto promise = std::make_shared<std::promise<T*>>();
    std::future<T*> f = promise->get_future();
    request_host(mode, [promise](void* base, std::exception_ptr e) {
      if (e)
        promise->set_exception(e);
      else
        promise->set_value(static_cast<T*>(base));
    });
    return f;
  }
  /// PREMA's request(read, write): (true, false) reads, (false, true) writes, (true, true) both.
  std::future<T*> request(bool read, bool write) { return request(detail_mode(read, write)); }

  /// Copies every element, once the tasks before it that write the object have run, straight
  /// from whichever device holds them into `destination` (PREMA §4.2.3), without going through
  /// the object's host copy. `destination` must stay valid until the handle is done.
  ///
  ///   std::vector<double> out(x.size());
  ///   x.copy_to(out.data()).wait();
  TaskHandle copy_to(T* destination);

  /// Writes every element from user memory (the mirror of copy_to): returns at once, and the
  /// copy takes its place in the object's dependency order as a task that writes it. `source`
  /// must stay valid and unchanged until the handle is done. With TaskKind::cpu the elements go
  /// to the object's host copy; with TaskKind::gpu they go straight from `source` to an
  /// accelerator (the one that already holds some of the object, else the one with the least
  /// memory in use), so GPU tasks that follow find them there without a stop in the host copy.
  ///
  ///   std::vector<double> in(x.size(), 1.0);
  ///   x.copy_from(in.data(), tessera::TaskKind::gpu);
  ///   rt.submit(tessera::native_task("scale", tessera::TaskKind::gpu, scale, tessera::read_write(x)));
  TaskHandle copy_from(const T* source, TaskKind where = TaskKind::cpu);

  /// A type-erased handle to the same object.
  AnyObject any() const;

private:
  static Access detail_mode(bool read, bool write);
};

/// A HeteroObject whose element type is known at run time (PREMA's untyped hetero_object, or a
/// container of objects of several types). Passed to a task, it is checked against the kernel's
/// parameter: a different element type or size is a tessera::Error.
///
///   tessera::AnyObject y = tessera::AnyObject::of<float>(rt, 256, "y");
///   auto t = tessera::native_task("fill", tessera::TaskKind::cpu,
///                                 [](const tessera::TaskContext&, float* p) { p[0] = 1; }, tessera::write(y));
class AnyObject : public detail::ObjectHandle {
public:
  AnyObject(TaskRuntime& runtime, std::size_t count, std::size_t element_bytes, const std::type_info& type,
            std::string name = "object")
      : ObjectHandle(runtime, count, element_bytes, type, std::move(name)) {}
  template <class T>
  static AnyObject of(TaskRuntime& runtime, std::size_t count, std::string name = "object") {
    return AnyObject(runtime, count, sizeof(T), typeid(T), std::move(name));
  }

private:
  template <class T>
  friend class HeteroObject;
  explicit AnyObject(detail::ObjectRef state) : ObjectHandle(std::move(state)) {}
};

template <class T>
AnyObject HeteroObject<T>::any() const {
  return AnyObject(state());
}

namespace detail {
Access host_mode(bool read, bool write);  // throws for (false, false)
}

template <class T>
Access HeteroObject<T>::detail_mode(bool read, bool write) {
  return detail::host_mode(read, write);
}

}  // namespace tessera
