// Any text as a Ludwig-style input deck: it parses to parameters or throws tessera::Error.

#include "input.hpp"

#include <tessera/core/error.hpp>

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const lb::Parameters p = lb::parse_input(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.inp");
    (void)p;
  } catch (const tessera::Error&) {
  }
  return 0;
}
