#include "host/host_device.hpp"
#include "sim/sim_device.hpp"

#include "../core/log_internal.hpp"

#include <tessera/core/error.hpp>
#include <tessera/device/device_set.hpp>
#include <tessera/memory/bytes.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#if defined(TESSERA_HAVE_CUDA)
#include "cuda/cuda_devices.hpp"

#include <mutex>
#endif

namespace tessera {

namespace {

const char* const grammar =
    "use host, sim:N, sim:N:SIZE (e.g. sim:4:256MiB), sim:N[:SIZE]:speed=S[,S...] (e.g. sim:2:speed=1,4), cuda or "
    "cuda:0,1";

// `origin` names where the text came from: "TESSERA_DEVICES='sim4'" or "device selection 'sim4'".
[[noreturn]] void bad_spec(std::string_view origin, const std::string& why) {
  throw Error(std::string(origin) + ": " + why + "; " + grammar);
}

std::size_t parse_count(std::string_view spec, std::string_view text, const char* what) {
  std::size_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    bad_spec(spec, std::string(what) + " '" + std::string(text) + "' is not a number");
  return v;
}

#if !defined(TESSERA_HAVE_CUDA)
[[noreturn]] void no_cuda_backend(const std::string& context) {
  throw Error(context + ": CUDA devices were requested but this build has no CUDA device backend; configure "
                        "with -DTESSERA_WITH_CUDA=ON (the cuda preset)");
}
#else
// "0,2" as CUDA ordinals.
std::vector<int> parse_ordinals(std::string_view spec, std::string_view list) {
  if (list.empty()) bad_spec(spec, "'cuda:' needs GPU ordinals, as in cuda:0,1");
  std::vector<int> ordinals;
  for (std::size_t start = 0;;) {
    const auto comma = list.find(',', start);
    const std::size_t n = parse_count(spec, list.substr(start, comma - start), "the GPU ordinal");
    if (n > 1024) bad_spec(spec, "GPU ordinal " + std::to_string(n) + " is out of range");
    ordinals.push_back(static_cast<int>(n));
    if (comma == std::string_view::npos) return ordinals;
    start = comma + 1;
  }
}
#endif

// "1,4" or "8", each finite and above 0 (slowdowns() checks how many).
std::vector<double> parse_speeds(std::string_view spec, std::string_view list) {
  std::vector<double> speeds;
  for (std::size_t start = 0;;) {
    const auto comma = list.find(',', start);
    const std::string_view item = list.substr(start, comma - start);
    double v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty() || !(v > 0) || !std::isfinite(v))
      bad_spec(spec, "a compute speed must be a number above 0, not '" + std::string(item) + "'");
    speeds.push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return speeds;
}

// How many times its CPU time each device's work takes (0: no model, the work's own time).
std::vector<double> slowdowns(const std::vector<double>& speeds, std::size_t devices, const std::string& context) {
  std::vector<double> out(devices, 0.0);
  if (speeds.empty()) return out;
  if (speeds.size() != 1 && speeds.size() != devices)
    throw Error(context + ": give one compute speed, or one per device (" + std::to_string(devices) + "), not " +
                std::to_string(speeds.size()));
  for (double v : speeds)
    if (!(v > 0) || !std::isfinite(v))
      throw Error(context + ": a compute speed must be a number above 0, not " + std::to_string(v));
  const double fastest = *std::max_element(speeds.begin(), speeds.end());
  for (std::size_t i = 0; i < devices; ++i) out[i] = fastest / speeds[speeds.size() == 1 ? 0 : i];
  return out;
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
  bool from_environment = false;
  if (text.empty()) {
    const char* env = std::getenv("TESSERA_DEVICES");
    text = env != nullptr ? env : "";
    from_environment = env != nullptr;
  }
  const std::string origin = (from_environment ? "TESSERA_DEVICES='" : "device selection '") + text + "'";
  DeviceSet set;
  set.host_ = std::make_unique<detail::HostDevice>();
  if (text.empty()) {
    set.spec_ = "(default)";
#if defined(TESSERA_HAVE_CUDA)
    std::string why;
    if (detail::cuda_device_count(why) > 0) {
      set.accelerators_ = detail::make_cuda_devices({}, "the default device selection (every CUDA GPU)");
      return set;
    }
    // Once per process: programs may select devices many times.
    static std::once_flag noted;
    std::call_once(noted, [&] { detail::log_info("{}; GPU-kind work will run on the host", why); });
#endif
    return set;
  }
  set.spec_ = text;
  std::string_view s = text;
  const auto colon = s.find(':');
  const std::string_view kind = s.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);

  if (kind == "host") {
    if (!rest.empty()) bad_spec(origin, "'host' takes no arguments");
    return set;
  }
  if (kind == "sim") {
    if (rest.empty()) bad_spec(origin, "'sim' needs a device count, as in sim:4");
    const auto second = rest.find(':');
    const std::size_t n = parse_count(origin, rest.substr(0, second), "the device count");
    if (n == 0 || n > 64) bad_spec(origin, "the device count must be between 1 and 64, not " + std::to_string(n));
    detail::SimDeviceOptions options;
    // After the count: an optional size, then an optional speed=..., in that order.
    for (std::size_t at = second; at != std::string_view::npos;) {
      const auto next = rest.find(':', at + 1);
      const std::string_view field = rest.substr(at + 1, next == std::string_view::npos ? next : next - at - 1);
      if (field.starts_with("speed=")) {
        if (!options.compute_speeds.empty()) bad_spec(origin, "give speed= once");
        options.compute_speeds = parse_speeds(origin, field.substr(6));
      } else {
        if (!options.compute_speeds.empty() || at != second) bad_spec(origin, "the size comes right after the count");
        try {
          options.memory_bytes = parse_bytes(field);
        } catch (const Error& e) {
          bad_spec(origin, e.what());
        }
        if (options.memory_bytes < (std::size_t{1} << 20))
          bad_spec(origin, "a simulated device needs at least 1MiB, not " + format_bytes(options.memory_bytes));
      }
      at = next;
    }
    const std::vector<double> slow = slowdowns(options.compute_speeds, n, origin);
    for (std::size_t i = 0; i < n; ++i)
      set.accelerators_.push_back(std::make_unique<detail::SimDevice>(static_cast<int>(i), options, slow[i]));
    return set;
  }
  if (kind == "cuda") {
#if defined(TESSERA_HAVE_CUDA)
    CudaOptions options;
    if (colon != std::string_view::npos) options.ordinals = parse_ordinals(origin, rest);
    set.accelerators_ = detail::make_cuda_devices(options, origin);
    return set;
#else
    no_cuda_backend(origin);
#endif
  }
  bad_spec(origin, "unknown device kind '" + std::string(kind) + "'");
}

DeviceSet DeviceSet::simulated(std::size_t count, const SimOptions& options) {
  if (count == 0 || count > 64)
    throw Error("DeviceSet::simulated: the device count must be between 1 and 64, not " + std::to_string(count));
  DeviceSet set;
  set.spec_ = "sim:" + std::to_string(count) + ":" + format_bytes(options.memory_bytes);
  const std::vector<double> slow = slowdowns(options.compute_speeds, count, "DeviceSet::simulated");
  set.host_ = std::make_unique<detail::HostDevice>();
  for (std::size_t i = 0; i < count; ++i)
    set.accelerators_.push_back(std::make_unique<detail::SimDevice>(static_cast<int>(i), options, slow[i]));
  return set;
}

DeviceSet DeviceSet::cuda(const CudaOptions& options) {
  std::string spec = "cuda";
  for (std::size_t i = 0; i < options.ordinals.size(); ++i)
    spec += (i == 0 ? ":" : ",") + std::to_string(options.ordinals[i]);
#if defined(TESSERA_HAVE_CUDA)
  DeviceSet set;
  set.spec_ = spec;
  set.host_ = std::make_unique<detail::HostDevice>();
  set.accelerators_ = detail::make_cuda_devices(options, "DeviceSet::cuda(" + spec + ")");
  return set;
#else
  no_cuda_backend("DeviceSet::cuda(" + spec + ")");
#endif
}

bool DeviceSet::has_cuda_backend() noexcept {
#if defined(TESSERA_HAVE_CUDA)
  return true;
#else
  return false;
#endif
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
           ", " + std::to_string(d.num_compute_streams()) + " compute stream(s)";
#if defined(TESSERA_HAVE_CUDA)
    if (d.kind() == DeviceKind::cuda) out += ", " + detail::describe_cuda_device(d);
#endif
    out += "\n";
  };
  line(*host_);
  for (auto& a : accelerators_) line(*a);
  return out;
}

}  // namespace tessera
