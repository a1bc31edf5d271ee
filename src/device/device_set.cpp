#include "host/host_device.hpp"
#include "sim/sim_device.hpp"

#include "../core/log_internal.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/bytes.hpp>

#include <charconv>
#include <cstdlib>

namespace tessera {

namespace {

const char* const grammar = "use host, sim:N, sim:N:SIZE (e.g. sim:4:256MiB), cuda or cuda:0,1";

[[noreturn]] void bad_spec(std::string_view spec, const std::string& why) {
  throw Error("TESSERA_DEVICES='" + std::string(spec) + "': " + why + "; " + grammar);
}

std::size_t parse_count(std::string_view spec, std::string_view text, const char* what) {
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    bad_spec(spec, std::string(what) + " '" + std::string(text) + "' is not a number");
  return v;
}

}  // namespace

DeviceSet::DeviceSet(DeviceSet&&) noexcept = default;
DeviceSet& DeviceSet::operator=(DeviceSet&&) noexcept = default;
DeviceSet::~DeviceSet() {
  // Accelerators first: their streams may still copy from or to host memory.
  accelerators_.clear();
}

DeviceSet DeviceSet::select(std::string_view spec) {
  std::string text(spec);
  if (text.empty()) {
    const char* env = std::getenv("TESSERA_DEVICES");
    text = env != nullptr ? env : "";
  }
  DeviceSet set;
  set.host_ = std::make_unique<detail::HostDevice>();
  if (text.empty()) {
    // Every CUDA GPU found, else the host alone: without a CUDA backend, the host alone.
    set.spec_ = "(default)";
    return set;
  }
  set.spec_ = text;
  std::string_view s = text;
  const auto colon = s.find(':');
  const std::string_view kind = s.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);

  if (kind == "host") {
    if (!rest.empty()) bad_spec(s, "'host' takes no arguments");
    return set;
  }
  if (kind == "sim") {
    if (rest.empty()) bad_spec(s, "'sim' needs a device count, as in sim:4");
    const auto second = rest.find(':');
    const std::size_t n = parse_count(s, rest.substr(0, second), "the device count");
    if (n == 0 || n > 64) bad_spec(s, "the device count must be between 1 and 64, not " + std::to_string(n));
    detail::SimDeviceOptions options;
    if (second != std::string_view::npos) {
      try {
        options.memory_bytes = parse_bytes(rest.substr(second + 1));
      } catch (const Error& e) {
        bad_spec(s, e.what());
      }
      if (options.memory_bytes < (std::size_t{1} << 20))
        bad_spec(s, "a simulated device needs at least 1MiB, not " + format_bytes(options.memory_bytes));
    }
    for (std::size_t i = 0; i < n; ++i)
      set.accelerators_.push_back(std::make_unique<detail::SimDevice>(static_cast<int>(i), options));
    return set;
  }
  if (kind == "cuda")
    bad_spec(s, "CUDA devices were requested but this build has no CUDA device backend yet (the CUDA "
                "preset compiles kernels; devices come with the device layer's CUDA backend)");
  bad_spec(s, "unknown device kind '" + std::string(kind) + "'");
}

DeviceSet DeviceSet::simulated(std::size_t count, const SimOptions& options) {
  if (count == 0 || count > 64)
    throw Error("DeviceSet::simulated: the device count must be between 1 and 64, not " + std::to_string(count));
  DeviceSet set;
  set.spec_ = "sim:" + std::to_string(count) + ":" + format_bytes(options.memory_bytes);
  set.host_ = std::make_unique<detail::HostDevice>();
  for (std::size_t i = 0; i < count; ++i)
    set.accelerators_.push_back(std::make_unique<detail::SimDevice>(static_cast<int>(i), options));
  return set;
}

Device& DeviceSet::accelerator(std::size_t i) {
  if (i >= accelerators_.size())
    throw Error("accelerator " + std::to_string(i) + " requested but " + spec_ + " selected " +
                std::to_string(accelerators_.size()));
  return *accelerators_[i];
}

std::string DeviceSet::describe() const {
  std::string out = "devices (" + spec_ + "):\n";
  auto line = [&](const Device& d) {
    out += "  " + d.name() + ": " + std::string(to_string(d.kind())) + ", " + format_bytes(d.memory_capacity()) +
           ", " + std::to_string(d.num_compute_streams()) + " compute stream(s)\n";
  };
  line(*host_);
  for (auto& a : accelerators_) line(*a);
  return out;
}

}  // namespace tessera
