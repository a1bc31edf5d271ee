// The host's side of objects: request/release as a hold that takes its place in the object's
// dependency order (PREMA §3.1.1), copy_to straight from the device that holds the data
// (§4.2.3), and the handle checks for destroyed or moved-from objects.
#include "runtime_impl.hpp"
#include "special_tasks.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device.hpp>
#include <tessera/device/submit.hpp>
#include <tessera/memory/detail/stream_accesses.hpp>
#include <tessera/task/task.hpp>

#include <cstring>

namespace tessera {

namespace detail {

Access host_mode(bool read, bool write) {
  if (read && write) return Access::read_write;
  if (read) return Access::read;
  if (write) return Access::write;
  throw Error("HeteroObject::request(read = false, write = false) asks for no access; pass read, write or both");
}

ObjectHandle::ObjectHandle(TaskRuntime& runtime, std::size_t count, std::size_t element_bytes, const std::type_info& type,
                           std::string name) {
  if (count == 0)
    throw Error("HeteroObject '" + name + "': a count of 0 elements; an object holds at least one element");
  if (element_bytes == 0) throw Error("HeteroObject '" + name + "': elements of 0 bytes; give the element size");
  state_ = std::make_shared<ObjectState>(runtime.impl(), runtime.memory(), count, element_bytes, type, std::move(name));
}

ObjectHandle::ObjectHandle(ObjectHandle&& other) noexcept
    : state_(std::move(other.state_)), gone_name_(std::move(other.gone_name_)), destroyed_(other.destroyed_) {
  if (state_ != nullptr) other.gone_name_ = state_->buffer.name();
}

ObjectHandle& ObjectHandle::operator=(ObjectHandle&& other) noexcept {
  if (this == &other) return *this;
  state_ = std::move(other.state_);
  gone_name_ = std::move(other.gone_name_);
  destroyed_ = other.destroyed_;
  if (state_ != nullptr) other.gone_name_ = state_->buffer.name();
  return *this;
}

const ObjectRef& ObjectHandle::state() const {
  if (state_ != nullptr) return state_;
  if (destroyed_)
    throw Error("HeteroObject '" + gone_name_ +
                "' was destroyed (destroy() was called on it); it cannot be used any more: create a new object");
  throw Error("HeteroObject" + (gone_name_.empty() ? std::string() : " '" + gone_name_ + "'") +
              " is used after it was moved from; use the object it was moved to");
}

void ObjectHandle::destroy() {
  const ObjectRef& s = state();  // destroying twice is an error too
  gone_name_ = s->buffer.name();
  destroyed_ = true;
  state_.reset();
}

void ObjectHandle::request_host(Access mode, std::function<void(void*, std::exception_ptr)> deliver) {
  const ObjectRef& s = state();
  auto* hold = new HoldTask(s, mode, std::move(deliver));
  {
    std::lock_guard lock(s->lock);
    if (s->hold != nullptr) {
      const std::string held = s->hold->name;
      hold->release();
      throw Error("HeteroObject '" + s->buffer.name() + "': request(" + std::string(to_string(mode)) +
                  ") while the host still holds " + held + "; call release() first (one host access at a time)");
    }
    hold->retain();
    s->hold = hold;
  }
  try {
    s->runtime.submit(hold);
  } catch (...) {
    {
      std::lock_guard lock(s->lock);
      s->hold = nullptr;
    }
    hold->release();
    hold->release();
    throw;
  }
  hold->release();  // the runtime and the object keep it
}

void ObjectHandle::release() {
  const ObjectRef& s = state();
  TaskState* held;
  {
    std::lock_guard lock(s->lock);
    held = s->hold;
    s->hold = nullptr;
  }
  if (held == nullptr)
    throw Error("HeteroObject '" + s->buffer.name() +
                "': release() without a host access; call request(mode) first, and release() once per request");
  auto* hold = static_cast<HoldTask*>(held);
  // The host may release before its future is ready: the hold is granted first, in its turn.
  for (int st = hold->state.load(std::memory_order_acquire); st == 0; st = hold->state.load(std::memory_order_acquire))
    hold->state.wait(0, std::memory_order_acquire);
  if (hold->state.load(std::memory_order_acquire) == 1) {
    s->buffer.release(hold->args[0].mode);
    s->runtime.complete(hold, nullptr);
  }
  hold->release();  // the object's reference
}

TaskHandle ObjectHandle::copy_out(void* destination) {
  const ObjectRef& s = state();
  if (destination == nullptr)
    throw Error("HeteroObject '" + s->buffer.name() + "': copy_to(nullptr); pass memory for " +
                std::to_string(s->count) + " elements");
  auto* t = new CopyOutTask(s, destination);
  TaskHandle handle(t);  // adopts the creation reference
  s->runtime.submit(t);
  return handle;
}

TaskHandle ObjectHandle::copy_in(const void* source, bool to_accelerator) {
  const ObjectRef& s = state();
  if (source == nullptr)
    throw Error("HeteroObject '" + s->buffer.name() + "': copy_from(nullptr); pass memory holding " +
                std::to_string(s->count) + " elements");
  if (to_accelerator && s->runtime.devices.num_accelerators() == 0)
    throw Error("HeteroObject '" + s->buffer.name() + "': copy_from(..., TaskKind::gpu), but the devices (" +
                s->runtime.devices.spec() + ") have no accelerator; use TaskKind::cpu, or select one (\"sim:2\", \"cuda\")");
  auto* t = new CopyInTask(s, source, to_accelerator);
  TaskHandle handle(t);  // adopts the creation reference
  s->runtime.submit(t);
  return handle;
}

}  // namespace detail

namespace detail {

void TaskRuntimeImpl::grant_hold(TaskState* t) {
  auto* hold = static_cast<HoldTask*>(t);
  ObjectState& o = *t->args[0].object;
  const Access mode = t->args[0].mode;
  void* base = nullptr;
  try {
    // Device data comes home on copy streams; the worker waits for it (a short, bounded wait).
    base = o.buffer.request(mode).get();
  } catch (...) {
    hold->deliver(nullptr, std::current_exception());
    {
      std::lock_guard lock(o.lock);
      if (o.hold == hold) {
        o.hold = nullptr;
        hold->release();
      }
    }
    hold->state.store(2, std::memory_order_release);
    hold->state.notify_all();
    complete(t, nullptr);  // a refused request holds nothing back
    return;
  }
  // Once granted, the host may release() at once (before its future is even ready), and with
  // that drop the last other reference: keep the hold, and the promise inside `deliver`, alive
  // until this thread is done with them.
  hold->retain();
  hold->state.store(1, std::memory_order_release);
  hold->state.notify_all();
  hold->deliver(base, nullptr);
  hold->release();
  // The hold completes at release(), which lets the tasks that conflict with it run.
}

void TaskRuntimeImpl::copy_out(TaskState* t) {
  auto* c = static_cast<CopyOutTask*>(t);
  ObjectState& o = *t->args[0].object;
  const std::size_t bytes = o.buffer.bytes();
  try {
    if (const void* sole = o.buffer.host_if_sole()) {
      std::memcpy(c->destination, sole, bytes);
      t->device = &devices.host();
      complete(t, nullptr);
      return;
    }
    // Straight from a device that holds every element, if one does: no stop at the host copy.
    for (std::size_t space = 1; space < memory->num_spaces(); ++space) {
      if (!o.buffer.valid_rows(space).contains(o.buffer.all())) continue;
      copy_on_device(t, space, CopyDirection::device_to_host, c->destination);
      return;
    }
    void* from = o.buffer.prepare(0, *host_stream, Access::read);
    std::memcpy(c->destination, from, bytes);
    o.buffer.finish(0, *host_stream, Access::read);
    t->device = &devices.host();
  } catch (...) {
    complete(t, task_failure(*t, std::current_exception()));
    return;
  }
  complete(t, nullptr);
}

void TaskRuntimeImpl::copy_on_device(TaskState* t, std::size_t space, CopyDirection direction, void* user) {
  ObjectState& o = *t->args[0].object;
  const Access mode = t->args[0].mode;
  Device& d = memory->device(space);
  Stream& s = d.copy_stream(direction);
  t->space = space;
  t->device = &d;
  bool staged = false;
  tessera::submit(s, {}, [&](Stream&) {
    StreamAccesses prepared(space, s);
    void* replica = prepared.prepare(o.buffer, mode);
    if (direction == CopyDirection::device_to_host)
      d.copy_async(user, replica, o.buffer.bytes(), direction, s);
    else if (!(staged = d.copy_to_device_staged(replica, user, o.buffer.bytes(), s)))
      d.copy_async(replica, user, o.buffer.bytes(), direction, s);
    prepared.finish();
  });
  if (staged) {
    // The user's memory is read already, and whatever uses the object next waits for the copy
    // on the device (the Buffer orders it): done now, with no host callback between the copy
    // and a GPU task that follows.
    complete(t, nullptr);
    return;
  }
  s.then([this, t] { complete(t, nullptr); });
}

std::size_t TaskRuntimeImpl::accelerator_space_for(const ObjectState& o) const {
  std::size_t best = 0;
  for (std::size_t space = 1; space < memory->num_spaces(); ++space) {
    if (o.buffer.valid_rows(space).overlaps(o.buffer.all())) return space;
    if (best == 0 || memory->device(space).bytes_in_use() < memory->device(best).bytes_in_use()) best = space;
  }
  return best;
}

void TaskRuntimeImpl::copy_in(TaskState* t) {
  auto* c = static_cast<CopyInTask*>(t);
  ObjectState& o = *t->args[0].object;
  const std::size_t bytes = o.buffer.bytes();
  try {
    if (c->to_accelerator) {
      // One copy, user memory to device: the host copy is neither written nor allocated.
      copy_on_device(t, accelerator_space_for(o), CopyDirection::host_to_device, const_cast<void*>(c->source));
      return;
    }
    if (void* sole = o.buffer.host_if_sole()) {
      std::memcpy(sole, c->source, bytes);
    } else {
      void* to = o.buffer.prepare(0, *host_stream, Access::write);
      std::memcpy(to, c->source, bytes);
      o.buffer.finish(0, *host_stream, Access::write);
    }
    t->device = &devices.host();
  } catch (...) {
    complete(t, task_failure(*t, std::current_exception()));
    return;
  }
  complete(t, nullptr);
}

}  // namespace detail
}  // namespace tessera
