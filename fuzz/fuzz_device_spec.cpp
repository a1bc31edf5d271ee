// Any text as a device selection (TESSERA_DEVICES, --devices): it selects devices or throws
// tessera::Error. Texts that ask for more than a few simulated devices, or more than a few MiB
// each, are cut short first: they are valid and would only spend the fuzzer's memory and threads.

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>

#include <cctype>
#include <cstdint>
#include <string>

namespace {

// Whether `text` could ask for more than a small amount of devices or memory: any run of more
// than one digit (sim:12, sim:1:100MiB), or a size unit above KiB.
bool large(const std::string& text) {
  std::size_t digits = 0;
  for (char c : text) {
    digits = std::isdigit(static_cast<unsigned char>(c)) ? digits + 1 : 0;
    if (digits > 1) return true;
  }
  return text.find('M') != std::string::npos || text.find('G') != std::string::npos ||
         text.find('T') != std::string::npos || text.find('E') != std::string::npos ||
         text.find('P') != std::string::npos || text.find('m') != std::string::npos ||
         text.find('g') != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.empty() || large(text)) return 0;  // "" reads TESSERA_DEVICES: not the input's
  try {
    tessera::DeviceSet devices = tessera::DeviceSet::select(text);
    (void)devices.describe();
  } catch (const tessera::Error&) {
  }
  return 0;
}
