#pragma once
// The message of the tessera::Error a call throws, for tests of error paths.

#include <tessera/core/error.hpp>

#include <string>

namespace tessera::test {

/// The message of the tessera::Error that `f` throws, or "(no tessera::Error)".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const tessera::Error& e) {
    return e.what();
  }
  return "(no tessera::Error)";
}

}  // namespace tessera::test
