// Any bytes as a checkpoint file: reading the header, and restoring into a tensor of the sizes
// and type the header claims, either works or throws tessera::Error; nothing else.

#include <tessera/device/device_set.hpp>
#include <tessera/io/checkpoint.hpp>
#include <tessera/memory/memory_manager.hpp>
#include <tessera/tensor/tensor.hpp>

#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {
// The file each input is written to, one per process, removed when the fuzzer exits.
struct ScratchFile {
  std::string path =
      (std::filesystem::temp_directory_path() / ("tessera-fuzz-checkpoint-" + std::to_string(::getpid()) + ".ckpt"))
          .string();
  ~ScratchFile() { std::remove(path.c_str()); }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const tessera::io::CheckpointInfo info = tessera::io::inspect_checkpoint(path);
    (void)info;
    // Restore into the shape the corpus's checkpoints have (a 2-D tensor of doubles, 8 x 6):
    // a file claiming anything else must be refused with an error.
    static tessera::DeviceSet devices = tessera::DeviceSet::select("host");
    static tessera::MemoryManager memory(devices);
    tessera::Tensor<double, 2> t(memory, {8, 6});
    tessera::io::CheckpointScalars scalars = tessera::io::load_checkpoint(path, t);
    for (const std::string& name : scalars.names()) (void)scalars.contains(name);
  } catch (const tessera::Error&) {
  }
  return 0;
}
