#include "memory_core.hpp"

#include <tessera/core/log.hpp>
#include <tessera/memory/memory_manager.hpp>

#include <exception>

namespace tessera {

MemoryManager::MemoryManager(DeviceSet& devices, const MemoryOptions& options)
    : core_(std::make_shared<detail::MemoryCore>(devices, options)) {}

MemoryManager::~MemoryManager() {
  // Transfers in flight hold their buffers (and so the core) alive, but not the devices: let
  // them finish while the devices surely still exist.
  try {
    core_->synchronize();
  } catch (const std::exception& e) {
    log(LogLevel::error, std::string("MemoryManager: waiting for transfers at destruction failed: ") + e.what());
  }
}

std::size_t MemoryManager::num_spaces() const noexcept { return core_->num_spaces(); }
Device& MemoryManager::device(std::size_t space) const { return core_->device(space); }
std::size_t MemoryManager::space_of(const Device& device) const { return core_->space_of(device); }
std::size_t MemoryManager::budget(std::size_t space) const { return core_->budget(space); }
std::size_t MemoryManager::bytes_in_use(std::size_t space) const { return core_->bytes_in_use(space); }
MemoryStats MemoryManager::stats() const { return core_->stats(); }
void MemoryManager::synchronize() { core_->synchronize(); }

}  // namespace tessera
